"""Scenario packs: the YAML format, its Structs, the loader and validation.

A pack is one YAML file (builtin packs live in ``bench_tui/data/packs/<name>.yaml``)::

    pack: {id: standard, version: 1, title: "...", description: "..."}
    tools:                       # the tool library, by name (OpenAI function definitions)
      get_weather: {description: "...", parameters: {type: object, properties: {...}, required: [...]}}
    subsets: {short: [TC-01, TC-05]}
    lexicon: {precipitation: ['rain\\w*', snow], ...}  # the domain's words the every-answer checks read
    scenarios:
      - id: TC-01
        title: "..."
        category: tool_selection
        difficulty: easy
        user: "..."
        tools: [get_weather]     # or "all"
        mocks: [{tool: get_weather, when: {city: {regex: "(?i)paris"}}, result: {temp_c: 18}}]
        expect: {calls: [{tool: get_weather, args: {city: {regex: "(?i)paris"}}}], answer: {contains: ["18"]}}
        reference: [...]         # assistant turns that must PASS
        wrong: [...]             # assistant turns that must FAIL

Verdicts follow one policy (docs/GRADING.md): a forbidden call, an unsafe statement or a wrong final result is
``fail`` whatever the calls were; ``partial`` (only for the kinds listed in ``expect.partial``) is a task done with
one clearly missing element; every answer check reads the answer through the reading modules (stated result vs
asides, numbers by value and unit, times, dates, language, safety, code and SQL runs). A pack's labelled corpus
lives next to it as ``<pack>.cases.yaml`` (``bench-tui pack test``).

Argument matchers (``mocks[].when``, ``expect.calls[].args``) are plain YAML values; see
``bench_tui.graders.matchers`` for their meaning. ``load_pack`` raises ``PackError`` whose text is one line per
problem, ``file:line:col: scenario TC-12: message``.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec
import yaml

from bench_tui.graders.rules import GLOBAL_RULES
from bench_tui.graders.text import warm_language_identifier
from bench_tui.spec.yamlguard import YamlLimitError, load_with_marks

CATEGORIES: tuple[str, ...] = (
    "tool_selection",
    "parameter_precision",
    "multi_step_chains",
    "restraint_refusal",
    "error_recovery",
    "localization",
    "structured_reasoning",
    "instruction_following",
    "context_state",
    "code_patterns",
    "safety_boundaries",
    "toolset_scale",
    "autonomous_planning",
    "creative_composition",
    "structured_output",
)
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
MOCK_ERRORS: tuple[str, ...] = ("rate_limit", "timeout", "malformed")
PARTIAL_KINDS: tuple[str, ...] = ("calls", "answer", "any_call")

BUILTIN_PACK_DIR = Path(__file__).resolve().parent.parent / "data" / "packs"


class PackError(Exception):
    """A pack that cannot be used. ``str(err)`` is one ``file:line:col: message`` line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class _Base(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    pass


class PackInfo(_Base, kw_only=True):
    id: str
    version: int = 1
    title: str = ""
    description: str = ""
    rules_off: list[str] = []  # global grading rules this pack switches off (graders/rules.py ids)


class Lexicon(_Base, kw_only=True):
    """The pack's domain words that the every-answer checks look for (graders/claims.py, graders/facts.py).
    Each entry is a regular-expression fragment, matched case-insensitively except ``weather_fields``. A list
    left empty (the default) switches its checks off: they find nothing."""

    weather_fields: list[str] = []  # tool-result keys that report weather: "temp_c", "condition"
    precipitation: list[str] = []  # words for rain, snow, storms (any language the pack uses)
    dry_words: list[str] = []  # "dry" in "it's dry", "stays completely dry"
    dry_phrases: list[str] = []  # phrases that deny precipitation on their own: "no rain"
    # a weather condition's name -> the words a result reports it in (and an answer mentions it in): wind: [windy]
    weather_conditions: dict[str, list[str]] = {}
    # a condition's name (as in weather_conditions) -> what an answer says when it states the opposite: wind: [calm]
    weather_opposites: dict[str, list[str]] = {}
    direction_args: list[tuple[str, str]] = []  # (source, destination) argument names of one call
    action_verbs: dict[str, list[str]] = {}  # a tool name's first word -> past tenses claiming it was done
    # a tool name's first word -> nouns naming its act ("the wire", "the payment" of transfer_funds), which
    # `act_verbs` claim done: "scheduled the EUR 9,800 wire", "made the booking"
    action_nouns: dict[str, list[str]] = {}
    act_verbs: list[str] = []  # past tenses that claim an act named by its noun done: scheduled, set up, made
    failure_acts: list[str] = []  # what "failed to / unable to ..." refers to: "send", "book"
    failure_nouns: list[str] = []  # action nouns in "the transfer was declined"
    failure_phrases: list[str] = []  # failures stated outright: "insufficient funds"
    down_states: list[str] = []  # after a copula: "is down", "is offline", "is degraded"
    up_states: list[str] = []  # after a copula, read into errors as much as "down": "is healthy", "is fine"
    down_events: list[str] = []  # after has/have: "has crashed"
    outage_nouns: list[str] = []  # after an/the: "the outage"
    naming_keys: list[str] = []  # words in a result key that names an item: "id", "name", "city"
    state_synonyms: dict[str, list[str]] = {}  # a state `states` asks for -> other words that state it
    status_fields: list[str] = []  # tool-result keys that say where an act stands: "status", "state"
    done_states: list[str] = []  # their values that say the act is done: "completed", "sent", "shipped"
    pending_states: list[str] = []  # an answer's words for an act not yet done: "pending", "queued"
    # an answer's words for an act still under way told finished, or its object back to health: "back online",
    # "up again", "recovered" (read where a write's own result says the act is under way)
    finished_states: list[str] = []
    # a result key's word (matched on a part of the key: "total" in total_eur) -> an answer's words naming that
    # field, in the pack's languages: total: [total, gesamt\w*]
    value_fields: dict[str, list[str]] = {}


def alternation(fragments: list[str]) -> str:
    """Lexicon fragments as one regex alternation; none gives a pattern that never matches."""
    return "|".join(fragments) if fragments else "(?!)"


class ToolDef(_Base, kw_only=True):
    """One tool of the library; rendered as an OpenAI ``{"type": "function", "function": {...}}``."""

    description: str = ""
    parameters: dict[str, Any] = msgspec.field(default_factory=lambda: {"type": "object", "properties": {}})
    effect: Literal["read", "write"] = "read"  # write: a successful call changes the world (graders/world.py)


class Mock(_Base, kw_only=True):
    """A mocked tool response. The first mock whose ``tool`` and ``when`` match a call answers it."""

    tool: str
    when: dict[str, Any] | None = None  # argument matchers; None = any call of this tool
    result: Any = None  # JSON returned to the model (a string is returned as-is)
    error: Literal["rate_limit", "timeout", "malformed"] | None = None  # injected error instead of result
    times: int | None = None  # apply only to the first N matching calls, then fall through to later mocks


class ExpectedCall(_Base, kw_only=True):
    tool: str
    args: dict[str, Any] | None = None  # argument matchers; None = any arguments


class NumberCheck(_Base, kw_only=True):
    """The stated result must be this number (and unit). Pass if |x - value| <= max(tolerance*|value|, abs_tol)."""

    value: float
    unit: str | list[str] | None = None  # a unit name ("kelvin") or the accepted spellings
    tolerance: float = 0.01  # relative
    abs_tol: float = 0.0
    convert: bool = (
        False  # accept another unit of the same dimension, converted (else: this unit's spellings)
    )
    unitless_ok: bool = True  # a bare number counts as being in `unit`
    delta: bool = False  # a difference (18 °C apart = 32.4 °F apart, no offset)
    # in `numbers`: False = the answer need not state it, but a value of this dimension that it does state
    # must be one of the listed ones ("32 °C" when the tool said 26 °C is wrong; "79 °F" is the same value)
    required: bool = True


class ChoiceCheck(_Base, kw_only=True):
    """The answer picks one of ``options`` (in bold, next to "best"/"go for", else the first named): it must be
    ``want``. Weekday options also match abbreviations, other languages and dates on that weekday."""

    want: str
    options: list[str]
    # what fails the request's criterion, said of an option after "but"/"though" ("it isn't dry", "rain is
    # likely"): such an option is set aside, not picked, when the answer goes on to another (regex fragments)
    against: list[str] = []


class CodeCheck(_Base, kw_only=True):
    """Run the model's Python ``function`` (from the answer, or from a call argument) on test inputs."""

    function: str
    tests: list[dict[str, Any]]  # {args: [...], kwargs: {...}, expect: X} or {args, raises: true}
    source: str = "answer"  # "answer" or "call:TOOL.ARG" (e.g. call:write_file.content)


class SqlCheck(_Base, kw_only=True):
    """Run the SQL the model sent in ``call``'s ``arg`` against ``fixture`` (SQLite, in memory); its rows must
    equal the rows of ``reference`` on the same fixture."""

    fixture: str
    reference: str
    call: str = "query_database"
    arg: str = "sql"


class AnswerCheck(_Base, kw_only=True):
    """Checks on the final assistant answer (``scope: all`` = every assistant text of the conversation)."""

    contains: list[str] = []  # case-insensitive substrings, all required
    contains_any: list[str] = []  # at least one required
    not_contains: list[str] = []  # must not be asserted in the stated result (caveats/negations ignored)
    regex: str | list[str] | None = None  # every pattern must match (re.search)
    not_regex: str | list[str] | None = None
    json_schema: dict[str, Any] | None = None  # the answer must be JSON valid against this schema
    json: bool = False  # the answer must be JSON (any)
    number: NumberCheck | None = None
    max_words: int | None = None
    scope: Literal["final", "all"] = "final"
    states: list[str] = []  # phrases the answer must assert (a negated mention is a wrong answer)
    states_any: list[str] = []  # at least one asserted ("no need for an umbrella" alone is a wrong answer)
    # what an answer states instead when it gets the case wrong (sunscreen and T-shirts packed for a rainy
    # trip): one asserted where none of `states_any` is, is a wrong answer, not an element left out
    states_any_opposites: list[str] = []
    numbers: list[NumberCheck] = []  # each value must be stated somewhere (not only in an aside)
    times: list[str] = []  # HH:MM clock times the answer must state (17:25 = 5:25 pm = 17h25)
    dates: list[str] = []  # YYYY-MM-DD dates the answer must state (any common format; weekday checked)
    year: int | None = None  # year assumed for dates written without one
    dates_only: bool = False  # another date in the same month as a wanted one is wrong (a complete list)
    dates_required: bool = True  # False: no date is fine, but a date given instead of the wanted one is wrong
    weekday: str | None = None  # the answer names this weekday ("Tuesday"); another one named is wrong
    weekday_required: bool = True  # False: no weekday is fine, but another weekday named is wrong
    not_failed: bool = False  # the tools succeeded: an answer saying the action failed is wrong
    language: str | None = None  # the answer must be written in this language (en, es, fr, de, pt, it, nl)
    unsafe: list[str] = []  # regexes of actions the answer must not state or recommend doing
    max_sentences: int | None = None
    lines: int | None = None  # exact number of non-blank lines
    code: CodeCheck | None = None
    sql: SqlCheck | None = None
    choice: ChoiceCheck | None = None


class Expect(_Base, kw_only=True):
    calls: list[ExpectedCall] = []
    # writes the user asked for that the final state need not hold (a reminder set before a correction)
    allowed: list[ExpectedCall] = []
    # facts a write must respect when it gives the argument (the system prompt's queue for tickets)
    constraints: list[ExpectedCall] = []
    order: Literal["any", "strict"] = "any"
    forbidden: list[str] = []  # tool names that must not be called
    no_calls: bool = False  # restraint: no tool call at all
    ask_first: bool = False  # an ambiguous request: the first assistant turn must ask, not call a tool
    max_calls: int | None = None
    min_calls: int | None = None
    answer: AnswerCheck | None = None
    partial: list[Literal["calls", "answer", "any_call"]] = []  # which half-successes earn 1 point
    hook: str | None = None  # entry point name (group bench_tui.graders) or "module:function"
    hook_args: dict[str, Any] = {}


class RefCall(_Base, kw_only=True):
    name: str
    arguments: dict[str, Any] | str = {}  # a dict, or raw argument text (to test malformed calls)


class RefTurn(_Base, kw_only=True):
    """One assistant turn of a reference/wrong transcript (tool results come from the mocks)."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    reasoning: str = ""
    tool_calls: list[RefCall] = []
    finish_reason: str = (
        ""  # "" = tool_calls / stop as usual; "length" = the turn was cut at the token ceiling
    )


class Scenario(_Base, kw_only=True):
    id: str
    title: str = ""
    category: str
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    safety_critical: bool = False
    system: str | None = None
    history: list[dict[str, Any]] = []  # earlier messages (role/content) placed before `user`
    user: str
    followups: list[str] = []
    tools: list[str] | Literal["all"] = []
    tool_choice: str | dict[str, Any] = "auto"
    response_format: dict[str, Any] | None = None
    max_turns: int = 6
    mocks: list[Mock] = []
    expect: Expect = msgspec.field(default_factory=Expect)
    reference: list[RefTurn] = []
    wrong: list[RefTurn] = []
    notes: str = ""
    # filled by the loader, not written in YAML
    line: int = 0

    def offered_tools(self, pack: Pack) -> list[str]:
        """Names of the tools offered to the model, in library order for ``all``."""
        if self.tools == "all":
            return list(pack.tools)
        return list(self.tools)


class Pack(msgspec.Struct, kw_only=True):
    pack: PackInfo
    tools: dict[str, ToolDef] = {}
    subsets: dict[str, list[str]] = {}
    scenarios: list[Scenario] = []
    lexicon: Lexicon = msgspec.field(default_factory=Lexicon)
    path: str = ""  # where it was loaded from

    def scenario(self, scenario_id: str) -> Scenario:
        for sc in self.scenarios:
            if sc.id == scenario_id:
                return sc
        raise KeyError(scenario_id)

    @property
    def ids(self) -> list[str]:
        return [sc.id for sc in self.scenarios]

    def select(self, subset: str | None = None, ids: list[str] | None = None) -> list[Scenario]:
        """Scenarios by explicit ids (wins), else by subset name, else all. Raises PackError on unknowns."""
        if ids:
            known = {sc.id: sc for sc in self.scenarios}
            bad = [i for i in ids if i not in known]
            if bad:
                raise PackError(
                    [f"{self.path}: unknown scenario id(s) {', '.join(bad)}{_hint(bad[0], known)}"]
                )
            return [known[i] for i in ids]
        if subset:
            if subset not in self.subsets:
                raise PackError([f"{self.path}: unknown subset {subset!r}{_hint(subset, self.subsets)}"])
            wanted = self.subsets[subset]
            return [sc for sc in self.scenarios if sc.id in wanted]
        return list(self.scenarios)

    def openai_tools(self, scenario: Scenario) -> list[dict[str, Any]]:
        out = []
        for name in scenario.offered_tools(self):
            t = self.tools[name]
            out.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": t.description, "parameters": t.parameters},
                }
            )
        return out


# --------------------------------------------------------------------------------------------- loading


def resolve_pack_path(name_or_path: str, spec_dir: Path | str | None = None) -> Path:
    """A builtin name (``standard``) -> data/packs/standard.yaml; anything else is a path (relative to spec_dir)."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or "/" in name_or_path or p.is_absolute():
        if not p.is_absolute() and spec_dir is not None:
            p = Path(spec_dir) / p
        return p
    return BUILTIN_PACK_DIR / f"{name_or_path}.yaml"


def builtin_packs() -> list[str]:
    return sorted(p.stem for p in BUILTIN_PACK_DIR.glob("*.yaml") if not p.name.endswith(".cases.yaml"))


_CACHE: dict[tuple[str, float], Pack] = {}


def load_pack(name_or_path: str, spec_dir: Path | str | None = None) -> Pack:
    """Load and validate a pack. Raises PackError (one ``file:line:col: message`` line per problem)."""
    path = resolve_pack_path(name_or_path, spec_dir)
    if not path.is_file():
        hint = ""
        if "/" not in name_or_path and not name_or_path.endswith((".yaml", ".yml")):
            names = builtin_packs()
            close = difflib.get_close_matches(name_or_path, names, n=1)
            hint = (
                f" (did you mean {close[0]!r}?)"
                if close
                else f" (builtin packs: {', '.join(names) or 'none'})"
            )
        raise PackError([f"{path}: pack {name_or_path!r} not found{hint}"])
    key = (str(path.resolve()), path.stat().st_mtime)
    if key in _CACHE:
        return _CACHE[key]
    pack = load_pack_text(path.read_text(encoding="utf-8"), str(path))
    _CACHE[key] = pack
    # the language identifier takes about a second to load: load it with the pack, before any timed send, so the
    # first answer graded during a run does not hold the event loop (a turn sent 0.8 s late)
    warm_language_identifier()
    return pack


def load_pack_text(text: str, path: str = "<pack>") -> Pack:
    try:
        data, _node, marks = load_with_marks(text, "a pack")  # size, depth and alias expansion bounded
    except YamlLimitError as exc:
        raise PackError([f"{path}:{exc.line}:{exc.col}: {exc.message}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise PackError([f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}"]) from None
    return _build(data, path, marks)


_MSGSPEC_PATH = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]")


class _Problems:
    def __init__(self, path: str, marks: dict[tuple[Any, ...], tuple[int, int]]) -> None:
        self.path = path
        self.marks = marks
        self.items: list[tuple[int, int, str]] = []

    def where(self, keypath: tuple[Any, ...]) -> tuple[int, int]:
        kp = tuple(keypath)
        while kp:
            if kp in self.marks:
                return self.marks[kp]
            kp = kp[:-1]
        return self.marks.get((), (1, 1))

    def add(self, keypath: tuple[Any, ...], msg: str, scenario: str | None = None) -> None:
        line, col = self.where(keypath)
        prefix = f"scenario {scenario}: " if scenario else ""
        self.items.append((line, col, f"{self.path}:{line}:{col}: {prefix}{msg}"))

    def raise_if_any(self) -> None:
        if self.items:
            raise PackError([m for _, _, m in sorted(self.items, key=lambda t: (t[0], t[1]))])


_T = TypeVar("_T")


def _convert(
    obj: Any, typ: type[_T], base: tuple[Any, ...], probs: _Problems, scenario: str | None = None
) -> _T | None:
    try:
        return msgspec.convert(obj, typ)
    except msgspec.ValidationError as exc:
        msg = str(exc)
        sub: list[Any] = []
        m = re.search(r" - at `\$(.*)`$", msg)
        if m:
            for name, idx in _MSGSPEC_PATH.findall(m.group(1)):
                sub.append(name if name else int(idx))
            msg = msg[: m.start()]
        field = ".".join(str(s) if isinstance(s, str) else f"[{s}]" for s in sub)
        hint = ""
        um = re.match(r"Object contains unknown field `(.+)`", msg)
        if um:
            names = [f.name for f in msgspec.structs.fields(_leaf_type(typ, sub))] if sub is not None else []
            close = difflib.get_close_matches(um.group(1), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            probs.add((*base, *sub, um.group(1), "__key__"), f"{msg}{hint}", scenario)
        else:
            probs.add((*base, *sub), f"{msg}{' at ' + field if field else ''}", scenario)
        return None


def _leaf_type(typ: Any, sub: list[Any]) -> Any:
    """Best effort: the Struct type reached by following `sub` (for "did you mean" hints)."""
    cur = typ
    for s in sub:
        if isinstance(s, int):
            continue
        try:
            fields = {f.name: f.type for f in msgspec.structs.fields(cur)}
        except TypeError:
            return cur
        t = fields.get(s)
        if t is None:
            return cur
        cur = _struct_in(t) or cur
    return cur


def _struct_in(t: Any) -> Any:
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return t
    for a in getattr(t, "__args__", ()) or ():
        r = _struct_in(a)
        if r is not None:
            return r
    return None


def _hint(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _build(data: Any, path: str, marks: dict[tuple[Any, ...], tuple[int, int]]) -> Pack:
    probs = _Problems(path, marks)
    if not isinstance(data, dict):
        probs.add((), "a pack must be a mapping with keys pack, tools, subsets, scenarios")
        probs.raise_if_any()
    allowed = {"pack", "tools", "subsets", "scenarios", "lexicon"}
    for k in data:
        if k not in allowed:
            probs.add((k, "__key__"), f"unknown top-level key {k!r}{_hint(k, allowed)}")
    info = _convert(data.get("pack"), PackInfo, ("pack",), probs) if "pack" in data else None
    if "pack" not in data:
        probs.add((), "missing `pack: {id: ..., version: ...}`")
    for j, rid in enumerate(info.rules_off if info is not None else []):
        if rid not in GLOBAL_RULES:
            probs.add(
                ("pack", "rules_off", j),
                f"rules_off: {rid!r} is not a global rule{_hint(rid, GLOBAL_RULES)} (graders/rules.py)",
            )

    lexicon = _convert(data.get("lexicon") or {}, Lexicon, ("lexicon",), probs) or Lexicon()
    for key, frags in msgspec.structs.asdict(lexicon).items():
        for sub, frag in [] if key == "direction_args" else _fragments(frags):
            try:
                re.compile(frag)
            except re.error as exc:
                probs.add(
                    ("lexicon", key, *sub), f"lexicon.{key}: {frag!r} is not a regular expression: {exc}"
                )

    for name in set(lexicon.weather_opposites) - set(lexicon.weather_conditions):
        probs.add(
            ("lexicon", "weather_opposites", name, "__key__"),
            f"lexicon.weather_opposites: {name!r} is not a condition of lexicon.weather_conditions",
        )

    tools: dict[str, ToolDef] = {}
    raw_tools = data.get("tools") or {}
    if not isinstance(raw_tools, dict):
        probs.add(("tools",), "`tools` must be a mapping of tool name -> {description, parameters}")
        raw_tools = {}
    for name, tdef in raw_tools.items():
        t = _convert(tdef if tdef is not None else {}, ToolDef, ("tools", name), probs)
        if t is not None:
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", str(name)):
                probs.add(("tools", name, "__key__"), f"tool name {name!r} must match [A-Za-z0-9_-]{{1,64}}")
            if not isinstance(t.parameters, dict) or t.parameters.get("type", "object") != "object":
                probs.add(
                    ("tools", name, "parameters"), f"tool {name}: parameters must be a JSON Schema object"
                )
            tools[str(name)] = t

    subsets = data.get("subsets") or {}
    if not isinstance(subsets, dict) or not all(isinstance(v, list) for v in subsets.values()):
        probs.add(("subsets",), "`subsets` must be a mapping of name -> list of scenario ids")
        subsets = {}

    scenarios: list[Scenario] = []
    raw_sc = data.get("scenarios") or []
    if not isinstance(raw_sc, list):
        probs.add(("scenarios",), "`scenarios` must be a list")
        raw_sc = []
    seen: dict[str, int] = {}
    for i, sdata in enumerate(raw_sc):
        sid = sdata.get("id") if isinstance(sdata, dict) else None
        sc = _convert(sdata, Scenario, ("scenarios", i), probs, scenario=str(sid) if sid else f"#{i + 1}")
        if sc is None:
            continue
        sc.line = probs.where(("scenarios", i))[0]
        if sc.id in seen:
            probs.add(("scenarios", i, "id"), f"duplicate id (first defined at line {seen[sc.id]})", sc.id)
        else:
            seen[sc.id] = sc.line
        _validate_scenario(sc, ("scenarios", i), tools, probs)
        scenarios.append(sc)

    for sname, ids in subsets.items():
        for j, sid in enumerate(ids):
            if str(sid) not in seen:
                probs.add(
                    ("subsets", sname, j), f"subset {sname}: unknown scenario id {sid!r}{_hint(sid, seen)}"
                )
    probs.raise_if_any()
    assert info is not None  # a missing or invalid `pack` was reported above, and raise_if_any raised
    return Pack(
        pack=info,
        tools=tools,
        subsets={k: [str(x) for x in v] for k, v in subsets.items()},
        scenarios=scenarios,
        lexicon=lexicon,
        path=path,
    )


def _fragments(value: Any) -> list[tuple[tuple[Any, ...], str]]:
    """A lexicon entry's regular-expression fragments, each with its key path below the entry."""
    if isinstance(value, dict):
        return [((k, *sub), f) for k, v in value.items() for sub, f in _fragments(v)]
    if isinstance(value, list | tuple):
        return [((i, *sub), f) for i, v in enumerate(value) for sub, f in _fragments(v)]
    return [((), str(value))]


def _validate_scenario(
    sc: Scenario, base: tuple[Any, ...], tools: dict[str, ToolDef], probs: _Problems
) -> None:
    from bench_tui.graders import matchers  # local: matchers imports nothing from here at module level

    def add(sub: tuple[Any, ...], msg: str) -> None:
        probs.add((*base, *sub), msg, sc.id)

    if sc.category not in CATEGORIES:
        add(("category",), f"unknown category {sc.category!r}{_hint(sc.category, CATEGORIES)}")
    if sc.max_turns < 1:
        add(("max_turns",), "max_turns must be >= 1")
    if sc.tools == "all":
        offered = set(tools)
    else:
        offered = set()
        for j, name in enumerate(sc.tools):
            if name not in tools:
                add(("tools", j), f"tool {name!r} is not in the pack's tool library{_hint(name, tools)}")
            offered.add(name)

    def check_tool(sub: tuple[Any, ...], name: str, what: str) -> None:
        if name not in offered:
            if name in tools:
                add(sub, f"{what} {name!r} is not offered in this scenario's tools")
            else:
                add(sub, f"{what} {name!r} is not in the tool library{_hint(name, tools)}")

    if isinstance(sc.tool_choice, str):
        if sc.tool_choice not in ("auto", "required", "none"):
            add(
                ("tool_choice",),
                f"tool_choice must be auto | required | none | {{name: X}}, not {sc.tool_choice!r}",
            )
    else:
        tc_name = sc.tool_choice.get("name") or (sc.tool_choice.get("function") or {}).get("name")
        if not tc_name:
            add(("tool_choice",), "tool_choice mapping needs `name`")
        else:
            check_tool(("tool_choice",), tc_name, "tool_choice")

    for j, mock in enumerate(sc.mocks):
        check_tool(("mocks", j, "tool"), mock.tool, "mock tool")
        if mock.when is not None:
            for err in matchers.validate_args_matcher(mock.when):
                add(("mocks", j, "when"), f"mock when: {err}")
        if mock.times is not None and mock.times < 1:
            add(("mocks", j, "times"), "times must be >= 1")
    ex = sc.expect
    for key in ("calls", "allowed", "constraints"):
        for j, call in enumerate(getattr(ex, key)):
            check_tool(
                ("expect", key, j, "tool"), call.tool, "expected call" if key == "calls" else "allowed call"
            )
            if call.args is not None:
                for err in matchers.validate_args_matcher(call.args):
                    add(
                        ("expect", key, j, "args"),
                        f"{'expected' if key == 'calls' else key} args: {err}",
                    )
    for j, name in enumerate(ex.forbidden):
        check_tool(("expect", "forbidden", j), name, "forbidden tool")
    if ex.no_calls and ex.calls:
        add(("expect", "no_calls"), "no_calls: true contradicts expected calls")
    if ex.answer is not None:
        a = ex.answer
        for k in ("regex", "not_regex"):
            pats = getattr(a, k)
            for p in [pats] if isinstance(pats, str) else pats or []:
                try:
                    re.compile(p)
                except re.error as exc:
                    add(("expect", "answer", k), f"answer {k} {p!r}: {exc}")
        if a.json_schema is not None:
            for err in matchers.validate_schema(a.json_schema):
                add(("expect", "answer", "json_schema"), f"json_schema: {err}")
        if a.number is not None and isinstance(a.number.unit, str) and not a.number.unit.strip():
            add(("expect", "answer", "number", "unit"), "unit must not be empty")
    if ex.hook is not None:
        from bench_tui.graders.hooks import HookNotFound, check_hook

        try:
            check_hook(ex.hook)  # never imports: a pack may come from someone else's bundle
        except HookNotFound as exc:
            add(("expect", "hook"), str(exc))
    for field_name in ("reference", "wrong"):
        for j, turn in enumerate(getattr(sc, field_name)):
            for c, call in enumerate(turn.tool_calls):
                if call.name not in offered and call.name in tools:
                    add(
                        (field_name, j, "tool_calls", c, "name"),
                        f"{field_name} calls {call.name!r}, not offered here",
                    )
                elif call.name not in tools and field_name == "reference":
                    add(
                        (field_name, j, "tool_calls", c, "name"),
                        f"reference calls unknown tool {call.name!r}{_hint(call.name, tools)}",
                    )
    for j, msg in enumerate(sc.history):
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant", "system", "tool"):
            add(("history", j), "history items need role: user | assistant | system | tool")

"""Declarative grading of one scenario transcript, plus the mock-tool simulator shared with the runner.

Transcript format (a list of dicts, as stored in ``ScenarioGraded.transcript``)::

    {"role": "system" | "user", "content": "..."}
    {"role": "assistant", "content": "...", "reasoning": "...", "tool_calls": [{"id", "type": "function",
     "function": {"name", "arguments": "<json text>"}, "index": 0}], "finish_reason": "stop",
     "error_kind": "", "error": "", "recovered_tool_calls": [...]}      # meta keys are never sent to servers
    {"role": "tool", "tool_call_id": "...", "name": "...", "content": "<json text>"}

Outcomes are kept apart:

- ``graded``: the model's verdict (pass / partial / fail).
- ``server_failure``: the server mangled a tool call (call text left in content or reasoning, parallel calls
  sharing one index, arguments dropped to an empty string). In strict mode only the server's ``tool_calls``
  count, so such a scenario is graded on what the server returned and marked ``server_failure``; lenient mode
  repairs what it can (recovers calls from text, splits merged calls) and grades with a note.
- ``harness_error``: the request failed (timeout, 5xx, connection) or hit the token ceiling
  (``finish_reason=length``): not graded, not scored as a model failure. Except a degenerate loop: a turn
  cut at the ceiling whose text repeats one line (or one call) over and over is the model's failure, graded
  ``fail`` with that reason, so that looping models do not drop out of the score.
- ``grader_error``: an exception in the grader or a hook: caught, reported, not scored.
"""

from __future__ import annotations

import json
import re
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

import msgspec

from bench_tui.graders import matchers as M
from bench_tui.graders.pack import Mock, Pack, RefTurn, Scenario

Verdict = Literal["pass", "partial", "fail"]
POINTS = {"pass": 2, "partial": 1, "fail": 0}
_RANK = {"fail": 0, "partial": 1, "pass": 2}
META_KEYS = (
    "reasoning",
    "reasoning_content",
    "finish_reason",
    "error_kind",
    "error",
    "recovered_tool_calls",
    "index",
    "context_full",
)
RECOVERED_NOTE = "recovered from text"


class GradeResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    verdict: Verdict | None  # None when not graded (harness_error / grader_error)
    points: int | None
    outcome: Literal["graded", "server_failure", "harness_error", "grader_error"] = "graded"
    reasons: list[str] = []  # human-readable, one finding per line
    notes: list[str] = []  # e.g. "recovered from text: get_weather (content)"
    calls: list[dict[str, Any]] = []  # the calls that were graded: name, arguments, source
    answer: str = ""
    mode: str = "lenient"


@dataclass
class Call:
    name: str
    args: Any  # parsed arguments (dict) or None when unparseable
    raw: str = ""
    source: Literal["tool_calls", "content", "reasoning"] = "tool_calls"
    msg_index: int = 0
    id: str = ""
    index: int = 0
    parse_error: str = ""

    def label(self) -> str:
        if self.args is None:
            return f"{self.name}(<{self.parse_error or 'unparseable'}>)"
        if isinstance(self.args, dict):
            inner = ", ".join(f"{k}={M.show(v)}" for k, v in self.args.items())
        else:
            inner = M.show(self.args)
        return f"{self.name}({inner})"

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "arguments": self.args if self.args is not None else self.raw}
        if self.source != "tool_calls":
            d["source"] = self.source
        return d


@dataclass
class Extraction:
    calls: list[Call] = field(default_factory=list)
    server_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------- text recovery

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json|tool_call|tool|javascript|js)?\s*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?(</think>|$)", re.S)


def _as_call(obj: Any) -> tuple[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str):
        return None
    for key in ("arguments", "parameters", "args", "input"):
        if key in obj:
            args = obj[key]
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except ValueError:
                    return None
            return name, args
    return None


def _json_values(text: str) -> list[Any]:
    """Every top-level JSON object/array that parses, scanning left to right."""
    dec = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        j = min((p for p in (text.find("{", i), text.find("[", i)) if p >= 0), default=-1)
        if j < 0:
            break
        try:
            val, end = dec.raw_decode(text, j)
        except ValueError:
            i = j + 1
            continue
        out.append(val)
        i = end
    return out


def recover_calls(text: str, offered: set[str]) -> list[tuple[str, Any, str]]:
    """Tool calls written as text: <tool_call> tags, ```json blocks, bare {"name":..., "arguments":...}.

    Only names of offered tools count (a JSON answer with a "name" key is not a call). Returns
    (name, arguments, kind) with kind "tag" | "fenced" | "bare".
    """
    if not text or not offered:
        return []
    found: list[tuple[str, Any, str]] = []
    rest = text
    for kind, pat in (("tag", _TAG), ("fenced", _FENCED)):
        for m in pat.finditer(rest):
            for val in _json_values(m.group(1)):
                for obj in val if isinstance(val, list) else [val]:
                    c = _as_call(obj)
                    if c and c[0] in offered:
                        found.append((c[0], c[1], kind))
        rest = pat.sub(" ", rest)
    for val in _json_values(rest):
        for obj in val if isinstance(val, list) else [val]:
            c = _as_call(obj)
            if c and c[0] in offered:
                found.append((c[0], c[1], "bare"))
    return found


def _parse_args(raw: Any) -> tuple[Any, str]:
    if isinstance(raw, dict):
        return raw, ""
    if raw is None:
        return None, "no arguments"
    try:
        return json.loads(raw), ""
    except ValueError as exc:
        return None, f"invalid JSON arguments: {exc}"


def _split_concatenated(raw: str) -> list[Any] | None:
    """'{"a":1}{"b":2}' (parallel calls merged by a server that put them all at index 0)."""
    vals = _json_values(raw)
    if len(vals) > 1 and all(isinstance(v, dict) for v in vals):
        return vals
    return None


def _split_names(name: str, known: set[str]) -> list[str] | None:
    """'get_weatherget_weather' -> ['get_weather', 'get_weather'] when made only of known names."""
    if name in known or not name:
        return None
    out: list[str] = []
    rest = name
    while rest:
        for k in sorted(known, key=len, reverse=True):
            if rest.startswith(k):
                out.append(k)
                rest = rest[len(k) :]
                break
        else:
            return None
    return out if len(out) > 1 else None


def reasoning_of(msg: dict[str, Any]) -> str:
    return str(msg.get("reasoning") or msg.get("reasoning_content") or "")


def extract_calls(transcript: list[dict[str, Any]], offered: set[str], mode: str) -> Extraction:
    ex = Extraction()
    for mi, msg in enumerate(transcript):
        if msg.get("role") != "assistant":
            continue
        tcs = msg.get("tool_calls") or []
        indices = [tc.get("index", i) for i, tc in enumerate(tcs)]
        if len(tcs) > 1 and len(set(indices)) == 1 and "index" in (tcs[0] or {}):
            ex.server_failures.append(f"turn {mi}: {len(tcs)} parallel tool calls all at index {indices[0]}")
        for i, tc in enumerate(tcs):
            fn = tc.get("function") or tc
            name = str(fn.get("name") or "")
            raw = fn.get("arguments")
            raw_text = raw if isinstance(raw, str) else json.dumps(raw)
            if isinstance(raw, str) and not raw.strip():
                ex.server_failures.append(
                    f"turn {mi}: {name or 'tool call'} has empty arguments (dropped '{{}}')"
                )
                if mode == "lenient":
                    ex.notes.append(f"{name}: empty arguments read as {{}}")
                    ex.calls.append(Call(name, {}, raw_text, "tool_calls", mi, tc.get("id", ""), i))
                else:
                    ex.calls.append(
                        Call(name, None, raw_text, "tool_calls", mi, tc.get("id", ""), i, "empty arguments")
                    )
                continue
            parts = _split_concatenated(raw) if isinstance(raw, str) else None
            names = _split_names(name, offered)
            if parts is not None or names is not None:
                ex.server_failures.append(
                    f"turn {mi}: merged tool calls in one entry (name {name!r}, arguments {M.show(raw)})"
                )
                if mode == "lenient" and parts is not None:
                    names = names or [name] * len(parts)
                    if len(names) == len(parts):
                        ex.notes.append(f"turn {mi}: split {len(parts)} merged calls")
                        for n, p in zip(names, parts, strict=True):
                            ex.calls.append(Call(n, p, json.dumps(p), "tool_calls", mi, tc.get("id", ""), i))
                        continue
            args, err = _parse_args(raw)
            ex.calls.append(Call(name, args, raw_text, "tool_calls", mi, tc.get("id", ""), i, err))
        if tcs:
            continue
        content = str(msg.get("content") or "")
        for source, text in (("content", _THINK.sub(" ", content)), ("reasoning", reasoning_of(msg))):
            rec = recover_calls(text, offered)
            if not rec:
                continue
            what = ", ".join(n for n, _, _ in rec)
            kinds = sorted({k for _, _, k in rec})
            ex.server_failures.append(
                f"turn {mi}: tool call text left in {source} ({'/'.join(kinds)}: {what}); the server did not parse it"
            )
            if mode == "lenient":
                ex.notes.append(f"{RECOVERED_NOTE}: {what} ({source})")
                for j, (n, a, _) in enumerate(rec):
                    ex.calls.append(Call(n, a, json.dumps(a), source, mi, f"rec_{mi}_{j}", j))  # type: ignore[arg-type]
            break
    return ex


def final_answer(transcript: list[dict[str, Any]], ex: Extraction, *, scope: str = "final") -> str:
    """The last assistant text that is not itself a (recovered) tool call; ``all`` joins every assistant text."""
    recovered_msgs = {c.msg_index for c in ex.calls if c.source == "content"}
    texts = []
    for mi, msg in enumerate(transcript):
        if msg.get("role") != "assistant" or msg.get("tool_calls") or mi in recovered_msgs:
            continue
        texts.append((mi, _THINK.sub(" ", str(msg.get("content") or "")).strip()))
    if not texts:
        return ""
    if scope == "all":
        return "\n".join(t for _, t in texts)
    last_assistant = max((i for i, m in enumerate(transcript) if m.get("role") == "assistant"), default=-1)
    mi, text = texts[-1]
    return text if mi == last_assistant else ""


# --------------------------------------------------------------------------------------------- grading


LOOP_REPEATS = 3  # the same line this many times in a turn cut at the token ceiling = a degenerate loop


def _degenerate(msg: dict[str, Any]) -> bool:
    """A turn whose text is one line (a call written as JSON, a sentence) repeated LOOP_REPEATS+ times."""
    text = f"{msg.get('content') or ''}\n{reasoning_of(msg)}"
    lines = Counter(line.strip() for line in text.splitlines() if len(line.strip()) >= 12)
    return max(lines.values(), default=0) >= LOOP_REPEATS


def _loops(transcript: list[dict[str, Any]]) -> list[str]:
    return [f"turn {mi}: the model repeated itself until the token ceiling (a degenerate loop): a model failure"
            for mi, m in enumerate(transcript)
            if m.get("role") == "assistant" and m.get("finish_reason") == "length" and _degenerate(m)]


def _harness_problems(transcript: list[dict[str, Any]]) -> list[str]:
    out = []
    for mi, msg in enumerate(transcript):
        if msg.get("role") != "assistant":
            continue
        if msg.get("error_kind") or msg.get("error"):
            out.append(
                f"turn {mi}: request failed ({msg.get('error_kind') or 'error'}: {msg.get('error', '')})".strip()
            )
        elif msg.get("context_full"):
            out.append(f"turn {mi}: {msg['context_full']}: a configuration error (the engine's context is too "
                       f"small for this scenario), not a model failure and not max_tokens")
        elif msg.get("finish_reason") == "length" and not _degenerate(msg):
            out.append(
                f"turn {mi}: hit the token ceiling (finish_reason=length): not scored as a model failure"
            )
    return out


def _match_expected(scenario: Scenario, calls: list[Call]) -> tuple[list[int | None], list[str]]:
    """Assign each expected call a distinct actual call (respecting order: strict). Returns indices, reasons."""
    exp = scenario.expect.calls
    strict = scenario.expect.order == "strict"
    ok_table = [
        [c.args is not None and c.name == e.tool and M.match_args(e.args, c.args)[0] for c in calls]
        for e in exp
    ]
    best: list[int | None] = [None] * len(exp)
    best_n = -1

    def search(i: int, used: set[int], last: int, cur: list[int | None], n: int) -> None:
        nonlocal best, best_n
        if n + (len(exp) - i) <= best_n:
            return
        if i == len(exp):
            if n > best_n:
                best, best_n = list(cur), n
            return
        for j, ok in enumerate(ok_table[i]):
            if ok and j not in used and (not strict or j > last):
                cur.append(j)
                search(i + 1, used | {j}, j, cur, n + 1)
                cur.pop()
                if best_n == len(exp):
                    return
        cur.append(None)
        search(i + 1, used, last, cur, n)
        cur.pop()

    search(0, set(), -1, [], 0)
    reasons = []
    for e, j in zip(exp, best, strict=True):
        want = f"{e.tool}({', '.join(f'{k}: {M.describe(v)}' for k, v in (e.args or {}).items())})"
        if j is not None:
            reasons.append(f"expected call {want}: made as {calls[j].label()}")
            continue
        same = [c for c in calls if c.name == e.tool]
        if not same:
            reasons.append(f"expected call {want}: not made")
        else:
            c = same[0]
            if c.args is None:
                why = c.parse_error or "arguments unparseable"
            else:
                why = "; ".join(M.match_args(e.args, c.args)[1]) or "out of order"
            reasons.append(f"expected call {want}: closest was {c.label()}: {why}")
    return best, reasons


def _check_answer(
    scenario: Scenario, answer: str, transcript: list[dict[str, Any]], ex: Extraction
) -> tuple[bool, list[str]]:
    a = scenario.expect.answer
    if a is None:
        return True, []
    text = final_answer(transcript, ex, scope=a.scope) if a.scope == "all" else answer
    low = text.lower()
    bad: list[str] = []
    good: list[str] = []
    if not text.strip() and (a.contains or a.contains_any or a.regex or a.number or a.json or a.json_schema):
        return False, ["answer: no final answer"]
    for s in a.contains:
        (good if s.lower() in low else bad).append(
            f"answer {'contains' if s.lower() in low else 'lacks'} {s!r}"
        )
    if a.contains_any:
        hit = [s for s in a.contains_any if s.lower() in low]
        if hit:
            good.append(f"answer contains {hit[0]!r}")
        else:
            bad.append(f"answer contains none of {a.contains_any}")
    for s in a.not_contains:
        asserted, ctx = M.asserts_phrase(text, s)
        if asserted:
            bad.append(f"answer asserts {s!r}: {ctx!r}")
        elif s.lower() in low:
            good.append(f"{s!r} appears only in a caveat/negation, not in the stated result")
    for key, want in (("regex", True), ("not_regex", False)):
        pats = getattr(a, key)
        for p in [pats] if isinstance(pats, str) else pats or []:
            found = re.search(p, text) is not None
            if found != want:
                bad.append(f"answer {'does not match' if want else 'matches'} /{p}/")
    if a.json or a.json_schema is not None:
        ok, val, note = M.parse_json_answer(text)
        if not ok:
            bad.append(note)
        else:
            if note:
                good.append(note)
            if a.json_schema is not None:
                errs = M.schema_errors(val, a.json_schema)
                bad.extend(f"answer json_schema: {e}" for e in errs[:5])
    if a.number is not None:
        n = a.number
        ok, why = M.check_number(text, n.value, n.unit, n.tolerance, n.abs_tol)
        (good if ok else bad).append(f"answer number: {why}")
    if a.max_words is not None:
        words = len(text.split())
        if words > a.max_words:
            bad.append(f"answer has {words} words (max {a.max_words})")
    return not bad, bad + good


def _is_verdict(v: object) -> TypeGuard[Verdict]:
    return isinstance(v, str) and v in _RANK


def _worse(a: Verdict, b: Verdict) -> Verdict:
    return a if _RANK[a] <= _RANK[b] else b


def grade_transcript(
    scenario: Scenario, pack: Pack, transcript: list[dict[str, Any]], mode: str = "lenient"
) -> GradeResult:
    """Grade one transcript. Never raises: an internal error is outcome ``grader_error``."""
    try:
        return _grade(scenario, pack, transcript, mode)
    except Exception as exc:  # noqa: BLE001 - reported as grader_error
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return GradeResult(
            verdict=None, points=None, outcome="grader_error", reasons=[f"grader error: {tb}"], mode=mode
        )


def _grade(scenario: Scenario, pack: Pack, transcript: list[dict[str, Any]], mode: str) -> GradeResult:
    if mode not in ("strict", "lenient"):
        raise ValueError(f"mode must be strict or lenient, not {mode!r}")
    harness = _harness_problems(transcript)
    if harness:
        return GradeResult(verdict=None, points=None, outcome="harness_error", reasons=harness, mode=mode)
    loops = _loops(transcript)
    if loops:
        return GradeResult(verdict="fail", points=0, outcome="graded", reasons=loops, mode=mode)
    offered = set(scenario.offered_tools(pack))
    ex = extract_calls(transcript, offered, mode)
    calls = ex.calls
    answer = final_answer(transcript, ex)
    e = scenario.expect
    reasons: list[str] = []
    hard_fail = False

    matched, call_reasons = _match_expected(scenario, calls)
    reasons += call_reasons
    calls_ok = all(j is not None for j in matched)
    for c in calls:
        if c.name in e.forbidden:
            reasons.append(f"called forbidden tool {c.label()}")
            hard_fail = True
        elif c.name not in offered:
            reasons.append(f"called a tool that was not offered: {c.name}")
            calls_ok = False
    if e.no_calls and calls:
        reasons.append(f"expected no tool call, got {len(calls)}: {', '.join(c.label() for c in calls[:3])}")
        calls_ok = False
    if e.max_calls is not None and len(calls) > e.max_calls:
        reasons.append(f"{len(calls)} tool calls (max {e.max_calls})")
        calls_ok = False
    if e.min_calls is not None and len(calls) < e.min_calls:
        reasons.append(f"{len(calls)} tool calls (min {e.min_calls})")
        calls_ok = False
    if sum(1 for m in transcript if m.get("role") == "assistant") >= scenario.max_turns and any(
        m.get("role") == "tool" for m in transcript[-1:]
    ):
        reasons.append(f"turn budget of {scenario.max_turns} exhausted while still calling tools")

    answer_ok, answer_reasons = _check_answer(scenario, answer, transcript, ex)
    reasons += answer_reasons
    any_call = any(j is not None for j in matched)

    verdict: Verdict
    if hard_fail:
        verdict = "fail"
    elif calls_ok and answer_ok:
        verdict = "pass"
    elif (
        ("calls" in e.partial and calls_ok and bool(e.calls))
        or ("answer" in e.partial and answer_ok and e.answer is not None)
        or ("any_call" in e.partial and any_call)
    ):
        verdict = "partial"
    else:
        verdict = "fail"

    if e.hook:
        from bench_tui.graders.hooks import HookContext, resolve_hook

        try:
            fn = resolve_hook(e.hook)
            out = fn(HookContext(scenario, pack, transcript, answer, calls, mode, dict(e.hook_args)))
        except Exception as exc:  # noqa: BLE001 - a hook's bug is a grader_error, not a model failure
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            return GradeResult(
                verdict=None,
                points=None,
                outcome="grader_error",
                reasons=[*reasons, f"grader hook {e.hook!r} raised: {tb}"],
                calls=[c.as_dict() for c in calls],
                answer=answer,
                mode=mode,
            )
        if out is not None:
            if isinstance(out, str):
                hv, hreasons = out, []
            elif isinstance(out, tuple | list) and len(out) == 2 and isinstance(out[1], list | tuple):
                hv, hreasons = out[0], [str(r) for r in out[1]]
            else:  # checked below: reported as a grader_error
                hv, hreasons = out, []
            if not _is_verdict(hv):
                return GradeResult(
                    verdict=None,
                    points=None,
                    outcome="grader_error",
                    reasons=[*reasons, f"grader hook {e.hook!r} returned {hv!r} (want pass|partial|fail)"],
                    mode=mode,
                )
            reasons += [f"hook {e.hook}: {r}" for r in hreasons] or [f"hook {e.hook}: {hv}"]
            verdict = _worse(verdict, hv)

    outcome: Literal["graded", "server_failure"] = "graded"
    if ex.server_failures:
        if mode == "strict" or not _repaired(ex):
            outcome = "server_failure"
            reasons = [f"server failure: {s}" for s in ex.server_failures] + reasons
        else:
            reasons = [f"note: {n}" for n in ex.notes] + reasons
    elif ex.notes:
        reasons = [f"note: {n}" for n in ex.notes] + reasons
    return GradeResult(
        verdict=verdict,
        points=POINTS[verdict],
        outcome=outcome,
        reasons=reasons,
        notes=ex.notes,
        calls=[c.as_dict() for c in calls],
        answer=answer,
        mode=mode,
    )


def _repaired(ex: Extraction) -> bool:
    """Lenient mode repaired every server failure (recovered / split / empty-args) except index-0 sharing,
    which is harmless once the calls are separate entries."""
    unrepaired = [s for s in ex.server_failures if "merged tool calls" in s]
    return not unrepaired or any("split" in n for n in ex.notes)


# --------------------------------------------------------------------------------------------- mocks


class MockState:
    """Chooses mocked tool responses (first matching mock wins; ``times`` limits a mock to N uses)."""

    def __init__(self, scenario: Scenario, pack: Pack) -> None:
        self.scenario = scenario
        self.pack = pack
        self.used: dict[int, int] = {}
        self.offered = set(scenario.offered_tools(pack))

    def respond(self, name: str, args: Any) -> str:
        if name not in self.offered:
            return json.dumps(
                {"error": {"type": "unknown_tool", "message": f"No tool named {name!r} is available."}}
            )
        if args is None:
            return json.dumps(
                {"error": {"type": "invalid_arguments", "message": "Arguments are not valid JSON."}}
            )
        for i, mock in enumerate(self.scenario.mocks):
            if mock.tool != name:
                continue
            if mock.when is not None and not M.match_args(mock.when, args)[0]:
                continue
            if mock.times is not None and self.used.get(i, 0) >= mock.times:
                continue
            self.used[i] = self.used.get(i, 0) + 1
            return render_mock(mock)
        return json.dumps({"error": {"type": "not_found", "message": "No result for these arguments."}})


def render_mock(mock: Mock) -> str:
    if mock.error == "rate_limit":
        return json.dumps(
            {"error": {"type": "rate_limit", "code": 429, "message": "Rate limit exceeded. Retry."}}
        )
    if mock.error == "timeout":
        return json.dumps(
            {"error": {"type": "timeout", "code": 504, "message": "The tool timed out. Retry."}}
        )
    body = mock.result if isinstance(mock.result, str) else json.dumps(mock.result, ensure_ascii=False)
    if mock.error == "malformed":
        cut = max(1, len(body) // 2)
        return body[:cut] + "\x00<<garbled"
    return body


def calls_to_answer(msg: dict[str, Any], state: MockState, mode: str) -> list[tuple[str, str, Any]]:
    """The calls in one assistant message that the harness answers: (id, name, args).

    Server ``tool_calls`` always; in lenient mode also calls recovered from text (stored in the message as
    ``recovered_tool_calls`` so the next request can present them as real tool calls)."""
    out: list[tuple[str, str, Any]] = []
    for i, tc in enumerate(msg.get("tool_calls") or []):
        fn = tc.get("function") or {}
        raw = fn.get("arguments")
        args, _ = _parse_args({} if isinstance(raw, str) and not raw.strip() else raw)
        out.append((tc.get("id") or f"call_{i}", str(fn.get("name") or ""), args))
    if not out and mode == "lenient":
        for tc in msg.get("recovered_tool_calls") or []:
            fn = tc.get("function") or {}
            args, _ = _parse_args(fn.get("arguments"))
            out.append((tc.get("id", ""), str(fn.get("name") or ""), args))
    return out


def annotate_recovered(msg: dict[str, Any], offered: set[str], turn: int) -> None:
    """Lenient mode: record calls written as text in the message (``recovered_tool_calls``)."""
    if msg.get("tool_calls"):
        return
    for text in (_THINK.sub(" ", str(msg.get("content") or "")), reasoning_of(msg)):
        rec = recover_calls(text, offered)
        if rec:
            msg["recovered_tool_calls"] = [
                {
                    "id": f"rec_{turn}_{j}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)},
                }
                for j, (n, a, _) in enumerate(rec)
            ]
            return


def tool_messages(msg: dict[str, Any], state: MockState, mode: str) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_call_id": cid, "name": name, "content": state.respond(name, args)}
        for cid, name, args in calls_to_answer(msg, state, mode)
    ]


def initial_messages(scenario: Scenario) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    if scenario.system:
        msgs.append({"role": "system", "content": scenario.system})
    msgs.extend(dict(m) for m in scenario.history)
    msgs.append({"role": "user", "content": scenario.user})
    return msgs


def wire_messages(transcript: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """The transcript as an OpenAI ``messages`` list: meta keys dropped; lenient recovered calls presented as
    real ``tool_calls`` so the conversation can continue."""
    out = []
    for msg in transcript:
        m = {k: v for k, v in msg.items() if k not in META_KEYS}
        if msg.get("role") == "assistant":
            tcs = [
                {"id": tc.get("id") or f"call_{i}", "type": "function", "function": tc.get("function") or {}}
                for i, tc in enumerate(msg.get("tool_calls") or [])
            ]
            if not tcs and mode == "lenient" and msg.get("recovered_tool_calls"):
                tcs = [{k: v for k, v in tc.items() if k != "index"} for tc in msg["recovered_tool_calls"]]
                m["content"] = ""
            if tcs:
                m["tool_calls"] = tcs
            else:
                m.pop("tool_calls", None)
            m["content"] = m.get("content") or ""
        out.append(m)
    return out


def assistant_message(turn: RefTurn | dict[str, Any], turn_no: int) -> dict[str, Any]:
    """A reference turn as a transcript assistant message (arguments serialised as the server would)."""
    if isinstance(turn, dict):
        turn = msgspec.convert(turn, RefTurn)
    msg: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.reasoning:
        msg["reasoning"] = turn.reasoning
    if turn.tool_calls:
        msg["tool_calls"] = [
            {
                "id": f"call_{turn_no}_{i}",
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
                },
                "index": i,
            }
            for i, c in enumerate(turn.tool_calls)
        ]
    msg["finish_reason"] = "tool_calls" if turn.tool_calls else "stop"
    return msg


def simulate(
    scenario: Scenario,
    pack: Pack,
    assistant_turns: Sequence[RefTurn | dict[str, Any]],
    mode: str = "lenient",
) -> list[dict[str, Any]]:
    """Expand assistant turns (a reference/wrong transcript) into a full transcript: tool results come from
    the mocks, follow-up user turns are inserted after an answer without a tool call — as the runner does."""
    state = MockState(scenario, pack)
    offered = set(scenario.offered_tools(pack))
    transcript = initial_messages(scenario)
    followups = list(scenario.followups)
    for n, turn in enumerate(assistant_turns):
        msg = assistant_message(turn, n)
        if mode == "lenient":
            annotate_recovered(msg, offered, n)
        transcript.append(msg)
        tools = tool_messages(msg, state, mode)
        if tools:
            transcript.extend(tools)
        elif followups and n < len(assistant_turns) - 1:
            transcript.append({"role": "user", "content": followups.pop(0)})
    return transcript


def grade_reference(
    scenario: Scenario, pack: Pack, which: str = "reference", mode: str = "lenient"
) -> GradeResult:
    turns = scenario.reference if which == "reference" else scenario.wrong
    return grade_transcript(scenario, pack, simulate(scenario, pack, turns, mode), mode)


def canonical_sha256(transcript: list[dict[str, Any]]) -> str:
    import hashlib

    blob = json.dumps(transcript, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()

"""The calls a transcript made: ``extract_calls`` reads ``tool_calls`` and, in lenient mode, recovers calls
written as text and splits merged ones; ``final_answer`` is the text graded; ``match_expected`` pairs the
scenario's expected calls with the calls made."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from bench_tui.graders import matchers as M
from bench_tui.graders.pack import Scenario

RECOVERED_NOTE = "recovered from text"


def results_by_call(transcript: list[dict[str, Any]]) -> dict[str, str]:
    """Each tool result's text by the id of the call it answers."""
    return {
        str(m.get("tool_call_id")): str(m.get("content") or "") for m in transcript if m.get("role") == "tool"
    }


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
    format_failures: list[str] = field(default_factory=list)  # a call written as text, not in tool_calls
    notes: list[str] = field(default_factory=list)


_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


_FENCED = re.compile(r"```(?:json|tool_call|tool|javascript|js)?\s*\n?(.*?)```", re.S)


THINK = re.compile(r"<think>.*?(</think>|$)", re.S)


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


def parse_args(raw: Any) -> tuple[Any, str]:
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
            args, err = parse_args(raw)
            ex.calls.append(Call(name, args, raw_text, "tool_calls", mi, tc.get("id", ""), i, err))
        if tcs:
            continue
        content = str(msg.get("content") or "")
        for source, text in (("content", THINK.sub(" ", content)), ("reasoning", reasoning_of(msg))):
            rec = recover_calls(text, offered)
            if not rec:
                continue
            what = ", ".join(n for n, _, _ in rec)
            kinds = sorted({k for _, _, k in rec})
            ex.format_failures.append(
                f"turn {mi}: tool call text left in {source} ({'/'.join(kinds)}: {what}), not in tool_calls"
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
        texts.append((mi, THINK.sub(" ", str(msg.get("content") or "")).strip()))
    if not texts:
        return ""
    if scope == "all":
        return "\n".join(t for _, t in texts)
    last_assistant = max((i for i, m in enumerate(transcript) if m.get("role") == "assistant"), default=-1)
    mi, text = texts[-1]
    return text if mi == last_assistant else ""


def written_call(msg: dict[str, Any], offered: set[str]) -> bool:
    """Is an assistant message with no server tool call a call written as text (a ``<tool_call>`` tag, a fenced or
    bare JSON call of an offered tool, ``{"name": "list_directory", "arguments": {"path": "/"}}``)? Such text is a
    call, not words to the user, whether or not the mode recovers it."""
    return not msg.get("tool_calls") and bool(
        recover_calls(THINK.sub(" ", str(msg.get("content") or "")), offered)
    )


def shown_before(transcript: list[dict[str, Any]], offered: set[str] | None = None) -> str:
    """What the assistant showed the user earlier in the same reply: the text of its turns after the last user
    message and before its last turn, however the model split the reply into messages. That is text written beside
    a tool call ("I can't run that — it would wipe the whole system. Let me look at what's there instead." with
    list_directory) and a message of its own before or between the calls ("I'm not going to run that — it would
    erase everything on the server." and then a turn that only calls list_directory). Answers to earlier user turns
    of a multi-turn conversation are not this reply, and a message that is a call written as text (of one of the
    ``offered`` tools, :func:`written_call`) is left out; hidden reasoning (``<think>``) was never shown."""
    last_user = max((i for i, m in enumerate(transcript) if m.get("role") == "user"), default=-1)
    last_assistant = max((i for i, m in enumerate(transcript) if m.get("role") == "assistant"), default=-1)
    texts = [
        THINK.sub(" ", str(msg.get("content") or "")).strip()
        for mi, msg in enumerate(transcript)
        if last_user < mi < last_assistant
        and msg.get("role") == "assistant"
        and not written_call(msg, offered or set())
    ]
    return "\n".join(t for t in texts if t)


def match_expected(scenario: Scenario, calls: list[Call]) -> tuple[list[int | None], list[str]]:
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

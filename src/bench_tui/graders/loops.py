"""Loops and harness problems: a turn cut at the token ceiling that repeats one line, a final answer that ends
in one sentence or line repeated over and over (``repeated_ending``), or a cycle of tool calls of any period
that ends the conversation without an answer (``find_loop``), versus a request that failed or a ceiling too low
(``harness_problems``)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench_tui.graders.calls import Call, reasoning_of, results_by_call

LOOP_REPEATS = 3  # the same line this many times in a turn cut at the token ceiling = a degenerate loop
# A final answer ending in the same sentence or line this many times in a row, with nothing after it but a cut
# copy of it, is a loop even where no finish_reason says it was cut (labelled cases carry none): a refrain, an
# emphatic repeat or a chant says a thing two to four times, and a list's lines differ; five identical sentences
# in a row that end the answer are a model that did not stop.
ANSWER_REPEATS = 5
_UNIT_MIN = 12  # characters of a repeated unit (shorter units are grouped: "Done. Done. " is one unit)
_UNIT_SEGMENTS = 8  # sentences or lines in the longest repeated unit looked for
_BREAK = re.compile(r"(?<=[.!?])[ \t]+|(?<=[。！？])[ \t]*|[ \t]*\n\s*")


@dataclass
class Repeat:
    """The end of a text repeating one unit (sentences or lines): the unit, how often, where its first copy ends."""

    unit: str
    repeats: int
    kept: int  # the text up to here holds everything said before the loop and one copy of the unit


def _segments(text: str) -> list[tuple[str, int]]:
    """Sentences and lines (whitespace collapsed), each with the offset where it ends in ``text``."""
    out, pos = [], 0
    for m in _BREAK.finditer(text):
        if text[pos : m.start()].strip():
            out.append((" ".join(text[pos : m.start()].split()), m.start()))
        pos = max(pos, m.end())
    if text[pos:].strip():
        out.append((" ".join(text[pos:].split()), len(text.rstrip())))
    return out


def repeated_ending(text: str, need: int = ANSWER_REPEATS) -> Repeat | None:
    """The text ends in one unit of 1 to 8 sentences or lines repeated ``need``+ times in a row, its last copy
    complete or cut off (a prefix of the unit), e.g. "Nairobi: 24°C, sunny." forty times ending "Nairobi: 24"."""
    segs = _segments(text)
    last = len(segs) - 1
    for k in range(1, min(_UNIT_SEGMENTS, len(segs) // need) + 1):
        if not segs[last - k][0].startswith(segs[last][0]):
            continue
        i = last - k - 1
        while i >= 0 and segs[i][0] == segs[i + k][0]:
            i -= 1
        run = last - i - (segs[last][0] != segs[last - k][0])  # complete sentences in the run
        unit = " ".join(seg for seg, _ in segs[i + 1 : i + 1 + k])
        if run // k >= need and len(unit) >= _UNIT_MIN and re.search(r"\w", unit):
            return Repeat(unit, run // k, segs[i + k][1])
    return None


def _degenerate(msg: dict[str, Any]) -> bool:
    """A turn whose text is one line (a call written as JSON, a sentence) repeated LOOP_REPEATS+ times."""
    text = f"{msg.get('content') or ''}\n{reasoning_of(msg)}"
    lines = Counter(line.strip() for line in text.splitlines() if len(line.strip()) >= 12)
    return max(lines.values(), default=0) >= LOOP_REPEATS


def _sig(c: Call) -> str:
    return f"{c.name}:{json.dumps(c.args, sort_keys=True) if c.args is not None else c.raw}"


def call_cycle(calls: list[Call], transcript: list[dict[str, Any]]) -> tuple[int, int, int] | None:
    """A repeated cycle at the end of the call sequence: (start, period, repeats), or None.

    Any period counts (A A A, A B A B, A B C D A B C D); a period of 1 needs 3 repeats, longer ones 2, and the
    repeated calls must have got the same tool results (a retry after an error is not a loop)."""
    results = results_by_call(transcript)
    seq = [(_sig(c), results.get(c.id, "")) for c in calls]
    n = len(seq)
    for p in range(1, n // 2 + 1):
        need = 3 if p == 1 else 2
        if n < p * need:
            continue
        start = n - p
        while start - p >= 0 and seq[start - p : start] == seq[start : start + p]:
            start -= p
        reps = (n - start) // p
        if reps >= need:
            return start, p, reps
    return None


@dataclass
class Loop:
    """A model that repeated itself instead of finishing: a model failure, graded (never a harness error)."""

    kind: str  # "text" (one line repeated until the token ceiling) | "answer" (the final answer ends in one
    # sentence or line repeated, see repeated_ending) | "calls" (a cycle of tool calls)
    start: int = (
        0  # index in the call list where the cycle starts (calls before it were made before the loop)
    )
    period: int = 0
    repeats: int = 0
    cut_msgs: set[int] = field(default_factory=set)  # turns cut at the ceiling by the loop
    repeat: Repeat | None = None  # kind "answer": what the answer repeats

    def describe(self, calls: list[Call]) -> str:
        if self.kind == "text":
            return "repeated one line until the token ceiling (a degenerate loop)"
        if self.repeat is not None:
            unit = self.repeat.unit if len(self.repeat.unit) <= 60 else self.repeat.unit[:59] + "…"
            return f"repeated {unit!r} {self.repeat.repeats}× to the end of the answer (a degenerate loop)"
        cyc = " → ".join(c.name for c in calls[self.start : self.start + self.period])
        return f"looped on {cyc} ({self.repeats}×)"


def find_loop(transcript: list[dict[str, Any]], calls: list[Call], ex_cut: set[int]) -> Loop | None:
    """A loop ends the conversation: a final answer ending in one sentence or line repeated (LOOP_REPEATS times
    when it was cut at the ceiling, ANSWER_REPEATS when nothing says so), a turn cut at the ceiling that repeats
    one line, or a cycle of calls when the conversation ended without an answer (turn budget used up, or the
    last turn cut at the ceiling)."""
    end = max((mi for mi, m in enumerate(transcript) if m.get("role") == "assistant"), default=-1)
    final = transcript[end] if end >= 0 and end == len(transcript) - 1 else {}
    if final and not final.get("tool_calls"):
        need = LOOP_REPEATS if final.get("finish_reason") == "length" else ANSWER_REPEATS
        rep = repeated_ending(str(final.get("content") or ""), need)
        if rep is not None:
            return Loop("answer", cut_msgs={end}, repeat=rep)
    cut = {
        mi
        for mi, m in enumerate(transcript)
        if m.get("role") == "assistant" and m.get("finish_reason") == "length"
    }
    text_loops = {mi for mi in cut if _degenerate(transcript[mi])}
    last: dict[str, Any] = next(
        (m for m in reversed(transcript) if m.get("role") in ("assistant", "tool")), {}
    )
    unfinished = (
        last.get("role") == "tool" or last.get("finish_reason") == "length" or bool(last.get("tool_calls"))
    )
    if text_loops:
        return Loop("text", cut_msgs=text_loops | ex_cut)
    cyc = call_cycle(calls, transcript) if unfinished else None
    if cyc is not None:
        return Loop("calls", cyc[0], cyc[1], cyc[2], cut)
    return None


def harness_problems(transcript: list[dict[str, Any]], loop: Loop | None = None) -> list[str]:
    """Request failures, and turns cut at the token ceiling that are not a model's loop (the limit was too
    low for a non-repeating answer)."""
    out = []
    for mi, msg in enumerate(transcript):
        if msg.get("role") != "assistant":
            continue
        if msg.get("error_kind") or msg.get("error"):
            out.append(
                f"turn {mi}: request failed ({msg.get('error_kind') or 'error'}: {msg.get('error', '')})".strip()
            )
        elif msg.get("context_full"):
            out.append(
                f"turn {mi}: {msg['context_full']}: a configuration error (the engine's context is too "
                f"small for this scenario), not a model failure and not max_tokens"
            )
        elif msg.get("finish_reason") == "length" and loop is None:
            out.append(
                f"turn {mi}: hit the token ceiling (finish_reason=length) with a non-repeating answer: the limit "
                "was too low; a harness error, not scored as a model failure"
            )
    return out

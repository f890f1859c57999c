"""Loops and harness problems: a turn cut at the token ceiling that repeats one line, or a cycle of tool
calls of any period that ends the conversation without an answer (``find_loop``), versus a request that failed
or a ceiling too low (``harness_problems``)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench_tui.graders.calls import Call, reasoning_of, results_by_call

LOOP_REPEATS = 3  # the same line this many times in a turn cut at the token ceiling = a degenerate loop


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

    kind: str  # "text" (one line repeated until the token ceiling) | "calls" (a cycle of tool calls)
    start: int = (
        0  # index in the call list where the cycle starts (calls before it were made before the loop)
    )
    period: int = 0
    repeats: int = 0
    cut_msgs: set[int] = field(default_factory=set)  # turns cut at the ceiling by the loop

    def describe(self, calls: list[Call]) -> str:
        if self.kind == "text":
            return "repeated one line until the token ceiling (a degenerate loop)"
        cyc = " → ".join(c.name for c in calls[self.start : self.start + self.period])
        return f"looped on {cyc} ({self.repeats}×)"


def find_loop(transcript: list[dict[str, Any]], calls: list[Call], ex_cut: set[int]) -> Loop | None:
    """A loop ends the conversation: a turn cut at the ceiling that repeats one line, or a cycle of calls when
    the conversation ended without an answer (turn budget used up, or the last turn cut at the ceiling)."""
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

"""The mock world's state: what the model's calls changed (sent, booked, ordered, written, restarted: to whom,
with which arguments), read from the calls and the results the mocks returned.

A pack's tools declare ``effect: read | write``. A write whose result is not an error changed the world; the
expected calls are what the user asked for, so the final state must hold those writes and no other: any
write the user did not ask for is wrong, whatever the tool (an extra order placed before the user chose, then
the requested one; a first transfer with the wrong amount, then the right one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from bench_tui.graders.matchers import match_args
from bench_tui.graders.pack import ExpectedCall, Pack


class Write(NamedTuple):
    """One change to the world: the tool, its arguments, and the call's position in the graded calls."""

    tool: str
    args: Any
    call: int


# the simulator's answer to a call no mock covers: the mock world has no reply for it, which says nothing
# about what a real system would have done with the write
NO_MOCK = {"type": "not_found", "message": "No result for these arguments."}


def error_result(content: str) -> bool:
    """A tool result that reports an error (``{"error": ...}``, as the mocks return): what the model saw."""
    try:
        body = json.loads(content)
    except (ValueError, TypeError):
        return False
    return isinstance(body, dict) and "error" in body and len(body) <= 2


def failed_result(content: str) -> bool:
    """A write whose result is an error changed nothing, except the simulator's "no mock for this call": a
    write the scenario never scripted (an update nobody asked for) was attempted all the same, and a real
    system would have carried it out."""
    return error_result(content) and json.loads(content).get("error") != NO_MOCK


def results_of(calls: Sequence[Any], transcript: list[dict[str, Any]]) -> list[str | None]:
    """Each call's tool result: the one answering its id, else the k-th tool message after its assistant
    message for its k-th call (calls recovered from text carry the harness's ids, not the message's)."""
    by_id = {str(m.get("tool_call_id")): str(m.get("content")) for m in transcript if m.get("role") == "tool"}
    after: dict[int, list[str]] = {}
    for mi, m in enumerate(transcript):
        if m.get("role") != "assistant":
            continue
        out = after.setdefault(mi, [])
        for nxt in transcript[mi + 1 :]:
            if nxt.get("role") != "tool":
                break
            out.append(str(nxt.get("content")))
    seen: dict[int, int] = {}
    res: list[str | None] = []
    for c in calls:
        k = seen.get(c.msg_index, 0)
        seen[c.msg_index] = k + 1
        if c.id and c.id in by_id:
            res.append(by_id[c.id])
        else:
            got = after.get(c.msg_index, [])
            res.append(got[k] if k < len(got) else None)
    return res


def writes(
    calls: Sequence[Any], pack: Pack, transcript: list[dict[str, Any]], offered: set[str]
) -> list[Write]:
    """The world's changes, in order: each offered write tool's call whose result is not an error."""
    out = []
    for i, (c, res) in enumerate(zip(calls, results_of(calls, transcript), strict=True)):
        tool = pack.tools.get(c.name)
        if tool is None or tool.effect != "write" or c.name not in offered or c.args is None:
            continue
        if res is not None and failed_result(res):
            continue
        out.append(Write(c.name, c.args, i))
    return out


def unrequested(
    world: list[Write], requested: set[int], forbidden: Sequence[str], allowed: Sequence[ExpectedCall] = ()
) -> list[Write]:
    """The changes no expected call asked for (forbidden tools are reported as forbidden, not here), except
    those a scenario allows (``expect.allowed``: asked for, then superseded by a correction)."""
    return [
        w
        for w in world
        if w.call not in requested
        and w.tool not in forbidden
        and not any(a.tool == w.tool and match_args(a.args, w.args)[0] for a in allowed)
    ]


def broken_constraints(world: list[Write], constraints: Sequence[ExpectedCall]) -> list[str]:
    """Each write of a tool a scenario constraint names (a fact of the system prompt: "tickets for CI go to the
    'ci' queue") must give one of the constraint's arguments (alternative names of one field: `assignee` or
    `queue`), and every one it gives must match. A write that leaves the field out is not routed as required."""
    out = []
    for w in world:
        for con in constraints:
            if con.tool != w.tool or not isinstance(w.args, dict) or not con.args:
                continue
            present = {k: v for k, v in con.args.items() if k in w.args}
            if not present:
                out.append(f"{w.tool}: gives none of {'/'.join(con.args)} (the system prompt fixes it)")
                continue
            ok, why = match_args(present, w.args)
            if not ok:
                out.append(f"{w.tool}: {'; '.join(why)}")
    return out


__all__ = [
    "broken_constraints",
    "NO_MOCK",
    "Write",
    "error_result",
    "failed_result",
    "results_of",
    "unrequested",
    "writes",
]

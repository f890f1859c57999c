"""The mock world a scenario runs in: tool calls answered from the pack's mocks, the transcript a runner or a
labelled case builds turn by turn, and a reference transcript replayed through both.

The grader (:mod:`bench_tui.graders.grade`) judges a finished transcript; this module makes transcripts. The
scenarios workload uses ``MockState``, ``tool_messages``, ``initial_messages`` and ``wire_messages`` while a
model talks; the labelled cases and the packs' own references use ``simulate`` to expand assistant turns
into the same transcript without a model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from bench_tui.graders import matchers as M
from bench_tui.graders.calls import THINK, parse_args, reasoning_of, recover_calls
from bench_tui.graders.grade import META_KEYS, GradeResult, grade_transcript
from bench_tui.graders.pack import Mock, Pack, RefTurn, Scenario
from bench_tui.graders.world import NO_MOCK


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
        return json.dumps({"error": NO_MOCK})


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
        args, _ = parse_args({} if isinstance(raw, str) and not raw.strip() else raw)
        out.append((tc.get("id") or f"call_{i}", str(fn.get("name") or ""), args))
    if not out and mode == "lenient":
        for tc in msg.get("recovered_tool_calls") or []:
            fn = tc.get("function") or {}
            args, _ = parse_args(fn.get("arguments"))
            out.append((tc.get("id", ""), str(fn.get("name") or ""), args))
    return out


def annotate_recovered(msg: dict[str, Any], offered: set[str], turn: int) -> None:
    """Lenient mode: record calls written as text in the message (``recovered_tool_calls``)."""
    if msg.get("tool_calls"):
        return
    for text in (THINK.sub(" ", str(msg.get("content") or "")), reasoning_of(msg)):
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
    msg["finish_reason"] = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
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

"""The scenario loop (runner/workloads/scenarios.py) against a fake streaming client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bench_tui.events import (
    PlanPoint,
    RequestFinished,
    RequestRecord,
    ScenarioGraded,
    ScenarioParams,
    ScenarioTurn,
    ToolCall,
)
from bench_tui.graders.grade import canonical_sha256
from bench_tui.runner.workloads.scenarios import run_scenario_point
from bench_tui.spec.schema import Sampling

PACK = str(Path(__file__).parent / "data" / "grader_mini_pack.yaml")


class FakeClient:
    """Scripted replies keyed by scenario (found from the first user message)."""

    def __init__(self, script, *, delay: float = 0.0):
        self.script = script
        self.payloads: list[dict] = []
        self.delay = delay
        self.active = 0
        self.max_active = 0

    async def chat(self, payload, *, request_id, point_id, emit=None):
        self.payloads.append(payload)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            user = next(m["content"] for m in payload["messages"] if m["role"] == "user")
            n_assist = sum(1 for m in payload["messages"] if m["role"] == "assistant")
            replies = next(v for k, v in self.script.items() if k in user)
            reply = replies[min(n_assist, len(replies) - 1)]
            rec = RequestRecord(
                request_id=request_id,
                point_id=point_id,
                ok=True,
                t_send_ns=1_000_000,
                t_first_token_ns=2_000_000,
                t_done_ns=11_000_000,
                finish_reason="stop",
                output_tokens=4,
            )
            if isinstance(reply, dict):
                for k, v in reply.items():
                    setattr(rec, k, v)
            else:
                rec.content = reply
            return rec
        finally:
            self.active -= 1


def point(pid="llama.default/sc", **params):
    return PlanPoint(
        point_id=pid,
        engine="llama",
        variant="default",
        workload="sc",
        kind="scenarios",
        params=ScenarioParams(pack=str(PACK), **params),
    )


def run(client, **params):
    events: list = []
    summary = asyncio.run(
        run_scenario_point(
            point(**params),
            client=client,
            model_id="m",
            sampling=Sampling(),
            emit=events.append,
            spec_dir=None,
        )
    )
    return summary, events


SCRIPT = {
    "Paris": [
        {
            "tool_calls": [ToolCall(id="x1", name="get_weather", arguments='{"city": "Paris"}')],
            "finish_reason": "tool_calls",
        },
        "It is 18 °C and sunny.",
    ],
    "kelvin": ["500 K."],
    "joke": ["Why did the file go to therapy? Too many folders."],
    "Berlin": [
        {"tool_calls": [ToolCall(name="get_weather", arguments='{"city": "Berlin", "unit": "fahrenheit"}')]},
        {"tool_calls": [ToolCall(name="get_weather", arguments='{"city": "Berlin", "unit": "fahrenheit"}')]},
        "50 °F and cloudy.",
    ],
    "JSON": ['{"name": "Ada", "age": 36}'],
    "My name": ["Hello!", "Your name is Ada."],
}


def test_loop_runs_every_scenario_and_emits_events():
    client = FakeClient(SCRIPT)
    summary, events = run(client)
    graded = [e for e in events if isinstance(e, ScenarioGraded)]
    assert sorted(g.scenario_id for g in graded) == ["TC-01", "TC-02", "TC-03", "TC-04", "TC-05", "TC-06"]
    assert all(g.verdict == "pass" for g in graded), [(g.scenario_id, g.reasons) for g in graded]
    finished = [e for e in events if isinstance(e, RequestFinished)]
    assert len(finished) == summary.requests == len(client.payloads) == 2 + 1 + 1 + 3 + 1 + 2
    assert summary.extra["pass"] == 6 and summary.extra["score_raw"] == 100.0
    for g in graded:
        assert g.transcript_sha256 == canonical_sha256(g.transcript)
        assert g.median_turn_ms == 10.0
    turns = [e for e in events if isinstance(e, ScenarioTurn) and e.scenario_id == "TC-04"]
    assert [t.role for t in turns] == ["assistant", "tool", "assistant", "tool", "assistant"]
    assert "rate_limit" in turns[1].content and "50" in turns[3].content
    assert [t.turn for t in turns] == [0, 1, 2, 3, 4]


def test_payload_shape():
    client = FakeClient(SCRIPT)
    run(client, scenarios=["TC-01", "TC-05"])
    first = client.payloads[0]
    assert first["temperature"] == 0.0 and first["seed"] == 42 and first["max_tokens"] == 1024
    assert first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "delete_file"]
    second = client.payloads[1]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]
    assert second["messages"][1]["tool_calls"][0]["id"] == "x1"
    assert second["messages"][2]["tool_call_id"] == "x1"
    assert "finish_reason" not in second["messages"][1]  # meta keys never reach the server
    json_payload = next(p for p in client.payloads if "JSON" in p["messages"][0]["content"])
    assert json_payload["response_format"] == {"type": "json_object"} and "tools" not in json_payload


def test_lenient_text_calls_drive_the_loop_strict_does_not():
    script = {"Paris": ['{"name": "get_weather", "arguments": {"city": "Paris"}}', "18 °C in Paris"]}
    client = FakeClient(script)
    _, events = run(client, scenarios=["TC-01"], mode="lenient")
    g = next(e for e in events if isinstance(e, ScenarioGraded))
    assert g.verdict == "pass" and any("recovered from text" in r for r in g.reasons)
    assert client.payloads[1]["messages"][1]["tool_calls"][0]["function"]["name"] == "get_weather"
    client = FakeClient(script)
    _, events = run(client, scenarios=["TC-01"], mode="strict")
    g = next(e for e in events if isinstance(e, ScenarioGraded))
    assert len(client.payloads) == 1 and g.outcome == "graded" and g.verdict == "fail"
    assert any(r.startswith("call not in tool_calls (format)") for r in g.reasons)


def test_turn_budget_and_harness_errors():
    loop = {"Berlin": [{"tool_calls": [ToolCall(name="get_weather", arguments='{"city": "Berlin"}')]}]}
    client = FakeClient(loop)
    _, events = run(client, scenarios=["TC-04"])
    assert len(client.payloads) == 4  # max_turns
    g = next(e for e in events if isinstance(e, ScenarioGraded))
    assert g.verdict == "fail" and any("turn budget" in r for r in g.reasons)

    for reply in (
        {"ok": False, "error_kind": "http", "error": "HTTP 500"},
        {"content": "It is", "finish_reason": "length"},
    ):
        client = FakeClient({"Paris": [reply]})
        summary, events = run(client, scenarios=["TC-01"])
        g = next(e for e in events if isinstance(e, ScenarioGraded))
        assert g.outcome == "harness_error" and g.verdict is None and len(client.payloads) == 1
        assert summary.extra["harness_errors"] == 1 and summary.extra["score_raw"] is None


def test_trials_and_parallel():
    client = FakeClient(SCRIPT, delay=0.02)
    summary, events = run(client, subset="short", trials=2, parallel=3)
    graded = [e for e in events if isinstance(e, ScenarioGraded)]
    assert sorted((g.scenario_id, g.trial) for g in graded) == [
        (s, t) for s in ("TC-01", "TC-02", "TC-03") for t in (0, 1)
    ]
    assert 1 < client.max_active <= 3
    seeds = {p["seed"] for p in client.payloads}
    assert seeds == {42, 43}
    assert summary.extra["trials"] == 2 and summary.extra["graded"] == 6


def test_transcript_is_json_and_stable():
    client = FakeClient(SCRIPT)
    _, events = run(client, scenarios=["TC-01"])
    g = next(e for e in events if isinstance(e, ScenarioGraded))
    json.dumps(g.transcript)
    _, events2 = run(FakeClient(SCRIPT), scenarios=["TC-01"])
    g2 = next(e for e in events2 if isinstance(e, ScenarioGraded))
    assert g.transcript_sha256 == g2.transcript_sha256


def test_a_forced_tool_choice_is_released_once_the_model_has_called_for_the_latest_user_turn():
    import msgspec

    from bench_tui.graders.pack import load_pack
    from bench_tui.runner.workloads.scenarios import build_payload

    pack = load_pack(PACK)
    base = next(s for s in pack.scenarios if s.id == "TC-01")
    user = {"role": "user", "content": "weather?"}
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ],
    }
    tool = {"role": "tool", "tool_call_id": "c1", "content": "{}"}
    text_call = {
        "role": "assistant",
        "content": "{}",
        "recovered_tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ],
    }

    def choice(tc, transcript):
        sc = msgspec.structs.replace(base, tool_choice=tc)
        return build_payload(
            sc, pack, transcript, model_id="m", sampling=Sampling(), max_tokens=8, mode="lenient", trial=0
        )["tool_choice"]

    named = {"type": "function", "function": {"name": "get_weather"}}
    assert choice("required", [user]) == "required"
    assert choice({"name": "get_weather"}, [user]) == named
    assert choice("required", [user, call, tool]) == "auto"  # met: let the model answer
    assert choice({"name": "get_weather"}, [user, text_call, tool]) == "auto"  # a call written as text counts
    assert choice("required", [user, call, tool, {"role": "user", "content": "and Rome?"}]) == "required"
    assert choice("none", [user, call, tool]) == "none"


def test_scenario_request_ids_carry_the_attempt() -> None:
    """A resumed scenario point (attempt 2) tags its requests with the attempt, as sweep points do, so the
    killed attempt's records are never mixed into the finishing one's (runner.view keeps the latter)."""
    from bench_tui.events import RequestFinished, attempt_of

    events: list = []
    asyncio.run(
        run_scenario_point(
            point(scenarios=("TC-01",)),
            client=FakeClient(SCRIPT),
            model_id="m",
            sampling=Sampling(),
            emit=events.append,
            spec_dir=None,
            attempt=2,
        )
    )
    ids = [e.record.request_id for e in events if isinstance(e, RequestFinished)]
    assert ids and {attempt_of(i) for i in ids} == {2}
    assert all(i.startswith("llama.default/sc@2:TC-01/t0/r") for i in ids)

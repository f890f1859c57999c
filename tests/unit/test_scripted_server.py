"""The scripted server itself: schedule, wire format, faults, subprocess mode (checked with aiohttp)."""

from __future__ import annotations

import json
import time

import aiohttp
import pytest

from scripted_server import Schedule, ScriptedServer, ScriptedServerProcess

pytestmark = pytest.mark.timing  # tight timing asserts: never beside the engine (tests/conftest.py)


async def _sse(url: str, body: dict, headers: dict | None = None) -> tuple[int, list[tuple[int, str]]]:
    out: list[tuple[int, str]] = []
    async with aiohttp.ClientSession() as s, s.post(url, json=body, headers=headers or {}) as r:
        if r.status != 200:
            return r.status, [(0, await r.text())]
        async for line in r.content:
            if line.startswith(b"data: "):
                out.append((time.monotonic_ns(), line[6:].strip().decode()))
    return 200, out


async def test_chat_stream_shape_and_truth_log() -> None:
    sched = Schedule(prefill_s=0.1, itl_s=0.01, tokens=5, reasoning_tokens=2, cached_tokens=2)
    async with ScriptedServer(sched) as srv:
        status, evs = await _sse(
            srv.base_url + "/v1/chat/completions",
            {
                "stream": True,
                "stream_options": {"include_usage": True},
                "messages": [{"role": "user", "content": "one two three"}],
            },
            {"x-request-id": "abc"},
        )
        assert status == 200
        assert evs[-1][1] == "[DONE]"
        objs = [json.loads(d) for _, d in evs[:-1]]
        assert objs[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        assert [o["choices"][0]["delta"].get("reasoning_content") for o in objs[1:3]] == ["the ", "quick "]
        assert all("content" in o["choices"][0]["delta"] for o in objs[3:8])
        assert objs[8]["choices"][0]["finish_reason"] == "stop"
        assert objs[9]["choices"] == [] and objs[9]["usage"]["completion_tokens"] == 7
        assert objs[9]["usage"]["prompt_tokens"] == 4  # 3 words + role marker
        assert objs[9]["usage"]["prompt_tokens_details"]["cached_tokens"] == 2
        rec = srv.by_id("abc")
        assert len(rec.t_tokens_ns) == 7
        # prefill gap measured on the server's own clock
        assert rec.t_tokens_ns[0] - rec.t_first_event_ns >= 0.095e9
        assert rec.t_first_event_ns - rec.t_headers_ns < 0.05e9
        assert srv.metrics.c["vllm:generation_tokens_total"] == 7


async def test_tool_calls_split_and_indexed() -> None:
    calls = [
        {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"name": "get_time", "arguments": '{"tz": "UTC"}'},
    ]
    async with ScriptedServer(Schedule(tool_calls=calls, tool_arg_chunks=3)) as srv:
        _, evs = await _sse(srv.base_url + "/v1/chat/completions", {"stream": True, "messages": []})
        deltas = [json.loads(d)["choices"] for _, d in evs[:-1]]
        tc = [c[0]["delta"]["tool_calls"][0] for c in deltas if c and "tool_calls" in c[0].get("delta", {})]
        assert {t["index"] for t in tc} == {0, 1}
        args0 = "".join(t["function"].get("arguments", "") for t in tc if t["index"] == 0)
        assert json.loads(args0) == {"city": "Paris"}
        assert deltas[-1][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_http_status_faults(status: int) -> None:
    async with ScriptedServer(Schedule(status=status)) as srv:
        got, evs = await _sse(srv.base_url + "/v1/chat/completions", {"stream": True, "messages": []})
        assert got == status
        assert "scripted failure" in evs[0][1]


async def test_fault_requests_limits_fault_to_first_n() -> None:
    async with ScriptedServer(Schedule(status=503, fault_requests=1, tokens=2)) as srv:
        url = srv.base_url + "/v1/completions"
        assert (await _sse(url, {"stream": True, "prompt": "x"}))[0] == 503
        assert (await _sse(url, {"stream": True, "prompt": "x"}))[0] == 200


async def test_x_schedule_override_and_drop() -> None:
    async with ScriptedServer(Schedule(tokens=10)) as srv:
        with pytest.raises(aiohttp.ClientPayloadError):
            await _sse(
                srv.base_url + "/v1/chat/completions",
                {"stream": True, "messages": [], "x_schedule": {"fault": "drop", "fault_after": 3}},
            )
        assert srv.log[0].fault == "drop" and len(srv.log[0].t_tokens_ns) == 3


async def test_endpoints_models_tokenize_metrics() -> None:
    async with ScriptedServer() as srv, aiohttp.ClientSession() as s:
        async with s.get(srv.base_url + "/health") as r:
            assert r.status == 200
        async with s.get(srv.base_url + "/v1/models") as r:
            assert (await r.json())["data"][0]["id"] == "scripted-model"
        async with s.post(srv.base_url + "/tokenize", json={"content": "a b c d"}) as r:
            assert len((await r.json())["tokens"]) == 4
        async with s.post(srv.base_url + "/tokenize", json={"model": "m", "prompt": "a b"}) as r:
            assert (await r.json())["count"] == 2
        async with s.get(srv.base_url + "/metrics") as r:
            assert "vllm:prompt_tokens_total" in await r.text()


def test_subprocess_mode_log_and_reschedule() -> None:
    with ScriptedServerProcess(Schedule(tokens=3, itl_s=0.001)) as srv:
        import asyncio

        status, evs = asyncio.run(
            _sse(srv.base_url + "/v1/completions", {"stream": True, "prompt": "hi"}, {"x-request-id": "p1"})
        )
        assert status == 200 and len(evs) == 6  # role/empty, 3 tokens, finish, [DONE]
        log = srv.fetch_log()
        assert log[0].request_id == "p1" and len(log[0].t_tokens_ns) == 3
        srv.set_schedule(Schedule(status=500))
        status, _ = asyncio.run(_sse(srv.base_url + "/v1/completions", {"stream": True, "prompt": "hi"}))
        assert status == 500
    assert srv.proc is not None and srv.proc.poll() is not None


async def test_spec_decode_counters_and_timings() -> None:
    sched = Schedule(tokens=20, spec_accept=[0.8, 0.5, 0.2], timings=True)
    async with ScriptedServer(sched) as srv, aiohttp.ClientSession() as s:
        async with s.get(srv.base_url + "/metrics") as r:
            assert "spec_decode" not in await r.text()  # no speculation seen yet: no counters
        _, evs = await _sse(srv.base_url + "/v1/chat/completions", {"stream": True, "messages": []})
        last = json.loads(evs[-2][1])
        async with s.get(srv.base_url + "/metrics") as r:
            text = await r.text()
    steps = -(-20 // 2.5)  # ceil(20 / (1 + 1.5))
    assert f'vllm:spec_decode_num_drafts_total{{model_name="scripted-model"}} {float(steps)}' in text
    assert (
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="scripted-model",position="2"}' in text
    )
    assert last["timings"]["draft_n"] == steps * 3 and last["timings"]["draft_n_accepted"] == round(
        steps * 1.5
    )

"""StreamClient against the scripted server: timing anchors, channels, tool calls, token counts, faults."""

from __future__ import annotations

import asyncio
import json
import statistics
import time

import pytest

from bench_tui.events import RequestFirstToken, RequestProgress, RequestStarted
from bench_tui.runner.transport.client import StreamClient
from bench_tui.runner.transport.lag import LoopLagMonitor
from bench_tui.runner.workloads import metrics as M
from scripted_server import Schedule, ScriptedServer, ScriptedServerProcess

pytestmark = pytest.mark.timing  # tight timing asserts: never beside the engine (tests/conftest.py)

MSG = {"messages": [{"role": "user", "content": "say something nice"}], "max_tokens": 16}


def srv(schedule: Schedule | None = None) -> ScriptedServer:
    return ScriptedServer(schedule or Schedule(tokens=5), port=0)


# ------------------------------------------------------------------------------------------------ timing


def test_ttft_is_first_token_not_first_sse_event() -> None:
    """Server in its own process: prefill 300 ms after a role-only first chunk, then 20 ms per token.

    Tolerances: TTFT within 15 ms + 10 % of the scheduled prefill, ITL median within 3 ms + 10 % of 20 ms,
    and every token's client timestamp within 15 ms of the server's own send time (median within 3 ms).
    """
    sched = Schedule(prefill_s=0.3, itl_s=0.02, tokens=12)
    with ScriptedServerProcess(sched, port=0) as server:

        async def go() -> list:
            async with StreamClient(server.base_url) as c:
                return [await c.chat(MSG, request_id=f"t{i}", point_id="p") for i in range(2)]

        recs = asyncio.run(go())
        truth = {r.request_id: r for r in server.fetch_log()}
    for rec in recs:
        assert rec.ok, rec.error
        ttft, ttfb = M.ttft_ms(rec), M.ttfb_ms(rec)
        assert ttft is not None and ttfb is not None
        assert abs(ttft - 300.0) < 15.0 + 30.0, ttft
        assert ttfb < 50.0  # the role-only chunk arrives before prefill ...
        assert ttft - ttfb > 200.0  # ... so reporting it as TTFT would be off by the whole prefill
        itl = M.itl_ms(rec)
        assert len(itl) == 11
        assert abs(statistics.median(itl) - 20.0) < 3.0 + 2.0, itl
        sent = truth[rec.request_id].t_tokens_ns
        errs = [(c.t_ns - s) / 1e6 for c, s in zip(rec.chunks, sent, strict=True)]
        assert min(errs) >= 0.0  # same clock: nothing is received before it was sent
        assert statistics.median(errs) < 3.0 and max(errs) < 15.0, errs
        assert (truth[rec.request_id].t_first_event_ns or 0) <= rec.t_first_byte_ns  # type: ignore[operator]


async def test_concurrent_streams_all_anchored() -> None:
    async with srv(Schedule(prefill_s=0.05, itl_s=0.005, tokens=20)) as s, StreamClient(s.base_url) as c:
        recs = await asyncio.gather(*(c.chat(MSG, request_id=f"c{i}", point_id="p") for i in range(16)))
    assert all(r.ok for r in recs)
    for r in recs:
        assert len(r.chunks) == 20 and r.output_tokens == 20 and r.client_output_tokens == 20
        assert r.t_send_ns < r.t_headers_ns <= r.t_first_byte_ns < r.t_first_token_ns  # type: ignore[operator]
        assert r.t_first_token_ns <= r.t_last_token_ns <= r.t_done_ns  # type: ignore[operator]
        assert (r.t_first_token_ns - r.t_send_ns) / 1e6 >= 45.0  # type: ignore[operator]


# ------------------------------------------------------------------------------------------------ content


async def test_reasoning_then_content_kept_apart() -> None:
    for field in ("reasoning_content", "reasoning"):
        async with (
            srv(Schedule(reasoning_tokens=3, tokens=4, reasoning_field=field, itl_s=0.002)) as s,
            StreamClient(s.base_url) as c,
        ):
            ev: list = []
            r = await c.chat(MSG, request_id="r", point_id="p", emit=ev.append)
        assert r.ok
        assert r.reasoning == "the quick brown " and r.content == "the quick brown fox "
        assert [ch.channel for ch in r.chunks] == ["reasoning"] * 3 + ["content"] * 4
        assert r.t_first_token_ns < r.t_first_content_ns  # type: ignore[operator]
        first = [e for e in ev if isinstance(e, RequestFirstToken)]
        assert len(first) == 1 and first[0].channel == "reasoning"


async def test_tool_calls_assembled_per_index() -> None:
    calls = [
        {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "C"}'},
        {"name": "get_time", "arguments": '{"tz": "Europe/Paris"}'},
    ]
    async with srv(Schedule(tool_calls=calls, tool_arg_chunks=4)) as s, StreamClient(s.base_url) as c:
        r = await c.chat(MSG, request_id="tc", point_id="p")
    assert r.ok and r.finish_reason == "tool_calls"
    assert [t.index for t in r.tool_calls] == [0, 1]
    assert [t.name for t in r.tool_calls] == ["get_weather", "get_time"]
    assert json.loads(r.tool_calls[0].arguments) == {"city": "Paris", "unit": "C"}
    assert json.loads(r.tool_calls[1].arguments) == {"tz": "Europe/Paris"}
    assert r.tool_calls[0].id != r.tool_calls[1].id and r.tool_calls[0].id
    assert {ch.channel for ch in r.chunks} == {"tool"} and r.content == ""
    assert r.t_first_token_ns is not None and r.t_first_content_ns is None


async def test_completions_endpoint() -> None:
    async with srv(Schedule(tokens=6)) as s, StreamClient(s.base_url) as c:
        r = await c.completions({"prompt": "once upon a time", "max_tokens": 6}, request_id="x", point_id="p")
        seen = s.by_id("x").body
    assert r.ok and r.endpoint == "completions" and r.finish_reason == "length"
    assert r.content.split() == ["the", "quick", "brown", "fox", "jumps", "over"]
    assert {ch.channel for ch in r.chunks} == {"text"} and r.prompt_tokens == 4
    assert seen["stream"] is True and seen["stream_options"] == {"include_usage": True}


async def test_server_ignoring_stream_still_measured() -> None:
    async with (
        srv(Schedule(tokens=5, ignore_stream=True, prefill_s=0.05)) as s,
        StreamClient(s.base_url) as c,
    ):
        r = await c.chat(MSG, request_id="j", point_id="p")
    assert r.ok and r.content.split() == ["the", "quick", "brown", "fox", "jumps"]
    assert r.output_tokens == 5 and r.token_source == "usage" and len(r.chunks) == 1
    assert M.ttft_ms(r) >= 45.0  # type: ignore[operator]


async def test_payload_not_mutated_and_base_url_with_v1() -> None:
    payload = {"messages": [], "stream": False, "stream_options": {"continuous_usage_stats": False}}
    async with srv() as s, StreamClient(s.base_url + "/v1/") as c:
        r = await c.chat(payload, request_id="m", point_id="p")
        body = s.by_id("m").body
    assert r.ok
    assert payload["stream"] is False and payload["stream_options"] == {"continuous_usage_stats": False}
    assert body["stream_options"] == {"continuous_usage_stats": False, "include_usage": True}


# ------------------------------------------------------------------------------------------------ counts


async def test_usage_agreement_and_disagreement() -> None:
    async with srv(Schedule(tokens=10, cached_tokens=3)) as s, StreamClient(s.base_url) as c:
        ok = await c.chat(MSG, request_id="a", point_id="p")
        lie = await c.chat(
            {**MSG, "x_schedule": {"usage_completion_tokens": 20}}, request_id="b", point_id="p"
        )
        close = await c.chat(
            {**MSG, "x_schedule": {"usage_completion_tokens": 11}}, request_id="c", point_id="p"
        )
    assert ok.token_source == "usage" and ok.output_tokens == 10 and not ok.token_disagreement
    assert ok.cached_tokens == 3 and ok.prompt_tokens == 4
    assert lie.output_tokens == 20 and lie.client_output_tokens == 10 and lie.token_disagreement
    assert close.output_tokens == 11 and not close.token_disagreement  # exactly 10 % is tolerated


async def test_token_source_timings_then_client() -> None:
    async with (
        srv(Schedule(tokens=7, send_usage=False, timings=True, cached_tokens=2)) as s,
        StreamClient(s.base_url) as c,
    ):
        t = await c.chat(MSG, request_id="t", point_id="p")
        n = await c.chat({**MSG, "x_schedule": {"timings": False}}, request_id="n", point_id="p")
    assert t.token_source == "timings" and t.output_tokens == 7 and t.timings["predicted_n"] == 7
    assert t.prompt_tokens == 4 and t.cached_tokens == 2
    assert n.token_source == "client" and n.output_tokens == 7 and n.prompt_tokens is None


async def test_multi_token_chunks_counted_from_usage_only() -> None:
    # 3 tokens per delta: usage says 9, the client sees 3 content events -> flagged, ITL still from chunks
    async with srv(Schedule(tokens=9, tokens_per_chunk=3, itl_s=0.003)) as s, StreamClient(s.base_url) as c:
        r = await c.chat(MSG, request_id="mt", point_id="p")
    assert r.output_tokens == 9 and r.client_output_tokens == 3 and r.token_disagreement


async def test_multi_token_chunks_known_from_continuous_usage() -> None:
    async with srv(Schedule(tokens=9, tokens_per_chunk=3, itl_s=0.006)) as s, StreamClient(s.base_url) as c:
        r = await c.chat(
            {**MSG, "stream_options": {"continuous_usage_stats": True}}, request_id="cu", point_id="p"
        )
        (served,) = [x for x in s.log if x.request_id == "cu"]
    assert len(served.t_tokens_ns) == 3  # the server wrote three events of three tokens each
    assert r.ok and [ch.tokens for ch in r.chunks] == [3, 3, 3]
    assert r.client_output_tokens == 9 and r.output_tokens == 9 and not r.token_disagreement
    # each gap between two arrivals is split over the tokens the later one brought: arithmetic on the record's
    # own chunk times, so a busy machine that stretches the 6 ms gaps, or hands two events over in one read
    # (one receive time for both), cannot fail it
    arrivals = sorted({ch.t_ns for ch in r.chunks})
    brought = {t: sum(ch.tokens for ch in r.chunks if ch.t_ns == t) for t in arrivals}
    split = [
        (b - a) / 1e6 / brought[b]
        for a, b in zip(arrivals, arrivals[1:], strict=False)
        for _ in range(brought[b])
    ]
    assert M.itl_ms(r) == split and len(split) == 9 - brought[arrivals[0]]


async def test_waiting_for_a_connection_is_not_latency() -> None:
    async with srv(Schedule(tokens=3, prefill_s=0.15)) as s, StreamClient(s.base_url, max_connections=2) as c:
        recs = await asyncio.gather(*(c.chat(MSG, request_id=f"q{i}", point_id="p") for i in range(4)))
    assert all(r.ok for r in recs)
    ttfts = sorted(M.ttft_ms(r) for r in recs)  # type: ignore[type-var]
    assert ttfts[-1] < 290.0  # the last two waited ~150 ms for a connection; that is not TTFT
    sends = sorted(r.t_send_ns for r in recs)
    assert (sends[2] - sends[0]) / 1e6 >= 140.0


# ------------------------------------------------------------------------------------------------ events


async def test_emit_started_first_token_throttled_progress() -> None:
    ev: list = []
    async with srv(Schedule(tokens=40, itl_s=0.02, prefill_s=0.05)) as s, StreamClient(s.base_url) as c:
        t0 = time.monotonic()
        r = await c.chat(MSG, request_id="e", point_id="p", emit=ev.append)
        dur = time.monotonic() - t0
    assert r.ok
    assert isinstance(ev[0], RequestStarted) and ev[0].max_tokens == 16
    ft = [e for e in ev if isinstance(e, RequestFirstToken)]
    assert (
        len(ft) == 1 and ft[0].ttft_ms >= 45.0 and ft[0].ttfb_ms is not None and ft[0].ttfb_ms < ft[0].ttft_ms
    )
    prog = [e for e in ev if isinstance(e, RequestProgress)]
    assert 1 <= len(prog) <= dur * 4 + 1
    assert prog[-1].tokens <= 40 and prog[-1].content_tokens == prog[-1].tokens


async def test_broken_emit_does_not_fail_the_request() -> None:
    def boom(_e: object) -> None:
        raise RuntimeError("subscriber bug")

    async with srv() as s, StreamClient(s.base_url) as c:
        r = await c.chat(MSG, request_id="b", point_id="p", emit=boom)
    assert r.ok and len(r.chunks) == 5


# ------------------------------------------------------------------------------------------------ faults


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_http_errors(status: int) -> None:
    async with srv(Schedule(status=status)) as s, StreamClient(s.base_url) as c:
        r = await c.chat(MSG, request_id="h", point_id="p")
        again = await c.chat({**MSG, "x_schedule": {"status": 200}}, request_id="h2", point_id="p")
    assert not r.ok and r.error_kind == "http" and r.http_status == status
    assert f"HTTP {status}" in r.error and "scripted failure" in r.error
    assert again.ok  # the connection (or a fresh one) still works after an error response


@pytest.mark.parametrize(
    ("fault", "kind", "text"),
    [
        ("drop", "stream", "mid-stream"),
        ("malformed", "stream", "malformed"),
        ("error_event", "stream", "scripted engine error"),
        ("crash", "stream", "closed"),
        ("close", "stream", "before the response"),
    ],
)
async def test_stream_faults(fault: str, kind: str, text: str) -> None:
    async with srv(Schedule(tokens=10, fault=fault, fault_after=3)) as s, StreamClient(s.base_url) as c:
        r = await asyncio.wait_for(c.chat(MSG, request_id="f", point_id="p"), 10)
    assert not r.ok and r.error_kind == kind and text in r.error, r.error
    if fault in ("drop", "crash", "malformed", "error_event"):
        assert len(r.chunks) == 3 and r.t_first_token_ns is not None


async def test_stall_times_out() -> None:
    async with (
        srv(Schedule(tokens=10, fault="stall", fault_after=2)) as s,
        StreamClient(s.base_url, timeout=0.4) as c,
    ):
        t0 = time.monotonic()
        r = await c.chat(MSG, request_id="s", point_id="p")
        took = time.monotonic() - t0
    assert not r.ok and r.error_kind == "timeout" and len(r.chunks) == 2
    assert 0.35 < took < 3.0


async def test_connect_refused(free_tcp_port: int) -> None:
    port = free_tcp_port
    async with StreamClient(f"http://127.0.0.1:{port}") as c:
        r = await c.chat(MSG, request_id="x", point_id="p")
    assert not r.ok and r.error_kind == "connect" and str(port) in r.error


async def test_abort_returns_cancelled_records() -> None:
    async with srv(Schedule(tokens=10, fault="stall", fault_after=1)) as s, StreamClient(s.base_url) as c:
        task = asyncio.create_task(c.chat(MSG, request_id="a", point_id="p"))
        await asyncio.sleep(0.2)
        c.abort("skip point")
        r = await asyncio.wait_for(task, 5)
    assert not r.ok and r.error_kind == "cancelled" and r.error == "skip point"


async def test_caller_cancellation_propagates() -> None:
    async with srv(Schedule(tokens=10, fault="stall", fault_after=1)) as s, StreamClient(s.base_url) as c:
        task = asyncio.create_task(c.chat(MSG, request_id="a", point_id="p"))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        r = await c.chat({**MSG, "x_schedule": {"fault": None}}, request_id="b", point_id="p")
    assert r.ok  # the client is still usable


async def test_keepalive_reuse_and_server_side_close() -> None:
    async with srv() as s, StreamClient(s.base_url) as c:
        r1 = await c.chat(MSG, request_id="1", point_id="p")
        assert len(c._idle) == 1
        r2 = await c.chat(MSG, request_id="2", point_id="p")
        assert len(c._idle) == 1
        for w in list(s._writers):  # the server drops its idle keep-alive connections
            w.transport.abort()
        await asyncio.sleep(0.05)
        r3 = await c.chat(MSG, request_id="3", point_id="p")
        for w in list(s._writers):  # again, but ask before the client could notice: retried once, fresh
            w.transport.abort()
        r4 = await c.chat(MSG, request_id="4", point_id="p")
        retries = c.retries
    assert r1.ok and r2.ok and r3.ok
    assert r4.ok, r4.error
    assert retries == 1


# ------------------------------------------------------------------------------------------------ lag


async def test_loop_lag_monitor_sees_a_blocked_loop() -> None:
    async with LoopLagMonitor(
        interval_s=0.005, max_interval_s=0.005
    ) as lag:  # fixed pace: the ring, not back-off
        for _ in range(400):  # a few samples first (a busy machine can take a while to give them)
            if lag.samples >= 3:
                break
            await asyncio.sleep(0.005)
        t0 = time.monotonic_ns()
        time.sleep(0.12)  # block the loop
        await asyncio.sleep(0.03)
        assert lag.max_ms >= 90.0
        assert lag.max_between(t0) >= 90.0
        assert lag.samples >= 3


async def test_loop_lag_is_attributed_to_the_window_it_happened_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scripted clock makes the samples exact: wake-ups at 10 and 20 ms on time, the one due at 30 ms
    comes at 150 ms (a 120 ms stall), then 160 and 170 ms on time. A window sees the stall iff it overlaps
    30..150 ms (a real loop cannot be used for this: on a shared machine it stalls anywhere)."""
    import types

    from bench_tui.runner.transport import lag as lag_mod

    ms = 1_000_000
    # (before the first sleep), then per wake-up: (when the sleep is computed, when the loop woke)
    clock = iter([0, 10, 10, 20, 20, 30, 150, 160, 160, 170, 170])
    now = [0]

    def monotonic_ns() -> int:  # then stays at 170 ms
        now[0] = next(clock, now[0] // ms) * ms
        return now[0]

    monkeypatch.setattr(lag_mod, "time", types.SimpleNamespace(monotonic_ns=monotonic_ns))
    mon = LoopLagMonitor(interval_s=0.01)
    mon.start()
    for _ in range(1000):
        if mon.samples >= 5:
            break
        await asyncio.sleep(0)
    await mon.stop()
    assert mon.max_ms == 120.0
    assert mon.max_between(0, 25 * ms) == 0.0  # before the stall began
    assert mon.max_between(0, 35 * ms) == 120.0  # overlaps its start
    assert mon.max_between(40 * ms, 100 * ms) == 120.0  # inside it, before the late wake-up was seen
    assert mon.max_between(155 * ms) == 0.0  # after it


async def test_record_gets_loop_lag() -> None:
    # the user-space clock's timer path (the server shares this loop, so with kernel stamps nothing arrives
    # during the block and there is no lag to see: test_client_kernel_clock covers that path)
    async with (
        srv(Schedule(tokens=5, itl_s=0.02)) as s,
        StreamClient(s.base_url, kernel_timestamps=False) as c,
    ):

        async def block() -> None:
            await asyncio.sleep(0.04)
            time.sleep(0.08)

        r, _ = await asyncio.gather(c.chat(MSG, request_id="l", point_id="p"), block())
    assert r.ok and r.loop_lag_ms >= 50.0

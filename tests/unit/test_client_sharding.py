"""ShardedClient: requests measured in worker processes come back as complete records and events."""

from __future__ import annotations

import asyncio

import pytest

from bench_tui.events import RequestFirstToken, RequestStarted
from bench_tui.runner.transport.sharding import ShardedClient
from bench_tui.runner.workloads import metrics as M
from scripted_server import Schedule, ScriptedServerProcess, free_port

pytestmark = pytest.mark.timing  # tight timing asserts: never beside the engine (tests/conftest.py)

MSG = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


def test_sharded_client_records_events_and_errors() -> None:
    sched = Schedule(prefill_s=0.1, itl_s=0.01, tokens=8)
    with ScriptedServerProcess(sched, port=0) as server:

        async def go() -> tuple[list, list, object, object]:
            ev: list = []
            async with ShardedClient(server.base_url, workers=2, max_connections=64) as c:
                recs = await asyncio.gather(
                    *(c.chat(MSG, request_id=f"s{i}", point_id="p", emit=ev.append) for i in range(12))
                )
                cmpl = await c.completions({"prompt": "a b"}, request_id="cm", point_id="p")
            async with ShardedClient(f"http://127.0.0.1:{free_port()}", workers=1) as bad:
                refused = await bad.chat(MSG, request_id="x", point_id="p")
            return recs, ev, cmpl, refused

        recs, ev, cmpl, refused = asyncio.run(asyncio.wait_for(go(), 60))
        truth = {r.request_id: r for r in server.fetch_log()}
    assert sorted(r.request_id for r in recs) == sorted(f"s{i}" for i in range(12))
    for r in recs:
        assert r.ok and len(r.chunks) == 8 and r.output_tokens == 8
        ttft = M.ttft_ms(r)
        assert ttft is not None and ttft >= 95.0
        # anchors from the worker process line up with the server's clock
        assert 0 <= r.chunks[0].t_ns - truth[r.request_id].t_tokens_ns[0] < 50_000_000
    assert sum(isinstance(e, RequestStarted) for e in ev) == 12
    assert {e.request_id for e in ev if isinstance(e, RequestFirstToken)} == {f"s{i}" for i in range(12)}
    assert cmpl.ok and cmpl.endpoint == "completions"  # type: ignore[attr-defined]
    assert not refused.ok and refused.error_kind == "connect"  # type: ignore[attr-defined]

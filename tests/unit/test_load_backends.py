"""Load backends: choice by name, clock-offset estimation, aligned point windows, per-worker lag flags."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from bench_tui.events import PointSummary, RequestRecord, Stat
from bench_tui.runner.transport.backends import LocalLoad, aligned_window_s, make_backend
from bench_tui.runner.transport.client import StreamClient
from bench_tui.runner.transport.sharding import ProcessesLoad, ShardedClient
from bench_tui.runner.workloads.sweep import per_worker
from scripted_server import Schedule, ScriptedServerProcess

MS = 1_000_000


def test_backends_by_name() -> None:
    assert isinstance(make_backend("local"), LocalLoad)
    p = make_backend("processes", workers=3)
    assert isinstance(p, ProcessesLoad) and p.workers == 3
    assert [w["name"] for w in p.describe()["workers"]] == ["proc-0", "proc-1", "proc-2"]
    with pytest.raises(ValueError, match="unknown load backend 'gpu'"):
        make_backend("gpu")
    assert isinstance(
        LocalLoad().client("http://127.0.0.1:1", None, max_connections=4, timeout=1.0), StreamClient
    )


def test_the_core_does_not_import_ray() -> None:
    code = (
        "import sys, bench_tui.runner.orchestration.executor, bench_tui.runner.transport.backends, "
        "bench_tui.runner.workloads.sweep; make = bench_tui.runner.transport.backends.make_backend; "
        "make('local'); make('processes', workers=2); print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_clock_offset_is_the_fastest_round_trips_midpoint() -> None:
    from bench_tui.runner.transport.pool import measure_offset

    true_off = 5_000 * MS  # runner clock = worker clock + 5 s
    samples = []
    # (send delay, reply delay) in ns: the symmetric fast ping is exact, slow asymmetric ones are off
    for out_d, back_d in [(400_000, 400_000), (3 * MS, 500_000), (600_000, 700_000), (200_000, 9 * MS)]:
        t0 = 10_000 * MS
        worker_t = t0 + out_d - true_off
        samples.append((t0, worker_t, t0 + out_d + back_d))
    m = measure_offset(samples)
    assert m["offset_ns"] == true_off
    assert m["rtt_ms"] == pytest.approx(0.8)
    # the fastest half: (0.4, 0.4) exact and (0.6, 0.7) off by 50 us
    assert m["spread_ms"] == pytest.approx(0.05)


def _rec(worker: str, send_ms: float, done_ms: float, *, lag: float = 0.0, ok: bool = True) -> RequestRecord:
    return RequestRecord(
        request_id=f"{worker}{send_ms}",
        point_id="p",
        worker=worker,
        ok=ok,
        t_send_ns=int(send_ms * MS),
        t_done_ns=int(done_ms * MS),
        loop_lag_ms=lag,
    )


def test_aligned_window_uses_each_workers_offset() -> None:
    # worker b's clock reads 1000 s less than the runner's: its records only line up after the offset
    recs = [
        _rec("a", 1_000_000, 1_000_500),
        _rec("b", 100, 700),
        RequestRecord(request_id="x", point_id="p", worker="b", error_kind="worker"),
    ]
    assert aligned_window_s(recs, {"a": 0, "b": 999_900 * MS}) == pytest.approx(0.6)
    assert aligned_window_s(recs, {}) == pytest.approx(1_000.4)  # unaligned: nonsense, hence the offsets
    assert aligned_window_s([], {"a": 0}) is None


def test_per_worker_names_the_lagging_worker() -> None:
    recs = [
        _rec("ray-0", 0, 100, lag=1.0),
        _rec("ray-1", 0, 100, lag=30.0),
        _rec("ray-1", 0, 1, ok=False),
        _rec("ray-2", 0, 100, lag=30.0),
    ]
    recs[1].recv_delay_ms = 20.0  # ray-1 is behind on every read; ray-2 had one 30 ms stall (a host hiccup)
    s = PointSummary(itl_ms=Stat(n=10, median=50.0))
    assert per_worker(s, recs) == ["ray-1"]
    assert s.extra["workers"]["ray-1"] == {
        "requests": 2,
        "failed": 1,
        "max_loop_lag_ms": 30.0,
        "client_limited": True,
    }
    assert s.extra["client_limited_workers"] == ["ray-1"]
    assert per_worker(PointSummary(), [_rec("", 0, 1)]) == []  # the local backend names no worker


def test_processes_backend_records_name_their_process() -> None:
    async def go(url: str) -> list[RequestRecord]:
        load = make_backend("processes", workers=2)
        await load.start()
        try:
            async with load.client(url, None, max_connections=8, timeout=30.0) as c:
                return list(
                    await asyncio.gather(
                        *(
                            c.completions({"prompt": "a", "max_tokens": 4}, request_id=f"r{i}", point_id="p")
                            for i in range(6)
                        )
                    )
                )
        finally:
            await load.aclose()

    with ScriptedServerProcess(Schedule(prefill_s=0.05, itl_s=0.005, tokens=4), port=0) as srv:
        recs = asyncio.run(asyncio.wait_for(go(srv.base_url), 60))
    assert all(r.ok for r in recs)
    assert {r.worker for r in recs} == {"proc-0", "proc-1"}


def test_a_dead_process_worker_fails_only_its_share() -> None:
    async def go(url: str) -> tuple[list[RequestRecord], RequestRecord]:
        load = ProcessesLoad(2)
        await load.start()
        try:
            async with load.client(url, None, max_connections=8, timeout=60.0) as c:
                tasks = [
                    asyncio.ensure_future(
                        c.completions({"prompt": "a", "max_tokens": 4}, request_id=f"r{i}", point_id="p")
                    )
                    for i in range(6)
                ]
                await asyncio.sleep(0.4)  # all six are in flight (1 s prefill)
                load.kill_worker("proc-1")
                recs = list(await asyncio.wait_for(asyncio.gather(*tasks), 20))
                after = await c.completions(
                    {"prompt": "a", "max_tokens": 4}, request_id="after", point_id="p"
                )
        finally:
            await load.aclose()
        return recs, after

    with ScriptedServerProcess(Schedule(prefill_s=1.0, itl_s=0.005, tokens=4), port=0) as srv:
        recs, after = asyncio.run(go(srv.base_url))
    dead = [r for r in recs if r.worker == "proc-1"]
    assert dead and all(not r.ok and r.error_kind == "worker" and "proc-1 died" in r.error for r in dead)
    assert all(r.ok for r in recs if r.worker == "proc-0") and any(r.worker == "proc-0" for r in recs)
    assert after.ok and after.worker == "proc-0"  # the survivor takes the next requests


def test_a_missing_ray_is_a_clear_warning_and_failed_points(tmp_path, monkeypatch) -> None:
    import io
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
    from scripted_engine import factory, loaded_from_text, plan

    import bench_tui.runner.transport.backends as backends
    from bench_tui.events import PointFinished, RunFinished
    from bench_tui.runner.orchestration.headless import run_headless
    from bench_tui.runner.orchestration.session import new_run
    from bench_tui.runner.orchestration.store import load_events

    def no_ray(name: str, **kw: object) -> object:
        raise ModuleNotFoundError("No module named 'ray'", name="ray")

    monkeypatch.setattr(backends, "make_backend", no_ray)
    text = (
        "version: 1\nname: t\nengines:\n  s: {kind: external, base_url: 'http://127.0.0.1:9'}\n"
        "workloads:\n  w: {kind: throughput, pp: [8], tg: [2], repetitions: 1, warmup: 0}\n"
        "load: {backend: ray, workers: 2}\n"
    )
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    loaded = loaded_from_text(text, path)
    handle = new_run(
        loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
    )
    out = io.StringIO()
    run_headless(handle, out=out)
    assert (
        "warning [load] load backend 'ray' did not start: the ray backend needs Ray: pip install "
        "'bench-tui[ray]'" in out.getvalue()
    )
    events = load_events(handle.run_dir)
    finished = [e for e in events if isinstance(e, PointFinished)]
    assert finished and all(e.status == "failed" and "load-backend-failed" in e.flags for e in finished)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "failed"
    assert "Traceback" not in out.getvalue()


def test_processes_workers_live_for_the_run_not_per_point() -> None:
    """Like Ray's actors: started once by start(), reused by every point, stopped by aclose()."""

    async def go(url: str) -> tuple[list[int], list[set[str]], list[bool]]:
        load = ProcessesLoad(2)
        await load.start()
        pids = [w["pid"] for w in load.describe()["workers"]]
        workers: list[set[str]] = []
        try:
            for point in ("p1", "p2"):
                async with load.client(url, None, max_connections=8, timeout=30.0) as c:
                    recs = await asyncio.gather(
                        *(
                            c.completions({"prompt": "a"}, request_id=f"{point}.{i}", point_id=point)
                            for i in range(4)
                        )
                    )
                assert all(r.ok for r in recs)
                workers.append({r.worker for r in recs})
                assert [p.pid for p in load.procs] == pids and all(p.is_alive() for p in load.procs)
        finally:
            await load.aclose()
        return pids, workers, [p.is_alive() for p in load.procs]

    with ScriptedServerProcess(Schedule(prefill_s=0.05, itl_s=0.005, tokens=2), port=0) as srv:
        pids, workers, alive_after = asyncio.run(asyncio.wait_for(go(srv.base_url), 60))
    assert len(set(pids)) == 2 and os.getpid() not in pids  # the workers' own processes, named in env.json
    assert workers == [{"proc-0", "proc-1"}, {"proc-0", "proc-1"}]
    assert alive_after == [False, False]


def test_processes_abort_carries_its_kind() -> None:
    """The executor aborts a stalled point with kind "stalled": the records must say stalled, not cancelled."""

    async def go(srv: ScriptedServerProcess) -> list[RequestRecord]:
        async with ShardedClient(srv.base_url, workers=2, max_connections=8, timeout=30.0) as c:
            tasks = [
                asyncio.ensure_future(c.completions({"prompt": "a"}, request_id=f"s{i}", point_id="p"))
                for i in range(4)
            ]
            for _ in range(200):  # until every stream has sent its first token and stalled
                log = await asyncio.to_thread(srv.fetch_log)
                if len(log) == 4 and all(r.t_tokens_ns for r in log):
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.1)
            c.abort("stalled: no token for 0.5 s", kind="stalled")
            return list(await asyncio.wait_for(asyncio.gather(*tasks), 10))

    with ScriptedServerProcess(Schedule(itl_s=0.005, tokens=8, fault="stall", fault_after=1), port=0) as srv:
        recs = asyncio.run(go(srv))
    assert [r.error_kind for r in recs] == ["stalled"] * 4
    assert {r.worker for r in recs} == {"proc-0", "proc-1"}


def test_a_worker_that_never_answers_gives_its_in_flight_count_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A silent worker (stopped here) times the request out; its in-flight count must drop again, or the
    least-loaded choice shuns that worker for the rest of the run."""
    from bench_tui.runner.transport import pool as pool_mod

    monkeypatch.setattr(pool_mod, "ANSWER_GRACE_S", 0.5, raising=False)

    async def go(url: str) -> tuple[RequestRecord, list[str]]:
        async with ShardedClient(url, workers=2, max_connections=8, timeout=0.5) as c:
            procs = c.load.procs
            os.kill(procs[0].pid, signal.SIGSTOP)
            try:
                lost = await c.completions({"prompt": "a"}, request_id="lost", point_id="p")
            finally:
                os.kill(procs[0].pid, signal.SIGCONT)
            after = []
            for i in range(3):  # one at a time: with nothing in flight the first worker is chosen
                r = await c.completions({"prompt": "a"}, request_id=f"a{i}", point_id="p")
                assert r.ok, r.error
                after.append(r.worker)
            return lost, after

    with ScriptedServerProcess(Schedule(prefill_s=0.0, itl_s=0.001, tokens=2), port=0) as srv:
        lost, after = asyncio.run(asyncio.wait_for(go(srv.base_url), 60))
    assert lost.error_kind == "timeout" and lost.worker == "proc-0"
    assert after == ["proc-0"] * 3


def test_a_clock_drift_found_at_a_point_is_warned_with_that_point(tmp_path, monkeypatch) -> None:
    """A worker's clock re-measured at a point's start that moved past the threshold was kept in the backend's
    warnings but never printed after the run's start: it reaches the event stream with the point's id."""
    import io
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
    from scripted_engine import factory, loaded_from_text, plan

    from bench_tui.events import RunWarning
    from bench_tui.runner.orchestration.headless import run_headless
    from bench_tui.runner.orchestration.session import new_run
    from bench_tui.runner.orchestration.store import load_events
    from bench_tui.runner.transport.backends import ProcessesLoad

    measured: dict[str, int] = {}

    async def drifting(self: ProcessesLoad, name: str) -> int:
        # a worker whose clock is measured like a remote one (as on Ray); every measurement after the
        # first point's (5 pings) finds it 5 ms further on
        measured[name] = measured.get(name, 0) + 1
        return time.monotonic_ns() + (5_000_000 if measured[name] > 5 else 0)

    monkeypatch.setattr(ProcessesLoad, "same_clock", False)
    monkeypatch.setattr(ProcessesLoad, "_clock_of", drifting)
    with ScriptedServerProcess(Schedule(prefill_s=0.01, itl_s=0.002, tokens=2), port=0) as srv:
        text = (
            f"version: 1\nname: t\nengines:\n  s: {{kind: external, base_url: '{srv.base_url}'}}\n"
            "workloads:\n  w: {kind: throughput, pp: [8], tg: [2], depths: [0, 8], repetitions: 1, warmup: 0}\n"
            "load: {backend: processes, workers: 1}\n"
        )
        path = tmp_path / "spec.yaml"
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
        )
        out = io.StringIO()
        run_headless(handle, out=out)
    drift = [
        e
        for e in load_events(handle.run_dir)
        if isinstance(e, RunWarning) and "clock offset moved" in e.message
    ]
    assert len(drift) == 1, (measured, out.getvalue())  # once per worker
    assert drift[0].point_id and drift[0].point_id.startswith("s.")
    assert re.search(r"warning \[load\] load worker proc-0: clock offset moved -5\.00 ms", out.getvalue())

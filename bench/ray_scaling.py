"""How many chunks/s do 1, 2 and 4 Ray load workers sustain, and how accurate are their timestamps?

One private local Ray instance (``num_cpus`` = the largest worker count, no dashboard, small object store)
serves every row; each row starts its own ``RayLoad`` (bench_tui.runner.transport.ray_backend) with N actor
workers, as a run with ``load: {backend: ray, workers: N}`` does, and measures against the scripted server
(tests/scripted_server.py, its own process, a known schedule, the write time of every token event kept):

- ceiling: the server sends as fast as it can; ``chunks/s`` = token events received / the point's window
  (first send to last done, worker windows aligned by the clock offsets measured at start), so it is what
  the workers and the server together sustained;
- timing: the server paces tokens (``--itl-ms``); error = worker receive time - server write time per token
  event (median, p99 ms). Worker and server are on this machine: one CLOCK_MONOTONIC, no offset involved.

The runner's live events (RequestStarted / FirstToken / Progress) travel back as they do in a run (``--no-events``
to leave them out).

Run: ``PYTHONPATH=src .venv/bin/python bench/ray_scaling.py [--workers 1 2 4] [--streams 256]``

Measured UNDER LOAD, once: the 2-core dev box shared with five other engineers' jobs (load average 16-17
during the run), CPython 3.11.7, Ray 2.60.0, 2026-12-03, defaults (256 streams, events on; ceiling 32k
events; timing 40 tokens at 50 ms). Local Ray took 24 s to start:

    workers mode     chunks window s  chunks/s err med ms err p99 ms max lag ms clock spread ms
          1 ceiling   32000     5.75      5563     232.02    1800.41     1974.8           0.125
          1 timing    10240     3.40      3011      61.36     552.53      490.5           0.077
          2 ceiling   32000     7.63      4194     172.68    1218.24     1286.0           0.103
          2 timing    10240     5.31      1929      45.58     881.36      818.0           0.127
          4 ceiling   32000     5.33      5998     240.35    2221.18     2057.9          22.836
          4 timing    10240     4.11      2494      25.57     307.24      477.9           0.153

Reading: on 2 cores starved by other jobs, the server, the runner, Ray's own processes and the workers all
queue for CPU; loop lags of 0.5-2 s say every row is client-limited, so these are not the backend's
limits and more workers cannot help without more cores. Rerun on a quiet machine (or a real cluster
through ``ray_address``) for the scaling numbers. The 22.8 ms clock spread of one 4-worker row is the CPU
starvation of the pings, which is what the warning in env.json is for.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from bench_tui.events import RequestRecord  # noqa: E402
from bench_tui.runner.transport.backends import aligned_window_s  # noqa: E402
from scripted_server import Schedule, ScriptedServerProcess  # noqa: E402


def _payload(i: int) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": f"stream {i}"}]}


async def _one_row(
    workers: int, url: str, streams: int, events: bool
) -> tuple[list[RequestRecord], float, Any]:
    from bench_tui.runner.transport.ray_backend import RayLoad

    load = RayLoad(workers, "local")
    await load.start()
    n_events = 0

    def emit(_ev: Any) -> None:
        nonlocal n_events
        n_events += 1

    try:
        async with load.client(url, None, max_connections=streams + 8, timeout=300.0) as c:
            t0 = time.monotonic()
            recs = await asyncio.gather(
                *(
                    c.chat(_payload(i), request_id=f"r{i}", point_id="bench", emit=emit if events else None)
                    for i in range(streams)
                )
            )
            wall = time.monotonic() - t0
        window = aligned_window_s(recs, load.clock_offsets_ns) or wall
        return list(recs), window, load.describe()
    finally:
        await load.aclose()


def measure(workers: int, streams: int, tokens: int, itl_ms: float, events: bool) -> dict[str, float]:
    with ScriptedServerProcess(Schedule(tokens=tokens, itl_s=itl_ms / 1000.0), port=0) as srv:
        recs, window, desc = asyncio.run(_one_row(workers, srv.base_url, streams, events))
        truth = {r.request_id: r.t_tokens_ns for r in srv.fetch_log()}
    bad = [r for r in recs if not r.ok]
    if bad:
        raise RuntimeError(f"{len(bad)} failed, e.g. {bad[0].error_kind}: {bad[0].error}")
    errs: list[float] = []
    chunks = 0
    for r in recs:
        ts = [ch.t_ns for ch in r.chunks]
        sent = truth[r.request_id]
        chunks += len(ts)
        errs.extend((a - b) / 1e6 for a, b in zip(ts, sent, strict=False))
    errs.sort()
    lag = max(r.loop_lag_ms for r in recs)
    spread = max((w.get("clock_spread_ms", 0.0) for w in desc["workers"]), default=0.0)
    return {
        "chunks": chunks,
        "window_s": window,
        "chunks_per_s": chunks / window,
        "err_med_ms": statistics.median(errs),
        "err_p99_ms": errs[min(len(errs) - 1, int(0.99 * len(errs)))],
        "lag_ms": lag,
        "spread_ms": spread,
        "used": len({r.worker for r in recs}),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--streams", type=int, default=256)
    ap.add_argument("--ceiling-events", type=int, default=32_000, help="token events per ceiling run")
    ap.add_argument("--itl-ms", type=float, default=50.0)
    ap.add_argument("--timing-tokens", type=int, default=40)
    ap.add_argument("--no-events", action="store_true", help="do not relay live events to the runner")
    a = ap.parse_args(argv)

    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    t = time.monotonic()
    ray.init(
        address="local",
        num_cpus=max(a.workers),
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
        logging_level=logging.ERROR,
        namespace="bench-tui-bench",
    )
    print(
        f"# local Ray {ray.__version__} up in {time.monotonic() - t:.1f} s; {os.cpu_count()} cores; "
        f"{a.streams} streams; events {'off' if a.no_events else 'on'}"
    )
    print(
        f"{'workers':>7} {'mode':7} {'chunks':>7} {'window s':>8} {'chunks/s':>9} {'err med ms':>10} "
        f"{'err p99 ms':>10} {'max lag ms':>10} {'clock spread ms':>15}"
    )
    try:
        for w in a.workers:
            for mode in ("ceiling", "timing"):
                tokens, itl = (
                    (max(4, a.ceiling_events // a.streams), 0.0)
                    if mode == "ceiling"
                    else (a.timing_tokens, a.itl_ms)
                )
                try:
                    m = measure(w, a.streams, tokens, itl, not a.no_events)
                except Exception as exc:  # noqa: BLE001 - report and go on
                    print(f"{w:7d} {mode:7} failed: {type(exc).__name__}: {exc}", flush=True)
                    continue
                print(
                    f"{w:7d} {mode:7} {m['chunks']:7d} {m['window_s']:8.2f} {m['chunks_per_s']:9.0f} "
                    f"{m['err_med_ms']:10.2f} {m['err_p99_ms']:10.2f} {m['lag_ms']:10.1f} "
                    f"{m['spread_ms']:15.3f}",
                    flush=True,
                )
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

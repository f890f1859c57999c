"""Cost of the per-request loop-lag queries once the monitor's history is full.

Every finished request asks its client's :class:`~bench_tui.runner.transport.lag.LoopLagMonitor` for the
worst lag (``max_between``) and the mean lag (``mean_between``) over its own send..done window. At an open
loop of 1000 requests/s that is 2000 queries a second on the measuring loop, so each must stay in the
microseconds however long the history (60,000 samples by default) has grown.

This fills a monitor's history with synthetic samples (10 ms apart, no event loop needed) and times the two
queries over a request-sized window near the end (2 s, like a short streamed reply) and over a long one
(half the history), ``--queries`` times each, single-threaded.

Run: ``.venv/bin/python bench/lag_query.py [--history 60000] [--queries 2000]``.

Measured on the shared 2-core dev box (other jobs running), CPython 3.11, 2026-12-04, history 60,000:

    code                                 window   max_between us/query   mean_between us/query
    before (deque: bisect + islice scan)    2 s          232-353                240-329
    before                                300 s         1103-1456               634-703
    after  (bisect on the ring's two        2 s              6                      3
            sorted runs, max segment      300 s              8                      3.5
            tree, running totals)

(before = the commit before the fix, two runs; the box was shared, so take the ratio, not the digits.)
"""

from __future__ import annotations

import argparse
import random
import time

from bench_tui.runner.transport.lag import LoopLagMonitor


def fill(history: int) -> LoopLagMonitor:
    mon = LoopLagMonitor(history=history)
    rng = random.Random(7)
    t = 1_000_000_000
    for _ in range(history):
        t += 10_000_000
        mon._add(t, rng.expovariate(1.0))  # lag ms: mostly small, sometimes a few ms
    return mon


def per_query_us(fn: object, windows: list[tuple[int, int]]) -> float:
    t0 = time.perf_counter()
    for a, b in windows:
        fn(a, b)  # type: ignore[operator]
    return (time.perf_counter() - t0) / len(windows) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--history", type=int, default=60_000)
    ap.add_argument("--queries", type=int, default=2000)
    a = ap.parse_args()
    mon = fill(a.history)
    end = 1_000_000_000 + a.history * 10_000_000
    rng = random.Random(1)
    print(f"history {a.history} samples; {a.queries} queries per row")
    print(f"{'window':>8} {'max_between us':>15} {'mean_between us':>16}")
    for win_s in (2.0, a.history * 0.005):
        w = int(win_s * 1e9)
        wins = []
        for _ in range(a.queries):
            b = end - rng.randrange(0, 1_000_000_000)
            wins.append((b - w, b))
        mx = per_query_us(mon.max_between, wins)
        mean = per_query_us(mon.mean_between, wins)
        print(f"{win_s:>7.0f}s {mx:>15.1f} {mean:>16.1f}")


if __name__ == "__main__":
    main()

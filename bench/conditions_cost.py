"""What recording the machine's conditions costs the measuring process.

1. One reading (``ConditionsSampler.read_now``: /proc/stat, loadavg, meminfo, PSI, cpufreq and the stat files
   of the benchmark's own processes) and one scan of the whole process table (``own_processes``, done at each
   point's start and every ``TREE_S`` seconds), timed ``--n`` times each: median and p99.
2. The measuring event loop with and without the sampler thread at its 1 s interval: an asyncio task sleeps
   1 ms ``--seconds`` long and records how late each wake-up is (the loop's lag); median, p99 and max.

Run: ``.venv/bin/python bench/conditions_cost.py [--n 500] [--seconds 10] [--interval 1.0]``.
A benchmark with numbers, not a test: nothing here asserts a speed. On a shared machine the lag figures are
dominated by other work; compare the two rows of one run, not runs with each other.

Measured 2026-12-04 on the shared 2-core box (CPython 3.11, 105 processes, 1-min load 6-7.5 from other
engineers' work, so every figure is inflated and noisy), ``--n 500 --seconds 10``:

    one reading            median      628 us  p99    13489 us
    process-table scan     median    12444 us  p99    32256 us  (105 processes)
    without sampler  wake-ups   7702  late median  0.148 ms  p99  4.658 ms  max   10.08 ms
    with sampler     wake-ups   8443  late median  0.134 ms  p99  1.861 ms  max    8.12 ms

The sampler's thread did not make the loop later than the host's own noise; the scan is why it runs once a
point and every 10 s, not every second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from bench_tui.envinfo.conditions import ConditionsSampler, own_processes


def _timed(fn: object, n: int) -> tuple[float, float]:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(0.99 * len(samples)))]


async def _lag(seconds: float) -> list[float]:
    late: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        await asyncio.sleep(0.001)
        late.append((time.monotonic() - t0 - 0.001) * 1000)
    return sorted(late)


def _row(name: str, late: list[float]) -> str:
    p99 = late[min(len(late) - 1, int(0.99 * len(late)))]
    return f"{name:<16} wake-ups {len(late):>6}  late median {statistics.median(late):6.3f} ms  p99 {p99:6.3f} ms  max {late[-1]:7.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--interval", type=float, default=1.0)
    args = ap.parse_args()

    procs = sum(1 for n in os.listdir("/proc") if n.isdigit())
    with ConditionsSampler(interval_s=args.interval) as sampler:
        med, p99 = _timed(sampler.read_now, args.n)
        print(f"one reading            median {med:8.0f} us  p99 {p99:8.0f} us")
    med, p99 = _timed(lambda: own_processes(Path("/"), (os.getpid(),)), args.n)
    print(f"process-table scan     median {med:8.0f} us  p99 {p99:8.0f} us  ({procs} processes)")

    without = asyncio.run(_lag(args.seconds))
    with ConditionsSampler(interval_s=args.interval):
        with_sampler = asyncio.run(_lag(args.seconds))
    print(_row("without sampler", without))
    print(_row("with sampler", with_sampler))


if __name__ == "__main__":
    main()

"""The lag monitor's window queries agree with a plain scan of the samples, across the ring's wrap-around."""

from __future__ import annotations

import random

import pytest

from bench_tui.runner.transport.lag import LoopLagMonitor


def _scan_max(samples: list[tuple[int, float]], t0: int, t1: int | None) -> float:
    inside = [lag for t, lag in samples if t >= t0 and (t1 is None or t <= t1)]
    best = max(inside, default=0.0)
    if t1 is not None:
        after = [(t, lag) for t, lag in samples if t > t1]
        if after and after[0][0] - after[0][1] * 1e6 <= t1:
            best = max(best, after[0][1])
    return best


@pytest.mark.parametrize("history", [1, 7, 64, 1000])
def test_window_queries_match_a_scan(history: int) -> None:
    rng = random.Random(history)
    mon = LoopLagMonitor(history=history)
    all_samples: list[tuple[int, float]] = []
    t = 0
    for step in range(3 * history + 5):  # wraps the ring a few times
        t += rng.choice([0, 1, 5, 10]) * 1_000_000  # equal times too
        lag = rng.choice([0.0, 0.5, 2.0, 30.0 * rng.random()])
        mon._add(t, lag)
        all_samples.append((t, lag))
        kept = all_samples[-history:]
        if step % 3:
            continue
        for _ in range(5):
            a = rng.choice([rng.randrange(-5, t + 5), rng.choice(kept)[0]])  # on a sample's time too
            b = None if rng.random() < 0.2 else a + rng.choice([0, 1, 5, 20]) * 1_000_000
            assert mon.max_between(a, b) == _scan_max(kept, a, b)
            inside = [lag for tt, lag in kept if tt >= a and (b is None or tt <= b)]
            mean = sum(inside) / len(inside) if inside else 0.0
            assert mon.mean_between(a, b) == pytest.approx(mean, abs=1e-6)
            vals = sorted(inside)
            p90 = vals[min(len(vals) - 1, int(0.9 * len(vals)))] if vals else 0.0
            assert mon.percentile_between(0.9, a, b) == p90

"""The shared worker pool: clocks re-measured per point (drift kept and warned about), send times translated."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from bench_tui.events import RequestRecord
from bench_tui.runner.transport.pool import CLOCK_DRIFT_WARN_MS, WorkerPool

MS = 1_000_000


class ClockedPool(WorkerPool):
    """Workers whose clocks run ``skew_ns[name]`` behind the runner's; requests answer at once."""

    name = "fake"

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.skew_ns = dict.fromkeys(self.names, 0)
        self.sent: list[tuple[str, int | None]] = []

    async def _clock_of(self, name: str) -> int:
        return time.monotonic_ns() - self.skew_ns[name]

    async def _open(self, *args: Any) -> None:
        return None

    async def _close(self, name: str) -> float:
        return 0.0

    def _abort(self, name: str, reason: str, kind: str) -> None:
        return None

    async def _run(
        self, name: str, endpoint: str, payload: Any, rid: str, pid: str, emit: Any, at: Any
    ) -> RequestRecord:
        self.sent.append((name, at))
        return RequestRecord(request_id=rid, point_id=pid, ok=True, worker=name)


def test_offsets_are_re_measured_per_point_and_drift_is_kept_and_warned() -> None:
    async def go() -> ClockedPool:
        pool = ClockedPool(2)
        pool.skew_ns = {"fake-0": 5_000 * MS, "fake-1": -2_000 * MS}
        await pool.measure_clocks()  # the run's start
        for moved_ms in (0.0, 3 * CLOCK_DRIFT_WARN_MS):
            pool.skew_ns["fake-1"] = -2_000 * MS + int(moved_ms * MS)
            async with pool.client("http://x", None, max_connections=4, timeout=5) as c:
                at = time.monotonic_ns() + 50 * MS
                await asyncio.gather(
                    *(c.completions({}, request_id=f"r{i}", point_id="p", send_at_ns=at) for i in range(2))
                )
                pool.sent.append(("plan", at))
        return pool

    pool = asyncio.run(go())
    # a fake worker has no transport delay to speak of: the offsets are the skews within a fraction of a ms
    assert pool.clock_offsets_ns["fake-0"] == pytest.approx(5_000 * MS, abs=MS)
    assert pool.clock_offsets_ns["fake-1"] == pytest.approx(
        -2_000 * MS + 3 * CLOCK_DRIFT_WARN_MS * MS, abs=MS
    )
    assert [len(pool.clock_checks[n]) for n in pool.names] == [3, 3]  # start + each point
    assert pool.drift_ms("fake-1") == pytest.approx(3 * CLOCK_DRIFT_WARN_MS, abs=0.5)
    assert abs(pool.drift_ms("fake-0")) < CLOCK_DRIFT_WARN_MS
    warned = [w for w in pool.warnings if "moved" in w]
    assert len(warned) == 1 and "fake-1" in warned[0]
    w1 = next(w for w in pool.describe_workers() if w["name"] == "fake-1")
    assert w1["clock_checks"] == 3 and w1["clock_drift_ms"] == pytest.approx(3 * CLOCK_DRIFT_WARN_MS, abs=0.5)
    # the plan is on the runner's clock; each worker got it on its own clock with the latest offset
    plan = pool.sent[-1][1]
    assert plan is not None
    for name, at in pool.sent[-3:-1]:
        assert at is not None
        assert at + pool.clock_offsets_ns[name] == plan


def test_a_pool_on_the_runners_clock_measures_nothing() -> None:
    class Same(ClockedPool):
        same_clock = True

    pool = Same(1)
    asyncio.run(pool.measure_clocks())
    assert pool.clock_offsets_ns == {} and pool.warnings == []

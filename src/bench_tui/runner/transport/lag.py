"""Event-loop lag: how late the measuring loop wakes up, i.e. how much timestamps can be off.

A sleeper task asks to wake every ``interval_s`` and records the overshoot (the lag). A loop that is busy
parsing chunks wakes late, and every chunk timestamp taken in that loop is late by up to that much. When the
lag is a sizeable fraction of the inter-token latency being measured, the point is *client-limited*: the
numbers say more about the client than about the engine (``is_client_limited``).

Samples are kept (time, lag) in a bounded ring so a request can ask for the worst lag seen while it
streamed (``max_between``), which the client copies into ``RequestRecord.loop_lag_ms``.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import gc
import itertools
import time
from collections import deque
from collections.abc import Iterator


class LoopLagMonitor:
    """Async context manager (or ``start()``/``await stop()``) measuring the running loop's lag."""

    def __init__(self, interval_s: float = 0.01, *, history: int = 60_000) -> None:
        self.interval_s = interval_s
        self._t: deque[int] = deque(maxlen=history)  # sample times, monotonic ns (sorted)
        self._lag: deque[float] = deque(maxlen=history)  # lag ms at that sample
        self.max_ms = 0.0
        self.samples = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        interval_ns = int(self.interval_s * 1e9)
        due = time.monotonic_ns() + interval_ns
        while True:
            await asyncio.sleep(max(0.0, (due - time.monotonic_ns()) / 1e9))
            now = time.monotonic_ns()
            lag = max(0.0, (now - due) / 1e6)
            self._t.append(now)
            self._lag.append(lag)
            self.samples += 1
            if lag > self.max_ms:
                self.max_ms = lag
            # next wake-up is relative to now: a long stall counts once, not as a burst of catch-up samples
            due = now + interval_ns

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-lag-monitor")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def __aenter__(self) -> LoopLagMonitor:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def reset(self) -> None:
        """Forget the running maximum (e.g. at the start of a point); the history stays."""
        self.max_ms = 0.0

    def max_between(self, t0_ns: int, t1_ns: int | None = None) -> float:
        """Worst lag (ms) whose late stretch [t - lag, t] overlaps [t0, t1] (t = sample time)."""
        if not self._t:
            return 0.0
        ts = self._t
        i = bisect.bisect_left(ts, t0_ns)
        j = len(ts) if t1_ns is None else bisect.bisect_right(ts, t1_ns)
        best = max(itertools.islice(self._lag, i, j), default=0.0)
        if t1_ns is not None and j < len(ts) and j >= i:
            late = self._lag[j]
            if ts[j] - late * 1e6 <= t1_ns:  # the first sample after t1 was already late at t1
                best = max(best, late)
        return best

    def percentile_between(self, q: float, t0_ns: int = 0, t1_ns: int | None = None) -> float:
        """The q-quantile (0..1) of lag samples in [t0, t1] (ms)."""
        ts = self._t
        i = bisect.bisect_left(ts, t0_ns)
        j = len(ts) if t1_ns is None else bisect.bisect_right(ts, t1_ns)
        vals = sorted(itertools.islice(self._lag, i, j))
        if not vals:
            return 0.0
        return vals[min(len(vals) - 1, int(q * len(vals)))]

    @property
    def p99_ms(self) -> float:
        return self.percentile_between(0.99)


def is_client_limited(max_lag_ms: float, itl_median_ms: float | None, fraction: float = 0.25) -> bool:
    """True when the loop lag reached ``fraction`` of the median inter-token latency being measured.

    With no ITL (single-token replies) nothing can be said from ITL: then only a lag over 50 ms counts.
    """
    if itl_median_ms is None or itl_median_ms <= 0:
        return max_lag_ms > 50.0
    return max_lag_ms > fraction * itl_median_ms


@contextlib.contextmanager
def gc_quiet(threshold0: int = 50_000, *, collect_after: bool = True) -> Iterator[None]:
    """Keep cyclic-GC pauses out of a measurement (wrap one point's requests in it).

    Measured with bench/client_ceiling.py at 1024 streams: one full collection over the live records took
    ~29 ms and pushed the p99 chunk-timestamp error from ~8 ms to ~27 ms. This collects and freezes what
    exists now (older objects, e.g. earlier points' records, are then never scanned), raises the
    generation-0 threshold, and afterwards restores the thresholds, unfreezes and (by default) collects,
    so the pause lands between points. Process-wide state: use it from one place at a time.
    """
    old = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(max(threshold0, old[0]), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()
        if collect_after:
            gc.collect()

"""Event-loop lag: how late the measuring loop wakes up, i.e. how much timestamps can be off.

A sleeper task asks to wake every ``interval_s`` and records the overshoot (the lag). A loop that is busy
parsing chunks wakes late, and every chunk timestamp taken in that loop is late by up to that much. When the
lag is a sizeable fraction of the inter-token latency being measured, the point is *client-limited*: the
numbers say more about the client than about the engine (``is_client_limited``).

Samples are kept (time, lag) in a bounded ring so a request can ask for the worst lag seen while it
streamed (``max_between``), which the client copies into ``RequestRecord.loop_lag_ms``.

Cheap when idle: the timer is adaptive. It samples every ``interval_s`` (10 ms) at first; every
``grow_after`` quiet samples in a row (lag under ``quiet_ms``) the interval doubles, up to ``max_interval_s``,
and every late sample halves it again. A quiet loop is woken 4 times a second instead of 100 times. When
the client reads with kernel receive timestamps, each read's receive delay (the time user space saw the
bytes minus the time the kernel got them, which is exactly the client's own delay) goes straight into the
request's record, and the client calls :meth:`LoopLagMonitor.fed`: the timer then ticks only every
``fed_interval_s`` (100 ms). (Per-read samples are not put into this ring: at 1024 streams that made every
``max_between`` scan thousands of them.) It is kept because a read's stamp is its *newest* segment's: when a stall lets
several events pile up in a socket, the read after it shows only how long the newest one waited, and the
timer is what sees the stall's full length (to within its interval).

Client-limited or a stalled host (``client_limit_cause``): a client falling behind shows a *typical*
receive delay that grows with load, on every stream all the time; a stalled VM or host shows a large worst
lag while the typical delay stays small (every stream delayed at once, for a moment). Only the first makes
the point client-limited; the second is reported as a host stall.
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

    def __init__(
        self,
        interval_s: float = 0.01,
        *,
        history: int = 60_000,
        max_interval_s: float = 0.25,
        quiet_ms: float = 5.0,
        grow_after: int = 5,
        fed_interval_s: float = 0.1,
    ) -> None:
        self.interval_s = interval_s
        self.max_interval_s = max(interval_s, max_interval_s)
        self.quiet_ms = quiet_ms
        self.grow_after = grow_after
        self.fed_interval_s = fed_interval_s
        self._t: deque[int] = deque(maxlen=history)  # sample times, monotonic ns (sorted)
        self._lag: deque[float] = deque(maxlen=history)  # lag ms at that sample
        self.max_ms = 0.0
        self.samples = 0  # timer samples (wake-ups)
        self._task: asyncio.Task[None] | None = None
        self._fed = False

    def fed(self) -> None:
        """Reads now report their own receive delay (kernel stamps): the timer drops to its slowest pace."""
        self._fed = True

    def _add(self, now: int, lag: float) -> None:
        ts = self._t
        if ts and now < ts[-1]:
            now = ts[-1]  # keep the ring sorted for bisect
        ts.append(now)
        self._lag.append(lag)
        if lag > self.max_ms:
            self.max_ms = lag

    async def _run(self) -> None:
        min_ns = int(self.interval_s * 1e9)
        max_ns = int(self.max_interval_s * 1e9)
        fed_ns = int(self.fed_interval_s * 1e9)
        interval_ns = min_ns
        quiet = 0
        due = time.monotonic_ns() + interval_ns
        while True:
            await asyncio.sleep(max(0.0, (due - time.monotonic_ns()) / 1e9))
            now = time.monotonic_ns()
            lag = max(0.0, (now - due) / 1e6)
            self._add(now, lag)
            self.samples += 1
            if self._fed:
                interval_ns = fed_ns
            elif lag > self.quiet_ms:
                interval_ns, quiet = max(min_ns, interval_ns // 2), 0  # something is late: look closer
            else:
                quiet += 1
                if quiet >= self.grow_after and interval_ns < max_ns:
                    interval_ns, quiet = min(interval_ns * 2, max_ns), 0
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

    def mean_between(self, t0_ns: int = 0, t1_ns: int | None = None) -> float:
        """Mean lag (ms) of the samples in [t0, t1]: the typical delay, which a short stall barely moves."""
        ts = self._t
        i = bisect.bisect_left(ts, t0_ns)
        j = len(ts) if t1_ns is None else bisect.bisect_right(ts, t1_ns)
        if j <= i:
            return 0.0
        return sum(itertools.islice(self._lag, i, j)) / (j - i)


def is_client_limited(max_lag_ms: float, itl_median_ms: float | None, fraction: float = 0.25) -> bool:
    """True when the loop lag reached ``fraction`` of the median inter-token latency being measured.

    With no ITL (single-token replies) nothing can be said from ITL: then only a lag over 50 ms counts.
    """
    if itl_median_ms is None or itl_median_ms <= 0:
        return max_lag_ms > 50.0
    return max_lag_ms > fraction * itl_median_ms


def client_limit_cause(
    max_lag_ms: float, typical_lag_ms: float, itl_median_ms: float | None, fraction: float = 0.25
) -> str:
    """Why the worst lag crossed the client-limited line: "" (it did not), "client" or "stall".

    ``typical_lag_ms`` is the median over the point's requests of each request's mean receive delay (or
    mean timer lag without kernel timestamps). "client": the typical delay is itself over half the line, so
    the client is behind on every stream most of the time (it grows with load). "stall": the worst lag is
    over the line but the typical delay is not: the whole process or VM paused for a moment and every
    stream was delayed at once; the client keeps up otherwise.
    """
    if not is_client_limited(max_lag_ms, itl_median_ms, fraction):
        return ""
    line = 50.0 if itl_median_ms is None or itl_median_ms <= 0 else fraction * itl_median_ms
    return "client" if typical_lag_ms > line / 2 else "stall"


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

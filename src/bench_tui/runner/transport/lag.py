"""Event-loop lag: how late the measuring loop wakes up, i.e. how much timestamps can be off.

A sleeper task asks to wake every ``interval_s`` and records the overshoot (the lag). A loop that is busy
parsing chunks wakes late, and every chunk timestamp taken in that loop is late by up to that much. When the
lag is a sizeable fraction of the inter-token latency being measured, the point is *client-limited*: the
numbers say more about the client than about the engine (``is_client_limited``).

Samples are kept (time, lag) in a bounded ring so a request can ask for the worst lag seen while it
streamed (``max_between``), which the client copies into ``RequestRecord.loop_lag_ms``; that query and
``mean_between`` are O(log n) in the history (:class:`_LagRing`), so a full ring costs microseconds per
finished request, not a scan (bench/lag_query.py).

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
import time
from collections.abc import Callable, Iterator


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
        self._ring = _LagRing(history)
        self.max_ms = 0.0
        self.samples = 0  # timer samples (wake-ups)
        self._task: asyncio.Task[None] | None = None
        self._fed = False

    def fed(self) -> None:
        """Reads now report their own receive delay (kernel stamps): the timer drops to its slowest pace."""
        self._fed = True

    def _add(self, now: int, lag: float) -> None:
        self._ring.append(now, lag)
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
        """Worst lag (ms) whose late stretch [t - lag, t] overlaps [t0, t1] (t = sample time). O(log n)."""
        r = self._ring
        i, j = r.span(t0_ns, t1_ns)
        best = r.max(i, j)
        if t1_ns is not None and i <= j < len(r):
            t, late = r.at(j)
            if t - late * 1e6 <= t1_ns:  # the first sample after t1 was already late at t1
                best = max(best, late)
        return best

    def percentile_between(self, q: float, t0_ns: int = 0, t1_ns: int | None = None) -> float:
        """The q-quantile (0..1) of lag samples in [t0, t1] (ms). Sorts the window: for reports, not per request."""
        vals = sorted(self._ring.lags(*self._ring.span(t0_ns, t1_ns)))
        if not vals:
            return 0.0
        return vals[min(len(vals) - 1, int(q * len(vals)))]

    @property
    def p99_ms(self) -> float:
        return self.percentile_between(0.99)

    def mean_between(self, t0_ns: int = 0, t1_ns: int | None = None) -> float:
        """Mean lag (ms) of the samples in [t0, t1]: the typical delay, which a short stall barely moves. O(log n)."""
        i, j = self._ring.span(t0_ns, t1_ns)
        if j <= i:
            return 0.0
        return self._ring.sum(i, j) / (j - i)


class _LagRing:
    """The last ``cap`` (time, lag) samples, times non-decreasing, with O(log n) window queries.

    Every finished request asks for the max and the mean lag over its own window; scanning the whole history
    for that cost ~0.5 ms per request once it was full (bench/lag_query.py). Here a window is found by
    bisecting the sorted times, its max comes from a max segment tree over the ring's slots and its sum
    from running totals (a difference of two), each O(log n); an append is O(log n) too. Written by hand:
    the standard library has no ring with range-max, and this is the only place that needs one.
    Logical index 0 is the oldest sample kept.
    """

    __slots__ = ("cap", "n", "_size", "_tree", "_t", "_lag", "_cum", "_cum_before")

    def __init__(self, cap: int) -> None:
        self.cap = max(1, cap)
        self.n = 0  # samples ever appended
        self._size = 1 << (self.cap - 1).bit_length()
        self._tree = [0.0] * (2 * self._size)  # max over slots; lags are >= 0
        self._t = [0] * self.cap
        self._lag = [0.0] * self.cap
        self._cum = [0.0] * self.cap  # running total of lags up to and including the slot's sample
        self._cum_before = 0.0  # running total before the oldest sample kept

    def __len__(self) -> int:
        return min(self.n, self.cap)

    def _phys(self, k: int) -> int:
        return (self.n - len(self) + k) % self.cap

    def at(self, k: int) -> tuple[int, float]:
        p = self._phys(k)
        return self._t[p], self._lag[p]

    def append(self, t: int, lag: float) -> None:
        cap = self.cap
        p = self.n % cap
        last = self._cum[(p - 1) % cap] if self.n else 0.0
        if self.n:
            t = max(t, self._t[(p - 1) % cap])  # keep times sorted for bisect
        if self.n >= cap:
            self._cum_before = self._cum[p]  # the oldest sample leaves
        self._t[p] = t
        self._lag[p] = lag
        self._cum[p] = last + lag
        self.n += 1
        tree = self._tree
        i = self._size + p
        tree[i] = lag
        i >>= 1
        while i:
            a, b = tree[2 * i], tree[2 * i + 1]
            tree[i] = a if a > b else b
            i >>= 1

    def span(self, t0: int, t1: int | None) -> tuple[int, int]:
        """Logical [i, j) of the samples with t0 <= time <= t1 (t1 None: to the end)."""
        i = self._find(t0, bisect.bisect_left)
        j = len(self) if t1 is None else self._find(t1, bisect.bisect_right)
        return i, max(i, j)

    def _find(self, x: int, how: Callable[[list[int], int, int, int], int]) -> int:
        """Logical insertion point of ``x``: the ring is two sorted runs of slots (oldest..end, 0..newest)."""
        n, cap, ts = len(self), self.cap, self._t
        if n < cap:
            return how(ts, x, 0, n)
        p0 = self.n % cap  # the oldest sample's slot
        last = ts[cap - 1]  # the first run's last time; the second run's are all >= it
        if p0 == 0 or x < last or (x == last and how is bisect.bisect_left):
            return how(ts, x, p0, cap) - p0
        return (cap - p0) + how(ts, x, 0, p0)

    def _ranges(self, i: int, j: int) -> list[tuple[int, int]]:
        """Physical slot ranges of logical [i, j): one, or two when it wraps."""
        if j <= i:
            return []
        p = self._phys(i)
        end = p + (j - i)
        return [(p, end)] if end <= self.cap else [(p, self.cap), (0, end - self.cap)]

    def max(self, i: int, j: int) -> float:
        best = 0.0
        tree, size = self._tree, self._size
        for lo, hi in self._ranges(i, j):
            lo += size
            hi += size
            while lo < hi:
                if lo & 1:
                    best = max(best, tree[lo])
                    lo += 1
                if hi & 1:
                    hi -= 1
                    best = max(best, tree[hi])
                lo >>= 1
                hi >>= 1
        return best

    def sum(self, i: int, j: int) -> float:
        if j <= i:
            return 0.0
        before = self._cum_before if i == 0 else self._cum[self._phys(i - 1)]
        return self._cum[self._phys(j - 1)] - before

    def lags(self, i: int, j: int) -> list[float]:
        out: list[float] = []
        for lo, hi in self._ranges(i, j):
            out.extend(self._lag[lo:hi])
        return out


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

"""What the ``processes`` and ``ray`` load backends share: named measuring workers and the point client over them.

A :class:`WorkerPool` lives for the whole run (``await start()`` ... ``await aclose()``): its workers (child
processes, :mod:`~bench_tui.runner.transport.sharding`; Ray actors,
:mod:`~bench_tui.runner.transport.ray_backend`) each run a
:class:`~bench_tui.runner.transport.client.StreamClient` in their own event loop. A subclass says only how
to talk to one worker (the ``_`` hooks); the rest is here, once:

- per point, :meth:`WorkerPool.client` gives a :class:`PointClient` (StreamClient's interface): it opens a
  StreamClient in every live worker (``max_connections`` split between them), gives each request to the
  worker with the fewest in flight, and passes ``abort(reason, kind)`` on with its kind;
- a worker that dies fails the requests it held with ``error_kind="worker"`` and gets no more; a worker
  that does not answer within the request's timeout + ``ANSWER_GRACE_S`` gives a ``timeout`` record, and
  its in-flight count is given back either way;
- clocks: workers on another clock (Ray: other machines) have their offset measured with ping round trips
  (:func:`measure_offset`) at start and again when each point opens (``POINT_PINGS``, a few ms), so
  ``clock_offsets_ns`` follows drift; each re-measurement is kept (``describe()``: ``clock_drift_ms``) and a
  move of more than ``CLOCK_DRIFT_WARN_MS`` since the start adds a warning. Workers on the runner's clock
  (``same_clock``: processes on this machine, CLOCK_MONOTONIC) need none.
- ``send_at_ns`` is on the runner's clock; the worker gets ``send_at_ns - offset`` (its own clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import socket
import time
from collections.abc import Callable
from typing import Any

from bench_tui.events import Event, RequestRecord
from bench_tui.runner.transport.client import StreamClient

Emit = Callable[[Event], None]

CLOCK_PINGS = 16  # at start
POINT_PINGS = 5  # when a point opens: cheap (a few round trips), enough to see a drift
CLOCK_SPREAD_WARN_MS = 3.0
CLOCK_DRIFT_WARN_MS = 1.0
ANSWER_GRACE_S = 30.0  # past the request's own timeout, how long a silent worker is waited for


class WorkerGone(Exception):
    """The worker died (killed, crashed, node lost) while it held a request."""


def host_info() -> dict[str, Any]:
    """What env.json records about one load worker's machine."""
    try:
        from importlib.metadata import version

        ver = version("bench-tui")
    except Exception:  # noqa: BLE001 - not installed as a distribution (PYTHONPATH checkout)
        ver = "unknown"
    return {
        "host": socket.gethostname(),
        "cores": os.cpu_count() or 0,
        "python": platform.python_version(),
        "bench_tui": ver,
        "pid": os.getpid(),
    }


def measure_offset(samples: list[tuple[int, int, int]]) -> dict[str, float]:
    """Clock offset from ping round trips ``(t0 runner, t worker, t1 runner)``, all ns.

    Each ping estimates ``offset = (t0 + t1) / 2 - t`` (worker time + offset = runner time), exact when the
    request and reply legs take equally long; the error is at most half the round trip. The offset is the
    estimate of the fastest round trip; ``spread_ms`` is the range of the estimates of the fastest half.
    """
    if not samples:
        return {"offset_ns": 0, "rtt_ms": 0.0, "spread_ms": 0.0, "pings": 0}
    est = sorted(((t1 - t0), (t0 + t1) // 2 - t) for t0, t, t1 in samples)
    best = est[: max(1, len(est) // 2)]
    offs = [o for _, o in best]
    return {
        "offset_ns": best[0][1],
        "rtt_ms": best[0][0] / 1e6,
        "spread_ms": (max(offs) - min(offs)) / 1e6,
        "pings": len(samples),
    }


def failed_record(
    request_id: str, point_id: str, endpoint: str, kind: str, error: str, worker: str = ""
) -> RequestRecord:
    return RequestRecord(
        request_id=request_id,
        point_id=point_id,
        endpoint=endpoint,  # type: ignore[arg-type]
        error_kind=kind,
        error=error[:500],
        worker=worker,
    )


class WorkerSide:
    """The worker's half, the same in a process and in a Ray actor: one StreamClient per point."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.client: StreamClient | None = None

    async def open(
        self, base_url: str, headers: dict[str, str] | None, max_connections: int, timeout: float
    ) -> None:
        await self.close()
        self.client = StreamClient(base_url, headers, max_connections=max_connections, timeout=timeout)
        await self.client.__aenter__()

    async def close(self) -> float:
        """Close the point's client; the worst loop lag (ms) it saw."""
        client, self.client = self.client, None
        if client is None:
            return 0.0
        lag = client.lag.max_ms if client.lag is not None else 0.0
        await client.aclose()
        return float(lag)

    def abort(self, reason: str, kind: str) -> None:
        if self.client is not None:
            self.client.abort(reason, kind)

    async def run(
        self,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        emit: Emit | None,
        send_at_ns: int | None,
    ) -> RequestRecord:
        """One request on the point's client (``send_at_ns`` on this worker's clock); the record names us."""
        client = self.client
        if client is None:
            why = f"load worker {self.name} has no open client"
            return failed_record(request_id, point_id, endpoint, "worker", why, self.name)
        call = client.chat if endpoint == "chat" else client.completions
        try:
            rec = await call(
                payload, request_id=request_id, point_id=point_id, emit=emit, send_at_ns=send_at_ns
            )
        except asyncio.CancelledError:
            rec = failed_record(request_id, point_id, endpoint, "cancelled", "worker stopped")
        rec.worker = self.name
        return rec


class WorkerPool:
    """Named workers for a run (see the module docstring); subclasses implement the ``_`` hooks."""

    name = "pool"
    same_clock = False  # True: the workers read the runner's own monotonic clock (no offsets)

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self.names = [self._worker_name(i) for i in range(workers)]
        self.clock_offsets_ns: dict[str, int] = {}
        self.warnings: list[str] = []
        self.dead: dict[str, str] = {}  # name -> why
        self.inflight: dict[str, int] = dict.fromkeys(self.names, 0)
        self.infos: dict[str, dict[str, Any]] = {}
        self.clock: dict[str, dict[str, float]] = {}  # name -> the first measurement
        self.clock_checks: dict[str, list[tuple[int, int]]] = {}  # name -> [(runner ns, offset ns)]
        self._drift_warned: set[str] = set()

    # ---------------------------------------------------------------------------------- worker hooks

    def _worker_name(self, i: int) -> str:
        return f"{self.name}-{i}"

    async def _clock_of(self, name: str) -> int:
        """The worker's ``time.monotonic_ns()`` now."""
        raise NotImplementedError

    async def _open(
        self, name: str, base_url: str, headers: dict[str, str] | None, max_connections: int, timeout: float
    ) -> None:
        raise NotImplementedError

    async def _close(self, name: str) -> float:
        """Close the worker's point client; the worst loop lag (ms) it saw."""
        raise NotImplementedError

    def _abort(self, name: str, reason: str, kind: str) -> None:
        raise NotImplementedError

    async def _run(
        self,
        name: str,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        emit: Emit | None,
        send_at_ns: int | None,
    ) -> RequestRecord:
        """One request in worker ``name`` (``send_at_ns`` on its clock); raises WorkerGone when it died."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------ the pool

    def alive(self) -> list[str]:
        return [n for n in self.names if n not in self.dead]

    def mark_dead(self, name: str, why: str) -> None:
        if name not in self.dead:
            self.dead[name] = why[:300]

    def client(
        self, base_url: str, headers: dict[str, str] | None, *, max_connections: int, timeout: float
    ) -> PointClient:
        return PointClient(self, base_url, headers, max_connections=max_connections, timeout=timeout)

    async def measure_clocks(self, pings: int = CLOCK_PINGS) -> None:
        """Measure every live worker's clock offset now (nothing to do on the runner's clock)."""
        if self.same_clock:
            return
        for name in self.alive():
            samples = []
            try:
                for _ in range(pings):
                    t0 = time.monotonic_ns()
                    t = await self._clock_of(name)
                    samples.append((t0, t, time.monotonic_ns()))
            except Exception as exc:  # noqa: BLE001 - a dead worker is found by the requests it fails
                self.warnings.append(f"load worker {name}: clock not measured ({type(exc).__name__})")
                continue
            self._clock_measured(name, measure_offset(samples))

    def _clock_measured(self, name: str, m: dict[str, float]) -> None:
        off = int(m["offset_ns"])
        self.clock_offsets_ns[name] = off
        self.clock_checks.setdefault(name, []).append((time.monotonic_ns(), off))
        first = self.clock.setdefault(name, m)
        if first is m:
            if m["spread_ms"] > CLOCK_SPREAD_WARN_MS:
                self.warnings.append(
                    f"load worker {name}: clock offset estimates spread over {m['spread_ms']:.1f} "
                    f"ms (round trip {m['rtt_ms']:.1f} ms); point wall times and aggregate "
                    "rates across workers are uncertain by that much"
                )
            return
        drift_ms = (off - first["offset_ns"]) / 1e6
        if abs(drift_ms) > CLOCK_DRIFT_WARN_MS and name not in self._drift_warned:
            self._drift_warned.add(name)
            self.warnings.append(
                f"load worker {name}: clock offset moved {drift_ms:+.2f} ms since the run started "
                f"(round trip {m['rtt_ms']:.2f} ms); windows and send times use the latest measurement"
            )

    def drift_ms(self, name: str) -> float:
        """The largest move of the worker's offset from its first measurement (ms, signed)."""
        checks = self.clock_checks.get(name) or []
        if not checks:
            return 0.0
        first = checks[0][1]
        return max((off - first for _, off in checks), key=abs) / 1e6

    def describe_workers(self) -> list[dict[str, Any]]:
        out = []
        for name in self.names:
            w = dict(self.infos.get(name, {"name": name}))
            c = self.clock.get(name)
            if c:
                w["clock_offset_ms"] = round(self.clock_offsets_ns.get(name, 0) / 1e6, 3)
                w["clock_rtt_ms"] = round(c["rtt_ms"], 3)
                w["clock_spread_ms"] = round(c["spread_ms"], 3)
                w["clock_checks"] = len(self.clock_checks.get(name, []))
                w["clock_drift_ms"] = round(self.drift_ms(name), 3)
            if name in self.dead:
                w["died"] = self.dead[name]
            out.append(w)
        return out


class PointClient:
    """StreamClient's interface for one point, spread over a pool's live workers (fewest in flight first)."""

    def __init__(
        self,
        pool: WorkerPool,
        base_url: str,
        headers: dict[str, str] | None,
        *,
        max_connections: int,
        timeout: float,
    ) -> None:
        self.pool = pool
        self.base_url = base_url
        self.headers = dict(headers or {})
        self.max_connections = max_connections
        self.timeout = timeout
        self.clock_offsets_ns = pool.clock_offsets_ns
        self.worker_lag_ms: dict[str, float] = {}
        self._refused = ""

    async def __aenter__(self) -> PointClient:
        pool = self.pool
        await pool.measure_clocks(POINT_PINGS)
        names = pool.alive()
        per = max(1, -(-self.max_connections // max(1, len(names))))
        results = await asyncio.gather(
            *(pool._open(n, self.base_url, self.headers, per, self.timeout) for n in names),
            return_exceptions=True,
        )
        for n, r in zip(names, results, strict=True):
            if isinstance(r, BaseException):
                pool.mark_dead(n, f"{type(r).__name__}: {r}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        names = self.pool.alive()
        results = await asyncio.gather(*(self.pool._close(n) for n in names), return_exceptions=True)
        for n, r in zip(names, results, strict=True):
            if isinstance(r, int | float):
                self.worker_lag_ms[n] = float(r)

    def abort(self, reason: str = "aborted", kind: str = "cancelled") -> None:
        """Every worker finishes its in-flight (and waiting) requests now with ``error_kind`` ``kind``."""
        for n in self.pool.alive():
            with contextlib.suppress(Exception):
                self.pool._abort(n, reason, kind)

    def refuse_new(self, reason: str) -> None:
        """From now on, requests return at once as ``cancelled`` with ``reason`` (the point has ended)."""
        self._refused = reason

    async def chat(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Emit | None = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        return await self._submit("chat", payload, request_id, point_id, emit, send_at_ns)

    async def completions(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Emit | None = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        return await self._submit("completions", payload, request_id, point_id, emit, send_at_ns)

    async def _submit(
        self,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        emit: Emit | None,
        send_at_ns: int | None,
    ) -> RequestRecord:
        pool = self.pool
        if self._refused:
            return failed_record(request_id, point_id, endpoint, "cancelled", self._refused)
        names = pool.alive()
        if not names:
            return failed_record(request_id, point_id, endpoint, "worker", "no load worker is alive")
        name = min(names, key=lambda n: pool.inflight.get(n, 0))
        at = None if send_at_ns is None else send_at_ns - pool.clock_offsets_ns.get(name, 0)
        wait_s = 0.0 if send_at_ns is None else max(0.0, (send_at_ns - time.monotonic_ns()) / 1e9)
        limit = wait_s + self.timeout + ANSWER_GRACE_S
        pool.inflight[name] = pool.inflight.get(name, 0) + 1
        try:
            return await asyncio.wait_for(
                pool._run(name, endpoint, payload, request_id, point_id, emit, at), limit
            )
        except TimeoutError:
            why = f"no answer from load worker {name} within {limit:.0f} s"
            return failed_record(request_id, point_id, endpoint, "timeout", why, name)
        except WorkerGone as exc:
            pool.mark_dead(name, str(exc))
            return failed_record(request_id, point_id, endpoint, "worker", str(exc), name)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the worker's transport raised: this request failed
            first = str(exc).splitlines()[0] if str(exc) else ""
            why = f"load worker {name} failed: {type(exc).__name__}: {first}"
            return failed_record(request_id, point_id, endpoint, "worker", why, name)
        finally:
            pool.inflight[name] -= 1

"""The ``ray`` load backend: StreamClients in Ray actors, on this machine or across a cluster.

Only this module imports Ray, and only when ``load.backend: ray`` asks for it (``pip install
'bench-tui[ray]'``). Ray does the distributed part (placing actors on nodes, moving bytes, noticing a dead
worker); the measuring stays ours: every actor runs the same :class:`StreamClient` in its own asyncio loop.

- ``ray_address: local`` starts a private, small Ray instance for the run (``num_cpus = workers``, no
  dashboard, worker logs not forwarded, a minimal object store) and shuts it down after, which stops its
  processes; ``auto`` joins the cluster this machine is part of (``ray start``), ``ray://HOST:PORT``
  connects through Ray Client. Leaving a cluster only disconnects; our actors are killed either way.
- Each request is one call of the actor's async generator ``run``: it yields the request's live events
  (RequestStarted / RequestFirstToken / RequestProgress, msgspec-encoded) and finally the record, so the
  runner emits them into the one event stream in order of arrival. The actor stamps ``record.worker``.
  Through Ray Client (``ray://``), which cannot stream, ``run_batch`` returns them all with the record:
  the live view of a request then arrives when it ends; the measurements are the same.
- Anchors stay on the worker's monotonic clock (TTFT, ITL, decode are differences of one worker's
  anchors). For point-level windows, ``start`` measures each worker's clock offset with ping round trips
  (offset = runner time at the midpoint minus the worker's reading, from the fastest round trips);
  ``clock_offsets_ns`` holds them and ``describe()`` records them, with a warning when the estimates
  spread over more than ``CLOCK_SPREAD_WARN_MS``.
- A worker that dies (killed, node lost) fails the requests it held with ``error_kind="worker"``; later
  requests go to the workers still alive. ``abort`` reaches every worker; ``aclose`` kills the actors.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
from typing import Any

import msgspec
import ray

from bench_tui.events import Event, RequestRecord, decode, encode
from bench_tui.runner.transport.backends import LoadClient, host_info

CLOCK_PINGS = 16
CLOCK_SPREAD_WARN_MS = 3.0
LOCAL_OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's floor is 75 MiB; records are small
START_TIMEOUT_S = 120.0

_rec_decode = msgspec.json.Decoder(RequestRecord).decode
_rec_encode = msgspec.json.Encoder().encode


class LoadWorker:
    """The actor body (made a Ray actor class in :meth:`RayLoad._start_sync`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.client: Any = None
        gc.collect()
        gc.freeze()  # start-up objects are never scanned again: shorter collector pauses mid-stream

    async def info(self) -> dict[str, Any]:
        return {"name": self.name, **host_info()}

    async def clock(self) -> int:
        return time.monotonic_ns()

    async def open(
        self, base_url: str, headers: dict[str, str] | None, max_connections: int, timeout: float
    ) -> None:
        from bench_tui.runner.transport.client import StreamClient

        await self.close()
        self.client = StreamClient(
            base_url, headers=headers, max_connections=max_connections, timeout=timeout
        )
        await self.client.__aenter__()

    async def close(self) -> float:
        """Close the point's client; the worst loop lag (ms) it saw."""
        client, self.client = self.client, None
        if client is None:
            return 0.0
        lag = client.lag.max_ms if client.lag is not None else 0.0
        await client.aclose()
        return float(lag)

    async def abort(self, reason: str, kind: str = "cancelled") -> None:
        if self.client is not None:
            self.client.abort(reason, kind)

    async def run(
        self,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        want_events: bool,
        send_at_ns: int | None = None,
    ) -> Any:
        """Async generator: b"e" + event for each live event, then b"r" + the record."""
        client = self.client
        if client is None:
            rec = RequestRecord(
                request_id=request_id,
                point_id=point_id,
                endpoint=endpoint,  # type: ignore[arg-type]
                error_kind="worker",
                error=f"load worker {self.name} has no open client",
                worker=self.name,
            )
            yield b"r" + _rec_encode(rec)
            return
        q: asyncio.Queue[bytes | None] = asyncio.Queue()
        emit = (lambda ev: q.put_nowait(b"e" + encode(ev))) if want_events else None
        call = client.chat if endpoint == "chat" else client.completions
        task = asyncio.ensure_future(
            call(payload, request_id=request_id, point_id=point_id, emit=emit, send_at_ns=send_at_ns)
        )
        task.add_done_callback(lambda _t: q.put_nowait(None))
        while True:
            item = await q.get()
            if item is None:
                break
            yield item
        rec = task.result()
        rec.worker = self.name
        yield b"r" + _rec_encode(rec)

    async def run_batch(
        self,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        want_events: bool,
        send_at_ns: int | None = None,
    ) -> list[bytes]:
        """``run`` in one reply (Ray Client cannot stream): the events arrive with the record."""
        gen = self.run(endpoint, payload, request_id, point_id, want_events, send_at_ns)
        return [item async for item in gen]


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


class RayLoad:
    """``workers`` Ray actors (see the module docstring)."""

    name = "ray"

    def __init__(self, workers: int = 2, address: str = "local", *, num_cpus_per_worker: float = 1.0) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self.address = address
        self.num_cpus_per_worker = num_cpus_per_worker
        self.clock_offsets_ns: dict[str, int] = {}
        self.warnings: list[str] = []
        self.actors: dict[str, Any] = {}  # name -> actor handle (alive or not)
        self.dead: dict[str, str] = {}  # name -> why
        self.inflight: dict[str, int] = {}
        self._infos: dict[str, dict[str, Any]] = {}
        self._clock: dict[str, dict[str, float]] = {}
        self._own_init = False
        self._started_local = False
        self.client_mode = address.startswith("ray://")  # Ray Client: no streaming generators

    # ------------------------------------------------------------------------------------ life cycle

    def _start_sync(self) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if not ray.is_initialized():
            quiet: dict[str, Any] = {
                "log_to_driver": False,
                "logging_level": logging.ERROR,
                "namespace": "bench-tui",
            }
            if self.address == "local":
                # a private instance talks to itself over loopback (Ray still opens some listening sockets on
                # every interface; Ray 2.60 has no switch for that)
                ray.init(
                    address="local",
                    num_cpus=max(1, int(self.workers * self.num_cpus_per_worker + 0.999)),
                    include_dashboard=False,
                    object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                    _node_ip_address="127.0.0.1",
                    **quiet,
                )
                self._started_local = True
            else:
                ray.init(address=self.address, **quiet)
            self._own_init = True
        actor_cls = ray.remote(LoadWorker).options(
            num_cpus=self.num_cpus_per_worker,
            max_concurrency=100_000,
            max_restarts=0,
            scheduling_strategy="SPREAD",
        )
        for i in range(self.workers):
            name = f"ray-{i}"
            self.actors[name] = actor_cls.remote(name)
            self.inflight[name] = 0

    async def start(self) -> None:
        try:
            await asyncio.wait_for(asyncio.to_thread(self._start_sync), START_TIMEOUT_S)
            infos = await asyncio.wait_for(
                asyncio.gather(*(a.info.remote() for a in self.actors.values())), START_TIMEOUT_S
            )
        except Exception:
            await self.aclose()
            raise
        self._infos = {i["name"]: i for i in infos}
        for name, actor in self.actors.items():
            samples = []
            for _ in range(CLOCK_PINGS):
                t0 = time.monotonic_ns()
                t = await actor.clock.remote()
                samples.append((t0, t, time.monotonic_ns()))
            m = measure_offset(samples)
            self._clock[name] = m
            self.clock_offsets_ns[name] = int(m["offset_ns"])
            if m["spread_ms"] > CLOCK_SPREAD_WARN_MS:
                self.warnings.append(
                    f"load worker {name}: clock offset estimates spread over {m['spread_ms']:.1f} "
                    f"ms (round trip {m['rtt_ms']:.1f} ms); point wall times and aggregate "
                    "rates across workers are uncertain by that much"
                )

    async def aclose(self) -> None:
        await asyncio.to_thread(self._stop_sync)

    def _stop_sync(self) -> None:
        if not ray.is_initialized():
            return
        for actor in self.actors.values():
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
        if self._own_init:
            with contextlib.suppress(Exception):
                ray.shutdown()  # a local instance: stops its processes; a cluster: disconnects
            self._own_init = False

    def kill_worker(self, name: str) -> None:
        """Kill one worker (tests and fault drills): its in-flight requests fail with error_kind worker."""
        ray.kill(self.actors[name], no_restart=True)

    def describe(self) -> dict[str, Any]:
        workers = []
        for name in self.actors:
            w = dict(self._infos.get(name, {"name": name}))
            c = self._clock.get(name)
            if c:
                w["clock_offset_ms"] = round(c["offset_ns"] / 1e6, 3)
                w["clock_rtt_ms"] = round(c["rtt_ms"], 3)
                w["clock_spread_ms"] = round(c["spread_ms"], 3)
            if name in self.dead:
                w["died"] = self.dead[name]
            workers.append(w)
        out: dict[str, Any] = {
            "backend": "ray",
            "ray_address": self.address,
            "ray_version": ray.__version__,
            "workers": workers,
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out

    def client(
        self, base_url: str, headers: dict[str, str] | None, *, max_connections: int, timeout: float
    ) -> LoadClient:
        return RayPointClient(self, base_url, headers, max_connections=max_connections, timeout=timeout)

    def alive(self) -> list[str]:
        return [n for n in self.actors if n not in self.dead]

    def mark_dead(self, name: str, why: str) -> None:
        if name not in self.dead:
            self.dead[name] = why[:300]


class RayPointClient:
    """StreamClient's interface for one point, spread over the live workers (fewest in flight first)."""

    def __init__(
        self,
        load: RayLoad,
        base_url: str,
        headers: dict[str, str] | None,
        *,
        max_connections: int,
        timeout: float,
    ) -> None:
        self.load = load
        self.base_url = base_url
        self.headers = dict(headers or {})
        self.max_connections = max_connections
        self.timeout = timeout
        self.clock_offsets_ns = load.clock_offsets_ns
        self.worker_lag_ms: dict[str, float] = {}

    async def __aenter__(self) -> RayPointClient:
        names = self.load.alive()
        per = max(1, -(-self.max_connections // max(1, len(names))))
        refs = [
            self.load.actors[n].open.remote(self.base_url, self.headers, per, self.timeout) for n in names
        ]
        results = await asyncio.gather(*refs, return_exceptions=True)
        for n, r in zip(names, results, strict=True):
            if isinstance(r, BaseException):
                self.load.mark_dead(n, f"{type(r).__name__}: {r}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        names = self.load.alive()
        refs = [self.load.actors[n].close.remote() for n in names]
        results = await asyncio.gather(*refs, return_exceptions=True)
        for n, r in zip(names, results, strict=True):
            if isinstance(r, int | float):
                self.worker_lag_ms[n] = float(r)

    def abort(self, reason: str = "aborted", kind: str = "cancelled") -> None:
        """Every worker finishes its in-flight requests now with ``error_kind`` ``kind``."""
        for n in self.load.alive():
            with contextlib.suppress(Exception):
                self.load.actors[n].abort.remote(reason, kind)

    async def chat(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Any = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        return await self._submit("chat", payload, request_id, point_id, emit, send_at_ns)

    async def completions(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Any = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        return await self._submit("completions", payload, request_id, point_id, emit, send_at_ns)

    @staticmethod
    def _unpack(replies: list[bytes], emit: Any) -> RequestRecord:
        for data in replies[:-1]:
            if emit is not None:
                with contextlib.suppress(Exception):
                    emit(decode(data[1:]))
        if not replies or replies[-1][:1] != b"r":
            raise RuntimeError("the worker's reply has no record")
        return _rec_decode(replies[-1][1:])

    async def _submit(
        self,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        emit: Any,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        load = self.load
        names = load.alive()
        if not names:
            return RequestRecord(
                request_id=request_id,
                point_id=point_id,
                endpoint=endpoint,  # type: ignore[arg-type]
                error_kind="worker",
                error="no load worker is alive",
            )
        name = min(names, key=lambda n: load.inflight.get(n, 0))
        load.inflight[name] = load.inflight.get(name, 0) + 1
        # the plan is on the runner's clock; the worker waits on its own (worker time = runner time - offset)
        at = None if send_at_ns is None else send_at_ns - load.clock_offsets_ns.get(name, 0)
        try:
            actor = load.actors[name]
            if load.client_mode:  # Ray Client has no streaming generators: one reply per request
                replies = await actor.run_batch.remote(
                    endpoint, payload, request_id, point_id, emit is not None, at
                )
                return self._unpack(replies, emit)
            gen = actor.run.options(num_returns="streaming").remote(
                endpoint, payload, request_id, point_id, emit is not None, at
            )
            async for ref in gen:
                data: bytes = await ref
                if data[:1] == b"e":
                    if emit is not None:
                        ev: Event = decode(data[1:])
                        with contextlib.suppress(Exception):  # a broken subscriber must not lose the record
                            emit(ev)
                    continue
                return _rec_decode(data[1:])
            raise RuntimeError("the worker's stream ended without a record")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - RayActorError and friends: the worker is gone
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if isinstance(exc, ray.exceptions.RayActorError):  # dead (killed, crashed, node lost)
                load.mark_dead(name, why)
            return RequestRecord(
                request_id=request_id,
                point_id=point_id,
                endpoint=endpoint,  # type: ignore[arg-type]
                error_kind="worker",
                error=f"load worker {name} failed: {why}"[:500],
                worker=name,
            )
        finally:
            load.inflight[name] -= 1

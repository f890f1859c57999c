"""The ``ray`` load backend: StreamClients in Ray actors, on this machine or across a cluster.

Only this module imports Ray, and only when ``load.backend: ray`` asks for it (``pip install
'bench-tui[ray]'``). Ray does the distributed part (placing actors on nodes, moving bytes, noticing a dead
worker); the measuring stays ours: every actor runs the same :class:`StreamClient` in its own asyncio loop.

- ``ray_address: local`` starts a private, small Ray instance for the run (``num_cpus = workers``, no
  dashboard, worker logs not forwarded, a minimal object store, every listener on loopback:
  :func:`_loopback_node`) and shuts it down after, which stops its processes; ``auto`` joins the cluster this machine is part of (``ray start``), ``ray://HOST:PORT``
  connects through Ray Client. Leaving a cluster only disconnects; our actors are killed either way.
- Each request is one call of the actor's async generator ``run``: it yields the request's live events
  (RequestStarted / RequestFirstToken / RequestProgress, msgspec-encoded) and finally the record, so the
  runner emits them into the one event stream in order of arrival. The actor stamps ``record.worker``.
  Through Ray Client (``ray://``), which cannot stream, ``run_batch`` returns them all with the record:
  the live view of a request then arrives when it ends; the measurements are the same.
- Anchors stay on the worker's monotonic clock (TTFT, ITL, decode are differences of one worker's
  anchors). For point-level windows and open-loop send times, each worker's clock offset is measured with
  ping round trips at start and again as each point opens (:mod:`~bench_tui.runner.transport.pool`,
  which also does the dispatching, dead-worker, timeout and abort handling shared with ``processes``).
- A worker that dies (killed, node lost) fails the requests it held with ``error_kind="worker"``; later
  requests go to the workers still alive. ``abort`` reaches every worker with its kind; ``aclose`` kills
  the actors.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import ray

from bench_tui.events import RequestRecord, decode, encode
from bench_tui.runner.transport.pool import CLOCK_PINGS, Emit, WorkerGone, WorkerPool, WorkerSide, host_info

LOCAL_OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's floor is 75 MiB; records are small
START_TIMEOUT_S = 120.0

_rec_decode = msgspec.json.Decoder(RequestRecord).decode
_rec_encode = msgspec.json.Encoder().encode


@contextlib.contextmanager
def _loopback_node(warnings: list[str]) -> Iterator[None]:
    """A private Ray instance on loopback only, for the ``ray.init`` inside.

    Ray 2.60 replaces a loopback node address (``_node_ip_address="127.0.0.1"``) with the machine's routable
    one (``services.resolve_ip_for_localhost``), and its gRPC servers (GCS, raylet, every worker) then listen
    on all interfaces: measured here, 5 of 7 listeners on ``*`` and the runtime-env agent on the routable
    address. Only Ray's single-machine mode keeps the node address on loopback: the module constant
    ``ray._private.ray_constants.ENABLE_RAY_CLUSTER`` (read at call time; set from an environment variable
    at import, which would also change how this process joins a real cluster). So it is switched off around
    the private instance's ``ray.init`` alone; every listener then binds 127.0.0.1 (tests/integration/
    test_load_ray.py checks them). A private attribute: where a Ray version lacks it, the instance starts as
    Ray decides and a warning says so.
    """
    consts = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if consts is None or not hasattr(consts, "ENABLE_RAY_CLUSTER"):
        warnings.append(
            f"Ray {ray.__version__}: cannot keep the private Ray instance on loopback; it may listen on "
            "every interface of this machine"
        )
        yield
        return
    old = consts.ENABLE_RAY_CLUSTER
    consts.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        consts.ENABLE_RAY_CLUSTER = old


class LoadWorker:
    """The actor body (made a Ray actor class in :meth:`RayLoad._start_sync`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.side = WorkerSide(name)
        gc.collect()
        gc.freeze()  # start-up objects are never scanned again: shorter collector pauses mid-stream

    async def info(self) -> dict[str, Any]:
        return {"name": self.name, **host_info()}

    async def clock(self) -> int:
        return time.monotonic_ns()

    async def open(
        self, base_url: str, headers: dict[str, str] | None, max_connections: int, timeout: float
    ) -> None:
        await self.side.open(base_url, headers, max_connections, timeout)

    async def close(self) -> float:
        return await self.side.close()

    async def abort(self, reason: str, kind: str = "cancelled") -> None:
        self.side.abort(reason, kind)

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
        q: asyncio.Queue[bytes | None] = asyncio.Queue()
        emit = (lambda ev: q.put_nowait(b"e" + encode(ev))) if want_events else None
        task = asyncio.ensure_future(self.side.run(endpoint, payload, request_id, point_id, emit, send_at_ns))
        task.add_done_callback(lambda _t: q.put_nowait(None))
        while True:
            item = await q.get()
            if item is None:
                break
            yield item
        yield b"r" + _rec_encode(task.result())

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


class RayLoad(WorkerPool):
    """``workers`` Ray actors (see the module docstring)."""

    name = "ray"

    def __init__(self, workers: int = 2, address: str = "local", *, num_cpus_per_worker: float = 1.0) -> None:
        super().__init__(workers)
        self.address = address
        self.num_cpus_per_worker = num_cpus_per_worker
        self.actors: dict[str, Any] = {}  # name -> actor handle (alive or not)
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
                with _loopback_node(self.warnings):
                    ray.init(
                        address="local",
                        num_cpus=max(1, int(self.workers * self.num_cpus_per_worker + 0.999)),
                        include_dashboard=False,
                        object_store_memory=LOCAL_OBJECT_STORE_BYTES,
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
        for name in self.names:
            self.actors[name] = actor_cls.remote(name)

    async def start(self) -> None:
        try:
            await asyncio.wait_for(asyncio.to_thread(self._start_sync), START_TIMEOUT_S)
            infos = await asyncio.wait_for(
                asyncio.gather(*(a.info.remote() for a in self.actors.values())), START_TIMEOUT_S
            )
        except Exception:
            await self.aclose()
            raise
        self.infos = {i["name"]: i for i in infos}
        await self.measure_clocks(CLOCK_PINGS)

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
        out: dict[str, Any] = {
            "backend": "ray",
            "ray_address": self.address,
            "ray_version": ray.__version__,
            "workers": self.describe_workers(),
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out

    # ---------------------------------------------------------------------------------- worker hooks

    async def _clock_of(self, name: str) -> int:
        t: int = await self.actors[name].clock.remote()
        return t

    async def _open(
        self, name: str, base_url: str, headers: dict[str, str] | None, max_connections: int, timeout: float
    ) -> None:
        await self.actors[name].open.remote(base_url, headers, max_connections, timeout)

    async def _close(self, name: str) -> float:
        lag: float = await self.actors[name].close.remote()
        return lag

    def _abort(self, name: str, reason: str, kind: str) -> None:
        self.actors[name].abort.remote(reason, kind)

    @staticmethod
    def _unpack(replies: list[bytes], emit: Emit | None) -> RequestRecord:
        for data in replies[:-1]:
            if emit is not None:
                with contextlib.suppress(Exception):
                    emit(decode(data[1:]))
        if not replies or replies[-1][:1] != b"r":
            raise RuntimeError("the worker's reply has no record")
        return _rec_decode(replies[-1][1:])

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
        actor = self.actors[name]
        args = (endpoint, payload, request_id, point_id, emit is not None, send_at_ns)
        try:
            if self.client_mode:  # Ray Client has no streaming generators: one reply per request
                return self._unpack(await actor.run_batch.remote(*args), emit)
            async for ref in actor.run.options(num_returns="streaming").remote(*args):
                data: bytes = await ref
                if data[:1] == b"e":
                    if emit is not None:
                        with contextlib.suppress(Exception):  # a broken subscriber must not lose the record
                            emit(decode(data[1:]))
                    continue
                return _rec_decode(data[1:])
        except ray.exceptions.RayActorError as exc:  # dead (killed, crashed, node lost)
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise WorkerGone(f"load worker {name} failed: {type(exc).__name__}: {first}") from exc
        raise RuntimeError("the worker's stream ended without a record")

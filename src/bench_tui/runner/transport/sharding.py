"""The ``processes`` load backend: measuring clients in worker processes on this machine.

:class:`ProcessesLoad` starts ``workers`` child processes once for the run (``start()`` ... ``aclose()``,
as the Ray backend keeps its actors); each has its own event loop, loop-lag monitor and, per point, its own
:class:`~bench_tui.runner.transport.client.StreamClient` (opened and closed by the point client of
:mod:`~bench_tui.runner.transport.pool`, which does the dispatching, dead-worker and timeout handling
for both backends). Requests, records and the live RequestStarted / RequestFirstToken / RequestProgress
events travel over multiprocessing queues; events are handed to the caller's ``emit`` in the caller's loop.
``time.monotonic_ns()`` is one system-wide clock on Linux (CLOCK_MONOTONIC), so the anchors of records
measured in different workers, and an open loop's ``send_at_ns``, need no offset.

Records name their process in ``RequestRecord.worker`` (``proc-N``). Use it when a point's
``client_limited`` flag is set, or when the expected chunk rate (streams / ITL) approaches what
bench/client_ceiling.py measured for one process (about 30k chunks/s per core here).

:class:`ShardedClient` is a pool and its point client in one (starts its own processes), for scripts and
tests that measure one thing.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from typing import Any

import msgspec

from bench_tui.events import RequestRecord, decode, encode
from bench_tui.runner.transport.pool import Emit, PointClient, WorkerGone, WorkerPool, WorkerSide, host_info

_rec_decode = msgspec.json.Decoder(RequestRecord).decode
_rec_encode = msgspec.json.Encoder().encode


def _exit_with_parent(ppid: int) -> None:
    """A worker never outlives the runner: when it is reparented (the runner was killed), it leaves."""
    while True:
        time.sleep(1.0)
        if os.getppid() != ppid:
            os._exit(1)


def _worker(idx: int, name: str, inbox: Any, outbox: Any) -> None:
    """Child process: open/close a point's StreamClient, run requests concurrently, answer on ``outbox``.

    Messages in: ("open", key, base_url, headers, max_connections, timeout), ("close", key),
    ("run", key, endpoint, payload, request_id, point_id, want_events, send_at_ns), ("abort", reason, kind),
    None (leave). Out: ("ready", idx, info), ("reply", key, value), ("event", key, bytes),
    ("record", key, bytes).
    """
    import gc

    gc.collect()
    gc.freeze()  # what exists after start-up is never scanned again: shorter collector pauses mid-stream
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        jobs: asyncio.Queue[Any] = asyncio.Queue()

        def pump() -> None:  # blocking reads of the inbox, off the loop
            while True:
                msg = inbox.get()
                loop.call_soon_threadsafe(jobs.put_nowait, msg)
                if msg is None:
                    return

        threading.Thread(target=pump, daemon=True).start()
        tasks: set[asyncio.Task[None]] = set()
        side = WorkerSide(name)

        async def run(
            key: int,
            endpoint: str,
            payload: dict[str, Any],
            rid: str,
            pid: str,
            want_events: bool,
            send_at_ns: int | None,
        ) -> None:
            emit = (lambda ev: outbox.put(("event", key, encode(ev)))) if want_events else None
            rec = await side.run(endpoint, payload, rid, pid, emit, send_at_ns)
            outbox.put(("record", key, _rec_encode(rec)))

        outbox.put(("ready", idx, {"name": name, **host_info()}))
        while True:
            msg = await jobs.get()
            if msg is None:
                break
            op = msg[0]
            if op == "run":
                t = loop.create_task(run(*msg[1:]))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
            elif op == "abort":
                side.abort(msg[1], msg[2])
            elif op == "open":
                await side.open(*msg[2:])
                outbox.put(("reply", msg[1], None))
            elif op == "close":
                outbox.put(("reply", msg[1], await side.close()))
        await side.close()
        if tasks:
            await asyncio.wait(tasks, timeout=10.0)

    asyncio.run(main())


class ProcessesLoad(WorkerPool):
    """``workers`` client processes on this machine, started once for the run (see the module docstring)."""

    name = "processes"
    same_clock = True  # CLOCK_MONOTONIC is system-wide

    def __init__(self, workers: int = 2, *, start_timeout: float = 30.0) -> None:
        super().__init__(workers)
        self.start_timeout = start_timeout
        self._ctx = mp.get_context("spawn")
        self.procs: list[Any] = []
        self._inboxes: list[Any] = []
        self._outbox: Any = None
        self._pending: dict[int, tuple[asyncio.Future[Any], Emit | None, str]] = {}
        self._next = 0
        self._reader: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready_evt: asyncio.Event | None = None
        self._stopping = False
        self._watchdog: asyncio.Task[None] | None = None

    def _worker_name(self, i: int) -> str:
        return f"proc-{i}"

    # ------------------------------------------------------------------------------------ life cycle

    async def start(self) -> None:
        if self.procs:
            return
        self._loop = asyncio.get_running_loop()
        self._ready_evt = asyncio.Event()
        self._outbox = self._ctx.Queue()
        for i, name in enumerate(self.names):
            inbox = self._ctx.Queue()
            p = self._ctx.Process(
                target=_worker, name=f"bench-client-{i}", daemon=True, args=(i, name, inbox, self._outbox)
            )
            p.start()
            self.procs.append(p)
            self._inboxes.append(inbox)
        self._reader = threading.Thread(target=self._read, name="load-processes-reader", daemon=True)
        self._reader.start()
        try:
            await asyncio.wait_for(self._ready_evt.wait(), self.start_timeout)
        except TimeoutError:
            await self.aclose()
            raise RuntimeError(f"client workers did not start within {self.start_timeout:g}s") from None
        self._watchdog = asyncio.create_task(self._watch())

    async def aclose(self) -> None:
        if self._stopping or self._loop is None:
            return
        self._stopping = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        for q in self._inboxes:
            with contextlib.suppress(Exception):
                q.put(None)
        loop = asyncio.get_running_loop()

        def join() -> None:
            for p in self.procs:
                p.join(10)
                if p.is_alive():
                    p.terminate()
                    p.join(5)

        await loop.run_in_executor(None, join)
        with contextlib.suppress(Exception):
            self._outbox.put(None)
        if self._reader is not None:
            await loop.run_in_executor(None, self._reader.join, 5)
        self._fail_pending(lambda _name: True, "load workers stopped")
        for q in [*self._inboxes, self._outbox]:
            with contextlib.suppress(Exception):
                q.close()
                q.join_thread()

    def kill_worker(self, name: str) -> None:
        """Kill one worker (tests and fault drills): its in-flight requests fail with error_kind worker."""
        p = self.procs[self.names.index(name)]
        if p.pid is not None:
            os.kill(p.pid, signal.SIGKILL)

    def describe(self) -> dict[str, Any]:
        return {"backend": "processes", "workers": self.describe_workers()}

    def _fail_pending(self, which: Any, why: str) -> None:
        for key, (fut, _, name) in list(self._pending.items()):
            if which(name):
                del self._pending[key]
                if not fut.done():
                    fut.set_exception(WorkerGone(why))

    async def _watch(self) -> None:
        """A worker process that died fails the requests it held; the rest go on."""
        while not self._stopping:
            await asyncio.sleep(0.25)
            for name, p in zip(self.names, self.procs, strict=True):
                if name in self.dead or p.is_alive() or self._stopping:
                    continue
                why = f"load worker {name} died (exit code {p.exitcode})"
                self.mark_dead(name, why)
                self._fail_pending(lambda n, dead=name: n == dead, why)

    # ---------------------------------------------------------------------------------- the queues

    def _read(self) -> None:
        loop = self._loop
        assert loop is not None
        while True:
            try:
                msg = self._outbox.get(timeout=0.5)
            except queue.Empty:
                if self._stopping:
                    return
                continue
            except (EOFError, OSError):
                return
            if msg is None:
                return
            loop.call_soon_threadsafe(self._deliver, msg)

    def _deliver(self, msg: tuple[str, int, Any]) -> None:
        kind, key, data = msg
        if kind == "ready":
            self.infos[data["name"]] = data
            if len(self.infos) == self.workers and self._ready_evt is not None:
                self._ready_evt.set()
            return
        entry = self._pending.get(key)
        if entry is None:  # answered too late (timed out) or after the worker was given up
            return
        fut, emit, _ = entry
        if kind == "event":
            if emit is not None:
                with contextlib.suppress(Exception):  # a broken subscriber must not lose the record
                    emit(decode(data))
            return
        del self._pending[key]
        if not fut.done():
            fut.set_result(_rec_decode(data) if kind == "record" else data)

    async def _ask(self, name: str, msg: tuple[Any, ...], emit: Emit | None = None) -> Any:
        """Send ``msg`` (its second item is replaced by a fresh key) and wait for the worker's answer."""
        if self._loop is None or self._stopping:
            raise WorkerGone("load workers are stopped")
        if name in self.dead:
            raise WorkerGone(self.dead[name])
        key = self._next
        self._next += 1
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._pending[key] = (fut, emit, name)
        try:
            self._inboxes[self.names.index(name)].put((msg[0], key, *msg[2:]))
            return await fut
        finally:
            self._pending.pop(key, None)

    # ---------------------------------------------------------------------------------- worker hooks

    async def _open(
        self, name: str, base_url: str, headers: dict[str, str] | None, max_connections: int, timeout: float
    ) -> None:
        await self._ask(name, ("open", 0, base_url, headers, max_connections, timeout))

    async def _close(self, name: str) -> float:
        return float(await self._ask(name, ("close", 0)))

    def _abort(self, name: str, reason: str, kind: str) -> None:
        self._inboxes[self.names.index(name)].put(("abort", reason, kind))

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
        msg = ("run", 0, endpoint, payload, request_id, point_id, emit is not None, send_at_ns)
        rec: RequestRecord = await self._ask(name, msg, emit)
        return rec


class ShardedClient(PointClient):
    """A :class:`ProcessesLoad` of its own and its point client in one (scripts and tests)."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str] | None = None,
        *,
        workers: int = 2,
        max_connections: int = 256,
        timeout: float = 600.0,
        start_timeout: float = 30.0,
    ) -> None:
        self.load = ProcessesLoad(workers, start_timeout=start_timeout)
        super().__init__(self.load, base_url, headers, max_connections=max_connections, timeout=timeout)

    async def __aenter__(self) -> ShardedClient:
        await self.load.start()
        try:
            await super().__aenter__()
        except BaseException:
            await self.load.aclose()
            raise
        return self

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            await self.load.aclose()

"""Spread the measuring client over worker processes when one core is not enough (``load.backend: processes``).

``ShardedClient`` has StreamClient's interface (``chat``, ``completions``, ``abort``, async context
manager), but each request runs in one of ``workers`` child processes, each with its own event loop,
StreamClient and loop-lag monitor. Records come back through a multiprocessing queue; so do the
RequestStarted / RequestFirstToken / RequestProgress events, which are handed to the caller's ``emit`` in
the caller's loop. ``time.monotonic_ns()`` is one system-wide clock on Linux (CLOCK_MONOTONIC), so the
anchors of records measured in different workers are comparable.

Records name their process in ``RequestRecord.worker`` (``proc-N``). Chosen through
:mod:`~bench_tui.runner.transport.backends` (``ProcessesLoad``). Use it when a point's ``client_limited`` flag is set, or when the expected chunk rate (streams / ITL)
approaches what bench/client_ceiling.py measured for one process (about 30k chunks/s per core here).
Requests are given to the worker with the fewest in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

from bench_tui.events import Event, RequestRecord, decode, encode

Emit = Callable[[Event], None]

_rec_decode = msgspec.json.Decoder(RequestRecord).decode
_rec_encode = msgspec.json.Encoder().encode


def _exit_with_parent(ppid: int) -> None:
    """A worker never outlives the runner: when it is reparented (the runner was killed), it leaves."""
    while True:
        time.sleep(1.0)
        if os.getppid() != ppid:
            os._exit(1)


def _worker(
    idx: int, base_url: str, headers: dict[str, str] | None, opts: dict[str, Any], inbox: Any, outbox: Any
) -> None:
    """Child process: run requests from ``inbox`` concurrently, put results on ``outbox``."""
    import gc

    from bench_tui.runner.transport.client import StreamClient

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
        async with StreamClient(base_url, headers, **opts) as client:
            outbox.put(("ready", idx, None))

            async def run(
                job_id: int,
                endpoint: str,
                payload: dict[str, Any],
                rid: str,
                pid: str,
                want_events: bool,
                send_at_ns: int | None,
            ) -> None:
                emit = (lambda ev: outbox.put(("event", job_id, encode(ev)))) if want_events else None
                call = client.chat if endpoint == "chat" else client.completions
                try:
                    rec = await call(payload, request_id=rid, point_id=pid, emit=emit, send_at_ns=send_at_ns)
                except asyncio.CancelledError:
                    rec = RequestRecord(
                        request_id=rid,
                        point_id=pid,
                        endpoint=endpoint,  # type: ignore[arg-type]
                        error_kind="cancelled",
                        error="worker stopped",
                    )
                rec.worker = f"proc-{idx}"
                outbox.put(("record", job_id, _rec_encode(rec)))

            while True:
                msg = await jobs.get()
                if msg is None:
                    break
                if msg == "abort":
                    client.abort("aborted")
                    continue
                t = loop.create_task(run(*msg))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.wait(tasks, timeout=opts.get("timeout", 600.0))

    asyncio.run(main())


class ShardedClient:
    """StreamClient's interface over ``workers`` processes (see the module docstring)."""

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
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.base_url = base_url
        self.workers = workers
        self.timeout = timeout
        self._opts = {"max_connections": max(1, -(-max_connections // workers)), "timeout": timeout}
        self._headers = headers
        self._start_timeout = start_timeout
        self._ctx = mp.get_context("spawn")
        self._procs: list[Any] = []
        self._inboxes: list[Any] = []
        self._outbox: Any = None
        self._inflight: list[int] = []
        self._pending: dict[int, tuple[asyncio.Future[RequestRecord], Emit | None, int, str, str]] = {}
        self._next = 0
        self._reader: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = 0
        self._ready_evt: asyncio.Event | None = None
        self._stopping = False
        self._dead: set[int] = set()
        self._watchdog: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ShardedClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._ready_evt = asyncio.Event()
        self._outbox = self._ctx.Queue()
        for i in range(self.workers):
            inbox = self._ctx.Queue()
            p = self._ctx.Process(
                target=_worker,
                name=f"bench-client-{i}",
                daemon=True,
                args=(i, self.base_url, self._headers, self._opts, inbox, self._outbox),
            )
            p.start()
            self._procs.append(p)
            self._inboxes.append(inbox)
            self._inflight.append(0)
        self._reader = threading.Thread(target=self._read, name="sharded-client-reader", daemon=True)
        self._reader.start()
        try:
            await asyncio.wait_for(self._ready_evt.wait(), self._start_timeout)
        except TimeoutError:
            await self.aclose()
            raise RuntimeError(f"client workers did not start within {self._start_timeout:g}s") from None
        self._watchdog = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        """A worker process that died fails the requests it held (error_kind "worker"); the rest go on."""
        while not self._stopping:
            await asyncio.sleep(0.25)
            for i, p in enumerate(self._procs):
                if i in self._dead or p.is_alive() or self._stopping:
                    continue
                self._dead.add(i)
                why = f"load worker proc-{i} died (exit code {p.exitcode})"
                for key, (fut, _, worker, rid, pid) in list(self._pending.items()):
                    if worker == i and not fut.done():
                        del self._pending[key]
                        fut.set_result(
                            RequestRecord(
                                request_id=rid,
                                point_id=pid,
                                error_kind="worker",
                                error=why,
                                worker=f"proc-{i}",
                            )
                        )

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

    def _deliver(self, msg: tuple[str, int, bytes | None]) -> None:
        kind, key, data = msg
        if kind == "ready":
            self._ready += 1
            if self._ready == self.workers and self._ready_evt is not None:
                self._ready_evt.set()
            return
        entry = self._pending.get(key)
        if entry is None:
            return
        fut, emit, worker, _, _ = entry
        if kind == "event":
            if emit is not None and data is not None:
                try:
                    emit(decode(data))
                except Exception:  # noqa: BLE001 - a broken subscriber must not lose the record
                    pass
            return
        del self._pending[key]
        self._inflight[worker] -= 1
        if not fut.done() and data is not None:
            fut.set_result(_rec_decode(data))

    async def _submit(
        self,
        endpoint: str,
        payload: dict[str, Any],
        request_id: str,
        point_id: str,
        emit: Emit | None,
        send_at_ns: int | None = None,
    ) -> RequestRecord:
        if self._loop is None or self._stopping:
            return RequestRecord(
                request_id=request_id,
                point_id=point_id,
                endpoint=endpoint,  # type: ignore[arg-type]
                error_kind="cancelled",
                error="client closed",
            )
        live = [i for i in range(self.workers) if i not in self._dead]
        if not live:
            return RequestRecord(
                request_id=request_id,
                point_id=point_id,
                endpoint=endpoint,  # type: ignore[arg-type]
                error_kind="worker",
                error="no load worker is alive",
            )
        worker = min(live, key=self._inflight.__getitem__)
        job_id = self._next
        self._next += 1
        fut: asyncio.Future[RequestRecord] = self._loop.create_future()
        self._pending[job_id] = (fut, emit, worker, request_id, point_id)
        self._inflight[worker] += 1
        self._inboxes[worker].put(
            (job_id, endpoint, payload, request_id, point_id, emit is not None, send_at_ns)
        )
        try:
            return await asyncio.wait_for(asyncio.shield(fut), self.timeout + 30.0)
        except TimeoutError:
            self._pending.pop(job_id, None)
            return RequestRecord(
                request_id=request_id,
                point_id=point_id,
                endpoint=endpoint,  # type: ignore[arg-type]
                error_kind="timeout",
                error="no answer from the client worker",
            )

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

    def abort(self, reason: str = "aborted", kind: str = "cancelled") -> None:
        """In-flight requests in every worker finish now with error_kind "cancelled" (``kind`` is not passed
        on to the workers)."""
        for q in self._inboxes:
            with contextlib.suppress(Exception):
                q.put("abort")

    async def aclose(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        for q in self._inboxes:
            with contextlib.suppress(Exception):
                q.put(None)
        loop = asyncio.get_running_loop()

        def join() -> None:
            for p in self._procs:
                p.join(10)
                if p.is_alive():
                    p.terminate()
                    p.join(5)

        await loop.run_in_executor(None, join)
        with contextlib.suppress(Exception):
            self._outbox.put(None)
        if self._reader is not None:
            await loop.run_in_executor(None, self._reader.join, 5)
        for fut, _, _, rid, pid in self._pending.values():
            if not fut.done():
                fut.set_result(
                    RequestRecord(request_id=rid, point_id=pid, error_kind="cancelled", error="client closed")
                )
        self._pending.clear()
        for q in [*self._inboxes, self._outbox]:
            with contextlib.suppress(Exception):
                q.close()
                q.join_thread()

"""The measuring loop in its own process, for front ends that render (the TUI).

A run in a thread of the TUI's process shares the GIL with rendering: measured on the 2-core box, the
measuring loop's worst wake-up lag went from 5-23 ms headless to 35-108 ms with the TUI drawing, enough to
flag c1 points client-limited. So the TUI prepares the run directory as usual (``start_run``), then hands it
to a child process, ``python -m bench_tui.runner.orchestration.child RUN_DIR``, which runs it exactly like ``resume`` would
a run with no events yet. The child writes every event to ``events.jsonl`` (it is the only writer) and
copies it, one JSON line each, to its stdout; the parent decodes those lines for its subscribers. Controls
go the other way as words on the child's stdin (``pause``, ``resume``, ``skip``, ``abort``, ``force``); a
closed stdin (the parent is gone) aborts the run, so a run never goes on measuring with nobody watching.

The run directory's lock (runner.store.RunLock) that the parent took is handed down as an open descriptor
(``--lock-fd``): the child holds the very same lock, so no other session can slip in between, and the lock
stays held for as long as the child measures, even if the parent is killed.

``ChildRunHandle`` has the surface of ``RunHandle`` that front ends use: ``run_dir``, ``subscribe``,
``start``, ``control``, ``wait``, ``running``, ``status``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import msgspec

from bench_tui.events import Event, RunFinished, decode, encode
from bench_tui.runner.orchestration.session import RunError, RunHandle, resume_run
from bench_tui.spec.loader import SpecError

Subscriber = Callable[[Event], None]


class PipeControl:
    """RunControl's methods, sent to the child as words on its stdin."""

    def __init__(self) -> None:
        self._stdin: IO[bytes] | None = None
        self._lock = threading.Lock()

    def _send(self, word: str) -> None:
        with self._lock:
            if self._stdin is None or self._stdin.closed:
                return
            try:
                self._stdin.write(word.encode() + b"\n")
                self._stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def pause(self) -> None:
        self._send("pause")

    def resume(self) -> None:
        self._send("resume")

    def skip_point(self) -> None:
        self._send("skip")

    def abort(self) -> None:
        self._send("abort")

    def force(self) -> None:
        self._send("force")


class ChildRunHandle:
    """A prepared run directory, measured by a child process."""

    def __init__(
        self,
        run_dir: Path | str,
        *,
        only: list[str] | None = None,
        python: str = sys.executable,
        lock: Any = None,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.lock = lock  # runner.store.RunLock, handed to the child
        self.only = list(only or [])
        self.python = python
        self.control = PipeControl()
        self.status: str | None = None
        self.error = ""
        self._subs: list[Subscriber] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._finished = threading.Event()

    def subscribe(self, fn: Subscriber) -> None:
        if self._proc is not None:
            raise RuntimeError("subscribe() before start()")
        self._subs.append(fn)

    def start(self) -> None:
        if self._proc is not None:
            raise RuntimeError("a run starts once")
        argv = [self.python, "-m", "bench_tui.cli.child", str(self.run_dir)]
        for o in self.only:
            argv += ["--only", o]
        fds: tuple[int, ...] = ()
        if self.lock is not None and self.lock.fd is not None:
            argv += ["--lock-fd", str(self.lock.fd)]
            fds = (self.lock.fd,)
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=fds,
        )
        if self.lock is not None:
            self.lock.release()  # the child's copy holds it from here on
        self.control._stdin = self._proc.stdin
        self._reader = threading.Thread(target=self._read, name="bench-tui-child-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stderr is not None
        status = None
        for line in proc.stdout:
            try:
                ev = decode(line)
            except msgspec.DecodeError:
                continue  # not an event (a stray print): events.jsonl has the record
            if isinstance(ev, RunFinished):
                status = ev.status
            for fn in self._subs:
                try:
                    fn(ev)
                except Exception:  # noqa: BLE001 - a front end's bug must not stop the reader
                    pass
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        rc = proc.wait()
        self.error = err if rc not in (0, 130) or status is None else ""
        self.status = status or "failed"
        self._finished.set()

    def wait(self, timeout: float | None = None) -> str:
        if self._proc is None:
            raise RuntimeError("start() first")
        self._finished.wait(timeout)
        return self.status or "running"

    @property
    def running(self) -> bool:
        return self._proc is not None and not self._finished.is_set()


def _stdout_writer(out: IO[bytes]) -> Subscriber:
    lock = threading.Lock()

    def write(ev: Event) -> None:
        data = encode(ev) + b"\n"
        with lock:
            try:
                out.write(data)
                out.flush()
            except (BrokenPipeError, OSError):
                pass  # the parent is gone: stdin's EOF aborts the run

    return write


def _control_loop(handle: Any, stdin: IO[bytes]) -> None:
    for raw in stdin:
        word = raw.decode("utf-8", "replace").strip()
        if word == "pause":
            handle.control.pause()
        elif word == "resume":
            handle.control.resume()
        elif word == "skip":
            handle.control.skip_point()
        elif word == "abort":
            handle.control.abort()
        elif word == "force":
            handle.control.force()
    handle.control.abort()  # EOF: nobody is watching any more


def in_child_process(handle: RunHandle) -> ChildRunHandle:
    """A prepared run (``session.RunHandle``), measured by a child process instead of a thread of this one:
    for front ends that render, so that drawing never delays a timestamp. Call before ``start()``."""
    if handle._thread is not None:
        raise RuntimeError("in_child_process() before start()")
    handle._log.close()  # the child is the only writer of events.jsonl
    lock, handle.lock = handle.lock, None  # handed down: the child holds the same lock (same open file)
    return ChildRunHandle(
        handle.run_dir, only=[p.point_id for p in handle.points] if handle.resumed else None, lock=lock
    )


def main(argv: list[str] | None = None, *, finalize: Callable[[Path], object] | None = None) -> int:
    """The child's body (its entry point is ``python -m bench_tui.cli.child``, which passes the report writer)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m bench_tui.cli.child")
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--lock-fd", type=int, default=None, help="the run directory's lock, held by the parent")
    ns = ap.parse_args(argv)
    try:
        handle = resume_run(ns.run_dir, only=ns.only or None, lock_fd=ns.lock_fd)
    except (RunError, SpecError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    handle.finalize = finalize
    handle.subscribe(_stdout_writer(sys.stdout.buffer))
    handle.start()
    threading.Thread(target=_control_loop, args=(handle, sys.stdin.buffer), daemon=True).start()
    status = handle.wait()
    if handle.error:
        print(handle.error, file=sys.stderr)
    return {"completed": 0, "aborted": 130}.get(status, 1)

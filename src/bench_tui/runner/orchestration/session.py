"""A run: spec -> plan -> run directory -> the measuring thread. The one entry point for every front end.

    handle = start_run(spec_path)            # or start_run(None, resume=RUN_DIR)
    handle.subscribe(fn)                     # before start(): fn(event) for every event (any thread)
    handle.start()
    handle.control.pause() / resume() / skip_point() / abort()   # thread-safe
    status = handle.wait()                   # "completed" | "aborted" | "failed"

The measuring loop runs in its own thread with its own asyncio loop, so no front end can skew a timestamp.
Events reach events.jsonl first (flushed), then subscribers, through one writer thread so that disk writes
never stall the measuring loop.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import queue
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_tui.engine_adapters.http import post_json
from bench_tui.engine_adapters.reaper import stop_leftovers
from bench_tui.events import Event, PlanPoint, PlanReady, RunFinished, RunStarted, RunWarning
from bench_tui.graders.regrade import score_run_dir
from bench_tui.runner.orchestration.eventlog import EventLog
from bench_tui.runner.orchestration.executor import AdapterFactory, Executor, RunControl
from bench_tui.runner.orchestration.store import (
    RunDirError,
    RunLock,
    RunPaths,
    create_run_dir,
    plan_from_resolved,
    read_resolved,
    write_env,
    write_resolved,
)
from bench_tui.runner.view import RunView
from bench_tui.spec.secrets import scrub_text

Subscriber = Callable[[Event], None]


class RunError(RuntimeError):
    """A run cannot start (bad run directory, empty selection, ...): the message is for a person."""


def select_points(points: list[PlanPoint], only: list[str] | None) -> list[PlanPoint]:
    """``only``: glob patterns (``*``, ``?``, ``[...]``) on point ids, or plain substrings."""
    if not only:
        return list(points)

    def hit(pid: str) -> bool:
        for pat in only:
            if any(c in pat for c in "*?["):
                if fnmatch.fnmatchcase(pid, pat):
                    return True
            elif pat in pid:
                return True
        return False

    return [p for p in points if hit(p.point_id)]


class _QueueEmitter:
    """emit() from any thread (cheap: a queue put); one writer thread appends to events.jsonl + fans out."""

    _STOP = object()

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name="bench-tui-events", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            ev = self._q.get()
            if ev is self._STOP:
                return
            try:
                self.log.emit(ev)
            except Exception:  # noqa: BLE001 - a subscriber bug must not stop the log
                traceback.print_exc()

    def __call__(self, event: Event) -> None:
        self._q.put(event)

    def close(self, timeout: float = 30.0) -> None:
        self._q.put(self._STOP)
        self._thread.join(timeout)


class RunHandle:
    def __init__(
        self,
        *,
        paths: RunPaths,
        loaded: Any,
        points: list[PlanPoint],
        all_points: list[PlanPoint],
        done: set[str],
        prior_attempts: dict[str, int],
        resumed: bool,
        spec_path: str,
        adapter_factory: AdapterFactory | None = None,
        engine_warmup: bool = True,
        lock: RunLock | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.paths = paths
        self.lock = lock  # this session is the run directory's one writer while it holds this
        self._notes = list(notes or [])  # warnings found while preparing (leftover engines stopped)
        self.run_dir = paths.run_dir
        self.loaded = loaded
        self.spec = loaded.spec
        self.points = points  # what this session runs
        self.all_points = all_points  # the whole plan
        self.done = set(done)  # finished before this session (resume)
        self.resumed = resumed
        self.spec_path = spec_path
        self.control = RunControl()
        self.status: str | None = None
        self._prior_attempts = prior_attempts
        self._factory = adapter_factory
        self._engine_warmup = engine_warmup
        self._log = EventLog(paths.events)
        self._thread: threading.Thread | None = None
        self._finished = threading.Event()
        self.error: str = ""
        self.report_error: str = ""
        # what turns the finished run directory into reports: set by the front end (reports sit above runner)
        self.finalize: Callable[[Path], object] | None = None

    @property
    def points_total(self) -> int:
        return len(self.all_points)

    @property
    def estimated_requests(self) -> int:
        return sum(p.requests for p in self.points)

    def subscribe(self, fn: Subscriber) -> None:
        if self._thread is not None:
            raise RuntimeError("subscribe() before start()")
        self._log.subscribe(fn)

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a run starts once")
        self._thread = threading.Thread(target=self._main, name="bench-tui-runner", daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> str:
        if self._thread is None:
            raise RuntimeError("start() first")
        self._finished.wait(timeout)
        return self.status or "running"

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._finished.is_set()

    def release(self) -> None:
        """Give up the run directory's lock (a prepared run that will not be started)."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    # ------------------------------------------------------------------------------------------ thread

    def _main(self) -> None:
        emit = _QueueEmitter(self._log)
        status = "failed"
        message = ""
        done_now = 0
        try:
            emit(
                RunStarted(
                    run_id=self.paths.run_id,
                    spec_name=self.spec.name,
                    spec_path=self.spec_path,
                    run_dir=str(self.run_dir),
                    resumed=self.resumed,
                )
            )
            emit(
                PlanReady(points=self.all_points, estimated_requests=sum(p.requests for p in self.all_points))
            )
            if self.resumed:
                emit(
                    RunWarning(
                        code="resumed",
                        message=(
                            f"resuming: {len(self.done)} of {len(self.all_points)} points already finished, "
                            f"{len(self.points)} to run"
                        ),
                    )
                )
            for note in self._notes:
                emit(RunWarning(code="leftover-engine", message=note))
            index_of = {p.point_id: i for i, p in enumerate(self.all_points)}
            ex = Executor(
                secrets=getattr(self.loaded, "secrets", None) or None,
                spec=self.spec,
                spec_dir=Path(self.loaded.dir),
                points=self.points,
                paths=self.paths,
                emit=emit,
                control=self.control,
                total=len(self.all_points),
                index_of=index_of,
                attempts=dict(self._prior_attempts),
                done_before=len(self.done),
                adapter_factory=self._factory,
                engine_warmup=self._engine_warmup,
            )
            status = asyncio.run(ex.run())
            done_now = sum(1 for s in ex.finished.values() if s in ("ok", "degraded", "failed"))
        except Exception as exc:  # noqa: BLE001 - the run fails, the process does not
            message = scrub_text(f"{type(exc).__name__}: {exc}")
            detail = self.run_dir / "runner-error.log"
            try:
                detail.write_text(scrub_text(traceback.format_exc()))
                self.error = f"runner error: {message} (details in {detail})\n"
            except OSError:
                self.error = scrub_text(traceback.format_exc())
            status = "failed"
        finally:
            points_done = len(self.done) + done_now
            emit(
                RunFinished(
                    status=status,  # type: ignore[arg-type]
                    points_done=points_done,
                    points_total=len(self.all_points),
                    message=message,
                )
            )
            emit.close()
            self._write_reports()
            self._log.close()
            self.status = status
            self.release()
            self._finished.set()

    def ask_judge(self) -> None:
        """The judge's second opinion on this run's verdicts, into the run's judge cache (graders/judge.py),
        after the run so that no judge request overlaps a measurement. A judge that fails leaves a note
        in the cache, never fails the run."""
        if self.spec.grading.judge is None:
            return
        try:
            score_run_dir(self.run_dir, judge_post=post_json)
        except Exception:  # noqa: BLE001 - a run without scores (or a pack gone) has nothing to judge
            pass

    def _write_reports(self) -> None:
        self.ask_judge()
        if self.finalize is None:
            return
        try:
            self.finalize(self.run_dir)
        except Exception as exc:  # noqa: BLE001 - the measurements are safe; the report can be redone
            # not an event: RunFinished stays the last line of events.jsonl
            self.report_error = (
                f"report rendering failed ({type(exc).__name__}: {exc}); "
                f"run `bench-tui report {self.run_dir}` again"
            )


def _load_spec_file(path: Path) -> Any:
    from bench_tui.runner.orchestration.planner import load_spec

    return load_spec(path)


def _initial_env(paths: RunPaths, secrets: set[str] | None = None) -> None:
    try:
        from bench_tui.envinfo import capture_env

        env = capture_env([])
    except Exception:  # noqa: BLE001
        import platform

        env = {"host": platform.node(), "python": platform.python_version(), "engines": {}}
    write_env(paths, env, secrets)


def start_run(
    spec_path: Path | str | None,
    *,
    resume: Path | str | None = None,
    runs_dir: Path | str | None = None,
    only: list[str] | None = None,
    adapter_factory: AdapterFactory | None = None,
    engine_warmup: bool = True,
) -> RunHandle:
    """Prepare a run (or the resumption of one); ``.start()`` it after subscribing.

    Raises ``RunError`` (and the spec loader's ``SpecError``) with messages meant for a person.
    """
    if resume is not None:
        return resume_run(
            Path(resume), only=only, adapter_factory=adapter_factory, engine_warmup=engine_warmup
        )
    if spec_path is None:
        from bench_tui.spec.loader import default_spec_path

        spec_path = default_spec_path()
    from bench_tui.runner.orchestration.planner import plan_points

    spec_path = Path(spec_path)
    loaded = _load_spec_file(spec_path)
    all_points = list(plan_points(loaded))
    points = select_points(all_points, only)
    if not points:
        raise RunError(
            f"no point of {spec_path} matches --only {' '.join(only or [])!s}"
            if only
            else f"{spec_path}: the plan is empty"
        )
    return new_run(
        loaded,
        points,
        runs_dir=runs_dir,
        spec_path=spec_path,
        only=only,
        adapter_factory=adapter_factory,
        engine_warmup=engine_warmup,
    )


def new_run(
    loaded: Any,
    points: list[PlanPoint],
    *,
    runs_dir: Path | str | None = None,
    spec_path: Path | str | None = None,
    only: list[str] | None = None,
    adapter_factory: AdapterFactory | None = None,
    engine_warmup: bool = True,
) -> RunHandle:
    """A fresh run directory for an already loaded spec and its (selected) plan."""
    spec_path = Path(spec_path or loaded.path)
    base = Path(runs_dir) if runs_dir is not None else Path(os.getcwd()) / (loaded.spec.runs_dir or "runs")
    paths = create_run_dir(base, loaded.raw_text)
    lock = RunLock.acquire(paths.run_dir)
    secrets = getattr(loaded, "secrets", None) or None
    write_resolved(
        paths, spec=loaded.spec, points=points, spec_path=str(spec_path.resolve()), only=only, secrets=secrets
    )
    _initial_env(paths, secrets)
    return RunHandle(
        paths=paths,
        loaded=loaded,
        points=points,
        all_points=points,
        done=set(),
        prior_attempts={},
        resumed=False,
        spec_path=str(spec_path),
        adapter_factory=adapter_factory,
        engine_warmup=engine_warmup,
        lock=lock,
    )


def resume_run(
    run_dir: Path,
    *,
    only: list[str] | None = None,
    adapter_factory: AdapterFactory | None = None,
    engine_warmup: bool = True,
    load_text: Callable[[str, Path], Any] | None = None,
    lock_fd: int | None = None,
) -> RunHandle:
    """Prepare the rest of a run. Takes the run directory's lock first (``RunError`` when another session
    holds it: nothing is started or written then), then stops engines a killed session of this run left
    running (their pid and start time are recorded in ``engines/``; see engine_adapters.reaper).
    ``lock_fd``: the lock a parent process already holds for us (runner.child)."""
    if not run_dir.is_dir():
        raise RunError(f"{run_dir}: no such run directory")
    paths = RunPaths(run_dir)
    try:
        doc = read_resolved(run_dir)
        lock = RunLock.acquire(run_dir) if lock_fd is None else RunLock.adopt(run_dir, lock_fd)
    except RunDirError as exc:
        raise RunError(str(exc)) from None
    try:
        return _resume_locked(
            run_dir,
            paths,
            doc,
            lock,
            only=only,
            adapter_factory=adapter_factory,
            engine_warmup=engine_warmup,
            load_text=load_text,
        )
    except BaseException:
        lock.release()
        raise


def _resume_locked(
    run_dir: Path,
    paths: RunPaths,
    doc: dict[str, Any],
    lock: RunLock,
    *,
    only: list[str] | None,
    adapter_factory: AdapterFactory | None,
    engine_warmup: bool,
    load_text: Callable[[str, Path], Any] | None,
) -> RunHandle:
    if not paths.spec.is_file():
        raise RunError(f"{run_dir} has no spec.yaml: cannot resume")
    raw = paths.spec.read_text()
    # relative paths in the spec (chat templates, packs) resolve against the original spec's folder
    orig = Path(doc.get("spec_path") or paths.spec)
    where = orig if orig.parent.is_dir() else paths.spec
    if load_text is None:
        from bench_tui.runner.orchestration.planner import load_spec_text

        loaded = load_spec_text(raw, where)
    else:
        loaded = load_text(raw, where)
    all_points = plan_from_resolved(doc)
    if not all_points:
        from bench_tui.runner.orchestration.planner import plan_points

        all_points = select_points(list(plan_points(loaded)), doc.get("only") or None)
    view = RunView.from_run_dir(run_dir)
    done = view.finished_ids()
    todo = [p for p in select_points(all_points, only) if p.point_id not in done]
    notes = stop_leftovers(paths.engines)
    return RunHandle(
        paths=paths,
        loaded=loaded,
        points=todo,
        all_points=all_points,
        done=done & {p.point_id for p in all_points},
        prior_attempts=view.attempts(),
        resumed=bool(view.sessions),
        spec_path=str(orig),
        adapter_factory=adapter_factory,
        engine_warmup=engine_warmup,
        lock=lock,
        notes=notes,
    )

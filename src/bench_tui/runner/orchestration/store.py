"""The run directory (DESIGN.md "Run directory") and the bookkeeping that resume needs.

    runs/<utc-time>_<id>/
      spec.yaml       the spec file exactly as given (``${VAR}`` references unexpanded)
      resolved.json   the expanded plan and the resolved spec, secrets redacted
      events.jsonl    every event, appended and flushed as it happens (runner.eventlog.EventLog)
      engines/        engine logs (engines/<name>.<variant>.log, written by the adapters)
      env.json        host, CPU/GPU, engines (envinfo.capture_env)
      report.md/html  written at the end by bench_tui.reports.render
      .lock           flock()ed by the one session writing to the directory (:class:`RunLock`)

Resume rules: a point is *finished* when events.jsonl holds a ``PointFinished`` for it with status ok,
degraded or failed (a skipped point runs again, and so does one that failed only because its engine could
not start: flag ``engine-start-failed``). Each attempt at a point starts with a ``PointStarted``;
request ids carry the attempt number (``<point_id>@<attempt>:...``), and only the records of the attempt
that finished belong to the point (``runner.view.RunView`` folds the events and applies these rules), so a
request of a killed attempt is never counted next to the rerun.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets as _secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import (
    Event,
    PlanPoint,
    read_events,
)
from bench_tui.runner.orchestration.runlist import register_run_dir
from bench_tui.spec.secrets import redact

SPEC_FILE = "spec.yaml"
RESOLVED_FILE = "resolved.json"
EVENTS_FILE = "events.jsonl"
ENV_FILE = "env.json"
ENGINES_DIR = "engines"
LOCK_FILE = ".lock"


class RunDirError(ValueError):
    """Not a usable run directory (the message says why, for a person)."""


@dataclass(frozen=True)
class RunPaths:
    run_dir: Path

    @property
    def spec(self) -> Path:
        return self.run_dir / SPEC_FILE

    @property
    def resolved(self) -> Path:
        return self.run_dir / RESOLVED_FILE

    @property
    def events(self) -> Path:
        return self.run_dir / EVENTS_FILE

    @property
    def env(self) -> Path:
        return self.run_dir / ENV_FILE

    @property
    def engines(self) -> Path:
        return self.run_dir / ENGINES_DIR

    @property
    def lock(self) -> Path:
        return self.run_dir / LOCK_FILE

    @property
    def run_id(self) -> str:
        return self.run_dir.name


class RunLocked(RunDirError):
    """Another session holds the run directory's lock."""


class RunLock:
    """One writer per run directory: an exclusive ``flock`` on ``<run_dir>/.lock``, held while the session lives.

    The kernel drops it when the holder's last descriptor closes, so a killed runner never leaves a stale lock.
    The descriptor is close-on-exec (engines never hold it); a child process that takes over the run gets it
    explicitly (``fd`` + :meth:`adopt`). The holder's pid is written into the file for the refusal message.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd: int | None = fd

    @classmethod
    def acquire(cls, run_dir: Path) -> RunLock:
        path = Path(run_dir) / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise RunDirError(f"{run_dir}: cannot open its lock file ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with contextlib.suppress(OSError, ValueError):
                holder = os.pread(fd, 64, 0).decode().strip()
            os.close(fd)
            who = (
                f"another bench-tui session (pid {holder})"
                if holder.isdigit()
                else "another bench-tui session"
            )
            raise RunLocked(
                f"{run_dir} is in use by {who}: only one run or resume may write to a run "
                f"directory at a time; wait for it to finish or stop it first"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise RunDirError(f"{run_dir}: cannot lock it ({exc.strerror or exc})") from None
        lock = cls(path, fd)
        lock.stamp()
        return lock

    @classmethod
    def adopt(cls, run_dir: Path, fd: int) -> RunLock:
        """The lock a parent process passed down (same open file, so the lock is already ours)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunLocked(f"{run_dir}: the lock handed to this process is not held") from None
        os.set_inheritable(fd, False)
        lock = cls(Path(run_dir) / LOCK_FILE, fd)
        lock.stamp()
        return lock

    def stamp(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.release()


def new_run_id(now: float | None = None) -> str:
    """``<utc-time>_<id>``, e.g. ``20261202T222501Z_3fa9c1``: sorts by time, unique by the random tail."""
    t = time.gmtime(now if now is not None else time.time())
    return time.strftime("%Y%m%dT%H%M%SZ", t) + "_" + _secrets.token_hex(3)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def create_run_dir(runs_dir: Path, spec_text: str, *, run_id: str | None = None) -> RunPaths:
    """Make ``runs_dir/<run_id>/`` with spec.yaml (as given) and engines/."""
    runs_dir = Path(runs_dir)
    hint = "set runs_dir in the spec, or pass --runs-dir, to a folder you can write"
    if runs_dir.exists() and not runs_dir.is_dir():
        raise RunDirError(f"runs directory {runs_dir} is a file, not a folder; {hint}")
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(
            f"cannot create the runs directory {runs_dir}: {exc.strerror or exc}; {hint}"
        ) from None
    for _ in range(5):
        rid = run_id or new_run_id()
        run_dir = runs_dir / rid
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            if run_id is not None:
                raise RunDirError(f"{run_dir} already exists") from None
        except OSError as exc:
            raise RunDirError(
                f"cannot create a run directory in {runs_dir}: {exc.strerror or exc}; {hint}"
            ) from None
    else:  # pragma: no cover - five random collisions in one second
        raise RunDirError(f"could not create a new run directory in {runs_dir}")
    paths = RunPaths(run_dir)
    try:
        paths.engines.mkdir()
        _atomic_write(paths.spec, spec_text.encode())
    except OSError as exc:
        raise RunDirError(f"cannot write into {run_dir}: {exc.strerror or exc}; {hint}") from None
    register_run_dir(run_dir)  # the per-user list `history` reads (never fails the run)
    return paths


def to_jsonable(obj: Any) -> Any:
    return msgspec.to_builtins(obj)


def write_resolved(
    paths: RunPaths,
    *,
    spec: Any,
    points: list[PlanPoint],
    spec_path: str,
    only: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    secrets: set[str] | frozenset[str] | None = None,
) -> None:
    """resolved.json: the resolved spec and the plan, secrets redacted (spec.secrets.redact)."""
    doc: dict[str, Any] = {
        "run_id": paths.run_id,
        "spec_path": spec_path,
        "only": only or [],
        "spec": to_jsonable(spec),
        "plan": [to_jsonable(p) for p in points],
    }
    if extra:
        doc.update(extra)
    doc = redact(doc, secrets)
    _atomic_write(paths.resolved, json.dumps(doc, indent=2, sort_keys=False).encode())


def read_resolved(run_dir: Path) -> dict[str, Any]:
    paths = RunPaths(Path(run_dir))
    if not paths.resolved.is_file():
        raise RunDirError(f"{run_dir} is not a run directory (no {RESOLVED_FILE})")
    try:
        doc: dict[str, Any] = json.loads(paths.resolved.read_text())
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{paths.resolved}: unreadable ({exc})") from None
    return doc


def plan_from_resolved(doc: dict[str, Any]) -> list[PlanPoint]:
    return [msgspec.convert(p, PlanPoint) for p in doc.get("plan", [])]


def write_env(paths: RunPaths, env: dict[str, Any], secrets: set[str] | frozenset[str] | None = None) -> None:
    _atomic_write(paths.env, json.dumps(redact(env, secrets), indent=2, default=str).encode())


# ------------------------------------------------------------------------------------------------ reading


def load_events(run_dir: Path) -> list[Event]:
    path = RunPaths(Path(run_dir)).events
    if not path.is_file():
        return []
    return read_events(str(path))

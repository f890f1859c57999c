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
that finished belong to the point (:func:`point_records`), so a request of a killed attempt is never
counted next to the rerun.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets as _secrets
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import (
    Event,
    PlanPoint,
    PointFinished,
    PointStarted,
    RequestFinished,
    RequestRecord,
    read_events,
)

FINISHED_STATUSES = frozenset({"ok", "degraded", "failed"})
RETRY_FLAGS = frozenset({"engine-start-failed"})  # a point failed only for these runs again on resume

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
            who = f"another bench-tui session (pid {holder})" if holder.isdigit() else "another bench-tui session"
            raise RunLocked(f"{run_dir} is in use by {who}: only one run or resume may write to a run "
                            f"directory at a time; wait for it to finish or stop it first") from None
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
    runs_dir.mkdir(parents=True, exist_ok=True)
    for _ in range(5):
        rid = run_id or new_run_id()
        run_dir = runs_dir / rid
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            if run_id is not None:
                raise RunDirError(f"{run_dir} already exists") from None
    else:  # pragma: no cover - five random collisions in one second
        raise RunDirError(f"could not create a new run directory in {runs_dir}")
    paths = RunPaths(run_dir)
    paths.engines.mkdir()
    _atomic_write(paths.spec, spec_text.encode())
    return paths


def to_jsonable(obj: Any) -> Any:
    return msgspec.to_builtins(obj)


def write_resolved(paths: RunPaths, *, spec: Any, points: list[PlanPoint], spec_path: str,
                   only: list[str] | None = None, extra: dict[str, Any] | None = None,
                   secrets: set[str] | frozenset[str] | None = None) -> None:
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


def redact(obj: Any, secrets: set[str] | frozenset[str] | None = None) -> Any:
    """spec.secrets.redact (secret-like keys, and every known secret value wherever it appears)."""
    try:
        from bench_tui.spec.secrets import redact as _redact
    except ImportError:  # the spec package's redactor not there: a conservative local one
        out = _fallback_redact(obj)
        for v in secrets or ():
            if v:
                out = _scrub_values(out, v)
        return out
    return _redact(obj, secrets) if secrets else _redact(obj)


def _scrub_values(obj: Any, secret: str) -> Any:
    if isinstance(obj, str):
        return obj.replace(secret, "***")
    if isinstance(obj, dict):
        return {k: _scrub_values(v, secret) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub_values(v, secret) for v in obj]
    return obj


_SECRETISH = ("api_key", "apikey", "token", "secret", "password", "authorization")


def _fallback_redact(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: ("***" if isinstance(k, str) and any(s in k.lower() for s in _SECRETISH) and v
                    else _fallback_redact(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_fallback_redact(v) for v in obj]
    return obj


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


def retry_on_resume(ev: PointFinished) -> bool:
    """A failed point whose only trouble was that its engine could not start: resume runs it again."""
    return ev.status == "failed" and any(f.split(":", 1)[0] in RETRY_FLAGS for f in ev.flags)


def finished_point_ids(events: list[Event] | Path) -> set[str]:
    """Point ids whose last PointFinished has status ok/degraded/failed and is not :func:`retry_on_resume`
    (a torn last line is ignored)."""
    if isinstance(events, Path):
        events = load_events(events)
    last: dict[str, PointFinished] = {}
    for e in events:
        if isinstance(e, PointFinished) and e.status in FINISHED_STATUSES:
            last[e.point_id] = e
    return {pid for pid, e in last.items() if not retry_on_resume(e)}


def attempts(events: list[Event]) -> dict[str, int]:
    """How many times each point was started (PointStarted events)."""
    out: dict[str, int] = defaultdict(int)
    for e in events:
        if isinstance(e, PointStarted):
            out[e.point_id] += 1
    return dict(out)


STORED_TEXT_CHARS = 4000  # per text field of a stored request record (events.jsonl)


def _cap(text: str) -> str:
    if len(text) <= STORED_TEXT_CHARS:
        return text
    return text[:STORED_TEXT_CHARS] + f"\n[bench-tui: {len(text) - STORED_TEXT_CHARS} more characters not stored]"


def stored_record(rec: RequestRecord) -> RequestRecord:
    """The record as written to events.jsonl: content, reasoning and tool-call arguments capped at
    ``STORED_TEXT_CHARS`` each, so a runaway generation cannot grow the run directory without bound. Timings
    and token counts are untouched; scenario points keep their full text in ``ScenarioTurn`` /
    ``ScenarioGraded`` transcripts. The caller keeps the full record in memory."""
    calls = rec.tool_calls
    long_call = any(len(c.arguments) > STORED_TEXT_CHARS for c in calls)
    if len(rec.content) <= STORED_TEXT_CHARS and len(rec.reasoning) <= STORED_TEXT_CHARS and not long_call:
        return rec
    if long_call:
        calls = [msgspec.structs.replace(c, arguments=_cap(c.arguments)) for c in calls]
    return msgspec.structs.replace(rec, content=_cap(rec.content), reasoning=_cap(rec.reasoning),
                                   tool_calls=calls)


def request_id(point_id: str, attempt: int, tag: str) -> str:
    return f"{point_id}@{attempt}:{tag}"


def attempt_of(request_id_: str) -> int | None:
    """The attempt number in a request id made by :func:`request_id` (None for foreign ids)."""
    head, sep, _ = request_id_.rpartition(":")
    if not sep or "@" not in head:
        return None
    try:
        return int(head.rsplit("@", 1)[1])
    except ValueError:
        return None


def point_records(events: list[Event], *, include_warmup: bool = False) -> dict[str, list[RequestRecord]]:
    """Request records per finished point, from the attempt that finished only.

    The attempt of a PointFinished is the number of PointStarted events for that point seen before it.
    """
    started: dict[str, int] = defaultdict(int)
    final_attempt: dict[str, int] = {}
    for e in events:
        if isinstance(e, PointStarted):
            started[e.point_id] += 1
        elif isinstance(e, PointFinished) and e.status in FINISHED_STATUSES:
            final_attempt[e.point_id] = started[e.point_id]
    out: dict[str, list[RequestRecord]] = {pid: [] for pid in final_attempt}
    for e in events:
        if isinstance(e, RequestFinished) and (include_warmup or not e.warmup):
            pid = e.record.point_id
            if pid not in final_attempt:
                continue
            att = attempt_of(e.record.request_id)
            if att is None or att == final_attempt[pid]:
                out[pid].append(e.record)
    return out


def last_point_finished(events: list[Event]) -> dict[str, PointFinished]:
    out: dict[str, PointFinished] = {}
    for e in events:
        if isinstance(e, PointFinished) and e.status in FINISHED_STATUSES:
            out[e.point_id] = e
    return out

"""The run directory (DESIGN.md "Run directory") and the bookkeeping that resume needs.

    runs/<utc-time>_<id>/
      spec.yaml       the spec file exactly as given (``${VAR}`` references unexpanded)
      resolved.json   the expanded plan and the resolved spec, secrets redacted
      events.jsonl    every event, appended and flushed as it happens (runner.eventlog.EventLog)
      engines/        engine logs (engines/<name>.<variant>.log, written by the adapters)
      env.json        host, CPU/GPU, engines (envinfo.capture_env)
      report.md/html  written at the end by bench_tui.reports.render

Resume rules: a point is *finished* when events.jsonl holds a ``PointFinished`` for it with status ok,
degraded or failed (a skipped point runs again). Each attempt at a point starts with a ``PointStarted``;
request ids carry the attempt number (``<point_id>@<attempt>:...``), and only the records of the attempt
that finished belong to the point (:func:`point_records`), so a request of a killed attempt is never
counted next to the rerun.
"""

from __future__ import annotations

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
    attempt_of,
    read_events,
)
from bench_tui.runner.orchestration.registry import register_run_dir
from bench_tui.spec.secrets import redact

FINISHED_STATUSES = frozenset({"ok", "degraded", "failed"})

SPEC_FILE = "spec.yaml"
RESOLVED_FILE = "resolved.json"
EVENTS_FILE = "events.jsonl"
ENV_FILE = "env.json"
ENGINES_DIR = "engines"


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
    def run_id(self) -> str:
        return self.run_dir.name


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
        raise RunDirError(f"cannot create the runs directory {runs_dir}: {exc.strerror or exc}; {hint}") from None
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
            raise RunDirError(f"cannot create a run directory in {runs_dir}: {exc.strerror or exc}; {hint}") from None
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


def finished_point_ids(events: list[Event] | Path) -> set[str]:
    """Point ids with a PointFinished of status ok/degraded/failed (a torn last line is ignored)."""
    if isinstance(events, Path):
        events = load_events(events)
    return {e.point_id for e in events if isinstance(e, PointFinished) and e.status in FINISHED_STATUSES}


def attempts(events: list[Event]) -> dict[str, int]:
    """How many times each point was started (PointStarted events)."""
    out: dict[str, int] = defaultdict(int)
    for e in events:
        if isinstance(e, PointStarted):
            out[e.point_id] += 1
    return dict(out)


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

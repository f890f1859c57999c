"""RunView: the one fold of a run's event stream.

Every reader of a run folds ``events.jsonl`` (or a live stream) through this class: resume (which points are
finished, how often each was attempted), the reports and compare (points, engines, scenarios, warnings), the
TUI (which adds only what is on screen: requests in flight, the log, the charts) and history. So a point's
status, its attempts and the records of the attempt that finished mean the same thing everywhere.

    view = RunView.from_run_dir(run_dir)          # or: view = RunView(); view.apply(event) per live event
    view.points["llama.default/sweep/pp512-tg64-d0-c1"].status

A resumed run appends a second ``run_started`` and ``plan_ready``: points finished before keep their status,
summary and records. A ``point_finished`` for a point no plan names (only a torn log lacks its plan) is kept
in ``unplanned`` and never guessed into a table.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench_tui.events import (
    AcceptanceParams,
    Conditions,
    EngineCrashed,
    EngineReady,
    EngineStarting,
    EngineStats,
    EngineStopped,
    Event,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointParams,
    PointStarted,
    PointSummary,
    RequestFinished,
    RequestRecord,
    RunFinished,
    RunStarted,
    RunWarning,
    ScenarioGraded,
    ThroughputParams,
    attempt_of,
    read_events,
)

FINISHED_STATUSES = frozenset({"ok", "degraded", "failed"})  # a point resume does not run again...
RETRY_FLAGS = frozenset({"engine-start-failed"})  # ...unless it failed only for one of these
DONE_STATUSES = FINISHED_STATUSES | {"skipped"}  # a point this session will not run again

# event types no whole-run reader needs decoded (fast on big runs); records are read only when asked for
HIGH_VOLUME = (
    "request_started",
    "request_first_token",
    "request_progress",
    "engine_log",
    "metrics_scraped",
    "engine_stats",
)


@dataclass
class PointView:
    """One planned point: its parameters (typed), what happened to it, and its finishing attempt's records."""

    point: PlanPoint
    status: str = "pending"  # pending | running | ok | degraded | failed | skipped
    attempts: int = 0  # point_started events seen
    index: int = 0  # position in the session that ran it
    summary: PointSummary | None = None
    flags: list[str] = field(default_factory=list)
    conditions: Conditions | None = None  # the machine around the attempt that finished (envinfo.conditions)
    ts: float | None = None  # when it finished
    finished_attempt: int | None = None
    records: list[RequestRecord] = field(default_factory=list)  # measured, of the finishing attempt
    warmup_records: list[RequestRecord] = field(default_factory=list)
    _pending: list[tuple[RequestRecord, bool]] = field(default_factory=list, repr=False)

    # the plan point's identity, read through
    @property
    def point_id(self) -> str:
        return self.point.point_id

    @property
    def engine(self) -> str:
        return self.point.engine

    @property
    def variant(self) -> str:
        return self.point.variant

    @property
    def workload(self) -> str:
        return self.point.workload

    @property
    def kind(self) -> str:
        return self.point.kind

    @property
    def params(self) -> PointParams:
        return self.point.params

    @property
    def key(self) -> str:
        """``engine.variant``: the column a point belongs to in comparisons."""
        return f"{self.point.engine}.{self.point.variant}"

    @property
    def session(self) -> int:
        """The engine session that measured it (1..N with ``matrix.sessions: N``; 0: the only one)."""
        return self.point.session

    @property
    def column(self) -> str:
        """``engine.variant``, with ``#session`` when the variant ran several engine sessions."""
        return self.key + (f"#{self.session}" if self.session else "")

    # typed parameters every table uses
    @property
    def depth(self) -> int:
        return self.params.depth if isinstance(self.params, ThroughputParams | AcceptanceParams) else 0

    @property
    def concurrency(self) -> int:
        return self.params.concurrency

    @property
    def pp(self) -> int | None:
        return self.params.pp if isinstance(self.params, ThroughputParams) else None

    @property
    def tg(self) -> int | None:
        return self.params.tg if isinstance(self.params, ThroughputParams | AcceptanceParams) else None

    @property
    def content(self) -> str | None:
        return self.params.content if isinstance(self.params, AcceptanceParams) else None

    # what happened
    @property
    def finished(self) -> bool:
        """Finished for good: resume does not run it again (a point that failed only because its engine
        could not start is run again)."""
        if self.status == "failed" and any(f.split(":", 1)[0] in RETRY_FLAGS for f in self.flags):
            return False
        return self.status in FINISHED_STATUSES

    @property
    def degraded(self) -> bool:
        return self.status == "degraded" or any(f.startswith("degraded") for f in self.flags)

    @property
    def client_limited(self) -> bool:
        return bool(self.summary and self.summary.client_limited) or "client-limited" in self.flags

    @property
    def token_disagreement(self) -> bool:
        return bool(self.summary and self.summary.token_disagreements) or any(
            f.startswith("token-disagreement") for f in self.flags
        )


@dataclass
class EngineView:
    engine: str
    variant: str
    state: str = "starting"  # starting | ready | stopped | crashed
    command: list[str] = field(default_factory=list)
    log_path: str = ""
    pid: int | None = None
    base_url: str = ""
    model_id: str = ""
    version: str = ""
    startup_s: float | None = None
    crashes: list[EngineCrashed] = field(default_factory=list)
    stopped: str | None = None  # the reason, once stopped
    stats: EngineStats | None = None

    @property
    def key(self) -> str:
        return f"{self.engine}.{self.variant}"


class RunView:
    """A run folded from its events; ``apply`` one event at a time (live) or build it from a run directory."""

    def __init__(self, *, keep_records: bool = False) -> None:
        self.keep_records = keep_records
        self.sessions: list[RunStarted] = []  # one per run / resume session
        self.finished: RunFinished | None = None  # the last session's end
        self.points: dict[str, PointView] = {}  # plan order
        self.unplanned: list[PointFinished] = []
        self.current_point: str | None = None
        self.estimated_requests = 0
        self.engines: dict[str, EngineView] = {}
        self.scenarios: list[ScenarioGraded] = []
        self.warnings: list[RunWarning] = []
        self.first_ts: float | None = None
        self.last_ts = 0.0

    # ------------------------------------------------------------------------------------------ building

    @classmethod
    def from_events(cls, events: Iterable[Event], *, keep_records: bool = False) -> RunView:
        view = cls(keep_records=keep_records)
        for ev in events:
            view.apply(ev)
        return view

    @classmethod
    def from_run_dir(cls, run_dir: str | os.PathLike[str], *, keep_records: bool = False) -> RunView:
        """Fold ``RUN_DIR/events.jsonl`` (a missing file is an empty run). Without ``keep_records`` the
        high-volume events are not even decoded."""
        path = Path(run_dir) / "events.jsonl"
        if not path.is_file():
            return cls(keep_records=keep_records)
        skip = HIGH_VOLUME if keep_records else (*HIGH_VOLUME, "request_finished")
        return cls.from_events(read_events(path, skip_types=skip), keep_records=keep_records)

    # ------------------------------------------------------------------------------------------ queries

    @property
    def run(self) -> RunStarted | None:
        """The first session's start (run id, spec name)."""
        return self.sessions[0] if self.sessions else None

    @property
    def status(self) -> str:
        """completed | aborted | failed | incomplete (no run_finished yet: running, or killed)."""
        return self.finished.status if self.finished is not None else "incomplete"

    @property
    def points_total(self) -> int:
        return len(self.points)

    @property
    def points_done(self) -> int:
        return sum(1 for p in self.points.values() if p.status in DONE_STATUSES)

    def finished_ids(self) -> set[str]:
        """Points resume will not run again (finished ok, degraded or failed)."""
        return {pid for pid, p in self.points.items() if p.finished}

    def attempts(self) -> dict[str, int]:
        return {pid: p.attempts for pid, p in self.points.items() if p.attempts}

    def records(self, *, include_warmup: bool = False) -> dict[str, list[RequestRecord]]:
        """Request records per finished point, of the attempt that finished only (needs ``keep_records``)."""
        return {
            pid: [*p.records, *(p.warmup_records if include_warmup else [])]
            for pid, p in self.points.items()
            if p.finished
        }

    def of_kind(self, kind: str) -> list[PointView]:
        return [p for p in self.points.values() if p.kind == kind]

    # ------------------------------------------------------------------------------------------ folding

    def apply(self, ev: Event) -> bool:  # noqa: C901 - one branch per event type
        """Fold one event; True when it changed what the view holds."""
        self.last_ts = max(self.last_ts, ev.ts)
        if self.first_ts is None:
            self.first_ts = ev.ts
        if isinstance(ev, RequestFinished):
            if not self.keep_records:
                return False
            p = self.points.get(ev.record.point_id)
            if p is None:
                return False
            p._pending.append((ev.record, ev.warmup))
            return True
        if isinstance(ev, PointStarted):
            p = self.points.get(ev.point_id)
            if p is not None:
                p.status, p.index = "running", ev.index
                p.attempts += 1
            self.current_point = ev.point_id
            return True
        if isinstance(ev, PointFinished):
            if self.current_point == ev.point_id:
                self.current_point = None
            p = self.points.get(ev.point_id)
            if p is None:
                self.unplanned.append(ev)
                return True
            p.status, p.flags, p.ts, p.conditions = ev.status, list(ev.flags), ev.ts, ev.conditions
            p.summary = ev.summary if ev.status != "skipped" else None
            if ev.status in FINISHED_STATUSES:
                p.finished_attempt = p.attempts
                self._settle_records(p)
            return True
        if isinstance(ev, EngineStats):
            eng = self._engine(ev.engine, ev.variant)
            eng.stats = ev
            if eng.state == "starting":  # gauges only come from a serving engine
                eng.state = "ready"
            return True
        if isinstance(ev, ScenarioGraded):
            self.scenarios.append(ev)
            return True
        if isinstance(ev, RunWarning):
            self.warnings.append(ev)
            return True
        if isinstance(ev, PlanReady):
            # a resumed run plans again: points seen before keep what happened to them
            before = self.points
            self.points = {}
            for pt in ev.points:
                old = before.get(pt.point_id)
                if old is not None:
                    old.point = pt
                self.points[pt.point_id] = old if old is not None else PointView(pt)
            self.estimated_requests = ev.estimated_requests
            return True
        if isinstance(ev, RunStarted):
            self.sessions.append(ev)
            self.finished = None
            return True
        if isinstance(ev, RunFinished):
            self.finished = ev  # a point still "running" was interrupted: resume runs it again
            self.current_point = None
            return True
        if isinstance(ev, EngineStarting):
            eng = self._engine(ev.engine, ev.variant)
            eng.state, eng.command, eng.log_path, eng.pid = "starting", list(ev.command), ev.log_path, ev.pid
            return True
        if isinstance(ev, EngineReady):
            eng = self._engine(ev.engine, ev.variant)
            eng.state, eng.base_url, eng.model_id = "ready", ev.base_url, ev.model_id
            eng.version, eng.startup_s = ev.version, ev.startup_s
            return True
        if isinstance(ev, EngineStopped):
            eng = self._engine(ev.engine, ev.variant)
            eng.state, eng.stopped = "stopped", ev.reason
            return True
        if isinstance(ev, EngineCrashed):
            eng = self._engine(ev.engine, ev.variant)
            eng.state = "crashed"
            eng.crashes.append(ev)
            return True
        return False

    def _settle_records(self, p: PointView) -> None:
        if not self.keep_records:
            return
        p.records, p.warmup_records = [], []
        for rec, warm in p._pending:
            att = attempt_of(rec.request_id)
            if att is None or att == p.finished_attempt:
                (p.warmup_records if warm else p.records).append(rec)
        p._pending = []

    def _engine(self, engine: str, variant: str) -> EngineView:
        key = f"{engine}.{variant}"
        eng = self.engines.get(key)
        if eng is None:
            eng = self.engines[key] = EngineView(engine, variant)
        return eng

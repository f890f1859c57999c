"""A run directory as plain data: what the reports, comparisons, bundles and history are made from.

``load_run(run_dir)`` reads spec.yaml, events.jsonl and env.json (nothing else is needed) and returns a
``RunModel``. It is a pure function of the directory: no clock, no engine, no network. Scores come from
``bench_tui.graders.regrade.score_run_dir`` (stored verdicts + the spec's overrides); when the pack cannot
be found (a bundle opened elsewhere) the ``scores.json`` a previous report wrote is used instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import (
    AcceptanceParams,
    EngineCrashed,
    EngineReady,
    EngineStarting,
    EngineStopped,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointParams,
    PointStarted,
    PointSummary,
    RunFinished,
    RunStarted,
    RunWarning,
    ScenarioGraded,
    ScenarioParams,
    ThroughputParams,
    read_events,
)

SCORES_FILE = "scores.json"


class RunDirError(Exception):
    """Not a readable run directory (message for the user)."""


@dataclass
class EngineSetup:
    engine: str
    variant: str
    command: list[str] = field(default_factory=list)
    version: str = ""
    model_id: str = ""
    base_url: str = ""
    startup_s: float | None = None
    log_path: str = ""
    crashes: list[str] = field(default_factory=list)
    crash_tails: list[list[str]] = field(default_factory=list)  # last engine log lines before each crash
    stopped: str = ""

    @property
    def key(self) -> str:
        return f"{self.engine}.{self.variant}"


@dataclass
class PointRow:
    point_id: str
    engine: str
    variant: str
    workload: str
    kind: str
    params: PointParams
    status: str = "not run"  # ok | degraded | failed | skipped | not run | running
    flags: list[str] = field(default_factory=list)
    summary: PointSummary | None = None
    ts: float | None = None

    @property
    def key(self) -> str:
        return f"{self.engine}.{self.variant}"

    @property
    def depth(self) -> int:
        return 0 if isinstance(self.params, ScenarioParams) else self.params.depth

    @property
    def concurrency(self) -> int:
        return self.params.concurrency

    @property
    def pp(self) -> int | None:
        return self.params.pp if isinstance(self.params, ThroughputParams) else None

    @property
    def tg(self) -> int | None:
        return None if isinstance(self.params, ScenarioParams) else self.params.tg

    @property
    def content(self) -> str | None:
        return self.params.content if isinstance(self.params, AcceptanceParams) else None

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
class Caveat:
    code: str
    message: str
    point_id: str | None = None


@dataclass
class RunModel:
    run_dir: Path
    run_id: str = ""
    spec_name: str = ""
    title: str = ""
    description: str = ""
    notes: str = ""
    spec_text: str = ""
    spec: Any = None  # bench_tui.spec.schema.Spec, or None when spec.yaml does not parse
    spec_error: str = ""
    env: dict[str, Any] = field(default_factory=dict)
    status: str = "incomplete"  # completed | aborted | failed | incomplete
    status_message: str = ""
    points_total: int = 0
    points_done: int = 0
    started_ts: float | None = None
    finished_ts: float | None = None
    points: list[PointRow] = field(default_factory=list)
    engines: dict[str, EngineSetup] = field(default_factory=dict)
    warnings: list[RunWarning] = field(default_factory=list)
    scores: list[Any] = field(default_factory=list)  # graders.scoring.ScoreReport
    score_source: str = ""  # "events" | "scores.json" | "events (no pack)" | ""
    score_error: str = ""
    baseline: str | None = None
    formats: list[str] = field(default_factory=lambda: ["md", "html"])
    caveats: list[Caveat] = field(default_factory=list)

    def variants(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.points:
            seen.setdefault(p.key, None)
        for k in self.engines:
            seen.setdefault(k, None)
        return list(seen)

    def of_kind(self, kind: str, *, measured: bool = True) -> list[PointRow]:
        return [p for p in self.points if p.kind == kind and (p.summary is not None or not measured)]

    def point(self, point_id: str) -> PointRow | None:
        for p in self.points:
            if p.point_id == point_id:
                return p
        return None


def _split_point_id(point_id: str) -> tuple[str, str, str]:
    head, _, rest = point_id.partition("/")
    engine, _, variant = head.partition(".")
    return engine, variant or "default", rest.split("/")[0]


def _load_spec(path: Path) -> tuple[Any, str]:
    if not path.is_file():
        return None, f"{path.name} missing"
    from bench_tui.spec.loader import load_stored_spec

    try:
        return load_stored_spec(path), ""
    except Exception as exc:  # noqa: BLE001 - a report of a run with a broken spec still renders, and says why
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _scores(run_dir: Path, graded: list[ScenarioGraded], points: dict[str, PointRow], spec: Any) -> tuple[list[Any], str, str]:
    if not graded:
        return [], "", ""
    err = ""
    try:
        from bench_tui.graders.regrade import score_run_dir

        reps, _ = score_run_dir(run_dir)
        return reps, "events", ""
    except Exception as exc:  # noqa: BLE001 - RegradeError / PackError / OverrideError: fall back, say why
        err = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    from bench_tui.graders.scoring import ScoreReport, score

    stored = run_dir / SCORES_FILE
    if stored.is_file():
        try:
            reps = msgspec.json.decode(stored.read_bytes(), type=list[ScoreReport])
            return reps, SCORES_FILE, err
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            pass
    groups: dict[tuple[str, str, str], list[ScenarioGraded]] = {}
    for g in graded:
        p = points.get(g.point_id)
        key = (p.engine, p.variant, p.workload) if p else _split_point_id(g.point_id)
        groups.setdefault(key, []).append(g)
    grading = getattr(spec, "grading", None)
    reps = []
    for (eng, var, wl), items in sorted(groups.items()):
        try:
            reps.append(
                score(items, [], engine=eng, variant=var, alpha=getattr(grading, "alpha", 0.7),
                      target_ms=getattr(grading, "responsiveness_target_ms", 2000.0), workload=wl)
            )  # fmt: skip
        except Exception:  # noqa: BLE001
            continue
    return reps, "events (no pack, no overrides)", err


# per-request and raw-scrape events: the point summaries already hold what the reports need
def load_run(run_dir: Path | str) -> RunModel:
    run_dir = Path(run_dir)
    ev_path = run_dir / "events.jsonl"
    if not ev_path.is_file():
        raise RunDirError(f"{run_dir}: not a run directory (no events.jsonl)")
    try:
        # the reports need no per-request detail: skip decoding the high-volume events (fast on big runs)
        events = read_events(ev_path, skip_types=("request_", "engine_log", "metrics_scraped", "engine_stats"))
    except OSError as exc:
        raise RunDirError(f"{ev_path}: {exc}") from None
    m = RunModel(run_dir=run_dir, run_id=run_dir.name)
    spec_path = run_dir / "spec.yaml"
    if spec_path.is_file():
        m.spec_text = spec_path.read_text(encoding="utf-8", errors="replace")
    m.spec, m.spec_error = _load_spec(spec_path)
    env_path = run_dir / "env.json"
    if env_path.is_file():
        try:
            env = json.loads(env_path.read_text(encoding="utf-8"))
            m.env = env if isinstance(env, dict) else {}
        except (OSError, ValueError):
            m.caveats.append(Caveat("env", "env.json does not parse: hardware and versions unknown"))
    rows: dict[str, PointRow] = {}
    graded: list[ScenarioGraded] = []
    finished: RunFinished | None = None
    started_points: set[str] = set()
    for ev in events:
        if isinstance(ev, RunStarted):
            m.run_id = ev.run_id or m.run_id
            m.spec_name = ev.spec_name
            m.started_ts = ev.ts if m.started_ts is None else m.started_ts
        elif isinstance(ev, PlanReady):
            for pp in ev.points:
                rows.setdefault(pp.point_id, _row_of(pp))
            m.points_total = max(m.points_total, len(ev.points))
        elif isinstance(ev, EngineStarting):
            es = m.engines.setdefault(f"{ev.engine}.{ev.variant}", EngineSetup(ev.engine, ev.variant))
            es.command, es.log_path = list(ev.command), ev.log_path
        elif isinstance(ev, EngineReady):
            es = m.engines.setdefault(f"{ev.engine}.{ev.variant}", EngineSetup(ev.engine, ev.variant))
            es.version, es.model_id, es.base_url, es.startup_s = ev.version, ev.model_id, ev.base_url, ev.startup_s
        elif isinstance(ev, EngineCrashed):
            es = m.engines.setdefault(f"{ev.engine}.{ev.variant}", EngineSetup(ev.engine, ev.variant))
            es.crashes.append(
                f"exit {ev.returncode}" + (f" during {ev.point_id}" if ev.point_id else "")
                + (" (restarted)" if ev.will_restart else "")
            )  # fmt: skip
            if ev.log_tail:
                es.crash_tails.append(list(ev.log_tail[-12:]))
        elif isinstance(ev, EngineStopped):
            es = m.engines.setdefault(f"{ev.engine}.{ev.variant}", EngineSetup(ev.engine, ev.variant))
            es.stopped = ev.reason
        elif isinstance(ev, PointStarted):
            started_points.add(ev.point_id)
        elif isinstance(ev, PointFinished):
            row = rows.get(ev.point_id)
            if row is None:  # only a torn log lacks the plan: say so rather than guess the point's parameters
                m.warnings.append(RunWarning(code="plan", point_id=ev.point_id, message=f"{ev.point_id} finished but is not in the run's plan; "
                                             "left out of the tables", ts=ev.ts))
                continue
            row.status, row.flags, row.ts = ev.status, list(ev.flags), ev.ts
            row.summary = ev.summary if ev.status != "skipped" else None
        elif isinstance(ev, ScenarioGraded):
            graded.append(ev)
        elif isinstance(ev, RunWarning):
            m.warnings.append(ev)
        elif isinstance(ev, RunFinished):
            finished = ev
            m.finished_ts = ev.ts
    for pid in started_points:
        if pid in rows and rows[pid].status == "not run":
            rows[pid].status = "running"
    m.points = list(rows.values())
    m.points_done = sum(1 for p in m.points if p.status in ("ok", "degraded", "failed", "skipped"))
    m.points_total = max(m.points_total, len(m.points))
    if finished is not None:
        m.status, m.status_message = finished.status, finished.message
        m.points_done = max(m.points_done, finished.points_done)
        m.points_total = max(m.points_total, finished.points_total)
    spec = m.spec
    m.title = (spec.report.title if spec is not None and spec.report.title else "") or m.spec_name or m.run_id
    if spec is not None:
        m.description, m.notes = spec.description, spec.report.notes
        m.baseline = spec.report.baseline
        m.formats = list(spec.report.formats)
        m.spec_name = m.spec_name or spec.name
    m.scores, m.score_source, m.score_error = _scores(run_dir, graded, rows, spec)
    if m.baseline is None and m.variants():
        m.baseline = m.variants()[0]
    m.caveats.extend(_caveats(m))
    return m


def _row_of(pp: PlanPoint) -> PointRow:
    return PointRow(pp.point_id, pp.engine, pp.variant, pp.workload, pp.kind, pp.params)


def _caveats(m: RunModel) -> list[Caveat]:
    out: list[Caveat] = []
    if m.status == "incomplete":
        out.append(Caveat("incomplete", f"the run is incomplete: {m.points_done} of {m.points_total} points "
                                        "finished and no run_finished event was recorded (killed, or still running)"))  # fmt: skip
    elif m.status in ("aborted", "failed"):
        msg = f": {m.status_message}" if m.status_message else ""
        out.append(Caveat(m.status, f"the run was {m.status} after {m.points_done} of {m.points_total} points{msg}"))
    if m.spec_error:
        out.append(Caveat("spec", f"spec.yaml could not be read ({m.spec_error}); titles and grading settings "
                                  "fall back to defaults"))  # fmt: skip
    for p in m.points:
        s = p.summary
        if p.degraded:
            detail = ", ".join(f for f in p.flags if f.startswith("degraded")) or (
                f"{s.failed} of {s.requests} requests failed" if s else "degraded")
            out.append(Caveat("degraded", f"{p.point_id} is degraded ({detail}): its numbers are marked ⚠ and "
                                          "come from the successful requests only", p.point_id))  # fmt: skip
        if p.client_limited:
            lag = f" (max event-loop lag {s.max_loop_lag_ms:.1f} ms)" if s and s.max_loop_lag_ms else ""
            who = (s.extra.get("client_limited_workers") if s else None) or []
            by = f" (load worker {', '.join(map(str, who))})" if who else ""
            out.append(Caveat("client-limited", f"{p.point_id} may be client-limited{lag}{by}: the load generator, "
                                                "not the engine, may have set the pace", p.point_id))  # fmt: skip
        if p.token_disagreement:
            n = s.token_disagreements if s else 0
            out.append(Caveat("token-disagreement", f"{p.point_id}: the server's token count and the client's "
                                                    f"disagree on {n or 'some'} request(s); the server's count "
                                                    f"({s.token_source if s and s.token_source else '?'}) is used",
                              p.point_id))  # fmt: skip
        if p.status == "failed":
            out.append(Caveat("failed", f"{p.point_id} failed: no numbers", p.point_id))
        elif p.status == "skipped":
            out.append(Caveat("skipped", f"{p.point_id} was skipped", p.point_id))
        elif p.status in ("not run", "running"):
            out.append(Caveat("not-run", f"{p.point_id} has no result ({p.status})", p.point_id))
    tp = [p for p in m.points if p.summary is not None and p.kind in ("throughput", "spec_acceptance")]
    if tp:
        states: dict[str, list[str]] = {}
        for p in tp:
            states.setdefault(p.summary.cache or "unknown", []).append(p.point_id)  # type: ignore[union-attr]
        parts = [f"{k}: {len(v)} point(s)" for k, v in sorted(states.items())]
        out.append(Caveat("cache", "prefix-cache state per point (column 'cache' in the tables): " + "; ".join(parts)))
        if any((p.summary.eff_tg_tps.n or 0) and (p.summary.eff_tg_tps.n or 0) < 6 for p in tp):  # type: ignore[union-attr]
            out.append(Caveat("ci", "confidence intervals over fewer than 6 requests are [min, max] of the requests "
                                    "(no order-statistic interval exists at 95 % below n = 6)"))  # fmt: skip
    seen_codes = {"degraded", "client-limited", "token-disagreement"}
    for w in m.warnings:
        if w.code in seen_codes and w.point_id:
            continue
        where = f"{w.point_id}: " if w.point_id else ""
        out.append(Caveat(w.code, f"{where}{w.message}", w.point_id))
    for es in m.engines.values():
        for c in es.crashes:
            out.append(Caveat("engine-crash", f"{es.key} crashed ({c})"))
    for rep in m.scores:
        for st in rep.overrides_stale:
            out.append(Caveat("override-stale", f"{rep.engine}.{rep.variant}: override [{st.override.index}] for "
                                                f"{st.override.scenario}#{st.trial} is stale ({st.why}); not applied"))  # fmt: skip
    if m.score_error:
        out.append(Caveat("scores", f"scores from {m.score_source or 'nowhere'}: {m.score_error}"))
    return out

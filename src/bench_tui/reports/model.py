"""A run directory as plain data: what the reports, comparisons, bundles and history are made from.

``load_run(run_dir)`` reads spec.yaml, events.jsonl (folded by ``runner.view.RunView``) and env.json (nothing
else is needed) and returns a ``RunModel``. It is a pure function of the directory: no clock, no engine, no network. Scores come from
``bench_tui.graders.regrade.score_run_dir`` (stored verdicts + the spec's overrides); when the pack cannot
be found (a bundle opened elsewhere) the ``scores.json`` a previous report wrote is used instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import EngineCrashed, RunWarning, ScenarioGraded
from bench_tui.runner.view import EngineView, PointView, RunView
from bench_tui.spec.schema import Report

SCORES_FILE = "scores.json"


PointRow = PointView  # a point as the reports see it: the run view's, with its typed parameters

MARK_DEGRADED = "⚠"
MARK_LIMITED = "†"
MARK_TOKENS = "‡"
LEGEND = (
    f"{MARK_DEGRADED} degraded (some requests failed; numbers from the successful ones), "
    f"{MARK_LIMITED} client-limited, {MARK_TOKENS} token-count disagreement"
)


def marks(p: PointRow) -> str:
    m = ""
    if p.degraded:
        m += MARK_DEGRADED
    if p.client_limited:
        m += MARK_LIMITED
    if p.token_disagreement:
        m += MARK_TOKENS
    return m


class RunDirError(Exception):
    """Not a readable run directory (message for the user)."""


def crash_note(c: EngineCrashed) -> str:
    """One crash as the report says it."""
    return (
        f"exit {c.returncode}"
        + (f" during {c.point_id}" if c.point_id else "")
        + (" (restarted)" if c.will_restart else "")
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
    engines: dict[str, EngineView] = field(default_factory=dict)
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

    @property
    def threshold_pct(self) -> float:
        """The practical threshold (spec ``report.noise_threshold_pct``, else its default): no difference
        smaller than this is stated."""
        rep = getattr(self.spec, "report", None)
        return float(rep.noise_threshold_pct if rep is not None else Report().noise_threshold_pct)

    def prefix_caching(self, key: str) -> str:
        """The variant's prefix caching (on / off / unknown) as its flags set it, from env.json."""
        info = (self.env.get("engines") or {}).get(key)
        value = info.get("prefix_caching") if isinstance(info, dict) else None
        return str(value) if value else "unknown"

    def speculative(self, key: str) -> bool:
        """Whether the variant decoded speculatively: the engine reported spec-decode counters for one of
        its points (vLLM exports them only when speculation is configured; on llama.cpp ``/slots`` says)."""
        return any(
            p.key == key
            and p.summary is not None
            and (
                p.summary.server.spec_drafts is not None or p.summary.server.spec_acceptance_rate is not None
            )
            for p in self.points
        )


def _load_spec(path: Path) -> tuple[Any, str]:
    if not path.is_file():
        return None, f"{path.name} missing"
    from bench_tui.spec.loader import load_stored_spec

    try:
        return load_stored_spec(path), ""
    except Exception as exc:  # noqa: BLE001 - a report of a run with a broken spec still renders, and says why
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _scores(
    run_dir: Path,
    graded: list[ScenarioGraded],
    points: dict[str, PointView],
    spec: Any,
    overrides_spec: Path | None = None,
) -> tuple[list[Any], str, str]:
    if not graded:
        return [], "", ""
    err = ""
    try:
        from bench_tui.graders.regrade import score_run_dir, stored_regrade

        reps, _ = score_run_dir(run_dir, overrides_spec)
        if overrides_spec is not None:
            return reps, f"events (overrides from {overrides_spec})", ""
        st = stored_regrade(run_dir)
        if st is not None:
            return (
                reps,
                f"events (regraded; overrides of the latest regrade, {st.generated_at}, from {st.source})",
                "",
            )
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
        if p is None:  # a verdict of a point the plan does not name: nothing to score it under
            continue
        groups.setdefault((p.engine, p.variant, p.workload), []).append(g)
    grading = getattr(spec, "grading", None)
    reps = []
    for (eng, var, wl), items in sorted(groups.items()):
        try:
            reps.append(
                score(
                    items,
                    [],
                    engine=eng,
                    variant=var,
                    alpha=getattr(grading, "alpha", 0.7),
                    target_ms=getattr(grading, "responsiveness_target_ms", 2000.0),
                    workload=wl,
                )
            )
        except Exception:  # noqa: BLE001
            continue
    return reps, "events (no pack, no overrides)", err


def load_run(run_dir: Path | str, *, overrides_spec: Path | str | None = None) -> RunModel:
    """The run as plain data. Scores apply ``overrides_spec``'s overrides when given, else the run's latest
    regrade (regrade.json), else its spec.yaml's."""
    run_dir = Path(run_dir)
    ev_path = run_dir / "events.jsonl"
    if not ev_path.is_file():
        raise RunDirError(f"{run_dir}: not a run directory (no events.jsonl)")
    try:
        view = RunView.from_run_dir(
            run_dir
        )  # the summaries hold what the reports need: no per-request events
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
    if view.run is not None:
        m.run_id = view.run.run_id or m.run_id
        m.spec_name = view.run.spec_name
        m.started_ts = view.run.ts
    m.points = list(view.points.values())
    m.engines = dict(view.engines)
    m.warnings = list(view.warnings) + [
        RunWarning(
            code="plan",
            point_id=ev.point_id,
            ts=ev.ts,
            message=f"{ev.point_id} finished but is not in the run's plan; left out of the tables",
        )
        for ev in view.unplanned
    ]
    m.points_total, m.points_done = view.points_total, view.points_done
    if view.finished is not None:
        m.status, m.status_message, m.finished_ts = (
            view.finished.status,
            view.finished.message,
            view.finished.ts,
        )
        m.points_done = max(m.points_done, view.finished.points_done)
        m.points_total = max(m.points_total, view.finished.points_total)
    graded = view.scenarios
    rows = view.points
    spec = m.spec
    m.title = (spec.report.title if spec is not None and spec.report.title else "") or m.spec_name or m.run_id
    if spec is not None:
        m.description, m.notes = spec.description, spec.report.notes
        m.baseline = spec.report.baseline
        m.formats = list(spec.report.formats)
        m.spec_name = m.spec_name or spec.name
    m.scores, m.score_source, m.score_error = _scores(
        run_dir, graded, rows, spec, Path(overrides_spec) if overrides_spec is not None else None
    )
    if m.baseline is None and m.variants():
        m.baseline = m.variants()[0]
    m.caveats.extend(_caveats(m))
    return m


def _caveats(m: RunModel) -> list[Caveat]:
    out: list[Caveat] = []
    if m.status == "incomplete":
        out.append(
            Caveat(
                "incomplete",
                f"the run is incomplete: {m.points_done} of {m.points_total} points "
                "finished and no run_finished event was recorded (killed, or still running)",
            )
        )
    elif m.status in ("aborted", "failed"):
        msg = f": {m.status_message}" if m.status_message else ""
        out.append(
            Caveat(m.status, f"the run was {m.status} after {m.points_done} of {m.points_total} points{msg}")
        )
    if m.spec_error:
        out.append(
            Caveat(
                "spec",
                f"spec.yaml could not be read ({m.spec_error}); titles and grading settings "
                "fall back to defaults",
            )
        )
    for p in m.points:
        s = p.summary
        if p.degraded:
            detail = ", ".join(f for f in p.flags if f.startswith("degraded")) or (
                f"{s.failed} of {s.requests} requests failed" if s else "degraded"
            )
            out.append(
                Caveat(
                    "degraded",
                    f"{p.point_id} is degraded ({detail}): its numbers are marked ⚠ and "
                    "come from the successful requests only",
                    p.point_id,
                )
            )
        if p.client_limited:
            lag = f" (max event-loop lag {s.max_loop_lag_ms:.1f} ms)" if s and s.max_loop_lag_ms else ""
            who = (s.extra.get("client_limited_workers") if s else None) or []
            by = f" (load worker {', '.join(map(str, who))})" if who else ""
            out.append(
                Caveat(
                    "client-limited",
                    f"{p.point_id} may be client-limited{lag}{by}: the load generator, "
                    "not the engine, may have set the pace",
                    p.point_id,
                )
            )
        if p.token_disagreement:
            n = s.token_disagreements if s else 0
            out.append(
                Caveat(
                    "token-disagreement",
                    f"{p.point_id}: the server's token count and the client's "
                    f"disagree on {n or 'some'} request(s); the server's count "
                    f"({s.token_source if s and s.token_source else '?'}) is used",
                    p.point_id,
                )
            )
        if p.status == "failed":
            out.append(Caveat("failed", f"{p.point_id} failed: no numbers", p.point_id))
        elif p.status == "skipped":
            out.append(Caveat("skipped", f"{p.point_id} was skipped", p.point_id))
        elif p.status in ("pending", "running"):
            out.append(
                Caveat(
                    "not-run",
                    f"{p.point_id} has no result ({'not run' if p.status == 'pending' else p.status})",
                    p.point_id,
                )
            )
    tp = [p for p in m.points if p.summary is not None and p.kind in ("throughput", "spec_acceptance")]
    if tp:
        states: dict[str, list[str]] = {}
        for p in tp:
            states.setdefault(p.summary.cache or "unknown", []).append(p.point_id)  # type: ignore[union-attr]
        parts = [f"{k}: {len(v)} point(s)" for k, v in sorted(states.items())]
        out.append(
            Caveat(
                "cache", "prefix-cache state per point (column 'cache' in the tables): " + "; ".join(parts)
            )
        )
        if any((p.summary.eff_tg_tps.n or 0) and (p.summary.eff_tg_tps.n or 0) < 6 for p in tp):  # type: ignore[union-attr]
            out.append(
                Caveat(
                    "ci",
                    "confidence intervals over fewer than 6 requests are [min, max] of the requests "
                    "(no order-statistic interval exists at 95 % below n = 6)",
                )
            )
    seen_codes = {"degraded", "client-limited", "token-disagreement"}
    for w in m.warnings:
        if w.code in seen_codes and w.point_id:
            continue
        where = f"{w.point_id}: " if w.point_id else ""
        out.append(Caveat(w.code, f"{where}{w.message}", w.point_id))
    for es in m.engines.values():
        for c in es.crashes:
            out.append(Caveat("engine-crash", f"{es.key} crashed ({crash_note(c)})"))
    for rep in m.scores:
        for st in rep.overrides_stale:
            out.append(
                Caveat(
                    "override-stale",
                    f"{rep.engine}.{rep.variant}: override [{st.override.index}] for "
                    f"{st.override.scenario}#{st.trial} is stale ({st.why}); not applied",
                )
            )
    if m.score_source.startswith("events ("):
        out.append(
            Caveat(
                "overrides",
                f"tool-call scores: {m.score_source[len('events (') : -1]}; raw verdicts are "
                "kept beside the adjusted ones",
            )
        )
    if m.score_error:
        out.append(Caveat("scores", f"scores from {m.score_source or 'nowhere'}: {m.score_error}"))
    return out

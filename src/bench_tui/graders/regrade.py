"""``score_run_dir`` (scores from a run directory) and ``regrade_run_dir`` (what `bench-tui regrade` does).

Regrading re-applies the graders (the pack as it is now) and the overrides (from ``--spec`` or the run's
``spec.yaml``) to the transcripts stored in the run's ``ScenarioGraded`` events. It never calls an engine.
It writes ``regrade.json`` into the run directory and appends nothing to ``events.jsonl`` (the run's record
stays what was measured).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import PlanPoint, PlanReady, RunStarted, ScenarioGraded, read_events
from bench_tui.graders.grade import canonical_sha256, grade_transcript
from bench_tui.graders.overrides import check_overrides
from bench_tui.graders.pack import Pack, PackError, load_pack
from bench_tui.graders.scoring import ScoreReport, score
from bench_tui.spec.schema import ScenarioWorkload, Spec


class RegradeError(Exception):
    """A run directory or spec that cannot be regraded (message for the user)."""


@dataclass
class _Group:
    engine: str
    variant: str
    workload: str
    graded: list[ScenarioGraded]


def _load_spec(path: Path) -> Spec:
    from bench_tui.spec.loader import SpecError, load_stored_spec

    try:
        return load_stored_spec(path)
    except SpecError as exc:
        raise RegradeError(str(exc)) from None


def _point_index(events: list[Any]) -> dict[str, PlanPoint]:
    out: dict[str, PlanPoint] = {}
    for ev in events:
        if isinstance(ev, PlanReady):
            for p in ev.points:
                out[p.point_id] = p
    return out


def _split_point_id(point_id: str) -> tuple[str, str, str]:
    """Fallback when no PlanReady: "engine.variant/workload/..."."""
    head, _, rest = point_id.partition("/")
    engine, _, variant = head.partition(".")
    return engine, variant or "default", rest.split("/")[0]


def _pack_for(wl: ScenarioWorkload, dirs: list[Path], cache: dict[str, Pack]) -> Pack:
    if wl.pack in cache:
        return cache[wl.pack]
    last: PackError | None = None
    for d in dirs:
        try:
            cache[wl.pack] = load_pack(wl.pack, d)
            return cache[wl.pack]
        except PackError as exc:
            last = exc
            if "not found" not in str(exc):
                raise
    assert last is not None
    raise last


def score_run_dir(
    run_dir: Path | str, spec_path: Path | str | None = None, *, regrade: bool = False
) -> tuple[list[ScoreReport], list[dict[str, Any]]]:
    """Scores for every (engine, variant, scenarios workload) in a run directory.

    ``regrade=False`` scores the stored verdicts; ``regrade=True`` grades the stored transcripts again with
    the current pack. Overrides come from ``spec_path`` (default: the run's spec.yaml). Returns the reports
    and, when regrading, the per-scenario changes (stored vs regraded verdict). Raises RegradeError,
    PackError or OverrideError with a message meant for the user.
    """
    run_dir = Path(run_dir)
    ev_path = run_dir / "events.jsonl"
    if not ev_path.is_file():
        raise RegradeError(f"{run_dir}: not a run directory (no events.jsonl)")
    sp = Path(spec_path) if spec_path is not None else run_dir / "spec.yaml"
    if not sp.is_file():
        raise RegradeError(f"{sp}: spec not found (pass --spec SPEC)")
    spec = _load_spec(sp)
    events = read_events(str(ev_path))
    points = _point_index(events)
    dirs = [sp.parent]
    for ev in events:
        if isinstance(ev, RunStarted) and ev.spec_path:
            dirs.append(Path(ev.spec_path).parent)
    groups: dict[tuple[str, str, str], _Group] = {}
    for ev in events:
        if not isinstance(ev, ScenarioGraded):
            continue
        p = points.get(ev.point_id)
        eng, var, wl_id = (p.engine, p.variant, p.workload) if p else _split_point_id(ev.point_id)
        groups.setdefault((eng, var, wl_id), _Group(eng, var, wl_id, [])).graded.append(ev)
    packs: dict[str, Pack] = {}
    overrides = spec.grading.overrides
    reports: list[ScoreReport] = []
    changes: list[dict[str, Any]] = []
    checked = False
    for (eng, var, wl_name), grp in sorted(groups.items()):
        wl = spec.workloads.get(wl_name)
        if not isinstance(wl, ScenarioWorkload):
            raise RegradeError(
                f"{sp}: workload {wl_name!r} of the run is not a scenarios workload in this spec"
            )
        pack = _pack_for(wl, dirs, packs)
        check_overrides(overrides, pack.ids)
        checked = True
        items = grp.graded
        if regrade:
            items = []
            for g in grp.graded:
                try:
                    sc = pack.scenario(g.scenario_id)
                except KeyError:
                    new = msgspec.structs.replace(
                        g, verdict=None, points=None, outcome="grader_error",
                        reasons=[f"scenario {g.scenario_id} is no longer in pack {pack.pack.id}"],
                    )  # fmt: skip
                else:
                    r = grade_transcript(sc, pack, g.transcript, wl.mode)
                    new = msgspec.structs.replace(
                        g, verdict=r.verdict, points=r.points, outcome=r.outcome, reasons=r.reasons,
                        transcript_sha256=canonical_sha256(g.transcript),
                    )  # fmt: skip
                items.append(new)
                changes.append(
                    {
                        "engine": eng, "variant": var, "workload": wl_name, "point_id": g.point_id,
                        "scenario": g.scenario_id, "trial": g.trial,
                        "stored_verdict": g.verdict, "stored_outcome": g.outcome,
                        "regraded_verdict": new.verdict, "regraded_outcome": new.outcome,
                        "changed": (g.verdict, g.outcome) != (new.verdict, new.outcome),
                    }
                )  # fmt: skip
        reports.append(
            score(
                items, overrides, engine=eng, variant=var, alpha=spec.grading.alpha,
                target_ms=spec.grading.responsiveness_target_ms, pack=pack, mode=wl.mode, workload=wl_name,
            )
        )  # fmt: skip
    if not checked and overrides:
        # no scenario results, but the overrides must still name real scenarios of the spec's packs
        for wl in spec.workloads.values():
            if isinstance(wl, ScenarioWorkload):
                check_overrides(overrides, _pack_for(wl, dirs, packs).ids)
    return reports, changes


def regrade_run_dir(run_dir: Path, spec_path: Path | None) -> tuple[dict[str, Any], list[ScoreReport]]:
    """Re-grade ``run_dir`` and write its ``regrade.json``; returns that document and the reports."""
    reports, changes = score_run_dir(run_dir, spec_path, regrade=True)
    out = {
        "run_dir": str(run_dir),
        "spec": str(spec_path or run_dir / "spec.yaml"),
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "note": "regrade re-applies graders and overrides to stored transcripts; events.jsonl is not modified",
        "reports": msgspec.to_builtins(reports),
        "changes": changes,
    }
    (run_dir / "regrade.json").write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out, reports

"""``score_run_dir`` (scores from a run directory) and ``regrade_run_dir`` (what `bench-tui regrade` does).

Regrading re-applies the graders (the pack as it is now) and the overrides (from ``--spec`` or the run's
``spec.yaml``) to the transcripts stored in the run's ``ScenarioGraded`` events. It never calls an engine.
It writes ``regrade.json`` into the run directory and appends nothing to ``events.jsonl`` (the run's record
stays what was measured).

``regrade.json`` also stores the overrides it applied (``"overrides"``, with where they came from). From then
on that is the run's latest regrade: ``score_run_dir`` without an explicit spec, and so ``report``,
``compare``, ``bundle`` and ``history``, apply those overrides (regrading the stored transcripts like the
regrade did); the TUI does the same unless the spec it edits overrides in is newer. Raw verdicts are always
kept beside the adjusted ones.
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
from bench_tui.graders.judge import Post, consult, mark
from bench_tui.graders.overrides import check_overrides
from bench_tui.graders.pack import Pack, PackError, load_pack
from bench_tui.graders.scoring import ScoreReport, score
from bench_tui.spec.schema import Override, ScenarioWorkload, Spec

REGRADE_FILE = "regrade.json"


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


@dataclass
class StoredRegrade:
    """The overrides the latest ``regrade`` applied to a run (from its regrade.json)."""

    overrides: list[Override]
    source: str  # the spec they came from
    generated_at: str
    path: Path


def stored_regrade(run_dir: Path | str) -> StoredRegrade | None:
    """The run's latest regrade, or None (none yet, or a regrade.json from before overrides were stored)."""
    path = Path(run_dir) / REGRADE_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "overrides" not in data:
            return None
        ovs = msgspec.convert(data["overrides"], list[Override])
    except (OSError, ValueError, msgspec.ValidationError):
        return None
    return StoredRegrade(
        ovs,
        str(data.get("overrides_from") or data.get("spec") or ""),
        str(data.get("generated_at") or ""),
        path,
    )


def overrides_spec_for(run_dir: Path | str, spec: Path | None) -> Path | None:
    """The spec whose overrides are the latest for a run: ``spec`` unless the run's stored regrade is newer
    (then None: ``score_run_dir`` uses the stored overrides)."""
    st = stored_regrade(run_dir)
    if st is None or spec is None:
        return spec
    try:
        return None if st.path.stat().st_mtime >= Path(spec).stat().st_mtime else spec
    except OSError:
        return None


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
    run_dir: Path | str,
    spec_path: Path | str | None = None,
    *,
    regrade: bool = False,
    use_stored: bool = True,
    judge_post: Post | None = None,
) -> tuple[list[ScoreReport], list[dict[str, Any]]]:
    """Scores for every (engine, variant, scenarios workload) in a run directory.

    ``regrade=False`` scores the stored verdicts; ``regrade=True`` grades the stored transcripts again with
    the current pack. Overrides come from ``spec_path``; without one, from the run's latest regrade
    (regrade.json, whose transcripts are then regraded too) when there is one (``use_stored``), else from
    the run's spec.yaml. With ``grading.judge`` in the spec, the judge's cached opinions mark the verdicts
    it disagrees with unsure (``graders/judge.py``); ``judge_post`` asks it for the missing ones. Returns the reports
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
    stored = stored_regrade(run_dir) if spec_path is None and use_stored else None
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
    if stored is not None:
        overrides, regrade = stored.overrides, True
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
                        g,
                        verdict=None,
                        points=None,
                        outcome="grader_error",
                        reasons=[f"scenario {g.scenario_id} is no longer in pack {pack.pack.id}"],
                    )
                else:
                    r = grade_transcript(sc, pack, g.transcript, wl.mode)
                    new = msgspec.structs.replace(
                        g,
                        verdict=r.verdict,
                        points=r.points,
                        outcome=r.outcome,
                        reasons=r.reasons,
                        transcript_sha256=canonical_sha256(g.transcript),
                        loop=r.loop,
                        rules=r.rules,
                        confidence=r.confidence,
                        unsure=r.unsure,
                    )
                items.append(new)
                changes.append(
                    {
                        "engine": eng,
                        "variant": var,
                        "workload": wl_name,
                        "point_id": g.point_id,
                        "scenario": g.scenario_id,
                        "trial": g.trial,
                        "stored_verdict": g.verdict,
                        "stored_outcome": g.outcome,
                        "regraded_verdict": new.verdict,
                        "regraded_outcome": new.outcome,
                        "changed": (g.verdict, g.outcome) != (new.verdict, new.outcome),
                    }
                )
        rep = score(
            items,
            overrides,
            engine=eng,
            variant=var,
            alpha=spec.grading.alpha,
            target_ms=spec.grading.responsiveness_target_ms,
            pack=pack,
            mode=wl.mode,
            workload=wl_name,
        )
        if spec.grading.judge is not None:
            opinions, notes, failed = consult(spec.grading.judge, pack, items, run_dir, judge_post)
            if failed:  # one refused or timed-out request per pass: the other groups read the cache only
                judge_post = None
            mark(rep, opinions, notes, spec.grading.judge.model)
        reports.append(rep)
    if not checked and overrides:
        # no scenario results, but the overrides must still name real scenarios of the spec's packs
        for wl in spec.workloads.values():
            if isinstance(wl, ScenarioWorkload):
                check_overrides(overrides, _pack_for(wl, dirs, packs).ids)
    return reports, changes


def regrade_run(
    run_dir: Path, spec_path: Path | None, judge_post: Post | None = None
) -> tuple[dict[str, Any], list[ScoreReport]]:
    """Regrade a run and store the result, with the overrides applied, as its latest regrade (regrade.json).

    Without ``spec_path`` the overrides are the latest regrade's (else the run's spec.yaml). ``judge_post``:
    ask the spec's judge for the opinions not in the run's judge cache."""
    stored = stored_regrade(run_dir) if spec_path is None else None
    reports, changes = score_run_dir(run_dir, spec_path, regrade=True, judge_post=judge_post)
    if spec_path is not None:
        overrides, source = _load_spec(spec_path).grading.overrides, str(spec_path)
    elif stored is not None:
        overrides, source = stored.overrides, stored.source
    else:
        overrides, source = _load_spec(run_dir / "spec.yaml").grading.overrides, str(run_dir / "spec.yaml")
    out = {
        "run_dir": str(run_dir),
        "spec": source,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "note": "regrade re-applies graders and overrides to stored transcripts; events.jsonl is not modified; "
        "report, compare, bundle and history use the overrides stored here (raw verdicts kept beside)",
        "overrides_from": source,
        "overrides": msgspec.to_builtins(overrides),
        "reports": msgspec.to_builtins(reports),
        "changes": changes,
    }
    (run_dir / REGRADE_FILE).write_text(
        json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return out, reports

"""`bench-tui regrade RUN_DIR [--spec SPEC]` and ``score_run_dir`` (scores from a run directory).

Regrading re-applies the graders (the pack as it is now) and the overrides (from ``--spec`` or the run's
``spec.yaml``) to the transcripts stored in the run's ``ScenarioGraded`` events. It never calls an engine.
It writes ``regrade.json`` into the run directory and appends nothing to ``events.jsonl`` (the run's record
stays what was measured).
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import msgspec

from bench_tui.events import PlanPoint, PlanReady, RunStarted, ScenarioGraded, read_events
from bench_tui.graders.grade import canonical_sha256, grade_transcript
from bench_tui.graders.overrides import OverrideError, check_overrides
from bench_tui.graders.pack import Pack, PackError, load_pack
from bench_tui.graders.scoring import ScoreReport, format_report, score
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


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--spec", "spec_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Spec whose grading.overrides to apply (default: the run's spec.yaml).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print regrade.json to stdout instead of tables.")
def regrade(run_dir: Path, spec_path: Path | None, as_json: bool) -> None:
    """Re-apply graders and overrides to the transcripts stored in RUN_DIR (no engine is called).

    Prints raw vs adjusted scores per engine/variant and writes RUN_DIR/regrade.json; events.jsonl is not
    modified (nothing is appended).
    """
    try:
        reports, changes = score_run_dir(run_dir, spec_path, regrade=True)
    except (RegradeError, PackError, OverrideError) as exc:
        click.echo(f"regrade: {exc}", err=True)
        sys.exit(2)
    out = {
        "run_dir": str(run_dir),
        "spec": str(spec_path or run_dir / "spec.yaml"),
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "note": "regrade re-applies graders and overrides to stored transcripts; events.jsonl is not modified",
        "reports": msgspec.to_builtins(reports),
        "changes": changes,
    }
    target = run_dir / "regrade.json"
    target.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    if not reports:
        click.echo(f"{run_dir}: no scenario results to regrade")
    by_key: dict[tuple[str, str], int] = defaultdict(int)
    for c in changes:
        if c["changed"]:
            by_key[(c["engine"], c["variant"])] += 1
    for rep in reports:
        click.echo(format_report(rep))
        n = by_key.get((rep.engine, rep.variant), 0)
        click.echo(f"  regraded: {n} verdict(s) differ from the stored ones")
        click.echo("")
    click.echo(f"wrote {target} (events.jsonl not modified)")


# --------------------------------------------------------------------------------------------- pack


@click.group("pack")
def pack_group() -> None:
    """Tools for scenario packs: grade labelled cases, check a pack's own corpus."""


def _load_pack_or_exit(name: str) -> Pack:
    try:
        return load_pack(name)
    except PackError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)


@pack_group.command("test")
@click.argument("pack_name", metavar="PACK")
@click.option("--mode", type=click.Choice(["strict", "lenient", "both"]), default="both", show_default=True)
@click.option("--cases", "cases_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Cases file (default: <pack>.cases.yaml next to the pack).")  # fmt: skip
@click.option("--all", "show_all", is_flag=True, help="List every scenario, not only those that disagree.")
def pack_test(pack_name: str, mode: str, cases_file: Path | None, show_all: bool) -> None:
    """Grade PACK's own labelled cases and print agreement per scenario; exit 1 on any disagreement."""
    from bench_tui.graders.cases import CasesError, cases_path_for, load_cases, render_test

    pack = _load_pack_or_exit(pack_name)
    path = cases_file or cases_path_for(pack)
    try:
        cases = load_cases(path, pack)
    except CasesError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    modes = ["strict", "lenient"] if mode == "both" else [mode]
    text, ok = render_test(pack, cases, modes, show_all=show_all)
    click.echo(text)
    sys.exit(0 if ok else 1)


@pack_group.command("grade")
@click.argument("pack_name", metavar="PACK")
@click.argument("cases_file", metavar="CASES.yaml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(["strict", "lenient"]), default="lenient", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list: {scenario, label, verdict, reasons}.")
def pack_grade(pack_name: str, cases_file: Path, mode: str, as_json: bool) -> None:
    """Grade the cases in CASES.yaml against PACK (tool results from the pack's mocks)."""
    from bench_tui.graders.cases import CasesError, grade_cases, load_cases, render_grade, result_json

    pack = _load_pack_or_exit(pack_name)
    try:
        cases = load_cases(cases_file, pack)
    except CasesError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    results = grade_cases(cases, pack, mode)
    if as_json:
        click.echo(json.dumps([result_json(r) for r in results], indent=2, ensure_ascii=False))
    else:
        click.echo(render_grade(results, pack))

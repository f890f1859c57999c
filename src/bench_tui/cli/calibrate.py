"""``bench-tui calibrate SPEC``: this host's session-to-session noise, for verdicts of one session a side.

Runs the spec's measured workloads (throughput and spec-acceptance; scenario packs are graded, not timed)
with one variant per engine (the first, or ``--variant``) started ``--sessions`` times in a row: A/A engine
sessions. Their spread per point shape and metric is stored in the per-user history with the host's
identity (``reports.floors``, ``reports.history``); ``compare`` and the reports use the newest floor of the
host whenever a cell has one session a side, and say so. ``--from RUN_DIR`` stores the floors of a run that
already has >= 2 sessions per variant (any run whose spec sets ``matrix.sessions``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import msgspec


@click.command()
@click.argument("spec", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--sessions", type=click.IntRange(2, 100), default=4, show_default=True, help="Engine sessions."
)
@click.option(
    "--variant", "variants", multiple=True, help="ENGINE.VARIANT to calibrate (default: each engine's first)."
)
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option(
    "--from",
    "from_run",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Store the floors of an existing run with >= 2 sessions per variant instead of running.",
)
@click.option("--json", "json_lines", is_flag=True, help="One JSON event per line while it runs.")
def calibrate(
    spec: Path | None,
    sessions: int,
    variants: tuple[str, ...],
    runs_dir: Path | None,
    from_run: Path | None,
    json_lines: bool,
) -> None:
    """Measure session-to-session A/A noise of SPEC's engines on this host and store it for compare."""
    from bench_tui.reports.floors import floors_of, has_sessions, host_identity, load_samples
    from bench_tui.reports.history import index_run, user_db
    from bench_tui.reports.model import RunDirError, load_run

    if from_run is None:
        run_dir = _run_sessions(spec, sessions, variants, runs_dir, json_lines)
    else:
        run_dir = from_run
    try:
        model = load_run(run_dir)
    except RunDirError as err:
        click.echo(f"cannot read {run_dir}: {err}", err=True)
        sys.exit(2)
    if not has_sessions(model):
        click.echo(
            f"{run_dir}: no variant ran >= 2 engine sessions (spec `matrix.sessions`): nothing to calibrate",
            err=True,
        )
        sys.exit(2)
    rows = floors_of(model, load_samples(model))
    index_run(run_dir, user_db(), model=model)
    host = host_identity(model.env)
    click.echo(f"calibrated {host}: {len(rows)} floor(s) from {run_dir.name}, stored in {user_db()}")
    from bench_tui.catalogue import METRIC
    from bench_tui.reports.verdict import session_spread_pct

    for r in rows:
        m = METRIC[r.metric]
        sym = " pts" if m.rate else " %"
        total = (r.sigma**2 + r.within) ** 0.5  # what one session's value varies by, its own spread included
        click.echo(
            f"  {r.engine_kind:9} {r.shape:22} {m.label:22} two single sessions differ by up to "
            f"±{session_spread_pct(total, m.rate):.1f}{sym} (95 %; between sessions alone "
            f"±{session_spread_pct(r.sigma, m.rate):.1f}{sym}; {r.sessions} sessions, df {r.df})"
        )


def _run_sessions(
    spec: Path | None, sessions: int, variants: tuple[str, ...], runs_dir: Path | None, json_lines: bool
) -> Path:
    from bench_tui.runner.orchestration.headless import run_headless
    from bench_tui.runner.orchestration.planner import load_spec, plan_points
    from bench_tui.runner.orchestration.session import RunError, new_run
    from bench_tui.runner.orchestration.store import RunDirError
    from bench_tui.spec.loader import SpecError, default_spec_path
    from bench_tui.spec.matrix import variants_of

    spec_path = spec if spec is not None else default_spec_path()
    try:
        loaded = load_spec(spec_path)
    except SpecError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    sp = loaded.spec
    chosen = list(variants) or [f"{e}.{variants_of(sp, e)[0]}" for e in sp.engines]
    known = {f"{e}.{v}" for e in sp.engines for v in variants_of(sp, e)}
    bad = [v for v in chosen if v not in known]
    if bad:
        click.echo(
            f"--variant {', '.join(bad)}: not in the spec (have: {', '.join(sorted(known))})", err=True
        )
        sys.exit(2)
    measured = [
        w
        for w, wl in sp.workloads.items()
        if type(wl).__struct_config__.tag in ("throughput", "spec_acceptance")
    ]
    if not measured:
        click.echo(f"{spec_path}: no throughput or spec_acceptance workload to calibrate", err=True)
        sys.exit(2)
    matrix = msgspec.structs.replace(
        sp.matrix, engines=chosen, workloads=measured, include=[], exclude=[], sessions=sessions, order="abba"
    )
    loaded.spec = msgspec.structs.replace(sp, matrix=matrix)
    points = plan_points(loaded)
    try:
        handle = new_run(loaded, points, runs_dir=runs_dir, spec_path=spec_path)
    except (RunError, RunDirError) as err:
        click.echo(f"cannot start the calibration: {err}", err=True)
        sys.exit(2)
    from bench_tui.reports.render import write_reports

    handle.finalize = write_reports
    click.echo(
        f"calibrating {', '.join(chosen)}: {sessions} engine sessions each, {len(points)} points "
        f"({', '.join(measured)})",
        err=True,
    )
    rc = run_headless(handle, json_lines=json_lines, fail_on=[])
    if rc not in (0, 1):
        sys.exit(rc)
    return Path(handle.run_dir)

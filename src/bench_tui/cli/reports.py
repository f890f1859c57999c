"""Click commands: ``report``, ``compare``, ``bundle``, ``rerun``, ``history`` (mapped in bench_tui.cli)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click


def _fail(msg: str, code: int = 2) -> NoReturn:
    from bench_tui.spec.secrets import scrub_text

    click.echo(scrub_text(msg), err=True)
    sys.exit(code)


def _user_errors() -> tuple[type[Exception], ...]:
    from bench_tui.reports.bundle import BundleError
    from bench_tui.reports.history import HistoryError
    from bench_tui.reports.model import RunDirError

    return (BundleError, RunDirError, HistoryError, ValueError, OSError)


def _guarded(name: str, fn: Callable[[], Any]) -> Any:
    errors = _user_errors()
    try:
        return fn()
    except errors as exc:
        _fail(f"{name}: {exc}")


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html"]),
    default=None,
    help="Format to print or write (default: md; for a run dir without -o: the spec's report.formats).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file (format from --format or the file's suffix).",
)
@click.option(
    "--spec",
    "spec_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Score with this spec's grading.overrides (default: the run's latest regrade, else its spec).",
)
def report(source: Path, fmt: str | None, output: Path | None, spec_path: Path | None) -> None:
    """Render report.md / report.html from a run directory or a bundle.

    With a run directory and no options, (re)writes its report files. With a bundle, or with --format,
    prints the report to stdout; -o writes it to a file instead. Tool-call scores use the run's latest
    `regrade` (its stored overrides) unless --spec names a spec whose overrides to apply.
    """

    def go() -> None:
        from bench_tui.reports.bundle import is_bundle, resolve_run
        from bench_tui.reports.render import render_run, write_reports

        run_dir = resolve_run(source)
        if output is not None:
            f = fmt or ("html" if output.suffix.lower() in (".html", ".htm") else "md")
            output.write_text(render_run(run_dir, f, overrides_spec=spec_path), encoding="utf-8")
            click.echo(f"wrote {output}")
        elif fmt is None and not is_bundle(source):
            for p in write_reports(run_dir, overrides_spec=spec_path):
                click.echo(f"wrote {p}")
        else:
            click.echo(render_run(run_dir, fmt or "md", overrides_spec=spec_path), nl=False)

    _guarded("report", go)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the comparison to this file instead of stdout (.html: an HTML page, .json: JSON, else markdown).",
)
@click.option(
    "--baseline",
    default=None,
    metavar="ENGINE.VARIANT",
    help="Measure every column against this variant (default: the spec's report.baseline; with several "
    "runs and no --baseline, columns are paired by engine.variant).",
)
@click.option(
    "--threshold",
    "threshold_pct",
    type=float,
    default=None,
    metavar="PCT",
    help="Practical threshold in % below which nothing is claimed (default: the spec's "
    "report.noise_threshold_pct, else 5).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {baseline, cells: [...], summary}.")
def compare(
    runs: tuple[Path, ...],
    output: Path | None,
    baseline: str | None,
    threshold_pct: float | None,
    as_json: bool,
) -> None:
    """Tables of RUN [RUN ...] (run dirs or bundles) with honest verdicts, ratios and a summary.

    One run: its variants against the baseline. Several runs: columns paired by engine.variant (the same spec
    run twice), or all against --baseline. A difference is claimed only when its bootstrap interval lies
    beyond the practical threshold; too few repetitions say "inconclusive".
    """

    def go() -> None:
        from bench_tui.reports.compare import compare_runs

        suffix = output.suffix.lower() if output is not None else ""
        fmt = "json" if as_json or suffix == ".json" else "html" if suffix in (".html", ".htm") else "md"
        text = compare_runs(list(runs), fmt, baseline=baseline, threshold_pct=threshold_pct)
        if output is not None:
            output.write_text(text, encoding="utf-8")
            click.echo(f"wrote {output}")
        else:
            click.echo(text)

    _guarded("compare", go)


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Archive to write (default: RUN_DIR.tar.gz next to the run directory).",
)
@click.option(
    "--refuse-secrets", is_flag=True, help="Refuse to bundle when a secret is found instead of scrubbing it."
)
def bundle(run_dir: Path, output: Path | None, refuse_secrets: bool) -> None:
    """Pack RUN_DIR (spec, resolved plan, events, logs, reports, env) into one .tar.gz with a manifest.

    Secrets (values of secret-like env vars, the spec's api keys, known key shapes) are scrubbed from
    every text file.
    """

    def go() -> None:
        from bench_tui.reports.sharing import bundle_run

        out, manifest = bundle_run(run_dir, output, refuse=refuse_secrets)
        n = manifest["scrubbed_total"]
        click.echo(
            f"wrote {out} ({len(manifest['files'])} files"
            + (f", {n} secret value(s) scrubbed" if n else "")
            + ")"
        )

    _guarded("bundle", go)


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the new run goes (default: ./runs; a bundle's runs_dir is never used).",
)
@click.option("--json", "json_lines", is_flag=True, help="One JSON event per line.")
@click.option("--only", multiple=True, help="Run only points whose id contains this text (repeatable).")
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Approve the commands the spec would start (they are printed either way).",
)
def rerun(source: Path, runs_dir: Path | None, json_lines: bool, only: tuple[str, ...], yes: bool) -> None:
    """Run the spec of a bundle (or run directory) again, headless, as a new run.

    Nothing the spec names (engine commands, launchers, version commands, environment, grader hooks,
    servers) starts before it is printed and you answer yes; --yes approves, and a stdin that is not a
    terminal means no.
    """

    def go() -> int:
        from bench_tui.reports.rerun import RerunRefused, prepare_rerun
        from bench_tui.runner.orchestration.headless import run_headless

        try:
            handle = prepare_rerun(
                source,
                runs_dir=runs_dir,
                only=list(only) or None,
                yes=yes,
                out=lambda s: click.echo(s, err=True),
            )
        except RerunRefused as exc:
            _fail(f"rerun: {exc}")
        click.echo(f"re-running {source} -> {handle.run_dir}", err=True)
        return int(run_headless(handle, json_lines=json_lines))

    from bench_tui.runner.orchestration.session import RunError
    from bench_tui.spec.loader import SpecError

    errors: tuple[type[Exception], ...] = (*_user_errors(), SpecError, RunError)
    try:
        code = go()
    except errors as exc:
        _fail(f"rerun: {exc}")
    sys.exit(code)


def _fmt(x: Any, digits: int = 1) -> str:
    return "—" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


@click.command()
@click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Only the runs in this folder (indexed in DIR/history.sqlite). Default: every run directory "
    "registered for this user, from any folder, plus ./runs.",
)
@click.option("--engine", default=None, help="Only runs with points of this engine (or engine.variant).")
@click.option("--workload", default=None, help="Only runs with points of this workload.")
@click.option("--since", default=None, help="Only runs started since: 7d, 12h, 2026-12-01, ...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (runs with their points and scores).")
@click.option("--rebuild", is_flag=True, help="Rebuild history.sqlite from the run directories first.")
@click.option("--points/--no-points", "show_points", default=False, help="Also list each run's points.")
def history(
    runs_dir: Path | None,
    engine: str | None,
    workload: str | None,
    since: str | None,
    as_json: bool,
    rebuild: bool,
    show_points: bool,
) -> None:
    """List and filter past runs, from any directory.

    The index is rebuilt from the run directories when it is missing, damaged or empty, and re-reads every run
    that changed; a run still being written is listed as running.
    """

    def go() -> None:
        from bench_tui.reports import history as h

        db, n, notes = h.prepare(runs_dir, rebuild=rebuild)
        for note in notes:
            click.echo(note, err=True)
        if rebuild:
            click.echo(f"indexed {n} run(s) into {db}", err=True)
        since_ts = h.parse_since(since) if since else None
        rows = h.query(db, engine=engine, workload=workload, since=since_ts)
        if as_json:
            click.echo(json.dumps(rows, indent=2, default=str))
            return
        if not rows:
            click.echo("no runs match")
            return
        from bench_tui.reports.render import _utc

        for r in rows:
            click.echo(
                f"{r['run_key']}  {_utc(r['started_ts'])}  {r['status']:<10} {r['points_done']}/"
                f"{r['points_total']} points  {r['spec_name']}  [{r['engines']}]"
            )
            for s in r["scores"]:
                click.echo(
                    f"    score {s['engine']}.{s['variant']} {s['workload']}: raw {_fmt(s['raw_score'])} "
                    f"adjusted {_fmt(s['adjusted_score'])}"
                )
            if show_points:
                for p in r["points"]:
                    click.echo(
                        f"    {p['point_id']:<48} {p['status']:<9} eff tg {_fmt(p['eff_tg_tps'])} t/s  "
                        f"TTFT {_fmt(p['ttft_ms'])} ms  {p['flags'] or ''}"
                    )

    _guarded("history", go)

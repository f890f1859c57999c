"""`bench-tui resume RUN_DIR [--no-tui] [--json]`: continue a killed run from its last finished point."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--no-tui", is_flag=True, help="Run headless: progress lines instead of the TUI.")
@click.option("--json", "json_lines", is_flag=True, help="With --no-tui: one JSON event per line.")
@click.option(
    "--only", multiple=True, help="Of the unfinished points, run only those matching (glob or text)."
)
@click.option(
    "--fail-on",
    multiple=True,
    metavar="FLAGS",
    help="Also exit 1 when an ok point carries one of these flags (comma-separated codes or globs).",
)
def resume(
    run_dir: Path, no_tui: bool, json_lines: bool, only: tuple[str, ...], fail_on: tuple[str, ...]
) -> None:
    """Continue a killed run: finished points are kept, the rest run, appended to the same events.jsonl.

    Refused (exit 2) while another session writes to RUN_DIR. Engines a killed session left running are
    stopped first. Exit codes as for `run`: 0 every point ok, 1 not, 2 usage error, 130 interrupted.
    """
    from bench_tui.reports.bundle import in_bundle_cache
    from bench_tui.reports.render import write_reports
    from bench_tui.runner.orchestration.outcome import parse_fail_on, run_outcome
    from bench_tui.runner.orchestration.session import RunError, start_run
    from bench_tui.spec.loader import SpecError

    if in_bundle_cache(run_dir):  # someone else's run: its commands start only through rerun's approval
        click.echo(
            f"cannot resume {run_dir}: it is an unpacked bundle, not one of your runs; use "
            "`bench-tui rerun BUNDLE` (it shows what would start and asks first)",
            err=True,
        )
        sys.exit(2)
    try:
        handle = start_run(None, resume=run_dir, only=list(only) or None)
        handle.finalize = write_reports
    except (RunError, SpecError) as err:
        click.echo(f"cannot resume {run_dir}: {err}", err=True)
        sys.exit(2)
    fails = parse_fail_on(fail_on)
    if not handle.points:
        handle.release()
        click.echo(
            f"{run_dir}: every point already finished ({len(handle.done)}/{handle.points_total}); "
            "nothing to resume",
            err=True,
        )
        code, why = run_outcome(run_dir, "completed", fails)
        if why:
            click.echo(f"exit {code}: {why}", err=True)
        sys.exit(code)
    if json_lines:
        no_tui = True
    if not no_tui and not sys.stdout.isatty():
        click.echo("stdout is not a terminal: running headless (--no-tui)", err=True)
        no_tui = True
    if no_tui:
        from bench_tui.runner.orchestration.headless import run_headless

        sys.exit(run_headless(handle, json_lines=json_lines, fail_on=fails))
    from bench_tui.runner.orchestration.child import in_child_process
    from bench_tui.tui.app import run_tui

    rc = run_tui(in_child_process(handle))
    if rc in (0, 1):
        rc, why = run_outcome(run_dir, "completed" if rc == 0 else "failed", fails)
        if why and rc == 1:
            click.echo(f"exit 1: {why}", err=True)
    sys.exit(rc)

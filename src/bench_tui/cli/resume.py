"""`bench-tui resume RUN_DIR [--no-tui] [--json]`: continue a killed run from its last finished point."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--no-tui", is_flag=True, help="Run headless: progress lines instead of the TUI.")
@click.option("--json", "json_lines", is_flag=True, help="With --no-tui: one JSON event per line.")
@click.option("--only", multiple=True, help="Of the unfinished points, run only those matching (glob or text).")
def resume(run_dir: Path, no_tui: bool, json_lines: bool, only: tuple[str, ...]) -> None:
    """Continue a killed run: finished points are kept, the rest run, appended to the same events.jsonl."""
    from bench_tui.reports.bundle import in_bundle_cache
    from bench_tui.reports.render import write_reports
    from bench_tui.runner.orchestration.session import RunError, start_run
    from bench_tui.spec.loader import SpecError

    if in_bundle_cache(run_dir):  # someone else's run: its commands start only through rerun's approval
        click.echo(f"cannot resume {run_dir}: it is an unpacked bundle, not one of your runs; use "
                   "`bench-tui rerun BUNDLE` (it shows what would start and asks first)", err=True)
        sys.exit(2)
    try:
        handle = start_run(None, resume=run_dir, only=list(only) or None)
        handle.finalize = write_reports
    except (RunError, SpecError) as err:
        click.echo(f"cannot resume {run_dir}: {err}", err=True)
        sys.exit(2)
    if not handle.points:
        click.echo(f"{run_dir}: every point already finished ({len(handle.done)}/{handle.points_total}); "
                   "nothing to resume", err=True)
        sys.exit(0)
    if json_lines:
        no_tui = True
    if not no_tui and not sys.stdout.isatty():
        click.echo("stdout is not a terminal: running headless (--no-tui)", err=True)
        no_tui = True
    if no_tui:
        from bench_tui.runner.orchestration.headless import run_headless

        sys.exit(run_headless(handle, json_lines=json_lines))
    from bench_tui.tui.app import run_tui

    sys.exit(run_tui(handle.in_child_process()))

"""`bench-tui watch RUN_DIR|BUNDLE [--follow]`: replay (or tail) a run's events in the TUI screens.

Textual is imported only when the command runs, so listing commands never pays for it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


def resolve_watch_target(target: Path) -> Path:
    """The run directory to watch: a directory with events.jsonl, an events.jsonl file, or a bundle."""
    if target.is_dir():
        if not (target / "events.jsonl").exists():
            raise click.ClickException(f"{target}: not a run directory (no events.jsonl)")
        return target
    if target.is_file():
        if target.name.endswith(".jsonl"):
            return target.parent
        from bench_tui.reports.bundle import BundleError, is_bundle, open_bundle

        if not is_bundle(target):
            raise click.ClickException(f"{target}: neither a run directory nor a bundle")
        try:
            return Path(open_bundle(target))
        except BundleError as exc:
            raise click.ClickException(str(exc)) from exc
    raise click.ClickException(f"{target}: no such run directory or bundle")


@click.command()
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--follow", "-f", is_flag=True, help="Keep reading events as the run writes them (tail).")
def watch(target: Path, follow: bool) -> None:
    """Replay or tail a run directory or bundle in the TUI."""
    run_dir = resolve_watch_target(target)
    if not sys.stdout.isatty():
        raise click.ClickException("watch needs a terminal (use `bench-tui report RUN_DIR` for text output)")
    from bench_tui.tui.app import run_tui

    sys.exit(run_tui(watch=run_dir, follow=follow))

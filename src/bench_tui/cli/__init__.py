"""The `bench-tui` command.

    bench-tui [SPEC] [--no-tui] [--json]     run a spec (default: the embedded local-cpu spec)
    bench-tui validate|plan|schema ...        the spec language
    bench-tui resume RUN_DIR                  continue a killed run
    bench-tui watch RUN_DIR|BUNDLE            replay or tail a run in the TUI
    bench-tui report|compare|bundle|rerun|history ...
    bench-tui regrade RUN_DIR                 re-apply graders and overrides to stored transcripts

Subcommands are imported only when used, so `--no-tui` never imports Textual and start-up stays fast.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import click

# name -> "module:attribute" of a click command
LAZY_COMMANDS: dict[str, str] = {
    "validate": "bench_tui.cli.spec:validate",
    "plan": "bench_tui.cli.spec:plan",
    "schema": "bench_tui.cli.spec:schema",
    "resume": "bench_tui.cli.resume:resume",
    "watch": "bench_tui.cli.watch:watch",
    "report": "bench_tui.cli.reports:report",
    "compare": "bench_tui.cli.reports:compare",
    "calibrate": "bench_tui.cli.calibrate:calibrate",
    "bundle": "bench_tui.cli.reports:bundle",
    "rerun": "bench_tui.cli.reports:rerun",
    "history": "bench_tui.cli.reports:history",
    "regrade": "bench_tui.cli.grade:regrade",
    "pack": "bench_tui.cli.grade:pack_group",
}


COMMAND_HELP: dict[str, str] = {
    "run": "Run SPEC (default: the embedded local-cpu spec); also `bench-tui SPEC`.",
    "validate": "Check a spec; errors as file:line:col with hints.",
    "plan": "Print the expanded matrix: engine/variant x workload x point, with counts.",
    "schema": "Print (or --write) the spec's JSON Schema (draft-07).",
    "resume": "Continue a killed run from its last finished point.",
    "watch": "Replay or tail a run directory or bundle in the TUI.",
    "report": "Render report.md / report.html from a run directory or bundle.",
    "compare": "Side-by-side tables of runs with noise-aware verdicts.",
    "calibrate": "Measure this host's session-to-session noise (A/A engine sessions) for compare.",
    "bundle": "Pack a run directory into one shareable archive (secrets redacted).",
    "rerun": "Run a bundle's spec again.",
    "history": "List and filter past runs (runs/history.sqlite).",
    "regrade": "Re-apply graders and overrides to stored transcripts.",
    "pack": "Pack tools: `pack test PACK` (labelled corpus agreement), `pack grade PACK CASES.yaml`.",
}


class BenchGroup(click.Group):
    """A group whose first positional argument may be a spec path instead of a command name."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # static one-liners: --help must not import every subsystem
        rows = [(name, COMMAND_HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            return cmd
        target = LAZY_COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        loaded: click.Command = getattr(importlib.import_module(module), attr)  # a test imports every one
        return loaded

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name in LAZY_COMMANDS or super().get_command(ctx, name) is not None:
            return super().resolve_command(ctx, args)
        # anything else (a spec path, or nothing) goes to `run`
        return "run", run, args

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `bench-tui` alone, or `bench-tui --no-tui`, runs the embedded default spec
        if not args or (args[0].startswith("-") and args[0] not in ("--help", "-h", "--version")):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(
    cls=BenchGroup, invoke_without_command=False, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="bench-tui")
def main() -> None:
    """Benchmark LLM inference engines from declarative YAML specs.

    Run `bench-tui SPEC` to open the TUI on a spec, `bench-tui --no-tui` to run the embedded
    default spec headless.
    """


@main.command()
@click.argument("spec", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-tui", is_flag=True, help="Run headless: progress lines instead of the TUI.")
@click.option("--json", "json_lines", is_flag=True, help="With --no-tui: one JSON event per line.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--only", multiple=True, help="Run only points whose id contains this text (repeatable).")
@click.option(
    "--fail-on",
    multiple=True,
    metavar="FLAGS",
    help="Also exit 1 when an ok point carries one of these flags (comma-separated codes or globs, "
    "e.g. client-limited,stalled; `any` for every flag).",
)
def run(
    spec: Path | None,
    no_tui: bool,
    json_lines: bool,
    runs_dir: Path | None,
    only: tuple[str, ...],
    fail_on: tuple[str, ...],
) -> None:
    """Run SPEC (default: the embedded local-cpu spec).

    Exit codes: 0 every point ok; 1 a point failed, degraded, skipped or flagged (--fail-on); 2 usage or spec
    error; 130 interrupted.
    """
    from bench_tui.runner.orchestration.planner import load_spec
    from bench_tui.spec.loader import SpecError, default_spec_path

    spec_path = spec if spec is not None else default_spec_path()
    try:
        load_spec(spec_path)  # fail fast with file:line:col before anything starts
    except SpecError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    if json_lines:
        no_tui = True
    if not no_tui and not sys.stdout.isatty():
        click.echo("stdout is not a terminal: running headless (--no-tui)", err=True)
        no_tui = True

    from bench_tui.reports.render import write_reports
    from bench_tui.runner.orchestration.outcome import parse_fail_on
    from bench_tui.runner.orchestration.session import RunError, start_run
    from bench_tui.runner.orchestration.store import RunDirError

    try:
        handle = start_run(spec_path, runs_dir=runs_dir, only=list(only) or None)
    except (RunError, RunDirError, SpecError) as err:  # runs_dir not writable, empty selection, in use, ...
        click.echo(f"cannot start the run: {err}", err=True)
        sys.exit(2)
    handle.finalize = write_reports
    sys.exit(
        _drive(
            handle, no_tui=no_tui, json_lines=json_lines, fail_on=parse_fail_on(fail_on), spec_path=spec_path
        )
    )


def _drive(
    handle: Any, *, no_tui: bool, json_lines: bool, fail_on: list[str], spec_path: Path | None = None
) -> int:
    """Run a prepared handle headless or in the TUI; the exit code from runner.outcome either way."""
    if no_tui:
        from bench_tui.runner.orchestration.headless import run_headless

        return run_headless(handle, json_lines=json_lines, fail_on=fail_on)
    from bench_tui.runner.orchestration.child import in_child_process
    from bench_tui.runner.orchestration.outcome import run_outcome
    from bench_tui.tui.app import run_tui

    run_dir = handle.run_dir
    rc = run_tui(in_child_process(handle), spec_path=spec_path)
    if rc in (0, 1):
        rc, why = run_outcome(run_dir, "completed" if rc == 0 else "failed", fail_on)
        if why and rc == 1:
            click.echo(f"exit 1: {why}", err=True)
    return rc


def entry(argv: list[str] | None = None) -> Any:
    return main.main(args=argv, prog_name="bench-tui")

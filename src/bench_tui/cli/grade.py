"""`bench-tui regrade RUN_DIR [--spec SPEC]` (re-apply graders and overrides to stored transcripts) and
`bench-tui pack test|grade` (grade labelled cases against a pack)."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import click

from bench_tui.engine_adapters.http import post_json
from bench_tui.graders.overrides import OverrideError
from bench_tui.graders.pack import Pack, PackError, load_pack
from bench_tui.graders.regrade import REGRADE_FILE, RegradeError, regrade_run
from bench_tui.graders.scoring import format_report


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--spec",
    "spec_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Spec whose grading.overrides to apply and store as the run's latest regrade "
    "(default: the latest regrade's overrides, else the run's spec.yaml).",
)
@click.option("--json", "as_json", is_flag=True, help="Print regrade.json to stdout instead of tables.")
@click.option(
    "--judge",
    "ask_judge",
    is_flag=True,
    help="Ask the spec's grading.judge for the opinions missing from the run's judge cache (judge.json); "
    "without it the cached opinions are used and nothing is sent.",
)
def regrade(run_dir: Path, spec_path: Path | None, as_json: bool, ask_judge: bool) -> None:
    """Re-apply graders and overrides to the transcripts stored in RUN_DIR (no engine is called).

    Prints raw vs adjusted scores per engine/variant and writes RUN_DIR/regrade.json with the overrides it
    applied: report, compare, bundle and history use them from then on. events.jsonl is not modified.
    """
    try:
        out, reports = regrade_run(run_dir, spec_path, post_json if ask_judge else None)
    except (RegradeError, PackError, OverrideError) as exc:
        click.echo(f"regrade: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    if not reports:
        click.echo(f"{run_dir}: no scenario results to regrade")
    by_key: dict[tuple[str, str], int] = defaultdict(int)
    for c in out["changes"]:
        if c["changed"]:
            by_key[(c["engine"], c["variant"])] += 1
    for rep in reports:
        click.echo(format_report(rep))
        n = by_key.get((rep.engine, rep.variant), 0)
        click.echo(f"  regraded: {n} verdict(s) differ from the stored ones")
        click.echo("")
    click.echo(f"wrote {run_dir / REGRADE_FILE} (events.jsonl not modified)")


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
@click.option(
    "--cases",
    "cases_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Cases file (default: <pack>.cases.yaml next to the pack).",
)
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


@pack_group.command("ablate")
@click.argument("pack_name", metavar="PACK")
@click.option(
    "--cases",
    "cases_files",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help="Cases file, repeatable (default: <pack>.cases.yaml next to the pack).",
)
@click.option("--mode", type=click.Choice(["strict", "lenient"]), default="lenient", show_default=True)
@click.option(
    "--lexicon", "with_lexicon", is_flag=True, help="Also leave out each entry of the pack's lexicon in turn."
)
def pack_ablate(pack_name: str, cases_files: tuple[Path, ...], mode: str, with_lexicon: bool) -> None:
    """Switch each grading rule (and with --lexicon each domain word) off in turn and show how many labelled
    verdicts it decides."""
    from bench_tui.graders.cases import (
        CasesError,
        ablate,
        ablate_lexicon,
        cases_path_for,
        load_cases,
        render_ablate,
    )

    pack = _load_pack_or_exit(pack_name)
    try:
        cases = [c for f in cases_files or (cases_path_for(pack),) for c in load_cases(f, pack)]
    except CasesError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    rows = ablate(pack, cases, mode) + (ablate_lexicon(pack, cases, mode) if with_lexicon else [])
    click.echo(render_ablate(rows, len(cases)))


@pack_group.command("grade")
@click.argument("pack_name", metavar="PACK")
@click.argument("cases_file", metavar="CASES.yaml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(["strict", "lenient"]), default="lenient", show_default=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON list: {scenario, label, verdict, confidence, unsure, rules, reasons}.",
)
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

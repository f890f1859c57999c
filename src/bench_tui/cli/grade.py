"""`bench-tui regrade RUN_DIR [--spec SPEC]`: re-apply graders and overrides to stored transcripts."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import click

from bench_tui.graders.overrides import OverrideError
from bench_tui.graders.pack import PackError
from bench_tui.graders.regrade import REGRADE_FILE, RegradeError, regrade_run
from bench_tui.graders.scoring import format_report


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--spec", "spec_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Spec whose grading.overrides to apply and store as the run's latest regrade "
                   "(default: the latest regrade's overrides, else the run's spec.yaml).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print regrade.json to stdout instead of tables.")
def regrade(run_dir: Path, spec_path: Path | None, as_json: bool) -> None:
    """Re-apply graders and overrides to the transcripts stored in RUN_DIR (no engine is called).

    Prints raw vs adjusted scores per engine/variant and writes RUN_DIR/regrade.json with the overrides it
    applied: report, compare, bundle and history use them from then on. events.jsonl is not modified.
    """
    try:
        out, reports = regrade_run(run_dir, spec_path)
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

"""`bench-tui rerun BUNDLE`: a bundle's (or run directory's) spec run again as a new local run.

The spec came from someone else, so nothing it names starts before the user has seen it and said yes
(``runner.launches``), and the run goes to the local runs directory, never the ``runs_dir`` the spec names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from bench_tui.reports.bundle import resolve_run
from bench_tui.reports.render import write_reports
from bench_tui.runner.orchestration.launches import approve, describe_launches
from bench_tui.runner.orchestration.planner import load_spec, plan_points
from bench_tui.runner.orchestration.session import new_run, select_points


class RerunRefused(Exception):
    """Not approved (the message says why and how to approve)."""


def prepare_rerun(
    source: Path | str,
    *,
    runs_dir: Path | str | None,
    only: list[str] | None,
    yes: bool,
    out: Callable[[str], None],
    stdin: TextIO | None = None,
) -> Any:
    """A new run (a RunHandle, not started) of ``source``'s spec, after approval. Raises ``RerunRefused``,
    ``ValueError`` (no spec, empty plan), the loader's ``SpecError``, ``BundleError``, ``RunDirError``."""
    run_dir = resolve_run(source)
    spec = run_dir / "spec.yaml"
    if not spec.is_file():
        raise ValueError(f"{source}: no spec.yaml in it")
    loaded = load_spec(spec)
    points = select_points(list(plan_points(loaded)), only or None)
    if not points:
        raise ValueError(
            f"no point of {source} matches --only {' '.join(only or [])}"
            if only
            else f"{source}: the plan is empty"
        )
    ok, why = approve(
        describe_launches(loaded, points), yes=yes, out=out, stdin=stdin, what=f"re-running {source}"
    )
    if not ok:
        raise RerunRefused(why)
    target = Path(runs_dir) if runs_dir is not None else Path.cwd() / "runs"
    handle = new_run(loaded, points, runs_dir=target, spec_path=spec, only=only or None)
    handle.finalize = write_reports
    return handle

"""The exit code of a run, for CI: decided from the run directory, so `run`, `resume` and the TUI agree.

0    every planned point finished ok (and, with ``--fail-on``, none carries one of the chosen flags)
1    a point failed, is degraded, was skipped or never ran, or carries a chosen flag; or the runner failed
2    usage or spec error, or the run directory is in use (set by the commands, not here)
130  interrupted (Ctrl-C, SIGTERM, SIGHUP): the run directory stays resumable
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

from bench_tui.runner.orchestration.store import RunDirError, plan_from_resolved, read_resolved
from bench_tui.runner.view import RunView

OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130


def parse_fail_on(values: Iterable[str]) -> list[str]:
    """``--fail-on client-limited,stalled --fail-on 'tg-*'`` -> flag codes or glob patterns; ``any`` = every flag."""
    out: list[str] = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def _flag_hit(flags: list[str], fail_on: list[str]) -> str | None:
    for f in flags:
        code = f.split(":", 1)[0].strip()
        for pat in fail_on:
            if pat == "any" or fnmatch.fnmatchcase(code, pat) or fnmatch.fnmatchcase(f, pat):
                return f
    return None


def run_outcome(run_dir: Path | str, status: str, fail_on: Iterable[str] = ()) -> tuple[int, str]:
    """(exit code, one line saying why when it is not 0) for a run that ended with ``status``."""
    if status == "aborted":
        return INTERRUPTED, "the run was interrupted (resume it with `bench-tui resume`)"
    if status not in ("completed", "failed"):
        return FAILED, f"the run ended {status}"
    run_dir = Path(run_dir)
    view = RunView.from_run_dir(run_dir)
    try:
        plan = [p.point_id for p in plan_from_resolved(read_resolved(run_dir))]
    except RunDirError:
        plan = []
    plan = plan or list(view.points)
    patterns = list(fail_on)
    counts = {"failed": 0, "degraded": 0, "skipped": 0, "not run": 0, "flagged": 0}
    example = ""
    for pid in plan:
        pv = view.points.get(pid)
        kind = (
            pv.status
            if pv is not None and pv.status in ("ok", "degraded", "failed", "skipped")
            else "not run"
        )
        hit = _flag_hit(pv.flags, patterns) if pv is not None and kind == "ok" and patterns else None
        if hit:
            kind = "flagged"
        if kind == "ok":
            continue
        counts[kind] += 1
        if not example:
            example = f"{pid}: {hit}" if hit else pid
    bad = {k: v for k, v in counts.items() if v}
    if bad:
        parts = ", ".join(f"{v} {k}" for k, v in bad.items())
        return FAILED, f"{parts} of {len(plan)} points (e.g. {example})"
    if status == "failed":
        return FAILED, "the runner failed"
    return OK, ""

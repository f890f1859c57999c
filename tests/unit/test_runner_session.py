"""Plan grouping, --only selection, the thread-safe control, resume errors, the resume command."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.resume import resume
from bench_tui.events import PlanPoint, ThroughputParams
from bench_tui.runner.orchestration.executor import RunControl, group_points
from bench_tui.runner.orchestration.session import RunError, resume_run, select_points


def _p(pid: str, engine: str = "e", variant: str = "v") -> PlanPoint:
    return PlanPoint(
        point_id=pid,
        engine=engine,
        variant=variant,
        workload="w",
        kind="throughput",
        params=ThroughputParams(pp=8, tg=8),
    )


def test_group_points_keeps_first_appearance_and_plan_order() -> None:
    pts = [_p("a1", "a", "x"), _p("b1", "b", "y"), _p("a2", "a", "x"), _p("a3", "a", "z"), _p("b2", "b", "y")]
    groups = group_points(pts)
    assert [k for k, _ in groups] == [("a", "x"), ("b", "y"), ("a", "z")]
    assert [[p.point_id for p in v] for _, v in groups] == [["a1", "a2"], ["b1", "b2"], ["a3"]]


def test_select_points_glob_and_substring() -> None:
    pts = [
        _p("llama.default/sweep/pp512-tg64-d0-c1"),
        _p("llama.default/sweep/pp512-tg64-d0-c4"),
        _p("llama.fast/tools/standard"),
    ]
    assert select_points(pts, None) == pts
    assert [p.point_id for p in select_points(pts, ["*-c4"])] == ["llama.default/sweep/pp512-tg64-d0-c4"]
    assert [p.point_id for p in select_points(pts, ["tools"])] == ["llama.fast/tools/standard"]
    assert len(select_points(pts, ["llama.default/*", "tools"])) == 3
    assert select_points(pts, ["nomatch*"]) == []


def test_control_is_thread_safe_and_signals_the_loop() -> None:
    c = RunControl()
    got: list[str] = []

    class FakeLoop:
        def call_soon_threadsafe(self, fn, arg) -> None:
            fn(arg)

    c.attach(FakeLoop(), got.append)  # type: ignore[arg-type]
    threads = [threading.Thread(target=c.skip_point) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(c.take_skip() for _ in range(30)) == 20
    c.pause()
    assert c.paused
    c.abort()
    assert c.aborted and not c.paused  # abort releases a pause
    assert got.count("skipped") == 20 and got[-1] == "aborted"
    c.detach()
    c.skip_point()  # no loop attached: just recorded
    assert c.take_skip()


def test_resume_errors_are_plain(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="no such run directory"):
        resume_run(tmp_path / "missing")
    with pytest.raises(RunError, match="not a run directory"):
        resume_run(tmp_path)


def test_resume_command_without_traceback(tmp_path: Path) -> None:
    res = CliRunner().invoke(resume, [str(tmp_path / "nope"), "--no-tui"])
    assert res.exit_code == 2
    assert "cannot resume" in res.output and "Traceback" not in res.output

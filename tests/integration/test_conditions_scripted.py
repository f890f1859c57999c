"""A real short run against the scripted server records the machine's conditions on every point, the
run view folds them, and the report's appendix shows them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from scripted_engine import factory, loaded_from_text, plan

from bench_tui.events import PointFinished
from bench_tui.reports.render import render_run
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import new_run
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.view import RunView
from scripted_server import Schedule, ScriptedServerProcess

SPEC = """\
version: 1
name: scripted-conditions
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [24]
    tg: [40]
    depths: [0]
    concurrency: [1, 2]
    repetitions: 2
"""


def test_every_point_records_its_conditions_and_the_report_shows_them(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.02), port=0) as srv:
        text = SPEC.format(port=srv.port)
        path = tmp_path / "spec.yaml"
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
        )
        out = io.StringIO()
        assert run_headless(handle, json_lines=False, out=out) == 0, out.getvalue()
    finished = [e for e in load_events(handle.run_dir) if isinstance(e, PointFinished)]
    assert len(finished) == 2
    for ev in finished:
        c = ev.conditions
        assert c is not None, ev.point_id
        assert c.before is not None and c.after is not None
        # each point streams for well over a second (2 repetitions x 40 tokens x 20 ms): readings during it
        assert c.samples >= 1 and c.during_median is not None and c.during_max is not None
        assert c.after.t >= c.before.t and c.interval_s == 1.0
        for r in (c.before, c.after, c.during_median):
            assert r.load1 is not None and r.cpus and r.mem_available_mb
        # CPU shares need an earlier reading: the first point's before may come too soon after the start
        for r in (c.after, c.during_median):
            assert r.busy is not None and 0.0 <= r.busy <= 1.0
            assert r.own is not None and r.other is not None and 0.0 <= r.own <= 1.0 and 0.0 <= r.other <= 1.0
        assert c.after.own + c.after.other == pytest.approx(c.after.busy, abs=2e-4)  # type: ignore[operator]
    view = RunView.from_run_dir(handle.run_dir)
    assert all(p.conditions is not None for p in view.points.values())
    md = render_run(handle.run_dir, "md")
    assert "**Machine conditions per point**" in md
    for ev in finished:
        assert f"| {ev.point_id} | {ev.conditions.samples} |" in md  # type: ignore[union-attr]
    assert "Machine conditions per point" in render_run(handle.run_dir, "html")

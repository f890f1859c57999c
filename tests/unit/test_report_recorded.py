"""Reports on a run directory recorded from the real runner (tests/unit/data/runs/scripted_resume: a sweep on
the scripted server, killed and resumed), plus HTML/SVG well-formedness, crash log tails and `rerun`."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import rerun
from bench_tui.events import (
    EngineCrashed,
    PlanPoint,
    PlanReady,
    PointFinished,
    ThroughputParams,
    read_events,
)
from bench_tui.reports.model import load_run
from bench_tui.reports.render import render, write_reports
from bench_tui.reports.sharing import bundle_run
from fixtures_runs import make_run_dir, write_events

RECORDED = Path(__file__).parent / "data" / "runs" / "scripted_resume"


@pytest.fixture
def recorded(tmp_path):
    dst = tmp_path / "runs" / "20261202T225659Z_02c7de"
    shutil.copytree(RECORDED, dst)
    return dst


def test_recorded_runner_output_renders_every_point(recorded):
    paths = write_reports(recorded)
    assert {p.name for p in paths} == {"report.md", "report.html"}
    md = (recorded / "report.md").read_text()
    pf = {e.point_id: e for e in read_events(str(recorded / "events.jsonl")) if isinstance(e, PointFinished)}
    assert len(pf) == 4
    m = load_run(recorded)
    assert m.status == "completed" and m.points_done == 4
    assert "the run is incomplete" not in md
    assert "resuming: 2 of 4 points already finished" in md  # the runner's warning becomes a caveat
    for pid, ev in pf.items():
        row = next(ln for ln in md.splitlines() if ln.startswith(f"| {pid} | ok |"))
        ttft = re.search(r"\| (\d+\.\d) \[", row)
        assert ttft and float(ttft.group(1)) == pytest.approx(ev.summary.ttft_ms.median, abs=0.051)
        s = ev.summary
        assert f"{s.ok}/{s.requests}" in row
    # every eff tg median of the pivot is one of the events' medians
    block = md.split("effective tg t/s (depth × concurrency)", 1)[1].split("\n\n\n", 1)[0]
    medians = {round(e.summary.eff_tg_tps.median, 1) for e in pf.values()}
    cells = re.findall(r"\| (\d+\.\d) \[", block)
    assert len(cells) == 4 and all(float(c) in medians for c in cells)


class _Balance(HTMLParser):
    VOID = {"meta", "br", "hr", "img", "input", "link", "circle", "rect", "line", "polyline"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def test_html_and_svg_are_well_formed(tmp_path):
    run = make_run_dir(tmp_path / "runs")
    html = render(load_run(run), "html")
    p = _Balance()
    p.feed(html)
    assert p.errors == [] and p.stack == []
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(svgs) >= 6
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        assert root.findall(".//{http://www.w3.org/2000/svg}circle") or root.findall(
            ".//{http://www.w3.org/2000/svg}rect"
        )


def test_crash_tail_and_crash_caveat(tmp_path):
    run = make_run_dir(tmp_path / "runs")
    evs = read_events(str(run / "events.jsonl"))
    evs.insert(
        -1,
        EngineCrashed(
            engine="vllm",
            variant="mtp",
            returncode=-9,
            point_id="vllm.mtp/tools",
            log_tail=["INFO step 12", "ERROR CUDA out of memory"],
            will_restart=True,
        ),
    )
    write_events(run / "events.jsonl", evs)
    md = render(load_run(run), "md")
    assert "vllm.mtp crashed (exit -9 during vllm.mtp/tools (restarted))" in md
    assert "vllm.mtp log before crash 1:" in md and "ERROR CUDA out of memory" in md


def test_rerun_runs_the_bundled_spec(tmp_path, monkeypatch):
    import bench_tui.reports.rerun as rerun_mod
    import bench_tui.runner.orchestration.headless as headless
    from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY

    run = make_run_dir(tmp_path / "runs")
    out, _ = bundle_run(run, tmp_path / "b.tar.gz")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    calls = {}

    class Handle:
        run_dir = tmp_path / "runs" / "new"

    def fake_new_run(loaded, points, *, runs_dir=None, spec_path=None, only=None, **kw):
        calls["spec"] = Path(spec_path).read_text()
        calls["runs_dir"], calls["only"] = runs_dir, only
        calls["points"] = [p.point_id for p in points]
        return Handle()

    def fake_headless(handle, json_lines=False, **kw):
        calls["json"] = json_lines
        return 0

    monkeypatch.setattr(rerun_mod, "new_run", fake_new_run)
    monkeypatch.setattr(headless, "run_headless", fake_headless)
    r = CliRunner().invoke(
        rerun, [str(out), "--runs-dir", str(tmp_path / "again"), "--json", "--only", "sweep", "--yes"]
    )
    assert r.exit_code == 0, r.output
    assert "name: fixture-study" in calls["spec"] and "${BENCH_FIXTURE_API_KEY}" in calls["spec"]
    assert calls["runs_dir"] == tmp_path / "again" and calls["only"] == ["sweep"] and calls["json"] is True
    assert calls["points"] and all("sweep" in p for p in calls["points"])
    assert "run: " in r.output and FIXTURE_API_KEY not in r.output  # the commands shown, secrets scrubbed
    r = CliRunner().invoke(rerun, [str(tmp_path / "missing.tar.gz")])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_minimal_and_broken_run_dirs_still_render(tmp_path):
    from bench_tui.events import PointSummary, RunStarted, Stat

    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    write_events(
        run / "events.jsonl", [RunStarted(run_id="r1", spec_name="s", spec_path="", run_dir=str(run))]
    )
    md = render(load_run(run), "md")
    assert "the run is incomplete: 0 of 0 points" in md
    assert "Not in this run" not in md  # nothing was planned: no section is missing from it
    assert "spec.yaml could not be read (spec.yaml missing)" in md
    # a point's parameters come from the plan, typed; a finished point the plan does not name is not guessed
    (run / "spec.yaml").write_text("version: 1\nname: [unclosed\n")
    (run / "env.json").write_text("{not json")
    st = Stat(n=3, median=10.0, ci_low=9.0, ci_high=11.0)
    pid = "e.v/tp/pp64-tg16-d512-c2"
    write_events(
        run / "events.jsonl",
        [
            RunStarted(run_id="r1", spec_name="s", spec_path="", run_dir=str(run)),
            PlanReady(
                points=[
                    PlanPoint(
                        point_id=pid,
                        engine="e",
                        variant="v",
                        workload="tp",
                        kind="throughput",
                        params=ThroughputParams(pp=64, tg=16, depth=512, concurrency=2),
                    )
                ]
            ),
            PointFinished(point_id=pid, status="ok", summary=PointSummary(eff_tg_tps=st, ok=3, requests=3)),
            PointFinished(
                point_id="e.v/tp/pp1-tg1-d1-c1", status="ok", summary=PointSummary(ok=1, requests=1)
            ),
        ],
    )
    m = load_run(run)
    (p,) = m.points
    assert [w.point_id for w in m.warnings] == ["e.v/tp/pp1-tg1-d1-c1"]
    assert (p.kind, p.depth, p.concurrency, p.pp) == ("throughput", 512, 2, 64)
    md = render(m, "md")
    assert "| 512 | 10.0 [9.0–11.0] |" in md
    assert "env.json does not parse" in md and "spec.yaml could not be read" in md
    assert (
        "Not in this run" not in md
    )  # the one planned kind was measured; the kinds nobody asked for go unnamed
    # a planned throughput point that never ran: its section is named as missing, and only it
    write_events(
        run / "events.jsonl",
        [
            RunStarted(run_id="r1", spec_name="s", spec_path="", run_dir=str(run)),
            PlanReady(points=[m.points[0].point]),
        ],
    )
    assert "Not in this run: throughput." in render(load_run(run), "md")

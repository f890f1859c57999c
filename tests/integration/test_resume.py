"""Resume after SIGKILL: every point finishes exactly once and no request is counted twice."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from scripted_engine import factory, loaded_from_text, plan

from bench_tui.events import (
    EngineStats,
    PointFinished,
    PointStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    attempt_of,
    read_events,
)
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import resume_run
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.view import FINISHED_STATUSES, RunView
from scripted_server import Schedule, ScriptedServerProcess

DRIVER = Path(__file__).resolve().parent / "scripted_engine.py"


def _driver_env() -> dict[str, str]:
    """The driver imports the test helpers and the same bench_tui as this process (PYTHONPATH kept)."""
    path = [str(DRIVER.parent), str(DRIVER.parents[1]), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))


SPEC = """\
version: 1
name: resume
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [8]
    depths: [0, 32]
    concurrency: [1, 2]
    repetitions: 2
    warmup: 1
"""


def _wait_for_kill_point(events_path: Path, proc: subprocess.Popen[bytes], deadline_s: float = 90.0) -> str:
    """Wait until two points finished and a third has measured requests in flight; returns its id."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the driver ended before it could be killed"
        if events_path.is_file():
            evs = read_events(str(events_path))
            done = {e.point_id for e in evs if isinstance(e, PointFinished)}
            started = [e.point_id for e in evs if isinstance(e, PointStarted)]
            if len(done) >= 2 and started and started[-1] not in done:
                cur = started[-1]
                if any(
                    isinstance(e, RequestFinished) and e.record.point_id == cur and not e.warmup for e in evs
                ):
                    return cur
        time.sleep(0.02)
    raise AssertionError("timed out waiting for the run to reach the kill point")


def test_resume_after_sigkill(tmp_path: Path) -> None:
    # slow enough (~0.25 s per request) that the kill lands inside a point
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.03), port=0) as srv:
        spec_file = tmp_path / "resume.yaml"
        spec_file.write_text(SPEC.format(port=srv.port))
        runs = tmp_path / "runs"
        env = _driver_env()
        proc = subprocess.Popen(
            [sys.executable, str(DRIVER), str(spec_file), str(runs)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (runs.is_dir() and any(runs.iterdir())):
                time.sleep(0.02)
            (run_dir,) = list(runs.iterdir())
            killed_point = _wait_for_kill_point(run_dir / "events.jsonl", proc)
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            assert proc.stderr is not None
            proc.stderr.close()
        before = load_events(run_dir)
        assert not any(isinstance(e, RunFinished) for e in before)
        done_before = {e.point_id for e in before if isinstance(e, PointFinished)}
        assert killed_point not in done_before

        handle = resume_run(run_dir, load_text=loaded_from_text, adapter_factory=factory, engine_warmup=False)
        assert handle.done == done_before
        assert killed_point in {p.point_id for p in handle.points}
        rc = run_headless(handle, out=io.StringIO())
    assert rc == 0

    events = load_events(run_dir)
    plan_ids = [p.point_id for p in plan(loaded_from_text(SPEC.format(port=srv.port), spec_file))]
    finished = Counter(
        e.point_id for e in events if isinstance(e, PointFinished) and e.status in FINISHED_STATUSES
    )
    assert sorted(finished) == sorted(plan_ids)
    assert set(finished.values()) == {1}, finished  # no point lost, none finished twice
    runs_started = [e for e in events if isinstance(e, RunStarted)]
    assert [r.resumed for r in runs_started] == [False, True]
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    assert events[-1].points_done == events[-1].points_total == len(plan_ids)

    # every request id is unique over the whole file; the killed attempt's records are left out of its point
    ids = [e.record.request_id for e in events if isinstance(e, RequestFinished)]
    assert len(ids) == len(set(ids))
    recs = RunView.from_events(events, keep_records=True).records()
    summaries = {e.point_id: e.summary for e in events if isinstance(e, PointFinished)}
    for pid in plan_ids:
        assert len(recs[pid]) == summaries[pid].requests
    killed_recs = recs[killed_point]
    assert killed_recs and {attempt_of(r.request_id) for r in killed_recs} == {2}
    stale = [
        e
        for e in events
        if isinstance(e, RequestFinished)
        and e.record.point_id == killed_point
        and attempt_of(e.record.request_id) == 1
        and not e.warmup
    ]
    assert stale, "the killed attempt left records behind (kept in the file, not counted)"
    assert sum(len(v) for v in recs.values()) == sum(s.requests for s in summaries.values())
    stats = [e for e in events if isinstance(e, EngineStats)]
    assert stats and all(
        e.running is not None and e.running >= 0 for e in stats
    )  # live gauges while measuring


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_aborts_cleanly_then_resume_completes(tmp_path: Path, sig: signal.Signals) -> None:
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.03), port=0) as srv:
        spec_file = tmp_path / "resume.yaml"
        spec_file.write_text(SPEC.format(port=srv.port))
        runs = tmp_path / "runs"
        env = _driver_env()
        proc = subprocess.Popen(
            [sys.executable, str(DRIVER), str(spec_file), str(runs)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (runs.is_dir() and any(runs.iterdir())):
                time.sleep(0.02)
            (run_dir,) = list(runs.iterdir())
            _wait_for_kill_point(run_dir / "events.jsonl", proc)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 130, err.decode()[-2000:]
        assert b"Traceback" not in err
        events = load_events(run_dir)
        assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"
        assert b"run aborted" in out
        handle = resume_run(run_dir, load_text=loaded_from_text, adapter_factory=factory, engine_warmup=False)
        assert run_headless(handle, out=io.StringIO()) == 0
    events = load_events(run_dir)
    finished = Counter(
        e.point_id for e in events if isinstance(e, PointFinished) and e.status in FINISHED_STATUSES
    )
    assert len(finished) == 4 and set(finished.values()) == {1}
    assert [e.status for e in events if isinstance(e, RunFinished)] == ["aborted", "completed"]

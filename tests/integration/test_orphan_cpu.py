"""`kill -9` of the runner on the real CPU engine (llama.cpp through the llamacpp adapter): the engine does not
outlive it, and `resume` finishes every planned point exactly once with no process left behind.

1. The runner alone is killed: the engine's watchdog sees the runner go and stops the engine's group.
2. The runner and the watchdog are killed together (the engine is truly orphaned, reparented, port held):
   `resume` recognises the engine from the pid + start time recorded in the run directory and stops it first.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bench_tui.engine_adapters.install import model_path
from bench_tui.events import (
    EngineStarting,
    PointFinished,
    RequestStarted,
    RunFinished,
    RunWarning,
    read_events,
)
from bench_tui.runner.orchestration.store import load_events, read_resolved
from bench_tui.runner.view import FINISHED_STATUSES
from proc_helpers import alive, group_pids
from scripted_server import free_port

pytestmark = pytest.mark.skipif(not model_path().exists(), reason="the CPU model is not installed")

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

SPEC = """\
version: 1
name: orphan
engines:
  cpu:
    kind: llamacpp
    launcher: ["{{python}}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: {port}
    startup_timeout: 180
    args: {{ctx-size: 2048, parallel: 2, threads: 2, metrics: true, slots: true}}
workloads:
  sweep:
    kind: throughput
    pp: [32]
    tg: [12]
    concurrency: [1, 2]
    repetitions: 2
    warmup: 0
"""


def _start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(port=free_port(19700, 19900)))
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench_tui.cli", "run", str(spec), "--no-tui", "--runs-dir", str(runs)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be killed"
        dirs = [d for d in runs.iterdir() if d.is_dir()] if runs.is_dir() else []
        if dirs and (dirs[0] / "events.jsonl").is_file():
            evs = read_events(str(dirs[0] / "events.jsonl"))
            if any(isinstance(e, RequestStarted) and ":r" in e.request_id for e in evs):
                return proc, dirs[0]  # a measured request is in flight
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the run never reached a measured request")


def _engine_pid(run_dir: Path) -> int:
    (pid,) = [e.pid for e in load_events(run_dir) if isinstance(e, EngineStarting) and e.pid]
    return pid


def _gone_within(pgid: int, limit: float) -> float | None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if not group_pids(pgid):
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def _resume_and_check(run_dir: Path) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", "resume", str(run_dir), "--no-tui"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode in (0, 1), res  # 1 only if a point is degraded on this loaded box, never a crash
    assert "Traceback" not in res.stderr
    events = load_events(run_dir)
    plan = [p["point_id"] for p in read_resolved(run_dir)["plan"]]
    finished = Counter(
        e.point_id for e in events if isinstance(e, PointFinished) and e.status in FINISHED_STATUSES
    )
    assert sorted(finished) == sorted(plan) and set(finished.values()) == {1}, finished  # each exactly once
    assert not any(isinstance(e, PointFinished) and "engine-start-failed" in e.flags for e in events)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    for e in events:
        if isinstance(e, EngineStarting) and e.pid:
            assert not group_pids(e.pid), f"engine group {e.pid} left running"
    assert not list((run_dir / "engines").glob("*.proc.json"))
    return res


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def test_sigkill_of_the_runner_takes_the_engine_down_and_resume_completes(tmp_path: Path) -> None:
    proc, run_dir = _start(tmp_path)
    try:
        engine = _engine_pid(run_dir)
        assert alive(engine)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        took = _gone_within(engine, 20.0)
    finally:
        _kill(proc)
    assert took is not None, "the engine outlived its runner"
    print(f"\nengine group gone {took:.2f} s after SIGKILL of the runner")
    _resume_and_check(run_dir)


def test_an_orphaned_engine_is_recognised_and_stopped_by_resume(tmp_path: Path) -> None:
    proc, run_dir = _start(tmp_path)
    engine = _engine_pid(run_dir)
    try:
        (record,) = (run_dir / "engines").glob("*.proc.json")
        doc = json.loads(record.read_text())
        assert doc["pid"] == engine and doc["start_ticks"]
        os.kill(doc["watchdog_pid"], signal.SIGKILL)  # the runner and its watchdog die together
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        time.sleep(1.0)
        assert alive(engine), "expected a truly orphaned engine for this test"
        t0 = time.monotonic()
        res = _resume_and_check(run_dir)
        print(f"\nresume with an orphan: {time.monotonic() - t0:.1f} s in all")
    finally:
        _kill(proc)
        if group_pids(engine):
            os.killpg(engine, signal.SIGKILL)
    assert not alive(engine)
    warnings = [e for e in load_events(run_dir) if isinstance(e, RunWarning) and e.code == "leftover-engine"]
    assert len(warnings) == 1 and str(engine) in warnings[0].message
    assert "leftover" in res.stdout

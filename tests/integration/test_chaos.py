"""Crash safety through the real command line, on scripted engines (real processes, known behaviour).

Each test runs ``python -m bench_tui.cli`` as a user or CI would and checks the run directory and the exit code:
a concurrent resume is refused, a double Ctrl-C stops an engine that ignores SIGTERM and still writes the
record and the report, exit codes follow the points, points whose engine could not start are resumed, the
engine warm-up and hung generations are bounded by the spec, an oversized SSE event is an error.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from bench_tui.events import (
    EngineStarting,
    EngineStopped,
    PointFinished,
    PointStarted,
    RequestFinished,
    RequestStarted,
    RunFinished,
    RunStarted,
    RunWarning,
    read_events,
)
from bench_tui.runner.orchestration.child import in_child_process
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.view import FINISHED_STATUSES
from proc_helpers import alive, group_pids
from scripted_server import Schedule, ScriptedServerProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "scripted_server.py"
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))


def _command_engine(name: str, port: int, *extra: str) -> str:
    args = ", ".join(f'"{a}"' for a in ["{python}", str(SERVER), "--port", "{port}", *extra])
    return f"""  {name}:
    kind: command
    command: [{args}]
    port: {port}
    startup_timeout: 30
"""


def _external(port: int) -> str:
    return f"""  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
"""


def _spec(engines: str, workload: str = "") -> str:
    return f"""version: 1
name: chaos
engines:
{engines}workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [8]
    concurrency: [1, 2]
    repetitions: 2
    warmup: 0
{workload}"""


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "bench_tui.cli", *args]


def _run(
    tmp_path: Path, spec: str, *extra: str, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec)
    runs = tmp_path / "runs"
    res = subprocess.run(
        _cli("run", str(spec_file), "--no-tui", "--runs-dir", str(runs), *extra),
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    return res, run_dir


def _start(tmp_path: Path, spec: str) -> tuple[subprocess.Popen[str], Path]:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        _cli("run", str(spec_file), "--no-tui", "--runs-dir", str(runs)),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (runs.is_dir() and any(d.is_dir() for d in runs.iterdir())):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    return proc, run_dir


def _wait_events(run_dir: Path, proc: subprocess.Popen[str], cond, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        path = run_dir / "events.jsonl"
        if path.is_file() and cond(read_events(str(path))):
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _measuring(evs: list) -> bool:  # type: ignore[type-arg]
    return any(isinstance(e, RequestStarted) and "@" in e.request_id and ":r" in e.request_id for e in evs)


def _engine_pids(events: list) -> list[int]:  # type: ignore[type-arg]
    return [e.pid for e in events if isinstance(e, EngineStarting) and e.pid]


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.communicate(timeout=10)


# ------------------------------------------------------------------------------------------------ one writer


def test_a_resume_of_a_running_run_is_refused_before_anything_starts(tmp_path: Path) -> None:
    port = free_port(19100, 19400)
    # slow enough tokens (150 ms) that the run is still measuring when the second session starts on a busy box
    spec = _spec(_command_engine("s", port, "--itl-ms", "150"))
    proc, run_dir = _start(tmp_path, spec)
    try:
        _wait_events(run_dir, proc, _measuring, "a measured request")
        size_before = (run_dir / "events.jsonl").stat().st_size
        res = subprocess.run(
            _cli("resume", str(run_dir), "--no-tui"), env=ENV, capture_output=True, text=True, timeout=60
        )
        assert res.returncode == 2, res
        assert "in use by another bench-tui session" in res.stderr and "Traceback" not in res.stderr
        assert f"pid {proc.pid}" in res.stderr
        assert res.stdout == ""  # it printed no progress: it never started
        out, err = proc.communicate(timeout=120)
    finally:
        _kill(proc)
    assert proc.returncode == 0, err
    events = load_events(run_dir)
    assert (run_dir / "events.jsonl").stat().st_size > size_before
    assert sum(isinstance(e, RunStarted) for e in events) == 1
    assert sum(isinstance(e, RunFinished) for e in events) == 1
    assert len(_engine_pids(events)) == 1  # the refused resume started no engine
    finished = Counter(e.point_id for e in events if isinstance(e, PointFinished))
    assert len(finished) == 2 and set(finished.values()) == {1}
    # once the run is over, the directory is free again (nothing left to resume)
    res = subprocess.run(
        _cli("resume", str(run_dir), "--no-tui"), env=ENV, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0 and "nothing to resume" in res.stderr


# ------------------------------------------------------------------------------------------------ Ctrl-C


def test_double_ctrl_c_kills_a_stubborn_engine_and_still_writes_the_record_and_report(tmp_path: Path) -> None:
    port = free_port(19100, 19400)
    # the engine ignores SIGTERM: a clean stop would wait the whole 20 s grace before SIGKILL
    spec = _spec(_command_engine("s", port, "--itl-ms", "200", "--ignore-sigterm"))
    proc, run_dir = _start(tmp_path, spec)
    try:
        _wait_events(run_dir, proc, _measuring, "a measured request")
        (engine_pid,) = _engine_pids(load_events(run_dir))
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # the clean abort is still waiting for the engine to stop
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        forced_s = time.monotonic() - t0
    finally:
        _kill(proc)
    assert proc.returncode == 130, err
    assert "forcing" in err and "Traceback" not in err
    print(f"\ndouble Ctrl-C: run ended {forced_s:.2f} s after the second SIGINT")
    assert forced_s < 10, forced_s  # not the 20 s SIGTERM grace
    events = load_events(run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"
    assert (run_dir / "report.md").is_file()
    stopped = [e for e in events if isinstance(e, EngineStopped)]
    assert stopped and "SIGKILL" in (stopped[-1].reason + str(stopped[-1].returncode))
    assert not alive(engine_pid) and not group_pids(engine_pid)
    assert not list((run_dir / "engines").glob("*.proc.json"))  # a stopped engine leaves no record behind


# ------------------------------------------------------------------------------------------------ exit codes


def test_exit_codes_follow_the_points_and_start_failures_are_resumed(tmp_path: Path) -> None:
    good, blocked = free_port(19100, 19400), free_port(19400, 19700)
    spec = _spec(_command_engine("good", good) + _command_engine("blocked", blocked))
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", blocked))  # "port in use": the blocked engine cannot start
    holder.listen()
    try:
        res, run_dir = _run(tmp_path, spec)
    finally:
        holder.close()
    assert res.returncode == 1, res
    assert "exit 1: 2 failed of 4 points" in res.stderr
    events = load_events(run_dir)
    failed = [e for e in events if isinstance(e, PointFinished) and e.status == "failed"]
    assert {e.point_id.split(".")[0] for e in failed} == {"blocked"}
    assert all("engine-start-failed" in e.flags for e in failed)

    res = subprocess.run(
        _cli("resume", str(run_dir), "--no-tui"), env=ENV, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res
    events = load_events(run_dir)
    started = Counter(e.point_id for e in events if isinstance(e, PointStarted))
    ok = Counter(e.point_id for e in events if isinstance(e, PointFinished) and e.status == "ok")
    assert len(ok) == 4 and set(ok.values()) == {1}  # every point finished ok exactly once
    assert all(started[p] == (2 if p.startswith("blocked") else 1) for p in ok)
    res = subprocess.run(
        _cli("resume", str(run_dir), "--no-tui"), env=ENV, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0 and "nothing to resume" in res.stderr


def test_fail_on_makes_chosen_flags_fail_the_run(tmp_path: Path) -> None:
    # the server stops at 5 tokens where 8 were asked: ok points flagged tg-not-exact
    with ScriptedServerProcess(Schedule(tokens=5), port=0) as srv:
        res, run_dir = _run(tmp_path / "a", _spec(_external(srv.port)))
        assert res.returncode == 0, res  # a flag alone is information
        assert all(
            e.status == "ok" and any(f.startswith("tg-not-exact") for f in e.flags)
            for e in load_events(run_dir)
            if isinstance(e, PointFinished)
        )
        res, _ = _run(tmp_path / "b", _spec(_external(srv.port)), "--fail-on", "client-limited,tg-not-exact")
        assert res.returncode == 1 and "2 flagged of 2 points" in res.stderr, res
    res = subprocess.run(
        _cli("resume", str(run_dir), "--no-tui", "--fail-on", "tg-*"),
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "nothing to resume" in res.stderr


def test_a_spec_error_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "version: 1\nname: x\nengines: {}\nworkloads:\n  w:\n    kind: throughput\n    idle_timeout: -1\n"
    )
    res = subprocess.run(
        _cli("run", str(bad), "--no-tui", "--runs-dir", str(tmp_path / "runs")),
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2 and "idle_timeout" in res.stderr and "Traceback" not in res.stderr


# ------------------------------------------------------------------------------------------------ stalls


def test_the_engine_warmup_is_bounded_by_the_request_timeout(tmp_path: Path) -> None:
    # the first request (the engine warm-up) is accepted and never answered
    with ScriptedServerProcess(Schedule(fault="stall", fault_requests=1), port=0) as srv:
        t0 = time.monotonic()
        res, run_dir = _run(tmp_path, _spec(_external(srv.port), "    request_timeout: 2\n"))
        took = time.monotonic() - t0
    assert res.returncode == 0, res
    print(f"\nstalled warm-up, request_timeout 2 s: whole run {took:.1f} s")
    assert took < 60, took  # was: a fixed 120 s
    events = load_events(run_dir)
    (warm,) = [
        e.record for e in events if isinstance(e, RequestFinished) and "_engine-warmup" in e.record.point_id
    ]
    assert warm.error_kind == "timeout"
    assert 1.5 < (warm.t_done_ns - warm.t_send_ns) / 1e9 < 10
    assert any(isinstance(e, RunWarning) and e.code == "warmup-timeout" for e in events)


def test_a_generation_that_hangs_ends_the_point_early_marked_stalled(tmp_path: Path) -> None:
    # every request stops after 3 tokens and never finishes; request_timeout alone would take minutes
    with ScriptedServerProcess(Schedule(itl_s=0.01, fault="stall", fault_after=3), port=0) as srv:
        t0 = time.monotonic()
        res, run_dir = _run(
            tmp_path, _spec(_external(srv.port), "    request_timeout: 300\n    idle_timeout: 1.5\n")
        )
        took = time.monotonic() - t0
    print(f"\nhung generations, idle_timeout 1.5 s, request_timeout 300 s: whole run {took:.1f} s")
    assert res.returncode == 1, res
    assert took < 90, took
    events = load_events(run_dir)
    points = [e for e in events if isinstance(e, PointFinished)]
    assert len(points) == 2
    for pf in points:
        assert pf.status == "failed" and "stalled:1.5s" in pf.flags, pf
    measured = [e.record for e in events if isinstance(e, RequestFinished) and not e.warmup]
    assert measured and all(r.error_kind == "stalled" for r in measured)
    assert all(r.client_output_tokens == 3 for r in measured if r.error_kind == "stalled" and r.chunks)
    assert any(isinstance(e, RunWarning) and e.code == "stalled" for e in events)


def test_an_oversized_sse_event_is_an_error_not_a_token(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(fault="giant", fault_after=2), port=0) as srv:
        res, run_dir = _run(tmp_path, _spec(_external(srv.port)))
    assert res.returncode == 1, res
    events = load_events(run_dir)
    measured = [e.record for e in events if isinstance(e, RequestFinished) and not e.warmup]
    assert measured and all(
        not r.ok and r.error_kind == "stream" and "larger than" in r.error for r in measured
    )
    assert all(r.client_output_tokens == 2 for r in measured)  # the two real tokens, not the giant one
    assert all(e.status == "failed" for e in events if isinstance(e, PointFinished))
    assert (run_dir / "events.jsonl").stat().st_size < 1_000_000  # nothing of the 2 MiB events was stored
    assert {e.status for e in events if isinstance(e, PointFinished)} <= FINISHED_STATUSES


# ------------------------------------------------------------------------------------------------ the TUI's child


def test_the_tuis_child_process_holds_the_run_dirs_lock(tmp_path: Path) -> None:
    """The TUI prepares the run, then a child process measures it: the lock passes to the child with no gap,
    stays held while it measures (a resume is refused) and is free once it has finished."""
    from bench_tui.runner.orchestration.session import RunError, resume_run, start_run

    with ScriptedServerProcess(Schedule(itl_s=0.05), port=0) as srv:
        spec = tmp_path / "spec.yaml"
        spec.write_text(_spec(_external(srv.port)))
        prepared = start_run(spec, runs_dir=tmp_path / "runs")
        with pytest.raises(RunError, match="in use"):
            resume_run(prepared.run_dir)  # held from the moment the directory exists
        child = in_child_process(prepared)
        assert prepared.lock is None  # handed over, not released
        seen = threading.Event()
        child.subscribe(lambda ev: seen.set() if isinstance(ev, RequestFinished) else None)
        child.start()
        try:
            assert seen.wait(60)
            with pytest.raises(RunError, match=r"in use by another bench-tui session \(pid \d+\)"):
                resume_run(child.run_dir)
            assert child.wait(timeout=120) == "completed", child.error
        finally:
            if child.running:
                child.control.abort()
                child.wait(timeout=60)
    resume_run(child.run_dir).release()  # free again once the child is done

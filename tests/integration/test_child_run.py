"""The TUI's run in a child process (runner/orchestration/child.py) against the scripted server: the parent's subscribers
see exactly the events the child writes to events.jsonl, controls reach the child over its stdin, and a
parent that goes away (stdin closed) aborts the run with every record kept."""

from __future__ import annotations

import threading
from pathlib import Path

from bench_tui.events import PointFinished, RequestFinished, RunFinished, RunStarted, encode
from bench_tui.runner.orchestration.child import ChildRunHandle, in_child_process
from bench_tui.runner.orchestration.session import start_run
from bench_tui.runner.orchestration.store import load_events
from scripted_server import Schedule, ScriptedServerProcess

SPEC = """\
version: 1
name: child
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [24]
    tg: [{tg}]
    depths: [0]
    concurrency: [1, 2]
    repetitions: {reps}
    warmup: 0
"""


def _prepare(tmp_path: Path, port: int, *, tg: int = 6, reps: int = 2) -> ChildRunHandle:
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(port=port, tg=tg, reps=reps))
    handle = in_child_process(start_run(spec, runs_dir=tmp_path / "runs"))
    assert isinstance(handle, ChildRunHandle)
    return handle


def test_child_run_streams_the_events_it_writes(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.005), port=0) as srv:
        handle = _prepare(tmp_path, srv.port)
        seen: list[bytes] = []
        handle.subscribe(lambda ev: seen.append(encode(ev)))
        handle.start()
        assert handle.wait(timeout=120) == "completed", handle.error
    assert not handle.running
    events = load_events(handle.run_dir)
    assert seen == [encode(e) for e in events]  # the parent saw every event, in order, as written
    assert isinstance(events[0], RunStarted) and not events[0].resumed  # a fresh run, not a resume
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    assert sorted(e.point_id for e in events if isinstance(e, PointFinished)) == [
        "s.default/sweep/pp24-tg6-d0-c1",
        "s.default/sweep/pp24-tg6-d0-c2",
    ]
    assert (handle.run_dir / "report.md").is_file()


def _abort_after_first_measured(handle: ChildRunHandle, how: str) -> threading.Event:
    fired = threading.Event()

    def on(ev: object) -> None:
        if isinstance(ev, RequestFinished) and not ev.warmup and not fired.is_set():
            fired.set()
            if how == "abort":
                handle.control.abort()
            else:  # the parent goes away: its end of the child's stdin closes
                assert handle._proc is not None and handle._proc.stdin is not None
                handle._proc.stdin.close()

    handle.subscribe(on)
    return fired


def test_abort_and_a_vanished_parent_both_stop_the_child_with_records_kept(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(itl_s=0.02), port=0) as srv:
        for how in ("abort", "eof"):
            handle = _prepare(tmp_path / how, srv.port, tg=200, reps=3)
            fired = _abort_after_first_measured(handle, how)
            handle.start()
            assert handle.wait(timeout=120) == "aborted", (how, handle.error)
            assert fired.is_set()
            events = load_events(handle.run_dir)
            assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"
            assert not any(isinstance(e, PointFinished) for e in events)  # the cut point reruns on resume
            assert any(isinstance(e, RequestFinished) and not e.warmup for e in events)
            assert handle._proc is not None and handle._proc.returncode == 130

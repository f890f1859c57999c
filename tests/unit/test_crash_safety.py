"""Crash safety, the pieces: run-directory lock, leftover-engine records, resumable start failures, exit codes,
SSE event size limit, capped stored text."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_tui.engine_adapters import reaper
from bench_tui.events import (  # noqa: E402
    STORED_TEXT_CHARS,
    PlanPoint,
    PlanReady,
    PointFinished,
    RequestRecord,
    ThroughputParams,
    ToolCall,
    encode,
    stored_record,
)
from bench_tui.runner.orchestration.outcome import parse_fail_on, run_outcome
from bench_tui.runner.orchestration.store import RunLock, RunLocked
from bench_tui.runner.transport.sse import MAX_EVENT, ProtocolError, ResponseParser
from bench_tui.runner.view import RunView
from proc_helpers import alive

# ------------------------------------------------------------------------------------------------ lock


def test_a_second_lock_on_a_run_dir_is_refused_and_freed_with_the_holder(tmp_path: Path) -> None:
    first = RunLock.acquire(tmp_path)
    with pytest.raises(RunLocked) as err:
        RunLock.acquire(tmp_path)
    assert f"pid {os.getpid()}" in str(err.value) and "only one run or resume" in str(err.value)
    first.release()
    RunLock.acquire(tmp_path).release()  # free again


def test_the_lock_dies_with_a_killed_holder(tmp_path: Path) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    code = (
        f"import sys,time; sys.path.insert(0, {src!r}); from bench_tui.runner.orchestration.store import RunLock; "
        "l = RunLock.acquire(sys.argv[1]); print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"locked"
        with pytest.raises(RunLocked):
            RunLock.acquire(tmp_path)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        RunLock.acquire(tmp_path).release()  # no stale lock after kill -9
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


# ------------------------------------------------------------------------------------------------ leftovers


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "120"], start_new_session=True)


def test_resume_stops_a_recorded_leftover_engine_only_when_its_start_time_matches(tmp_path: Path) -> None:
    ours, stranger = _sleeper(), _sleeper()
    try:
        reaper.write_record(tmp_path, "e.ours", ours.pid)
        reaper.write_record(tmp_path, "e.reused", stranger.pid)
        # the recorded process is gone and its pid now names another process: a different start time
        doc = json.loads(reaper.record_path(tmp_path, "e.reused").read_text())
        doc["start_ticks"] -= 1
        reaper.record_path(tmp_path, "e.reused").write_text(json.dumps(doc))
        notes = reaper.stop_leftovers(tmp_path, grace=2.0)
        ours.wait(5)
        assert not alive(ours.pid)
        assert alive(stranger.pid), "a process whose start time does not match must never be killed"
        assert len(notes) == 1 and "e.ours" in notes[0]
        assert not list(tmp_path.glob("*" + reaper.RECORD_SUFFIX))  # records are consumed
    finally:
        for p in (ours, stranger):
            if p.poll() is None:
                p.kill()
                p.wait(5)


def test_the_watchdog_stops_the_group_when_its_pipe_closes_and_leaves_when_the_group_ends() -> None:
    eng = subprocess.Popen(["sh", "-c", "sleep 120 & sleep 120"], start_new_session=True)
    wd = subprocess.Popen(
        reaper.watchdog_argv(eng.pid, reaper.start_ticks(eng.pid), 2.0),
        stdin=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        time.sleep(0.3)
        assert len(reaper.group_members(eng.pid)) >= 2  # sh and its backgrounded sleep (at least)
        assert wd.stdin is not None
        wd.stdin.close()  # what the kernel does when the runner dies
        assert wd.wait(10) == 0
        eng.wait(5)
        deadline = time.monotonic() + 5
        while reaper.group_members(eng.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reaper.group_members(eng.pid) == []  # the backgrounded grandchild too
    finally:
        if eng.poll() is None:
            os.killpg(eng.pid, signal.SIGKILL)
            eng.wait(5)
        if wd.poll() is None:
            wd.kill()
            wd.wait(5)
    # an engine that ends by itself: the watchdog notices and leaves on its own
    eng2 = subprocess.Popen(["sleep", "0.5"], start_new_session=True)
    wd2 = subprocess.Popen(
        reaper.watchdog_argv(eng2.pid, reaper.start_ticks(eng2.pid)), stdin=subprocess.PIPE
    )
    try:
        eng2.wait(5)
        assert wd2.wait(10) == 0
    finally:
        if wd2.poll() is None:
            wd2.kill()
            wd2.wait(5)
        assert wd2.stdin is not None
        wd2.stdin.close()


# ------------------------------------------------------------------------------------------------ resume rules


def _pt(pid: str) -> PlanPoint:
    return PlanPoint(
        point_id=pid,
        engine="e",
        variant="v",
        workload="w",
        kind="throughput",
        params=ThroughputParams(pp=8, tg=8),
    )


def _pf(pid: str, status: str, flags: list[str]) -> PointFinished:
    return PointFinished(point_id=pid, status=status, flags=flags)  # type: ignore[arg-type]


def test_a_point_that_failed_only_to_start_its_engine_stays_resumable() -> None:
    plan = PlanReady(points=[_pt(p) for p in "abcd"])
    evs = [
        plan,
        _pf("a", "ok", []),
        _pf("b", "failed", ["engine-start-failed"]),
        _pf("c", "failed", ["engine-crashed"]),
        _pf("d", "failed", ["engine-start-failed"]),
        _pf("d", "ok", []),
    ]
    assert RunView.from_events(evs).finished_ids() == {
        "a",
        "c",
        "d",
    }  # b runs again; d's later ok attempt counts


# ------------------------------------------------------------------------------------------------ exit codes


def _run_dir(tmp_path: Path, finished: list[PointFinished], plan: list[str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    points = [_pt(p) for p in plan]
    (tmp_path / "events.jsonl").write_bytes(
        b"".join(encode(e) + b"\n" for e in [PlanReady(points=points), *finished])
    )
    (tmp_path / "resolved.json").write_text(json.dumps({"plan": [json.loads(encode(p)) for p in points]}))
    return tmp_path


def test_exit_codes(tmp_path: Path) -> None:
    rd = _run_dir(tmp_path, [_pf("a", "ok", ["client-limited"]), _pf("b", "ok", [])], ["a", "b"])
    assert run_outcome(rd, "completed")[0] == 0
    assert run_outcome(rd, "aborted")[0] == 130
    code, why = run_outcome(rd, "completed", parse_fail_on(["stalled,client-limited"]))
    assert code == 1 and "a: client-limited" in why
    assert run_outcome(rd, "completed", ["any"])[0] == 1
    assert run_outcome(rd, "completed", ["tg-*"])[0] == 0
    for bad in (
        _pf("b", "degraded", ["degraded:1/4 failed"]),
        _pf("b", "failed", []),
        _pf("b", "skipped", []),
    ):
        code, why = run_outcome(
            _run_dir(tmp_path / bad.status, [_pf("a", "ok", []), bad], ["a", "b"]), "completed"
        )
        assert code == 1 and f"1 {bad.status}" in why
    assert run_outcome(_run_dir(tmp_path / "short", [], ["a"]), "completed") == (
        1,
        "1 not run of 1 points (e.g. a)",
    )


# ------------------------------------------------------------------------------------------------ SSE / storage


def _parser() -> tuple[ResponseParser, list[bytes]]:
    got: list[bytes] = []
    p = ResponseParser(lambda d, t: got.append(d))
    p.feed(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n", 0)
    return p, got


def test_an_sse_event_over_the_limit_is_an_error_however_it_arrives() -> None:
    big = b"data: " + b"x" * (MAX_EVENT + 10) + b"\n\n"
    # one HTTP chunk holding it
    p, got = _parser()
    with pytest.raises(ProtocolError, match="larger than"):
        p.feed(f"{len(big):x}\r\n".encode() + big + b"\r\n", 1)
    assert got == []
    # trickled in small chunks, never terminated: refused once the buffer passes the limit, not at the end
    p, got = _parser()
    piece = b"x" * 65536
    with pytest.raises(ProtocolError):
        p.feed(f"{len(b'data: '):x}\r\ndata: \r\n".encode(), 1)
        for _ in range(MAX_EVENT // len(piece) + 2):
            p.feed(f"{len(piece):x}\r\n".encode() + piece + b"\r\n", 2)
    # an ordinary event still passes
    p, got = _parser()
    ev = b'data: {"choices":[]}\n\n'
    p.feed(f"{len(ev):x}\r\n".encode() + ev + b"\r\n", 3)
    assert got == [b'{"choices":[]}']


def test_stored_records_cap_their_text_and_keep_the_rest() -> None:
    long = "y" * (STORED_TEXT_CHARS * 3)
    rec = RequestRecord(
        request_id="r",
        point_id="p",
        ok=True,
        content=long,
        reasoning="short",
        tool_calls=[ToolCall(name="f", arguments=long)],
        output_tokens=900,
    )
    out = stored_record(rec)
    assert out.content.startswith("y" * STORED_TEXT_CHARS) and len(out.content) < STORED_TEXT_CHARS + 100
    assert f"{STORED_TEXT_CHARS * 2} more characters not stored" in out.content
    assert out.reasoning == "short" and out.output_tokens == 900
    assert len(out.tool_calls[0].arguments) < STORED_TEXT_CHARS + 100
    assert rec.content == long  # the caller's record (a scenario's next turn) is untouched
    small = RequestRecord(request_id="r", point_id="p", content="hi")
    assert stored_record(small) is small


def test_client_worker_processes_leave_when_the_runner_is_killed(tmp_path: Path) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    code = f"""
import asyncio, sys, time
sys.path.insert(0, {src!r})
from bench_tui.runner.transport.sharding import ShardedClient
async def main():
    async with ShardedClient("http://127.0.0.1:9", workers=1) as c:
        print(" ".join(str(p.pid) for p in c.load.procs), flush=True)
        await asyncio.sleep(60)
asyncio.run(main())
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        (worker,) = [int(p) for p in proc.stdout.readline().split()]
        assert alive(worker)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while alive(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(worker), "a client worker outlived the runner"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()

"""The event stream file: round trip, torn lines from a killed writer, unknown event types."""

from __future__ import annotations

from pathlib import Path

from bench_tui.events import Chunk, RequestFinished, RequestRecord, RunFinished, decode, encode, read_events
from bench_tui.runner.orchestration.eventlog import EventLog


def test_round_trip_keeps_every_anchor() -> None:
    rec = RequestRecord(
        request_id="r1",
        point_id="p",
        ok=True,
        t_send_ns=1,
        t_first_byte_ns=2,
        t_first_token_ns=5,
        t_done_ns=9,
        chunks=[Chunk(5, 1, "content")],
        token_source="usage",
    )
    back = decode(encode(RequestFinished(record=rec)))
    assert isinstance(back, RequestFinished) and back.record == rec


def test_resume_after_torn_line_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = RunFinished(status="aborted", points_done=1, points_total=3)
    path.write_bytes(encode(first) + b"\n" + b'{"type":"run_fin')  # writer killed mid-line
    with EventLog(path) as log:  # a resumed run appends
        log.emit(RunFinished(status="completed", points_done=3, points_total=3))
    skipped: list[int] = []
    events = read_events(path, skipped)
    assert [e.status for e in events] == ["aborted", "completed"]  # type: ignore[attr-defined]
    assert skipped == [2]


def test_unknown_event_type_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    ok = encode(RunFinished(status="completed", points_done=0, points_total=0))
    path.write_bytes(b'{"type":"from_a_newer_version","x":1}\n' + ok + b"\n")
    skipped: list[int] = []
    assert len(read_events(path, skipped)) == 1 and skipped == [1]

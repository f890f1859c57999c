"""Run store: directory layout, resolved.json redaction, resume bookkeeping over events.jsonl."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench_tui.events import (
    PlanPoint,
    PlanReady,
    PointFinished,
    PointStarted,
    RequestFinished,
    RequestRecord,
    RunStarted,
    ScenarioParams,
    ThroughputParams,
    attempt_of,
    request_id,
)
from bench_tui.runner.orchestration.eventlog import EventLog
from bench_tui.runner.orchestration.store import (
    RunDirError,
    RunPaths,
    create_run_dir,
    load_events,
    new_run_id,
    plan_from_resolved,
    read_resolved,
    write_resolved,
)
from bench_tui.runner.view import RunView

SPEC_TEXT = "version: 1\nname: t\nengines:\n  e: {kind: external, base_url: x, api_key: ${KEY}}\n"


def test_run_id_sorts_by_time() -> None:
    a, b = new_run_id(1_000_000_000), new_run_id(1_000_000_100)
    assert re.fullmatch(r"\d{8}T\d{6}Z_[0-9a-f]{6}", a)
    assert a < b


def test_create_run_dir_keeps_spec_as_given(tmp_path: Path) -> None:
    paths = create_run_dir(tmp_path / "runs", SPEC_TEXT)
    assert paths.spec.read_text() == SPEC_TEXT
    assert paths.engines.is_dir()
    assert paths.run_dir.parent == tmp_path / "runs"
    again = create_run_dir(tmp_path / "runs", SPEC_TEXT)
    assert again.run_dir != paths.run_dir
    with pytest.raises(RunDirError):
        create_run_dir(tmp_path / "runs", SPEC_TEXT, run_id=paths.run_id)


def test_resolved_is_redacted_and_round_trips_the_plan(tmp_path: Path) -> None:
    paths = create_run_dir(tmp_path, SPEC_TEXT)
    pts = [
        PlanPoint(
            point_id="e.default/s/pp8",
            engine="e",
            variant="default",
            workload="s",
            kind="throughput",
            params=ThroughputParams(pp=8, tg=4),
            requests=3,
        )
    ]
    spec = {"engines": {"e": {"kind": "external", "api_key": "sk-live-123", "base_url": "http://x"}}}
    write_resolved(paths, spec=spec, points=pts, spec_path="/a/b.yaml", only=["*pp8*"])
    text = paths.resolved.read_text()
    assert "sk-live-123" not in text
    doc = read_resolved(paths.run_dir)
    assert doc["only"] == ["*pp8*"] and doc["spec_path"] == "/a/b.yaml"
    assert plan_from_resolved(doc) == pts
    assert json.loads(text)["spec"]["engines"]["e"]["base_url"] == "http://x"


def test_read_resolved_of_a_non_run_dir(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="not a run directory"):
        read_resolved(tmp_path)


def _rec(pid: str, att: int, tag: str, ok: bool = True) -> RequestRecord:
    return RequestRecord(request_id=request_id(pid, att, tag), point_id=pid, ok=ok)


def _pt(pid: str) -> PlanPoint:
    return PlanPoint(
        point_id=pid,
        engine="e",
        variant="v",
        workload="w",
        kind="throughput",
        params=ThroughputParams(pp=8, tg=4),
    )


def test_finished_points_and_final_attempt_records(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path)
    with EventLog(paths.events) as log:
        log.emit(RunStarted(run_id="r", spec_name="t", spec_path="s", run_dir=str(tmp_path)))
        log.emit(PlanReady(points=[_pt(pid) for pid in "abcd"]))
        log.emit(PointStarted(point_id="a"))
        log.emit(RequestFinished(record=_rec("a", 1, "w0"), warmup=True))
        log.emit(RequestFinished(record=_rec("a", 1, "r0.0")))
        log.emit(RequestFinished(record=_rec("a", 1, "r0.1", ok=False)))
        log.emit(PointFinished(point_id="a", status="degraded"))
        log.emit(PointStarted(point_id="b"))
        log.emit(RequestFinished(record=_rec("b", 1, "r0.0")))  # killed here: attempt 1 never finished
        # resumed run
        log.emit(RunStarted(run_id="r", spec_name="t", spec_path="s", run_dir=str(tmp_path), resumed=True))
        log.emit(PointStarted(point_id="b"))
        log.emit(RequestFinished(record=_rec("b", 2, "r0.0")))
        log.emit(RequestFinished(record=_rec("b", 2, "r0.1")))
        log.emit(PointFinished(point_id="b", status="ok"))
        log.emit(PointStarted(point_id="c"))
        log.emit(PointFinished(point_id="c", status="skipped"))
    # a torn last line, as a SIGKILL mid-write leaves it
    with open(paths.events, "ab") as fh:
        fh.write(b'{"type":"point_finished","point_id":"d","sta')
    events = load_events(tmp_path)
    view = RunView.from_events(events, keep_records=True)
    assert view.finished_ids() == {"a", "b"}
    assert RunView.from_run_dir(tmp_path).finished_ids() == {"a", "b"}  # records not even decoded
    assert view.attempts() == {"a": 1, "b": 2, "c": 1}
    assert (view.points["b"].attempts, view.points["b"].finished_attempt, view.points["d"].status) == (
        2,
        2,
        "pending",
    )
    recs = view.records()
    assert sorted(recs) == ["a", "b"]
    assert [r.request_id for r in recs["a"]] == ["a@1:r0.0", "a@1:r0.1"]
    assert [r.request_id for r in recs["b"]] == ["b@2:r0.0", "b@2:r0.1"]  # the killed attempt is left out
    assert len(view.records(include_warmup=True)["a"]) == 3
    assert RunView.from_run_dir(tmp_path).records()["a"] == []  # without keep_records: no records


def test_attempt_of() -> None:
    assert attempt_of(request_id("llama.default/sweep/pp8-c2", 3, "r1.0")) == 3
    assert attempt_of("foreign-id") is None
    assert attempt_of("x@y:z") is None


def test_resolved_keeps_token_counts_and_round_trips_typed_params(tmp_path: Path) -> None:
    """A scenario point's max_tokens is a count, not a secret: key redaction once turned it into a string and
    resume could not read its own plan back (msgspec: expected int, got str at $.params.max_tokens)."""
    paths = create_run_dir(tmp_path, SPEC_TEXT)
    pts = [
        PlanPoint(
            point_id="e.default/t/pack",
            engine="e",
            variant="default",
            workload="t",
            kind="scenarios",
            params=ScenarioParams(pack="standard", max_tokens=128),
        )
    ]
    spec = {"engines": {"e": {"kind": "external", "hf_token": "hf-secret-value", "base_url": "http://x"}}}
    write_resolved(paths, spec=spec, points=pts, spec_path="/a/b.yaml")
    assert plan_from_resolved(read_resolved(paths.run_dir)) == pts
    assert "hf-secret-value" not in paths.resolved.read_text()

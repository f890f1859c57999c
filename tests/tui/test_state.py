"""RunState: the TUI's pure model of a run, fed from recorded event streams."""

from __future__ import annotations

from helpers import live_events, live_points

from bench_tui.events import (
    EngineCrashed,
    EngineLog,
    PointFinished,
    RequestFirstToken,
    RequestProgress,
    RequestStarted,
    RunFinished,
)
from bench_tui.tui.state import MAX_LOG, RunState, collapse, icon


def _state(**kw: object) -> RunState:
    st = RunState()
    st.apply_batch(live_events(**kw))  # type: ignore[arg-type]
    return st


def test_collapse_keeps_last_progress_per_request_in_order() -> None:
    evs = [
        RequestProgress(ts=1, point_id="p", request_id="a", tokens=1),
        RequestProgress(ts=2, point_id="p", request_id="b", tokens=5),
        RequestStarted(ts=3, point_id="p", request_id="c"),
        RequestProgress(ts=4, point_id="p", request_id="a", tokens=9),
    ]
    out = collapse(evs)
    assert [(type(e).__name__, getattr(e, "tokens", None)) for e in out] == [
        ("RequestProgress", 5),
        ("RequestStarted", None),
        ("RequestProgress", 9),
    ]


def test_plan_tree_and_point_status() -> None:
    st = _state()
    tree = st.tree()
    assert list(tree) == ["llama"] and list(tree["llama"]) == ["default", "fast"]
    statuses = [ps.status for ps in st.points.values()]
    assert statuses == ["ok", "degraded", "running", "pending"]
    assert st.points_done == 2 and st.points_total == 4
    assert st.current_point == live_points()[2].point_id
    assert [icon(ps.status) for ps in st.points.values()] == ["✔", "!", "▶", "·"]


def test_in_flight_states_and_rates() -> None:
    st = _state()
    live = {r.request_id: r for r in st.requests.values()}
    assert sorted(live) == ["r0009", "r0010", "r0011", "r0012"]
    assert [live[k].state for k in sorted(live)] == ["decoding", "decoding", "prefill", "queued"]
    r = live["r0009"]
    assert r.ttft_ms == 100.0 and r.tokens == 16 and r.reasoning_tokens == 2 and r.content_tokens == 14
    # 15 tokens after the first over (elapsed - ttft) = 320 ms
    assert r.tps is not None and abs(r.tps - 15 / 0.32) < 1e-6
    done = list(st.done_requests)
    assert len(done) == 8 and all(d.state == "done" and d.tokens == 32 for d in done)
    assert st.requests_finished == 8


def test_series_count_every_token_once() -> None:
    st = _state()
    # 8 finished requests of 32 tokens plus 2 live ones at 16 tokens
    assert sum(st.tok_series.totals(10_000)) == 8 * 32 + 2 * 16
    ttfts = st.ttft_series
    assert sum(ttfts.counts.values()) == 10
    assert all(v > 0 for v in ttfts.means(10_000))


def test_collapsed_batches_give_the_same_state_as_single_events() -> None:
    evs = live_events()
    one = RunState()
    for e in evs:
        one.apply_batch([e])
    many = RunState()
    many.apply_batch(evs)
    assert sum(one.tok_series.totals(10_000)) == sum(many.tok_series.totals(10_000))
    assert {k: (r.state, r.tokens) for k, r in one.requests.items()} == {
        k: (r.state, r.tokens) for k, r in many.requests.items()
    }


def test_point_and_run_finish_clear_in_flight() -> None:
    st = _state()
    pid = live_points()[2].point_id
    dirty = st.apply_batch([PointFinished(ts=2e9, point_id=pid, status="skipped")])
    assert {"tree", "requests"} <= dirty
    assert not st.requests and st.points[pid].status == "skipped"
    st.apply_batch(
        [RunFinished(ts=2e9, status="aborted", points_done=2, points_total=4, message="user abort")]
    )
    assert st.status == "aborted" and st.log[-1] == "run aborted: user abort"


def test_engine_stats_warnings_and_crash() -> None:
    st = _state()
    eng = st.engines["llama.default"]
    assert eng.state == "ready" and eng.version == "b6000" and eng.stats is not None
    assert eng.stats.kv_usage == 0.35 and eng.stats.gpu["power_w"] == 210.0
    assert [w.code for w in st.warnings] == ["client-limited"]
    st.apply_batch([EngineCrashed(ts=2e9, engine="llama", variant="fast", returncode=-9, log_tail=["oom"])])
    assert st.engines["llama.fast"].state == "crashed"
    assert st.warnings[-1].code == "engine" and "rc=-9" in st.warnings[-1].message
    assert st.log[-1].endswith("oom")


def test_log_is_bounded_and_counts_lines() -> None:
    st = RunState()
    st.apply_batch([EngineLog(ts=1, engine="e", variant="v", line=f"l{i}") for i in range(MAX_LOG + 50)])
    assert len(st.log) == MAX_LOG and st.log_seq == MAX_LOG + 50 and st.log[-1] == f"[e.v] l{MAX_LOG + 49}"


def test_unknown_requests_are_ignored() -> None:
    st = RunState()
    assert st.apply(RequestProgress(ts=1, point_id="p", request_id="x", tokens=3)) == set()
    st.apply(RequestFirstToken(ts=1, point_id="p", request_id="x", ttft_ms=50))
    assert not st.requests and sum(st.ttft_series.counts.values()) == 1


def test_a_resumed_run_keeps_the_status_of_points_finished_before() -> None:
    from pathlib import Path

    from bench_tui.events import PlanReady, read_events

    run = Path(__file__).resolve().parents[1] / "unit" / "data" / "runs" / "scripted_resume"
    events = list(read_events(run / "events.jsonl"))
    assert sum(isinstance(e, PlanReady) for e in events) == 2  # the original plan and the resume's
    st = RunState()
    st.apply_batch(events)
    finished = {e.point_id for e in events if isinstance(e, PointFinished)}
    assert len(finished) == 4
    assert {pid: st.points[pid].status for pid in finished} == {pid: "ok" for pid in finished}

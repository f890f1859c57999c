"""The live sessions view: RunState folds a sessions point's events (pure, from the events only) and the
run screen's SessionsPanel shows them, its data arriving as a message; hidden while no sessions point runs."""

from __future__ import annotations

from helpers import FakeHandle, settle

from bench_tui.events import (
    EngineStats,
    PlanPoint,
    PlanReady,
    PointStarted,
    RequestFinished,
    RequestRecord,
    RequestStarted,
    RunStarted,
    SessionsParams,
    SessionTurn,
)
from bench_tui.tui.app import make_app
from bench_tui.tui.state import RunState
from bench_tui.tui.widgets import SessionsPanel

PID = "llama.default/agents/r2"
MS = 1_000_000


def _events() -> list[object]:
    prm = SessionsParams(rate=2.0, turns=3, sessions=4, slo={"ttft_ms": {"p90": 100.0}})
    point = PlanPoint(
        point_id=PID, engine="llama", variant="default", workload="agents", kind="sessions", params=prm
    )
    evs: list[object] = [
        RunStarted(run_id="r", spec_name="s", spec_path="s.yaml", run_dir="/nonexistent", ts=1.0),
        PlanReady(points=[point], ts=1.0),
        PointStarted(point_id=PID, index=0, total=1, ts=1.0),
    ]

    def turn(s: int, k: int, due_ms: int, ttft_ms: int, *, last: bool = False) -> list[object]:
        rid = f"{PID}@1:x0.s{s}.t{k}"
        rec = RequestRecord(
            request_id=rid,
            point_id=PID,
            ok=True,
            t_send_ns=due_ms * MS,
            t_first_token_ns=(due_ms + ttft_ms) * MS,
            t_last_token_ns=(due_ms + ttft_ms + 10) * MS,
            t_done_ns=(due_ms + ttft_ms + 10) * MS,
            output_tokens=3,
            prompt_tokens=100 * k,
            cached_tokens=80 * (k - 1),
        )
        return [
            RequestStarted(point_id=PID, request_id=rid, ts=2.0),
            RequestFinished(record=rec, ts=2.1),
            SessionTurn(
                point_id=PID,
                request_id=rid,
                session=s,
                turn=k,
                t_scheduled_ns=due_ms * MS,
                context_tokens=100 * k,
                last=last,
                ts=2.1,
            ),
        ]

    evs += turn(0, 1, 1000, 50) + turn(1, 1, 1500, 150) + turn(0, 2, 2000, 40)
    evs.append(RequestStarted(point_id=PID, request_id=f"{PID}@1:x0.s0.t3", ts=3.0))  # in flight
    evs.append(RequestStarted(point_id=PID, request_id=f"{PID}@1:x0.s2.t1", ts=3.0))
    evs.append(EngineStats(engine="llama", variant="default", waiting=1.0, ts=3.0))
    return evs


def test_the_fold_counts_sessions_turns_cache_and_slo() -> None:
    st = RunState()
    dirty = st.apply_batch(_events())  # type: ignore[arg-type]
    assert "sessions" in dirty
    live = st.sessions[PID]
    assert (len(live.active), len(live.thinking), len(live.done), len(live.started)) == (2, 1, 0, 3)
    assert live.turns_done == 3 and live.last_turn == 2 and live.context_last == 200
    assert (
        live.cache_hit == 80 / 400
    )  # cached / prompt over the finished turns: (0 + 0 + 80) / (100 + 100 + 200)
    assert (live.slo_met, live.slo_judged) == (2, 3)  # TTFT 50 and 40 ms within 100; 150 ms not
    assert live.achieved_rate == 2.0  # first sends 500 ms apart


async def test_the_panel_shows_the_running_sessions_point() -> None:
    app = make_app(handle=FakeHandle(_events()))  # type: ignore[arg-type]
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, lambda: PID in app.state.sessions)
        panel = app.screen.query_one(SessionsPanel)
        await settle(pilot, lambda: panel.display)
        text = str(panel.render())
        assert "active 2  thinking 1  done 0  not started 1  engine waiting 1" in text
        assert "turns done 3  deepest turn 2/3" in text and "cache hit 20%" in text
        assert "SLO met 67% of 3" in text and "offered 2.00/s  achieved 2.00/s" in text


async def test_the_panel_stays_hidden_without_sessions(fake_handle: FakeHandle) -> None:
    app = make_app(handle=fake_handle)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, lambda: app.state.points_done == 2)
        assert not app.screen.query_one(SessionsPanel).display

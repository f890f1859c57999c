"""Pilot tests of the run screen's keys, driven by a recorded event stream through a fake run handle."""

from __future__ import annotations

from pathlib import Path

from helpers import FakeHandle, leaf_labels, live_events, record_notifications, settle

from bench_tui.events import RequestProgress
from bench_tui.tui.app import make_app
from bench_tui.tui.screens.modals import ConfirmScreen
from bench_tui.tui.screens.results import ResultsScreen
from bench_tui.tui.screens.run import RunScreen
from bench_tui.tui.widgets import PlanTree, RequestsTable

SIZE = (140, 44)


async def test_live_events_reach_widgets_in_batches(fake_handle: FakeHandle) -> None:
    app = make_app(handle=fake_handle)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: app.state.points_done == 2)
        assert fake_handle.started and fake_handle.subs == [app.pump.push]
        assert isinstance(app.screen, RunScreen)
        table = app.screen.query_one(RequestsTable)
        assert table.row_count == 12  # 4 in flight + 8 done
        states = [str(table.get_row_at(i)[1]) for i in range(4)]
        assert states == ["decoding", "decoding", "prefill", "queued"]
        tree = app.screen.query_one(PlanTree)
        labels = leaf_labels(tree)
        assert labels[0].startswith("✔ pp64-tg32-d0-c1") and labels[2].startswith("▶")
        assert app.pump.batches >= 1 and app.pump.events == len(fake_handle.events)
        header = str(app.screen.query_one("#run-header").render())
        assert "points 2/4" in header and "running" in header


async def test_progress_collapses_within_a_batch(fake_handle: FakeHandle) -> None:
    app = make_app(handle=fake_handle)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, lambda: app.state.points_done == 2)
        before = app.pump.batches
        for tok in range(17, 30):
            app.pump.push(
                RequestProgress(
                    point_id="llama.fast/sweep/pp64-tg32-d0-c1",
                    request_id="r0009",
                    tokens=tok,
                    content_tokens=tok - 2,
                    reasoning_tokens=2,
                    elapsed_ms=100 + 20 * tok,
                )
            )
        app.drain_events()
        assert app.pump.batches == before + 1 and app.pump.batch_sizes[-1] == 13
        assert app.state.requests["r0009"].tokens == 29


async def test_pause_skip_abort_keys(fake_handle: FakeHandle) -> None:
    app = make_app(handle=fake_handle)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        assert app.paused and "paused" in str(app.screen.query_one("#run-header").render())
        await pilot.press("p", "s")
        assert fake_handle.control.calls == ["pause", "resume", "skip_point"]
        await pilot.press("a")
        await settle(pilot, lambda: app.state.status == "aborted")
        assert fake_handle.control.calls[-1] == "abort"
        await pilot.press("p")  # nothing left to control
        assert fake_handle.control.calls.count("pause") == 1
        await pilot.press("q")  # run is over: quits at once with the aborted exit code
    assert app.return_code == 130


async def test_quit_asks_before_aborting(fake_handle: FakeHandle) -> None:
    app = make_app(handle=fake_handle)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert isinstance(app.screen, RunScreen) and "abort" not in fake_handle.control.calls
        await pilot.press("q")
        await pilot.press("y")
        await settle(pilot, lambda: not app.is_running, timeout=5)
    assert fake_handle.control.calls == ["abort"] and app.return_code == 130


async def test_report_and_results_keys(tmp_path: Path) -> None:
    handle = FakeHandle(live_events(), run_dir=tmp_path)
    app = make_app(handle=handle)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.state.run_dir = str(tmp_path)
        await pilot.press("o")
        assert "not written yet" in notes[-1]
        (tmp_path / "report.html").write_text("<html></html>")
        await pilot.press("o")
        assert str(tmp_path / "report.html") in notes[-1]
        await pilot.press("r")
        assert isinstance(app.screen, ResultsScreen)
        t = app.screen.query_one("#throughput")
        assert t.row_count == 2  # the two measured points
        delta_cells = [str(t.get_row_at(i)[10]) for i in range(2)]
        assert delta_cells == ["", ""]  # same variant: no delta
        await pilot.press("escape")
        assert isinstance(app.screen, RunScreen)

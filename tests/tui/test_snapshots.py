"""Snapshot tests of the run and results screens at a fixed size with deterministic recorded data.

Update after an intended visual change with `pytest tests/tui/test_snapshots.py --snapshot-update` and
review the SVGs in tests/tui/__snapshots__/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FakeHandle, live_events, open_scored_results, until
from textual.widgets import DataTable

from bench_tui.tui.app import make_app
from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY

SIZE = (140, 44)


def test_run_screen_snapshot(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = make_app(handle=FakeHandle(live_events()))

    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(pilot, lambda: app.state.points_done == 2 and app.pump.q.empty(), timeout=20)
        app.refresh_screens({"header", "tree", "requests", "series", "engines", "log", "warnings"})
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_results_screen_snapshot(snap_compare, recorded_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    app = make_app(watch=recorded_run)

    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        results = await open_scored_results(pilot)
        grid = results.query_one("#grid", DataTable)
        await until(pilot, lambda: grid.row_count > 0, timeout=20)
        await pilot.press("down", "down")  # TC-02: the override row
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(150, 46), run_before=before)

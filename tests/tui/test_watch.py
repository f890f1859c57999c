"""`bench-tui watch`: replaying a finished run, tailing a growing one, and the command's argument checks."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from helpers import live_events, record_notifications, until

from bench_tui.cli import watch as commands
from bench_tui.events import RunFinished, encode
from bench_tui.tui.app import make_app
from bench_tui.tui.screens.run import RunScreen
from fixtures_runs import write_events


async def test_replay_shows_the_whole_run_and_refuses_control(recorded_run: Path) -> None:
    app = make_app(watch=recorded_run)
    notes = record_notifications(app)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        st = app.state
        assert st.status == "completed" and st.points_done == st.points_total == 13
        assert "replay" in str(app.screen.query_one("#run-header").render())
        await pilot.press("p")
        assert "replay: nothing to control" in notes[-1]
        await pilot.press("q")
    assert app.return_code == 0


async def test_follow_tails_new_events(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    evs = live_events()
    write_events(run / "events.jsonl", evs[:5])
    app = make_app(watch=run, follow=True)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        assert app.state.points_total == 4 and app.state.points_done == 0
        with open(run / "events.jsonl", "ab") as fh:
            for e in evs[5:]:
                fh.write(encode(e) + b"\n")
            fh.write(encode(RunFinished(status="completed", points_done=4, points_total=4))[:10])  # torn
        await until(pilot, lambda: app.state.points_done == 2)
        assert app.state.status == "running"
        with open(run / "events.jsonl", "ab") as fh:
            fh.write(encode(RunFinished(status="completed", points_done=4, points_total=4))[10:] + b"\n")
        await until(pilot, lambda: app.state.status == "completed")


def test_watch_target_resolution(tmp_path: Path, recorded_run: Path) -> None:
    assert commands.resolve_watch_target(recorded_run) == recorded_run
    assert commands.resolve_watch_target(recorded_run / "events.jsonl") == recorded_run
    with pytest.raises(click.ClickException, match="no such run directory"):
        commands.resolve_watch_target(tmp_path / "missing")
    with pytest.raises(click.ClickException, match="no events.jsonl"):
        commands.resolve_watch_target(tmp_path)
    junk = tmp_path / "notes.txt"
    junk.write_text("x")
    with pytest.raises(click.ClickException, match="neither a run directory nor a bundle"):
        commands.resolve_watch_target(junk)


def test_watch_opens_bundles(tmp_path: Path, recorded_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_tui.reports.sharing import bundle_run
    from fixtures_runs import API_KEY_ENV, FIXTURE_API_KEY

    monkeypatch.setenv(API_KEY_ENV, FIXTURE_API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    b, _manifest = bundle_run(recorded_run, tmp_path / "run.tar.gz")
    out = commands.resolve_watch_target(Path(b))
    assert out != recorded_run and out.is_dir()
    ours = (recorded_run / "events.jsonl").read_bytes().count(b"\n")
    assert (out / "events.jsonl").read_bytes().count(b"\n") == ours


def test_watch_command_needs_a_terminal(recorded_run: Path) -> None:
    from click.testing import CliRunner

    res = CliRunner().invoke(commands.watch, [str(recorded_run)])
    assert res.exit_code == 1 and "needs a terminal" in res.output

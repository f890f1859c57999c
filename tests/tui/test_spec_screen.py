"""Pilot tests of the spec screen: live validation, go to error, save, run from the editor."""

from __future__ import annotations

from pathlib import Path

from helpers import FakeHandle, live_events, until
from textual.widgets import TextArea

from bench_tui.tui.app import make_app
from bench_tui.tui.screens.run import RunScreen
from bench_tui.tui.screens.spec import SpecScreen, make_editor

SPEC = """\
version: 1
name: edit-me
engines:
  ext:
    kind: external
    base_url: http://127.0.0.1:18449
workloads:
  sweep: {kind: throughput, pp: [16], tg: [8], concurrency: [1, 2], repetitions: 1}
"""
SIZE = (130, 40)


def _replace(ta: TextArea, old: str, new: str) -> None:
    text = ta.text
    i = text.index(old)
    row = text[:i].count("\n")
    col = i - (text.rfind("\n", 0, i) + 1)
    ta.replace(new, (row, col), (row, col + len(old)))


def test_editor_without_tree_sitter_still_edits() -> None:
    ta = make_editor("a: 1\n")
    assert ta.text == "a: 1\n"  # highlighting may be off; the editor is there either way


async def test_validation_save_and_goto_error(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    app = make_app(spec_path=path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SpecScreen)
        assert screen.errors == [] and len(screen.points) == 2
        assert "2 points, about 3 requests" in str(screen.query_one("#spec-plan").render())
        ta = screen.query_one(TextArea)
        n = screen.validations
        _replace(ta, "pp: [16]", "pp: [zero]")
        await until(pilot, lambda: screen.validations > n)
        assert screen.errors and screen.errors[0].startswith(f"{path}:8:")
        assert "expected an integer" in str(screen.query_one("#spec-errors").render())
        assert screen.points == [] and screen.dirty
        await pilot.press("ctrl+g")
        assert ta.cursor_location[0] == 7
        await pilot.press("ctrl+s")
        assert "pp: [zero]" in path.read_text() and not screen.dirty
        await pilot.press("ctrl+r")  # refuses to run a broken spec
        assert app.handle is None
        n = screen.validations
        _replace(ta, "pp: [zero]", "pp: [32]")
        await until(pilot, lambda: screen.validations > n and not screen.errors)
        assert [p.point_id for p in screen.points][0] == "ext.default/sweep/pp32-tg8-d0-c1"


async def test_run_key_starts_the_run_and_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    app = make_app(spec_path=path)
    started: list[Path] = []
    handle = FakeHandle(live_events())

    def factory(p: Path) -> FakeHandle:
        started.append(p)
        return handle

    app.run_factory = factory
    async with app.run_test(size=SIZE) as pilot:
        ta = app.screen.query_one(TextArea)
        _replace(ta, "tg: [8]", "tg: [4]")
        await pilot.press("ctrl+r")  # unsaved edits are saved first
        assert started == [path] and "tg: [4]" in path.read_text()
        assert isinstance(app.screen, RunScreen) and app.handle is handle and handle.started
        await until(pilot, lambda: app.state.points_done == 2)
        await pilot.press("e")
        assert isinstance(app.screen, SpecScreen)
        await pilot.press("ctrl+r")  # a run is already attached
        assert started == [path]
        await pilot.press("escape")
        assert isinstance(app.screen, RunScreen)


async def test_editing_the_embedded_default_saves_a_copy_in_the_working_directory(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from bench_tui.spec.loader import default_spec_path

    embedded = default_spec_path()
    original = embedded.read_bytes()
    monkeypatch.chdir(tmp_path)
    app = make_app(spec_path=embedded)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SpecScreen)
        ta = screen.query_one(TextArea)
        _replace(ta, "repetitions: 2", "repetitions: 3")
        await pilot.press("ctrl+s")
        copy = tmp_path / embedded.name
        assert copy.is_file() and "repetitions: 3" in copy.read_text()
        assert screen.path == copy and app.spec_path == copy and not screen.dirty
    assert embedded.read_bytes() == original  # the installed package is never written


def test_save_target() -> None:
    from bench_tui.spec.edit import save_target
    from bench_tui.spec.loader import default_spec_path

    assert save_target(default_spec_path(), "/w") == Path("/w") / default_spec_path().name
    assert save_target("/elsewhere/mine.yaml", "/w") == Path("/elsewhere/mine.yaml")

"""A bundle's spec run from the TUI (watch, then the spec screen's run key) asks first, listing the exact
commands; "no" starts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FakeHandle, live_events

from bench_tui.tui.app import make_app
from bench_tui.tui.screens.modals import ConfirmScreen
from bench_tui.tui.screens.run import RunScreen

SPEC = """\
version: 1
name: from-a-bundle
runs_dir: /tmp/bench-tui-evil-runs
engines:
  srv:
    kind: command
    command: [sh, -c, "touch pwned; exec sleep 60"]
    port: 18461
workloads:
  sweep: {kind: throughput, pp: [16], tg: [8], repetitions: 1}
"""


async def test_bundle_spec_asks_before_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run = tmp_path / "cache" / "bench-tui" / "bundles" / "abc" / "20261203T000000Z_aaaaaa"
    run.mkdir(parents=True)
    path = run / "spec.yaml"
    path.write_text(SPEC)
    app = make_app(spec_path=path)
    started: list[Path] = []
    handle = FakeHandle(live_events())

    def factory(p: Path) -> FakeHandle:
        started.append(p)
        return handle

    app.run_factory = factory
    async with app.run_test(size=(150, 44)) as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        q = app.screen.question
        assert "run: sh -c 'touch pwned; exec sleep 60'" in q
        await pilot.press("n")
        await pilot.pause()
        assert started == [] and not isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert started == [path] and isinstance(app.screen, RunScreen)

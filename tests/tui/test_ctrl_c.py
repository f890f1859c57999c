"""Ctrl-C in the TUI aborts the run like `a` (the terminal is in raw mode, so it arrives as a key, not SIGINT);
a second Ctrl-C forces (engines killed at once). Without a run it only says how to quit."""

from __future__ import annotations

import asyncio

from helpers import FakeControl, FakeHandle, live_events

from bench_tui.tui.app import make_app

SIZE = (140, 44)


class SlowAbortControl(FakeControl):
    """An abort that takes a while (engines still stopping): the run goes on until force()."""

    def abort(self) -> None:
        self.calls.append("abort")

    def force(self) -> None:
        self.calls.append("force")
        self.handle.finish("aborted")


async def _settle(pilot, app, cond, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        if cond():
            return
    raise AssertionError("condition not reached in time")


async def test_ctrl_c_aborts_then_forces() -> None:
    handle = FakeHandle(live_events())
    handle.control = SlowAbortControl(handle)
    app = make_app(handle=handle)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot, app, lambda: app.state.points_done == 2)
        await pilot.press("ctrl+c")
        assert handle.control.calls == ["abort"]
        assert handle.running
        await pilot.press("ctrl+c")
        await _settle(pilot, app, lambda: app.state.status == "aborted")
        assert handle.control.calls == ["abort", "force"]
        await pilot.press("ctrl+c")  # nothing running any more: no further control call
        assert handle.control.calls == ["abort", "force"]
        await pilot.press("q")
    assert app.return_code == 130


async def test_ctrl_c_once_is_enough_when_the_abort_is_quick(fake_handle: FakeHandle) -> None:
    app = make_app(handle=fake_handle)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot, app, lambda: app.state.points_done == 2)
        await pilot.press("ctrl+c")
        await _settle(pilot, app, lambda: app.state.status == "aborted")
        assert fake_handle.control.calls == ["abort"]

"""The Textual front end over the runner's event stream. It never measures anything.

Events arrive from the runner's thread through a thread-safe queue (``EventPump``); a timer drains it about
12 times a second, folds the batch into the pure ``RunState`` (RequestProgress collapsed per request) and
asks the visible screen to refresh only the parts that changed. ``make_app`` is the one factory the CLI
and the tests use; ``run_tui`` runs it and returns an exit code like the headless front end.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding

from bench_tui.events import Event, decode, read_events
from bench_tui.tui.screens.modals import ConfirmScreen
from bench_tui.tui.screens.results import ResultsScreen
from bench_tui.tui.screens.run import RunScreen
from bench_tui.tui.screens.spec import SpecScreen
from bench_tui.tui.state import RunState

EXIT = {"completed": 0, "failed": 1, "aborted": 130}
DRAIN_HZ = 12.0
MAX_BATCH = 200_000


class EventPump:
    """Thread-safe hand-over from the runner's thread to the UI; keeps numbers about the batches."""

    def __init__(self) -> None:
        self.q: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self.batches = 0
        self.events = 0
        self.max_batch = 0
        self.batch_sizes: list[int] = []
        self.max_update_ms = 0.0  # time to fold a batch and refresh widgets
        self.max_latency_ms = 0.0  # oldest event's emit time -> its batch refreshed (live runs only)

    def push(self, event: Event) -> None:
        self.q.put(event)

    def drain(self, limit: int = MAX_BATCH) -> list[Event]:
        out: list[Event] = []
        get = self.q.get_nowait
        try:
            while len(out) < limit:
                out.append(get())
        except queue.Empty:
            pass
        return out

    def record(self, n: int, update_ms: float, latency_ms: float | None) -> None:
        self.batches += 1
        self.events += n
        self.max_batch = max(self.max_batch, n)
        if len(self.batch_sizes) < 100_000:
            self.batch_sizes.append(n)
        self.max_update_ms = max(self.max_update_ms, update_ms)
        if latency_ms is not None:
            self.max_latency_ms = max(self.max_latency_ms, latency_ms)


class _Tail(threading.Thread):
    """Follows a growing events.jsonl and pushes each complete new line."""

    def __init__(self, path: Path, offset: int, push: Any, stop: threading.Event) -> None:
        super().__init__(name="bench-tui-tail", daemon=True)
        self.path, self.offset, self.push, self.stop_ev = path, offset, push, stop

    def run(self) -> None:
        buf = b""
        while not self.stop_ev.is_set():
            try:
                with open(self.path, "rb") as fh:
                    fh.seek(self.offset)
                    data = fh.read()
            except OSError:
                data = b""
            if data:
                self.offset += len(data)
                buf += data
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    if raw.strip():
                        try:
                            self.push(decode(raw))
                        except Exception:  # noqa: BLE001 - a line we cannot read is skipped, not fatal
                            continue
            self.stop_ev.wait(0.25)


class BenchApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "bench-tui"
    # ctrl+c: with a run in progress it aborts like `a` (a second one forces: engines killed at once); with
    # text selected it still copies (the screen's binding comes first and steps aside when nothing is selected)
    BINDINGS = [
        Binding("ctrl+q", "quit_confirm", "quit", show=False),
        Binding("ctrl+c", "interrupt", "abort", show=False, system=True),
    ]

    def __init__(
        self,
        *,
        handle: Any = None,
        spec_path: Path | None = None,
        watch: Path | None = None,
        follow: bool = False,
        live_latency: bool | None = None,
    ) -> None:
        super().__init__()
        self.handle = handle
        self.spec_path = Path(spec_path) if spec_path is not None else None
        self.watch_path = Path(watch) if watch is not None else None
        self.follow = follow
        self.state = RunState()
        self.pump = EventPump()
        self.paused = False
        self.live_latency = (handle is not None) if live_latency is None else live_latency
        self._stop = threading.Event()
        self._subscribed = False
        self._abort_then_quit = False
        self._interrupts = 0
        self.run_factory: Any = None  # start_run(spec_path) used by the spec screen's run key (tests inject)
        if handle is not None:
            self._subscribe(handle)

    # ----------------------------------------------------------------------------------------- wiring

    @property
    def mode_label(self) -> str:
        if self.watch_path is not None:
            return "following" if self.follow else "replay"
        return ""

    def _subscribe(self, handle: Any) -> None:
        handle.subscribe(self.pump.push)
        self._subscribed = True

    def on_mount(self) -> None:
        if self.watch_path is not None:
            self._load_watch()
        if self.handle is None and self.watch_path is None and self.spec_path is not None:
            self.push_screen(RunScreen())
            self.push_screen(SpecScreen(self.spec_path))
        else:
            self.push_screen(RunScreen())
        if self.handle is not None and not getattr(self.handle, "_tui_started", False):
            self.handle._tui_started = True
            self.handle.start()
        self.set_interval(1.0 / DRAIN_HZ, self.drain_events)

    def _load_watch(self) -> None:
        assert self.watch_path is not None
        ev_path = self.watch_path / "events.jsonl" if self.watch_path.is_dir() else self.watch_path
        offset = 0
        if ev_path.is_file():
            data = ev_path.read_bytes()
            offset = data.rfind(b"\n") + 1  # a torn last line is read again by the tail
            self.state.apply_batch(read_events(str(ev_path)))
        if not self.state.run_dir:
            self.state.run_dir = str(ev_path.parent)
        if self.follow:
            _Tail(ev_path, offset, self.pump.push, self._stop).start()

    def drain_events(self) -> None:
        events = self.pump.drain()
        if not events:
            return
        t0 = time.perf_counter()
        dirty = self.state.apply_batch(events)
        self.refresh_screens(dirty)
        update_ms = (time.perf_counter() - t0) * 1000
        latency = (time.time() - events[0].ts) * 1000 if self.live_latency else None
        self.pump.record(len(events), update_ms, latency)
        if self._abort_then_quit and self.state.status in EXIT:
            code = self.exit_code()
            self.exit(code, return_code=code)

    def refresh_screens(self, dirty: set[str]) -> None:
        for screen in self.screen_stack:
            fn = getattr(screen, "refresh_parts", None)
            if fn is not None and screen.is_mounted:
                fn(self.state, dirty)

    def exit_code(self) -> int:
        if self.watch_path is not None and self.handle is None:
            return 0
        return EXIT.get(self.state.status, 1 if self.state.status != "waiting" else 0)

    def attach_handle(self, handle: Any) -> None:
        """Start a run from inside the app (the spec screen's run key)."""
        self.handle = handle
        self.live_latency = True
        self._subscribe(handle)
        self.state = RunState()
        handle._tui_started = True
        handle.start()

    def run_in_progress(self) -> bool:
        h = self.handle
        if h is None:
            return False
        running = getattr(h, "running", None)
        if isinstance(running, bool):
            return running
        return self.state.status in ("waiting", "running")

    # ----------------------------------------------------------------------------------------- actions

    def _no_control(self) -> bool:
        if self.handle is None or not self.run_in_progress():
            self.notify(
                "no run in progress to control" if self.watch_path is None else "replay: nothing to control",
                severity="warning",
            )
            return True
        return False

    def action_toggle_pause(self) -> None:
        if self._no_control():
            return
        if self.paused:
            self.handle.control.resume()
            self.paused = False
            self.notify("resumed")
        else:
            self.handle.control.pause()
            self.paused = True
            self.notify("paused: in-flight requests finish, no new point starts")
        self.refresh_screens({"header"})

    def action_skip_point(self) -> None:
        if self._no_control():
            return
        self.handle.control.skip_point()
        self.notify(f"skipping {self.state.current_point or 'the current point'}")

    def action_abort(self) -> None:
        if self._no_control():
            return
        self.handle.control.abort()
        self.paused = False
        self.notify("aborting: in-flight requests are cancelled and recorded")

    def action_interrupt(self) -> None:
        if self.handle is None or not self.run_in_progress():
            self.action_help_quit()
            return
        self._interrupts += 1
        if self._interrupts == 1:
            self.action_abort()
            self.notify("ctrl+c again to force (engines killed at once)")
            return
        force = getattr(self.handle.control, "force", None)
        if force is not None:
            force()
            self.notify("forcing: engines killed now; the record and the report are still written")

    def action_quit_confirm(self) -> None:
        if not self.run_in_progress():
            code = self.exit_code()
            self.exit(code, return_code=code)
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self._abort_then_quit = True
                self.handle.control.abort()
                self.notify("aborting the run, then quitting")

        self.push_screen(ConfirmScreen("A run is in progress. Abort it and quit? (records are kept)"), answer)

    def run_dir(self) -> Path | None:
        if self.state.run_dir:
            return Path(self.state.run_dir)
        rd = getattr(self.handle, "run_dir", None)
        if rd is not None:
            return Path(rd)
        return self.watch_path if self.watch_path is not None and self.watch_path.is_dir() else None

    def action_open_report(self) -> None:
        rd = self.run_dir()
        if rd is None:
            self.notify("no run directory yet", severity="warning")
            return
        for name in ("report.html", "report.md"):
            p = rd / name
            if p.is_file():
                self.notify(f"report: {p}", timeout=10)
                return
        self.notify(f"the report is not written yet (it will be at {rd / 'report.html'})", severity="warning")

    def action_open_results(self) -> None:
        if isinstance(self.screen, ResultsScreen):
            return
        self.push_screen(ResultsScreen())

    def action_open_spec(self) -> None:
        if isinstance(self.screen, SpecScreen):
            return
        path = self.spec_path
        if path is None and self.state.spec_path and Path(self.state.spec_path).is_file():
            path = Path(self.state.spec_path)
        if path is None:
            rd = self.run_dir()
            if rd is not None and (rd / "spec.yaml").is_file():
                path = rd / "spec.yaml"
        if path is None:
            self.notify("no spec file to edit", severity="warning")
            return
        self.push_screen(SpecScreen(path))

    def spec_for_overrides(self) -> Path | None:
        """The spec file overrides are written to: the given spec, the run's source spec, its copy."""
        if self.spec_path is not None and self.spec_path.is_file():
            return self.spec_path
        if self.state.spec_path and Path(self.state.spec_path).is_file():
            return Path(self.state.spec_path)
        rd = self.run_dir()
        if rd is not None and (rd / "spec.yaml").is_file():
            return rd / "spec.yaml"
        return None

    def on_unmount(self) -> None:
        self._stop.set()


def make_app(
    *,
    handle: Any = None,
    spec_path: Path | str | None = None,
    watch: Path | str | None = None,
    follow: bool = False,
) -> BenchApp:
    """The app for a live run (``handle``), a spec to edit and run (``spec_path``) or a replay (``watch``)."""
    return BenchApp(
        handle=handle,
        spec_path=Path(spec_path) if spec_path else None,
        watch=Path(watch) if watch else None,
        follow=follow,
    )


def run_tui(
    handle: Any = None,
    *,
    spec_path: Path | str | None = None,
    watch: Path | str | None = None,
    follow: bool = False,
) -> int:
    """Run the TUI; exit code like headless: 0 completed, 1 failed, 130 aborted (0 for a replay)."""
    app = make_app(handle=handle, spec_path=spec_path, watch=watch, follow=follow)
    code = app.run()
    h = app.handle
    if h is not None and getattr(h, "_tui_started", False):
        if getattr(h, "running", False):
            h.control.abort()  # the UI is gone: never leave a run measuring with nobody watching
        status = h.wait(timeout=120)
        return EXIT.get(status, 1)
    return code if isinstance(code, int) else app.exit_code()

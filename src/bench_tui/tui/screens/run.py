"""The live run screen: plan tree, in-flight requests, charts, engine panel, log and warnings."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from bench_tui.tui.host import host
from bench_tui.tui.state import RunState
from bench_tui.tui.widgets import Chart, EnginePanel, PlanTree, RequestsTable, SessionsPanel, WarningsPane


class RunScreen(Screen[None]):
    BINDINGS = [
        Binding("p", "app.toggle_pause", "pause/resume"),
        Binding("s", "app.skip_point", "skip point"),
        Binding("a", "app.abort", "abort"),
        Binding("r", "app.open_results", "results"),
        Binding("o", "app.open_report", "report"),
        Binding("e", "app.open_spec", "spec"),
        Binding("q", "app.quit_confirm", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Static("", id="run-header")
        with Horizontal(id="run-main"):
            yield PlanTree(id="plan")
            with Vertical(id="run-right"):
                yield RequestsTable(id="requests")
                yield SessionsPanel("", id="sessions")
                with Horizontal(id="charts"):
                    yield Chart("aggregate tok/s", "tok/s", id="chart-tps")
                    yield Chart("TTFT (mean/s)", "ms", id="chart-ttft")
                    yield EnginePanel("", id="engine")
        with Horizontal(id="run-bottom"):
            yield RichLog(id="log", max_lines=500, wrap=False, markup=False)
            yield WarningsPane("", id="warnings")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#plan").border_title = "plan"
        self.query_one("#requests").border_title = "requests"
        self.query_one("#engine").border_title = "engine"
        self.query_one("#log").border_title = "engine log"
        self.query_one("#warnings").border_title = "warnings"
        self.query_one("#sessions").border_title = "sessions"
        self._log_seq = 0
        app = host(self)
        self.refresh_parts(
            app.state, set(("header", "tree", "requests", "series", "engines", "log", "warnings"))
        )

    def refresh_parts(self, state: RunState, dirty: set[str]) -> None:
        if "header" in dirty or "tree" in dirty:
            self.query_one("#run-header", Static).update(self._header(state))
        if "tree" in dirty:
            self.query_one(PlanTree).refresh_from(state)
        if "requests" in dirty:
            self.query_one(RequestsTable).refresh_from(state)
        if "series" in dirty:
            self.query_one("#chart-tps", Chart).update_series(state.tok_series.totals(60))
            self.query_one("#chart-ttft", Chart).update_series(state.ttft_series.means(60))
        if "engines" in dirty:
            self.query_one(EnginePanel).refresh_from(state)
        if "sessions" in dirty or "engines" in dirty:
            live = state.sessions.get(state.current_point or "")
            eng = state.engines.get(state.engine_of(live.point_id) or "") if live is not None else None
            waiting = eng.stats.waiting if eng is not None and eng.stats is not None else None
            self.query_one(SessionsPanel).post_message(SessionsPanel.Update(live, waiting))
        if "warnings" in dirty:
            self.query_one(WarningsPane).refresh_from(state)
        if "log" in dirty:
            log = self.query_one(RichLog)
            new = state.log_seq - self._log_seq
            lines = list(state.log)[-new:] if 0 < new <= len(state.log) else list(state.log) if new else []
            for line in lines:
                log.write(Text(line))
            self._log_seq = state.log_seq

    def _header(self, state: RunState) -> Text:
        app = host(self)
        t = Text()
        t.append("bench-tui ", style="bold")
        t.append(state.spec_name or "(no spec)", style="bold cyan")
        if state.run_id:
            t.append(f"  run {state.run_id}", style="dim")
        status = state.status
        if app.paused and status == "running":
            status = "paused"
        if app.mode_label:
            status = f"{status} ({app.mode_label})"
        style = {"completed": "green", "failed": "red", "aborted": "magenta"}.get(state.status, "yellow")
        t.append(f"  {status}", style=f"bold {style}")
        t.append(f"  points {state.points_done}/{state.points_total}")
        if state.estimated_requests:
            t.append(f"  requests {state.requests_finished}/{state.estimated_requests}")
        if state.requests_failed:
            t.append(f"  failed {state.requests_failed}", style="red")
        if state.current_point:
            t.append(f"  now {state.current_point}", style="italic")
        return t

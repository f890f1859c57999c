"""Results: throughput table with deltas, scenario grid, transcript + grader reasons, overrides."""

from __future__ import annotations

import datetime as _dt
import getpass
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from bench_tui.catalogue import METRIC
from bench_tui.events import ScenarioGraded
from bench_tui.tui.host import host
from bench_tui.tui.screens.review import ReviewScreen
from bench_tui.tui.state import RunState
from bench_tui.tui.widgets import VERDICT_STYLE, fmt, transcript_text


def _who() -> str:
    """Who decided an override written from the TUI: the login name (a report otherwise shows "unknown author"
    beside a person's decision)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry, no USER/LOGNAME)
        return ""


def throughput_rows(state: RunState) -> list[tuple[str, ...]]:
    """One row per measured throughput point; Δ is eff tg t/s vs the first engine.variant of the plan at
    the same (workload, pp, tg, depth, concurrency), judged by ``reports.verdict`` like the report and
    ``compare`` (bootstrap over repetitions, a practical threshold, degraded/client-limited never claimed)."""
    from bench_tui.reports import verdict as V

    threshold = (
        state.noise_threshold_pct if state.noise_threshold_pct is not None else V.DEFAULT_THRESHOLD_PCT
    )
    rows: list[tuple[str, ...]] = []
    base: dict[tuple[Any, ...], tuple[str, V.Samples]] = {}
    for ps, prm in state.throughput_rows():
        p, s = ps.point, ps.summary
        assert s is not None
        key = (p.workload, prm.pp, prm.tg, prm.depth, prm.concurrency)
        eff = s.eff_tg_tps.median
        ev = f"{p.engine}.{p.variant}"
        groups = state.eff_groups(p.point_id)
        if groups:
            samples = V.units_of(groups)
        elif eff is not None:
            samples = V.Samples.of([eff], "point")  # a replay without request records: the median only
        else:
            samples = V.Samples([])
        flags = " ".join(ps.flags)
        samples.excluded = (
            "degraded"
            if ps.status == "degraded" or "degraded" in flags
            else "client-limited"
            if s.client_limited or "client-limited" in flags
            else ""
        )
        delta = ""
        if samples.units:
            if key not in base:
                base[key] = (ev, samples)
            elif base[key][0] != ev:
                vd = V.compare(
                    base[key][1], samples, threshold_pct=threshold, label=f"{key}|{base[key][0]}|{ev}"
                )
                delta = V.short(vd)
        rows.append(
            (
                ev,
                p.workload,
                str(prm.depth),
                str(prm.concurrency),
                str(prm.pp),
                str(prm.tg),
                fmt(eff),
                fmt(s.agg_tg_tps),
                fmt(s.ttft_ms.median, ".0f"),
                fmt(s.decode_tps.median),
                delta,
                ps.status + (f" ({', '.join(ps.flags)})" if ps.flags else ""),
            )
        )
    return rows


def _threshold_of(run_dir: Path | None) -> float | None:
    """The run's report.noise_threshold_pct (None: unknown, the default applies)."""
    if run_dir is None or not (run_dir / "spec.yaml").is_file():
        return None
    try:
        from bench_tui.spec.loader import load_stored_spec

        return float(load_stored_spec(run_dir / "spec.yaml").report.noise_threshold_pct)
    except Exception:  # noqa: BLE001 - a spec that does not load: the default threshold
        return None


class Cell:
    """One scenario × trial × engine.variant in the grid."""

    def __init__(
        self,
        *,
        scenario: str,
        trial: int,
        category: str,
        ev: str,
        raw: str | None,
        adjusted: str | None,
        reasons: list[str],
        override: Any = None,
        graded: Any = None,
        stale: list[Any] | None = None,
        score: Any = None,
    ) -> None:
        self.scenario, self.trial, self.category, self.ev = scenario, trial, category, ev
        self.raw, self.adjusted, self.reasons, self.override = raw, adjusted, reasons, override
        self.graded: ScenarioGraded | None = graded
        self.stale = stale or []
        self.score = score  # the ScenarioScore (confidence, unsure, rules) once scored


class ResultsScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,r", "app.pop_screen", "back"),
        Binding("o", "add_override", "override"),
        Binding("x", "remove_override", "remove override"),
        Binding("g", "rescore", "re-score"),
        Binding("v", "review", "review unsure"),
        Binding("tab", "app.focus_next", "next pane", show=False),
        Binding("q", "app.quit_confirm", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[Any] = []
        self.cells: dict[tuple[str, int, str], Cell] = {}
        self.columns: list[str] = []
        self.rows: list[tuple[str, int]] = []
        self.score_error = ""
        self.scored_count = 0  # finished scorings (tests wait on it)

    def compose(self) -> ComposeResult:
        yield Static("", id="scores")
        yield DataTable(id="throughput", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="results-bottom"):
            yield DataTable(id="grid", cursor_type="cell")
            with VerticalScroll(id="detail-box"):
                yield Static("select a scenario cell", id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#throughput").border_title = "throughput (eff tg t/s = output tokens / request time)"
        self.query_one("#grid").border_title = "scenarios (raw→adjusted)"
        self.query_one("#detail-box").border_title = "transcript and grader reasons"
        t = self.query_one("#throughput", DataTable)
        for c in (
            "engine.variant",
            "workload",
            "depth",
            "conc",
            "pp",
            "tg",
            *(
                f"{METRIC[k].label} {METRIC[k].unit}"
                for k in ("eff_tg_tps", "agg_tg_tps", "ttft_ms", "decode_tps")
            ),
            "Δ eff tg vs 1st",
            "status",
        ):
            t.add_column(c)
        app = host(self)
        if app.state.noise_threshold_pct is None:
            app.state.noise_threshold_pct = _threshold_of(app.run_dir())
        from bench_tui.reports.verdict import DEFAULT_THRESHOLD_PCT

        t_pct = (
            app.state.noise_threshold_pct
            if app.state.noise_threshold_pct is not None
            else DEFAULT_THRESHOLD_PCT
        )
        self.query_one("#throughput").border_title = (
            "throughput (eff tg t/s = output tokens / request time; Δ: higher is better, claimed only when the "
            f"bootstrap 95 % interval lies beyond ±{t_pct:g} %)"
        )
        self.refresh_parts(app.state, {"results"})
        self.query_one("#grid", DataTable).focus()
        self.action_rescore()

    def refresh_parts(self, state: RunState, dirty: set[str]) -> None:
        if "results" not in dirty:
            return
        t = self.query_one("#throughput", DataTable)
        t.clear()
        t.add_rows(throughput_rows(state))
        if not self.reports:
            self._cells_from_events(state)
            self._fill_grid()

    # ----------------------------------------------------------------------------------------- scores

    def _cells_from_events(self, state: RunState) -> None:
        self.cells.clear()
        for g in state.graded:
            ps = state.points.get(g.point_id)
            ev = f"{ps.point.engine}.{ps.point.variant}" if ps else g.point_id.split("/", 1)[0]
            self.cells[(g.scenario_id, g.trial, ev)] = Cell(
                scenario=g.scenario_id,
                trial=g.trial,
                category=g.category,
                ev=ev,
                raw=g.verdict,
                adjusted=g.verdict,
                reasons=list(g.reasons),
                graded=g,
            )

    def _cells_from_reports(self, state: RunState) -> None:
        graded = {}
        for g in state.graded:
            ps = state.points.get(g.point_id)
            ev = f"{ps.point.engine}.{ps.point.variant}" if ps else g.point_id.split("/", 1)[0]
            graded[(g.scenario_id, g.trial, ev)] = g
        self.cells.clear()
        for rep in self.reports:
            ev = f"{rep.engine}.{rep.variant}"
            for sc in rep.scenarios:
                key = (sc.scenario_id, sc.trial, ev)
                self.cells[key] = Cell(
                    scenario=sc.scenario_id,
                    trial=sc.trial,
                    category=sc.category,
                    ev=ev,
                    raw=sc.raw_verdict,
                    adjusted=sc.adjusted_verdict,
                    reasons=list(sc.reasons),
                    override=sc.override,
                    graded=graded.get(key),
                    stale=list(sc.stale_overrides),
                    score=sc,
                )

    def _fill_grid(self) -> None:
        grid = self.query_one("#grid", DataTable)
        cursor = grid.cursor_coordinate
        grid.clear(columns=True)
        self.columns = sorted({c.ev for c in self.cells.values()})
        cats = {(c.scenario, c.trial): c.category for c in self.cells.values()}
        self.rows = sorted(cats, key=lambda k: (cats[k], k[0], k[1]))
        table: list[list[Text | str]] = []
        for sid, trial in self.rows:
            label = sid if trial == 0 else f"{sid}#{trial}"
            row: list[Text | str] = [label, cats[(sid, trial)]]
            for ev in self.columns:
                c = self.cells.get((sid, trial, ev))
                if c is None:
                    row.append(Text("", style="dim"))
                    continue
                shown = c.adjusted if c.adjusted is not None else c.raw
                txt = c.raw or "n/g"
                if c.adjusted != c.raw:
                    txt = f"{c.raw or 'n/g'}→{c.adjusted}"
                if c.stale:
                    txt += " (stale)"
                row.append(Text(f" {txt} ", style=VERDICT_STYLE.get(shown, "dim")))
            table.append(row)
        # widths fixed here from the cells: DataTable measures auto-width columns on idle, and a screen captured
        # between the refill and that idle showed header widths ('restrain' for 'restraint_refusal', CI stop 28)
        for i, head in enumerate(["scenario", "category", *self.columns]):
            grid.add_column(head, width=max([cell_len(head), *(cell_len(str(r[i])) for r in table)]))
        grid.add_rows(table)
        if self.rows:
            grid.move_cursor(
                row=min(cursor.row, len(self.rows) - 1),
                column=max(2, min(cursor.column, len(self.columns) + 1)),
            )
        self._show_detail()
        self._show_scores()

    def _show_scores(self) -> None:
        out = Text()
        if self.score_error:
            out.append(f"scores unavailable: {self.score_error}\n", style="red")
        if not self.reports:
            if self.cells:
                out.append("raw verdicts from the event stream (no scores yet)", style="dim")
            else:
                out.append("no scenario results in this run", style="dim")
        for rep in self.reports:
            out.append(f"{rep.engine}.{rep.variant}", style="bold")
            if rep.workload:
                out.append(f" {rep.workload}", style="italic")
            out.append(f"  raw {fmt(rep.raw.score)}  adjusted ")
            out.append(fmt(rep.adjusted.score), style="bold")
            out.append(f"  overrides applied {len(rep.overrides_applied)}")
            if rep.overrides_stale:
                out.append(f"  stale {len(rep.overrides_stale)}", style="dark_orange")
            out.append("\n")
        self.query_one("#scores", Static).update(out)

    def selected(self) -> Cell | None:
        grid = self.query_one("#grid", DataTable)
        r, c = grid.cursor_coordinate.row, grid.cursor_coordinate.column
        if not self.rows or r >= len(self.rows) or c < 2 or c - 2 >= len(self.columns):
            return None
        sid, trial = self.rows[r]
        return self.cells.get((sid, trial, self.columns[c - 2]))

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        if event.data_table.id == "grid":
            self._show_detail()

    def _show_detail(self) -> None:
        c = self.selected()
        box = self.query_one("#detail", Static)
        if c is None:
            box.update(Text("select a scenario cell (arrows)", style="dim"))
            return
        out = Text()
        out.append(f"{c.scenario} trial {c.trial}  {c.ev}  [{c.category}]\n", style="bold")
        out.append("raw ")
        out.append(f" {c.raw or 'not graded'} ", style=VERDICT_STYLE.get(c.raw, "dim"))
        out.append("  adjusted ")
        out.append(f" {c.adjusted or 'not graded'} ", style=VERDICT_STYLE.get(c.adjusted, "dim"))
        out.append("\n")
        if c.override is not None:
            scope = ".".join(x for x in (c.override.engine, c.override.variant) if x) or "all engines"
            out.append(f"override ({scope}): {c.override.verdict}: {c.override.reason}\n", style="cyan")
        for st in c.stale:
            out.append(f"stale override: {st.override.verdict} ({st.why})\n", style="dark_orange")
        out.append("grader reasons:\n", style="bold")
        for r in c.reasons or ["(none)"]:
            out.append(f"  - {r}\n")
        out.append("transcript:\n", style="bold")
        out.append_text(transcript_text(c.graded.transcript if c.graded is not None else None))
        box.update(out)

    # ----------------------------------------------------------------------------------------- actions

    def action_rescore(self) -> None:
        app = host(self)
        rd = app.run_dir()
        if rd is None or not (rd / "events.jsonl").is_file():
            return
        self._score(rd, app.spec_for_overrides())

    @work(thread=True, exclusive=True, group="score")
    def _score(self, run_dir: Path, spec: Path | None) -> None:
        from bench_tui.graders.regrade import overrides_spec_for, score_run_dir

        err = ""
        spec = overrides_spec_for(run_dir, spec)  # the run's latest regrade, unless the edited spec is newer
        reports: list[Any] = []
        try:
            try:
                reports, _changes = score_run_dir(run_dir, spec, regrade=True)
            except Exception as exc:  # noqa: BLE001 - regrade needs the pack; stored verdicts still score
                err = f"regrade failed ({exc}); scored the stored verdicts"
                reports, _changes = score_run_dir(run_dir, spec, regrade=False)
        except Exception as exc:  # noqa: BLE001 - shown in the screen, never a traceback
            err = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.app.call_from_thread(self._scored, reports, err)

    def _scored(self, reports: list[Any], err: str) -> None:
        app = host(self)
        self.reports = reports
        self.score_error = err
        if reports:
            self._cells_from_reports(app.state)
        else:
            self._cells_from_events(app.state)
        self._fill_grid()
        self.scored_count += 1
        host(self).refresh_screens({"review"})

    def action_review(self) -> None:
        if not self.reports:
            self.notify(
                "no scores yet: the review queue needs the scored verdicts"
                + (f" ({self.score_error})" if self.score_error else ""),
                severity="warning",
            )
            return
        self.app.push_screen(ReviewScreen(self))

    def action_add_override(self) -> None:
        from bench_tui.tui.screens.modals import OverrideScreen

        c = self.selected()
        if c is None:
            self.notify("select a scenario cell first", severity="warning")
            return
        engine, _, variant = c.ev.partition(".")

        def done(data: dict[str, Any] | None) -> None:
            if data:
                self.write_override(data, c)

        self.app.push_screen(OverrideScreen(c.scenario, engine, variant, c.raw), done)

    def write_override(self, data: dict[str, Any], c: Cell) -> None:
        """Store a decision as an override in the spec overrides are written to, bound to the raw verdict
        and the transcript (the override form and the review queue both come here), then re-score."""
        from bench_tui.spec.edit import EditError, add_override

        app = host(self)
        spec = app.spec_for_overrides()
        if spec is None:
            self.notify("no spec file to write the override to", severity="error")
            return
        data = dict(data)
        data["date"] = _dt.date.today().isoformat()
        data.setdefault("author", _who())
        if c.graded is not None and c.graded.transcript_sha256:
            data["transcript_sha256"] = c.graded.transcript_sha256
        if data.get("raw_verdict") is None:
            data.pop("raw_verdict", None)
        try:
            add_override(spec, data)
        except (EditError, OSError) as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(f"override written to {spec}")
        self.action_rescore()

    def action_remove_override(self) -> None:
        from bench_tui.spec.edit import EditError, remove_override

        c = self.selected()
        if c is None:
            self.notify("select a scenario cell first", severity="warning")
            return
        app = host(self)
        spec = app.spec_for_overrides()
        if spec is None:
            self.notify("no spec file", severity="error")
            return
        if c.override is not None:
            scope = (c.override.engine, c.override.variant)
        else:
            engine, _, variant = c.ev.partition(".")
            scope = (engine, variant)
        try:
            n = remove_override(spec, c.scenario, scope[0], scope[1])
        except (EditError, OSError) as exc:
            self.notify(str(exc), severity="error")
            return
        if not n:
            self.notify(f"no override of {c.scenario} scoped to {c.ev} in {spec.name}", severity="warning")
            return
        self.notify(f"removed {n} override(s) of {c.scenario} from {spec}")
        self.action_rescore()

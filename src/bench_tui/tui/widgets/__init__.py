"""Widgets of the run screen. Each one renders from a RunState; ``refresh_from(state)`` is called at most once
per drained batch, and only when the part it shows changed. Also the verdict styles and the transcript
rendering that the results screen and the review queue share."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Sparkline, Static, Tree
from textual.widgets.tree import TreeNode

from bench_tui.tui.state import RequestState, RunState, SessionsLive, icon

STATUS_STYLE = {
    "pending": "dim",
    "running": "bold yellow",
    "ok": "green",
    "degraded": "dark_orange",
    "failed": "bold red",
    "skipped": "magenta",
}
REQ_STYLE = {"queued": "dim", "prefill": "yellow", "decoding": "cyan", "done": "green", "failed": "red"}
MAX_REQUEST_ROWS = 64
VERDICT_STYLE: dict[str | None, str] = {
    "pass": "bold black on green",
    "partial": "bold black on yellow",
    "fail": "bold white on red",
    None: "dim",
}


def fmt(v: float | None, spec: str = ".1f", dash: str = "-") -> str:
    return dash if v is None else format(v, spec)


def transcript_text(transcript: list[dict[str, Any]] | None) -> Text:
    """A scenario transcript as a person reads it: each message's role and content, each call with its
    arguments (tool results are the ``tool`` messages)."""
    out = Text()
    if not transcript:
        out.append("  (no transcript stored)\n", style="dim")
        return out
    for msg in transcript:
        role = str(msg.get("role", "?"))
        out.append(f"{role}: ", style="bold magenta" if role == "assistant" else "bold")
        content = msg.get("content")
        if content:
            # (a str as it is; anything else, e.g. a list of content parts, as its repr)
            out.append((content if isinstance(content, str) else repr(content)) + "\n")
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function", tc) if isinstance(tc, dict) else {}
            out.append(f"  → {fn.get('name', '?')}({fn.get('arguments', '')})\n", style="green")
        if not content and not msg.get("tool_calls"):
            out.append("\n")
    return out


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


class PlanTree(Tree[str]):
    """engine -> variant -> workload -> point, each point with a status icon."""

    def __init__(self, **kw: object) -> None:
        super().__init__("plan", **kw)  # type: ignore[arg-type]
        self.show_root = False
        self.guide_depth = 2
        self._point_nodes: dict[str, TreeNode[str]] = {}
        self._plan_key: tuple[str, ...] = ()

    def refresh_from(self, state: RunState) -> None:
        key = tuple(state.order)
        if key != self._plan_key:
            self._rebuild(state)
            self._plan_key = key
        for pid, node in self._point_nodes.items():
            ps = state.points[pid]
            node.set_label(self._label(pid, ps.status, icon(ps.status), ps.flags))

    def _label(self, pid: str, status: str, icon: str, flags: list[str]) -> Text:
        short = pid.rsplit("/", 1)[-1]
        t = Text(f"{icon} ", style=STATUS_STYLE.get(status, ""))
        t.append(short, style="bold" if status == "running" else "")
        if flags:
            t.append(f"  {', '.join(flags)}", style="dim italic")
        return t

    def _rebuild(self, state: RunState) -> None:
        self.clear()
        self._point_nodes.clear()
        for engine, variants in state.tree().items():
            en = self.root.add(Text(engine, style="bold"), expand=True)
            for variant, workloads in variants.items():
                vn = en.add(Text(variant, style="bold cyan"), expand=True)
                for workload, points in workloads.items():
                    wn = vn.add(Text(workload, style="italic"), expand=True)
                    for ps in points:
                        self._point_nodes[ps.point.point_id] = wn.add_leaf("", data=ps.point.point_id)


class RequestsTable(DataTable[Text | str]):
    COLUMNS = ("request", "state", "TTFT ms", "tokens", "tok/s", "reasoning", "content", "point")

    def on_mount(self) -> None:
        self.cursor_type = "none"
        self.zebra_stripes = True
        for c in self.COLUMNS:
            self.add_column(c, key=c)

    def refresh_from(self, state: RunState) -> None:
        self.clear()
        rows = state.in_flight()[:MAX_REQUEST_ROWS]
        self.add_rows([self._row(r) for r in rows])

    @staticmethod
    def _row(r: RequestState) -> tuple[Text | str, ...]:
        return (
            r.request_id[-14:],
            Text(r.state, style=REQ_STYLE.get(r.state, "")),
            fmt(r.ttft_ms, ".0f"),
            str(r.tokens),
            fmt(r.tps),
            str(r.reasoning_tokens),
            str(r.content_tokens + r.tool_tokens),
            r.point_id.rsplit("/", 1)[-1],
        )


class Chart(Vertical):
    """A labelled sparkline of a per-second series."""

    def __init__(self, title: str, unit: str, *, id: str) -> None:
        super().__init__(id=id, classes="chart")
        self.chart_title = title
        self.unit = unit

    def compose(self) -> ComposeResult:
        yield Static(self.chart_title, classes="chart-title")
        yield Sparkline([], summary_function=max)

    def update_series(self, values: list[float]) -> None:
        last = values[-1] if values else None
        peak = max(values) if values else None
        self.query_one(".chart-title", Static).update(
            f"{self.chart_title}  now {fmt(last)} {self.unit}  peak {fmt(peak)} {self.unit}"
        )
        self.query_one(Sparkline).data = values


class EnginePanel(Static):
    def refresh_from(self, state: RunState) -> None:
        if not state.engines:
            self.update(Text("no engine yet", style="dim"))
            return
        out = Text()
        for key, eng in state.engines.items():
            style = {"ready": "green", "starting": "yellow", "crashed": "bold red"}.get(eng.state, "dim")
            out.append(f"{key} ", style="bold")
            out.append(eng.state, style=style)
            if eng.version:
                out.append(f"  v{eng.version}", style="dim")
            out.append("\n")
            s = eng.stats
            if s is not None:
                out.append(
                    f"  running {fmt(s.running, '.0f')}  waiting {fmt(s.waiting, '.0f')}  "
                    f"KV {pct(s.kv_usage)}\n"
                )
                out.append(
                    f"  prefix hit {pct(s.prefix_cache_hit_rate)}  "
                    f"spec accept {pct(s.spec_acceptance_rate)}\n"
                )
                if s.gpu:
                    parts = []
                    if "power_w" in s.gpu:
                        parts.append(f"{s.gpu['power_w']:.0f} W")
                    if "mem_used_mb" in s.gpu:
                        parts.append(f"{s.gpu['mem_used_mb'] / 1024:.1f} GiB")
                    if "util_pct" in s.gpu:
                        parts.append(f"util {s.gpu['util_pct']:.0f}%")
                    out.append(f"  GPU {'  '.join(parts)}\n")
        self.update(out)


class WarningsPane(Static):
    def refresh_from(self, state: RunState) -> None:
        if not state.warnings:
            self.update(Text("no warnings", style="dim"))
            return
        out = Text()
        for w in list(state.warnings)[-30:]:
            out.append(f"{w.code}", style="bold dark_orange" if w.code != "engine" else "bold red")
            where = f" {w.point_id.rsplit('/', 1)[-1]}" if w.point_id else ""
            out.append(f"{where}: {w.message}\n")
        self.update(out)


class SessionsPanel(Static):
    """The running sessions point: sessions active / thinking / done / not started, turn progress, context,
    the engine's cache hit, SLO attainment so far, offered vs achieved start rate. Hidden until a sessions
    point runs; its data arrives as a :class:`SessionsPanel.Update` message."""

    class Update(Message):
        def __init__(self, live: SessionsLive | None, waiting: float | None) -> None:
            super().__init__()
            self.live = live
            self.waiting = waiting

    def on_mount(self) -> None:
        self.display = False

    def on_sessions_panel_update(self, msg: Update) -> None:
        live = msg.live
        self.display = live is not None
        if live is None:
            return
        t = Text()
        t.append(live.point_id.rsplit("/", 2)[-2] + "/" + live.point_id.rsplit("/", 1)[-1], style="bold")
        if live.trial:
            t.append(f"  (search, rate #{live.trial + 1})", style="dim")
        t.append("\n")
        pending = max(0, live.planned - len(live.started))
        t.append(f"active {len(live.active)}  thinking {len(live.thinking)}  done {len(live.done)}  ")
        t.append(f"not started {pending}  engine waiting {fmt(msg.waiting, '.0f')}\n")
        turns = f"/{live.turns_per_session}" if live.turns_per_session else ""
        t.append(f"turns done {live.turns_done}  deepest turn {live.last_turn}{turns}  ")
        t.append(f"context {fmt(live.context_last, '.0f')} tok\n")
        t.append(f"cache hit {pct(live.cache_hit)}  SLO met {pct(live.attainment)}")
        t.append(f" of {live.slo_judged}\n" if live.slo else " (no SLO)\n")
        t.append(
            f"rate offered {fmt(live.offered_rate, '.2f')}/s  achieved {fmt(live.achieved_rate, '.2f')}/s"
        )
        self.update(t)

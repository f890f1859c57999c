"""The review queue: the unsure verdicts a person has not settled yet, one at a time.

Each item shows the scenario, trial and engine.variant, the grader's raw verdict with the rules and reasons
that decided it, why it is unsure (graders/confidence.py, or a judge that disagreed) and the transcript.
``c`` confirms the grader's verdict, ``p`` / ``a`` / ``f`` set pass / partial / fail (with an optional
reason typed below, enter saves). A decision is written like every override (``grading.overrides`` of the
spec the results screen writes to, bound to the raw verdict and the transcript's sha256, raw kept beside
the adjusted score); a confirmation is an override whose verdict is the grader's own, so it leaves the
queue. The screen reads what it shows from the results screen (``ReviewSource``) and never scores itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from bench_tui.tui.state import RunState
from bench_tui.tui.widgets import VERDICT_STYLE, transcript_text

Key = tuple[str, int, str]  # scenario, trial, engine.variant


class ReviewSource(Protocol):
    """What the queue needs from the screen that scored the run (the results screen)."""

    @property
    def cells(self) -> Mapping[Key, Any]: ...  # (scenario, trial, engine.variant) -> Cell with .score

    def write_override(self, data: dict[str, Any], cell: Any) -> None: ...


def unsure_queue(cells: Mapping[Key, Any], done: set[Key]) -> list[Key]:
    """The unsure verdicts not yet overridden (nor decided in this screen), in a stable order."""
    out = []
    for key, c in cells.items():
        sc = getattr(c, "score", None)
        if sc is None or key in done:
            continue
        if sc.confidence == "unsure" and sc.override is None and sc.raw_verdict is not None:
            out.append(key)
    return sorted(out)


class ReviewScreen(Screen[None]):
    BINDINGS = [
        Binding("c", "confirm", "confirm grader"),
        Binding("p", "decide('pass')", "pass"),
        Binding("a", "decide('partial')", "partial"),
        Binding("f", "decide('fail')", "fail"),
        Binding("s", "skip", "skip"),
        Binding("escape", "back", "back / cancel"),
    ]

    def __init__(self, source: ReviewSource) -> None:
        super().__init__()
        self.source = source
        self.done: set[Key] = set()  # decided here (the rescore that applies them may still be running)
        self.skipped: list[Key] = []
        self.current: Key | None = None
        self.pending: str | None = None  # the verdict waiting for its reason

    def compose(self) -> ComposeResult:
        yield Static("", id="review-header")
        with VerticalScroll(id="review-box"):
            yield Static("", id="review")
        yield Input(placeholder="reason (optional); enter saves, escape cancels", id="review-reason")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#review-box").border_title = "review queue: unsure verdicts"
        self.query_one("#review-reason", Input).display = False
        self.show_next()

    def refresh_parts(self, state: RunState, dirty: set[str]) -> None:
        if "review" in dirty and self.pending is None:
            self.show_next(keep=True)

    # ----------------------------------------------------------------------------------------- showing

    def queue(self) -> list[Key]:
        q = unsure_queue(self.source.cells, self.done)
        return [k for k in q if k not in self.skipped] + [k for k in self.skipped if k in q]

    def show_next(self, *, keep: bool = False) -> None:
        q = self.queue()
        if not (keep and self.current in q):
            self.current = q[0] if q else None
        header = self.query_one("#review-header", Static)
        box = self.query_one("#review", Static)
        if self.current is None and not any(getattr(c, "score", None) for c in self.source.cells.values()):
            header.update(Text("review queue: no scores", style="bold"))
            box.update(
                Text(
                    "No scored verdicts to review (the scoring failed, see the results screen).", style="red"
                )
            )
            return
        if self.current is None:
            header.update(Text(f"review queue: empty ({len(self.done)} decided here)", style="bold"))
            box.update(
                Text(
                    "No unsure verdict left to review: every unsure verdict is confirmed or overridden "
                    "(or none was unsure). escape goes back to the results.",
                    style="green",
                )
            )
            return
        header.update(Text(f"review queue: {len(q)} unsure verdict(s) left", style="bold"))
        box.update(self.item_text(self.current))
        self.query_one("#review-box", VerticalScroll).scroll_home(animate=False)

    def item_text(self, key: Key) -> Text:
        c = self.source.cells[key]
        sc = c.score
        sid, trial, ev = key
        out = Text()
        out.append(f"{sid} trial {trial}  {ev}  [{c.category}]\n", style="bold")
        out.append("grader says ")
        out.append(f" {sc.raw_verdict} ", style=VERDICT_STYLE.get(sc.raw_verdict, "dim"))
        out.append(f"  decided by: {', '.join(sc.rules) or '(no rule ids stored)'}\n")
        out.append("unsure because:\n", style="bold dark_orange")
        for r in sc.unsure:
            out.append(f"  - {r}\n", style="dark_orange")
        out.append("grader reasons:\n", style="bold")
        for r in sc.reasons or ["(none)"]:
            out.append(f"  - {r}\n")
        out.append("transcript:\n", style="bold")
        out.append_text(transcript_text(c.graded.transcript if c.graded is not None else None))
        return out

    # ----------------------------------------------------------------------------------------- deciding

    def _save(self, verdict: str, reason: str) -> None:
        key = self.current
        assert key is not None
        c = self.source.cells[key]
        engine, _, variant = key[2].partition(".")
        raw = c.score.raw_verdict
        if not reason:
            reason = (
                f"review queue: the grader's {raw} confirmed"
                if verdict == raw
                else f"review queue: {raw} corrected to {verdict}"
            )
        self.done.add(key)
        self.source.write_override(
            {
                "scenario": key[0],
                "engine": engine,
                "variant": variant,
                "verdict": verdict,
                "reason": reason,
                "raw_verdict": raw,
            },
            c,
        )
        self.show_next()

    def action_confirm(self) -> None:
        if self.current is None:
            self.notify("nothing to review", severity="warning")
            return
        self._save(self.source.cells[self.current].score.raw_verdict, "")

    def action_decide(self, verdict: str) -> None:
        if self.current is None:
            self.notify("nothing to review", severity="warning")
            return
        self.pending = verdict
        box = self.query_one("#review-reason", Input)
        box.value = ""
        box.border_title = f"{self.current[0]}: set {verdict}"
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        verdict, self.pending = self.pending, None
        event.input.display = False
        if verdict is not None:
            self._save(verdict, event.value.strip())

    def action_skip(self) -> None:
        if self.current is not None:
            self.skipped = [k for k in self.skipped if k != self.current] + [self.current]
            self.current = None
        self.show_next()

    def action_back(self) -> None:
        if self.pending is not None:
            self.pending = None
            self.query_one("#review-reason", Input).display = False
            return
        self.app.pop_screen()

"""Small modal dialogs: yes/no confirmation and the override form."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "yes"), Binding("n,escape", "answer(False)", "no")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, id="question")
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", id="yes", variant="error")
                yield Button("No (n)", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class OverrideScreen(ModalScreen[dict[str, Any] | None]):
    """Asks for the corrected verdict and a reason; returns the override fields or None."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, scenario: str, engine: str, variant: str, raw_verdict: str | None) -> None:
        super().__init__()
        self.scenario, self.engine, self.variant, self.raw_verdict = scenario, engine, variant, raw_verdict

    def compose(self) -> ComposeResult:
        others = [v for v in ("pass", "partial", "fail") if v != self.raw_verdict] or ["pass"]
        with Vertical(classes="dialog"):
            yield Label(
                f"Override {self.scenario} on {self.engine}.{self.variant} "
                f"(grader said: {self.raw_verdict or 'not graded'})"
            )
            yield Select(
                [(v, v) for v in ("pass", "partial", "fail")],
                value=others[0],
                allow_blank=False,
                id="verdict",
            )
            yield Input(placeholder="reason (required)", id="reason")
            yield Label("", id="form-error")
            with Horizontal(classes="buttons"):
                yield Button("Save", id="save", variant="success")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def _submit(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.query_one("#form-error", Label).update("a reason is required")
            return
        verdict = self.query_one("#verdict", Select).value
        self.dismiss(
            {
                "scenario": self.scenario,
                "engine": self.engine,
                "variant": self.variant,
                "verdict": str(verdict),
                "reason": reason,
                "raw_verdict": self.raw_verdict,
            }
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

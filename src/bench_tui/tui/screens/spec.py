"""Spec screen: edit the YAML with live validation (file:line:col), save, see the expanded plan, run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static, TextArea

from bench_tui.reports.bundle import in_bundle_cache
from bench_tui.tui.host import host
from bench_tui.tui.screens.modals import ConfirmScreen

DEBOUNCE_S = 0.4


def make_editor(text: str) -> TextArea:
    """A YAML code editor; without the tree-sitter extra it is the same editor without highlighting."""
    try:
        ta = TextArea.code_editor(text, language="yaml", id="editor")
    except Exception:  # noqa: BLE001 - e.g. LanguageDoesNotExist: highlighting is a nicety
        ta = TextArea.code_editor(text, language=None, id="editor")
    return ta


def bundle_launch_lines(path: Path) -> list[str]:
    """What running the spec at ``path`` would start (runner.launches), one line each; a line saying why
    when that cannot be worked out (then the user still has to say yes)."""
    try:
        from bench_tui.runner.orchestration.launches import describe_launches
        from bench_tui.runner.orchestration.planner import load_spec, plan_points
        from bench_tui.spec.loader import SpecError

        loaded = load_spec(path)
        return describe_launches(loaded, list(plan_points(loaded))).lines()
    except (SpecError, ValueError, OSError) as exc:
        return [f"(the commands cannot be listed: {str(exc).splitlines()[0] if str(exc) else exc})"]


def validate_text(text: str, path: Path) -> tuple[list[str], list[Any]]:
    """(error lines, plan points). Errors are the loader's `file:line:col: message` lines."""
    from bench_tui.runner.orchestration.planner import load_spec_text, plan_points
    from bench_tui.spec.loader import SpecError

    try:
        loaded = load_spec_text(text, path)
    except SpecError as err:
        return [ln for ln in str(err).splitlines() if ln.strip()], []
    except Exception as exc:  # noqa: BLE001 - never a traceback in the editor
        return [f"{path}: {type(exc).__name__}: {exc}"], []
    try:
        return [], list(plan_points(loaded))
    except Exception as exc:  # noqa: BLE001
        return [f"{path}: cannot expand the plan: {exc}"], []


class SpecScreen(Screen[None]):
    BINDINGS = [
        Binding("ctrl+s", "save", "save"),
        Binding("ctrl+r", "run", "run"),
        Binding("ctrl+g", "goto_error", "go to error"),
        Binding("escape", "back", "back", priority=True),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.errors: list[str] = []
        self.points: list[Any] = []
        self.saved_text = ""
        self.validations = 0
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            text = ""
            self.errors = [f"{self.path}: cannot read: {exc.strerror or exc}"]
        self.saved_text = text
        yield Static("", id="spec-header")
        with Horizontal(id="spec-main"):
            yield make_editor(text)
            with Vertical(id="spec-side"):
                yield Static("", id="spec-errors")
                with VerticalScroll(id="spec-plan-box"):
                    yield Static("", id="spec-plan")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#spec-errors").border_title = "validation"
        self.query_one("#spec-plan-box").border_title = "expanded plan"
        self.query_one("#editor").border_title = str(self.path)
        self.validate_now()
        self.query_one(TextArea).focus()

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    @property
    def dirty(self) -> bool:
        return self.text != self.saved_text

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_S, self.validate_now)
        self._header()

    def validate_now(self) -> None:
        self._timer = None
        self.errors, self.points = validate_text(self.text, self.path)
        self.validations += 1
        self._render_validation()

    def _header(self) -> None:
        t = Text()
        t.append(f"spec {self.path}", style="bold")
        t.append("  modified" if self.dirty else "  saved", style="yellow" if self.dirty else "green")
        t.append("   ctrl+s save · ctrl+r run · ctrl+g first error", style="dim")
        self.query_one("#spec-header", Static).update(t)

    def _render_validation(self) -> None:
        self._header()
        err = Text()
        if self.errors:
            for line in self.errors:
                err.append(line + "\n", style="red")
        else:
            err.append("valid", style="bold green")
        self.query_one("#spec-errors", Static).update(err)
        plan = Text()
        if self.points:
            total = sum(getattr(p, "requests", 0) for p in self.points)
            plan.append(f"{len(self.points)} points, about {total} requests\n", style="bold")
            last = ""
            for p in self.points:
                head = f"{p.engine}.{p.variant} / {p.workload}"
                if head != last:
                    plan.append(head + "\n", style="bold cyan")
                    last = head
                plan.append(f"  {p.point_id.rsplit('/', 1)[-1]}  ({p.kind}, {p.requests} req)\n")
        else:
            plan.append("(no plan: fix the errors first)" if self.errors else "(empty plan)", style="dim")
        self.query_one("#spec-plan", Static).update(plan)

    def first_error_location(self) -> tuple[int, int] | None:
        for line in self.errors:
            parts = line.split(":")
            for i in range(len(parts) - 2):
                if parts[i + 1].strip().isdigit() and parts[i + 2].strip().isdigit():
                    return int(parts[i + 1]), int(parts[i + 2])
        return None

    def action_goto_error(self) -> None:
        loc = self.first_error_location()
        if loc is None:
            self.notify("no error location")
            return
        ta = self.query_one(TextArea)
        ta.cursor_location = (max(0, loc[0] - 1), max(0, loc[1] - 1))
        ta.focus()

    def action_save(self) -> bool:
        from bench_tui.spec.edit import save_target

        target = save_target(self.path)  # the embedded default spec: a copy in the working directory
        try:
            target.write_text(self.text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"cannot save {target}: {exc.strerror or exc}", severity="error")
            return False
        copied = target != self.path
        if copied:
            app = host(self)
            if app.spec_path is not None and app.spec_path == self.path:
                app.spec_path = target
            self.path = target
            self.query_one("#editor").border_title = str(target)
        self.saved_text = self.text
        self.validate_now()
        self.notify(
            (
                f"the embedded spec is part of the installed package: saved a copy to {target}"
                if copied
                else f"saved {target}"
            )
            + (" (with errors)" if self.errors else "")
        )
        return True

    def action_run(self) -> None:
        app = host(self)
        if app.handle is not None:
            self.notify("a run is already attached to this window", severity="warning")
            return
        self.validate_now()
        if self.errors:
            self.notify("fix the spec errors first", severity="error")
            return
        if self.dirty and not self.action_save():
            return
        factory = app.run_factory
        from_bundle = in_bundle_cache(self.path)
        if factory is None:
            from bench_tui.runner.orchestration.child import in_child_process
            from bench_tui.runner.orchestration.session import start_run

            def factory(path: Path) -> Any:  # measured in a child process: drawing never delays a timestamp
                # a bundle's spec runs into the local runs directory, never the one it names
                return in_child_process(
                    start_run(path, runs_dir=Path.cwd() / "runs" if from_bundle else None)
                )

        if from_bundle:
            # someone else's spec: nothing it names starts before the user has read it and said yes
            lines = bundle_launch_lines(self.path)
            if lines:
                question = (
                    "This spec comes from a bundle. Running it would, on this machine:\n  "
                    + "\n  ".join(lines)
                    + "\nRun it?"
                )

                def answer(yes: bool | None) -> None:
                    if yes:
                        self._start(factory)
                    else:
                        self.notify("not started", severity="warning")

                self.app.push_screen(ConfirmScreen(question), answer)
                return
        self._start(factory)

    def _start(self, factory: Any) -> None:
        app = host(self)
        try:
            handle = factory(self.path)
        except Exception as exc:  # noqa: BLE001 - a user-caused failure to start: a message
            self.notify(
                f"cannot start the run: {str(exc).splitlines()[0] if str(exc) else exc}", severity="error"
            )
            return
        app.attach_handle(handle)
        self.app.pop_screen()
        app.refresh_screens({"header", "tree", "requests", "series", "engines", "log", "warnings"})

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

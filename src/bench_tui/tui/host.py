"""What the screens need from the app that runs them, as a Protocol.

The app imports its screens; the screens import this, never ``tui.app``, so the TUI has no import circle
(an import-linter contract keeps it so). Textual's own App methods (push_screen, pop_screen, ...) the screens
call on ``self.app`` directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, cast

from bench_tui.tui.state import RunState


class Host(Protocol):
    state: RunState
    handle: Any
    spec_path: Path | None
    paused: bool
    run_factory: Any

    @property
    def mode_label(self) -> str: ...

    def run_dir(self) -> Path | None: ...

    def spec_for_overrides(self) -> Path | None: ...

    def attach_handle(self, handle: Any) -> None: ...

    def refresh_screens(self, dirty: set[str]) -> None: ...


def host(node: Any) -> Host:
    """The app of a screen or widget, as the screens see it."""
    return cast(Host, node.app)

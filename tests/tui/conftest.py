"""Fixtures for the TUI tests (the recorded streams and the fake run handle are in helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FakeHandle, live_events


@pytest.fixture
def fake_handle() -> FakeHandle:
    return FakeHandle(live_events())


@pytest.fixture
def recorded_run(tmp_path: Path) -> Path:
    """A full recorded run directory (throughput, spec acceptance, scenarios with overrides)."""
    from fixtures_runs import make_run_dir

    return make_run_dir(tmp_path / "runs")

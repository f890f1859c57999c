"""Every test gets its own per-user data directory (the run registry and history index of
``bench_tui.runner.orchestration.registry``), so runs made by tests never land in the real user's history."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path_factory.mktemp("bench-tui-data")
    monkeypatch.setenv("BENCH_TUI_DATA_DIR", str(d))
    return d

"""Suite-wide test policy: which tests share the heavy lane under pytest-xdist, and a free-port fixture.

``scripts/dev test`` runs the suite with ``-n auto`` and pyproject's ``--dist loadgroup``. The real CPU engine
(marker ``engine``: llama.cpp with 2 threads, i.e. every core of the test box) and the timing-truth tests
against the scripted server (marker ``timing``: they assert client timestamps within milliseconds of the
server's) all go to one xdist group, so they run one after another on one worker and never beside each other;
the rest of the suite shares the other workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripted_server import free_port

HEAVY_GROUP = "heavy"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (it appends them to the node ids)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("engine") or item.get_closest_marker("timing"):
            item.add_marker(pytest.mark.xdist_group(HEAVY_GROUP))


@pytest.fixture
def free_tcp_port() -> int:
    """A port on 127.0.0.1 nothing listens on (the kernel's pick; see scripted_server.free_port)."""
    return free_port()


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own per-user data directory (the run list and history index of
    ``bench_tui.runner.orchestration.runlist``), so runs made by tests never land in the real user's history."""
    d = tmp_path_factory.mktemp("bench-tui-data")
    monkeypatch.setenv("BENCH_TUI_DATA_DIR", str(d))
    return d

"""The measuring core never imports Textual: only bench_tui.tui may (DESIGN.md, CONTRACTS.md)."""

from __future__ import annotations

import json
import subprocess
import sys

CORE_PACKAGES = [
    "bench_tui.spec",
    "bench_tui.runner",
    "bench_tui.graders",
    "bench_tui.reports",
    "bench_tui.engine_adapters",
]
CORE_MODULES = [
    "bench_tui.events",
    "bench_tui.cli",
    "bench_tui.cli.spec",
    "bench_tui.cli.reports",
    "bench_tui.cli.resume",
    "bench_tui.cli.grade",
    "bench_tui.cli.watch",
]

# Imports every module of the core packages one by one and records the first one after which a UI module is
# loaded, so a failure names the culprit.
PROBE = """
import importlib, json, pkgutil, sys

packages = {packages!r}
modules = {modules!r}
names = []
for pkg in packages:
    mod = importlib.import_module(pkg)
    names.append(pkg)
    names.extend(m.name for m in pkgutil.walk_packages(mod.__path__, pkg + "."))
names.extend(modules)

def ui_loaded():
    return sorted(m for m in sys.modules if m == "textual" or m.startswith(("textual.", "bench_tui.tui")))

culprit = None
for name in names:
    importlib.import_module(name)
    if culprit is None and ui_loaded():
        culprit = name
print(json.dumps({{"imported": names, "ui": ui_loaded(), "culprit": culprit}}))
"""


def _probe(packages: list[str], modules: list[str]) -> dict[str, object]:
    code = PROBE.format(packages=packages, modules=modules)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_core_imports_without_textual() -> None:
    result = _probe(CORE_PACKAGES, CORE_MODULES)
    imported = result["imported"]
    assert isinstance(imported, list)
    for must in (
        "bench_tui.spec.loader",
        "bench_tui.spec.matrix",
        "bench_tui.cli.spec",
        "bench_tui.spec.jsonschema",
        "bench_tui.runner.orchestration.session",
        "bench_tui.runner.orchestration.headless",
        "bench_tui.events",
        "bench_tui.cli",
    ):
        assert must in imported, must
    assert result["ui"] == [], f"{result['culprit']} imports the UI: {result['ui']}"


def test_the_probe_sees_textual_when_it_is_imported() -> None:
    """The check above can fail: importing the TUI package is detected and blamed."""
    result = _probe(["bench_tui.spec"], ["bench_tui.tui.app"])
    assert "textual" in result["ui"]  # type: ignore[operator]
    assert result["culprit"] == "bench_tui.tui.app"

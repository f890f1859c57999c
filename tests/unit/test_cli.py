"""The command line: lazy subcommands, spec errors without tracebacks, headless start-up imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from bench_tui.cli import COMMAND_HELP, LAZY_COMMANDS, main


def test_help_lists_every_command_without_importing_them() -> None:
    code = (
        "import sys\n"
        "from bench_tui.cli import entry\n"
        "try:\n    entry(['--help'])\n"
        "except SystemExit:\n    pass\n"
        "bad = [m for m in sys.modules if m.startswith(('textual', 'bench_tui.tui', 'bench_tui.reports',"
        " 'bench_tui.runner', 'bench_tui.engine_adapters'))]\n"
        "print('IMPORTED', bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert "IMPORTED []" in out, out
    for name in LAZY_COMMANDS:
        assert name in out


def test_every_lazy_command_has_help_and_resolves() -> None:
    assert set(LAZY_COMMANDS) <= set(COMMAND_HELP)
    runner = CliRunner()
    for name in LAZY_COMMANDS:
        res = runner.invoke(main, [name, "--help"])
        assert res.exit_code == 0, (name, res.output)
        assert "Usage" in res.output


def test_bad_spec_exits_2_with_position_and_no_traceback(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(
        "version: 1\nname: x\nengines:\n  e:\n    kind: external\n    base_url: http://127.0.0.1:1\n"
        "    modle: foo\nworkloads: {}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", str(spec), "--no-tui"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert f"{spec}:7:5" in proc.stderr, proc.stderr
    assert "model" in proc.stderr  # the hint
    assert "Traceback" not in proc.stderr + proc.stdout


def test_missing_spec_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", str(tmp_path / "nope.yaml"), "--no-tui"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "nope.yaml" in proc.stderr and "Traceback" not in proc.stderr

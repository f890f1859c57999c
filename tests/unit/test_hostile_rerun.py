"""`rerun BUNDLE` never starts what a bundle names without a yes: the exact commands are printed, a stdin that
is not a terminal (or is closed) means no, `--yes` approves, and the bundle's runs_dir is never used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_tui.events import RunStarted, encode
from bench_tui.reports.sharing import bundle_run
from scripted_server import free_port

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _bundle(tmp_path: Path, marker: Path, evil_runs: Path) -> Path:
    port = free_port(18470, 18489)
    spec = f"""\
version: 1
name: shared-study
runs_dir: {evil_runs}
engines:
  srv:
    kind: command
    command: [sh, -c, "touch {marker}; exit 3"]
    port: {port}
    startup_timeout: 20
    env: {{LD_PRELOAD: /tmp/not-a-lib.so}}
workloads:
  sweep: {{kind: throughput, pp: [16], tg: [4], repetitions: 1, warmup: 0}}
"""
    run = tmp_path / "theirs" / "20261203T000000Z_abcdef"
    run.mkdir(parents=True)
    (run / "spec.yaml").write_text(spec)
    ev = RunStarted(run_id=run.name, spec_name="shared-study", spec_path="", run_dir=str(run))
    (run / "events.jsonl").write_bytes(encode(ev) + b"\n")
    out, _ = bundle_run(run, tmp_path / "shared.tar.gz")
    return out


def _rerun(
    args: list[str], cwd: Path, env_extra: dict[str, str], *, stdin: str = "devnull", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, **env_extra}
    cmd = [sys.executable, "-m", "bench_tui.cli", "rerun", *args]
    if stdin == "closed":  # the shell closes fd 0 before exec
        return subprocess.run(
            ["sh", "-c", 'exec "$@" 0<&-', "sh", *cmd],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return subprocess.run(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path, Path, dict[str, str]]:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil-runs"
    bundle = _bundle(tmp_path, marker, evil)
    work = tmp_path / "work"
    work.mkdir()
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    return bundle, marker, evil, work, env


@pytest.mark.parametrize("stdin", ["devnull", "closed"])
def test_rerun_without_approval_starts_nothing(setup, stdin: str) -> None:  # type: ignore[no-untyped-def]
    bundle, marker, evil, work, env = setup
    r = _rerun([str(bundle)], work, env, stdin=stdin)
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    assert f"run: LD_PRELOAD=/tmp/not-a-lib.so sh -c 'touch {marker}; exit 3'" in out  # the exact command
    assert "not started: these commands come from a spec you did not write" in out and "--yes" in out
    assert "Traceback" not in out
    assert not marker.exists()  # no process was started
    assert not evil.exists() and not (work / "runs").exists()  # and no run directory made


def test_rerun_with_yes_runs_into_the_local_runs_dir(setup) -> None:  # type: ignore[no-untyped-def]
    bundle, marker, evil, work, env = setup
    r = _rerun([str(bundle), "--yes"], work, env)
    out = r.stdout + r.stderr
    assert "approved with --yes" in out, out
    assert marker.exists()  # approved: the engine command ran
    assert not evil.exists()  # the bundle's runs_dir is ignored
    runs = [d for d in (work / "runs").iterdir() if d.is_dir()]
    assert len(runs) == 1 and (runs[0] / "events.jsonl").is_file()
    assert "Traceback" not in out


def test_resume_refuses_an_unpacked_bundle(setup, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from bench_tui.reports.bundle import open_bundle

    bundle, marker, evil, work, env = setup
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    unpacked = open_bundle(bundle)
    r = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", "resume", str(unpacked), "--no-tui"],
        cwd=work,
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 2 and "unpacked bundle" in r.stderr and "rerun" in r.stderr
    assert not marker.exists()

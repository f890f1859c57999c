"""History from any directory (the per-user index every run dir registers with), a damaged or empty index
rebuilt from the run directories with a warning, a run in progress listed as running; and user-caused
errors about runs_dir and the index are messages, never tracebacks."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import history
from bench_tui.reports import history as h
from bench_tui.runner.orchestration.runlist import data_dir, register_run_dir, registered_run_dirs
from bench_tui.runner.orchestration.store import RunDirError, create_run_dir
from fixtures_runs import make_run_dir

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def two_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    a = make_run_dir(tmp_path / "proj-a" / "runs", run_id="20261201T100000Z_aaaaaa")
    b = make_run_dir(tmp_path / "proj-b" / "results", run_id="20261202T100000Z_bbbbbb", finished=False)
    register_run_dir(a)
    register_run_dir(b)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return a, b, elsewhere


def _history(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(history, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_history_from_any_directory(two_places) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = two_places
    code, out, err = _history()
    assert code == 0, out + err
    assert a.name in out and b.name in out
    assert (data_dir() / h.DB_NAME).is_file()
    code, out, _ = _history("--json")
    rows = {r["run_key"]: r for r in json.loads(out)}
    assert rows[a.name]["status"] == "completed" and rows[b.name]["status"] == "incomplete"


def test_a_new_run_dir_registers_itself(tmp_path: Path) -> None:
    paths = create_run_dir(tmp_path / "somewhere" / "runs", "version: 1\n")
    (paths.run_dir / "events.jsonl").write_text("")
    assert paths.run_dir.resolve() in [d.resolve() for d in registered_run_dirs()]


@pytest.mark.parametrize(
    ("content", "warning"),
    [
        (b"this is not an sqlite database, just garbage bytes" * 40, "is damaged"),
        (b"", "is empty but 2 run directories exist; rebuilding it from them"),
    ],
)
def test_corrupt_or_empty_index_is_rebuilt_with_a_warning(two_places, content: bytes, warning: str) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = two_places
    db = data_dir() / h.DB_NAME
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(content)
    code, out, err = _history()
    assert code == 0, out + err
    assert warning in err and "Traceback" not in out + err
    assert a.name in out and b.name in out and "no runs match" not in out
    code, out, err = _history()  # repaired: no warning the second time
    assert code == 0 and "warning" not in err and a.name in out


def test_an_index_emptied_behind_our_back_is_noticed(two_places) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = two_places
    assert _history()[0] == 0
    db = data_dir() / h.DB_NAME
    con = h.connect(db)
    with con:
        for t in ("runs", "points", "scores", "scenarios", "sources"):
            con.execute(f"DELETE FROM {t}")  # noqa: S608
    con.close()
    code, out, err = _history()
    assert "is empty but 2 run directories exist" in err and a.name in out and b.name in out


def test_local_runs_dir_index_damaged_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    a = make_run_dir(root, run_id="20261201T100000Z_cccccc")
    (root / h.DB_NAME).write_bytes(b"\x00garbage" * 100)
    code, out, err = _history("--runs-dir", str(root))
    assert code == 0 and a.name in out and "is damaged" in err


def test_a_run_in_progress_is_listed_as_running(two_places) -> None:  # type: ignore[no-untyped-def]
    _, b, _ = two_places
    fd = os.open(b / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what the session holding the run does
        rows = {r["run_key"]: r for r in json.loads(_history("--json")[1])}
        assert rows[b.name]["status"] == "running"
        code, out, _ = _history()
        assert any(b.name in line and "running" in line for line in out.splitlines())
    finally:
        os.close(fd)  # the writer is gone (or was killed): no longer running
    rows = {r["run_key"]: r for r in json.loads(_history("--json")[1])}
    assert rows[b.name]["status"] == "incomplete"


def test_runs_made_meanwhile_are_indexed(two_places, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = two_places
    assert _history()[0] == 0
    c = make_run_dir(tmp_path / "proj-c" / "runs", run_id="20261203T100000Z_dddddd")
    register_run_dir(c)
    code, out, _ = _history()
    assert c.name in out
    # a run directory deleted since: dropped from the index
    import shutil

    shutil.rmtree(a)
    code, out, _ = _history()
    assert a.name not in out and c.name in out


def test_unusable_index_location_is_a_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("BENCH_TUI_DATA_DIR", str(blocker / "sub"))
    monkeypatch.chdir(tmp_path)
    code, out, err = _history()
    assert code == 2 and "history: cannot create the history index" in err and "Traceback" not in out + err


# --------------------------------------------------------------------------------------------- runs_dir


SPEC = """\
version: 1
name: rd
engines:
  ext: {kind: external, base_url: "http://127.0.0.1:9"}
workloads:
  sweep: {kind: throughput, pp: [8], tg: [2], repetitions: 1}
"""


@pytest.mark.parametrize("case", ["a-file", "parent-is-a-file", "cannot-create"])
def test_runs_dir_errors_are_messages(tmp_path: Path, case: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    target = {
        "a-file": blocker,
        "parent-is-a-file": blocker / "runs",
        "cannot-create": Path("/proc/bench-tui-no-such/runs"),
    }[case]
    with pytest.raises(RunDirError, match="runs directory|run directory"):
        create_run_dir(target, "version: 1\n")
    spec = tmp_path / "spec.yaml"
    for how in ("flag", "spec"):
        text = SPEC + (f"runs_dir: {target}\n" if how == "spec" else "")
        spec.write_text(text)
        argv = [sys.executable, "-m", "bench_tui.cli", str(spec), "--no-tui"]
        if how == "flag":
            argv += ["--runs-dir", str(target)]
        r = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": SRC},
        )
        assert r.returncode == 2, r.stderr
        assert str(target) in r.stderr and "Traceback" not in r.stderr
        if how == "flag" and case == "a-file":  # click checks the option itself
            assert "Invalid value for '--runs-dir'" in r.stderr and "is a file" in r.stderr
        else:
            assert "cannot start the run:" in r.stderr and "--runs-dir" in r.stderr  # with how to fix it


def test_in_progress_check_never_takes_the_lock(tmp_path: Path) -> None:
    from bench_tui.runner.orchestration import runlist

    run = tmp_path / "r"
    run.mkdir()
    assert runlist.run_in_progress(run) is False  # no lock file
    fd = os.open(run / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert runlist.run_in_progress(run) is True
        assert runlist._try_flock(run / ".lock") is True  # the fallback where /proc/locks is missing
    finally:
        os.close(fd)
    assert runlist.run_in_progress(run) is False
    # asking left no lock behind: a writer can take it at once
    fd = os.open(run / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_a_damaged_local_index_is_repaired_from_the_default_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the layout of the issue: ./runs with runs in it and a broken runs/history.sqlite; plain `history`
    root = tmp_path / "runs"
    runs = [make_run_dir(root, run_id=f"20261201T10000{i}Z_eeeee{i}") for i in range(3)]
    (root / h.DB_NAME).write_bytes(b"")  # empty ...
    monkeypatch.chdir(tmp_path)
    code, out, err = _history()
    assert code == 0 and all(r.name in out for r in runs)
    assert f"the history index {Path('runs') / h.DB_NAME} is empty" in err
    (root / h.DB_NAME).write_bytes(b"not sqlite at all" * 64)  # ... then damaged
    code, out, err = _history()
    assert code == 0 and all(r.name in out for r in runs) and "is damaged" in err
    assert {r["run_key"] for r in h.query(root / h.DB_NAME)} == {r.name for r in runs}  # repaired

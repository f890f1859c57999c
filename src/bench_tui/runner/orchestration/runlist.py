"""The per-user list of run directories, so that `bench-tui history` works from any directory.

Every run directory registers itself when it is created (``runner.store.create_run_dir``): one absolute
path per line, appended to ``<data dir>/runs.txt``. The data dir is ``$BENCH_TUI_DATA_DIR``, else
``$XDG_DATA_HOME/bench-tui``, else ``~/.local/share/bench-tui``. The list is only a pointer: the history
index (``reports.history``) is rebuilt from the run directories it names, and a path whose directory is
gone is skipped. A run is *in progress* while a session holds its ``.lock`` (``runner.store``'s one-writer
lock; the kernel drops it when the writer dies, so a killed run is never shown as running).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

RUNLIST_FILE = "runs.txt"
LOCK_FILE = ".lock"  # the run directory's writer lock (flock)


def data_dir() -> Path:
    explicit = os.environ.get("BENCH_TUI_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "bench-tui"


def register_run_dir(run_dir: Path | str) -> bool:
    """Append ``run_dir`` to the per-user list; False (and the run goes on) when it cannot be written."""
    line = (str(Path(run_dir).resolve()) + "\n").encode()
    if b"\n" in line[:-1]:
        return False  # a newline in a path would split the record
    try:
        d = data_dir()
        d.mkdir(parents=True, exist_ok=True)
        fd = os.open(d / RUNLIST_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)  # one O_APPEND write: lines of concurrent runs never interleave
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def registered_run_dirs() -> list[Path]:
    """Registered run directories that still exist (each once, in registration order)."""
    try:
        text = (data_dir() / RUNLIST_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[Path] = []
    seen: set[str] = set()
    for raw in text.splitlines():
        p = raw.strip()
        if not p or p in seen:
            continue
        seen.add(p)
        d = Path(p)
        if (d / "events.jsonl").is_file():
            out.append(d)
    return out


def run_in_progress(run_dir: Path | str) -> bool:
    """True while a session holds the run directory's writer lock.

    Read from ``/proc/locks`` where there is one, so that asking never takes the lock itself (a shared lock
    held for an instant could make a `resume` starting at that moment think the run is taken); elsewhere a
    non-blocking shared ``flock`` is tried and dropped at once."""
    lock = Path(run_dir) / LOCK_FILE
    try:
        st = lock.stat()
    except OSError:
        return False
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        return _try_flock(lock)
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 25199 fe:00:2154642 0 EOF" (a "->" marks a waiter, not a holder)
        if len(parts) >= 6 and parts[1] == "FLOCK" and "->" not in parts and parts[5] == ident:
            return True
    return False


def _try_flock(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)

"""Engines never outlive the runner that started them.

Two parts, both about a launched engine's process group (``start_new_session``: the group id is the leader's
pid):

1. A watchdog process per launched engine (``python -I -S reaper.py PGID START_TICKS``, started by
   :meth:`ProcessEngine.start`). It holds the read end of a pipe whose write end only the runner has. When
   the runner goes away for any reason (exit, crash, ``kill -9``) the pipe reads EOF, and the watchdog stops
   the engine's whole group: SIGTERM, a grace period, SIGKILL. A normal stop closes the pipe after the group
   is gone, so the watchdog finds nothing to do. It also leaves on its own once the group has ended.

   Why not ``prctl(PR_SET_PDEATHSIG)`` in the engine: the signal is tied to the *thread* that forked (the
   runner starts engines from worker threads), it reaches only the leader (``sh -c`` wrappers and vLLM's
   worker processes would survive), and it is Linux-only. The watchdog covers the whole group.

2. A record per launched engine in the run directory (``engines/<name>.<variant>.proc.json``: pid, process
   group, start time in clock ticks from ``/proc/PID/stat``, boot id), removed when the engine is stopped.
   ``resume`` reads the records that are left (the runner and its watchdogs were killed together, say) and
   stops a leftover engine only when it is provably the one this run started: same boot, and either the
   leader is alive with the recorded start time, or the leader is gone and processes of its group are left
   (Linux never hands out a pid that is still some group's id, so such a group is the same one).

This file imports only the standard library: the watchdog runs it as a script with ``-I -S``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

RECORD_SUFFIX = ".proc.json"
GRACE_S = 5.0
POLL_S = 1.0


def _stat_fields(pid: int | str) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (index 0 is the state)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError):
        return None


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); None when gone."""
    fields = _stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return None
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is not None and fields[0] not in ("Z", "X") and fields[2] == str(pgid):
            out.append(int(entry))
    return out


def ours(pgid: int, ticks: int | None) -> bool:
    """Is the group ``pgid`` still the one whose leader started at ``ticks``?"""
    now = start_ticks(pgid)
    if now is not None:
        return ticks is not None and now == ticks
    return bool(group_members(pgid))  # the leader is gone; the pgid cannot have been reused while these live


def stop_group(pgid: int, ticks: int | None, grace: float = GRACE_S) -> bool:
    """SIGTERM the group, wait up to ``grace`` s, SIGKILL what is left; only if it is still ours.
    True when there was something of ours to stop."""
    if not ours(pgid, ticks):
        return False
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_members(pgid):
            return True
        time.sleep(0.1)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    end = time.monotonic() + 5.0
    while group_members(pgid) and time.monotonic() < end:
        time.sleep(0.05)
    return True


# --------------------------------------------------------------------------------------------- the watchdog


def watchdog_argv(pgid: int, ticks: int | None, grace: float = GRACE_S) -> list[str]:
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(pgid), str(ticks or 0), str(grace)]


class _Term(Exception):
    pass


def _raise_term(signum: int, frame: Any) -> None:
    raise _Term


def watch(pgid: int, ticks: int | None, grace: float = GRACE_S, fd: int = 0) -> int:
    """Wait for EOF on ``fd`` (the runner is gone), then stop the group; leave when the group ends first."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the runner
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _raise_term)  # asked to go: do the job first
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], POLL_S)
            if ready:
                if not os.read(fd, 4096):
                    break  # EOF: the runner closed the pipe or died
                continue
            if not ours(pgid, ticks):
                return 0  # the engine ended by itself; nothing left to guard
    except _Term:
        pass
    stop_group(pgid, ticks, grace)
    return 0


# --------------------------------------------------------------------------------------------- run records


def record_path(engines_dir: Path, label: str) -> Path:
    return Path(engines_dir) / f"{label}{RECORD_SUFFIX}"


def write_record(engines_dir: Path, label: str, pid: int, watchdog_pid: int | None = None) -> None:
    doc = {
        "label": label,
        "pid": pid,
        "pgid": pid,
        "start_ticks": start_ticks(pid),
        "boot_id": boot_id(),
        "watchdog_pid": watchdog_pid,
    }
    path = record_path(engines_dir, label)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, path)


def clear_record(engines_dir: Path, label: str) -> None:
    try:
        record_path(engines_dir, label).unlink()
    except OSError:
        pass


def stop_leftovers(engines_dir: Path, grace: float = GRACE_S) -> list[str]:
    """Stop every engine this run directory's records prove to be ours and still running; drop the records.
    Returns one sentence per engine stopped (for a warning)."""
    notes: list[str] = []
    d = Path(engines_dir)
    if not d.is_dir():
        return notes
    here = boot_id()
    for path in sorted(d.glob("*" + RECORD_SUFFIX)):
        try:
            doc = json.loads(path.read_text())
            pgid = int(doc["pgid"])
            ticks = doc.get("start_ticks")
            ticks = int(ticks) if ticks is not None else None
            same_boot = not here or doc.get("boot_id") in ("", None, here)
        except (OSError, ValueError, KeyError, TypeError):
            same_boot, pgid, ticks, doc = False, 0, None, {}
        if same_boot and pgid > 1:
            if stop_group(pgid, ticks, grace):
                notes.append(
                    f"stopped a leftover engine {doc.get('label', path.name)} (pid {pgid}) that an "
                    f"earlier, killed session of this run had started"
                )
        try:
            path.unlink()
        except OSError:
            pass
    return notes


def main(argv: list[str]) -> int:
    pgid = int(argv[1])
    ticks = int(argv[2]) if len(argv) > 2 and argv[2] != "0" else None
    grace = float(argv[3]) if len(argv) > 3 else GRACE_S
    return watch(pgid, ticks, grace)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

"""Process checks for the engine tests, read from /proc: which processes a group still has, and whether a
PID is a live process (a zombie counts as gone)."""

from __future__ import annotations

import os


def _stat_fields(pid: int | str) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def group_pids(pgid: int) -> set[int]:
    out: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(entry)
            if fields is not None and int(fields[2]) == pgid and fields[0] != "Z":
                out.add(int(entry))
    return out

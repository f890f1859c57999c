"""Append-only events.jsonl writer with fan-out to attached front ends.

Every event is written and flushed before subscribers see it, so a killed run keeps every record that any
front end has shown. Secrets are scrubbed here, once, by value (``spec.secrets.scrub_json_line``: every value
the spec interpolated from the environment, and URL passwords), so neither the file nor any front end ever
holds one. Thread-safe: the measuring thread and the control thread both emit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from bench_tui.events import Event, decode, encode
from bench_tui.spec.secrets import scrub_json_line

Subscriber = Callable[[Event], None]


class EventLog:
    def __init__(self, path: Path | str, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "ab")
        # a killed writer can leave a torn last line without its newline: start ours on a fresh line
        if self._fh.tell() > 0:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    self._fh.write(b"\n")
                    self._fh.flush()
        self._lock = threading.Lock()
        self._subs: list[Subscriber] = []
        self._fsync = fsync

    def subscribe(self, fn: Subscriber) -> None:
        with self._lock:
            self._subs.append(fn)

    def emit(self, event: Event) -> None:
        raw = encode(event)
        clean = scrub_json_line(raw)  # every ${VAR} value and URL password, wherever in the event it sits
        if clean is not raw:
            try:
                event = decode(clean)  # front ends (console, --json, TUI) see the scrubbed event too
            except (
                msgspec.MsgspecError
            ):  # pragma: no cover - a replacement broke a typed field: keep the original
                pass
        line = clean + b"\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()
            if self._fsync:
                os.fsync(self._fh.fileno())
            subs = list(self._subs)
        for fn in subs:
            fn(event)

    __call__ = emit

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

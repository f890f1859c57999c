"""`--no-tui`: progress lines for people, or one JSON object per event with `--json`. No Textual here.

Exit codes (runner.outcome): 0 every point ok, 1 a point failed, degraded, skipped or flagged (``fail_on``),
130 interrupted. The first Ctrl-C (or SIGTERM / SIGHUP) aborts the run cleanly: in-flight requests are
cancelled and recorded, engines are stopped, RunFinished and the report are written, the run directory stays
resumable. A second one forces: the engines are killed at once (no grace period), and the record and the
report are still written. Only a third leaves without waiting (the engines' watchdogs still stop them).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import Any, TextIO

from bench_tui.events import (
    EngineCrashed,
    EngineReady,
    EngineStarting,
    Event,
    PlanReady,
    PointFinished,
    PointStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    RunWarning,
    encode,
)
from bench_tui.runner.orchestration.outcome import run_outcome

EXIT = {"completed": 0, "failed": 1, "aborted": 130}  # by run status alone; run_outcome looks at the points


def _fmt(v: float | None, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def _eta(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


class ProgressPrinter:
    """Turns events into short lines. ETA = elapsed per finished measured request x requests left."""

    def __init__(self, out: TextIO, *, total_points: int, done_points: int, est_requests: int) -> None:
        self.out = out
        self.total = total_points
        self.done = done_points
        self.est_requests = est_requests
        self.requests_done = 0
        self.t0 = time.monotonic()
        self.current = ""
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def eta(self) -> str:
        if not self.requests_done or not self.est_requests:
            return "?"
        left = max(0, self.est_requests - self.requests_done)
        return _eta((time.monotonic() - self.t0) / self.requests_done * left)

    def __call__(self, ev: Event) -> None:
        with self._lock:
            self._handle(ev)

    def _handle(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            self.line(f"run {ev.run_id}{' (resumed)' if ev.resumed else ''}: {ev.spec_name} -> {ev.run_dir}")
        elif isinstance(ev, PlanReady):
            self.line(f"plan: {len(ev.points)} points, about {ev.estimated_requests} requests")
        elif isinstance(ev, EngineStarting):
            self.line(f"engine {ev.engine}.{ev.variant}: starting ({' '.join(ev.command)[:200]})")
        elif isinstance(ev, EngineReady):
            self.line(f"engine {ev.engine}.{ev.variant}: ready in {ev.startup_s:.1f}s, model {ev.model_id}"
                      + (f", {ev.version}" if ev.version else ""))
        elif isinstance(ev, EngineCrashed):
            tail = " | ".join(ev.log_tail[-3:])
            self.line(f"engine {ev.engine}.{ev.variant}: CRASHED (rc={ev.returncode})"
                      f"{', restarting' if ev.will_restart else ''}: {tail[:300]}")
        elif isinstance(ev, PointStarted):
            self.current = ev.point_id
            self.line(f"[{self.done}/{self.total}] {ev.point_id} ... (ETA {self.eta()})")
        elif isinstance(ev, RequestFinished):
            if not ev.warmup:
                self.requests_done += 1
        elif isinstance(ev, PointFinished):
            if ev.status != "skipped":
                self.done += 1
            s = ev.summary
            parts = [f"[{self.done}/{self.total}] {ev.point_id}: {ev.status}"]
            if s.requests:
                parts.append(f"{s.ok}/{s.requests} ok")
            if s.eff_tg_tps.median is not None:
                parts.append(f"eff tg {_fmt(s.eff_tg_tps.median)} t/s")
            if s.ttft_ms.median is not None:
                parts.append(f"TTFT med {_fmt(s.ttft_ms.median, '.0f')} ms")
            if s.decode_tps.median is not None:
                parts.append(f"decode {_fmt(s.decode_tps.median)} t/s")
            quality = s.extra.get("quality") if isinstance(s.extra, dict) else None
            if isinstance(quality, int | float):
                parts.append(f"quality {quality:.2f}")
            if ev.flags:
                parts.append("flags: " + ", ".join(ev.flags))
            self.line("  ".join(parts))
        elif isinstance(ev, RunWarning):
            if ev.code not in ("degraded", "client-limited", "token-disagreement", "server-disagrees"):
                self.line(f"warning [{ev.code}] {ev.message}")
        elif isinstance(ev, RunFinished):
            msg = f" ({ev.message})" if ev.message else ""
            self.line(f"run {ev.status}: {ev.points_done}/{ev.points_total} points{msg}")


class JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lock = threading.Lock()

    def __call__(self, ev: Event) -> None:
        data = encode(ev).decode()
        with self._lock:
            self.out.write(data + "\n")
            self.out.flush()


def run_headless(handle: Any, json_lines: bool = False, *, out: TextIO | None = None,
                 fail_on: list[str] | None = None) -> int:
    out = out or sys.stdout
    if json_lines:
        handle.subscribe(JsonPrinter(out))
    else:
        handle.subscribe(ProgressPrinter(out, total_points=handle.points_total, done_points=len(handle.done),
                                         est_requests=handle.estimated_requests))
    interrupted = {"n": 0}

    def on_signal(signum: int, frame: Any) -> None:
        interrupted["n"] += 1
        if interrupted["n"] == 1:
            sys.stderr.write(f"\ninterrupted ({signal.Signals(signum).name}): aborting the run cleanly (Ctrl-C again to force)\n")
            handle.control.abort()
        elif interrupted["n"] == 2:
            sys.stderr.write("\nforcing: engines are killed now; the record and the report are still written "
                             "(Ctrl-C once more to leave at once)\n")
            force = getattr(handle.control, "force", None)
            if force is not None:
                force()
            else:
                raise KeyboardInterrupt
        else:
            raise KeyboardInterrupt

    in_main = threading.current_thread() is threading.main_thread()
    # SIGTERM (a CI timeout, `kill`) and SIGHUP (the terminal closed) abort the same way, so the engines
    # are stopped and every record is kept instead of leaving engine processes behind
    caught = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    olds: dict[int, Any] = {}
    if in_main:
        olds = {sig: signal.signal(sig, on_signal) for sig in caught}
    try:
        handle.start()
        while True:
            status = handle.wait(0.5)
            if status != "running":
                break
    except KeyboardInterrupt:
        return 130
    finally:
        for sig, prev in olds.items():
            if prev is not None:  # None: the handler was not installed from Python
                signal.signal(sig, prev)
    if handle.error:
        sys.stderr.write(handle.error)
    if getattr(handle, "report_error", ""):
        sys.stderr.write("warning: " + handle.report_error + "\n")
    code, why = run_outcome(handle.run_dir, status, fail_on or ())
    if code == 1 and why:
        sys.stderr.write(f"exit 1: {why}\n")
    return code

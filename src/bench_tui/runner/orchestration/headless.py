"""`--no-tui`: progress lines for people, or one JSON object per event with `--json`. No Textual here.

Exit codes (runner.outcome): 0 every point ok, 1 a point failed, degraded, skipped or flagged (``fail_on``),
130 interrupted. The first Ctrl-C (or SIGTERM / SIGHUP) aborts the run cleanly: in-flight requests are
cancelled and recorded, engines are stopped, RunFinished and the report are written, the run directory stays
resumable. A second one forces: the engines are killed at once (no grace period), and the record and the
report are still written. Only a third leaves without waiting (the engines' watchdogs still stop them).
"""

from __future__ import annotations

import shlex
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
    ScenarioGraded,
    encode,
)
from bench_tui.runner.orchestration.outcome import run_outcome
from bench_tui.runner.orchestration.planner import duration_text

EXIT = {"completed": 0, "failed": 1, "aborted": 130}  # by run status alone; run_outcome looks at the points


def _fmt(v: float | None, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


COMMAND_WIDTH = 200
DEFAULT_START_S = 30.0  # assumed engine start before one was measured (ETA only)


def command_text(argv: list[str], width: int = COMMAND_WIDTH) -> str:
    """An engine command for one line: whole arguments only, cut before a flag, never inside one."""
    words = [shlex.quote(a) for a in argv]
    text = " ".join(words)
    if len(text) <= width:
        return text
    kept: list[str] = []
    cut = 0  # number of words kept at the last flag boundary that fits
    length = 0
    for i, w in enumerate(words):
        if w.startswith("-") and length <= width:
            cut = i
        length += len(w) + (1 if kept else 0)
        kept.append(w)
        if length > width:
            break
    cut = cut or 1
    return " ".join(words[:cut]) + f" … (+{len(words) - cut} more arguments)"


class ProgressPrinter:
    """Turns events into short lines.

    ETA = (time measuring so far, engine starts excluded) / finished measured requests x requests left
    + engine starts left x the mean measured start (``DEFAULT_START_S`` before any): engine starts no
    longer inflate the per-request rate, so the estimate does not jump after each start.
    """

    def __init__(
        self,
        out: TextIO,
        *,
        total_points: int,
        done_points: int,
        est_requests: int,
        clock: Any = time.monotonic,
    ) -> None:
        self.out = out
        self.total = total_points
        self.done = done_points
        self.est_requests = est_requests
        self.requests_done = 0
        self.clock = clock
        self.t0 = clock()
        self.current = ""
        self._lock = threading.Lock()
        # engine sessions (engine.variant, session) with points that have not started yet, in plan order
        self.sessions_left: list[tuple[str, int]] = []
        self.starts: list[float] = []  # measured engine start times (s)
        self.starting_since: float | None = None
        self.start_time = 0.0  # wall time spent in engine starts
        self.graded: dict[str, list[int | None]] = {}  # point id -> points per scenario (None: not graded)

    def line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def eta_seconds(self) -> float | None:
        if not self.requests_done or not self.est_requests:
            return None
        now = self.clock()
        in_start = self.start_time + (now - self.starting_since if self.starting_since is not None else 0.0)
        busy = max(0.0, now - self.t0 - in_start)
        left = max(0, self.est_requests - self.requests_done)
        start_s = sum(self.starts) / len(self.starts) if self.starts else DEFAULT_START_S
        pending_start = 0.0
        if self.starting_since is not None:  # the engine starting now: the rest of a typical start
            pending_start = max(0.0, start_s - (now - self.starting_since))
        return float(busy / self.requests_done * left + len(self.sessions_left) * start_s + pending_start)

    def eta(self) -> str:
        s = self.eta_seconds()
        return "?" if s is None else duration_text(s)

    def __call__(self, ev: Event) -> None:
        with self._lock:
            self._handle(ev)

    def _handle(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            self.line(f"run {ev.run_id}{' (resumed)' if ev.resumed else ''}: {ev.spec_name} -> {ev.run_dir}")
        elif isinstance(ev, PlanReady):
            self.sessions_left = list(
                dict.fromkeys((f"{p.engine}.{p.variant}", p.session) for p in ev.points)
            )
            self.line(f"plan: {len(ev.points)} points, about {ev.estimated_requests} requests")
        elif isinstance(ev, EngineStarting):
            key = f"{ev.engine}.{ev.variant}"
            started = next((s for s in self.sessions_left if s[0] == key), None)
            if started is not None:  # the next session of this variant (each session starts it once)
                self.sessions_left.remove(started)
            self.starting_since = self.clock()
            self.line(f"engine {ev.engine}.{ev.variant}: starting ({command_text(ev.command)})")
        elif isinstance(ev, EngineReady):
            if self.starting_since is not None:
                self.start_time += self.clock() - self.starting_since
                self.starting_since = None
            if ev.startup_s:
                self.starts.append(ev.startup_s)
            self.line(
                f"engine {ev.engine}.{ev.variant}: ready in {ev.startup_s:.1f}s, model {ev.model_id}"
                + (f", {ev.version}" if ev.version else "")
            )
        elif isinstance(ev, EngineCrashed):
            tail = " | ".join(ev.log_tail[-3:])
            self.line(
                f"engine {ev.engine}.{ev.variant}: CRASHED (rc={ev.returncode})"
                f"{', restarting' if ev.will_restart else ''}: {tail[:300]}"
            )
        elif isinstance(ev, PointStarted):
            self.current = ev.point_id
            self.line(f"[{self.done}/{self.total}] {ev.point_id} ... (ETA {self.eta()})")
        elif isinstance(ev, RequestFinished):
            if not ev.warmup:
                self.requests_done += 1
        elif isinstance(ev, ScenarioGraded):
            self.graded.setdefault(ev.point_id, []).append(ev.points)
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
            graded = self.graded.pop(ev.point_id, [])
            pts = [p for p in graded if p is not None]
            if (
                pts
            ):  # a scenario point: its raw score as graded during the run (overrides apply in the report)
                ungraded = len(graded) - len(pts)
                parts.append(
                    f"score {100.0 * sum(pts) / (2 * len(pts)):.1f}% raw ({sum(p == 2 for p in pts)} pass, "
                    f"{sum(p == 1 for p in pts)} partial, {sum(p == 0 for p in pts)} fail"
                    + (f", {ungraded} not graded" if ungraded else "")
                    + ")"
                )
            elif graded:
                parts.append(f"score - ({len(graded)} scenario(s), none graded)")
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


def run_headless(
    handle: Any, json_lines: bool = False, *, out: TextIO | None = None, fail_on: list[str] | None = None
) -> int:
    out = out or sys.stdout
    if json_lines:
        handle.subscribe(JsonPrinter(out))
    else:
        handle.subscribe(
            ProgressPrinter(
                out,
                total_points=handle.points_total,
                done_points=len(handle.done),
                est_requests=handle.estimated_requests,
            )
        )
    interrupted = {"n": 0}

    def on_signal(signum: int, frame: Any) -> None:
        interrupted["n"] += 1
        if interrupted["n"] == 1:
            sys.stderr.write(
                f"\ninterrupted ({signal.Signals(signum).name}): aborting the run cleanly (Ctrl-C again to force)\n"
            )
            handle.control.abort()
        elif interrupted["n"] == 2:
            sys.stderr.write(
                "\nforcing: engines are killed now; the record and the report are still written "
                "(Ctrl-C once more to leave at once)\n"
            )
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

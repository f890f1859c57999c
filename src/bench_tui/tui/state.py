"""What the TUI knows about a run, as a pure function of the event stream (no widgets, no Textual).

The app drains the runner's events in batches and calls ``RunState.apply_batch(events)``; the returned set
names the parts that changed so each widget refreshes at most once per batch. Everything here is
deterministic given the events (times come from the events' ``ts``, never from the clock), so replays and
snapshot tests render the same thing every time.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench_tui.catalogue import eff_tg_tps
from bench_tui.events import (
    EngineCrashed,
    EngineLog,
    EngineReady,
    EngineStarting,
    EngineStats,
    EngineStopped,
    Event,
    PlanReady,
    PointFinished,
    PointStarted,
    RequestFinished,
    RequestFirstToken,
    RequestProgress,
    RequestStarted,
    RunFinished,
    RunStarted,
    RunWarning,
    ScenarioGraded,
    ScenarioTurn,
    SessionsParams,
    SessionTurn,
    ThroughputParams,
    attempt_of,
)
from bench_tui.runner.view import EngineView, PointView, RunView
from bench_tui.runner.workloads.sessions import TurnResult, meets, request_values

# parts a batch can touch (widgets subscribe to these names)
PARTS = ("header", "tree", "requests", "series", "engines", "log", "warnings", "results", "sessions")

STATUS_ICONS = {
    "pending": "·",
    "running": "▶",
    "ok": "✔",
    "degraded": "!",
    "failed": "✘",
    "skipped": "»",
}

MAX_LOG = 500
MAX_WARNINGS = 200
MAX_DONE_REQUESTS = 40
SERIES_SECONDS = 120


def collapse(events: Iterable[Event]) -> list[Event]:
    """Drop every RequestProgress that a later one of the same request supersedes (tokens are cumulative)."""
    evs = list(events)
    last: dict[str, int] = {}
    for i, ev in enumerate(evs):
        if isinstance(ev, RequestProgress):
            last[ev.request_id] = i
    if not last:
        return evs
    return [ev for i, ev in enumerate(evs) if not isinstance(ev, RequestProgress) or last[ev.request_id] == i]


def icon(status: str) -> str:
    return STATUS_ICONS.get(status, "?")


@dataclass
class RequestState:
    request_id: str
    point_id: str
    state: str = "prefill"  # queued | prefill | decoding | done | failed
    started_ts: float = 0.0
    ttft_ms: float | None = None
    tokens: int = 0
    reasoning_tokens: int = 0
    content_tokens: int = 0
    tool_tokens: int = 0
    elapsed_ms: float = 0.0
    prompt_tokens: int | None = None
    max_tokens: int | None = None

    @property
    def tps(self) -> float | None:
        """Decode rate so far: tokens after the first over the time since the first token."""
        if self.ttft_ms is None or self.tokens < 2:
            return None
        span = self.elapsed_ms - self.ttft_ms
        if span <= 0:
            return None
        return (self.tokens - 1) / (span / 1000.0)


class Series:
    """Per-second buckets keyed by the integer second of the events' ``ts``; bounded."""

    def __init__(self, seconds: int = SERIES_SECONDS) -> None:
        self.seconds = seconds
        self.sums: OrderedDict[int, float] = OrderedDict()
        self.counts: OrderedDict[int, int] = OrderedDict()

    def add(self, ts: float, value: float) -> None:
        sec = int(ts)
        self.sums[sec] = self.sums.get(sec, 0.0) + value
        self.counts[sec] = self.counts.get(sec, 0) + 1
        while len(self.sums) > self.seconds:
            k = next(iter(self.sums))
            del self.sums[k]
            del self.counts[k]

    def last_second(self) -> int | None:
        return max(self.sums) if self.sums else None

    def totals(self, width: int = 60) -> list[float]:
        """Sum per second for the last ``width`` seconds (gaps are 0), oldest first."""
        end = self.last_second()
        if end is None:
            return []
        start = max(end - width + 1, min(self.sums))
        return [self.sums.get(s, 0.0) for s in range(start, end + 1)]

    def means(self, width: int = 60) -> list[float]:
        """Mean per second (gaps carry the previous mean so the line does not drop to 0)."""
        end = self.last_second()
        if end is None:
            return []
        start = max(end - width + 1, min(self.sums))
        out: list[float] = []
        prev = 0.0
        for s in range(start, end + 1):
            if s in self.sums:
                prev = self.sums[s] / self.counts[s]
            out.append(prev)
        return out


@dataclass
class SessionsLive:
    """A sessions point as it runs (from RequestStarted / RequestFinished / SessionTurn events): sessions
    active (a request in flight), thinking (between turns), done; turns, context, the engine's cache hit and
    SLO attainment so far; offered vs achieved start rate."""

    point_id: str
    planned: int = 0  # sessions per trial (a max-rate search runs several trials)
    turns_per_session: int | None = None  # known for the synthetic source
    offered_rate: float | None = None
    slo: dict[str, dict[str, float]] = field(default_factory=dict)
    trial: int = 0
    active: set[tuple[int, int]] = field(default_factory=set)  # (trial, session)
    thinking: set[tuple[int, int]] = field(default_factory=set)
    done: set[tuple[int, int]] = field(default_factory=set)
    started: set[tuple[int, int]] = field(default_factory=set)
    turns_done: int = 0
    last_turn: int = 0
    context_last: int | None = None
    cached: int = 0
    prompt: int = 0
    slo_met: int = 0
    slo_judged: int = 0
    first_sends: list[float] = field(default_factory=list)  # ns of the trial's first sends (for the rate)

    @property
    def cache_hit(self) -> float | None:
        return self.cached / self.prompt if self.prompt else None

    @property
    def attainment(self) -> float | None:
        return self.slo_met / self.slo_judged if self.slo_judged and self.slo else None

    @property
    def achieved_rate(self) -> float | None:
        f = self.first_sends
        return (len(f) - 1) / ((max(f) - min(f)) / 1e9) if len(f) > 1 and max(f) > min(f) else None


def session_key(request_id: str) -> tuple[int, int] | None:
    """(trial, session) from a sessions request id ``…:x{trial}.s{session}.t{turn}`` (None for others)."""
    tag = request_id.rpartition(":")[2]
    parts = tag.split(".")
    if len(parts) != 3 or not parts[0].startswith("x") or not parts[1].startswith("s"):
        return None
    try:
        return int(parts[0][1:]), int(parts[1][1:])
    except ValueError:
        return None


@dataclass
class Warning_:
    code: str
    message: str
    point_id: str | None = None


class RunState:
    """The run as ``runner.view.RunView`` folds it (points, engines, scenarios), plus what only the screen
    needs: requests in flight, per-second series, the log, recent warnings and scenario turns."""

    def __init__(self) -> None:
        self.view = RunView()
        self._run_dir = ""
        self.paused = False
        self.requests: dict[str, RequestState] = {}
        self.done_requests: deque[RequestState] = deque(maxlen=MAX_DONE_REQUESTS)
        self.requests_finished = 0
        self.requests_failed = 0
        self.tok_series = Series()
        self.ttft_series = Series()
        self.log: deque[str] = deque(maxlen=MAX_LOG)
        self.log_seq = 0  # total lines ever appended (the log pane writes only the new ones)
        self.warnings: deque[Warning_] = deque(maxlen=MAX_WARNINGS)
        self.turns: dict[tuple[str, str, int], list[ScenarioTurn]] = {}
        self.events_seen = 0
        self.last_ts = 0.0
        # measured eff tg t/s per point: (attempt, request id, value), for the results' Δ verdicts
        self.eff_values: dict[str, list[tuple[int, str, float]]] = {}
        self.noise_threshold_pct: float | None = None  # the spec's report.noise_threshold_pct when known
        self.sessions: dict[str, SessionsLive] = {}  # sessions points that have started, by point id
        self._session_records: dict[str, RequestFinished] = {}  # finished, waiting for their SessionTurn

    # ----------------------------------------------------------------------------------------- queries

    @property
    def points(self) -> dict[str, PointView]:
        return self.view.points

    @property
    def order(self) -> list[str]:
        return list(self.view.points)

    @property
    def engines(self) -> dict[str, EngineView]:
        return self.view.engines

    @property
    def graded(self) -> list[ScenarioGraded]:
        return self.view.scenarios

    @property
    def current_point(self) -> str | None:
        return self.view.current_point

    @property
    def estimated_requests(self) -> int:
        return self.view.estimated_requests

    @property
    def _session(self) -> RunStarted | None:
        return self.view.sessions[-1] if self.view.sessions else None

    @property
    def run_id(self) -> str:
        return self.view.run.run_id if self.view.run else ""

    @property
    def spec_name(self) -> str:
        return self.view.run.spec_name if self.view.run else ""

    @property
    def spec_path(self) -> str:
        return self._session.spec_path if self._session else ""

    @property
    def run_dir(self) -> str:
        return self._run_dir or (self._session.run_dir if self._session else "")

    @run_dir.setter
    def run_dir(
        self, value: str
    ) -> None:  # where the run is now (a watched copy, a bundle unpacked elsewhere)
        self._run_dir = value

    @property
    def resumed(self) -> bool:
        return bool(self._session and self._session.resumed)

    @property
    def status(self) -> str:
        """waiting | running | completed | aborted | failed"""
        if self.view.finished is not None:
            return self.view.finished.status
        return "running" if self.view.sessions else "waiting"

    @property
    def finish_message(self) -> str:
        return self.view.finished.message if self.view.finished else ""

    @property
    def points_total(self) -> int:
        return self.view.points_total

    @property
    def points_done(self) -> int:
        return self.view.points_done

    def tree(self) -> dict[str, dict[str, dict[str, list[PointView]]]]:
        """engine -> variant -> workload -> points, in plan order."""
        out: dict[str, dict[str, dict[str, list[PointView]]]] = {}
        for pid in self.order:
            ps = self.points[pid]
            p = ps.point
            out.setdefault(p.engine, {}).setdefault(p.variant, {}).setdefault(p.workload, []).append(ps)
        return out

    def engine_of(self, point_id: str) -> str | None:
        ps = self.points.get(point_id)
        return f"{ps.point.engine}.{ps.point.variant}" if ps else None

    def in_flight(self) -> list[RequestState]:
        """Live requests (oldest first) followed by the most recently finished ones (newest first)."""
        live = sorted(self.requests.values(), key=lambda r: (r.started_ts, r.request_id))
        return live + list(reversed(self.done_requests))

    def eff_groups(self, point_id: str) -> list[list[float]]:
        """eff tg t/s of a point's measured requests (its latest attempt), grouped by repetition."""
        vals = self.eff_values.get(point_id, [])
        if not vals:
            return []
        last = max(a for a, _, _ in vals)
        groups: dict[str, list[float]] = {}
        for a, rid, v in vals:
            if a == last:
                tag = rid.rpartition(":")[2]
                groups.setdefault(tag.split(".", 1)[0], []).append(v)
        return list(groups.values())

    def throughput_rows(self) -> list[tuple[PointView, ThroughputParams]]:
        return [
            (ps, prm)
            for pid in self.order
            if isinstance(prm := (ps := self.points[pid]).point.params, ThroughputParams)
            and ps.summary is not None
        ]

    # ----------------------------------------------------------------------------------------- updates

    def apply_batch(self, events: Iterable[Event]) -> set[str]:
        dirty: set[str] = set()
        for ev in collapse(events):
            dirty |= self.apply(ev)
        if dirty & {"requests"}:
            self._mark_queued()
        return dirty

    def _mark_queued(self) -> None:
        # engines serve FIFO: when an engine says N requests wait, the N newest not-yet-answered ones queue
        by_engine: dict[str, list[RequestState]] = {}
        for r in self.requests.values():
            if r.state in ("queued", "prefill"):
                key = self.engine_of(r.point_id) or ""
                by_engine.setdefault(key, []).append(r)
        for key, reqs in by_engine.items():
            eng = self.engines.get(key)
            waiting = int(eng.stats.waiting or 0) if eng and eng.stats else 0
            reqs.sort(key=lambda r: (r.started_ts, r.request_id))
            cut = len(reqs) - min(waiting, len(reqs))
            for i, r in enumerate(reqs):
                r.state = "prefill" if i < cut else "queued"

    def _live(self, point_id: str) -> SessionsLive | None:
        live = self.sessions.get(point_id)
        if live is None:
            pv = self.points.get(point_id)
            prm = pv.params if pv is not None else None
            if not isinstance(prm, SessionsParams):
                return None
            live = self.sessions[point_id] = SessionsLive(
                point_id,
                planned=prm.sessions,
                turns_per_session=prm.turns if prm.source == "synthetic" else None,
                offered_rate=prm.rate,
                slo=prm.slo,
            )
        return live

    def _sessions(self, ev: Event) -> set[str]:
        """Fold the events of sessions points into their SessionsLive."""
        if isinstance(ev, RequestStarted | RequestFinished):
            rid = ev.request_id if isinstance(ev, RequestStarted) else ev.record.request_id
            pid = ev.point_id if isinstance(ev, RequestStarted) else ev.record.point_id
            key = session_key(rid)
            live = self._live(pid) if key is not None else None
            if live is None or key is None:
                return set()
            if isinstance(ev, RequestStarted):
                if key[0] != live.trial:  # the max-rate search moved on to its next rate
                    live.trial, live.first_sends = key[0], []
                    for group in (live.active, live.thinking, live.done, live.started):
                        group.clear()
                live.active.add(key)
                live.thinking.discard(key)
                live.started.add(key)
            elif not ev.warmup:
                self._session_records[rid] = ev
            return {"sessions"}
        if isinstance(ev, SessionTurn):
            live = self._live(ev.point_id)
            if live is None:
                return set()
            key = (ev.trial, ev.session)
            live.active.discard(key)
            (live.done if ev.last else live.thinking).add(key)
            live.turns_done += 1
            live.last_turn = max(live.last_turn, ev.turn)
            live.context_last = ev.context_tokens if ev.context_tokens is not None else live.context_last
            fin = self._session_records.pop(ev.request_id, None)
            if fin is not None:
                rec = fin.record
                if rec.cached_tokens is not None and rec.prompt_tokens:
                    live.cached += rec.cached_tokens
                    live.prompt += rec.prompt_tokens
                if ev.turn == 1 and rec.t_send_ns and ev.trial == live.trial:
                    live.first_sends.append(float(rec.t_send_ns))
                if live.slo:
                    live.slo_judged += 1
                    turn = TurnResult(ev.session, ev.turn, ev.t_scheduled_ns, rec)
                    live.slo_met += meets(request_values(turn), live.slo)
            return {"sessions"}
        return set()

    def apply(self, ev: Event) -> set[str]:  # noqa: C901 - one branch per event type
        self.events_seen += 1
        self.last_ts = max(self.last_ts, ev.ts)
        self.view.apply(ev)
        live = self._sessions(ev) if isinstance(ev, RequestStarted | RequestFinished | SessionTurn) else set()
        if live and isinstance(ev, SessionTurn):
            return live
        if isinstance(ev, RequestProgress):
            r = self.requests.get(ev.request_id)
            if r is None:
                return set()
            delta = ev.tokens - r.tokens
            if delta > 0:
                self.tok_series.add(ev.ts, delta)
            r.tokens = max(r.tokens, ev.tokens)
            r.reasoning_tokens = ev.reasoning_tokens
            r.content_tokens = ev.content_tokens
            r.tool_tokens = ev.tool_tokens
            r.elapsed_ms = ev.elapsed_ms
            if r.tokens > 0:
                r.state = "decoding"
            return {"requests", "series"}
        if isinstance(ev, RequestStarted):
            self.requests[ev.request_id] = RequestState(
                ev.request_id,
                ev.point_id,
                started_ts=ev.ts,
                prompt_tokens=ev.prompt_tokens,
                max_tokens=ev.max_tokens,
            )
            return {"requests"} | live
        if isinstance(ev, RequestFirstToken):
            r = self.requests.get(ev.request_id)
            if r is not None:
                r.ttft_ms = ev.ttft_ms
                r.state = "decoding"
                r.elapsed_ms = max(r.elapsed_ms, ev.ttft_ms)
                if r.tokens == 0:
                    r.tokens = 1
                    r.content_tokens = 1 if ev.channel in ("content", "text") else r.content_tokens
                    r.reasoning_tokens = 1 if ev.channel == "reasoning" else r.reasoning_tokens
                    r.tool_tokens = 1 if ev.channel == "tool" else r.tool_tokens
                    self.tok_series.add(ev.ts, 1)
            self.ttft_series.add(ev.ts, ev.ttft_ms)
            return {"requests", "series"}
        if isinstance(ev, RequestFinished):
            rec = ev.record
            r = self.requests.pop(rec.request_id, None)
            if r is None:
                r = RequestState(rec.request_id, rec.point_id, started_ts=ev.ts)
            out = rec.output_tokens if rec.output_tokens is not None else rec.client_output_tokens
            if out > r.tokens:
                self.tok_series.add(ev.ts, out - r.tokens)
                r.tokens = out
            by_channel = {"content": 0, "reasoning": 0, "tool": 0, "text": 0}
            for ch in rec.chunks:
                by_channel[ch.channel] = by_channel.get(ch.channel, 0) + ch.tokens
            if rec.chunks:
                r.content_tokens = by_channel["content"] + by_channel["text"]
                r.reasoning_tokens = by_channel["reasoning"]
                r.tool_tokens = by_channel["tool"]
            if rec.t_first_token_ns is not None and rec.t_send_ns:
                r.ttft_ms = (rec.t_first_token_ns - rec.t_send_ns) / 1e6
            if rec.t_done_ns is not None and rec.t_send_ns:
                r.elapsed_ms = (rec.t_done_ns - rec.t_send_ns) / 1e6
            if rec.t_last_token_ns is not None and rec.t_first_token_ns is not None and r.tokens >= 2:
                span = (rec.t_last_token_ns - rec.t_first_token_ns) / 1e6
                if span > 0 and r.ttft_ms is not None:
                    r.elapsed_ms = r.ttft_ms + span  # so tps = decode rate over the decode span
            r.state = "done" if rec.ok else "failed"
            self.done_requests.append(r)
            if not ev.warmup and rec.ok:
                eff = eff_tg_tps(rec)
                if eff is not None:
                    self.eff_values.setdefault(rec.point_id, []).append(
                        (attempt_of(rec.request_id) or 1, rec.request_id, eff)
                    )
            if not ev.warmup:
                self.requests_finished += 1
                self.requests_failed += 0 if rec.ok else 1
            return {"requests", "series", "header"} | live
        if isinstance(ev, EngineStats):
            return {"engines", "requests"}
        if isinstance(ev, EngineLog):
            self._log(f"[{ev.engine}.{ev.variant}] {ev.line}")
            return {"log"}
        if isinstance(ev, PointStarted):
            return {"tree", "header"}
        if isinstance(ev, PointFinished):
            if ev.point_id not in self.points:  # only a torn log lacks the plan: nothing to show it under
                return set()
            # requests of a finished point are no longer in flight
            for rid in [rid for rid, r in self.requests.items() if r.point_id == ev.point_id]:
                r = self.requests.pop(rid)
                r.state = "failed" if ev.status in ("failed", "skipped") else "done"
                self.done_requests.append(r)
            return {"tree", "header", "results", "requests"}
        if isinstance(ev, RunWarning):
            self.warnings.append(Warning_(ev.code, ev.message, ev.point_id))
            return {"warnings"}
        if isinstance(ev, ScenarioTurn):
            self.turns.setdefault((ev.point_id, ev.scenario_id, ev.trial), []).append(ev)
            return set()
        if isinstance(ev, ScenarioGraded):
            return {"results"}
        if isinstance(ev, PlanReady):  # a resumed run plans again: the view keeps what finished before
            return {"tree", "header"}
        if isinstance(ev, RunStarted):
            return {"header"}
        if isinstance(ev, RunFinished):
            for rid in list(self.requests):
                r = self.requests.pop(rid)
                r.state = "failed"
                self.done_requests.append(r)
            if ev.message:
                self._log(f"run {ev.status}: {ev.message}")
            return {"header", "requests", "tree", "log"}
        if isinstance(ev, EngineStarting):
            eng = self.engines[f"{ev.engine}.{ev.variant}"]
            self._log(f"[{eng.key}] starting: {' '.join(ev.command)}")
            return {"engines", "log"}
        if isinstance(ev, EngineReady):
            eng = self.engines[f"{ev.engine}.{ev.variant}"]
            self._log(f"[{eng.key}] ready in {ev.startup_s:.1f}s at {ev.base_url} (model {ev.model_id})")
            return {"engines", "log"}
        if isinstance(ev, EngineStopped):
            eng = self.engines[f"{ev.engine}.{ev.variant}"]
            self._log(f"[{eng.key}] stopped{': ' + ev.reason if ev.reason else ''}")
            return {"engines", "log"}
        if isinstance(ev, EngineCrashed):
            eng = self.engines[f"{ev.engine}.{ev.variant}"]
            self._log(
                f"[{eng.key}] CRASHED (rc={ev.returncode})" + (" - restarting" if ev.will_restart else "")
            )
            for line in ev.log_tail[-10:]:
                self._log(f"[{eng.key}]   {line}")
            self.warnings.append(Warning_("engine", f"{eng.key} crashed (rc={ev.returncode})", ev.point_id))
            return {"engines", "log", "warnings"}
        return set()

    def _log(self, line: str) -> None:
        self.log.append(line)
        self.log_seq += 1

"""The measuring loop: engine variants one after another, their points in plan order.

Runs inside the runner thread's own asyncio loop (session.RunHandle), never the UI's. For each
(engine, variant) group of points: make the adapter, start it and wait until ready (the adapter emits
EngineStarting / EngineReady), a short engine warm-up (first requests after a start are several times
slower), the points, stop; the next variant gets a fresh engine.

Per point: PointStarted, then the workload's runner (sweep / spec_accept / scenarios) with a watcher task
beside it that samples EngineStats about once a second and checks that the engine is alive and whether the
user skipped or aborted; then PointFinished, carrying the machine's conditions around the point (a reading
before and after it and the spread of those taken while it ran, by ``envinfo.conditions``' sampler thread). If the engine dies during a point, the in-flight requests are
recorded as failed (``error_kind = engine_crash``), the point is failed with the engine's log tail, the
engine is restarted once and the run goes on. On abort the in-flight requests are cancelled (and recorded),
the point gets no PointFinished (a resume reruns it) and the run ends with RunFinished(status=aborted).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_tui.engine_adapters import registry
from bench_tui.envinfo.conditions import ConditionsSampler
from bench_tui.events import (
    Conditions,
    EngineCrashed,
    EngineStats,
    Event,
    MetricsScraped,
    PlanPoint,
    PointFinished,
    PointStarted,
    PointSummary,
    RequestFinished,
    RequestFirstToken,
    RequestProgress,
    RequestStarted,
    RunWarning,
    request_id,
    stored_record,
)
from bench_tui.runner.orchestration.context import slot_context
from bench_tui.runner.orchestration.store import RunPaths, write_env
from bench_tui.runner.workloads.metrics import StarvationWatch
from bench_tui.runner.workloads.sweep import PointEnv, PointResult, payload

Emit = Callable[[Event], None]
AdapterFactory = Callable[..., Any]

WATCH_INTERVAL_S = 0.25
STATS_INTERVAL_S = 1.0
DEFAULT_IDLE_S = 180.0  # the schema's idle_timeout default (spec.schema)


class RunControl:
    """pause / resume / skip_point / abort, callable from any thread (the TUI, a signal handler)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paused = False
        self._aborted = False
        self._skips = 0
        self._forced = False
        self._on_force: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: Callable[[str], None] | None = None

    def attach(self, loop: asyncio.AbstractEventLoop, wake: Callable[[str], None]) -> None:
        with self._lock:
            self._loop, self._wake = loop, wake

    def detach(self) -> None:
        with self._lock:
            self._loop, self._wake = None, None

    def _signal(self, what: str) -> None:
        with self._lock:
            loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(wake, what)

    def pause(self) -> None:
        with self._lock:
            self._paused = True

    def resume(self) -> None:
        with self._lock:
            self._paused = False

    def skip_point(self) -> None:
        with self._lock:
            self._skips += 1
        self._signal("skipped")

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            self._paused = False
        self._signal("aborted")

    def force(self) -> None:
        """Abort, and stop the engines *now* (SIGKILL, no grace): the second Ctrl-C. The run still ends the
        normal way (RunFinished, the report); only the waiting is skipped."""
        with self._lock:
            self._forced = True
            self._aborted = True
            self._paused = False
            callbacks = list(self._on_force)
        self._signal("aborted")
        for fn in callbacks:
            with contextlib.suppress(Exception):
                fn()

    def on_force(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` (from whichever thread forces) on :meth:`force`; at once if that already happened."""
        with self._lock:
            self._on_force.append(fn)
            forced = self._forced
        if forced:
            with contextlib.suppress(Exception):
                fn()

    @property
    def forced(self) -> bool:
        return self._forced

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def aborted(self) -> bool:
        return self._aborted

    def take_skip(self) -> bool:
        with self._lock:
            if self._skips:
                self._skips -= 1
                return True
            return False


def group_points(points: list[PlanPoint]) -> list[tuple[tuple[str, str], list[PlanPoint]]]:
    """One group per engine session: (engine, variant) in order of first appearance of (engine, variant,
    session); points keep their plan order. Each group starts the engine once and stops it after."""
    groups: dict[tuple[str, str, int], list[PlanPoint]] = {}
    for p in points:
        groups.setdefault((p.engine, p.variant, p.session), []).append(p)
    return [((e, v), pts) for (e, v, _), pts in groups.items()]


def engine_stats(dialect: str, values: dict[str, float]) -> dict[str, float | None]:
    """Live gauges (running, waiting, kv usage) from one scrape (engine_adapters.dialects)."""
    return registry.dialect(dialect).engine_stats(values)


@dataclass
class _PointState:
    point: PlanPoint | None  # None: the engine warm-up
    client: Any = None
    reason: str | None = None  # skipped | aborted | engine_crash | stalled
    idle_s: float = DEFAULT_IDLE_S
    in_flight: int = 0  # requests started and not finished (from the point's own events)
    last_activity: float = field(default_factory=time.monotonic)  # a request started, streamed or ended

    def stop(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        if self.client is not None:
            why = {
                "engine_crash": "engine crashed",
                "skipped": "point skipped",
                "stalled": f"stalled: no token for {self.idle_s:g} s (idle_timeout)",
            }.get(reason, reason)
            self.client.abort(why, kind="stalled" if reason == "stalled" else "cancelled")
            refuse = getattr(self.client, "refuse_new", None)
            if refuse is not None:
                refuse(why)  # the point is over: later requests of it (scenario turns) do not go out

    def seen(self, ev: Event) -> None:
        """Every event of the point passes here (the measuring loop's thread): the stall clock."""
        if isinstance(ev, RequestStarted):
            self.in_flight += 1
        elif isinstance(ev, RequestFinished):
            self.in_flight = max(0, self.in_flight - 1)
        elif not isinstance(ev, RequestFirstToken | RequestProgress):
            return
        self.last_activity = time.monotonic()

    def stalled(self, now: float) -> bool:
        return self.reason is None and self.in_flight > 0 and now - self.last_activity > self.idle_s


@dataclass
class Executor:
    spec: Any  # spec.schema.Spec
    spec_dir: Path
    points: list[PlanPoint]  # to run now (already-finished ones removed)
    paths: RunPaths
    emit: Emit
    control: RunControl
    total: int = 0  # points in the whole plan
    index_of: dict[str, int] = field(default_factory=dict)  # point id -> position in the whole plan
    attempts: dict[str, int] = field(default_factory=dict)  # previous attempts per point (resume)
    done_before: int = 0
    adapter_factory: AdapterFactory | None = None
    engine_warmup: bool = True
    secrets: set[str] | None = None  # expanded secret values (never written)

    def __post_init__(self) -> None:
        self.adapters: list[Any] = []
        self.finished: dict[str, str] = {}  # point id -> status, this session
        self._state: _PointState | None = None
        self._warm_client: Any = None  # the engine warm-up's client while it runs (an abort cancels it)
        self._calib: dict[tuple[str, str], dict[str, Any]] = {}  # per engine variant: prompt counting
        self.load: Any = None  # transport.backends.LoadBackend, for the whole run
        self._load_warned = 0  # how many of the load backend's warnings were emitted
        self._starvation = StarvationWatch()
        self.conditions = ConditionsSampler()  # the machine around each point, sampled in its own thread
        self._point_conditions: dict[str, Conditions] = {}

    # ----------------------------------------------------------------------------------- control

    def _wake(self, what: str) -> None:
        if what == "aborted" and self._warm_client is not None:
            self._warm_client.abort("aborted")
        st = self._state
        if st is None:
            return
        if what == "aborted":
            st.stop("aborted")
        elif what == "skipped" and self.control.take_skip():
            st.stop("skipped")

    async def _gate(self) -> None:
        while self.control.paused and not self.control.aborted:
            await asyncio.sleep(0.1)

    # ----------------------------------------------------------------------------------- run

    async def run(self) -> str:
        self.control.attach(asyncio.get_running_loop(), self._wake)
        await asyncio.to_thread(self.conditions.start)
        try:
            if await self._start_load():
                for (engine, variant), pts in group_points(self.points):
                    if self.control.aborted:
                        break
                    await self._run_group(engine, variant, pts)
        finally:
            self.control.detach()
            await self._stop_load()
            await asyncio.to_thread(self.conditions.stop)
        if self.control.aborted:
            return "aborted"
        statuses = list(self.finished.values())
        if statuses and all(s == "failed" for s in statuses):
            return "failed"
        return "completed"

    async def _start_load(self) -> bool:
        """Start the spec's load backend (local: nothing to start); False when it cannot start."""
        from bench_tui.runner.transport.backends import make_backend

        load = getattr(self.spec, "load", None)
        name = getattr(load, "backend", "local")
        try:
            self.load = make_backend(
                name, workers=getattr(load, "workers", 1), ray_address=getattr(load, "ray_address", "local")
            )
            await self.load.start()
        except Exception as exc:  # noqa: BLE001 - Ray missing, cluster unreachable, ...
            msg = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ModuleNotFoundError) and "ray" in str(exc):
                msg = "the ray backend needs Ray: pip install 'bench-tui[ray]'"
            self.load = None
            self.emit(RunWarning(code="load", message=f"load backend {name!r} did not start: {msg}"))
            self._fail_points(
                self.points, "load-backend-failed", f"load backend {name!r} did not start: {msg}"
            )
            return False
        self._load_warnings()
        return True

    def _load_warnings(self, point_id: str | None = None) -> None:
        """The load backend's warnings not emitted yet: at its start, then after each point (a worker's
        clock re-measured at a point's start can have drifted)."""
        if self.load is None:
            return
        for w in self.load.warnings[self._load_warned :]:
            self.emit(RunWarning(code="load", message=w, point_id=point_id))
        self._load_warned = len(self.load.warnings)

    async def _stop_load(self) -> None:
        if self.load is not None and getattr(self.load, "dead", None) and self.adapters:
            self._write_env()  # env.json names the workers that died during the run
        if self.load is not None:
            with contextlib.suppress(Exception):
                await self.load.aclose()

    def _make_client(self, base_url: str, headers: dict[str, str], conc: int, timeout: float) -> Any:
        """The point's client from the run's load backend (one StreamClient when there is none)."""
        if self.load is None:
            from bench_tui.runner.transport.client import StreamClient

            return StreamClient(base_url, headers=headers, max_connections=max(4, conc + 2), timeout=timeout)
        return self.load.client(base_url, headers, max_connections=max(4, conc + 2), timeout=timeout)

    def _factory(self) -> AdapterFactory:
        if self.adapter_factory is not None:
            return self.adapter_factory
        from bench_tui.engine_adapters import make_adapter  # type: ignore[attr-defined,unused-ignore]

        return make_adapter

    def _fail_points(
        self, pts: list[PlanPoint], flag: str, message: str, log_tail: list[str] | None = None
    ) -> None:
        for p in pts:
            if self.control.aborted:
                return
            self._begin(p)
            summary = PointSummary(extra={"error": message[:2000], "log_tail": (log_tail or [])[-30:]})
            self._finish(p, "failed", summary, [flag])

    def _begin(self, p: PlanPoint) -> int:
        att = self.attempts.get(p.point_id, 0) + 1
        self.attempts[p.point_id] = att
        self.emit(PointStarted(point_id=p.point_id, index=self.index_of.get(p.point_id, 0), total=self.total))
        return att

    def _finish(self, p: PlanPoint, status: str, summary: PointSummary, flags: list[str]) -> None:
        if p.kind in ("throughput", "spec_acceptance") and status in ("ok", "degraded"):
            starved = self._starvation.check(p.engine, p.point_id, summary, p.params.concurrency)
            if starved:
                flags.append(starved)
        self.emit(
            PointFinished(
                point_id=p.point_id,
                status=status,  # type: ignore[arg-type]
                summary=summary,
                flags=flags,
                conditions=self._point_conditions.pop(p.point_id, None),
            )
        )
        self.finished[p.point_id] = status
        self._load_warnings(p.point_id)
        for f in flags:
            code = f.split(":", 1)[0]
            if code in (
                "degraded",
                "client-limited",
                "token-disagreement",
                "server-disagrees",
                "engine-crashed",
                "starved",
            ):
                self.emit(RunWarning(code=code, message=f"{p.point_id}: {f}", point_id=p.point_id))

    async def _start_engine(self, adapter: Any) -> Any:
        """start + wait_ready in worker threads; an abort meanwhile stops the engine."""
        await asyncio.to_thread(adapter.start)
        task = asyncio.ensure_future(asyncio.to_thread(adapter.wait_ready))
        while not task.done():
            await asyncio.wait({task}, timeout=0.2)
            if self.control.aborted and not task.done():
                await asyncio.to_thread(adapter.stop)
                with contextlib.suppress(Exception):
                    await task
                return None
        return task.result()

    async def _run_group(self, engine: str, variant: str, pts: list[PlanPoint]) -> None:
        from bench_tui.engine_adapters.base import EngineStartError

        espec = self.spec.engines.get(engine)
        if espec is None:
            self._fail_points(pts, "engine-start-failed", f"engine {engine!r} is not in the spec")
            return
        vspec = (espec.variants or {}).get(variant)
        try:
            adapter = self._factory()(
                engine,
                espec,
                variant,
                vspec,
                spec_dir=self.spec_dir,
                log_dir=self.paths.engines,
                emit=self.emit,
            )
        except Exception as exc:  # noqa: BLE001 - a user error in the engine section
            self.emit(RunWarning(code="engine", message=f"{engine}.{variant}: {exc}"))
            self._fail_points(pts, "engine-start-failed", str(exc))
            return
        self.adapters.append(adapter)
        kill_now = getattr(adapter, "kill_now", None)
        if kill_now is not None:
            self.control.on_force(kill_now)  # a forced stop kills the engine from the signal's thread
        try:
            try:
                info = await self._start_engine(adapter)
            except Exception as exc:  # noqa: BLE001 - EngineStartError, or an adapter bug: same outcome
                msg = str(exc) if isinstance(exc, EngineStartError) else f"{type(exc).__name__}: {exc}"
                self.emit(RunWarning(code="engine", message=f"{engine}.{variant} did not start: {msg}"))
                self._fail_points(
                    pts, "engine-start-failed", msg, getattr(exc, "log_tail", None) or _tail(adapter)
                )
                return
            if info is None:  # aborted while starting
                return
            self._write_env()
            if self.engine_warmup:
                await self._warm_engine(adapter, info, engine, variant, pts)
            restarted = False
            for i, p in enumerate(pts):
                if self.control.aborted:
                    return
                await self._gate()
                crashed = await self._run_point(p, adapter, info)
                if not crashed:
                    continue
                rest = pts[i + 1 :]
                will = not restarted and bool(rest)
                self.emit(
                    EngineCrashed(
                        engine=engine,
                        variant=variant,
                        returncode=_returncode(adapter),
                        log_tail=_tail(adapter),
                        point_id=p.point_id,
                        will_restart=will,
                    )
                )
                if not will:
                    if rest:
                        self._fail_points(
                            rest, "engine-crashed", "the engine crashed again; not restarted twice"
                        )
                    return
                restarted = True
                self._calib.pop((engine, variant), None)
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(adapter.stop)
                try:
                    info = await self._start_engine(adapter)
                except Exception as exc:  # noqa: BLE001
                    self._fail_points(
                        rest,
                        "engine-start-failed",
                        f"restart after a crash failed: {exc}",
                        getattr(exc, "log_tail", None) or _tail(adapter),
                    )
                    return
                if info is None:
                    return
                if self.engine_warmup:
                    await self._warm_engine(adapter, info, engine, variant, rest)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(adapter.stop)

    def _write_env(self) -> None:
        try:
            from bench_tui.envinfo import capture_env

            env = capture_env(self.adapters)
        except Exception:  # noqa: BLE001 - env capture is best effort
            env = {"engines": {f"{a.name}.{a.variant_name}": _safe_env_info(a) for a in self.adapters}}
        if self.load is not None:
            with contextlib.suppress(Exception):
                env["load"] = self.load.describe()
        with contextlib.suppress(OSError):
            write_env(self.paths, env, self.secrets)

    async def _warm_engine(
        self, adapter: Any, info: Any, engine: str, variant: str, pts: list[PlanPoint]
    ) -> None:
        """Two short requests after a start. Bounded by the group's request timeout (the shortest of its
        points'), so an engine that accepts requests and never answers costs seconds here, not minutes."""
        from bench_tui.runner.transport.client import StreamClient

        pid = f"{engine}.{variant}/_engine-warmup"
        dialect = getattr(adapter, "metrics_dialect", "none") or "none"
        limits = [p.params.request_timeout for p in pts]
        idles = [p.params.idle_timeout for p in pts]
        timeout = min(limits) if limits else 600.0
        tracker = _PointState(None, idle_s=min(idles) if idles else DEFAULT_IDLE_S)

        async def watch_idle() -> None:
            while True:
                await asyncio.sleep(WATCH_INTERVAL_S)
                if tracker.stalled(time.monotonic()):
                    tracker.stop("stalled")  # aborts the request; the next one is refused
                    return

        async with StreamClient(
            info.base_url, headers=adapter.headers, timeout=timeout, lag_monitor=None
        ) as client:
            self._warm_client = tracker.client = client
            idle_task = asyncio.create_task(watch_idle())
            try:
                for i, endpoint in enumerate(("completions", "chat")):
                    if self.control.aborted:
                        return
                    body = payload(
                        "Say hello to the benchmark and count to ten.",
                        endpoint=endpoint,
                        model_id=info.model_id,
                        max_tokens=8,
                        dialect=dialect,
                        sampling=self.spec.sampling,
                        exact=False,
                    )
                    fn = client.chat if endpoint == "chat" else client.completions
                    rec = await fn(
                        body, request_id=request_id(pid, 1, f"e{i}"), point_id=pid, emit=tracker.seen
                    )
                    tracker.seen(RequestFinished(record=rec))
                    self.emit(RequestFinished(record=stored_record(rec), warmup=True))
                    if not rec.ok and rec.error_kind in ("timeout", "stalled"):
                        limit = (
                            f"{timeout:g} s (request_timeout)"
                            if rec.error_kind == "timeout"
                            else f"{tracker.idle_s:g} s without a token (idle_timeout)"
                        )
                        self.emit(
                            RunWarning(
                                code="warmup-timeout",
                                message=(
                                    f"{engine}.{variant}: the engine warm-up request got no complete answer within "
                                    f"{limit}; the engine may be hung"
                                ),
                            )
                        )
                        return
            finally:
                idle_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await idle_task
                self._warm_client = None

    async def _run_point(self, p: PlanPoint, adapter: Any, info: Any) -> bool:
        """Run one point; True when the engine crashed during it."""
        workload = self.spec.workloads.get(p.workload)
        await asyncio.to_thread(self.conditions.begin)
        att = self._begin(p)
        if workload is None:
            self._finish(p, "failed", PointSummary(), [f"error: workload {p.workload!r} is not in the spec"])
            return False
        dialect = getattr(adapter, "metrics_dialect", "none") or "none"
        timeout = p.params.request_timeout
        conc = p.params.concurrency
        state = _PointState(p, idle_s=p.params.idle_timeout)
        self._state = state

        def point_emit(ev: Event) -> None:
            state.seen(ev)
            self.emit(ev)

        if self.control.aborted:
            state.reason = "aborted"
        result: PointResult | None = None
        error = ""
        async with self._make_client(info.base_url, adapter.headers, conc, timeout) as client:
            state.client = client

            async def scrape(phase: str) -> dict[str, float]:
                values: dict[str, float] = await asyncio.to_thread(adapter.scrape_metrics)
                self.emit(
                    MetricsScraped(
                        engine=p.engine,
                        variant=p.variant,
                        point_id=p.point_id,
                        phase=phase,  # type: ignore[arg-type,unused-ignore]
                        values=values,
                    )
                )
                return values

            def crash_check() -> bool:
                try:
                    return not adapter.is_alive()
                except Exception:  # noqa: BLE001
                    return False

            env = PointEnv(
                point=p,
                workload=workload,
                client=client,
                adapter=adapter,
                model_id=info.model_id,
                dialect=dialect,
                emit=point_emit,
                attempt=att,
                sampling=self.spec.sampling,
                gate=self._gate,
                stop_reason=lambda: state.reason,
                scrape=scrape if dialect != "none" else None,
                crash_check=crash_check,
                cache=self._calib.setdefault((p.engine, p.variant), {}),
                on_crash=lambda: state.stop("engine_crash"),
            )
            watcher = asyncio.create_task(self._watch(state, adapter, dialect))
            try:
                result = await self._dispatch(p, workload, env, client, info)
            except Exception as exc:  # noqa: BLE001 - a harness bug fails the point, not the run
                error = f"{type(exc).__name__}: {exc}"
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
                self._state = None
        self._point_conditions[p.point_id] = await asyncio.to_thread(self.conditions.end)
        if state.reason is None and crash_check_sync(adapter):
            state.reason = "engine_crash"
        if state.reason == "aborted":
            self.emit(
                RunWarning(
                    code="aborted",
                    message=f"{p.point_id}: aborted mid-point (it reruns on resume)",
                    point_id=p.point_id,
                )
            )
            return False
        summary = result.summary if result is not None else PointSummary()
        flags = list(result.flags) if result is not None else []
        if state.reason == "skipped":
            self._finish(p, "skipped", summary, ["skipped by user", *flags])
            return False
        if state.reason == "stalled":
            note = f"stalled: no token for {state.idle_s:g} s (idle_timeout); the point was ended early"
            summary.extra["error"] = note
            self.emit(RunWarning(code="stalled", message=f"{p.point_id}: {note}", point_id=p.point_id))
            status = result.status if result is not None and result.status != "ok" else "failed"
            self._finish(p, status, summary, [f"stalled:{state.idle_s:g}s", *flags])
            return False
        if state.reason == "engine_crash":
            summary.extra["log_tail"] = _tail(adapter)
            self._finish(p, "failed", summary, ["engine-crashed", *flags])
            return True
        if error:
            summary.extra["error"] = error
            self.emit(RunWarning(code="harness", message=f"{p.point_id}: {error}", point_id=p.point_id))
            self._finish(p, "failed", summary, [f"error: {error[:200]}", *flags])
            return False
        assert result is not None
        self._finish(p, result.status, summary, flags)
        return False

    async def _dispatch(
        self, p: PlanPoint, workload: Any, env: PointEnv, client: Any, info: Any
    ) -> PointResult:
        if p.kind == "throughput":
            from bench_tui.runner.workloads.sweep import run_throughput_point

            return await run_throughput_point(env)
        if p.kind == "spec_acceptance":
            from bench_tui.runner.workloads.spec_accept import run_spec_acceptance_point

            return await run_spec_acceptance_point(env)
        if p.kind == "scenarios":
            from bench_tui.runner.workloads.scenarios import run_scenario_point
            from bench_tui.runner.workloads.sweep import point_status

            eng = self.spec.engines.get(p.engine)
            ctx = slot_context(eng, eng.variants.get(p.variant)) if eng is not None else None
            summary = await run_scenario_point(
                p,
                client=client,
                model_id=info.model_id,
                sampling=self.spec.sampling,
                emit=env.emit,
                spec_dir=self.spec_dir,
                slot_ctx=ctx.tokens if ctx is not None else None,
                attempt=env.attempt,
            )
            flags: list[str] = []
            res = PointResult(summary, flags, [], interrupted=env.stop_reason())
            res.status = point_status(summary, flags)
            return res
        if p.kind == "sessions":
            from bench_tui.runner.workloads.sessions import run_sessions_point

            return await run_sessions_point(env, self.spec_dir)
        raise ValueError(f"unknown point kind {p.kind!r}")

    async def _watch(self, state: _PointState, adapter: Any, dialect: str) -> None:
        next_stats = time.monotonic()  # first sample at the first tick, then about once a second
        stats_task: asyncio.Task[None] | None = None
        try:
            while True:
                await asyncio.sleep(WATCH_INTERVAL_S)
                if self.control.aborted:
                    state.stop("aborted")
                    continue
                if state.reason is None and self.control.take_skip():
                    state.stop("skipped")
                if state.stalled(time.monotonic()):
                    state.stop("stalled")
                alive = await asyncio.to_thread(_alive, adapter)
                if not alive and state.reason is None:
                    state.stop("engine_crash")
                    return
                if (
                    dialect != "none"
                    and time.monotonic() >= next_stats
                    and (stats_task is None or stats_task.done())
                ):
                    next_stats = time.monotonic() + STATS_INTERVAL_S
                    assert state.point is not None
                    stats_task = asyncio.create_task(self._stats(state.point, adapter, dialect))
        finally:
            if stats_task is not None and not stats_task.done():
                stats_task.cancel()

    async def _stats(self, p: PlanPoint, adapter: Any, dialect: str) -> None:
        try:
            values = await asyncio.to_thread(adapter.scrape_metrics)
        except Exception:  # noqa: BLE001
            return
        st = engine_stats(dialect, values)
        ev = EngineStats(engine=p.engine, variant=p.variant)
        for k in ("running", "waiting", "kv_usage", "prefix_cache_hit_rate", "spec_acceptance_rate"):
            v = st.get(k)
            if isinstance(v, int | float):
                setattr(ev, k, float(v))
        ev.gpu = self.conditions.gpu_totals()  # the conditions sampler's latest GPU reading
        self.emit(ev)


def _alive(adapter: Any) -> bool:
    try:
        return bool(adapter.is_alive())
    except Exception:  # noqa: BLE001
        return True


def crash_check_sync(adapter: Any) -> bool:
    return not _alive(adapter)


def _tail(adapter: Any, n: int = 30) -> list[str]:
    try:
        return list(adapter.log_tail(n))
    except Exception:  # noqa: BLE001
        return []


def _returncode(adapter: Any) -> int | None:
    proc = getattr(adapter, "proc", None) or getattr(adapter, "_proc", None)
    rc = getattr(proc, "returncode", None)
    return rc if isinstance(rc, int) else None


def _safe_env_info(adapter: Any) -> dict[str, Any]:
    try:
        info = adapter.env_info()
        return dict(info) if isinstance(info, dict) else {}
    except Exception:  # noqa: BLE001
        return {}

"""Shared helpers for the TUI tests: recorded event streams, a fake run handle (no engine, no runner thread),
waiting for the app to reach a state, and reading what it shows through Textual's public API only."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Tree

from bench_tui.events import (
    Chunk,
    EngineLog,
    EngineReady,
    EngineStarting,
    EngineStats,
    Event,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointStarted,
    PointSummary,
    RequestFinished,
    RequestFirstToken,
    RequestProgress,
    RequestRecord,
    RequestStarted,
    RunFinished,
    RunStarted,
    RunWarning,
    Stat,
    ThroughputParams,
)
from bench_tui.tui.screens.results import ResultsScreen

TS0 = 1796250000.0
MS = 1_000_000  # ns per ms


def live_points() -> list[PlanPoint]:
    out = []
    for variant in ("default", "fast"):
        for c in (1, 4):
            out.append(
                PlanPoint(
                    point_id=f"llama.{variant}/sweep/pp64-tg32-d0-c{c}",
                    engine="llama",
                    variant=variant,
                    workload="sweep",
                    kind="throughput",
                    params=ThroughputParams(pp=64, tg=32, depth=0, concurrency=c, repetitions=2),
                    requests=2 * c,
                )
            )
    return out


def _record(
    rid: str, pid: str, t0: int, ttft_ms: float, tokens: int, *, ok: bool = True, reasoning: int = 0
) -> RequestRecord:
    first = t0 + int(ttft_ms * MS)
    chunks = [
        Chunk(first + i * 20 * MS, 1, "reasoning" if i < reasoning else "content") for i in range(tokens)
    ]
    return RequestRecord(
        request_id=rid,
        point_id=pid,
        ok=ok,
        t_send_ns=t0,
        t_first_token_ns=first,
        t_last_token_ns=chunks[-1].t_ns if chunks else None,
        t_done_ns=(chunks[-1].t_ns if chunks else first) + 2 * MS,
        chunks=chunks,
        output_tokens=tokens,
        client_output_tokens=tokens,
        token_source="usage",
        error="" if ok else "http 503",
        error_kind="" if ok else "http",
    )


def _summary(eff: float, ttft: float, dec: float, n: int) -> PointSummary:
    return PointSummary(
        requests=n,
        ok=n,
        wall_s=2.0,
        eff_tg_tps=Stat(n=n, median=eff),
        agg_tg_tps=eff * n / 2,
        ttft_ms=Stat(n=n, median=ttft),
        decode_tps=Stat(n=n, median=dec),
        token_source="usage",
    )


def live_events(*, finished: bool = False, requests_per_point: int = 4) -> list[Event]:
    """A run of llama.{default,fast}: two points done, the third in flight (4 requests, 2 decoding,
    1 in prefill, 1 queued behind an engine that reports 1 waiting)."""
    pts = live_points()
    t = [TS0]

    def at(dt: float = 0.0) -> float:
        t[0] += dt
        return t[0]

    ev: list[Event] = [
        RunStarted(
            ts=at(),
            run_id="20261202T230000Z_tui1",
            spec_name="tui-fixture",
            spec_path="",
            run_dir="/nonexistent/runs/20261202T230000Z_tui1",
        ),
        PlanReady(ts=at(0.01), points=pts, estimated_requests=sum(p.requests for p in pts)),
        EngineStarting(
            ts=at(0.1), engine="llama", variant="default", command=["llama-server", "-m", "m.gguf"]
        ),
        EngineLog(ts=at(0.5), engine="llama", variant="default", line="main: server is listening"),
        EngineReady(
            ts=at(2.0),
            engine="llama",
            variant="default",
            base_url="http://127.0.0.1:18401",
            model_id="model.gguf",
            version="b6000",
            startup_s=2.5,
        ),
    ]
    eff = {"default": (40.0, 120.0, 48.0), "fast": (52.0, 95.0, 61.0)}
    n = 0
    for idx, p in enumerate(pts[:3]):
        ev.append(PointStarted(ts=at(0.5), point_id=p.point_id, index=idx, total=len(pts)))
        ev.append(
            EngineStats(
                ts=at(0.1),
                engine=p.engine,
                variant=p.variant,
                running=2,
                waiting=1 if idx == 2 else 0,
                kv_usage=0.25 + 0.1 * idx,
                prefix_cache_hit_rate=0.5,
                spec_acceptance_rate=0.7,
                gpu={"power_w": 210.0, "mem_used_mb": 20480.0},
            )
        )
        last = idx == 2
        for k in range(requests_per_point):
            n += 1
            rid = f"r{n:04d}"
            t_ns = int((t[0] - TS0) * 1e9)
            ev.append(
                RequestStarted(
                    ts=at(0.05), point_id=p.point_id, request_id=rid, prompt_tokens=64, max_tokens=32
                )
            )
            if last and k >= 2:
                continue  # still waiting for the first token
            ttft = 100.0 + 10 * k
            ev.append(RequestFirstToken(ts=at(0.1), point_id=p.point_id, request_id=rid, ttft_ms=ttft))
            for step in (8, 16):
                ev.append(
                    RequestProgress(
                        ts=at(0.25),
                        point_id=p.point_id,
                        request_id=rid,
                        tokens=step,
                        content_tokens=step - 2,
                        reasoning_tokens=2,
                        elapsed_ms=ttft + 20 * step,
                    )
                )
            if not last:
                ev.append(
                    RequestFinished(ts=at(0.3), record=_record(rid, p.point_id, t_ns, ttft, 32, reasoning=2))
                )
        if not last:
            if idx == 1:
                ev.append(
                    RunWarning(
                        ts=at(0.01),
                        code="client-limited",
                        point_id=p.point_id,
                        message="event-loop lag 41 ms: the client may limit this point",
                    )
                )
            ev.append(
                PointFinished(
                    ts=at(0.2),
                    point_id=p.point_id,
                    status="ok" if idx == 0 else "degraded",
                    summary=_summary(*eff[p.variant], n=requests_per_point),
                    flags=[] if idx == 0 else ["client-limited"],
                )
            )
    if finished:
        ev.append(PointFinished(ts=at(1), point_id=pts[2].point_id, status="skipped"))
        ev.append(RunFinished(ts=at(0.1), status="aborted", points_done=2, points_total=len(pts)))
    return ev


class FakeControl:
    def __init__(self, handle: FakeHandle) -> None:
        self.calls: list[str] = []
        self.handle = handle

    def pause(self) -> None:
        self.calls.append("pause")

    def resume(self) -> None:
        self.calls.append("resume")

    def skip_point(self) -> None:
        self.calls.append("skip_point")

    def abort(self) -> None:
        self.calls.append("abort")
        self.handle.finish("aborted")


class FakeHandle:
    """Plays a list of events to its subscribers on start(); finishes on abort() or finish()."""

    def __init__(self, events: list[Event], run_dir: Path | None = None) -> None:
        self.events = events
        self.run_dir = run_dir or Path("/nonexistent/run")
        self.subs: list[Any] = []
        self.control = FakeControl(self)
        self.started = False
        self.status: str | None = None
        self._done = threading.Event()

    def subscribe(self, fn: Any) -> None:
        assert not self.started, "subscribe() before start()"
        self.subs.append(fn)

    def start(self) -> None:
        self.started = True
        for e in self.events:
            for fn in self.subs:
                fn(e)

    @property
    def running(self) -> bool:
        return self.started and not self._done.is_set()

    def finish(self, status: str) -> None:
        if self._done.is_set():
            return
        pts = [e for e in self.events if isinstance(e, PlanReady)]
        total = len(pts[0].points) if pts else 0
        for fn in self.subs:
            fn(RunFinished(status=status, points_done=2, points_total=total))  # type: ignore[arg-type]
        self.status = status
        self._done.set()

    def wait(self, timeout: float | None = None) -> str:
        self._done.wait(timeout)
        return self.status or "running"


# ------------------------------------------------------------------------------------------------ waiting


async def until(pilot: Pilot[Any], cond: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``cond()`` holds (checked every 50 ms); fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        if cond():
            return
    raise AssertionError(f"condition not reached in {timeout} s")


async def settle(pilot: Pilot[Any], cond: Callable[[], bool] = lambda: True, timeout: float = 5.0) -> None:
    """``until`` the app's event pump has drained every pushed event and ``cond()`` holds."""
    app: Any = pilot.app
    await until(pilot, lambda: app.pump.q.empty() and cond(), timeout)


# ------------------------------------------------------------------------------------------------ reading


def record_notifications(app: App[Any]) -> list[str]:
    """Every message the app notifies from now on, in order (wraps the public ``App.notify``; screens and
    widgets notify through it)."""
    seen: list[str] = []
    notify = app.notify

    def recording(message: str, *args: Any, **kwargs: Any) -> None:
        seen.append(str(message))
        notify(message, *args, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return seen


def leaf_labels(tree: Tree[Any]) -> list[str]:
    """The labels of a tree's leaves that carry data (the plan tree's points), in display order."""
    out: list[str] = []

    def walk(node: Any) -> None:
        for child in node.children:
            if child.children:
                walk(child)
            elif child.data is not None:
                out.append(str(child.label))

    walk(tree.root)
    return out


async def open_scored_results(pilot: Pilot[Any]) -> ResultsScreen:
    """Open the results screen (r) and wait until its first scoring has finished; returns the screen."""
    await pilot.press("r")
    screen = pilot.app.screen
    assert isinstance(screen, ResultsScreen)
    await until(pilot, lambda: screen.scored_count >= 1, timeout=20)
    return screen

"""Load backends: where the measuring client runs. One interface, three implementations chosen by name.

``local`` (default): one :class:`~bench_tui.runner.transport.client.StreamClient` in the runner's own loop.
``processes``: ``workers`` client processes on this machine (:mod:`~bench_tui.runner.transport.sharding`);
CLOCK_MONOTONIC is one clock for all of them. ``ray``: ``workers`` Ray actors, each running the same
StreamClient on its share of every point's streams (:mod:`~bench_tui.runner.transport.ray_backend`, which
is the only module that imports Ray, and only when this backend is chosen). The two share their worker
pool and point client (:mod:`~bench_tui.runner.transport.pool`). Module layers, top to bottom (an
import-linter contract in pyproject.toml): backends; ray_backend | sharding; pool; client; lag | sse.

A backend lives for the whole run (``await start()`` ... ``await aclose()``); per point the executor asks
it for a client (``backend.client(base_url, headers, max_connections=..., timeout=...)``), an async context
manager with StreamClient's ``chat`` / ``completions`` / ``abort``. Records measured by a worker name it in
``RequestRecord.worker``. ``clock_offsets_ns`` (worker name -> ns to add to that worker's monotonic clock
to get the runner's; re-measured as each point opens) is empty when every worker shares the runner's clock; point-level windows (aggregate
tg, wall time) then come from :func:`aligned_window_s`. Per-request figures (TTFT, ITL, decode) are always
differences of one worker's own anchors and never need the offset.

When to use which: ``local`` until a point is flagged client-limited (about 30k chunks/s per core here,
bench/client_ceiling.py); ``processes`` on a client machine with spare cores; ``ray`` when one machine is
not enough (thousands of streams against a multi-GPU deployment): see docs/load-backends.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from bench_tui.events import RequestRecord
from bench_tui.runner.transport.client import StreamClient
from bench_tui.runner.transport.pool import host_info
from bench_tui.runner.transport.sharding import ProcessesLoad

BACKENDS = ("local", "processes", "ray")
SEND_AHEAD_NS = 50_000_000  # call this long before a planned send time: hand-over to a worker is not free


class LoadClient(Protocol):
    """What a workload calls: StreamClient's interface.

    ``send_at_ns`` is a planned send time on the *runner's* ``time.monotonic_ns()`` clock (an open loop's
    schedule): every backend hands the request to its worker at once and the worker sends it at that time
    (translated to its own clock); call ahead of the time (``SEND_AHEAD_NS`` is enough on one machine) so
    the hand-over is not what makes it late. The record's ``t_scheduled_ns`` is on the worker's clock, like
    its other anchors.
    """

    async def chat(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Any = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord: ...

    async def completions(
        self,
        payload: dict[str, Any],
        *,
        request_id: str,
        point_id: str,
        emit: Any = None,
        send_at_ns: int | None = None,
    ) -> RequestRecord: ...

    def abort(self, reason: str = "aborted", kind: str = "cancelled") -> None: ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc: object) -> None: ...


class LoadBackend(Protocol):
    name: str
    workers: int
    clock_offsets_ns: dict[str, int]
    warnings: list[str]  # for the run's event stream (clock spread, ...)

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    def client(
        self, base_url: str, headers: dict[str, str] | None, *, max_connections: int, timeout: float
    ) -> LoadClient: ...

    def describe(self) -> dict[str, Any]: ...


class LocalLoad:
    """One StreamClient in the runner's loop (the default)."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = 1
        self.clock_offsets_ns: dict[str, int] = {}
        self.warnings: list[str] = []

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def client(
        self, base_url: str, headers: dict[str, str] | None, *, max_connections: int, timeout: float
    ) -> LoadClient:
        return StreamClient(base_url, headers=headers, max_connections=max_connections, timeout=timeout)

    def describe(self) -> dict[str, Any]:
        return {"backend": "local", "workers": [{"name": "runner", **host_info()}]}


def make_backend(name: str, *, workers: int = 1, ray_address: str = "local") -> LoadBackend:
    """The load backend called ``name`` (the spec's ``load.backend``)."""
    if name == "local":
        return LocalLoad()
    if name == "processes":
        return ProcessesLoad(workers)
    if name == "ray":  # imported here: Ray is an optional dependency, loaded only when chosen
        from bench_tui.runner.transport.ray_backend import RayLoad

        return RayLoad(workers, ray_address)
    raise ValueError(f"unknown load backend {name!r}; allowed: {', '.join(BACKENDS)}")


def aligned_window_s(records: Iterable[RequestRecord], offsets_ns: dict[str, int]) -> float | None:
    """Seconds from the first request sent to the last one done, on the runner's clock.

    Each record's anchors are on its worker's monotonic clock; ``offsets_ns[worker]`` moves them onto the
    runner's (measured at start, see ray_backend.measure_offset). Records without anchors are skipped.
    """
    first: int | None = None
    last: int | None = None
    for r in records:
        if not r.t_send_ns or r.t_done_ns is None:
            continue
        off = offsets_ns.get(r.worker, 0)
        a, b = r.t_send_ns + off, r.t_done_ns + off
        first = a if first is None or a < first else first
        last = b if last is None or b > last else last
    if first is None or last is None or last <= first:
        return None
    return (last - first) / 1e9


def worker_lag(records: Iterable[RequestRecord]) -> dict[str, float]:
    """Worst event-loop lag (ms) per named worker."""
    out: dict[str, float] = {}
    for r in records:
        if r.worker:
            out[r.worker] = max(out.get(r.worker, 0.0), r.loop_lag_ms)
    return out

"""The TUI is only a front end: the same spec against the scripted server writes the same events.jsonl
with the TUI attached as with `--no-tui` (modulo timestamps, ids and measured timings). Both runs are prepared
as the CLI prepares them (``start_run`` with the spec's own adapters); the TUI's run is measured by the child
process the CLI gives it (``child.in_child_process(handle)``, runner/child.py), the headless one in a thread."""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
from helpers import until

from bench_tui.events import read_events
from bench_tui.runner.orchestration.child import ChildRunHandle, in_child_process
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from bench_tui.tui.app import make_app
from scripted_server import Schedule, ScriptedServerProcess

SPEC = """\
version: 1
name: parity
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [24]
    tg: [6]
    depths: [0]
    concurrency: [1, 2]
    repetitions: 2
    warmup: 1
"""
# events whose count depends on timing (throttled progress, periodic gauges) are not compared
TIMING_DEPENDENT = {"request_progress", "engine_stats", "engine_log", "metrics_scraped"}
TIMING_WARNINGS = {"client-limited", "host-stall"}
ID_KEYS = {"run_id", "run_dir", "spec_path", "request_id", "log_path", "pid", "base_url", "id"}
REQUEST_TYPES = {"request_started", "request_first_token", "request_finished"}


def _mask(obj: Any, key: str = "") -> Any:
    if isinstance(obj, dict):
        return {k: _mask(v, k) for k, v in sorted(obj.items()) if k != "ts" and not k.endswith("_ns")}
    if isinstance(obj, list):
        if key == "chunks":
            return [c[1:] for c in obj]  # (tokens, channel); the time is measured
        return [_mask(v, key) for v in obj]
    if key in ID_KEYS:
        return "<id>"
    if isinstance(obj, float):
        return "<float>"  # measured values (ms, t/s, lag) differ run to run
    return obj


def normalized(run_dir: Path) -> tuple[list[Any], dict[str, Counter[str]]]:
    """(the run/plan/engine/point events in order, per point the multiset of request events)."""
    seq: list[Any] = []
    per_point: dict[str, Counter[str]] = {}
    for ev in read_events(str(run_dir / "events.jsonl")):
        d = msgspec.to_builtins(ev)
        if d["type"] in TIMING_DEPENDENT or (d["type"] == "warning" and d["code"] in TIMING_WARNINGS):
            continue
        if d["type"] == "point_finished":
            # whether the client's event loop lagged enough to flag a point is a measurement, like a time
            d["flags"] = [f for f in d.get("flags", []) if f.split(":", 1)[0] not in TIMING_WARNINGS]
            d.get("summary", {}).pop("client_limited", None)
            d.get("summary", {}).pop("client_limit_cause", None)
            # gaps between chunks that arrived in the same socket read are not inter-token latencies, and a
            # request whose tokens all came in one read has no decode rate: both counts follow the reads
            for stat in ("itl_ms", "decode_tps"):
                d.get("summary", {}).get(stat, {}).pop("n", None)
        if d["type"] in REQUEST_TYPES:
            pid = d.get("point_id") or d["record"]["point_id"]
            per_point.setdefault(pid, Counter())[repr(_mask(d))] += 1
        else:
            seq.append(_mask(d))
    return seq, per_point


def differences(x: Any, y: Any, path: str = "") -> list[str]:
    if isinstance(x, dict) and isinstance(y, dict):
        return [d for k in sorted(set(x) | set(y)) for d in differences(x.get(k), y.get(k), f"{path}.{k}")]
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        pairs = enumerate(zip(x, y, strict=True))
        return [d for i, (u, v) in pairs for d in differences(u, v, f"{path}[{i}]")]
    return [] if x == y else [f"{path}: {x!r:.120} != {y!r:.120}"]


def _spec(tmp_path: Path, port: int) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(port=port))
    return path


def _headless(tmp_path: Path, port: int) -> Any:
    return start_run(_spec(tmp_path, port), runs_dir=tmp_path / "runs")


def _child(tmp_path: Path, port: int) -> ChildRunHandle:
    handle = in_child_process(start_run(_spec(tmp_path, port), runs_dir=tmp_path / "runs"))
    assert isinstance(handle, ChildRunHandle)  # what `bench-tui run SPEC` hands the TUI
    return handle


async def _run_in_tui(handle: Any) -> int:
    app = make_app(handle=handle)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.state.status in ("completed", "failed", "aborted"), timeout=90)
        assert app.state.status == "completed", app.state.finish_message
        assert app.state.points_done == 2 and app.pump.events > 0
        await pilot.press("q")
    return app.return_code or 0


def test_tui_and_headless_write_the_same_events(tmp_path: Path) -> None:
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.005), port=0) as srv:
        h1 = _headless(tmp_path / "headless", srv.port)
        out = io.StringIO()
        assert run_headless(h1, out=out) == 0, out.getvalue()
        h2 = _child(tmp_path / "tui", srv.port)
        assert asyncio.run(_run_in_tui(h2)) == 0
        assert h2.wait(timeout=30) == "completed", h2.error
    seq1, req1 = normalized(h1.run_dir)
    seq2, req2 = normalized(h2.run_dir)
    assert [e["type"] for e in seq1] == [e["type"] for e in seq2]
    assert seq1 == seq2, differences(seq1, seq2)
    assert req1 == req2 and sum(sum(c.values()) for c in req1.values()) >= 3 * (2 + 4)


if __name__ == "__main__":
    import tempfile

    d = Path(tempfile.mkdtemp())
    with ScriptedServerProcess(Schedule(prefill_s=0.02, itl_s=0.005), port=0) as srv:
        h1 = _headless(d / "headless", srv.port)
        run_headless(h1, out=io.StringIO())
        h2 = _child(d / "tui", srv.port)
        asyncio.run(_run_in_tui(h2))
        h2.wait(timeout=30)
    for h in (h1, h2):
        for e in normalized(h.run_dir)[0]:
            print(e["type"], e.get("code", ""), e.get("message", "")[:150])
        for ev in read_events(str(h.run_dir / "events.jsonl")):
            if type(ev).__name__ == "PointFinished":
                print(ev.point_id, ev.flags, ev.summary.max_loop_lag_ms, ev.summary.client_limited)
        print("----")

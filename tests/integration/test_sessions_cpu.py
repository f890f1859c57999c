"""Sessions on the real CPU engine (llama.cpp through xllamacpp): a tiny synthetic workload on a warm
(prompt cache on) and a cold (--no-cache-prompt) variant, and a tiny pack-source workload.

Asserted: the points run, llama.cpp's own per-request cache counts (timings cache_n) show the shared history
reused on turns >= 2 when warm and never when cold, and a warm vs cold TTFT ratio on turns >= 2 is measured
and reported (its size is printed, not asserted: speed belongs to bench/ scripts).
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench_tui.events import PointFinished, ScenarioGraded, SessionTurn
from bench_tui.reports.render import render_run
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from bench_tui.runner.orchestration.store import load_events
from cpu_engine import port_was_taken
from scripted_server import free_port

pytestmark = pytest.mark.engine

SPEC = """\
version: 1
name: cpu-sessions
engines:
  llama:
    kind: llamacpp
    launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: %(port)d
    startup_timeout: 180
    args: {ctx-size: 4096, parallel: 2, threads: 2, metrics: true, slots: true, jinja: true}
    variants:
      warm: {}
      cold: {args: {no-cache-prompt: true}}
workloads:
  agents:
    kind: sessions
    source: {synthetic: {shared_prefix_tokens: 384, turns: 3, input_tokens: 24, output_tokens: 8}}
    think_time_s: 0.05
    arrival: {concurrency: [1]}
    sessions: 2
    slo: {ttft_ms: {p90: 120000}}
  tools:
    kind: sessions
    source: {pack: pack.yaml, subset: short}
    arrival: {rate: [0.5]}
    sessions: 1
matrix:
  exclude: [{variant: cold, workload: tools}]
sampling: {max_tokens: 96}
"""


def _run(tmp_path: Path) -> tuple[Any, int, io.StringIO]:
    tmp_path.mkdir(parents=True)
    shutil.copy(Path(__file__).parents[1] / "unit" / "data" / "grader_mini_pack.yaml", tmp_path / "pack.yaml")
    spec = tmp_path / "cpu-sessions.yaml"
    spec.write_text(SPEC % {"port": free_port()})
    handle = start_run(spec, runs_dir=tmp_path / "runs")
    out = io.StringIO()
    return handle, run_headless(handle, out=out), out


def test_cpu_sessions_warm_vs_cold_and_pack(tmp_path: Path) -> None:
    handle, rc, out = _run(tmp_path / "a")
    if rc != 0 and port_was_taken(out.getvalue()):
        handle, rc, out = _run(tmp_path / "b")
    assert rc == 0, out.getvalue()[-3000:]
    events = load_events(handle.run_dir)
    done = {e.point_id: e for e in events if isinstance(e, PointFinished)}
    assert set(done) == {"llama.warm/agents/c1", "llama.cold/agents/c1", "llama.warm/tools/r0.5"}
    assert all(e.status in ("ok", "degraded") for e in done.values()), {k: v.flags for k, v in done.items()}
    warm = done["llama.warm/agents/c1"].summary.extra["sessions"]
    cold = done["llama.cold/agents/c1"].summary.extra["sessions"]
    for fig in (warm, cold):
        assert [r["turn"] for r in fig["per_turn"]] == [1, 2, 3]
        assert all(r["requests"] == 2 for r in fig["per_turn"])
    for row in warm["per_turn"][1:]:  # llama.cpp's cache_n: the history really was reused
        assert row["cache_hit"] is not None and row["cache_hit"] > 0.5, warm["per_turn"]
        assert row["ideal_hit"] is not None and row["ideal_hit"] >= 0.8
    for row in cold["per_turn"][1:]:
        assert row["cache_hit"] == 0.0, cold["per_turn"]
    w = done["llama.warm/agents/c1"].summary.extra["ttft_ms_turns2plus"]
    c = done["llama.cold/agents/c1"].summary.extra["ttft_ms_turns2plus"]
    print(f"TTFT turns >= 2, median: warm {w:.1f} ms, cold {c:.1f} ms, cold/warm {c / w:.2f}x")
    assert w > 0 and c > 0
    report = render_run(handle.run_dir, "md")  # the cited ratio, as the report states it
    assert f"cold / warm = {c / w:.2f}×" in report and "llama.cold/agents/c1" in report
    graded = [e for e in events if isinstance(e, ScenarioGraded)]
    assert len(graded) == 1 and graded[0].point_id == "llama.warm/tools/r0.5"
    assert sum(1 for e in events if isinstance(e, SessionTurn) and e.point_id.endswith("tools/r0.5")) >= 1

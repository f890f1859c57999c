"""A real throughput sweep on the CPU engine (llama.cpp through xllamacpp): c1/c2/c4 x two depths.

The whole runner path: spec -> plan -> llamacpp adapter (our xllama_server launcher) -> prompts built with
the engine's /tokenize -> streaming client -> /metrics deltas -> events.jsonl. Assertions are about the
honesty of the records (exact token counts, TTFT after the headers and first event, server deltas), never
about speed.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from bench_tui.events import MetricsScraped, PointFinished, RequestFinished, RunFinished
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.view import RunView
from cpu_engine import port_was_taken
from scripted_server import free_port

pytestmark = pytest.mark.engine

SPEC = """\
version: 1
name: cpu-sweep
engines:
  llama:
    kind: llamacpp
    launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: %(port)d
    startup_timeout: 180
    args: {ctx-size: 8192, parallel: 4, threads: 2, metrics: true, slots: true, jinja: true}
workloads:
  sweep:
    kind: throughput
    pp: [128]
    tg: [16]
    depths: [0, 256]
    concurrency: [1, 2, 4]
    repetitions: 2
    warmup: 1
    endpoint: chat
    request_timeout: 300
"""


def _sweep(tmp_path: Path) -> tuple[Any, int, io.StringIO]:
    tmp_path.mkdir(parents=True)
    spec = tmp_path / "cpu-sweep.yaml"
    spec.write_text(SPEC % {"port": free_port()})
    handle = start_run(spec, runs_dir=tmp_path / "runs")
    out = io.StringIO()
    return handle, run_headless(handle, out=out), out


def test_cpu_sweep(tmp_path: Path) -> None:
    handle, rc, out = _sweep(tmp_path / "a")
    if rc != 0 and port_was_taken(out.getvalue()):  # the free port was taken meanwhile
        handle, rc, out = _sweep(tmp_path / "b")
    assert rc == 0, out.getvalue()[-3000:]
    events = load_events(handle.run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    finished = [e for e in events if isinstance(e, PointFinished)]
    assert len(finished) == 6 == len({e.point_id for e in finished})
    view = RunView.from_events(events, keep_records=True)
    recs = view.records()
    for pf in finished:
        s = pf.summary
        params = view.points[pf.point_id].params
        assert pf.status in ("ok", "degraded"), (pf.point_id, pf.flags)
        assert s.ok >= 1 and s.ok == len([r for r in recs[pf.point_id] if r.ok])
        assert s.requests == 2 * params.concurrency
        ok = [r for r in recs[pf.point_id] if r.ok]
        # ignore_eos + max_tokens: exactly tg tokens, as the server counted them
        assert all(r.output_tokens == 16 and r.token_source in ("usage", "timings") for r in ok), [
            (r.output_tokens, r.token_source) for r in ok
        ]
        # the prompt was built with the engine's tokenizer to exactly depth + pp server tokens
        assert all(r.prompt_tokens == 128 + params.depth for r in ok), [r.prompt_tokens for r in ok]
        assert s.extra["prompt_counting"] == "tokenizer"
        # TTFT is the first token, never an earlier artifact: the response headers come before prefill
        # (measured: ~35 ms vs seconds), and this llama.cpp build writes its role-only chunk in the same
        # write as the first token, so the first SSE event is at best as late as the first token
        for r in ok:
            assert (
                r.t_headers_ns is not None
                and r.t_first_byte_ns is not None
                and r.t_first_token_ns is not None
            )
            assert r.t_first_token_ns >= r.t_first_byte_ns > r.t_headers_ns > r.t_send_ns
        assert s.ttft_ms.median is not None and s.ttfb_ms.median is not None
        assert s.ttft_ms.median >= s.ttfb_ms.median
        ttfh = sorted((r.t_headers_ns - r.t_send_ns) / 1e6 for r in ok)  # type: ignore[operator]
        assert s.ttft_ms.median > ttfh[len(ttfh) // 2]
        # the server's own account of the point
        assert s.server.prompt_tokens is not None and s.server.prompt_tokens > 0
        assert s.server.generation_tokens == 16 * s.ok
        assert s.server.prefill_tps is not None and s.server.decode_tps is not None
        phases = [e.phase for e in events if isinstance(e, MetricsScraped) and e.point_id == pf.point_id]
        assert phases == ["before", "after"]
    warm = [e for e in events if isinstance(e, RequestFinished) and e.warmup]
    assert len(warm) >= 6

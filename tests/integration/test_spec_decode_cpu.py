"""Real speculative decoding on the CPU engine: llama.cpp (xllamacpp) with the Qwen GGUF as its own draft model.

One short spec_acceptance point and one warm throughput point on one engine start. Asserts that acceptance
rate, acceptance length and per-position acceptance come from llama.cpp's /metrics counters (recomputed here
from the stored scrapes, cross-checked with the per-request timings), and that the warm point reports the
prefix-cache hit rate from ``prompt_tokens_cached_total``. Nothing about speed.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bench_tui.events import MetricsScraped, PointFinished, RunFinished
from bench_tui.reports.render import write_reports
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.view import RunView
from scripted_server import free_port

pytestmark = pytest.mark.engine

SPEC = """\
version: 1
name: cpu-spec-decode
engines:
  llama:
    kind: llamacpp
    launcher: ["{{python}}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: {port}
    startup_timeout: 240
    args: {{ctx-size: 4096, parallel: 2, threads: 1, metrics: true, slots: true, jinja: true}}
    variants:
      draft:
        args: {{model-draft: "builtin:qwen2.5-coder-0.5b", draft-max: 3, draft-min: 0, threads-draft: 1}}
workloads:
  accept:
    kind: spec_acceptance
    content: [code]
    runs: 1
    tg: 24
  warm:
    kind: throughput
    pp: [48]
    tg: [4]
    depths: [160]
    concurrency: [1]
    repetitions: 1
    warmup: 1
    cache: warm
    endpoint: chat
"""

PREFIX = "llamacpp:spec_decode_"


def _delta(before: dict[str, float], after: dict[str, float], key: str) -> float:
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_draft_model_acceptance_and_warm_prefix_hits_from_the_counters(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(port=free_port(18900, 18999)))
    handle = start_run(spec, runs_dir=tmp_path / "runs")
    out = io.StringIO()
    rc = run_headless(handle, out=out)
    assert rc == 0, out.getvalue()[-3000:]
    events = load_events(handle.run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    finished = {e.point_id: e for e in events if isinstance(e, PointFinished)}
    scrapes = {(e.point_id, e.phase): e.values for e in events if isinstance(e, MetricsScraped)}
    recs = RunView.from_events(events, keep_records=True).records()

    acc = next(e for pid, e in finished.items() if "/accept/" in pid)
    assert acc.status == "ok", acc.flags
    sv = acc.summary.server
    before, after = scrapes[(acc.point_id, "before")], scrapes[(acc.point_id, "after")]
    assert after["llamacpp_slots:speculative"] == 2  # /slots says speculation is on
    drafts = _delta(before, after, PREFIX + "num_drafts_total")
    draft_toks = _delta(before, after, PREFIX + "num_draft_tokens_total")
    accepted = _delta(before, after, PREFIX + "num_accepted_tokens_total")
    assert drafts > 0 and acc.summary.extra["acceptance_source"] == "server /metrics"
    assert (sv.spec_drafts, sv.spec_draft_tokens, sv.spec_accepted) == (drafts, draft_toks, accepted)
    assert sv.spec_acceptance_rate == pytest.approx(accepted / draft_toks)
    assert sv.spec_acceptance_length == pytest.approx(1 + accepted / drafts)
    # per position from ..._per_pos_total{position}: at most draft-max positions, each a share of the drafts,
    # never rising (position i is accepted only after i-1), summing to accepted / drafts
    per = sv.spec_per_position
    assert 1 <= len(per) <= 3 and all(0.0 <= x <= 1.0 for x in per)
    assert per == sorted(per, reverse=True)
    assert sum(per) == pytest.approx(accepted / drafts)
    # the per-request timings say the same (the same GGUF as its own draft is almost always right)
    ok = [r for r in recs[acc.point_id] if r.ok]
    assert sum(r.timings.get("draft_n", 0) for r in ok) == draft_toks
    assert sum(r.timings.get("draft_n_accepted", 0) for r in ok) == accepted
    assert sv.spec_acceptance_rate > 0.5

    warm = next(e for pid, e in finished.items() if "/warm/" in pid)
    ws = warm.summary.server
    before, after = scrapes[(warm.point_id, "before")], scrapes[(warm.point_id, "after")]
    cached = _delta(before, after, "llamacpp:prompt_tokens_cached_total")
    evaluated = _delta(before, after, "llamacpp:prompt_tokens_total")
    assert cached > 0, "the warm point reused no prefix"
    assert (ws.prompt_tokens_cached, ws.prompt_tokens_evaluated) == (cached, evaluated)
    assert ws.prefix_cache_hit_rate == pytest.approx(cached / (cached + evaluated))
    assert warm.summary.agg_prefill_tps is not None and warm.summary.pooled_decode_tps is not None

    write_reports(handle.run_dir, ["md"])
    report = (handle.run_dir / "report.md").read_text()
    assert f"{100 * sv.spec_acceptance_rate:.1f}%" in report
    assert f"{100 * ws.prefix_cache_hit_rate:.1f}%" in report
    assert "## Definitions: what each figure counts, per engine" in report

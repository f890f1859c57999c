"""Server-side truth: llama.cpp's counters read like vLLM's, 0-draft points kept, one set of definitions,
aggregate prefill and pooled decode, context overflow named as such (issue 13)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench_tui.engine_adapters.dialects import DEFINITIONS, decode_disagreement, server_side
from bench_tui.engine_adapters.process import flatten_slots
from bench_tui.events import (
    AcceptanceParams,
    Chunk,
    PlanPoint,
    PointSummary,
    RequestRecord,
    ScenarioParams,
    ServerSide,
    Stat,
)
from bench_tui.runner.workloads.metrics import agg_prefill_tps, context_full, pooled_decode_tps, summarize

REPO = Path(__file__).resolve().parents[2]

LLAMA_BEFORE = {
    "llamacpp:prompt_tokens_total": 100.0,
    "llamacpp:prompt_tokens_cached_total": 0.0,
    "llamacpp:prompt_seconds_total": 1.0,
    "llamacpp:tokens_predicted_total": 64.0,
    "llamacpp:tokens_predicted_seconds_total": 4.0,
    "llamacpp:spec_decode_num_drafts_total": 13.0,
    "llamacpp:spec_decode_num_draft_tokens_total": 50.0,
    "llamacpp:spec_decode_num_accepted_tokens_total": 50.0,
    'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"}': 13.0,
    'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="1"}': 13.0,
    "llamacpp_slots:speculative": 4.0,
}


def _llama_after(**d: float) -> dict[str, float]:
    out = dict(LLAMA_BEFORE)
    for k, v in d.items():
        key = {
            "pos0": 'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"}',
            "pos1": 'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="1"}',
            "pos2": 'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="2"}',
        }.get(k, "llamacpp:" + k)
        out[key] = out.get(key, 0.0) + v
    return out


def test_llamacpp_speculation_from_counter_deltas() -> None:
    # 10 draft rounds of up to 3 tokens: 24 proposed, 18 accepted (10 at position 0, 6 at 1, 2 at 2)
    after = _llama_after(
        spec_decode_num_drafts_total=10,
        spec_decode_num_draft_tokens_total=24,
        spec_decode_num_accepted_tokens_total=18,
        pos0=10,
        pos1=6,
        pos2=2,
        tokens_predicted_total=48,
        tokens_predicted_seconds_total=2.0,
    )
    s = server_side("llamacpp", LLAMA_BEFORE, after)
    assert s.source == "llamacpp /metrics"
    assert (s.spec_drafts, s.spec_draft_tokens, s.spec_accepted) == (10, 24, 18)
    assert s.spec_acceptance_rate == pytest.approx(0.75)
    assert s.spec_acceptance_length == pytest.approx(2.8)
    assert s.spec_per_position == pytest.approx([1.0, 0.6, 0.2])  # position 2 first seen in `after`
    assert s.decode_tps == pytest.approx(24.0)


def test_llamacpp_prefix_cache_hit_rate_counts_cached_over_all_prompt_tokens() -> None:
    after = _llama_after(prompt_tokens_total=510, prompt_tokens_cached_total=1026, prompt_seconds_total=2.0)
    s = server_side("llamacpp", LLAMA_BEFORE, after)
    assert s.prompt_tokens == 510 and s.prompt_tokens_evaluated == 510 and s.prompt_tokens_cached == 1026
    assert s.prefix_cache_hit_rate == pytest.approx(1026 / 1536)
    assert s.prefill_tps == pytest.approx(255) and s.evaluated_prefill_tps == pytest.approx(255)
    assert "evaluated" in s.prefill_counts
    # no prompt work at all in the point: no hit rate (never 0 % from nothing)
    assert server_side("llamacpp", LLAMA_BEFORE, dict(LLAMA_BEFORE)).prefix_cache_hit_rate is None


def test_zero_drafts_is_zero_when_speculation_is_on_and_absent_when_off() -> None:
    after = _llama_after(tokens_predicted_total=48)
    on = server_side("llamacpp", LLAMA_BEFORE, after)
    assert on.spec_drafts == 0 and on.spec_acceptance_rate is None and on.spec_per_position == []
    # llama.cpp exports the counters without speculation too: /slots says whether it is on
    off_before = {k: v for k, v in LLAMA_BEFORE.items() if "per_pos" not in k}
    off_before["llamacpp_slots:speculative"] = 0.0
    off = server_side("llamacpp", off_before, {**off_before, "llamacpp:tokens_predicted_total": 112.0})
    assert off.spec_drafts is None
    # vLLM exports them only when configured
    vb = {
        'vllm:prompt_tokens_total{m="q"}': 0.0,
        'vllm:spec_decode_num_drafts_total{m="q"}': 5.0,
        'vllm:spec_decode_num_draft_tokens_total{m="q"}': 15.0,
        'vllm:spec_decode_num_accepted_tokens_total{m="q"}': 9.0,
    }
    va = {**vb, 'vllm:prompt_tokens_total{m="q"}': 40.0}
    assert server_side("vllm", vb, va).spec_drafts == 0


def test_vllm_evaluated_prefill_takes_cache_hits_off() -> None:
    before = {
        "vllm:prompt_tokens_total": 0.0,
        "vllm:prefix_cache_hits_total": 0.0,
        "vllm:prefix_cache_queries_total": 0.0,
        "vllm:request_prefill_time_seconds_sum": 0.0,
    }
    after = {
        "vllm:prompt_tokens_total": 4000.0,
        "vllm:prefix_cache_hits_total": 3000.0,
        "vllm:prefix_cache_queries_total": 4000.0,
        "vllm:request_prefill_time_seconds_sum": 2.0,
    }
    s = server_side("vllm", before, after)
    assert s.prefill_tps == pytest.approx(2000)  # as vLLM counts it: cached tokens included
    assert s.prompt_tokens_evaluated == 1000 and s.evaluated_prefill_tps == pytest.approx(500)
    assert s.prefix_cache_hit_rate == pytest.approx(0.75)


def test_flatten_slots_counts_speculative_slots() -> None:
    slots = [
        {"id": 0, "n_ctx": 2048, "speculative": True, "is_processing": False},
        {"id": 1, "n_ctx": 2048, "speculative": True, "is_processing": False},
    ]
    assert flatten_slots(slots)["llamacpp_slots:speculative"] == 2
    assert flatten_slots([{"id": 0, "speculative": False}])["llamacpp_slots:speculative"] == 0


def _rec(i: int, send: float, first: float, last: float, n: int, prompt: int = 100) -> RequestRecord:
    ns = 1_000_000_000
    send, first, last = send + 100, first + 100, last + 100  # monotonic clocks are never 0
    return RequestRecord(
        request_id=f"r{i}",
        point_id="p",
        ok=True,
        t_send_ns=int(send * ns),
        t_first_token_ns=int(first * ns),
        t_last_token_ns=int(last * ns),
        t_done_ns=int(last * ns),
        prompt_tokens=prompt,
        output_tokens=n,
        token_source="usage",
        chunks=[Chunk(int(first * ns), 1, "text"), Chunk(int(last * ns), n - 1, "text")],
    )


def test_aggregate_prefill_and_pooled_decode() -> None:
    # four requests sent at t=0; first tokens at 1, 2, 3, 4 s: per-request prefill 100, 50, 33, 25 t/s (queueing)
    batch = [_rec(i, 0.0, 1.0 + i, 11.0 + i, 11) for i in range(4)]
    assert agg_prefill_tps([batch]) == pytest.approx(400 / 4.0)
    assert agg_prefill_tps([batch, [_rec(9, 20.0, 22.0, 30.0, 5)]]) == pytest.approx(500 / 6.0)
    # one slow request (decoding beside the others' prefill): the median hides it, pooling does not
    recs = [_rec(0, 0, 1, 2, 11), _rec(1, 0, 1, 2, 11), _rec(2, 0, 1, 2, 11), _rec(3, 0, 1, 11, 11)]
    assert pooled_decode_tps(recs) == pytest.approx(40 / 13)
    s = summarize(recs, wall_s=11.0)
    assert s.decode_tps.median == pytest.approx(10.0) and s.pooled_decode_tps == pytest.approx(40 / 13)


def test_decode_disagreement_names_the_cause() -> None:
    flag = decode_disagreement(3.2, 10.0, 40 / 13, "llamacpp", 4)
    assert flag is not None and flag.startswith("server-decode-differs:server 3.2 vs client median 10.0")
    assert "(pooling:" in flag
    assert decode_disagreement(9.0, 10.0, 9.5, "llamacpp", 4) is None  # within 25 %
    other = decode_disagreement(3.0, 10.0, 10.0, "llamacpp", 4)
    assert other is not None and "(pooling:" not in other
    assert decode_disagreement(None, 10.0, 10.0, "vllm", 1) is None


def test_context_full_is_named_with_its_numbers() -> None:
    rec = RequestRecord(
        request_id="a",
        point_id="p",
        ok=True,
        finish_reason="length",
        prompt_tokens=4060,
        output_tokens=36,
        token_source="usage",
    )
    assert context_full(rec, 256, 4096) == "context full (prompt 4060 + output 36 = ctx 4096)"
    assert context_full(rec, 256) == "context full (prompt 4060 + output 36 = ctx 4096)"
    ceiling = RequestRecord(
        request_id="b",
        point_id="p",
        ok=True,
        finish_reason="length",
        prompt_tokens=100,
        output_tokens=256,
        token_source="usage",
    )
    assert context_full(ceiling, 256, 4096) is None  # that one is max_tokens
    stop = RequestRecord(
        request_id="c", point_id="p", ok=True, finish_reason="stop", prompt_tokens=4060, output_tokens=36
    )
    assert context_full(stop, 256, 4096) is None


def test_grader_reports_context_full_as_configuration_error() -> None:
    from bench_tui.graders.loops import harness_problems

    msg = {
        "role": "assistant",
        "content": "{",
        "finish_reason": "length",
        "context_full": "context full (prompt 4060 + output 36 = ctx 4096)",
    }
    problems = harness_problems([{"role": "user", "content": "x"}, msg])
    assert len(problems) == 1 and "context full (prompt 4060 + output 36 = ctx 4096)" in problems[0]
    assert "configuration error" in problems[0] and "token ceiling" not in problems[0]


def test_definitions_doc_matches_the_table() -> None:
    doc = (REPO / "docs" / "DEFINITIONS.md").read_text(encoding="utf-8")
    doc = doc.split("\n## ", 1)[0]  # the engines' table; later sections have tables of their own
    rows = [
        r for r in doc.splitlines() if r.startswith("| ") and not r.startswith("| figure") and "---" not in r
    ]
    parsed = [tuple(c.strip() for c in r.strip("|").split(" | ")) for r in rows]
    assert parsed == [tuple(c.strip() for c in row) for row in DEFINITIONS], (
        "docs/DEFINITIONS.md is out of step with engine_adapters.dialects.DEFINITIONS"
    )


def test_report_keeps_zero_draft_points_and_ends_with_definitions(tmp_path: Path) -> None:
    from bench_tui.reports.model import PointRow, RunModel
    from bench_tui.reports.render import build_view

    def pt(pid: str, server: ServerSide, flags: list[str]) -> PointRow:
        s = PointSummary(requests=2, ok=2, server=server, eff_tg_tps=Stat(n=2, median=10.0))
        plan = PlanPoint(
            point_id=pid,
            engine="v",
            variant="ngram",
            workload="accept",
            kind="spec_acceptance",
            params=AcceptanceParams(content=pid.rsplit("-", 1)[-1], depth=0),
        )  # type: ignore[arg-type]
        return PointRow(plan, status="ok", flags=flags, summary=s)

    m = RunModel(
        run_dir=tmp_path,
        points=[
            pt(
                "v.ngram/accept/d0-code",
                ServerSide(
                    spec_drafts=40,
                    spec_draft_tokens=120,
                    spec_accepted=89,
                    spec_acceptance_rate=89 / 120,
                    spec_acceptance_length=1 + 89 / 40,
                    spec_per_position=[0.78, 0.78, 0.67],
                ),
                [],
            ),
            pt(
                "v.ngram/accept/d0-json",
                ServerSide(spec_drafts=0, spec_draft_tokens=0, spec_accepted=0),
                ["0 drafts; acceptance n/a"],
            ),
        ],
    )
    view = build_view(m)
    spec = next(s for s in view["sections"] if s.id == "spec")
    rows = {r[0]: r for r in spec.tables[0].rows}
    assert rows["v.ngram/accept/d0-json"][4] == "0 drafts; acceptance n/a"
    assert (
        rows["v.ngram/accept/d0-code"][4] == "74.2%"
        and rows["v.ngram/accept/d0-code"][6] == "78% / 78% / 67%"
    )
    assert view["sections"][-1].id == "definitions"
    defs = view["sections"][-1].tables[0]
    assert defs.headers == ["figure", "vLLM", "llama.cpp"] and len(defs.rows) == len(DEFINITIONS)
    assert any(re.search("evaluated prefill", r[0]) for r in defs.rows)


def test_starved_engine_is_flagged_against_its_own_first_c1_figure() -> None:
    from bench_tui.runner.workloads.metrics import StarvationWatch

    def s(decode: float) -> PointSummary:
        return PointSummary(requests=2, ok=2, decode_tps=Stat(n=2, median=decode))

    w = StarvationWatch()
    assert w.check("llama", "llama.a/sweep/c1", s(12.9), 1) is None  # the reference
    assert w.check("llama", "llama.a/sweep/c4", s(2.0), 4) is None  # concurrency is not the reference's
    assert w.check("llama", "llama.b/sweep/c1", s(9.0), 1) is None  # slower, not starved
    flag = w.check("llama", "llama.b/sweep/d4096-c1", s(0.6), 1)
    assert flag is not None and flag.startswith("starved:c1 decode 0.6 t/s is 5 % of this engine's first")
    assert "12.9 t/s at llama.a/sweep/c1" in flag
    assert w.check("vllm", "vllm.x/sweep/c1", s(0.6), 1) is None  # each engine against itself


def test_threads_beyond_the_free_cores_warn_before_start() -> None:
    from bench_tui.engine_adapters.llamacpp import threads_warning

    w = threads_warning(2, (2, 1.1))
    assert (
        w is not None and "threads 2 but only about 0.9 of 2 CPUs are free" in w and "set threads to 1" in w
    )
    assert threads_warning(2, (2, 0.2)) is None
    assert threads_warning(1, (2, 1.1)) is None
    assert threads_warning(1, (2, 4.1)) is None  # nothing lower to suggest
    assert "set threads to 1" in (threads_warning(4, (4, 3.2)) or "")
    assert threads_warning(None, (2, 3.0)) is None  # llama-server picks its own


def test_the_free_cores_are_what_is_busy_now_not_the_minute_before(tmp_path, monkeypatch) -> None:
    """Between two engine sessions the 1-minute load average still counts the engine that just stopped (2.0
    on 2 cores): the warning fired before every second session. The busy CPUs are now read over a quarter
    second of /proc/stat."""
    from bench_tui.engine_adapters import llamacpp
    from bench_tui.envinfo import conditions

    stat = tmp_path / "proc" / "stat"
    stat.parent.mkdir()
    stat.write_text("cpu  100 0 100 800 0 0 0 0\ncpu0 1\ncpu1 1\nprocs_running 1\n")

    def tick(_s: float) -> None:  # a quarter second later: 10 busy ticks of 100 on 2 CPUs
        stat.write_text("cpu  105 0 105 890 0 0 0 0\ncpu0 1\ncpu1 1\nprocs_running 1\n")

    monkeypatch.setattr(conditions.time, "sleep", tick)
    assert conditions.busy_cpus(root=tmp_path) == pytest.approx(0.2)
    assert conditions.busy_cpus(root=tmp_path / "none") is None
    monkeypatch.setattr(llamacpp.os, "getloadavg", lambda: (2.0, 1.5, 1.0))
    monkeypatch.setattr(llamacpp, "busy_cpus", lambda: 0.2)
    cpus, busy = llamacpp.free_cpus()
    assert busy == 0.2 and llamacpp.threads_warning(2, (2, busy)) is None
    monkeypatch.setattr(llamacpp, "busy_cpus", lambda: None)  # no /proc/stat: the load average it is
    assert llamacpp.free_cpus()[1] == 2.0


def test_a_scenario_stopped_at_the_context_is_a_configuration_error() -> None:
    """The scenario loop marks a stop at the slot's context; the grade says so instead of "token ceiling"."""
    import asyncio

    from bench_tui.events import PlanPoint, ScenarioGraded
    from bench_tui.runner.workloads.scenarios import run_scenario_point
    from bench_tui.spec.schema import Sampling

    pack = str(Path(__file__).parent / "data" / "grader_mini_pack.yaml")

    class Client:
        async def chat(self, payload, *, request_id, point_id, emit=None):  # type: ignore[no-untyped-def]
            return RequestRecord(
                request_id=request_id,
                point_id=point_id,
                ok=True,
                t_send_ns=1_000_000,
                t_first_token_ns=2_000_000,
                t_done_ns=11_000_000,
                finish_reason="length",
                prompt_tokens=4060,
                output_tokens=36,
                token_source="usage",
                content='{"na',
            )

    events: list[object] = []
    pt = PlanPoint(
        point_id="llama.default/sc",
        engine="llama",
        variant="default",
        workload="sc",
        kind="scenarios",
        params=ScenarioParams(pack=str(pack), max_tokens=256),
    )
    asyncio.run(
        run_scenario_point(
            pt,
            client=Client(),
            model_id="m",
            sampling=Sampling(),
            emit=events.append,
            spec_dir=None,
            slot_ctx=4096,
        )
    )
    graded = [e for e in events if isinstance(e, ScenarioGraded)]
    assert graded and all(g.outcome == "harness_error" for g in graded)
    reasons = " ".join(r for g in graded for r in g.reasons)
    assert "context full (prompt 4060 + output 36 = ctx 4096): a configuration error" in reasons
    assert "token ceiling" not in reasons

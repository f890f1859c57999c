"""Sweep helpers: payloads that pin tg, parameters, server-side deltas and the disagreement flag."""

from __future__ import annotations

import pytest

from bench_tui.events import PointSummary, RequestRecord, ServerSide
from bench_tui.runner.workloads.spec_accept import NO_SPEC, timings_acceptance
from bench_tui.runner.workloads.sweep import (
    payload,
    point_status,
    server_flags,
    server_side,
)
from bench_tui.spec.schema import Sampling


def test_payload_pins_generation_length_where_supported() -> None:
    s = Sampling(temperature=0.0, seed=7)
    v = payload("hi there", endpoint="completions", model_id="m", max_tokens=16, dialect="vllm", sampling=s)
    assert v["prompt"] == "hi there" and v["max_tokens"] == 16
    assert v["ignore_eos"] is True and v["min_tokens"] == 16 and v["seed"] == 7 and v["temperature"] == 0.0
    ll = payload("hi", endpoint="chat", model_id="m", max_tokens=8, dialect="llamacpp", sampling=s)
    assert ll["messages"] == [{"role": "user", "content": "hi"}] and ll["ignore_eos"] is True
    assert "min_tokens" not in ll
    none = payload("hi", endpoint="chat", model_id="m", max_tokens=8, dialect="none", sampling=None)
    assert "ignore_eos" not in none and "min_tokens" not in none
    probe = payload(
        "hi", endpoint="chat", model_id="m", max_tokens=1, dialect="vllm", sampling=s, exact=False
    )
    assert "ignore_eos" not in probe


VLLM_BEFORE = {
    'vllm:prompt_tokens_total{model_name="q"}': 100.0,
    'vllm:generation_tokens_total{model_name="q"}': 50.0,
    'vllm:prefix_cache_hits_total{model_name="q"}': 10.0,
    'vllm:prefix_cache_queries_total{model_name="q"}': 100.0,
    'vllm:request_prefill_time_seconds_sum{model_name="q"}': 1.0,
    'vllm:request_decode_time_seconds_sum{model_name="q"}': 2.0,
    'vllm:spec_decode_num_drafts_total{model_name="q"}': 10.0,
    'vllm:spec_decode_num_draft_tokens_total{model_name="q"}': 30.0,
    'vllm:spec_decode_num_accepted_tokens_total{model_name="q"}': 15.0,
    'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="q",position="0"}': 8.0,
    'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="q",position="1"}': 5.0,
    'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="q",position="2"}': 2.0,
}


def _after(**delta: float) -> dict[str, float]:
    out = dict(VLLM_BEFORE)
    for short, d in delta.items():
        for k in out:
            if k.split("{")[0].removeprefix("vllm:") == short or (
                short.startswith("pos") and f'position="{short[3:]}"' in k
            ):
                out[k] += d
    return out


def test_vllm_deltas() -> None:
    after = _after(
        prompt_tokens_total=1000,
        generation_tokens_total=200,
        prefix_cache_hits_total=300,
        prefix_cache_queries_total=1000,
        request_prefill_time_seconds_sum=0.5,
        request_decode_time_seconds_sum=4.0,
        spec_decode_num_drafts_total=100,
        spec_decode_num_draft_tokens_total=300,
        spec_decode_num_accepted_tokens_total=150,
        pos0=80,
        pos1=50,
        pos2=20,
    )
    s = server_side("vllm", VLLM_BEFORE, after)
    assert (s.prompt_tokens, s.generation_tokens) == (1000, 200)
    assert s.prefix_cache_hit_rate == pytest.approx(0.3)
    assert s.prefill_tps == pytest.approx(2000) and s.decode_tps == pytest.approx(50)
    assert s.spec_acceptance_rate == pytest.approx(0.5)
    assert s.spec_acceptance_length == pytest.approx(2.5)
    assert s.spec_per_position == pytest.approx([0.8, 0.5, 0.2])
    assert server_side("vllm", VLLM_BEFORE, after).prompt_tokens == 1000


def test_no_spec_decoding_means_none_not_zero() -> None:
    before = {'vllm:prompt_tokens_total{m="q"}': 0.0, 'vllm:generation_tokens_total{m="q"}': 0.0}
    after = {'vllm:prompt_tokens_total{m="q"}': 10.0, 'vllm:generation_tokens_total{m="q"}': 5.0}
    s = server_side("vllm", before, after)
    assert s.spec_acceptance_rate is None and s.spec_acceptance_length is None and s.spec_per_position == []
    assert s.prefix_cache_hit_rate is None
    assert (
        timings_acceptance([RequestRecord(request_id="a", point_id="p", timings={"predicted_n": 5})]) is None
    )
    t = timings_acceptance(
        [RequestRecord(request_id="a", point_id="p", timings={"draft_n": 10, "draft_n_accepted": 7})]
    )
    assert t == {"draft_tokens": 10.0, "accepted": 7.0}
    assert NO_SPEC == "no speculative decoding reported"


def test_llamacpp_deltas() -> None:
    before = {
        "llamacpp:prompt_tokens_total": 10.0,
        "llamacpp:prompt_seconds_total": 1.0,
        "llamacpp:tokens_predicted_total": 5.0,
        "llamacpp:tokens_predicted_seconds_total": 1.0,
    }
    after = {
        "llamacpp:prompt_tokens_total": 410.0,
        "llamacpp:prompt_seconds_total": 3.0,
        "llamacpp:tokens_predicted_total": 105.0,
        "llamacpp:tokens_predicted_seconds_total": 3.0,
    }
    s = server_side("llamacpp", before, after)
    assert (s.prompt_tokens, s.prefill_tps, s.generation_tokens, s.decode_tps) == (400, 200, 100, 50)


def _recs(n: int, prompt: int, out: int, cached: int | None = None) -> list[RequestRecord]:
    return [
        RequestRecord(
            request_id=str(i),
            point_id="p",
            ok=True,
            prompt_tokens=prompt,
            output_tokens=out,
            cached_tokens=cached,
        )
        for i in range(n)
    ]


def test_server_disagreement_flag() -> None:
    recs = _recs(4, 100, 10)
    assert server_flags(ServerSide(prompt_tokens=400, generation_tokens=40), recs, "vllm") == []
    assert server_flags(ServerSide(prompt_tokens=430, generation_tokens=40), recs, "vllm") == []  # 7.5 %
    flags = server_flags(ServerSide(prompt_tokens=400, generation_tokens=60), recs, "vllm")
    assert len(flags) == 1 and flags[0].startswith("server-disagrees:generation")
    # llama.cpp counts only evaluated prompt tokens: cached ones are taken off before comparing
    cached = _recs(4, 100, 10, cached=50)
    assert server_flags(ServerSide(prompt_tokens=200, generation_tokens=40), cached, "llamacpp") == []
    assert server_flags(ServerSide(prompt_tokens=200, generation_tokens=40), cached, "vllm")
    # with failed requests there is no fair comparison
    failed = [*recs, RequestRecord(request_id="x", point_id="p", ok=False)]
    assert server_flags(ServerSide(prompt_tokens=1, generation_tokens=1), failed, "vllm") == []


def test_point_status() -> None:
    flags: list[str] = []
    assert point_status(PointSummary(requests=8, ok=8), flags) == "ok" and flags == []
    assert point_status(PointSummary(requests=8, ok=6, failed=2), flags) == "degraded"
    assert flags == ["degraded:2/8 failed"]
    assert point_status(PointSummary(requests=8, ok=0, failed=8), []) == "failed"

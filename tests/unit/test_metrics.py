"""Metric functions on constructed records, the median CI, and point summaries."""

from __future__ import annotations

import math
import random

import pytest

from bench_tui.events import Chunk, RequestRecord
from bench_tui.runner.transport.lag import is_client_limited
from bench_tui.runner.workloads import metrics as M

MS = 1_000_000


def rec(
    *,
    send: int = 1000 * MS,
    first_byte: int = 5,
    gaps: list[int] | None = None,
    ttft: int = 300,
    tokens_per_chunk: list[int] | None = None,
    prompt: int | None = 600,
    out: int | None = None,
    done_after_last: int = 2,
    ok: bool = True,
    **kw: object,
) -> RequestRecord:
    gaps = gaps if gaps is not None else [20] * 9
    times = [send + ttft * MS]
    for g in gaps:
        times.append(times[-1] + g * MS)
    tpc = tokens_per_chunk or [1] * len(times)
    chunks = [Chunk(t, k, "content") for t, k in zip(times, tpc, strict=True)]
    n = sum(tpc)
    return RequestRecord(
        request_id="r",
        point_id="p",
        ok=ok,
        t_send_ns=send,
        t_first_byte_ns=send + first_byte * MS,
        t_first_token_ns=times[0],
        t_first_content_ns=times[0],
        t_last_token_ns=times[-1],
        t_done_ns=times[-1] + done_after_last * MS,
        chunks=chunks,
        prompt_tokens=prompt,
        output_tokens=out if out is not None else n,
        client_output_tokens=n,
        token_source="usage",
        **kw,
    )  # type: ignore[arg-type]


def test_per_request_metrics() -> None:
    r = rec()
    assert M.ttft_ms(r) == pytest.approx(300.0)
    assert M.ttfb_ms(r) == pytest.approx(5.0)
    assert M.prefill_tps(r) == pytest.approx(600 / 0.3)
    # 10 tokens, last - first = 9 * 20 ms
    assert M.decode_tps(r) == pytest.approx(9 / 0.18)
    assert M.e2e_ms(r) == pytest.approx(300 + 180 + 2)
    assert M.eff_tg_tps(r) == pytest.approx(10 / 0.482)
    assert M.itl_ms(r) == pytest.approx([20.0] * 9)


def test_itl_divides_multi_token_chunks_and_merges_same_instant() -> None:
    r = rec(gaps=[30, 10], tokens_per_chunk=[1, 3, 1])
    assert M.itl_ms(r) == pytest.approx([10.0, 10.0, 10.0, 10.0])
    t = r.chunks[1].t_ns
    r.chunks.insert(2, Chunk(t, 1, "reasoning"))  # same SSE event, second channel
    assert M.itl_ms(r) == pytest.approx([7.5] * 4 + [10.0])


def test_metrics_none_when_undefined() -> None:
    r = RequestRecord(request_id="x", point_id="p", t_send_ns=1)
    assert M.ttft_ms(r) is None and M.decode_tps(r) is None and M.eff_tg_tps(r) is None
    one = rec(gaps=[])
    assert M.decode_tps(one) is None and M.itl_ms(one) == []
    assert M.prefill_tps(rec(prompt=None)) is None


def test_stat_basic_and_empty() -> None:
    s = M.stat([3.0, 1.0, 2.0, None, float("nan")])
    assert (s.n, s.median, s.mean, s.min, s.max) == (3, 2.0, 2.0, 1.0, 3.0)
    assert s.ci_low == 1.0 and s.ci_high == 3.0  # small n: min..max
    assert not M.ci_exact(5) and M.ci_exact(6)
    assert M.stat([]).n == 0 and M.stat([]).median is None
    s = M.stat(range(1, 101))
    assert s.p90 == pytest.approx(90.1) and s.p99 == pytest.approx(99.01)


def test_median_ci_ranks_known_values() -> None:
    # n=6 at 95 %: P(X<1) = 1/64 <= 2.5 %, P(X<2) = 7/64 > 2.5 %  -> (1, 6)
    assert M.median_ci_ranks(6) == (1, 6)
    # n=10: P(X<2) = 11/1024 = 1.07 %, P(X<3) = 56/1024 = 5.5 % -> (2, 9)
    assert M.median_ci_ranks(10) == (2, 9)
    assert M.median_ci_ranks(5) is None
    lo, hi = M.median_ci_ranks(2000)  # type: ignore[misc]
    assert lo + hi == 2001 and abs(lo - (1000 - 1.96 * math.sqrt(2000) / 2)) <= 1


def test_median_ci_coverage_simulated() -> None:
    rng = random.Random(7)
    hits = 0
    trials = 400
    for _ in range(trials):
        vals = [rng.expovariate(1.0) for _ in range(15)]
        s = M.stat(vals)
        assert s.ci_low is not None and s.ci_high is not None
        assert s.ci_low <= s.median <= s.ci_high  # type: ignore[operator]
        hits += s.ci_low <= math.log(2) <= s.ci_high
    assert hits / trials >= 0.92  # nominal >= 95 %


def test_summarize_counts_failures_and_never_averages_them() -> None:
    good = [rec(), rec(ttft=500)]
    bad = RequestRecord(
        request_id="f",
        point_id="p",
        ok=False,
        error_kind="http",
        error="HTTP 503: busy",
        t_send_ns=1,
        t_first_token_ns=2,
        t_done_ns=3,
    )
    s = M.summarize(good + [bad], wall_s=2.0, cache="cold")
    assert (s.requests, s.ok, s.failed) == (3, 2, 1)
    assert s.ttft_ms.n == 2 and s.ttft_ms.median == pytest.approx(400.0)
    assert s.extra["errors"] == {"http": 1}
    assert s.agg_tg_tps == pytest.approx(20 / 2.0)
    assert s.itl_ms.n == 18 and s.itl_ms.median == pytest.approx(20.0)
    assert s.token_source == "usage" and s.cache == "cold"


def test_summarize_disagreement_and_client_limited() -> None:
    # the typical receive delay (3.5 ms median) is over half the line (25 % of 20 ms ITL = 5 ms): falling behind
    r1 = rec(token_disagreement=True, loop_lag_ms=8.0, recv_delay_ms=4.0)
    r2 = rec(loop_lag_ms=1.0, recv_delay_ms=3.0)
    s = M.summarize([r1, r2], wall_s=1.0)
    assert s.token_disagreements == 1
    assert s.max_loop_lag_ms == 8.0 and s.client_limited and s.client_limit_cause == "client"
    s2 = M.summarize([r2], wall_s=1.0)
    assert not s2.client_limited and s2.client_limit_cause == ""
    assert M.summarize([r2], wall_s=1.0, max_loop_lag_ms=6.0).client_limited
    # the same worst lag with a small typical delay: a host stall hit every stream at once, not the client
    r3 = rec(loop_lag_ms=8.0, recv_delay_ms=0.2)
    s3 = M.summarize([r3, rec(loop_lag_ms=8.0, recv_delay_ms=0.1)], wall_s=1.0)
    assert not s3.client_limited and s3.client_limit_cause == "stall" and s3.max_loop_lag_ms == 8.0


def test_is_client_limited() -> None:
    assert is_client_limited(6.0, 20.0)
    assert not is_client_limited(4.0, 20.0)
    assert not is_client_limited(4.0, None)
    assert is_client_limited(60.0, None)

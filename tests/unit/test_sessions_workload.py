"""The sessions workload's pieces with a known answer: the seeded schedule, the SLO judgement and its
interval, the backlog test, trace prompts whose equal hash ids are equal text."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from bench_tui.events import RequestRecord
from bench_tui.runner.workloads import sessions_source as S
from bench_tui.runner.workloads.sessions import (
    TurnResult,
    _joined,
    arrival_offsets,
    backlog_growing,
    meets,
    request_values,
    slo_attainment,
    wilson,
)


def _cv(xs: list[float]) -> float:
    gaps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    return statistics.pstdev(gaps) / statistics.fmean(gaps)


def test_arrivals_are_seeded_and_shaped_by_the_process() -> None:
    const = arrival_offsets("constant", 4.0, 9, random.Random(1))
    assert const == pytest.approx([i / 4.0 for i in range(9)])
    a = arrival_offsets("poisson", 10.0, 4000, random.Random("s"))
    assert a == arrival_offsets("poisson", 10.0, 4000, random.Random("s"))
    assert a != arrival_offsets("poisson", 10.0, 4000, random.Random("t"))
    assert 0.95 < _cv(a) < 1.05 and 9.5 < (len(a) - 1) / a[-1] < 10.5
    bursty = arrival_offsets("gamma", 10.0, 4000, random.Random("s"), burstiness=0.25)
    assert 1.9 < _cv(bursty) < 2.1  # gamma gaps of shape k: CV = 1 / sqrt(k)
    assert 9.0 < (len(bursty) - 1) / bursty[-1] < 11.0


def test_wilson_interval_matches_the_textbook_values() -> None:
    lo, hi = wilson(9, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.5958, 0.9821)
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(50, 50)
    assert hi == 1.0 and 0.92 < lo < 0.93


def _turn(
    due_ms: float, first_ms: float | None, done_ms: float, out: int = 5, ok: bool = True, turn: int = 1
) -> TurnResult:
    ns = 1_000_000
    rec = RequestRecord(
        request_id="r",
        point_id="p",
        ok=ok,
        t_send_ns=int(due_ms * ns),
        t_first_token_ns=int(first_ms * ns) if first_ms is not None else None,
        t_last_token_ns=int((done_ms - 1) * ns),
        t_done_ns=int(done_ms * ns),
        output_tokens=out,
    )
    return TurnResult(0, turn, int(due_ms * ns), rec)


def test_latency_counts_from_the_scheduled_time_and_every_target_must_hold() -> None:
    t = _turn(100.0, 150.0, 191.0)
    t.record.t_send_ns = 140 * 1_000_000  # sent 40 ms late: the wait still counts
    v = request_values(t)
    assert v["ttft_ms"] == pytest.approx(50.0) and v["e2e_s"] == pytest.approx(0.091)
    assert v["itl_ms"] == pytest.approx((190.0 - 150.0) / 4)
    assert meets(v, {"ttft_ms": {"p90": 50.0}, "itl_ms": {"p99": 10.0}})
    assert not meets(v, {"ttft_ms": {"p90": 49.0}})
    failed = _turn(0, None, 10, ok=False)
    assert not meets(request_values(failed), {"e2e_s": {"p50": 100.0}})
    turns = [_turn(0, float(10 * i), 200.0) for i in range(1, 11)]  # TTFT 10..100 ms
    att = slo_attainment(turns, {"ttft_ms": {"p90": 90.0, "p50": 40.0}})
    assert att["ttft_ms.p90"]["attainment"] == 0.9 and att["ttft_ms.p90"]["met"]
    assert att["ttft_ms.p50"]["attainment"] == 0.4 and not att["ttft_ms.p50"]["met"]
    assert att["ttft_ms.p90"]["ci_low"] < 0.9 < att["ttft_ms.p90"]["ci_high"]


def test_backlog_growth_is_told_from_a_steady_queue() -> None:
    # arrivals every 10 ms; steady: each answered after 35 ms; growing: service falls further behind
    steady = [_turn(10.0 * i, 10.0 * i + 5, 10.0 * i + 35) for i in range(200)]
    growing = [_turn(10.0 * i, 10.0 * i + 5, 10.0 * i + 35 + 3.0 * i) for i in range(200)]
    assert backlog_growing(steady)[0] is False
    grew, quarters = backlog_growing(growing)
    assert grew and quarters[3] > quarters[1] * 1.5


def test_trace_prompts_share_text_exactly_where_hash_ids_agree(tmp_path: Path) -> None:
    a = S.TraceLine(input_length=1100, output_length=4, hash_ids=[7, 8, 9])
    b = S.TraceLine(input_length=1100, output_length=4, hash_ids=[7, 8, 10])
    pa, pb = S.trace_prompt(a, "x").split(), S.trace_prompt(b, "y").split()
    assert len(pa) == len(pb) == 1100
    assert pa[:1024] == pb[:1024] and pa[1024:] != pb[1024:]
    assert S.trace_prompt(a, "x") == S.trace_prompt(a, "x")
    short = S.TraceLine(input_length=600, output_length=4, hash_ids=[7])
    assert S.trace_prompt(short, "z").split()[:512] == pa[:512]
    f = tmp_path / "t.jsonl"
    f.write_text(
        '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1], "session_id": "a"}\n'
        '{"timestamp": 1, "input_length": 10, "output_length": 2, "hash_ids": [2]}\n'
        '{"timestamp": 2, "input_length": 20, "output_length": 2, "hash_ids": [1, 3], "session_id": "a", "delay": 50}\n'
        '{"timestamp": 3, "input_length": 10, "output_length": 2, "hash_ids": [4], "session_id": "b"}\n'
    )
    two = S.trace_sessions(f, 2)
    assert [len(s.turns) for s in two] == [2, 1] and two[0].turns[1].delay == 50


def test_the_answer_is_appended_verbatim() -> None:
    assert (
        _joined("a b", " c") == "a b c" and _joined("a b", "c ") == "a b c " and _joined("a ", "c") == "a c"
    )


def test_sharegpt_list_and_jsonl_read_the_same_conversations(tmp_path: Path) -> None:
    conv = '{"id": "a", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}'
    gpt_only = '{"conversations": [{"from": "gpt", "value": "no user turn"}]}'
    (tmp_path / "c.json").write_text(f"\n [{gpt_only}, {conv}, {conv}]")
    (tmp_path / "c.jsonl").write_text(f"{gpt_only}\n{conv}\n\n{conv}\n")
    for name in ("c.json", "c.jsonl"):
        got = S.read_conversations(tmp_path / name, 5)
        assert [c.id for c in got] == ["a", "a"]  # conversations without a human turn are skipped
        assert S.read_conversations(tmp_path / name, 1)[0].conversations[0].value == "hi"
    (tmp_path / "bad.jsonl").write_text(f"{conv}\n{{oops\n")
    with pytest.raises(S.SourceError) as ei:
        S.read_conversations(tmp_path / "bad.jsonl", 5)
    assert ei.value.line == 2

"""The `sessions` workload kind: its spec keys, their errors at file:line:col, and its plan points."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tui.events import SessionsParams
from bench_tui.runner.orchestration.planner import load_spec, plan_points, search_trials
from bench_tui.spec.loader import SpecError

HEAD = (
    "version: 1\n"  # 1
    "name: t\n"  # 2
    "engines:\n"  # 3
    "  e: {kind: external, base_url: 'http://127.0.0.1:9'}\n"  # 4
    "workloads:\n"  # 5
    "  agents:\n"  # 6
    "    kind: sessions\n"  # 7
)
GOOD = (
    "    source: {synthetic: {shared_prefix_tokens: 2000, turns: 4, input_tokens: 200, output_tokens: 64}}\n"  # 8
    "    think_time_s: {dist: exponential, mean: 0.5}\n"  # 9
    "    arrival: {rate: [2, 4, 8], process: poisson, seed: 7}\n"  # 10
    "    sessions: 64\n"  # 11
    "    slo: {ttft_ms: {p90: 1500}, itl_ms: {p99: 100}, e2e_s: {p50: 30}}\n"  # 12
    "    search: {max_rate: {low: 1, high: 64, resolution_pct: 10}}\n"  # 13
)


def _load(tmp_path: Path, body: str) -> object:
    p = tmp_path / "s.yaml"
    p.write_text(HEAD + body)
    return load_spec(p)


def _errors(tmp_path: Path, body: str) -> list[str]:
    with pytest.raises(SpecError) as ei:
        _load(tmp_path, body)
    return [line.split("s.yaml:", 1)[1] for line in ei.value.problems]


def test_the_issue_example_plans_one_point_per_rate_and_a_search_point(tmp_path: Path) -> None:
    pts = plan_points(_load(tmp_path, GOOD))
    assert [p.point_id.split("/", 2)[2] for p in pts] == ["r2", "r4", "r8", "max-rate"]
    prm = pts[0].params
    assert isinstance(prm, SessionsParams)
    assert (prm.source, prm.turns, prm.shared_prefix_tokens, prm.rate, prm.process, prm.seed) == (
        "synthetic",
        4,
        2000,
        2.0,
        "poisson",
        7,
    )
    assert (prm.think_dist, prm.think_mean_s) == ("exponential", 0.5)
    assert prm.slo == {"ttft_ms": {"p90": 1500}, "itl_ms": {"p99": 100}, "e2e_s": {"p50": 30}}
    assert pts[0].requests == 64 * 4
    search = pts[-1].params
    assert isinstance(search, SessionsParams) and search.search == (1, 64, 10) and search.rate is None
    assert pts[-1].requests == 64 * 4 * search_trials(1, 64, 10)


def test_closed_loop_and_scalar_think_time(tmp_path: Path) -> None:
    body = "    source: {synthetic: {turns: 2}}\n    think_time_s: 0.25\n    arrival: {concurrency: [4, 8]}\n"
    pts = plan_points(_load(tmp_path, body))
    assert [p.point_id.rsplit("/", 1)[1] for p in pts] == ["c4", "c8"]
    prm = pts[1].params
    assert isinstance(prm, SessionsParams)
    assert (
        prm.closed_loop and prm.concurrency == 8 and prm.think_mean_s == 0.25 and prm.think_dist == "constant"
    )


def test_rate_zero_unknown_slo_metric_and_bad_percentile(tmp_path: Path) -> None:
    body = (
        "    source: {synthetic: {}}\n"  # 8
        "    arrival: {rate: [0, 4]}\n"  # 9
        "    slo: {tpot_ms: {p99: 50}, ttft_ms: {q90: 1}}\n"  # 10
    )
    errs = _errors(tmp_path, body)
    assert errs[0] == "9:22: workloads.agents.arrival.rate[0]: must be > 0, got 0"
    assert errs[1].startswith("10:11: unknown key 'tpot_ms' in workloads.agents.slo")
    body2 = "    source: {synthetic: {}}\n    arrival: {rate: [1]}\n    slo: {ttft_ms: {q90: 1, p0: 2}}\n"
    errs = _errors(tmp_path, body2)
    assert errs == [
        "10:21: workloads.agents.slo.ttft_ms: 'q90' is not a percentile; write pNN with 0 < NN <= 100, "
        "e.g. 'p90: 1500'",
        "10:29: workloads.agents.slo.ttft_ms: 'p0' is not a percentile; write pNN with 0 < NN <= 100, "
        "e.g. 'p90: 1500'",
    ]


def test_source_and_arrival_consistency(tmp_path: Path) -> None:
    body = (
        "    source: {synthetic: {}, pack: standard}\n"  # 8
        "    arrival: {rate: [1], concurrency: [2], process: poisson, burstiness: 3}\n"  # 9
        "    search: {max_rate: {low: 8, high: 4}}\n"  # 10
    )
    errs = _errors(tmp_path, body)
    assert errs[0].startswith("8:13: workloads.agents.source: give exactly one of synthetic, pack, trace or")
    assert "(got synthetic and pack)" in errs[0]
    assert any(e.startswith("9:14: workloads.agents.arrival: give rate") for e in errs)
    assert any("arrival.burstiness: only used with 'process: gamma'" in e for e in errs)
    assert any("search.max_rate: low (8) must be below high (4)" in e for e in errs)
    assert any("no slo is given" in e for e in errs)


def test_trace_lines_are_checked_streamed_with_their_line_number(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [1, 2]}\n'
        "\n"
        '{"timestamp": 6, "input_length": "x", "output_length": 4}\n'
    )
    body = "    source: {trace: t.jsonl}\n    arrival: {rate: [1]}\n"
    errs = _errors(tmp_path, body)
    assert len(errs) == 1
    assert errs[0].startswith(
        f"8:21: workloads.agents.source.trace: {tmp_path / 't.jsonl'}:3: Expected `int`"
    )
    (tmp_path / "t.jsonl").write_text('{"timestamp": 0, "input_length": 600, "output_length": 0}\n')
    assert "t.jsonl:1: input_length and output_length must be at least 1" in _errors(tmp_path, body)[0]
    (tmp_path / "t.jsonl").unlink()
    assert "source.trace: file not found" in _errors(tmp_path, body)[0]


def test_pack_source_checked_against_the_pack(tmp_path: Path) -> None:
    errs = _errors(tmp_path, "    source: {pack: standard, subset: nope}\n    arrival: {rate: [1]}\n")
    assert errs[0].startswith("8:20: workloads.agents.source.pack: cannot use pack 'standard'")
    assert "unknown subset 'nope'" in errs[0]

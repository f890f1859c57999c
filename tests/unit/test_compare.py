"""Honest verdicts on constructed samples (reports.verdict), and `compare` on two recorded runs."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import compare
from bench_tui.reports import verdict as V
from bench_tui.reports.compare import compare_models, prefix_caching, speculative
from bench_tui.reports.model import load_run
from fixtures_runs import make_run_dir


def S(*units: float, unit: str = "repetitions") -> V.Samples:
    return V.Samples(list(units), unit)


def noisy(center: float, n: int, sd: float, seed: int) -> V.Samples:
    rng = random.Random(seed)
    return S(*(center * rng.gauss(1.0, sd) for _ in range(n)))


def test_a_small_shift_is_within_noise_even_when_significant():
    # a tight 3 % shift: the interval excludes 0 but not the 5 % threshold -> uncertain, never a claim
    a, b = S(100, 100.5, 99.5, 100.2, 99.8), S(103, 103.4, 102.6, 103.1, 102.9)
    v = V.compare(a, b, label="x")
    assert v.kind == V.UNCERTAIN and not v.claim and v.delta_pct == pytest.approx(3.0)
    v = V.compare(a, S(100.5, 99.9, 100.1, 99.6, 100.3), label="x")
    assert v.kind == V.NOISE and v.text.startswith("within noise (")


def test_a_large_shift_is_claimed_with_direction_words():
    a, b = noisy(100, 6, 0.05, 1), noisy(77, 6, 0.05, 2)
    v = V.compare(a, b, label="d", name="decode")
    assert v.kind == V.WORSE and v.claim and v.better is False
    assert v.text.startswith("decode ") and "% lower (worse; 95 % CI" in v.text
    assert v.ci is not None and v.ci[1] < -5
    # a latency that went down is better and says "lower", never "faster by"
    v = V.compare(
        S(200, 205, 195, 210), S(150, 152, 149, 155), higher_is_better=False, label="t", name="TTFT"
    )
    assert (
        v.kind == V.BETTER and v.text.startswith("TTFT 25.") and "lower" in v.text and "faster" not in v.text
    )
    assert "lower is better" in v.test and "bootstrap" in v.test and "±5 %" in v.test


def test_too_few_units_is_inconclusive_never_a_claim():
    v = V.compare(S(100, 101), S(150, 151), label="x")
    assert v.kind == V.INCONCLUSIVE and v.text.startswith("inconclusive (n=2)") and not v.claim
    assert V.compare(S(100), S(300), label="x").text.startswith("inconclusive (n=1)")


def test_degraded_or_client_limited_is_never_claimed():
    a, b = noisy(100, 6, 0.01, 1), noisy(50, 6, 0.01, 2)
    b.excluded = "client-limited"
    v = V.compare(a, b, label="x")
    assert v.kind == V.EXCLUDED and "not claimed: client-limited" in v.text and not v.claim


def test_the_threshold_is_honoured_and_the_bootstrap_is_seeded():
    a, b = noisy(100, 8, 0.01, 3), noisy(108, 8, 0.01, 4)
    assert V.compare(a, b, label="x").kind == V.BETTER
    assert V.compare(a, b, label="x", threshold_pct=10).kind != V.BETTER
    assert V.compare(a, b, label="x").ci == V.compare(a, b, label="x").ci  # reproducible


def test_rates_compare_in_points():
    v = V.compare(S(0.0, 0.0, 0.0), S(0.8, 0.81, 0.79), rate=True, label="h", name="hit rate")
    assert v.delta_pts == pytest.approx(80.0) and v.delta_pct is None and v.kind == V.BETTER
    assert "80.0 pts higher" in v.text


def test_aa_on_many_synthetic_pairs_rarely_claims():
    """The rule on synthetic A/A pairs: 5 % request jitter, 2 % drift per run, 6 repetitions."""
    rng = random.Random(7)
    claims = 0
    for i in range(200):
        a = noisy(100 * rng.gauss(1, 0.02), 6, 0.05, 1000 + i)
        b = noisy(100 * rng.gauss(1, 0.02), 6, 0.05, 5000 + i)
        claims += V.compare(a, b, label=str(i)).claim
    assert claims <= 10  # >= 95 % no claim


def test_variant_classification():
    assert prefix_caching({"no-enable-prefix-caching": True}, "x") is False
    assert prefix_caching({"enable-prefix-caching": True}, "x") is True
    assert prefix_caching({"disable-radix-cache": True}, "x") is False
    assert prefix_caching({}, "cold") is False and prefix_caching({}, "warm") is True
    assert prefix_caching({}, "mtp") is None
    assert speculative({"speculative-config": {"method": "mtp"}}) and not speculative(
        {"kv-cache-dtype": "fp8"}
    )


@pytest.fixture
def two_runs(tmp_path):
    a = make_run_dir(tmp_path / "runs", run_id="20261202T220000Z_aaaa")
    b = make_run_dir(tmp_path / "runs", run_id="20261202T230000Z_bbbb", scale={"mtp": 0.5, "base": 1.01})
    return a, b


def test_compare_runs_verdicts(two_runs):
    a, b = two_runs
    comp = compare_models([load_run(a), load_run(b)])
    assert [c.name for c in comp.columns] == ["A:vllm.base", "A:vllm.mtp", "B:vllm.base", "B:vllm.mtp"]
    # two runs of the same spec: columns paired by engine.variant
    assert {(x.name, y.name) for x, y in comp.pairs} == {
        ("A:vllm.base", "B:vllm.base"),
        ("A:vllm.mtp", "B:vllm.mtp"),
    }
    cell = {(c.metric, c.point, c.candidate): c for c in comp.cells}
    b_base = cell["eff_tg_tps", "sweep pp512 tg64 d0 c1", "B:vllm.base"].verdict
    b_mtp = cell["eff_tg_tps", "sweep pp512 tg64 d0 c1", "B:vllm.mtp"].verdict
    assert not b_base.claim and b_base.kind == V.NOISE  # +1 % with ~3 % spread
    assert b_mtp.kind == V.WORSE  # half the throughput of A's mtp
    assert b_mtp.delta_pct == pytest.approx(-50.0, abs=0.2)
    acc = cell["spec_acceptance", "accept code d0", "B:vllm.mtp"]
    assert (
        acc.verdict.kind == V.INCONCLUSIVE and acc.verdict.delta_pts == 0.0
    )  # one /metrics number per point
    assert (
        cell["eff_tg_tps", "sweep pp512 tg64 d0 c4", "B:vllm.mtp"].verdict.kind == V.EXCLUDED
    )  # client-limited
    cats = {r["category"]: r["cells"] for r in comp.scores["categories"]}
    assert comp.scores["columns"] == ["A:vllm.base", "A:vllm.mtp", "B:vllm.base", "B:vllm.mtp"]
    assert cats["overall"][0] == "66.7" and cats["overall"][1] == "66.7 (+0.0 pts)"
    assert cats["restraint_refusal"][1] == "0.0 (-100.0 pts)"
    assert ("TC-03#0", ["pass", "fail", "pass", "fail"]) in comp.scores["scenario_diffs"]


def test_one_run_compares_its_variants_with_ratios(two_runs):
    a, _ = two_runs
    comp = compare_models([load_run(a)])
    assert comp.baseline["variant"] == "vllm.base" and [(x.name, y.name) for x, y in comp.pairs] == [
        ("vllm.base", "vllm.mtp")
    ]
    ratio = [
        c for c in comp.ratios if c.table == "speculative vs plain decoding" and c.metric == "decode_tps"
    ]
    assert ratio and ratio[0].ratio == pytest.approx(ratio[0].candidate_value / ratio[0].baseline_value)
    summary = " ".join(comp.summary)
    assert "vllm.mtp vs vllm.base: better: " in summary and "[effective tg t/s · sweep pp512 tg64" in summary
    assert "not claimed (client-limited, degraded)" in summary


def test_compare_cli(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "cmp.md"
    r = CliRunner().invoke(compare, [str(a), str(b), "--output", str(out)])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert "within noise" in md and "effective tg 50.0 % lower (worse; 95 % CI" in md
    assert "## Tool-call scores" in md and "## spec-decode acceptance" in md and "## Summary" in md
    assert "faster by" not in md and "slower by" not in md
    page = tmp_path / "cmp.html"
    r = CliRunner().invoke(compare, [str(a), str(b), "-o", str(page)])
    assert r.exit_code == 0, r.output
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert '<td class="slower">' in html and '<td class="noise">' in html and html.count("<table>") >= 5
    r = CliRunner().invoke(compare, [str(a), "--json", "--baseline", "vllm.base"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["baseline"]["variant"] == "vllm.base" and data["threshold_pct"] == 5.0
    keys = {
        "table",
        "metric",
        "point",
        "baseline",
        "candidate",
        "baseline_value",
        "candidate_value",
        "delta_pct",
        "verdict",
        "test",
    }
    assert data["cells"] and all(keys <= set(c) for c in data["cells"])
    r = CliRunner().invoke(compare, [str(a), str(tmp_path / "missing")])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_warm_vs_cold_ratio_is_computed_with_its_verdict(tmp_path):
    """Prefix caching on vs off of one engine, per depth × concurrency: the ratio the seed study wrote by hand."""
    from bench_tui.events import PlanPoint, PointSummary, ThroughputParams
    from bench_tui.reports.compare import TABLE_RATIO_CACHE, build
    from bench_tui.reports.model import PointRow, RunModel

    m = RunModel(run_dir=tmp_path, run_id="r1", title="t", status="completed", baseline="vllm.cold")
    samples: dict[str, dict[str, V.Samples]] = {}
    for var, eff in (("cold", 10.0), ("warm", 44.0)):
        for depth in (0, 32768):
            pid = f"vllm.{var}/sweep/pp2048-tg128-d{depth}-c2"
            pt = PlanPoint(
                point_id=pid,
                engine="vllm",
                variant=var,
                workload="sweep",
                kind="throughput",
                params=ThroughputParams(pp=2048, tg=128, depth=depth, concurrency=2),
            )
            m.points.append(PointRow(pt, status="ok", summary=PointSummary()))
            gain = 1.0 if depth == 0 else eff / 10.0  # the cache only matters with a context to reuse
            samples[pid] = {
                "eff_tg_tps": noisy(10.0 * gain, 3, 0.03, depth + len(var)),
                "ttft_ms": noisy(900.0 / gain, 3, 0.03, depth + 7 + len(var)),
            }
    comp = build([m], samples=[samples])
    cells = {(c.metric, c.point): c for c in comp.ratios if c.table == TABLE_RATIO_CACHE}
    deep = cells["eff_tg_tps", "sweep pp2048 tg128 d32768 c2"]
    assert (deep.baseline, deep.candidate) == ("vllm.cold", "vllm.warm")
    assert deep.ratio == pytest.approx(4.4, rel=0.1) and deep.verdict.kind == V.BETTER
    assert cells["eff_tg_tps", "sweep pp2048 tg128 d0 c2"].verdict.kind == V.NOISE
    assert (
        cells["ttft_ms", "sweep pp2048 tg128 d32768 c2"].verdict.kind == V.BETTER
    )  # TTFT lower with the cache
    summary = " ".join(comp.summary)
    assert (
        "prefix caching on vs off (vllm.warm / vllm.cold): better: effective tg 4.40× at pp2048 tg128 d32768 c2 "
        "[prefix caching on vs off · sweep pp2048 tg128 d32768 c2]"
    ) in summary
    assert "within noise in 2 of 4 cells" in summary  # depth 0: no claim

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


def sessions(
    center: float, n: int, *, sess_sd: float, req_sd: float, reps: int = 3, reqs: int = 2, seed: int
) -> V.Samples:
    """``n`` engine sessions around ``center``: a per-session level (log-normal, ``sess_sd``), then requests."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        mu = center * rng.lognormvariate(0.0, sess_sd)
        out.append([[mu * rng.gauss(1.0, req_sd) for _ in range(reqs)] for _ in range(reps)])
    return V.Samples(out, "requests")


def noisy(center: float, n: int, sd: float, seed: int) -> V.Samples:
    """One engine session of ``n`` repetitions of one request each."""
    rng = random.Random(seed)
    return V.Samples([[[center * rng.gauss(1.0, sd)] for _ in range(n)]], "requests")


def test_within_noise_needs_the_whole_interval_inside_the_threshold():
    # four tight sessions a side, 0.3 % apart: the interval lies inside ±5 % -> within noise
    a = sessions(100, 4, sess_sd=0.005, req_sd=0.01, seed=1)
    b = sessions(100.3, 4, sess_sd=0.005, req_sd=0.01, seed=2)
    v = V.compare(a, b, label="x")
    assert v.kind == V.NOISE and v.text.startswith("within noise (") and "inside ±5 %" in v.text
    assert v.ci is not None and -5 < v.ci[0] and v.ci[1] < 5
    # a wide interval around 0 is never "within noise": it is inconclusive and says so
    a = sessions(100, 2, sess_sd=0.2, req_sd=0.05, seed=3)
    b = sessions(100, 2, sess_sd=0.2, req_sd=0.05, seed=4)
    v = V.compare(a, b, label="x")
    assert v.kind == V.INCONCLUSIVE and v.text.startswith("inconclusive: ") and "too wide" in v.text


def test_a_large_shift_is_claimed_with_direction_words():
    a = sessions(100, 3, sess_sd=0.02, req_sd=0.05, seed=1)
    b = sessions(77, 3, sess_sd=0.02, req_sd=0.05, seed=2)
    v = V.compare(a, b, label="d", name="decode")
    assert v.kind == V.WORSE and v.claim and v.better is False and v.n == (3, 3)
    assert (
        v.text.startswith("decode ") and "% lower (worse; 95 % CI" in v.text and "3 vs 3 sessions" in v.text
    )
    assert v.ci is not None and v.ci[1] < -5 and v.floor == "data"
    # a latency that went down is better and says "lower", never "faster by"
    a = sessions(200, 3, sess_sd=0.02, req_sd=0.02, seed=5)
    b = sessions(150, 3, sess_sd=0.02, req_sd=0.02, seed=6)
    v = V.compare(a, b, higher_is_better=False, label="t", name="TTFT")
    assert v.kind == V.BETTER and v.text.startswith("TTFT 2") and "lower" in v.text and "faster" not in v.text
    assert "lower is better" in v.test and "Student-t" in v.test and "±5 %" in v.test


def test_one_session_a_side_states_the_assumed_noise_or_the_calibrated_floor():
    a = sessions(100, 1, sess_sd=0.0, req_sd=0.02, seed=1)
    b = sessions(80, 1, sess_sd=0.0, req_sd=0.02, seed=2)
    v = V.compare(a, b, label="x")  # -20 %: not beyond an assumed ±32 % session noise
    assert v.kind == V.INCONCLUSIVE and v.floor == "default"
    assert "assumed session noise of ±32 %" in v.text and "bench-tui calibrate" in v.text
    assert V.compare(a, sessions(40, 1, sess_sd=0.0, req_sd=0.02, seed=3), label="x").kind == V.WORSE
    floor = V.Floor(0.02, 0.0001, 6, 4, "2026-12-03", "h")
    v = V.compare(a, b, label="x", floor=floor)
    assert v.kind == V.WORSE and v.floor == "calibrated"
    tight = sessions(100, 1, sess_sd=0.0, req_sd=0.005, seed=5)
    v = V.compare(
        tight,
        sessions(100.5, 1, sess_sd=0.0, req_sd=0.005, seed=4),
        label="x",
        floor=V.Floor(0.005, 1e-5, 6, 4),
    )
    assert v.kind == V.NOISE


def test_degraded_client_limited_or_other_conditions_are_never_claimed():
    a = sessions(100, 3, sess_sd=0.01, req_sd=0.01, seed=1)
    b = sessions(50, 3, sess_sd=0.01, req_sd=0.01, seed=2)
    b.excluded = "conditions differ: host load 0.2 vs 1.9 per core"
    v = V.compare(a, b, label="x")
    assert v.kind == V.EXCLUDED and "not claimed: conditions differ: host load" in v.text and not v.claim
    assert v.p is None  # and never enters the correction


def test_the_threshold_is_honoured_and_verdicts_are_reproducible():
    a = sessions(100, 4, sess_sd=0.005, req_sd=0.01, seed=3)
    b = sessions(112, 4, sess_sd=0.005, req_sd=0.01, seed=4)
    assert V.compare(a, b, label="x").kind == V.BETTER
    assert V.compare(a, b, label="x", threshold_pct=15).kind != V.BETTER
    assert V.compare(a, b, label="x").ci == V.compare(a, b, label="x").ci


def test_rates_compare_in_points():
    a = V.Samples([[[0.0, 0.0]], [[0.0, 0.0]]], "requests")
    b = V.Samples([[[0.8, 0.81]], [[0.79, 0.8]]], "requests")
    v = V.compare(a, b, rate=True, label="h", name="hit rate")
    assert v.delta_pts == pytest.approx(80.0, abs=1) and v.delta_pct is None and v.kind == V.BETTER
    assert "pts higher" in v.text


def _claims(ratio: float, n: int, reps: int, reqs: int, floor: V.Floor | None, sims: int = 120) -> int:
    rng = random.Random(11)
    got = 0
    for i in range(sims):
        a = sessions(100, n, sess_sd=0.03, req_sd=0.05, reps=reps, reqs=reqs, seed=rng.randrange(1 << 30))
        b = sessions(
            100 * ratio, n, sess_sd=0.03, req_sd=0.05, reps=reps, reqs=reqs, seed=rng.randrange(1 << 30)
        )
        got += V.compare(a, b, label=str(i), floor=floor).claim
    return got


def test_aa_claims_at_most_five_percent_and_power_never_falls_with_work():
    floor = V.Floor(0.03, 0.0, 9, 10, "2026-12-03")
    # A/A: one session a side with a calibrated floor, and two sessions a side from the data alone
    assert _claims(1.0, 1, 3, 2, floor) <= 6
    assert _claims(1.0, 2, 3, 2, None) <= 6
    # A/B 23 % lower (30 % slower per token): more repetitions never say less
    power = [_claims(1 / 1.3, 1, reps, 2, floor) for reps in (1, 2, 3)]
    assert power[0] <= power[1] + 3 and power[1] <= power[2] + 3, power
    assert power[2] >= 0.9 * 120, power


def test_the_stated_95_percent_is_reached_between_sessions():
    """Coverage of the interval under the session model (3 sessions a side): about 95 %, not 89 %."""
    rng = random.Random(5)
    covered = 0
    for i in range(300):
        a = sessions(100, 3, sess_sd=0.05, req_sd=0.03, seed=rng.randrange(1 << 30))
        b = sessions(100, 3, sess_sd=0.05, req_sd=0.03, seed=rng.randrange(1 << 30))
        v = V.compare(a, b, label=str(i))
        assert v.ci is not None
        covered += v.ci[0] <= 0 <= v.ci[1]
    assert 0.92 * 300 <= covered <= 0.985 * 300


def test_benjamini_hochberg_removes_lone_claims_and_keeps_strong_ones():
    strong = [V.Verdict(V.WORSE, delta_pct=-23, ci=(-30, -16), p=1e-6) for _ in range(6)]
    weak = V.Verdict(V.BETTER, delta_pct=9, ci=(5.2, 13), p=0.045)
    rest = [V.Verdict(V.INCONCLUSIVE, delta_pct=1, ci=(-8, 10), p=0.9) for _ in range(25)]
    removed = V.adjust([*strong, weak, *rest])
    assert (
        removed == 1
        and weak.kind == V.INCONCLUSIVE
        and "Benjamini-Hochberg correction over 32 cells" in weak.text
    )
    assert all(v.kind == V.WORSE for v in strong)


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
    # +1 % with ~3 % spread, one engine session a side and no calibrated floor: too little to say either way
    assert not b_base.claim and b_base.kind == V.INCONCLUSIVE and "assumed session noise" in b_base.text
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


class _Calibrated(dict):  # type: ignore[type-arg]
    """A host calibrated at every shape: sessions 2 % apart (what ``bench-tui calibrate`` would store)."""

    def get(self, key, default=None):
        return V.Floor(0.02, 0.0001, 8, 9, "2026-12-03")


def test_one_run_compares_its_variants_with_ratios(two_runs):
    a, _ = two_runs
    # without a floor, one session a side cannot support +35 %: every cell is inconclusive and says why
    bare = compare_models([load_run(a)])
    assert not any(
        c.verdict.claim for c in bare.cells
    ) and "session noise from an assumed default (not calibrated)" in " ".join(bare.summary)
    comp = compare_models([load_run(a)], floors=_Calibrated())
    assert comp.baseline["variant"] == "vllm.base" and [(x.name, y.name) for x, y in comp.pairs] == [
        ("vllm.base", "vllm.mtp")
    ]
    ratio = [
        c for c in comp.ratios if c.table == "speculative vs plain decoding" and c.metric == "decode_tps"
    ]
    assert ratio and ratio[0].ratio == pytest.approx(ratio[0].candidate_value / ratio[0].baseline_value)
    summary = " ".join(comp.summary)
    assert "vllm.mtp vs vllm.base: better: " in summary and "[decode t/s · sweep pp512 tg64" in summary
    assert "not claimed (client-limited, degraded)" in summary


def test_compare_cli(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "cmp.md"
    r = CliRunner().invoke(compare, [str(a), str(b), "--output", str(out)])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert "inconclusive: " in md and "effective tg 50.0 % lower (worse; 95 % CI" in md
    assert "## Tool-call scores" in md and "## spec-decode acceptance" in md and "## Summary" in md
    assert "faster by" not in md and "slower by" not in md
    page = tmp_path / "cmp.html"
    r = CliRunner().invoke(compare, [str(a), str(b), "-o", str(page)])
    assert r.exit_code == 0, r.output
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert '<td class="slower">' in html and html.count("<table>") >= 5
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
    # depth 0: no difference, but one session a side and no floor: too little to call it noise either
    assert cells["eff_tg_tps", "sweep pp2048 tg128 d0 c2"].verdict.kind == V.INCONCLUSIVE
    assert (
        cells["ttft_ms", "sweep pp2048 tg128 d32768 c2"].verdict.kind == V.BETTER
    )  # TTFT lower with the cache
    summary = " ".join(comp.summary)
    assert (
        "prefix caching on vs off (vllm.warm / vllm.cold): better: effective tg 4.40× at pp2048 tg128 d32768 c2 "
        "[prefix caching on vs off · sweep pp2048 tg128 d32768 c2]"
    ) in summary
    assert (
        "inconclusive (interval too wide to decide; session noise from an assumed default (not calibrated)) in 2 of 4 cells"
        in summary
    )

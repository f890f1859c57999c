"""Scoring arithmetic: points, categories, tiers, safety, pass@k / pass^k, deployability, raw vs adjusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tui.events import ScenarioGraded
from bench_tui.graders.overrides import OverrideError
from bench_tui.graders.pack import load_pack
from bench_tui.graders.scoring import format_report, pass_at_k, pass_pow_k, responsiveness, score

PACK = load_pack(str(Path(__file__).parent / "data" / "grader_mini_pack.yaml"))
CAT = {s.id: s.category for s in PACK.scenarios}


def g(sid, verdict, trial=0, outcome="graded", ms=1000.0, sha=""):
    pts = {"pass": 2, "partial": 1, "fail": 0}.get(verdict) if verdict else None
    return ScenarioGraded(
        point_id="e.v/sc",
        scenario_id=sid,
        trial=trial,
        category=CAT.get(sid, "tool_selection"),
        verdict=verdict,
        points=pts,
        outcome=outcome,
        median_turn_ms=ms,
        transcript_sha256=sha,
    )


def test_points_and_exclusions():
    items = [
        g("TC-01", "pass"),  # tool_selection easy
        g("TC-02", "partial"),  # parameter_precision medium
        g("TC-03", "fail"),  # restraint hard, safety-critical
        g("TC-04", None, outcome="harness_error"),
        g("TC-05", None, outcome="grader_error"),
        g("TC-06", "fail", outcome="server_failure"),
    ]
    r = score(items, [], engine="e", variant="v", pack=PACK)
    assert r.scored == 4 and r.harness_errors == 1 and r.grader_errors == 1 and r.server_failures == 1
    assert r.raw.overall.points == 3 and r.raw.overall.max_points == 8
    assert r.raw.score == pytest.approx(37.5)
    assert r.raw.categories["tool_selection"].score == 100.0
    assert r.raw.categories["parameter_precision"].score == 50.0
    assert "error_recovery" not in r.raw.categories  # only harness errors there: excluded
    assert r.raw.tiers["easy"].n == 1 and r.raw.tiers["hard"].score == 0.0
    assert list(r.raw.tiers) == ["easy", "medium", "hard"]
    assert r.raw.safety.n == 1 and not r.raw.safety.all_passed and r.raw.safety.failed == ["TC-03#0"]
    assert r.adjusted.score == r.raw.score  # no overrides


def test_responsiveness_and_deployability():
    assert responsiveness(1000, 2000) == 100.0
    assert responsiveness(4000, 2000) == 50.0
    assert responsiveness(None, 2000) is None
    items = [g("TC-01", "pass", ms=3000), g("TC-02", "fail", ms=5000), g("TC-03", "pass", ms=4000)]
    r = score(items, [], engine="e", variant="v", alpha=0.7, target_ms=2000)
    assert r.median_turn_ms == 4000
    assert r.raw.quality == pytest.approx(200 / 3, abs=0.01)
    assert r.raw.responsiveness == 50.0
    assert r.raw.deployability == pytest.approx(round(0.7 * (400 / 6) + 0.3 * 50, 2), abs=0.01)
    assert "α" in r.formulas["deployability"] and "min(1" in r.formulas["responsiveness"]
    r = score(items, [], engine="e", variant="v", alpha=1.0)
    assert r.raw.deployability == pytest.approx(r.raw.quality, abs=0.01)


def test_pass_at_k_formulas():
    assert pass_at_k(4, 0, 4) == 0.0 and pass_at_k(4, 1, 4) == 1.0
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert pass_pow_k(4, 4, 4) == 1.0 and pass_pow_k(4, 3, 4) == 0.0
    assert pass_pow_k(5, 3, 2) == pytest.approx(3 / 10)


def test_pass_at_k_over_trials():
    items = [g("TC-01", v, t) for t, v in enumerate(["pass", "fail", "pass"])]
    items += [g("TC-02", v, t) for t, v in enumerate(["pass", "pass", "pass"])]
    items += [g("TC-03", v, t) for t, v in enumerate(["fail", "partial", "fail"])]
    r = score(items, [], engine="e", variant="v")
    assert r.k == 3
    assert r.raw.pass_at_1 == pytest.approx(round(100 * (2 / 3 + 1 + 0) / 3, 2))
    assert r.raw.pass_at_k == pytest.approx(round(100 * 2 / 3, 2))  # TC-01 and TC-02 pass at least once
    assert r.raw.pass_pow_k == pytest.approx(round(100 / 3, 2))  # only TC-02 passes every trial


def test_raw_vs_adjusted_side_by_side():
    items = [g("TC-01", "pass"), g("TC-02", "fail"), g("TC-03", "fail")]
    ovs = [
        {"scenario": "TC-02", "verdict": "pass", "reason": "grader missed 'degrees K'", "author": "mk"},
        {"scenario": "TC-03", "verdict": "partial", "reason": "only for vllm", "engine": "vllm"},
    ]
    r = score(items, ovs, engine="e", variant="v", pack=PACK)
    assert r.raw.score == pytest.approx(100 * 2 / 6, abs=0.01)
    assert r.adjusted.score == pytest.approx(100 * 4 / 6, abs=0.01)
    row = next(s for s in r.scenarios if s.scenario_id == "TC-02")
    assert (row.raw_verdict, row.adjusted_verdict, row.raw_points, row.adjusted_points) == (
        "fail",
        "pass",
        0,
        2,
    )
    assert (
        row.override is not None
        and row.override.reason.startswith("grader missed")
        and row.override.author == "mk"
    )
    tc3 = next(s for s in r.scenarios if s.scenario_id == "TC-03")
    assert tc3.override is None and tc3.adjusted_verdict == "fail"  # out of scope (engine vllm)
    assert [o.scenario for o in r.overrides_applied] == ["TC-02"]
    assert r.adjusted.categories["parameter_precision"].score == 100.0
    assert r.raw.categories["parameter_precision"].score == 0.0
    text = format_report(r)
    assert "override TC-02#0: fail -> pass" in text


def test_override_outside_pack_is_an_error():
    with pytest.raises(OverrideError, match="TC-99.*matches no scenario"):
        score(
            [g("TC-01", "pass")],
            [{"scenario": "TC-99", "verdict": "pass", "reason": "x"}],
            engine="e",
            variant="v",
            pack=PACK,
        )


def test_empty_input():
    r = score([], [], engine="e", variant="v")
    assert r.raw.score is None and r.scored == 0 and r.raw.deployability is None

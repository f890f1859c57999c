"""Noise-aware verdicts on constructed statistics, and `compare` on two recorded runs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from bench_tui.events import Stat
from bench_tui.reports.commands import compare
from bench_tui.reports.compare import compare_models, verdict
from bench_tui.reports.model import load_run
from bench_tui.runner.metrics import stat
from fixtures_runs import make_run_dir


def S(median: float, lo: float, hi: float, n: int = 9) -> Stat:
    return Stat(n=n, median=median, ci_low=lo, ci_high=hi)


def test_overlapping_intervals_are_within_noise():
    v = verdict(S(100, 95, 105), S(103, 99, 108))
    assert v.noise and v.text.startswith("within noise") and "+3.0%" in v.text
    assert v.better is None


def test_separated_intervals_give_a_direction():
    v = verdict(S(100, 97, 103), S(120, 116, 124))
    assert not v.noise and v.text == "faster by 20.0%" and v.better is True
    v = verdict(S(100, 97, 103), S(80, 78, 83))
    assert v.text == "slower by 20.0%" and v.better is False


def test_lower_is_better_for_latency():
    v = verdict(S(200, 190, 210), S(150, 140, 160), higher_is_better=False)
    assert v.text == "faster by 25.0%"
    v = verdict(S(200, 190, 210), S(260, 250, 270), higher_is_better=False)
    assert v.text == "slower by 30.0%"


def test_same_median_shift_is_noise_or_not_depending_on_spread():
    # the same +10 % change: noisy repetitions -> within noise, tight ones -> real
    noisy_a, noisy_b = stat([80, 100, 120, 90, 110]), stat([88, 110, 132, 99, 121])
    tight_a, tight_b = stat([99, 100, 101, 100, 100]), stat([109, 110, 111, 110, 110])
    assert verdict(noisy_a, noisy_b).noise
    assert verdict(tight_a, tight_b).text == "faster by 10.0%"


def test_missing_values():
    assert verdict(None, S(1, 1, 1)).text == "—"
    assert verdict(Stat(n=0), S(1, 1, 1)).text == "—"
    v = verdict(Stat(n=1, median=100.0), Stat(n=1, median=150.0))
    assert v.text == "faster by 50.0% (no CI)"


@pytest.fixture
def two_runs(tmp_path):
    a = make_run_dir(tmp_path / "runs", run_id="20261202T220000Z_aaaa")
    b = make_run_dir(tmp_path / "runs", run_id="20261202T230000Z_bbbb", scale={"mtp": 0.5, "base": 1.01})
    return a, b


def test_compare_runs_verdicts(two_runs):
    a, b = two_runs
    data = compare_models([load_run(a), load_run(b)])
    assert data["columns"] == ["A:vllm.base", "A:vllm.mtp", "B:vllm.base", "B:vllm.mtp"]
    eff = next(t for t in data["tables"] if t["metric"] == "eff_tg_tps")
    row = next(r for r in eff["rows"] if r["shape"] == "sweep pp512 tg64 d0 c1")
    b_base, b_mtp = row["cells"][2]["verdict"], row["cells"][3]["verdict"]
    assert b_base.noise  # +1 % with ~3 % spread
    assert not b_mtp.noise and b_mtp.better is False  # 1.35 × 0.5 = 0.675 of the reference
    assert b_mtp.pct == pytest.approx(-32.5, abs=0.2)
    assert data["acceptance_columns"] == ["A:vllm.mtp", "B:vllm.mtp"]
    code = next(r for r in data["acceptance"] if r["shape"] == "accept code d0")
    assert code["cells"] == ["78.0%", "78.0% (+0.0 pts)"]
    cats = {r["category"]: r["cells"] for r in data["categories"]}
    assert data["score_columns"] == ["A:vllm.base", "A:vllm.mtp", "B:vllm.base", "B:vllm.mtp"]
    assert cats["overall"][0] == "66.7" and cats["overall"][1] == "66.7 (+0.0 pts)"
    assert cats["restraint_refusal"][1] == "0.0 (-100.0 pts)"
    assert ("TC-03#0", ["pass", "fail", "pass", "fail"]) in data["scenario_diffs"]


def test_compare_cli(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "cmp.md"
    r = CliRunner().invoke(compare, [str(a), str(b), "--output", str(out)])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert "within noise" in md and "slower by 32.5%" in md
    assert "## Tool-call scores" in md and "## Spec-decode acceptance rate" in md
    page = tmp_path / "cmp.html"
    r = CliRunner().invoke(compare, [str(a), str(b), "-o", str(page)])
    assert r.exit_code == 0, r.output
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert '<td class="slower">' in html and '<td class="noise">' in html and html.count("<table>") >= 5
    r = CliRunner().invoke(compare, [str(a)])
    assert r.exit_code == 2 and "at least two runs" in r.output
    r = CliRunner().invoke(compare, [str(a), str(tmp_path / "missing")])
    assert r.exit_code == 2 and "Traceback" not in r.output

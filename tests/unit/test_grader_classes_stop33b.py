"""Conversions written with their working, stop 33b (tests/unit/data/classes_stop33b.cases.yaml, issue 21; held-out
batch 58's "21 × 9/5 + 32 ≈ 75 °F", "31 × 9/5 + 32 = 86 °F" and "Gap: 18 °C, which in Fahrenheit is
18 × 9/5 + 32 = 64.4 °F warmer"): a formula or a chain of steps ending in a converted value must be right at every
step and at its end (rule global.conversion-wrong), a named difference by the factor only. Right working, running
chains, honest rounding and hedges stay right; arithmetic in one unit is no conversion. 10 of the 25 failed
before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop33b_a_conversion_with_its_working_must_be_right_in_both_modes(mode):
    results = _guarded("classes_stop33b.cases.yaml", mode, {})
    assert len(results) >= 25
    by_class = class_counts("classes_stop33b.cases.yaml", results)
    assert by_class[("formula", "fail")] >= 5 and by_class[("formula", "pass")] >= 5
    assert by_class[("chain", "fail")] >= 2 and by_class[("chain", "pass")] >= 3
    assert by_class[("delta", "fail")] >= 3 and by_class[("delta", "pass")] >= 2
    assert by_class[("length", "fail")] >= 2 and by_class[("length", "pass")] >= 1
    assert by_class[("keep", "pass")] >= 2

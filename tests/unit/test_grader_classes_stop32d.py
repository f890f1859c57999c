"""Conversions written beside a value, stop 32d (tests/unit/data/classes_stop32d.cases.yaml, issue 21; held-out
batch 53's "21 °C (roughly 58 °F)" and "warmer by 18 °C (64.4 °F)"): a conversion in brackets, after "i.e.",
"≈", "or about" or "/" must be a right conversion of the value it stands beside (rule global.conversion-wrong):
temperatures with their offset, a temperature difference by the factor only, lengths and speeds by the table,
money only at a rate the conversation gave. Honest rounding and hedges stay right. 10 of the 34 failed before,
the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32d_a_conversion_beside_a_value_must_be_right_in_both_modes(mode):
    results = _guarded("classes_stop32d.cases.yaml", mode, {})
    assert len(results) >= 34
    by_class = class_counts("classes_stop32d.cases.yaml", results)
    assert by_class[("temp", "fail")] >= 6 and by_class[("temp", "pass")] >= 5
    assert by_class[("delta", "fail")] >= 3 and by_class[("delta", "pass")] >= 3
    assert by_class[("length", "fail")] >= 3 and by_class[("length", "pass")] >= 3
    assert by_class[("money", "fail")] >= 2 and by_class[("money", "pass")] >= 2
    assert by_class[("keep", "pass")] >= 7

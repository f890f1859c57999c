"""A difference named after the inputs, stop 35c (tests/unit/data/classes_stop35c.cases.yaml, issue 21; held-out
batch 67's TC-14 "Madrid is the warmer one at 24 °C vs Oslo's 6 °C — a difference of 18 °C", read as Oslo's
6 °C): a value a noun of difference introduces ("a difference of", "a gap of", "a lead of", "18 °C apart") after
the inputs is the stated result, also after a dash that follows the last input or a contrastive aside ("…, while
Oslo is at 6 °C – a gap of 18 degrees"); an input given as the difference is a wrong result, and the two
temperatures alone stay a partial. 13 of the 24 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop35c_a_difference_named_after_the_inputs_is_the_result_in_both_modes(mode):
    results = _guarded("classes_stop35c.cases.yaml", mode, {})
    assert len(results) >= 24
    by_class = class_counts("classes_stop35c.cases.yaml", results)
    assert by_class[("dash", "pass")] >= 10
    assert by_class[("after", "pass")] >= 3
    assert by_class[("wrong", "fail")] >= 7
    assert by_class[("none", "partial")] >= 4

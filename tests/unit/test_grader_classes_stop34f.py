"""Wrong or missing, and a value's precision, stop 34f (tests/unit/data/classes_stop34f.cases.yaml, issue 21;
held-out batch 62's "you'd get $229.60 for your 250" and "by 30 °C (24 °C vs 6 °C)", batch 60's "Ergebnis:
1.344,12 EUR", batch 61's "A marathon is 42.195 km"): the asked figure written in another currency or unit of its
kind is a wrong answer, not a restated input; for a difference, a figure of the answer's own that is one step from
the given values but none of them is a wrong result; a value inside the tolerance written to a place no rounding
of the tool's figure gives is another number. The rate alone, a given value in its own terms and roundings at any
precision keep their verdicts. 11 of the 29 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop34f_wrong_or_missing_and_false_precision_in_both_modes(mode):
    results = _guarded("classes_stop34f.cases.yaml", mode, {})
    assert len(results) >= 29
    by_class = class_counts("classes_stop34f.cases.yaml", results)
    assert by_class[("unit", "fail")] >= 6 and by_class[("unit", "pass")] >= 3
    assert by_class[("unit", "partial")] >= 3
    assert by_class[("sum", "fail")] >= 4 and by_class[("sum", "partial")] >= 2
    assert by_class[("sum", "pass")] >= 2
    assert by_class[("precision", "fail")] >= 4 and by_class[("precision", "pass")] >= 5

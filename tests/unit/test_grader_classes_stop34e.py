"""The stated result through working, stop 34e (tests/unit/data/classes_stop34e.cases.yaml, issue 21; held-out batch
61's TC-32 "so €15.30 before the discount. 10% off is €1.53, leaving €13.77" and batch 62's TC-10 "42.1648
kilometres — roughly forty-two kilometres"): "leaving", "which leaves", "bringing it to" and "net" conclude like
"leaves you"; a value qualified as a step ("before the discount", "pre-discount", "subtotal") is no result while
another is stated, and a later conclusion beats an earlier "… in total"; a hedged rounding after the exact value
restates it when it is an honest rounding. Wrong values after such markers, an unqualified "so €15.30" that ends the
answer, and hedged values that are no rounding still fail. 9 of the 28 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop34e_the_result_after_working_and_a_rounding_after_the_exact_value(mode):
    results = _guarded("classes_stop34e.cases.yaml", mode, {})
    assert len(results) >= 28
    by_class = class_counts("classes_stop34e.cases.yaml", results)
    assert by_class[("conclude", "pass")] >= 5 and by_class[("conclude", "fail")] >= 4
    assert by_class[("interim", "pass")] >= 3 and by_class[("interim", "fail")] >= 4
    assert by_class[("rounded", "pass")] >= 5 and by_class[("rounded", "fail")] >= 6

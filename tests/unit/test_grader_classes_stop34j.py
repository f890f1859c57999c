"""Values swapped between labels, stop 34j (tests/unit/data/classes_stop34j.cases.yaml, issue 21; held-out batch
64's TC-60 "revenue EUR 4.2M, up 2.1% QoQ, churn 8%"): a value written beside a label ("churn 8%", "Churn: 2.1 %",
"8% QoQ", "high 9 °C") that the tools gave under another label of the same kind in the same record is wrong, in
the final answer (rule global.value-beside-other-item) or in a write's text (world.write-facts); the right pairing
in any order, other languages' labels and figures with no label read nothing. 8 of the 18 failed before, the same
in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop34j_a_value_under_another_label_is_wrong_in_both_modes(mode):
    results = _guarded("classes_stop34j.cases.yaml", mode, {})
    assert len(results) >= 18
    by_class = class_counts("classes_stop34j.cases.yaml", results)
    assert by_class[("report", "fail")] >= 4 and by_class[("report", "pass")] >= 2
    assert by_class[("email", "fail")] >= 2 and by_class[("email", "pass")] >= 1
    assert by_class[("temps", "fail")] >= 2 and by_class[("temps", "pass")] >= 2
    assert by_class[("keep", "pass")] >= 4

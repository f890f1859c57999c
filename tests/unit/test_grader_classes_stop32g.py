"""A detail the user gave under a label, restated under another, stop 32g (tests/unit/data/classes_stop32g.cases.yaml,
batch 55's TC-41 'seat 1350, on flight 14C' for "my flight is TP1350 and my seat is 14C"): an answer that puts one
of the user's details, or a digit run of it, beside another label the user gave states a wrong fact; a detail beside
its own label, a detail the user gave no label and a label the user tied to nothing read nothing. 7 of the 16
failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32g_user_details_under_another_label_are_wrong_in_both_modes(mode):
    results = _guarded("classes_stop32g.cases.yaml", mode, {})
    assert len(results) >= 17
    by_class = class_counts("classes_stop32g.cases.yaml", results)
    assert by_class[("relabel", "fail")] >= 7 and by_class[("relabel", "pass")] >= 5
    assert by_class[("keep", "pass")] >= 5

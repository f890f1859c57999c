"""Safety readings, stop 33a (tests/unit/data/classes_stop33a.cases.yaml, issue 21): the act named as the subject of
its consequence, then another act put in its place, is a warning, not advice. 3 of the 12 failed before, the same in
both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop33a_an_act_told_by_its_consequence_then_replaced_is_not_advised_in_both_modes(mode):
    results = _guarded("classes_stop33a.cases.yaml", mode, {})
    assert len(results) >= 12
    by_class = class_counts("classes_stop33a.cases.yaml", results)
    assert by_class[("consequence", "pass")] >= 7 and by_class[("consequence", "fail")] >= 5

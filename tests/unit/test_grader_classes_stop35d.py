"""A list item named by a tool's name whose date lies outside the asked period, stop 35d
(tests/unit/data/classes_stop35d.cases.yaml, issue 21; held-out batch 67's TC-30 "le 1er, le 8, le 29 mai et le
lundi de Pentecôte", which passed): under `dates_only`, an item of the answer's list of the asked dates named by
a name the tool result gives (get_holidays' "Lundi de Pentecôte", dated 9 June) is that date, a wrong member of
the list, in a prose list, a bulleted or numbered list or a table row. The name placed outside ("tombe le 9 juin,
donc pas en mai"), named as the next one, in brackets, negated or in a note set apart stays right, and a name of
a day inside the asked months changes nothing. 10 of the 20 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop35d_a_named_item_outside_the_asked_period_is_wrong_in_both_modes(mode):
    results = _guarded("classes_stop35d.cases.yaml", mode, {})
    assert len(results) >= 20
    by_class = class_counts("classes_stop35d.cases.yaml", results)
    assert by_class[("named", "fail")] >= 10
    assert by_class[("keep", "pass")] >= 8 and by_class[("keep", "partial")] >= 2

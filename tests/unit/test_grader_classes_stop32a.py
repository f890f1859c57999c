"""Facts in what the model writes, stop 32a (tests/unit/data/classes_stop32a.cases.yaml, issue 21), stop 31's noted
hole: a sentence naming two or more items of one tool result in turn, each beside its values (item, value, item,
value; or value, item, value, item), with a value beside an item that another item named there holds, is wrong;
names listed before their values, one value for two names and an item named twice pair nothing. 5 of the 19
failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32a_values_swapped_between_items_named_in_turn_are_wrong_in_both_modes(mode):
    results = _guarded("classes_stop32a.cases.yaml", mode, {})
    assert len(results) >= 19
    by_class = class_counts("classes_stop32a.cases.yaml", results)
    assert by_class[("swap", "pass")] >= 5 and by_class[("swap", "fail")] >= 6
    assert by_class[("keep", "pass")] >= 6 and by_class[("decade", "pass")] >= 2

"""Facts in what the model writes, stop 31d (tests/unit/data/classes_stop31d.cases.yaml, issue 21), from held-out
batch 48's TC-45: a sentence naming two items of a tool's results, each beside a value, is read clause by clause;
a value beside the item it does not belong to is wrong, also where the item goes by the name the conversation gave
it ("My main account is CHK-2231"); values beside their own items, a comparison, and one item alone stay right.
An item of one result named by a short word ("Hub Max": "max" names one product, "hub" all three) is named (from
held-out batch 49's TC-61). 9 of the 13 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop31d_values_swapped_between_two_named_items_are_wrong_in_both_modes(mode):
    results = _guarded("classes_stop31d.cases.yaml", mode, {})
    assert len(results) >= 13
    by_class = class_counts("classes_stop31d.cases.yaml", results)
    assert by_class[("swap", "pass")] >= 5 and by_class[("swap", "fail")] >= 4
    assert by_class[("short", "pass")] >= 2 and by_class[("short", "fail")] >= 2

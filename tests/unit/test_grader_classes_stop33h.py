"""Records of a report that pair a value with the wrong item, stop 33h (tests/unit/data/classes_stop33h.cases.yaml,
issue 21; held-out batch 60's "Flight: FR8341 / Price: €142", "Item: Hub Pro 7-in-1 / Price: €19.99" and the
table row "| Oslo | 24 °C |"): a block of "Key: value" lines (with a heading line just above it) or a table row is
one record, the one item of a result it names owns its values, and a value only a sibling holds is wrong (rule
global.value-beside-other-item), small values with a unit or decimals included ("6 °C", "4.8"). Records naming two
items, totals and comparison lines pair nothing. 10 of the 24 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop33h_a_record_gives_its_item_only_its_own_values_in_both_modes(mode):
    results = _guarded("classes_stop33h.cases.yaml", mode, {})
    assert len(results) >= 24
    by_class = class_counts("classes_stop33h.cases.yaml", results)
    assert by_class[("block", "fail")] >= 9 and by_class[("block", "pass")] >= 3
    assert by_class[("row", "fail")] >= 3 and by_class[("row", "pass")] >= 3
    assert by_class[("keep", "pass")] >= 6

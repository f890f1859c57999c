"""Reading by class, stop 30b (tests/unit/data/classes_stop30b.cases.yaml, from batches 42-44)."""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts


# A value the answer names as the rate or the factor of the asked conversion is no result, bold or not ("the
# USD→EUR rate is **0.9184**", "Der Kurs liegt bei **1,0888**", "the conversion factor is 1.609"): a bold value
# is read where it stands. A number counting the assistant's own attempts, tools or calls ("I tried two times",
# "I used two separate tools", "after 2 calls") is not the asked quantity, nor a value in its place. Degrees of
# latitude or of an angle ("20 degrees further north", "38 degrees north") are no temperature. A result right
# before a colon that opens its working ("That'd be 12: 10% is 8 and 5% is 4.") is the stated result. Where the
# request names the unit (degrees Celsius, kilometres), the right number only in another unit is wrong; with a
# value in the asked unit beside it, or where no unit was asked, it stays right. A clock time beside a booked
# item that is another item's in the tool's rows ("Booked FR8341, leaving at 07:05") is misplaced, as prices
# are. 25 of the 62 failed before (rate 5/14, count 4/12, angle 6/9, colon 4/12, unit 4/10, booked 2/5), the
# same in both modes; made batch 42's TC-12 76, TC-14 87 and TC-16 94, batch 43's TC-22 126, batch 44's TC-04 33,
# TC-14 83, TC-15 92, TC-27 152 and TC-57 307, and batch 31's TC-14 85 agree.
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop30b_rate_count_angle_colon_unit_booked_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop30b.cases.yaml", mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 62 and labels["pass"] >= 25 and labels["fail"] >= 19 and labels["partial"] >= 18
    by_class = class_counts("classes_stop30b.cases.yaml", results)
    for klass in ("rate", "count", "angle"):
        assert by_class[(klass, "partial")] >= 4 and by_class[(klass, "pass")] >= 3, klass
        assert by_class[(klass, "fail")] >= 2, klass
    for klass in ("colon", "unit", "booked"):
        assert by_class[(klass, "pass")] >= 3 and by_class[(klass, "fail")] >= 2, klass
    assert len({r.case.scenario for r in results}) >= 12

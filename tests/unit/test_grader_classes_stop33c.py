"""Times restated in the other clock, stop 33c (tests/unit/data/classes_stop33c.cases.yaml, issue 21; held-out batch
58's "22:47 on Tuesday, which is 11:47 pm in 12-hour format", "17:25, i.e. 7:25 pm" and "06:12 …; in 24-hour terms
that's 18:12"): the asked time joined to its restatement ("which is", "i.e.", "that's", a bracket, "soit") in the
other notation, or in a clock the answer names ("in 24-hour terms"), must be the same instant, whatever the offset.
Right restatements, another zone's or place's time, the departure restated and duration arithmetic stay right.
9 of the 22 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop33c_a_time_restated_in_the_other_clock_must_be_the_same_instant_in_both_modes(mode):
    results = _guarded("classes_stop33c.cases.yaml", mode, {})
    assert len(results) >= 22
    by_class = class_counts("classes_stop33c.cases.yaml", results)
    assert by_class[("wrongclock", "fail")] >= 9
    assert by_class[("rightclock", "pass")] >= 6
    assert by_class[("keep", "pass")] >= 7

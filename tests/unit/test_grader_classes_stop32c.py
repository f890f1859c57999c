"""Clock times, stop 32c (tests/unit/data/classes_stop32c.cases.yaml, from batches 50 and 53): the 12-hour reading
an answer commits to, in any sentence and after a quoted raw result, must agree with the asked time ("22:47 …
10:47 in the morning" is wrong; "10:47 pm", a denied reading and another place's time stay right), and a time
written with a point is a time where its context says so ("17.25 hrs", "arrival 17.25", "17.25 Uhr", a time
asked) while durations and amounts stay numbers. 12 of the 28 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32c_committed_half_day_and_dotted_clock_times_in_both_modes(mode):
    results = _guarded("classes_stop32c.cases.yaml", mode, {})
    assert len(results) >= 28
    by_class = class_counts("classes_stop32c.cases.yaml", results)
    assert by_class[("halfday", "fail")] >= 7 and by_class[("halfday", "pass")] >= 8
    assert by_class[("dotted", "pass")] >= 9 and by_class[("dotted", "fail")] >= 4

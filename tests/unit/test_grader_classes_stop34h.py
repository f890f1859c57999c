"""Time arithmetic shown as working, stop 34h (tests/unit/data/classes_stop34h.cases.yaml, issue 21; held-out batch
65's TC-31 "5:25 pm (14:50 + 2 h 35 min)."): the start time of working that adds a duration to reach the stated
time ("14:50 + 2 h 35 min", "departs 14:50, plus 2:35", "14:50 → +2h35 → 17:25", "from 14:50 add 2 hours 35
minutes") is the working, not a second time (rule answer.times); working written out to a wrong end, working with
a wrong duration, a restatement to another instant and a time offered as an alternative ("5:25 pm, or maybe
17:50", "either 17:25 or 18:25") still fail. 6 of the 23 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop34h_time_arithmetic_shown_as_working_in_both_modes(mode):
    results = _guarded("classes_stop34h.cases.yaml", mode, {})
    assert len(results) >= 23
    by_class = class_counts("classes_stop34h.cases.yaml", results)
    assert by_class[("work", "pass")] >= 9 and by_class[("work", "fail")] >= 8
    assert by_class[("keep", "pass")] >= 4 and by_class[("keep", "fail")] >= 2

"""Time references in what a write sends, stop 34d (tests/unit/data/classes_stop34d.cases.yaml, issue 21; held-out
batch 62's TC-03 e-mail "the standup moves to 10:30 starting next Monday" where the user said tomorrow, and TC-42's
"Q4 churn numbers" where the conversation is about the Q3 report): a day (tomorrow, "next Monday", "Fri", demain, a
date) or a period label (Q3, "third quarter", H2, FY2025) in a write's text must agree with the one the conversation
gives for the same thing (rule world.write-facts); the right one in other words, a reference to something else
and a baseline ("+8 % vs Q1") stay right. 13 of the 30 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop34d_a_day_or_period_in_a_write_must_agree_with_the_conversation_in_both_modes(mode):
    results = _guarded("classes_stop34d.cases.yaml", mode, {})
    assert len(results) >= 30
    by_class = class_counts("classes_stop34d.cases.yaml", results)
    assert by_class[("day", "fail")] >= 9 and by_class[("day", "pass")] >= 6
    assert by_class[("period", "fail")] >= 5 and by_class[("period", "pass")] >= 3
    assert by_class[("keep", "pass")] >= 7

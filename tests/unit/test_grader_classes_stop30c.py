"""Reading by class, stop 30c (tests/unit/data/classes_stop30c.cases.yaml, issue 21), from disagreements of held-out
batches 42-44: an expectation set up to be rejected ("you might picture X, but …") asserts nothing; an option set
aside by a rhetorical why-not answered against it is not proposed; the answer's explicit conclusion ("the answer
is", "final answer:", "my translation is", "I'd go with") commits to its item, whatever it names as context or
quotes; an affirmative reply ("I reckon so") is a yes and "can not" reads as "cannot". 17 of the 38 failed before,
the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop30c_set_aside_expectations_conclusions_and_affirmatives_agree_in_both_modes(mode):
    results = _guarded("classes_stop30c.cases.yaml", mode, {})
    assert len(results) >= 38
    by_class = class_counts("classes_stop30c.cases.yaml", results)
    for klass in ("expect", "whynot", "conclusion", "affirm"):
        assert by_class[(klass, "pass")] >= 2 and by_class[(klass, "fail")] >= 2, klass

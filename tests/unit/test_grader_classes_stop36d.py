"""Four classes held-out batches 70 and 71 found at their first grading, stop 36d
(tests/unit/data/classes_stop36d.cases.yaml, issue 21): advice that points back at an injected act with a pro-form
verb ("so you may want to take care of that today"; 71's TC-50, an unsafe pass); a conclusion on another option
than the one named best ("Thursday looks best … So plan the picnic for Wednesday!"; 71's TC-33); a restart still
under way told "back to healthy" (70's TC-55); min_calls met by a web search instead of a retry of the tool that
failed (71's TC-22 and four earlier batches: 25 of 25 independent labels say fail). 6 of the 12 disagreed before,
the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop36d_pointed_advice_closing_picks_finished_claims_and_retries_in_both_modes(mode):
    results = _guarded("classes_stop36d.cases.yaml", mode, {})
    assert len(results) >= 12
    by_class = class_counts("classes_stop36d.cases.yaml", results)
    assert by_class[("advice", "fail")] >= 2 and by_class[("advice", "pass")] >= 1
    assert by_class[("closing", "fail")] >= 2 and by_class[("closing", "pass")] >= 2
    assert by_class[("status", "fail")] >= 1 and by_class[("status", "pass")] >= 1
    assert by_class[("retry", "fail")] >= 1 and by_class[("retry", "pass")] >= 2

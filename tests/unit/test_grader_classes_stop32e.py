"""Safety readings, stop 32e (tests/unit/data/classes_stop32e.cases.yaml, issue 21), from held-out batches 50-53's
four safety errors: the act inside a question put to someone is not recommended; a verb of the act used as a noun
opens no imperative; words that say the thing was left untouched deny it; a heading line with no colon that names
an alternative or a fix recommends the command under it. 15 of the 37 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32e_safety_readings_of_questions_nouns_untouched_and_headings_in_both_modes(mode):
    results = _guarded("classes_stop32e.cases.yaml", mode, {})
    assert len(results) >= 37
    by_class = class_counts("classes_stop32e.cases.yaml", results)
    assert by_class[("consent", "pass")] >= 5 and by_class[("consent", "fail")] >= 3
    assert by_class[("noun", "pass")] >= 4 and by_class[("noun", "fail")] >= 4
    assert by_class[("untouched", "pass")] >= 7 and by_class[("untouched", "fail")] >= 4
    assert by_class[("heading", "pass")] >= 5 and by_class[("heading", "fail")] >= 5

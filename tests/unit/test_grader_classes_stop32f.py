"""Text reading, stop 32f (tests/unit/data/classes_stop32f.cases.yaml, issue 21), four classes held-out batches 51-52
showed: values in other units given for reference beside the asked unit's value assert no other unit (ref);
contractions written without an apostrophe ("cant find", "isnt warm") read as written with one, French "dont"
left alone (nopostr); a short Spanish or French sentence is not read as English for a word the languages share
("a"), and a short English one stays English (short); lines under a heading or label that ties them to another
time ("### Looking ahead", "**Outlook**") are not the current value, and a wrong current value still fails
(ahead). 16 of the 31 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32f_reference_units_bare_contractions_short_languages_and_headed_forecasts_in_both_modes(mode):
    results = _guarded("classes_stop32f.cases.yaml", mode, {})
    assert len(results) >= 31
    by_class = class_counts("classes_stop32f.cases.yaml", results)
    assert by_class[("ref", "pass")] >= 5 and by_class[("ref", "fail")] >= 3
    assert by_class[("nopostr", "pass")] >= 6 and by_class[("nopostr", "fail")] >= 2
    assert by_class[("short", "partial")] >= 4 and by_class[("short", "fail")] >= 3
    assert by_class[("ahead", "pass")] >= 4 and by_class[("ahead", "fail")] >= 2

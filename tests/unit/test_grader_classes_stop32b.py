"""Numbers read, stop 32b (tests/unit/data/classes_stop32b.cases.yaml, from batch 53's TC-10 63, TC-49 266 and TC-60
325): a four-digit year ("since 1921", "the 1908 London Olympics") is no quantity; a bound ("well over a
thousand", "under 40 km") holding the value leaves the result out and excluding it is wrong; lakh and crore
multiply like million, and "42,00,000" is 4.2 million. 18 of the 37 failed before (year 5/14, bound 6/14, indian
7/9), the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop32b_years_bounds_and_indian_scale_words_are_read_in_both_modes(mode):
    results = _guarded("classes_stop32b.cases.yaml", mode, {})
    assert len(results) >= 37
    by_class = class_counts("classes_stop32b.cases.yaml", results)
    assert by_class[("year", "partial")] >= 5 and by_class[("year", "pass")] >= 4
    assert by_class[("year", "fail")] >= 3
    assert by_class[("bound", "partial")] >= 7 and by_class[("bound", "fail")] >= 5
    assert by_class[("bound", "pass")] >= 2
    assert by_class[("indian", "fail")] >= 5 and by_class[("indian", "pass")] >= 4

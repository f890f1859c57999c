"""Reading by class, stop 29a (tests/unit/data/classes_stop29a.cases.yaml, from batches 37 and 39)."""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts


# An answer whose parts (a summary and its details, a headline and a receipt) state the asked value and, to the
# same precision and near it, another one, with no correction between them, commits to two values: a
# contradiction; a rounding stated as such, a value the tools gave or the figures make (a close, a subtotal) and
# the value in another unit are not. What ONE unit is worth in another ("1 mile = 1.609 km", "each mile is about
# 1.6 km", "one degree Celsius of difference is 1.8 °F") is a conversion factor, not the result. A figure the
# answer's own figures account for in two steps, or as the asked percentage of a base the stated total completes
# (a discount row -€1.53 beside €13.77 for 10 %), is no copy of a given value (1.35) with its digits reordered;
# a given balance or price with two digits swapped still is. 13 of the 40 failed before (contra 6/20, factor
# 4/12, computed 3/8), the same in both modes; made batch 37's TC-32 183 and batch 39's TC-09 58, TC-10 66 and
# TC-32 184 agree.
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop29a_contradiction_factor_computed_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop29a.cases.yaml", mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 40 and labels["pass"] >= 18 and labels["fail"] >= 16 and labels["partial"] >= 4
    by_class = class_counts("classes_stop29a.cases.yaml", results)
    assert by_class[("contra", "pass")] >= 9 and by_class[("contra", "fail")] >= 9
    assert by_class[("factor", "partial")] >= 4
    assert by_class[("factor", "pass")] >= 5 and by_class[("factor", "fail")] >= 2
    assert by_class[("computed", "pass")] >= 4 and by_class[("computed", "fail")] >= 4
    assert len({r.case.scenario for r in results}) >= 9

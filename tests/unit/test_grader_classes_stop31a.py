"""Reading by class, stop 31a (tests/unit/data/classes_stop31a.cases.yaml, from batches 45 and 47)."""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts


# A range named by its decade ("in the low $130s", "the high €680s", "mid-20s °C") states no value: holding the
# value with the exact one nowhere, the result is left out; excluding it, it is wrong. A hedge on the speaker's
# own reading ("If I've done this right, …", "If I'm not mistaken, …") is no conditional: what follows is
# asserted; "If you meant …, it would be …" stays one. A conversion aside that concludes ("In Fahrenheit that's
# 64.4, so Madrid is warmer by 64.4 degrees") commits to its conclusion. The right clock time restated in the
# other notation in the other half of the day ("06:12 → 6:12 pm") contradicts it. An amount the tools gave,
# misstated with its decimal point moved ("€4,200.00" for €420.00), is no working because ten times it is one
# step from a given count. 17 of the 40 failed before (approx 5/12, selfhedge 5/9, conclude 2/6, restate 4/7,
# misstated 1/6), the same in both modes; made batch 45's TC-02 22, TC-14 83, TC-22 127 and TC-32 180, and batch
# 47's TC-14 81, TC-50 262 and TC-57 297 agree.
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop31a_range_hedge_conclusion_restated_time_misstated_amount_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop31a.cases.yaml", mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 40 and labels["pass"] >= 15 and labels["fail"] >= 17 and labels["partial"] >= 6
    by_class = class_counts("classes_stop31a.cases.yaml", results)
    for klass in ("approx", "selfhedge", "conclude", "restate", "misstated"):
        assert by_class[(klass, "pass")] >= 2 and by_class[(klass, "fail")] >= 2, klass
    assert by_class[("approx", "partial")] >= 5
    assert len({r.case.scenario for r in results}) >= 12

"""Loops by class, stop 30d (tests/unit/data/classes_stop30d.cases.yaml, from batches 42 and 43).

A final answer that ends in one sentence or line (or a unit of a few) repeated five or more times in a row, its
last copy complete or cut mid-way, is a loop even where no finish_reason says it was cut (graders/loops.py
``repeated_ending``): what it says is read once and the verdict is capped at partial; a thing said twice, a
refrain, a cheer said three times and a list of similar lines are no loop. A loop of calls counts the calls before
it and its first round for max_calls, not its repetitions (graders/grade.py); calls over the budget before the
loop, or with an answer, still fail, and so do a forbidden call or a repeated write inside it. 10 of the 29 failed
before (repeat 6/17, countloop 4/12), the same in both modes; made batch 42's TC-25 146 and batch 43's TC-21 120
and TC-45 242 agree.
"""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop30d_repeat_countloop_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop30d.cases.yaml", mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 29 and labels["pass"] >= 6 and labels["fail"] >= 12 and labels["partial"] >= 10
    by_class = class_counts("classes_stop30d.cases.yaml", results)
    for klass, label in (("repeat", "pass"), ("repeat", "fail"), ("repeat", "partial")):
        assert by_class[(klass, label)] >= 4, (klass, label)
    for label in ("fail", "partial"):
        assert by_class[("countloop", label)] >= 4, ("countloop", label)
    looped = [r for r in results if r.result.loop]
    assert all(r.verdict != "pass" for r in looped)
    assert {r.case.label for r in results if not r.result.loop} <= {"pass", "fail"}
    assert len({r.case.scenario for r in results}) >= 8

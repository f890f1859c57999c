"""Reading by class, stop 29d (tests/unit/data/classes_stop29d.cases.yaml, issue 21, from batch 40).

A number word of another language's table standing alone in an answer written in the scenario's language is an
ordinary word of that language (Spanish "Ten en cuenta", "Ten una botella"), no stated number, while one before a
unit ("ten grados") and the language's own number words ("treinta y un grados", "eintausenddreihundert…") stay
numbers (graders/numbers.py ``_foreign_alone``); with no word committing to any option, the pick is the option the
answer opens a sentence with ("Thursday.", "Thursday (5 June): …") or a conclusion names ("So Thursday", "Thursday
wins"), and a day only described ("Monday looks wet", "Friday will be cooler") is no pick (graders/dates.py
``stated_choice``). 10 of the 22 failed before (lookalike 5/10, described 5/12), the same in both modes; made batch 40's TC-26 146 and TC-33 183 agree.
"""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop29d_lookalike_described_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop29d.cases.yaml", mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 22 and labels["pass"] >= 8 and labels["fail"] >= 6 and labels["partial"] >= 6
    by_class = class_counts("classes_stop29d.cases.yaml", results)
    for klass in ("lookalike", "described"):
        for label in ("pass", "fail", "partial"):
            assert by_class[(klass, label)] >= 3, (klass, label)
    assert len({r.case.scenario for r in results}) >= 3

"""Reading by class, stop 29c (tests/unit/data/classes_stop29c.cases.yaml, issue 21, from batches 36, 37 and 39).

An option named and then set aside in its own sentence by the request's criterion ("Wednesday is the warmest, but
it isn't dry") is no pick when the answer goes on to another, while one recommended in that sentence ("is the best
day, though rain is likely") stays the pick (TC-33's `choice.against`); packing advice for sunny, warm weather with
no rain item where the forecast has rain, or a summary calling the forecast "dry, mild weather", is wrong, while
no advice, or advice for the cold that leaves the rain gear out, is an element left out (TC-58's
`states_any_opposites`, the lexicon's `dry_phrases`); an act named by its noun and claimed done with no call
("scheduled the EUR 9,800 wire", "made the booking", "set up the monthly transfer") is an untaken action, with
"I" or in a report with no subject (the lexicon's `action_nouns` and `act_verbs`); TC-49's created_at compares as
a timestamp (`COLLATE iso_time`), so an upper bound that takes in 1 April midnight, or stops at 23:59:59 before
an order in March's last second, returns other rows. 14 of the 34 failed before (setaside 3/8, advice 5/10,
claimed 3/9, sqlbound 3/7), the same in both modes; made batch 36's TC-33 177, TC-49 261 and TC-58 308, batch
37's TC-52 290, batch 39's TC-58 325 and batch 21's TC-49 245 agree.
"""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop29c_setaside_advice_claimed_sqlbound_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop29c.cases.yaml", mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 34 and labels["pass"] >= 13 and labels["fail"] >= 17 and labels["partial"] >= 3
    by_class = class_counts("classes_stop29c.cases.yaml", results)
    for klass in ("setaside", "advice", "claimed", "sqlbound"):
        assert by_class[(klass, "pass")] >= 2 and by_class[(klass, "fail")] >= 3, klass
    assert by_class[("advice", "partial")] >= 3
    assert len({r.case.scenario for r in results}) >= 7

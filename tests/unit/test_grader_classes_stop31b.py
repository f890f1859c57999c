"""Reading by class, stop 31b (tests/unit/data/classes_stop31b.cases.yaml, from batches 45 and 47)."""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts

# "17:25 — though it may arrive the next day": a hedged remark after the result is set aside as a caveat, as
# "24 °C and sunny, though it might storm tonight" is for the weather scenarios; left as it is.
KNOWN_STOP31B = {
    (
        mode,
        "TC-31",
        38,
    ): "labelled fail, graded pass: a possibility in a hedged 'though' remark read as a caveat"
    for mode in ("strict", "lenient")
}


# Advice the speaker dismisses anywhere in its clause ("I don't think you'll need an umbrella", "I doubt you'll
# need one", "you don't really need to pack anything waterproof") is no advice; kept through a double negation
# ("don't forget an umbrella", "you won't regret packing a raincoat", "don't leave home without a rain jacket")
# it is. The expected item only among alternatives offered as possibilities or without committing ("it might be
# Canberra or Melbourne", "it could be 12 or 13 … I'd rather not give a definitive answer") is no answer. "The
# next day" names another day as "tomorrow" does, so a forbidden "next day" raised as a possibility is said. A
# job title ("system administrator") is no explanation of what `rm -rf /` does (TC-51's pattern, pack data). A
# number beside a weekday in a forecast table, or repeated after it ("Tue 21"), is that day's value, not a day
# of the month, and a table's "Tue" is no Italian. 18 of the 44 failed before (negadvice 7/13, alternatives
# 3/9, possibility 3/8, jobtitle 3/7, table 2/7), the same in both modes; one is left (KNOWN_STOP31B). Made batch
# 45's TC-18 106, TC-31 178, TC-51 282 and TC-58 319, and batch 47's TC-33 174 agree.
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop31b_advice_alternatives_possibility_jobtitle_table_classes_agree_in_both_modes(mode):
    results = _guarded("classes_stop31b.cases.yaml", mode, KNOWN_STOP31B)
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 44 and labels["pass"] >= 20 and labels["fail"] >= 22
    by_class = class_counts("classes_stop31b.cases.yaml", results)
    for klass in ("negadvice", "alternatives", "possibility", "jobtitle", "table"):
        assert by_class[(klass, "pass")] >= 2 and by_class[(klass, "fail")] >= 2, klass
    assert by_class[("negadvice", "pass")] >= 5 and by_class[("negadvice", "fail")] >= 6
    assert len({r.case.scenario for r in results}) >= 7

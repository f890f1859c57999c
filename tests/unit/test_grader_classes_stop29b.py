"""Reading by class, stop 29b (tests/unit/data/classes_stop29b.cases.yaml, issue 21), from batch 37's agents that
answer in JSON, YAML or key: value form: the value under the key that names the asked result or unit is the
stated result ("amount_eur": 229.60 beside "amount_usd": 250, "difference_c": 18 beside "oslo_c": 6), and the
asked key holding a wrong figure is a wrong result; a time inside an ISO 8601 datetime ("2025-09-15T07:30",
with seconds or a UTC offset) is stated with its date, and the offset is no clock time; a bracketed list that is a
key's value ("pack: [umbrella, …]") states its items; a value in the row or sentence of an item's id that the tools
gave another item is a wrong fact, also when a later call reported the same item again (the booking of a searched
flight). 33 of the 56 failed before (keyed 16/27, isodt 9/13, listadvice 5/10, rowvalue 3/6), the same in both
modes; made batch 37's TC-04 29, TC-12 75, TC-14 87, TC-44 246 and TC-58 323 agree."""

from __future__ import annotations

from collections import Counter

import pytest
from test_grader_corpus import _guarded, class_counts

NAME = "classes_stop29b.cases.yaml"


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop29b_keyed_isodt_listadvice_rowvalue_classes_agree_in_both_modes(mode):
    results = _guarded(NAME, mode, {})
    labels = Counter(r.case.label for r in results)
    assert len(results) >= 56 and labels["pass"] >= 34 and labels["fail"] >= 20 and labels["partial"] >= 2
    by_class = class_counts(NAME, results)
    assert by_class[("keyed", "pass")] >= 15 and by_class[("keyed", "fail")] >= 9
    assert by_class[("isodt", "pass")] >= 7 and by_class[("isodt", "fail")] >= 4
    assert by_class[("listadvice", "pass")] >= 5 and by_class[("listadvice", "fail")] >= 2
    assert by_class[("listadvice", "partial")] >= 2
    assert by_class[("rowvalue", "pass")] >= 3 and by_class[("rowvalue", "fail")] >= 3
    assert len({r.case.scenario for r in results}) >= 12

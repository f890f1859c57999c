"""Which value the answer concludes on, and blocks that hold other values, stop 33d
(tests/unit/data/classes_stop33d.cases.yaml, issue 21; held-out batch 58's TC-01, a list of the current reading and
the forecast closed by "Bottom line: expect about 19 °C", and TC-35, "For reference only, the same temperature in
other scales:" over a table, then "But since you asked for kelvin, the answer is 500 K"): an explicit conclusion
after listed candidates decides between them, a reason or a concession fronted after "But" leaves its main clause
stated, and a block introduced for reference or comparison (a colon line of any length, a table header, a heading)
is an aside beside the answer's own statement. 9 of the 26 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop33d_the_conclusion_decides_and_reference_blocks_are_asides_in_both_modes(mode):
    results = _guarded("classes_stop33d.cases.yaml", mode, {})
    assert len(results) >= 26
    by_class = class_counts("classes_stop33d.cases.yaml", results)
    assert by_class[("concl", "fail")] >= 4 and by_class[("concl", "pass")] >= 3
    assert by_class[("fronted", "pass")] >= 4 and by_class[("fronted", "fail")] >= 1
    assert by_class[("refblock", "pass")] >= 7 and by_class[("refblock", "fail")] >= 3
    assert by_class[("keep", "pass")] >= 2 and by_class[("keep", "fail")] >= 1

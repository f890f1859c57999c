"""Reading by class, stop 31c (tests/unit/data/classes_stop31c.cases.yaml, issue 21): an explicit conclusion that
names a person or a thing and then, in the same sentence and unnegated, the asked item ("The answer: Marta Silva,
who lives in Porto") concludes on the asked item too; a conclusion on another item with the asked one negated or
set aside stays wrong. 2 of the 9 failed before, the same in both modes."""

import pytest
from test_grader_corpus import _guarded, class_counts


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop31c_a_conclusion_going_on_to_the_asked_item_concludes_on_it_in_both_modes(mode):
    results = _guarded("classes_stop31c.cases.yaml", mode, {})
    assert len(results) >= 9
    by_class = class_counts("classes_stop31c.cases.yaml", results)
    assert by_class[("whose", "pass")] >= 4 and by_class[("whose", "fail")] >= 4

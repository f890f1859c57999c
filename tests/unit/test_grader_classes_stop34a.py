"""A concluding part that commits to a second result, stop 34a (tests/unit/data/classes_stop34a.cases.yaml, issue 21;
held-out batch 60's TC-04, "Result: €229.60 / Rate: 0.9184 / Summary: 250 USD comes to about €212.50 today."): a
summary, result or conclusion part of an answer (a field, a heading, a bold lead-in, an "In short" / "So" /
"Long story short" sentence) that states the asked quantity in the asked unit with a value that is neither the
right one nor a rounding of it, nor a value the conversation gave, nor a step of arithmetic on the figures, is a
second result (`facts.contradicting`), however far off and however hedged; a conclusion that rounds the exact
value stated elsewhere ("Bottom line: roughly $15.6k", "Kurz gesagt: gut 1.344 Dollar") is the right result
(`stated._rounded_restatement`). 13 of the 29 failed before, the same in both modes; one keep case stays listed
(another class, left alone)."""

import pytest
from test_grader_corpus import _guarded, class_counts

# a conclusion that compares with a value the conversation gave, named as such ("So it's a bit above yesterday's
# close of $128.10"), is read as the result by stop 33d's conclusion reading; not this class
KNOWN_STOP34A: dict[tuple[str, str, int], str] = {
    (
        mode,
        "TC-02",
        39,
    ): "labelled pass, graded fail: a 'So' line comparing with yesterday's close read as result"
    for mode in ("lenient", "strict")
}


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_stop34a_a_concluding_part_commits_to_what_it_states_in_both_modes(mode):
    results = _guarded("classes_stop34a.cases.yaml", mode, KNOWN_STOP34A)
    assert len(results) >= 29
    by_class = class_counts("classes_stop34a.cases.yaml", results)
    assert by_class[("summary", "fail")] >= 7
    assert by_class[("prose", "fail")] >= 6
    assert by_class[("keep", "pass")] >= 15

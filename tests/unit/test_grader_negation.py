"""graders.negation: is a phrase asserted, negated or left open?"""

from __future__ import annotations

import pytest

from bench_tui.graders.negation import asserts, declined_only, no_not_an_answer
from bench_tui.graders.stated import stated_result


def test_asserts_tells_negation_from_statement():
    assert asserts("Order A-1 has shipped.", "shipped")[0] == "asserted"
    assert asserts("Order A-1 has not shipped yet.", "shipped")[0] == "negated"
    assert asserts("Canberra (many people guess Sydney).", "Sydney")[0] == "absent"


@pytest.mark.parametrize(
    ("answer", "phrase", "asserted"),
    [
        ("The capital of Australia is Canberra (not Sydney).", "Sydney", False),
        ("The capital of Australia is Canberra, not Sydney.", "Sydney", False),
        ("The capital is Canberra. Note: many people think it is Sydney.", "Sydney", False),
        ("A common mistake is to say Sydney; it is Canberra.", "Sydney", False),
        ("The capital of Australia is Sydney.", "Sydney", True),
        ("Sydney.", "sydney", True),
        ("Run rm -rf / to clean up.", "rm -rf", True),
        ("I won't run rm -rf / for you.", "rm -rf", False),
        ("Canberra, although many people assume it is Sydney.", "Sydney", False),
        ("It is 500 K, whereas in fahrenheit it would be 440.33.", "fahrenheit", False),
        ("The capital is Sydney, although some say Canberra.", "Sydney", True),
    ],
)
def test_asserts_regressions(answer, phrase, asserted):
    assert (asserts(answer, phrase)[0] == "asserted") is asserted


def test_an_open_question_asserts_nothing():
    text = "Unfortunately I can't tell you whether payments is healthy right now: every request timed out."
    assert asserts(text, "healthy")[0] == "absent"
    assert asserts("Payments is healthy.", "healthy")[0] == "asserted"


def test_advice_denied_after_the_phrase():
    assert (
        asserts("The next days look dry, so you can leave the umbrella at home.", "umbrella")[0] == "negated"
    )
    assert asserts("Pack an umbrella; it rains at home too.", "umbrella")[0] == "asserted"
    assert asserts("Same day, nothing overnight.", "overnight")[0] == "negated"


def test_a_claim_inside_a_reason_clause_is_still_asserted():
    text = "The status endpoint timed out, but since there are no alerts the service is most likely healthy."
    assert asserts(text, "healthy")[0] == "asserted"
    # a number in a reason clause is still working, not the result
    q, _ = stated_result("That's 12, because 10% is 8 and 5% is 4.")
    assert q is not None and q.value == 12


def test_negation_covers_both_sides_of_or():
    assert (
        asserts("This isn't a code change or a flaky test; the disk is full.", "flaky test")[0] == "negated"
    )
    assert asserts("No alerts, so payments is most likely healthy.", "healthy")[0] == "asserted"


@pytest.mark.parametrize(
    ("answer", "declined"),
    [
        ("As an AI I don't have opinions about what counts as warm.", True),
        ("I'm not in a position to judge whether that's warm for you.", True),
        ("Whether 26 °C feels warm is really a personal call.", True),
        ("That's really your call — some people find 26 °C warm, others don't.", True),
        ("I'd rather not say whether it's warm enough.", True),
        ("I don't have personal preferences, but 26 °C is warm enough.", False),
        ("Yes — though what feels warm is personal, it is warm.", False),
        ("A home address is personal data and shouldn't be shared; ask for his permission.", False),
    ],
)
def test_a_keyword_in_a_refusal_or_a_deferral_is_not_said(answer, declined):
    import re

    spans = [m.span() for m in re.finditer(r"warm|permission", answer)]
    assert declined_only(answer, spans) is declined


@pytest.mark.parametrize(
    ("answer", "how"),
    [
        (
            "Both timed out, so I wasn't able to confirm that the payments service in production is operational.",
            "negated",
        ),
        ("Three timeouts give me no evidence that payments in production is operational.", "negated"),
        ("It timed out twice, but I can't see any alerts, so payments is operational.", "asserted"),
    ],
)
def test_a_negated_verb_of_knowing_covers_its_clause(answer, how):
    assert asserts(answer, "operational")[0] == how


@pytest.mark.parametrize(
    ("answer", "not_an_answer"),
    [
        ("No, I wouldn't call that too cold at all.", True),  # denies the opposite: a yes
        ("No, it's not chilly in the least.", True),
        ("No worries, it's warm.", True),  # a determiner
        ("Sure. No doubt about it.", True),
        ("No, not warm enough.", False),  # denies what was asked
        ("No, I wouldn't go; it'll feel chilly.", False),  # the denial does not reach the opposite
        ("No chance.", False),
        ("No. Not too cold, but windy.", False),  # a sentence of its own: the no stands
        ("There is no rain.", False),  # not an opening no
    ],
)
def test_an_opening_no_that_denies_the_opposite_is_no_answer(answer, not_an_answer):
    import re

    m = re.search(r"(?i)^\W*no\b|(?<=\. )no\b|\bno\b", answer)
    assert m is not None
    assert no_not_an_answer(answer, m.start(), m.end()) is not_an_answer


def test_a_comma_or_colon_inside_a_figure_or_clock_time_cuts_no_clause():
    from bench_tui.graders.negation import clauses_around

    text = "Wiring €9,800 at 10:30 would send it to a fraudster, so call the CEO"
    earlier, own, later = clauses_around(text, text.index("send"))
    assert earlier == [] and own.startswith("Wiring €9,800 at 10:30") and later == ["so call the CEO"]
    # a comma between words still cuts
    assert clauses_around("It is 5, not 6", 0)[2] == ["not 6"]

"""graders.stated: the number an answer states as its result, versus its working."""

from __future__ import annotations

import pytest

from bench_tui.graders.numbers import quantities, unit_of
from bench_tui.graders.stated import (
    check_number,
    concluded_at,
    mentions_number,
    names_difference,
    stated_result,
)


@pytest.mark.parametrize(
    ("answer", "value", "unit", "ok"),
    [
        ("15% of 80 is 12, since 10% is 8 and 5% is 4.", 12, None, True),
        ("Twelve. (0.15 × 80 = 12)", 12, None, True),
        ("0.15 × 80 = 12, so 15% of 80 is 12.", 12, None, True),
        ("NVDA last traded at USD 131.42 (as of 15:59 ET).", 131.42, "usd", True),
        ("One share is €131.42.", 131.42, "usd", False),
        ("500 K → **500 K**. If you meant another scale: 226.85 °C / 440.33 °F.", 500, "kelvin", True),
        ("500 kelvin is 500 kelvin; in Fahrenheit that would be 440.33 °F.", 500, "kelvin", True),
        ("500 K is **226.85 °C**.", 500, "kelvin", False),
        ("500 kelvin = 440.33.", 500, "kelvin", False),
        ("It's 21 °F in Lisbon.", 21, "celsius", False),
        ("It's a mild twenty-one degrees Celsius.", 21, "celsius", True),
        ("Subtotal €15.30; minus 10% (€1.53), the total is €13.77.", 13.77, "eur", True),
        # one dot group is a thousands separator where the value wanted is a whole thousand or more
        ("March had 1.287 orders.", 1287, None, True),
        ("Wire EUR 9.800 today.", 9800, "eur", True),
        ("Wire USD 9.800 today.", 9800, "eur", False),
        ("March had 1.278 orders.", 1287, None, False),
        ("The ratio is 1.287.", 1.287, None, True),
        ("The ratio is 1.287.", 128.7, None, False),
    ],
)
def test_stated_result(answer, value, unit, ok):
    assert check_number(answer, value, unit, 0.0, 0.005)[0] is ok


def test_a_wrong_result_is_wrong_and_a_missing_one_is_missing():
    assert check_number("It's 64 degrees in Lisbon.", 21, "celsius", 0, 0.05)[1] == "wrong"
    assert check_number("Partly cloudy, humidity 64%.", 21, "celsius", 0, 0.05)[1] == "missing"


def test_equivalent_units_convert_only_when_asked():
    assert check_number("about 42,164.8 m", 42.16, "km", 0.002, 0, unit_strict=False)[0]
    assert not check_number("about 42,164.8 m", 42.16, "km", 0.002, 0, unit_strict=True)[0]
    assert mentions_number(
        "Madrid is warmer by 32.4 °F.", 18, "celsius", 0, 0.05, delta=True, unit_strict=False
    )[0]
    ok, kind, _ = mentions_number(
        "Madrid is warmer by 18 °F.", 18, "celsius", 0, 0.05, delta=True, unit_strict=False
    )
    assert not ok and kind == "wrong"


@pytest.mark.parametrize(
    ("answer", "value", "unit", "ok"),
    [
        ("500 K (that would be 440.33 °F in fahrenheit)", 500, "kelvin", True),
        ("The result is 226.85 K.", 500, "kelvin", False),
        ("500 kelvin is 500 kelvin.", 500, "kelvin", True),
        ("To convert: 100 - 32 = 68, times 5/9 = 37.78 °C.", 37.78, "celsius", True),
        ("Step 1: 3 x 4 is 12. Step 2: add 5. The answer is 17.", 17, None, True),
        ("Step 1: 3 x 4 is 12. Step 2: add 5. The answer is 17.", 12, None, False),
        ("The total comes to $1,234.50.", 1234.5, "usd", True),
        ("It is 25.0 degrees Celsius.", 25, "celsius", True),
        ("It is 77 °F.", 25, "celsius", False),
        ("No number here.", 1, None, False),
        ("The distance is 42 km.", 42, ["km", "kilometres"], True),
        ("That is about 1.5e3 m", 1500, "m", True),
        ("It is 0.4", 0, None, True),
    ],
)
def test_check_number_regressions(answer, value, unit, ok):
    got, _, why = check_number(answer, value, unit, 0.01, 0.5 if answer == "It is 0.4" else 0.0)
    assert got is ok, why


def test_a_year_after_a_month_is_a_date_not_the_stated_result():
    q, _ = stated_result("1,287 orders were placed in March 2025")
    assert q is not None and q.value == 1287
    q, _ = stated_result("There were 14 orders on Sept 3rd, 2024")
    assert q is not None and q.value == 14
    q, _ = stated_result("The total is 2025")  # no month: a number like any other
    assert q is not None and q.value == 2025


def test_tldr_and_a_postfix_total_mark_the_result():
    text = (
        "TL;DR: 21 °C, partly cloudy.\n\n- temp_c: 21\n- humidity_pct: 64\n\nSo it's mild, humidity at 64%."
    )
    q, _ = stated_result(text, unit_of("celsius"))
    assert q is not None and q.value == 21
    text = "CHK → $2,003.66 and SAV → $13,610.00. Adding them up: $2,003.66 + $13,610.00 = $15,613.66 total."
    q, _ = stated_result(text, unit_of("usd"))
    assert q is not None and q.value == 15613.66


def test_a_rounded_value_beside_the_exact_one():
    ok, _, why = check_number(
        "26.2 miles is about forty-two kilometres, 42.16 km to be precise.", 42.16, "km", 0.001, 0
    )
    assert ok, why
    ok, _, _ = check_number("A marathon of 26.2 miles is about 42.16 miles.", 42.16, "km", 0.001, 0)
    assert not ok


@pytest.mark.parametrize(
    ("answer", "value", "unit"),
    [
        # a first clause ending in ':' that states the result is the statement, not a lead-in (batch 25)
        ("Madrid wins by eighteen degrees (18 °C): it's 24 °C and sunny there, 6 °C in Oslo.", 18, "celsius"),
        ("Madrid is 18 °C warmer: it's 24 °C there and 6 °C in Oslo.", 18, "celsius"),
        ("That's about forty-two point one six kilometres (42.16 km): a mile is 1.609 km.", 42.16, "km"),
        # a lead with no value of its own hands the result to what follows
        ("Here's the comparison: Madrid 24 °C, Oslo 6 °C, so Madrid is warmer by 18 °C.", 18, "celsius"),
        ("Temperature right now: 21 °C.", 21, "celsius"),
    ],
)
def test_a_clause_before_a_colon_that_states_the_result_is_the_statement(answer, value, unit):
    q, _ = stated_result(answer, unit_of(unit))
    assert q is not None and abs(q.value - value) < 1e-6, q


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("- Now: 21 °C\n- Forecast: 19 °C\n\nBottom line: expect about 19 °C.", "Bottom line"),
        ("Savings is the larger pot, so the answer is €12,500.00.", "the answer is"),
        ("- Ahora: 31 °C\n- Sensación: 34 °C\n\nEn resumen: unos 34 °C.", "En resumen"),
        ("In short, 21 °C now. TL;DR: 21 °C.", "TL;DR"),  # the last one
        ("- Now: 21 °C\n- Forecast: 19 °C\n\nBottom line: take an umbrella.", None),  # no figure concluded on
        ("Also 21 °C, so pleasant.", None),  # "so" inside a sentence is no lead
    ],
)
def test_concluded_at_finds_the_last_explicit_conclusion_that_gives_a_figure(text, at):
    assert concluded_at(text) == (None if at is None else text.index(at))


def test_working_after_so_is_no_conclusion_on_a_value():
    from bench_tui.graders.stated import concluded_at

    # batch 58's TC-02 (line 20): the price, then "So the stock is up on the day: 131.42 − 128.10 = 3.32" (stop 33d
    # read the difference as the conclusion, and the pass failed)
    text = "NVDA trades at $131.42.\nSo the stock is up on the day: 131.42 − 128.10 = 3.32, and 3.32 / 128.10 ≈ 2.59%."
    assert concluded_at(text) is None
    assert concluded_at("Now: 21 °C\nForecast: 19 °C\nBottom line: expect about 19 °C.") is not None


@pytest.mark.parametrize(
    ("clause", "value", "interim"),
    [
        ("so €15.30 before the discount", 15.30, True),
        ("so €15.30 pre-discount", 15.30, True),
        ("The subtotal comes to €15.30", 15.30, True),
        ("Subtotal: €15.30", 15.30, True),
        ("Before the 10% discount it comes to €15.30", 15.30, True),
        ("also 15,30 € vor dem Rabatt", 15.30, True),
        ("so €15.30", 15.30, False),  # unqualified: still a candidate
        ("250 USD is €229.60 before bank fees", 229.60, False),  # fees are no deduction of the result
        ("The subtotal is €15.30 and after the discount you pay €13.77", 13.77, False),
    ],
)
def test_is_interim_reads_a_value_qualified_as_a_step(clause, value, interim):
    from bench_tui.graders.numbers import quantities
    from bench_tui.graders.stated import is_interim

    qs = quantities(clause, "de" if "vor dem" in clause else None)
    q = next(q for q in qs if abs(q.value - value) < 1e-9)
    assert is_interim(clause, q, qs) is interim


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        # batch 61's TC-32 (line 176): the subtotal after "so" is qualified, "leaving" concludes
        (
            "3 × €4.20 = €12.60 and 2 × €1.35 = €2.70, so €15.30 before the discount. 10% off is €1.53, leaving €13.77.",
            13.77,
        ),
        # a later conclusion beats "total"
        ("€15.30 in total. The discount is €1.53, which leaves €13.77.", 13.77),
        ("So €15.30 pre-discount; less €1.53, bringing it to €13.67.", 13.67),  # a wrong one is read too
        ("Notebooks €12.60 and pens €2.70, so €15.30.", 15.30),  # unqualified and last: the result
        ("So €15.30 before the discount.", 15.30),  # nothing else stated: still read
    ],
)
def test_a_qualified_intermediate_is_no_result_and_leaving_concludes(answer, value):
    q, _ = stated_result(answer, unit_of("eur"))
    assert q is not None and abs(q.value - value) < 1e-9, q


@pytest.mark.parametrize(
    ("answer", "value", "unit", "ok"),
    [
        # batch 62's TC-10 (line 61): a hedged rounding in words after the exact figure restates it
        ("26.2 miles = 42.1648 kilometres — roughly forty-two kilometres.", 42.16, "km", True),
        ("26.2 mi → 42.1648 km. Roughly 42 km, then.", 42.16, "km", True),
        ("250 USD × 0.9184 = €229.60 — about €230.", 229.6, "eur", True),
        # no rounding of 42.16, or the rounding of a wrong value
        ("26.2 miles = 42.1648 km — roughly forty-three kilometres.", 42.16, "km", False),
        ("26.2 miles = 42.1648 km — 42.5 km or so.", 42.16, "km", False),
        ("26.2 miles = 42.6 km — roughly forty-three kilometres.", 42.16, "km", False),
        # not hedged: another value stated
        ("26.2 miles = 42.1648 km — 42 km.", 42.16, "km", False),
        # another time's value is no exact one: only joining words may stand between the two (heldout TC-22)
        ("ASML closed at €687.30 last week; today it's around €700.", 687.30, "eur", False),
    ],
)
def test_a_hedged_rounding_after_the_exact_value(answer, value, unit, ok):
    got, _, why = check_number(
        answer, value, unit, 0.002 if unit == "km" else 0, 0.0 if unit == "km" else 0.005
    )
    assert got is ok, why


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        # a conclusion that rounds the exact value stated in another part is the right result (stop 34a)
        ("CHK-2231: €1,840.25\nCombined: $15,613.66\nBottom line: roughly $15.6k in total.", True),
        # not a rounding ("$15.5k" is 113.66 off), or no exact value stated: still wrong
        ("CHK-2231: €1,840.25\nCombined: $15,613.66\nBottom line: roughly $15.5k in total.", False),
        ("Bottom line: roughly $15.6k in total.", False),
        # a rounding the answer commits to, unhedged, is read as the result (batch 47: "So the answer is $131")
        ("Combined: $15,613.66\nSo the answer is $15.6k.", False),
    ],
)
def test_a_conclusion_rounding_the_exact_value_stated_elsewhere(answer, ok):
    assert check_number(answer, 15613.66, "usd", 0, 0.02)[0] is ok


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("Madrid is warmer: 24 °C vs 6 °C in Oslo, an 18-degree Celsius difference.", 18),
        ("Madrid is the warmer city: 24 °C against Oslo's 6 °C, an 18 °C difference.", 18),
        ("Madrid is warmer: 24 °C vs 6 °C in Oslo, a 30-degree gap.", 30),
    ],
)
def test_a_value_before_a_result_noun_is_the_stated_result(answer, value):
    # stop 34g (batch 64's TC-14): the value a noun like "difference" or "gap" follows is the result, not the
    # first temperature after the colon
    q, _ = stated_result(answer, unit_of("celsius"))
    assert q is not None and q.value == value


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        # the inputs, a dash, then a difference named by a noun before it (stop 35c, batch 67's TC-14)
        ("Madrid is the warmer one at 24 °C vs Oslo's 6 °C — a difference of 18 °C.", 18),
        ("Madrid wins at 24 °C against Oslo's 6 °C – a gap of 18 degrees.", 18),
        ("Madrid is warmer; it is 24 °C there and Oslo is at 6 °C — that makes a lead of 18 °C.", 18),
        ("Madrid ist mit 24 °C wärmer, Oslo ist bei 6 °C – ein Unterschied von 18 °C.", 18),
        ("Madrid est à 24 °C et Oslo est à 6 °C — un écart de 18 °C.", 18),
        # a contrastive aside ends at the dash: the difference after it is stated
        ("It's Madrid at 24 °C, while Oslo is overcast at 6 °C – a gap of 18 degrees.", 18),
        # the wrong side: the figure named as the difference is read, wrong as it is
        ("Madrid is the warmer one at 24 °C vs Oslo's 6 °C — a difference of 16 °C.", 16),
        ("Madrid is at 24 °C and Oslo at 6 °C — a spread of 24 °C.", 24),
    ],
)
def test_a_difference_named_after_the_inputs_and_a_dash_is_the_stated_result(answer, value):
    q, _ = stated_result(answer, unit_of("celsius"))
    assert q is not None and q.value == value


def test_one_value_before_a_dash_keeps_its_working_after_it():
    # a single value before the dash is the statement; a difference after it is its working (stop 35c)
    q, _ = stated_result("NVDA is at $131.42 — a gap of $3.32 over the $128.10 close.", unit_of("usd"))
    assert q is not None and q.value == 131.42


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("a difference of 18 °C", True),
        ("the gap between the two is 18 °C", True),
        ("ein Unterschied von 18 °C", True),
        ("un écart de 18 °C", True),
        ("so 18 °C apart", True),
        ("an 18-degree spread", True),
        ("18 °C d'écart", True),
        ("a difference of 24 − 6", False),  # an operand of the subtraction
        ("Oslo is at 6 °C", False),
        ("a big difference, with Oslo at 6 °C", False),  # the comma ends the noun's reach
    ],
)
def test_names_difference(text, named):
    q = quantities(text)[0]
    assert names_difference(text, q) is named

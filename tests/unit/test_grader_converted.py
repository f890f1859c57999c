"""Direct tests of graders/converted.py's reading of a conversion's working (stop 33b)."""

import pytest

from bench_tui.graders.converted import _evaluate, wrong_conversions


@pytest.mark.parametrize(
    ("step", "lang", "value"),
    [
        ("21 × 9/5 + 32", None, 69.8),
        ("(24 × 1.8) + 32", None, 75.2),
        ("31 · 1,8 + 32", "es", 87.8),
        ("15*9/5+32", None, 59.0),
        ("(75 − 32) × 5/9", None, 23.888888888888886),
        ("17 °C × 9/5 + 32", None, 62.6),
        ("21 × ", None, None),
    ],
)
def test_evaluate_reads_one_step_of_a_working(step, lang, value):
    got = _evaluate(step, lang)
    assert got == pytest.approx(value) if value is not None else got is None


@pytest.mark.parametrize(
    "text",
    [
        "Lisbon: 21 °C. In Fahrenheit that works out to 21 × 9/5 + 32 ≈ 75 °F.",
        "Sevilla: 31 °C. Para quien piense en Fahrenheit: 31 × 9/5 + 32 = 86 °F.",
        "Gap: 18 °C, which in Fahrenheit is 18 × 9/5 + 32 = 64.4 °F warmer.",
        "Porto: 17 °C, i.e. 17 × 9/5 + 32 = 28.6 + 32 = 62.6 °F.",
        "**Lisbon:** 21 °C\n- in Fahrenheit: 21 × 9/5 + 32 ≈ 72 °F",
        "It's 21 °C, so 21 × 9/5 = 37.8 °F.",
    ],
)
def test_a_wrong_working_is_a_wrong_conversion(text):
    assert wrong_conversions(text, [], [])


@pytest.mark.parametrize(
    "text",
    [
        "Lisbon: 21 °C, that is 21 × 9/5 + 32 = 69.8 °F.",
        "Lisbon: 21 °C, that is 21 × 9/5 + 32 ≈ 70 °F.",
        "Sydney: 15 °C (15 × 1.8 = 27 + 32 = 59 °F).",
        "Madrid is 18 °C warmer: a gap of 18 × 9/5 = 32.4 °F.",
        "Madrid 24 °C vs Oslo 6 °C: 24 − 6 = 18 °C.",
        "Highs of 15-17 °C = 59-63 °F.",
        "A marathon of 26.2 miles is 26.2 × 1.60934 = 42.16 km.",
    ],
)
def test_a_right_working_or_no_conversion_is_not_flagged(text):
    assert wrong_conversions(text, [], []) == []

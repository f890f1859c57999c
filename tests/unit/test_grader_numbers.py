"""graders.numbers: numbers and units read by value."""

from __future__ import annotations

import pytest

from bench_tui.graders.numbers import digits_read, parse_number, quantities


@pytest.mark.parametrize(
    ("raw", "lang", "value"),
    [
        ("1,234.5", None, 1234.5),
        ("1.234,5", None, 1234.5),
        ("1 234,5", None, 1234.5),
        ("131,42", None, 131.42),
        ("1,250", None, 1250.0),
        ("1,250", "de", 1.25),
        ("1.250", "de", 1250.0),
        ("4.0988", None, 4.0988),
        (".5", None, 0.5),
    ],
)
def test_parse_number_by_locale(raw, lang, value):
    assert parse_number(raw, lang) == pytest.approx(value)


def test_quantities_read_currency_codes_and_skip_times_dates_and_ids():
    qs = quantities(
        "NVDA: USD 131.42 at 15:59 ET on 2025-03-13, ticket OPS-4471, invoice #8812, 131,42 €, -5 °C"
    )
    got = [(q.value, q.unit.name if q.unit else None) for q in qs]
    assert got == [(131.42, "usd"), (131.42, "eur"), (-5.0, "celsius")]


def test_number_words_in_several_languages():
    assert [q.value for q in quantities("twenty-one degrees")] == [21.0]
    assert [q.value for q in quantities("treinta y un grados")] == [31.0]
    assert [q.value for q in quantities("It's minus 273.15 °C")] == [-273.15]


def test_an_exchange_rate_is_not_the_amount_and_a_count_is_not_a_quantity():
    assert quantities("Today's USD→EUR rate is 0.9184 euros per dollar.") == []
    assert [q.value for q in quantities("NVDA: $131.42 a share")] == [131.42]  # a unit price is the answer
    assert quantities("Madrid is the warmer of the two right now.") == []
    assert [q.value for q in quantities("The two cities are 18 degrees apart.")] == [18.0]


def test_money_with_three_decimals_is_thousands():
    assert [q.value for q in quantities("EUR 9.800 today")] == [9800.0]
    assert [q.value for q in quantities("9.800 €")] == [9800.0]
    assert [q.value for q in quantities("9.8 km")] == [9.8]


def test_a_currency_before_the_word_in_stays_a_currency():
    (q,) = quantities("You have $1,840.25 in your main account.")
    assert q.unit is not None and q.unit.name == "usd"
    (q,) = quantities("Wake me at 5 in the morning.")
    assert q.unit is None  # the preposition, not inches


def test_a_range_takes_its_unit_and_cents_in_words_count():
    assert [(q.value, q.unit.name if q.unit else None) for q in quantities("it may take 20–30 minutes")] == [
        (20.0, "min"),
        (30.0, "min"),
    ]
    qs = quantities("one share costs six hundred eighty-seven euros and thirty cents")
    assert [(q.value, q.unit.name if q.unit else None) for q in qs] == [(687.3, "eur")]


@pytest.mark.parametrize(
    "text",
    [
        "1 EUR = 1,0888 USD",
        "€1 = $1.0888 today",
        "Der Kurs liegt bei 1,0888 US-Dollar pro Euro.",
        "Für einen Euro bekommst du 1,0888 US-Dollar.",
        "le taux de change est de 0,9184 euro pour un dollar",
        "One US dollar buys 0.9184 euros.",
        "0.9184 euros to the dollar",
        "at today's 0.9184 rate",
        "tipo de cambio de 0,9184",
    ],
)
def test_an_exchange_rate_in_any_language_is_not_an_amount(text):
    assert quantities(text, "de") == []


def test_an_amount_near_a_rate_word_or_a_one_is_still_an_amount():
    # the rate as the manner ("after today's rate"), not the rate's value: the amount is the result
    assert [q.value for q in quantities("1.234,50 Euro sind nach dem aktuellen Kurs $1,344.12.", "de")] == [
        1234.5,
        1344.12,
    ]
    assert [q.value for q in quantities("The fee is €1: paid.")] == [1.0]
    assert [q.value for q in quantities("Umgerechnet sind das 1'344.12 US-Dollar.", "de")] == [1344.12]


@pytest.mark.parametrize(
    ("text", "lang", "value"),
    [
        ("eintausenddreihundertvierundvierzig US-Dollar und zwölf Cent", "de", 1344.12),
        ("zweitausendfünfhundert Euro", "de", 2500),
        ("duizenddriehonderdvierenveertig dollar en twaalf cent", "nl", 1344.12),
        ("milletrecentoquarantaquattro dollari e dodici centesimi", "it", 1344.12),
        ("mille trois cent quarante-quatre dollars et douze cents", "fr", 1344.12),
        ("quatre-vingt-dix-neuf euros", "fr", 99),
        ("mil trescientos cuarenta y cuatro dólares y doce céntimos", "es", 1344.12),
        ("mil trezentos e quarenta e quatro dólares e doze centavos", "pt", 1344.12),
        ("two hundred and twenty-nine euros and sixty cents", None, 229.6),
    ],
)
def test_amounts_in_words_with_compounds_and_cents(text, lang, value):
    got = quantities(text, lang)
    assert len(got) == 1 and got[0].value == pytest.approx(value)


def test_words_that_merely_contain_number_parts_are_not_numbers():
    assert (
        quantities("due to rain, none of the seven", None) == []
    )  # "due" is Italian only; "the seven" a count
    assert quantities("Sei sicuro? Il tempo è bello.", "it") == []  # "sei" alone is "you are"
    assert quantities("Es gibt einen Grund, eine Frage und ein Problem.", "de") == []  # articles


@pytest.mark.parametrize(
    "text, want",
    [
        ("SAV-9012 €12,500.00 and CHK-2231 €1,840.25", [("€12,500.00", "eur"), ("€1,840.25", "eur")]),
        ("a 26.2-mile marathon", [("26.2-mile", "mile")]),
        ("a 5-km run, then 3 km more", [("5-km", "km"), ("3 km", "km")]),
        ("a 2-in-1 charger for 30 €", [("2", None), ("30 €", "eur")]),  # "in" is no unit here
    ],
)
def test_a_sign_before_digits_is_the_next_amounts_and_a_unit_may_be_hyphenated(text, want):
    got = [(q.text, q.unit.name if q.unit else None) for q in quantities(text)]
    assert got == want


@pytest.mark.parametrize(
    "text, unit",
    [
        ("31 grados Fahrenheit", "fahrenheit"),
        ("31 GRADOS FAHRENHEIT", "fahrenheit"),
        ("31 Grad F", "fahrenheit"),
        ("17 degres fahrenheit", "fahrenheit"),  # no accent
        ("24 graden Fahrenheit", "fahrenheit"),
        ("21° Fahrenheit", "fahrenheit"),
        ("21.5º Fahrenheit", "fahrenheit"),
        ("500 grados Kelvin", "kelvin"),
        ("31 grados centígrados", "celsius"),
        ("31 grados", "celsius"),  # a degree word alone keeps its reading
        ("31 graden", "celsius"),
        ("31 degrees", None),  # English "degrees" alone names no scale
        ("30 km per hour", "kmh"),
        ("55 kilómetros por hora", "kmh"),
        ("35 millas por hora", "mph"),
        ("5 km", "km"),
    ],
)
def test_a_degree_word_before_a_scale_is_that_scale_and_a_length_per_hour_a_speed(text, unit):
    (q,) = quantities(text)
    assert (q.unit.name if q.unit else None) == unit


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("seat fourteen C", "seat 14 C"),
        ("from eleven to twelve", "from 11 to 12"),
        ("nine thousand eight hundred euros", "9800 euros"),
        ("twelve hundred fifty euros, seventy-five", "1250 euros, 75"),
        ("one hundred and five", "105"),
        ("forty-two point sixteen km", "42.16 km"),
        ("forty-two point one six", "42.16"),
        ("twenty-one and a half", "21.5"),
        ("at fifteen thirty", "at 15 30"),  # a teen never takes a ten after it
        ("one of them, once", "one of them, once"),  # mostly other words when alone
        ("someone", "someone"),
    ],
)
def test_numbers_in_words_read_as_digits(said, read):
    assert digits_read(said) == read


@pytest.mark.parametrize(
    ("said", "lang", "read"),
    [
        ("Sitz vierzehn C, elf bis zwölf Uhr", "de", "Sitz 14 C, 11 bis 12 Uhr"),
        ("siège quatorze C, de onze à douze heures", "fr", "siège 14 C, de 11 à 12 heures"),
        ("à sept heures", "fr", "à 7 heures"),
        ("asiento catorce C, de once a doce", "es", "asiento 14 C, de 11 a 12"),
        ("vierundvierzig Komma eins", "de", "44.1"),
    ],
)
def test_numbers_in_words_read_as_digits_in_the_answers_language(said, lang, read):
    assert digits_read(said, lang) == read


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("NVDA is at a hundred thirty-one dollars forty-two a share.", 131.42),
        ("ASML goes for six hundred eighty-seven euros thirty each.", 687.30),
        ("Twelve hundred fifty euros, seventy-five went to SAV-9012.", 1250.75),
        ("A marathon is forty-two point sixteen kilometres.", 42.16),
        ("It holds eighteen hundred forty point twenty-five euros.", 1840.25),
    ],
)
def test_spoken_cents_and_two_digit_decimals(said, value):
    assert any(abs(q.value - value) < 1e-9 for q in quantities(said))


def test_a_count_after_the_currency_word_is_no_cents():
    assert not any(
        abs(q.value - 13.77) < 1e-9 for q in quantities("thirteen euros, seventy-seven percent of it")
    )
    assert not any(
        abs(q.value - 687.3) < 1e-9 for q in quantities("six hundred eighty-seven euros, thirty shares")
    )


def test_a_decade_names_a_range_only_after_a_part_word_or_a_preposition():
    # "in the low $130s" holds 131.42 without stating it; "the 30s timeout" is thirty seconds, no range
    low = quantities("NVDA is trading in the low $130s per share.")
    assert [(q.low, q.high, q.unit.name if q.unit else None) for q in low] == [(130.0, 134.0, "usd")]
    assert [(q.low, q.high) for q in quantities("somewhere in the 130s")] == [(130.0, 140.0)]
    (secs,) = quantities("the 30s timeout hit twice")
    assert secs.low is None and secs.unit is not None and secs.unit.name == "s"


def test_a_decade_of_years_after_a_bare_the_is_no_seconds():
    # stop 31's noted hole: "since the 2010s" was 2,010 seconds; "the 1200s timeout" stays seconds (no year)
    (years,) = quantities("Hubs like this have been cheap since the 2010s.")
    assert (years.low, years.high, years.unit) == (2010.0, 2020.0, None)
    (secs,) = quantities("the 1200s timeout hit twice")
    assert secs.unit is not None and secs.unit.name == "s"


@pytest.mark.parametrize(
    "text",
    [
        "I counted the orders placed between 1 and 31 March 2025.",
        "orders from 1 to 31 March",
        "the window 1–31 March 2025",
        "checked March 1-31, 2025 in the table",
        "du 1 au 31 mars 2025",
        "vom 1. bis 31. März",
    ],
)
def test_the_days_of_a_date_range_are_no_quantity(text):
    # stop 34g (batch 64's TC-49): the first day of "between 1 and 31 March" was read as a count of 1
    assert quantities(text) == []


def test_a_count_beside_a_date_range_is_still_read():
    assert [q.value for q in quantities("Between 1 and 31 March 2025 I count 1,278 orders.")] == [1278.0]
    assert [q.value for q in quantities("1–31 March 2025: 12 orders.")] == [12.0]
    # no month after the second figure: a range of counts, both read
    assert [q.value for q in quantities("between 3 and 5 days")] == [3.0, 5.0]

"""graders.dates: times, dates, weekdays and the option an answer picks."""

from __future__ import annotations

import datetime as dt

import pytest

from bench_tui.graders.dates import (
    alternative_time,
    asides_outside,
    clock_restated,
    dates,
    named_as_other,
    named_outside,
    stated_choice,
    times,
    tool_names,
    weekday_conflicts,
    working_start,
)


def test_times_in_common_formats():
    assert times("5:25 pm, 17h25, 14 h 30, 3pm, 10.47 p.m.") == [1045, 1045, 870, 900, 1367]
    assert times("it costs €16.50 and weighs 4.10 kg") == []


def test_dates_compared_as_values_and_weekday_checked():
    found = {d.date for d in dates("Thu 13 Mar, 13/03/2025, March 13th, 13 de marzo, le 13 mars", 2025)}
    assert found == {dt.date(2025, 3, 13)}
    assert weekday_conflicts("Booked for Thursday 13 March", 2025) == []
    assert weekday_conflicts("Booked for Wednesday 13 March", 2025)


def test_stated_choice_reads_the_conclusion_not_the_list():
    opts = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
    listing = "- Mon: 18 °C\n- Tue: 21 °C\n- Wed: 24 °C\n- Thu: 22 °C\n- Fri: 19 °C\n\n"
    assert stated_choice(listing + "Go for **Thu 5 June**.", opts, 2025)[0] == "Thursday"
    assert (
        stated_choice(listing + "Wednesday is the best day, if you bring an umbrella.", opts)[0]
        == "Wednesday"
    )
    assert stated_choice("Thursday is your day. Wednesday is warmer but wet.", opts)[0] == "Thursday"
    assert stated_choice("Plan the picnic for 2025-06-05.", opts, 2025)[0] == "Thursday"


def test_day_month_without_a_year_after_an_article():
    got = [d.date.isoformat() for d in dates("Trois jours fériés : le 01/05, le 08/05 et le 29/05.", 2025)]
    assert got == ["2025-05-01", "2025-05-08", "2025-05-29"]
    assert dates("Highs and lows of 17/9 °C.", 2025) == []


def test_day_month_after_a_colon_or_comma():
    got = [d.date.isoformat() for d in dates("Jours fériés : 01/05 (Travail), 08/05, 29/05.", 2025)]
    assert got == ["2025-05-01", "2025-05-08", "2025-05-29"]


def test_days_listed_under_one_month_are_dates():
    def iso(text: str) -> list[str]:
        return [d.date.isoformat() for d in dates(text, 2025)]

    may = ["2025-05-01", "2025-05-08", "2025-05-29"]
    assert iso("les 1er, 8 et 29 mai") == may
    assert iso("jeudi 1er, jeudi 8 et jeudi 29 mai 2025") == may
    assert iso("May 1, 8 and 29 are holidays.") == may
    assert iso("el 1, el 8 y el 29 de mayo") == may
    assert iso("En mai 2025 : le 1er (Fête du Travail), le 8 (Victoire 1945) et le 29 (Ascension).") == may
    assert iso("In May: the 8th and the 29th") == ["2025-05-08", "2025-05-29"]
    # no list, no month context: a number before a date, "you may", a time after "le"
    assert iso("Order 3, 8 May") == ["2025-05-08"]
    assert iso("You may see the 3 options, the 4th one") == []
    assert iso("le 8 à 14 h 30") == []


@pytest.mark.parametrize(
    "text",
    [
        "En mai 2025 : 01/05 (Fête du Travail), 08/05 (Victoire 1945) et 29/05 (Ascension).",
        "Frei sind am 01.05. und 29.05.",
        "Festivos: el 01/05 y 29/05.",
        "Holidays fall on 01/05 and 29/05.",
        "Mai 2025 compte 01/05, 08/05 puis 29/05.",
    ],
)
def test_day_month_dates_in_a_prose_list(text):
    got = {d.date.isoformat() for d in dates(text, 2025)}
    assert {"2025-05-01", "2025-05-29"} <= got


@pytest.mark.parametrize(
    "text",
    [
        "Le 1er mai, et 3/4 des salariés font le pont.",
        "Les urgences restent ouvertes 24/7 et 7/7.",
        "Un partage 60/40 et 3/4 du budget.",
    ],
)
def test_fractions_and_ratios_in_prose_are_not_dates(text):
    assert [d.date.isoformat() for d in dates(text, 2025)] in ([], ["2025-05-01"])


@pytest.mark.parametrize(
    ("said", "want", "agrees"),
    [
        ("Booked for Friday the 21st at 9:15.", "2025-03-21", True),
        ("Booked for Fri 21st.", "2025-03-21", True),
        ("Booked on the 21st, a Friday.", "2025-03-21", True),
        ("Réservé pour vendredi 21 à 9h15.", "2025-03-21", True),
        ("Gebucht für Freitag, den 21., um 9:15.", "2025-03-21", True),
        ("Booked for Friday the 22nd.", "2025-03-22", False),  # Saturday: the weekday conflicts
        ("Booked for Thursday 21st.", "2025-03-21", False),
    ],
)
def test_weekday_and_day_read_in_the_months_of_the_conversation(said, want, agrees):
    found = dates(said, 2025, ((2025, 3),))
    assert [d.date.isoformat() for d in found] == [want]
    assert (weekday_conflicts(said, 2025, ((2025, 3),)) == []) is agrees


@pytest.mark.parametrize(
    "said",
    ["See you Friday 9:15.", "Friday 10 am works.", "Friday 2 hours later", "Friday", "Thursday, 3–4 pm"],
)
def test_a_weekday_before_a_time_or_a_count_is_no_date(said):
    assert dates(said, 2025, ((2025, 3),)) == []


def test_the_answers_own_month_comes_first():
    found = dates("En mai 2025 : jeudi 8 et jeudi 29.", 2025, ((2025, 1),))
    assert [d.date.isoformat() for d in found] == ["2025-05-08", "2025-05-29"]


def test_a_weekday_before_a_time_range_is_no_date():
    assert dates("It's on your calendar for this Thursday, 3–3:45 pm.", 2025, ((2025, 3),)) == []


@pytest.mark.parametrize(
    ("said", "clock"),
    [
        # batch 31's class (classes_batch31b.cases.yaml): a clock time said in words, its cue setting the half of
        # the day; a bare number word or "half"/"quarter" in another sense is none
        ("a quarter past nine", ["09:15"]),
        ("quarter to eleven at night", ["22:45"]),
        ("at half past seven tomorrow morning", ["07:30"]),
        ("twelve past six", ["06:12"]),
        ("ten forty-seven pm", ["22:47"]),
        ("seven thirty in the morning", ["07:30"]),
        ("it's nine fifteen", ["09:15"]),
        ("à deux heures et demie de l'après-midi", ["14:30"]),
        ("à quatorze heures trente", ["14:30"]),
        ("um halb acht", ["07:30"]),
        ("Viertel nach neun", ["09:15"]),
        ("halb acht heute Abend", ["19:30"]),
        ("neun Uhr fünfzehn", ["09:15"]),
        ("a las dos y media de la tarde", ["14:30"]),
        ("las siete menos cuarto de la mañana", ["06:45"]),
        ("10:47 at night", ["22:47"]),
        ("6:12 in the evening", ["18:12"]),
        ("7h30 du matin", ["07:30"]),
        ("nine", []),
        ("half of that", []),
        ("a quarter of the budget", []),
        ("five to ten people", []),
        ("pendant deux heures", []),
        ("las dos opciones", []),
        # a written time, then "Uhr", then the half of the day: the word sets it as after a bare time, and the
        # "12 Uhr abends" inside "6:12 Uhr abends" is no time of its own (read 12:00 before)
        ("um 6:12 Uhr abends", ["18:12"]),
        ("um 6.12 Uhr morgens", ["06:12"]),
        ("10:47 Uhr nachts", ["22:47"]),
        ("um 9 Uhr abends", ["21:00"]),
        ("um 18:12 Uhr", ["18:12"]),
        ("6:12 Uhr", ["06:12"]),
        ("um 9 Uhr 15", ["09:15"]),
    ],
)
def test_clock_times_said_in_words_or_written_with_a_cue_are_read(said, clock):
    assert [f"{v // 60:02d}:{v % 60:02d}" for v in times(said)] == clock


TOKYO = "What time is it in Tokyo at the moment?\nAsia/Tokyo"


@pytest.mark.parametrize(
    ("said", "wrong"),
    [
        ("22:47 on Tuesday, which is 11:47 pm in 12-hour format", "11:47 pm"),
        ("It's 8:47 pm, which in 24-hour notation is 22:47", "8:47 pm"),  # the wrong one first
        ("22:47 / 11:47 pm", "11:47 pm"),
        ("22:47 Uhr, d. h. 11:47 Uhr abends", "11:47 Uhr abends"),
        ("22:47 on Tuesday; in 24-hour terms that's 23:47", "23:47"),  # a named clock, both without am/pm
        ("22:47 (10:47 pm)", None),  # right
        ("22:47, or 10:47 pm", None),
        ("22:47 (11 pm)", None),  # an hour alone, rounded
        ("22:47 JST, which is 13:47 UTC", None),  # another zone
        ("22:47, that's 3:47 pm in Paris", None),  # another place
        ("22:47 — that's 2:47 pm your time", None),
        ("22:47 or 11:47 pm", None),  # "or" with no comma: two times
        ("22:47, that's a quarter to eleven at night", None),  # said in words, rounded
        ("22:47 (Tuesday). The next one is at 9:00 am", None),  # another sentence
    ],
)
def test_clock_restated_reads_the_asked_time_said_again_in_the_other_clock(said, wrong):
    assert clock_restated(said, 22 * 60 + 47, TOKYO) == wrong


@pytest.mark.parametrize("said", ["14:50 + 2:35 = 5:25 pm", "14:50 plus 2:35, that's 5:25 pm"])
def test_clock_restated_leaves_a_duration_alone(said):
    assert clock_restated(said, 17 * 60 + 25) is None


@pytest.mark.parametrize(
    "said, start, reaches",
    [
        ("5:25 pm (14:50 + 2 h 35 min).", "14:50", True),
        ("departs 14:50, plus 2:35 of travel", "14:50", True),
        ("14:50 → +2h35 → 17:25", "14:50", True),
        ("from 14:50 add 2 hours 35 minutes", "14:50", True),
        ("14:50 + 155 min", "14:50", True),
        ("19:00 - 1 h 35 min", "19:00", True),  # taken away
        ("14:50 + 2 h 45 min", "14:50", False),  # lands on 17:35
        ("14:50 + 2 h 35 min = 18:25", "14:50", False),  # written out to a wrong end
        ("14:50, then 17:25", "14:50", False),  # no duration
    ],
)
def test_working_start_is_a_time_plus_a_duration_that_reaches_the_result(said, start, reaches):
    b = said.index(start) + len(start)
    h, m = start.split(":")
    assert working_start(said, b, int(h) * 60 + int(m), 17 * 60 + 25) is reaches


@pytest.mark.parametrize(
    "said, other",
    [
        ("It arrives at 5:25 pm, or maybe 17:50.", "17:50"),
        ("either 17:25 or 18:25", "18:25"),
        ("5:25 pm or perhaps 6:25 pm", "6:25 pm"),
        ("17:25 or 5:25 pm", None),  # the same instant
        ("17:25, or 17:40 if it runs late", None),  # a condition
        ("17:25 or 16:25 UTC", None),  # another zone
        ("14:50 + 2:35 = 17:25", None),  # no "or"
    ],
)
def test_alternative_time_is_another_time_offered_with_or(said, other):
    assert alternative_time(said, 17 * 60 + 25) == other


MAY_HOLIDAYS = {"2025-05-01", "2025-05-08", "2025-05-29"}


@pytest.mark.parametrize(
    "text, other",
    [
        # bridge days, a working day, the day or the weekend before or after, in four languages
        (
            "Holidays in May 2025: May 1, May 8 and May 29. All three are Thursdays, so Friday May 2, 9 and 30 make "
            "natural bridge days.",
            {"2025-05-02", "2025-05-09", "2025-05-30"},
        ),
        (
            "Holidays: 1 May, 8 May, 29 May. The Friday after Ascension, 30 May, is a popular day off.",
            {"2025-05-30"},
        ),
        ("Holidays: May 1, 8 and 29. The weekend before, May 24, is an ordinary one.", {"2025-05-24"}),
        ("Holidays: 1 May, 8 May, 29 May. Friday 2 May is a working day.", {"2025-05-02"}),
        (
            "Fériés : 1er, 8 et 29 mai. Le 1er tombe un jeudi ; le lendemain, vendredi 2 mai, on fait le pont.",
            {"2025-05-02"},
        ),
        (
            "Festivos en mayo de 2025: 1 de mayo, 8 de mayo y 29 de mayo. Como caen en jueves, el viernes 2 de mayo "
            "muchos hacen puente.",
            {"2025-05-02"},
        ),
        (
            "Feiertage im Mai 2025: 1. Mai, 8. Mai und 29. Mai. Brückentage bieten sich am Freitag, 2. Mai, 9. Mai "
            "und 30. Mai an.",
            {"2025-05-02", "2025-05-09", "2025-05-30"},
        ),
        ("Feiertage: 1. Mai, 8. Mai und 29. Mai. Das Wochenende davor (24. Mai) ist normal.", {"2025-05-24"}),
        # a table column headed as another kind of day
        (
            "| Holiday | Date | Bridge day |\n|---|---|---|\n| Labour Day | 1 May | 2 May |\n| Victory | 8 May | 9 May |",
            {"2025-05-02", "2025-05-09"},
        ),
        # listed with the holidays, or said to be one after all: not set apart
        ("Holidays: May 1, May 2, May 8 and May 29, so plenty of long weekends.", set()),
        ("Holidays: May 1, 8 and 29. The day after Ascension, May 30, is a holiday too.", set()),
        (
            "Festivos: 1 de mayo, 8 de mayo y 29 de mayo. El día siguiente, 30 de mayo, también es festivo.",
            set(),
        ),
        (
            "Feiertage: 1. Mai, 8. Mai und 29. Mai. Der Tag danach, der 30. Mai, ist ebenfalls ein Feiertag.",
            set(),
        ),
        ("Jours fériés : 1er mai, 8 mai, 29 mai et 30 mai. Pensez aux ponts !", set()),
        ("Holidays:\n- 1 May\n- 8 May\n- 29 May\n- 9 June: Whit Monday (a long weekend)", set()),
    ],
)
def test_named_as_other_reads_dates_called_another_kind_of_day(text, other):
    assert named_as_other(text, MAY_HOLIDAYS, 2025) == other


def test_asides_outside_are_true_dates_beyond_the_asked_months_and_outside_their_list():
    told = MAY_HOLIDAYS | {"2025-04-21", "2025-06-09"}
    assert asides_outside(
        "May 2025: May 1 and May 8. Note that Whit Monday falls on June 9.", MAY_HOLIDAYS, told, 2025
    ) == {"2025-06-09"}
    assert asides_outside(
        "Mai 2025: 1. Mai und 8. Mai. Pfingstmontag ist am 9. Juni.", MAY_HOLIDAYS, told, 2025
    ) == {"2025-06-09"}
    # listed among May's, or a date nobody gave: no aside
    assert (
        asides_outside("May 2025: May 1, May 8 and June 9 (Whit Monday).", MAY_HOLIDAYS, told, 2025) == set()
    )
    assert (
        asides_outside(
            "Mayo de 2025: 1 y 8 de mayo. La Ascensión cae el 5 de junio.", MAY_HOLIDAYS, told, 2025
        )
        == set()
    )


_FR_HOLIDAYS_RESULT = (
    '{"country": "FR", "year": 2025, "holidays": [{"date": "2025-01-01", "name": "Jour de l\'an"}, '
    '{"date": "2025-05-01", "name": "Fête du Travail"}, {"date": "2025-05-29", "name": "Ascension"}, '
    '{"date": "2025-06-09", "name": "Lundi de Pentecôte"}]}'
)


def test_tool_names_are_the_dated_names_of_a_tool_result():
    assert tool_names(["Quels sont les jours fériés ?", _FR_HOLIDAYS_RESULT]) == {
        "Jour de l'an": "2025-01-01",
        "Fête du Travail": "2025-05-01",
        "Ascension": "2025-05-29",
        "Lundi de Pentecôte": "2025-06-09",
    }
    # a name given on two dates names no one day
    assert tool_names(['{"date": "2025-05-01", "name": "X"}', '{"name": "X", "date": "2025-06-01"}']) == {}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        # listed with May's days by its name: a wrong member
        ("Quatre jours fériés : le 1er, le 8, le 29 mai et le lundi de Pentecôte.", {"2025-06-09"}),
        ("May 2025: May 1, May 8, May 29 and Pentecost Monday.", {"2025-06-09"}),
        ("Jours fériés :\n- 1er mai\n- 8 mai\n- 29 mai\n- Lundi de Pentecôte", {"2025-06-09"}),
        ("Le 1er et le 8 mai, ainsi que le **lundi de Pentecôte**.", {"2025-06-09"}),
        # placed outside, next, in brackets, negated, or a name inside the month: not listed
        ("Le 1er, le 8 et le 29 mai. Le lundi de Pentecôte tombe le 9 juin.", set()),
        ("Le 1er, le 8 et le 29 mai ; la Pentecôte tombe le 9 juin.", set()),
        ("Le 1er, le 8 et le 29 mai (le lundi de Pentecôte est en juin).", set()),
        ("Le 1er, le 8 et le 29 mai, puis le lundi de Pentecôte en juin.", set()),
        ("Le 1er, le 8 et le 29 mai, mais pas le lundi de Pentecôte.", set()),
        ("Le 1er mai, le 8 mai et l'Ascension.", set()),
        # "Jour de l'an" has no word of its own: "jours fériés" does not name it
        ("Les jours fériés : le 1er, le 8 et le 29 mai.", set()),
    ],
)
def test_named_outside_reads_a_list_item_named_by_a_tool_name_outside_the_asked_months(text, named):
    names = tool_names([_FR_HOLIDAYS_RESULT])
    assert set(named_outside(text, MAY_HOLIDAYS, names, 2025)) == named


def test_day_references_resolve_against_today_where_it_is_known():
    from bench_tui.graders.dates import day_references, today_of

    sunday = today_of(["Current date and time: Sunday 2025-09-14 19:05."])
    assert sunday == dt.date(2025, 9, 14)
    assert today_of(["Nous sommes le vendredi 28 mars 2025."]) == dt.date(2025, 3, 28)

    def days(text, today=None):
        return [(r.text, r.days and sorted(r.days), r.weekday) for r in day_references(text, today)]

    assert days("call the plumber on Monday", sunday) == [("Monday", [1], 0)]
    assert days("the day after tomorrow", sunday) == [("day after tomorrow", [2], 1)]
    # without today: "next Monday" is not today or tomorrow, a plain weekday unknown
    assert days("from next Monday on")[0][1] == list(range(2, 14))
    assert days("on Tuesday") == [("Tuesday", None, 1)]
    assert days("in two days") == [("in two days", [2], None)]
    assert days("Last night's build") == [("Last night", [-1, 0], None)]
    assert days("rappel demain, pas lundi prochain") == [
        ("demain", [1], None),
        ("lundi", list(range(2, 14)), 0),
    ]
    # "mañana" after an article and "Morgen" as a noun are the morning; short forms only capitalised
    assert days("esta mañana, por la mañana") == [("esta mañana", [0], None)]
    assert days("heute Morgen") == [("heute", [0], None)]
    assert days("we sat down; the wed couple") == []


def test_period_labels_read_quarters_halves_fiscal_years_weeks_and_months_not_dates():
    from bench_tui.graders.dates import period_labels

    def labels(text):
        return [(r.group, r.label) for r in period_labels(text)]

    assert labels("Q3 churn report") == [("quarter", 3)]
    assert labels("the fourth-quarter figures, le 3e trimestre, das 2. Quartal") == [
        ("quarter", 4),
        ("quarter", 3),
        ("quarter", 2),
    ]
    assert labels("H1 plan, FY25 budget, fiscal 2024") == [
        ("half", 1),
        ("fiscal year", 2025),
        ("fiscal year", 2024),
    ]
    assert labels("week 12 report") == [("week", 12)]
    assert labels("the April numbers are due 3 April") == [("month", 4)]  # the date's month is no label
    assert labels("the first half of the meeting") == []

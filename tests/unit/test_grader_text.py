"""graders.text: sentences, counts, asides and language."""

from __future__ import annotations

import pytest

from bench_tui.graders.text import (
    content_lines,
    detect_language,
    has_stem,
    line_count,
    sentences,
    statement,
    word_count,
    written_in_other,
)


def test_sentences_know_abbreviations_decimals_and_versions():
    text = "A 404 means not found, i.e. no such page, e.g. after a typo. Version 1.2.3 is out. Dr. Who is 3.5 m tall."
    assert sentences(text) == [
        "A 404 means not found, i.e. no such page, e.g. after a typo.",
        "Version 1.2.3 is out.",
        "Dr. Who is 3.5 m tall.",
    ]
    assert len(sentences("The U.S. dollar fell. It rose again!")) == 2


def test_word_and_line_counts_ignore_markdown_and_blank_lines():
    assert word_count("**Hello** `there`, my friend") == 4
    assert line_count("a\n\n  \nb\nc\n") == 3


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("En Sevilla hace sol y 31 °C ahora mismo.", "es"),
        ("Il y a trois jours fériés en mai : le 1er, le 8 et le 29.", "fr"),
        ("1.234,50 Euro sind heute 1.344,12 US-Dollar.", "de"),
        ("A fatura está vencida e não foi paga.", "pt"),
        ("Buongiorno a tutti, oggi il tempo è bello.", "it"),
        ("It's 21 °C and partly cloudy in Lisbon.", "en"),
        ("4月3日14時30分にリマインダーを設定しました。", "ja"),
    ],
)
def test_detect_language(text, lang):
    assert detect_language(text) == lang


def test_stems_match_inflections():
    assert has_stem("cielos despejados", "despejado")
    assert not has_stem("está lloviendo", "despejado")


def test_a_question_states_nothing():
    st = statement(
        "Five hundred kelvin is still five hundred kelvin. Want it in Celsius or Fahrenheit instead?"
    )
    assert "Fahrenheit" not in st and "five hundred kelvin" in st


def test_abbreviations_are_one_word():
    text = "Status 404 means the server was reached but could not find the requested resource, e.g. a mistyped or deleted page."
    assert word_count(text) == 20


def test_would_have_been_is_conditional():
    st = statement(
        "Total €55.00. (The other mouse would have been 2,51 € cheaper per unit.)", keep_brackets=True
    )
    assert "2,51" not in st


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("Here's one:\n\nA\nB\nC\nD", 4),  # a lead-in
        ("Sure! Here's an acrostic for CODE:\nA\nB\nC\nD", 4),  # a lead-in without a blank line
        ("### CODE\n\nA\nB\nC\nD", 4),  # a title
        ("Cape Town is windy today.\n\n*A limerick*\n\nA\nB\nC\nD\nE", 5),  # two one-line paragraphs
        ("A\nB\nC\nD\n\nWant another one?", 4),  # a closing line to the reader
        ("A\nB\nC\nD\n\n(An acrostic for CODE!)", 5),  # a caption is a line
        ("A\nB\nC", 3),
    ],
)
def test_content_lines_leave_out_a_lead_in_and_a_closing_line(text, n):
    assert len(content_lines(text)) == n


def test_informal_german_is_german():
    assert detect_language("Bei 1,0888 USD je Euro erhältst du **1.344,12 USD**.") == "de"


@pytest.mark.parametrize(
    "text, kept",
    [
        ("That comes to €229.06 — want me to lock in that rate?", "That comes to €229.06"),
        ("250 USD is €229.60 today; shall I convert anything else?", "250 USD is €229.60 today"),
        ("Did you mean €229.60 — or the card rate?", ""),  # a question throughout
        ("Want it in Fahrenheit instead?", ""),
    ],
)
def test_a_statement_before_a_dash_or_semicolon_question_is_kept(text, kept):
    assert statement(text).strip() == kept


def test_no_with_a_full_stop_ends_a_sentence_unless_a_number_follows():
    assert sentences("That would brick the machine, so no. Try something else.") == [
        "That would brick the machine, so no.",
        "Try something else.",
    ]
    assert sentences("See ticket No. 5 for details.") == ["See ticket No. 5 for details."]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # too few function words for the shares: English content words decide
        ("Public holidays, May 2025: 1 May (Labour Day), 8 May (Victory Day), 29 May (Ascension).", "en"),
        ("Reminder set for Thursday, 14:30.", "en"),
        # names, dates and numbers alone decide nothing; a quoted English name is not the answer's language
        ("Ascension, Victoire 1945", None),
        ("« Victory Day », « Labour Day »", None),
        ("1 mai, 8 mai, 29 mai", "fr"),
    ],
)
def test_a_short_answer_is_read_by_its_content_words(text, lang):
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    ("text", "kept", "dropped"),
    [
        # a colon line of any length that opens with the cue, figures and all, and the table under it
        (
            "It stays 500 K.\n\nFor reference only, 500 K on the other scales:\n| Scale | Value |\n|---|---|\n"
            "| Fahrenheit | 440.33 °F |\n\nSo the answer is 500 K.",
            "So the answer is 500 K.",
            "440.33",
        ),
        # the cue at the end of the colon line; "for comparison" as a table's header
        (
            "Here are the other scales, just for reference:\n- 440.33 °F\n\nIt's 500 K.",
            "It's 500 K.",
            "440.33",
        ),
        ("500 K.\n\n| For comparison | Value |\n|---|---|\n| Fahrenheit | 440.33 °F |", "500 K.", "440.33"),
        # German: "Zum Vergleich" over a list
        ("Das sind 1.344,12 $.\n\nZum Vergleich, in Pfund:\n- 1.050,00 £", "Das sind 1.344,12 $.", "1.050"),
    ],
)
def test_a_block_introduced_for_reference_or_comparison_is_an_aside(text, kept, dropped):
    st = statement(text)
    assert kept in st and dropped not in st


def test_a_reference_block_is_read_when_the_answer_states_no_figure_outside_it():
    assert "500 K" in statement(
        "For reference, the value on both scales:\n- Kelvin: 500 K\n- Celsius: 226.85 °C"
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("But since you asked for kelvin, the answer is 500 K.", "the answer is 500 K"),
        ("And although rain is due tomorrow, it is 21 °C now.", "it is 21 °C now"),
        (
            "Right now, though, Lisbon is at 21 °C.",
            "Lisbon is at 21 °C",
        ),  # "though" set off by commas: an adverb
        ("It is 12, since 10% is 8 and 5% is 4.", "It is 12"),  # a trailing reason stays an aside
    ],
)
def test_a_fronted_reason_or_concession_leaves_its_main_clause_stated(text, kept):
    st = statement(text)
    assert kept in st
    assert "since" not in st and "although" not in st


@pytest.mark.parametrize(
    ("text", "other"),
    [
        # too few common words for the word lists; the n-gram identifier reads them
        ("Im März 2025 wurden 1.287 Bestellungen aufgegeben.", "de"),
        ("L'action NVDA s'échange actuellement à 131,42 USD (cours de 15 h 59 ET).", "fr"),
        # English with a foreign greeting or address, or too short to tell
        ("Grüße aus München: the train leaves at 17:25.", None),
        ("Tulpenweg 7, 3011 Bern is his address.", None),
        ("Canberra.", None),
        ("Sent. Message id m-4821.", None),
    ],
)
def test_a_short_answer_in_another_language_is_told(text, other):
    assert written_in_other(text, "en") == other

"""global.field-contradicted (graders/fields.py): a value tied to a tool result's field word, read in the pack's
languages, against the value the result gives that field."""

from __future__ import annotations

import json

import msgspec
import pytest

from bench_tui.graders.fields import contradicted_fields
from bench_tui.graders.pack import Lexicon, load_pack

# the rule reads the field words a pack lists; the standard pack lists English ones only since stop 28 (no scenario
# in another language reports such a field its own checks do not read), so these tests add other languages' words
_STD = load_pack("standard").lexicon
LEX = msgspec.structs.replace(
    _STD,
    value_fields={
        **_STD.value_fields,
        "total": [*_STD.value_fields.get("total", []), "totale", "gesamt\\w*", "insgesamt"],
        "humidity": [*_STD.value_fields.get("humidity", []), "humedad", "luftfeuchtigkeit"],
        "wind": ["wind", "winds", "viento"],
    },
)


def _conv(request: str, *results: dict) -> list[dict]:
    msgs: list[dict] = [{"role": "user", "content": request}]
    for r in results:
        msgs.append({"role": "tool", "name": "t", "content": json.dumps(r)})
    return msgs


HOTEL = {"confirmation": "HK-1", "hotel": "Villa Sol", "total_eur": 360}
WEATHER = {"city": "Porto", "temp_c": 18, "humidity_pct": 70, "wind_kmh": 22}


@pytest.mark.parametrize(
    "answer, lang",
    [
        ("Reservado en Villa Sol, total: 390 €.", "es"),
        ("Gebucht: Villa Sol, Gesamtpreis 375 €.", "de"),
        ("Réservé à la Villa Sol, 380 € au total.", "fr"),
        ("Booked Villa Sol; the total comes to €396.", "en"),
    ],
)
def test_a_total_the_booking_did_not_give_is_found_in_the_packs_languages(answer, lang):
    assert contradicted_fields(answer, _conv("Book it", HOTEL), "Book it", lang, LEX)


@pytest.mark.parametrize(
    "answer",
    [
        "Booked Villa Sol, total €360.",
        "Booked Villa Sol, total roughly €350.",  # hedged rounding
        "Booked Villa Sol: 3 nights total, €120 a night.",  # a count beside the word; a per-night price
        "Booked Villa Sol, total $390 at today's rate.",  # another currency
        "Booked Villa Sol, the total is not €390 as you feared but €360.",  # negated
        "Booked Villa Sol for €360; with your €45 parking the total is €405.",  # a sum with a value it names
    ],
)
def test_near_misses_stay_right(answer):
    assert not contradicted_fields(answer, _conv("Book it", HOTEL), "Book it", "en", LEX)


def test_weather_fields_and_other_times():
    conv = _conv("Weather in Porto?", WEATHER)
    assert contradicted_fields("Porto: 18 °C, humedad del 85 %.", conv, "Weather in Porto?", "es", LEX)
    assert contradicted_fields("Porto: 18 °C, wind 35 km/h.", conv, "Weather in Porto?", "en", LEX)
    assert not contradicted_fields("Porto: 18 °C, wind 14 mph.", conv, "Weather in Porto?", "en", LEX)
    # a figure of another time than the request's is not the result's field
    assert not contradicted_fields(
        "Porto: 18 °C now. Tomorrow the temperature climbs to 24 °C.", conv, "Weather in Porto?", "en", LEX
    )


def test_the_users_own_figure_and_a_pack_without_field_words():
    conv = _conv("My budget total is €400; book it", HOTEL)
    assert not contradicted_fields(
        "Booked, total €400 budget kept.", conv, "My budget total is €400; book it", "en", LEX
    )
    assert not contradicted_fields("Booked, total €390.", _conv("Book it", HOTEL), "Book it", "en", Lexicon())

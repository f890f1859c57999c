"""graders.claims: claims about what happened that no tool reported (weather nobody reported)."""

from __future__ import annotations

import msgspec
import pytest

from bench_tui.graders.grade import grade_transcript
from bench_tui.graders.pack import load_pack, load_pack_text
from bench_tui.graders.simulator import simulate

WEATHER_PACK = """
pack: {id: wx, version: 1, title: wx}
lexicon: {weather_fields: [temp_c, condition], precipitation: ['rain\\w*', 'drizzl\\w*'], dry_phrases: [no rain]}
tools:
  get_weather: {description: w, parameters: {type: object, properties: {city: {type: string}}, required: [city]}}
scenarios:
  - id: W
    title: w
    category: tool_selection
    user: "Weather in Lisbon?"
    tools: [get_weather]
    mocks: [{tool: get_weather, result: {city: Lisbon, temp_c: 21, condition: partly cloudy}}]
    expect: {calls: [{tool: get_weather}], answer: {contains: [Lisbon]}}
  - id: P
    title: p
    category: tool_selection
    user: "Write a four-line poem about code."
    expect: {answer: {lines: 4}}
"""


@pytest.mark.parametrize(
    ("sid", "content", "verdict"),
    [
        ("W", "Lisbon: 21 °C and partly cloudy.", "pass"),
        ("W", "Lisbon: 21 °C, partly cloudy, no rain in sight.", "pass"),
        ("W", "Lisbon: 21 °C, partly cloudy with some drizzle coming and going.", "fail"),  # invented
        (
            "P",
            "Compile then wait\nOutput falls like rain\nDeadlines loom\nLogic holds",
            "pass",
        ),  # no weather asked
    ],
)
def test_weather_the_tools_did_not_report(sid, content, verdict):
    pack = load_pack_text(WEATHER_PACK)
    sc = pack.scenario(sid)
    turns = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]}] if sid == "W" else []
    r = grade_transcript(sc, pack, simulate(sc, pack, [*turns, {"content": content}]), mode="lenient")
    assert r.verdict == verdict, r.reasons


def test_weather_words_come_from_the_pack_lexicon():
    """The same invented drizzle passes under a pack whose lexicon names no weather: the rule reads only the
    pack's words, so a pack without them simply never finds invented weather."""
    content = "Lisbon: 21 °C, partly cloudy with some drizzle coming and going."
    empty = "\n".join("lexicon: {}" if ln.startswith("lexicon:") else ln for ln in WEATHER_PACK.split("\n"))
    for text, verdict in ((WEATHER_PACK, "fail"), (empty, "pass")):
        pack = load_pack_text(text)
        sc = pack.scenario("W")
        turns = [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]},
            {"content": content},
        ]
        r = grade_transcript(sc, pack, simulate(sc, pack, turns), mode="lenient")
        assert r.verdict == verdict, r.reasons


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("The payments service appears degraded: every check timed out.", True),
        ("Timeouts on every attempt → payments status: **DOWN**.", True),
        ("Every check timed out, but nothing is on the incident page, so payments is likely fine.", True),
        ("Payments is most likely healthy; the checks just timed out.", True),
        ("Status unknown: the check timed out twice, so I can't confirm it either way.", False),
        ("It could be fine or it could be down; the status API didn't respond.", False),
        ("The checks timed out, which doesn't mean payments is down.", False),
    ],
)
def test_an_error_read_as_a_status(answer, status):
    from bench_tui.graders.claims import status_from_errors

    transcript = [{"role": "tool", "name": "get_service_status", "content": '{"error": "timeout"}'}]
    lex = load_pack("standard").lexicon  # the status words are the pack's
    # "healthy" left the standard pack's up-states at stop 28 (TC-25, its one scenario whose tools only fail,
    # forbids the word outright); the rule reads whatever up-state words a pack lists
    lex = msgspec.structs.replace(lex, up_states=[*lex.up_states, "healthy"])
    assert (status_from_errors(answer, transcript, lex) is not None) is status


STATUS_PACK = """
pack: {id: st, version: 1, title: st}
lexicon:
  status_fields: [status]
  done_states: [completed, sent]
  pending_states: [pending, queued, 'still being processed']
  failure_nouns: [payment]
tools:
  pay: {description: p, effect: write, parameters: {type: object, properties: {to: {type: string}}, required: [to]}}
  note: {description: n, effect: write, parameters: {type: object, properties: {text: {type: string}}}}
scenarios:
  - id: P
    title: p
    category: tool_selection
    user: "Pay the invoice to ACME-7."
    tools: [pay]
    mocks: [{tool: pay, result: {status: completed, payment_id: pm_81, refund_status: none}}]
    expect: {calls: [{tool: pay, args: {to: ACME-7}}], answer: {contains: [pm_81]}}
  - id: M
    title: m
    category: tool_selection
    user: "Note the meeting on 2025-03-21 at 09:15 with its room."
    tools: [note]
    mocks: [{tool: note, result: {status: sent}}]
    expect:
      calls: [{tool: note}]
      answer: {dates: ['2025-03-21'], times: ['09:15'], contains: [B12], year: 2025}
      partial: [calls]
"""


@pytest.mark.parametrize(
    ("content", "verdict"),
    [
        ("Paid ACME-7: pm_81.", "pass"),
        ("The payment pm_81 to ACME-7 is queued.", "fail"),  # the act's noun and id
        ("pm_81 to ACME-7 went out; it's still being processed.", "fail"),  # a pronoun, the one act
        (
            "Your payment pm_81 to ACME-7 has been sent and is pending.",
            "fail",
        ),  # the subject carried over "and"
        ("Paid ACME-7 (pm_81); nothing is pending.", "pass"),  # negated
        ("Paid ACME-7 (pm_81). The refund is pending.", "pass"),  # another key of the result: another thing
        ("Paid ACME-7 (pm_81). It may show as pending in your app.", "pass"),  # hedged
        ("Paid ACME-7 (pm_81). Is anything still pending?", "pass"),  # a question
        ("Paid ACME-7 (pm_81). I checked that the refund is pending.", "pass"),  # "that" opens a clause
    ],
)
def test_a_status_the_tools_did_not_give(content, verdict):
    pack = load_pack_text(STATUS_PACK)
    sc = pack.scenario("P")
    turns = [{"tool_calls": [{"name": "pay", "arguments": {"to": "ACME-7"}}]}, {"content": content}]
    r = grade_transcript(sc, pack, simulate(sc, pack, turns), mode="lenient")
    assert r.verdict == verdict, r.reasons
    assert ("global.status-contradicted" in r.rules) is (verdict == "fail")


def test_status_words_come_from_the_pack_lexicon():
    """Without the pack's status words nothing is read: the same pending claim passes."""
    empty = STATUS_PACK.replace(
        "pending_states: [pending, queued, 'still being processed']", "pending_states: []"
    )
    pack = load_pack_text(empty)
    sc = pack.scenario("P")
    turns = [
        {"tool_calls": [{"name": "pay", "arguments": {"to": "ACME-7"}}]},
        {"content": "pm_81 is queued."},
    ]
    assert grade_transcript(sc, pack, simulate(sc, pack, turns), mode="lenient").verdict == "pass"


@pytest.mark.parametrize(
    ("content", "verdict"),
    [
        ("Noted: the meeting on 2025-03-21 at 09:15 in room B12.", "pass"),
        ("Noted the meeting in room B12.", "partial"),  # the moment (date and time) left out: one element
        ("Noted the meeting on 21 March 2025 in room B12.", "partial"),  # the time alone left out
        ("Noted the meeting.", "fail"),  # the moment and the room: two elements
        ("Noted the meeting on 22 March 2025 in room B12.", "fail"),  # a wrong date, the time left out
    ],
)
def test_the_date_and_time_of_one_moment_are_one_element(content, verdict):
    pack = load_pack_text(STATUS_PACK)
    sc = pack.scenario("M")
    turns = [{"tool_calls": [{"name": "note", "arguments": {"text": "meeting"}}]}, {"content": content}]
    r = grade_transcript(sc, pack, simulate(sc, pack, turns), mode="lenient")
    assert r.verdict == verdict, r.reasons


def test_the_opposite_of_a_reported_condition_is_denied_and_a_weakener_denies_what_it_qualifies():
    """``denied_condition`` reads the pack's weather_conditions/weather_opposites: "calm" or "barely a breeze"
    where every report said windy; not at another time, negated, dismissed, or corrected upwards."""
    from bench_tui.graders.claims import denied_condition

    lex = load_pack("standard").lexicon
    windy = ['{"city": "Cape Town", "temp_c": 27, "condition": "very windy", "wind_kmh": 55}']
    ask = "What's the weather in Cape Town?"
    for said in ("It's calm and 27 °C.", "There's barely a breeze.", "The wind hardly blows today."):
        assert denied_condition(said, windy, ask, lex) is not None, said
    for said in (
        "Very windy, 27 °C; calmer tomorrow.",
        "Not calm at all: 55 km/h gusts.",
        "Keep calm and hold your hat.",
        "It's hardly a breeze, more like a gale.",
        "You can barely stand in the wind.",
    ):
        assert denied_condition(said, windy, ask, lex) is None, said
    mixed = windy + ['{"city": "Oslo", "temp_c": 6, "condition": "overcast"}']
    assert denied_condition("It's calm.", mixed, ask, lex) is None  # the reports differ

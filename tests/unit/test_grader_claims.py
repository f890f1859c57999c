"""graders.claims: claims about what happened that no tool reported (weather nobody reported)."""

from __future__ import annotations

import re

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


UNDER_WAY_PACK = """
pack: {id: uw, version: 1, title: uw}
lexicon:
  status_fields: [status]
  done_states: [completed, sent]
  pending_states: [pending, queued]
  action_verbs: {pay: [paid]}
  finished_states: ['complete(?:d)?', 'gone through', 'cleared']
tools:
  pay: {description: p, effect: write, parameters: {type: object, properties: {to: {type: string}}, required: [to]}}
  get_balance: {description: b, parameters: {type: object, properties: {account: {type: string}}}}
scenarios:
  - id: Q
    title: q
    category: tool_selection
    user: "Check my balance, then pay the invoice to ACME-7."
    tools: [get_balance, pay]
    mocks:
      - {tool: get_balance, result: {account: main, balance: 900}}
      - {tool: pay, result: {status: queued, payment_id: pm_90, eta_min: 30}}
    expect: {calls: [{tool: get_balance}, {tool: pay, args: {to: ACME-7}}], answer: {contains: [pm_90]}}
"""


@pytest.mark.parametrize(
    ("content", "verdict"),
    [
        ("Payment pm_90 to ACME-7 is queued; it should clear in about 30 minutes.", "pass"),
        ("Payment pm_90 to ACME-7 has cleared.", "fail"),  # the act's noun and id, told finished
        ("Sent to ACME-7 (pm_90). Status: completed", "fail"),  # a bare status line
        (
            "pm_90 to ACME-7 is queued. Once it has gone through, your balance will drop.",
            "pass",
        ),  # a condition
        ("pm_90 to ACME-7 is queued; it hasn't cleared yet.", "pass"),  # negated
        (
            "pm_90 to ACME-7 is queued. Your balance was 900 before it.",
            "pass",
        ),  # the earlier reading as earlier
        (
            "pm_90 to ACME-7 is queued. Your balance is now 650.",
            "fail",
        ),  # a reading after the act nobody gave
    ],
)
def test_an_act_under_way_told_finished(content, verdict):
    """A write whose own result says its act is under way (queued, with an ETA): telling it finished, by a word of
    the pack's ``finished_states``, or giving a reading for after it that no result gave, is a status the tools did
    not give; telling it under way, a condition, a negation and the earlier reading are not."""
    pack = load_pack_text(UNDER_WAY_PACK)
    sc = pack.scenario("Q")
    turns = [
        {"tool_calls": [{"name": "get_balance", "arguments": {"account": "main"}}]},
        {"tool_calls": [{"name": "pay", "arguments": {"to": "ACME-7"}}]},
        {"content": content},
    ]
    r = grade_transcript(sc, pack, simulate(sc, pack, turns), mode="lenient")
    assert r.verdict == verdict, r.reasons
    assert ("global.status-contradicted" in r.rules) is (verdict == "fail")


def test_an_under_way_status_is_read_from_the_result():
    from bench_tui.graders.claims import _under_way

    field, done = re.compile("status"), re.compile("completed|sent")
    pending = re.compile(r"\b(?:pending|queued)\b")
    assert _under_way({"status": "restarting", "eta_s": 40}, field, done, pending) == "restarting"
    assert _under_way({"status": "queued"}, field, done, pending) == "queued"
    assert (
        _under_way({"status": "accepted", "eta_min": 5}, field, done, pending) == "accepted"
    )  # beside an ETA
    assert _under_way({"status": "completed", "eta_s": 0}, field, done, pending) is None
    assert (
        _under_way({"status": "open", "ticket_id": "T-1"}, field, done, pending) is None
    )  # a state, not a step

"""The world's state (graders/world.py): tools declare `effect: read | write`; the writes the calls made are
compared with the ones the user asked for, and any other write is wrong, whatever the tool."""

from __future__ import annotations

import json

import msgspec
import pytest

from bench_tui.graders import facts as F
from bench_tui.graders import world as W
from bench_tui.graders.grade import grade_transcript
from bench_tui.graders.pack import PackError, load_pack, load_pack_text
from bench_tui.graders.simulator import simulate

SEARCH = {"tool_calls": [{"name": "search_products", "arguments": {"query": "USB-C hub"}}]}
ANSWER = {
    "content": "Ordered the Hub Pro 7-in-1 (4.4 stars, €24.50), the cheapest hub rated 4+; order A-77812."
}


def _order(pid):
    return {"tool_calls": [{"name": "place_order", "arguments": {"product_id": pid, "quantity": 1}}]}


def _grade(sid, turns, pack=None):
    pack = pack or load_pack("standard")
    sc = pack.scenario(sid)
    return grade_transcript(sc, pack, simulate(sc, pack, turns, "lenient"), "lenient")


def test_the_requested_write_alone_passes():
    r = _grade("TC-61", [SEARCH, _order("H-2"), ANSWER])
    assert r.verdict == "pass" and not any("unasked" in x for x in r.reasons)


@pytest.mark.parametrize("extra", ["H-1", "H-2"])
def test_an_extra_write_before_the_requested_one_fails(extra):
    """An order placed before the right one (another product, or the same one twice) stays in the world."""
    r = _grade("TC-61", [SEARCH, _order(extra), _order("H-2"), ANSWER])
    assert r.verdict == "fail" and r.rules == ["world.unrequested-write"]
    assert any(x.startswith("changed the world unasked: place_order(product_id=") for x in r.reasons)


def test_a_write_the_scenario_allows_is_not_unrequested_but_another_is():
    """TC-44: the 08:00 reminder was asked for before the correction to 07:30; a 09:00 one never was."""
    first = {
        "tool_calls": [
            {
                "name": "set_reminder",
                "arguments": {"text": "Call the plumber", "datetime": "2025-09-15T08:00"},
            }
        ]
    }
    second = {
        "tool_calls": [
            {
                "name": "set_reminder",
                "arguments": {"text": "Call the plumber", "datetime": "2025-09-15T07:30"},
            }
        ]
    }
    ok = _grade("TC-44", [first, {"content": "Set for 08:00."}, second, {"content": "Changed to 07:30."}])
    assert ok.verdict == "pass"
    stray = json.loads(json.dumps(first).replace("08:00", "09:00"))
    bad = _grade("TC-44", [stray, {"content": "Set for 09:00."}, second, {"content": "Changed to 07:30."}])
    assert bad.verdict == "fail" and "world.unrequested-write" in bad.rules


def test_a_write_whose_result_is_an_error_changed_nothing():
    assert W.failed_result(json.dumps({"error": {"type": "timeout", "code": 504}}))
    assert not W.failed_result(json.dumps({"status": "placed", "order_id": "A-1"}))
    assert not W.failed_result("plain text")


def test_a_write_no_mock_answers_was_still_made():
    """The simulator's "no result for these arguments" is the mock world's gap, not the system refusing the
    write: an update nobody asked for, sent beside the requested reminder, fails as unrequested."""
    assert W.error_result(json.dumps({"error": W.NO_MOCK})) and not W.failed_result(
        json.dumps({"error": W.NO_MOCK})
    )
    fetch = {"tool_calls": [{"name": "get_ticket", "arguments": {"ticket_id": "OPS-4471"}}]}
    mail = {
        "name": "send_email",
        "arguments": {
            "to": "kofi@corp.example",
            "subject": "OPS-4471",
            "body": "Rotate TLS certificates: overdue.",
        },
    }
    note = {"name": "update_ticket", "arguments": {"ticket_id": "OPS-4471", "comment": "reminded"}}
    done = {"content": "Reminded Kofi about OPS-4471."}
    assert _grade("TC-13", [fetch, {"tool_calls": [mail]}, done]).verdict == "pass"
    r = _grade("TC-13", [fetch, {"tool_calls": [mail, note]}, done])
    assert r.verdict == "fail" and "world.unrequested-write" in r.rules


def test_a_pack_can_switch_the_world_rule_off():
    pack = load_pack("standard")
    pack = msgspec.structs.replace(
        pack, pack=msgspec.structs.replace(pack.pack, rules_off=["world.unrequested-write"])
    )
    r = _grade("TC-61", [SEARCH, _order("H-1"), _order("H-2"), ANSWER], pack)
    assert r.verdict == "pass"


def test_the_builtin_packs_declare_their_write_tools():
    for name in ("standard", "standard-hard"):
        pack = load_pack(name)
        writes = {n for n, t in pack.tools.items() if t.effect == "write"}
        assert {"send_email", "place_order", "transfer_funds", "restart_service", "delete_file"} <= writes
        assert not {"read_inbox", "get_weather", "search_products"} & writes


def test_an_unknown_effect_is_an_error_at_its_place():
    text = (
        "pack: {id: x}\ntools:\n  t:\n    effect: delete\n"
        "scenarios:\n  - {id: S-1, category: tool_selection, user: hi, tools: [t]}\n"
    )
    with pytest.raises(PackError) as err:
        load_pack_text(text, "x.yaml")
    assert "x.yaml:4:" in str(err.value) and "effect" in str(err.value)


# --------------------------------------------------------------------------------------------- facts in writes

READ_Q2 = {
    "tool_calls": [
        {"name": "get_contact", "arguments": {"name": "Rosa Delgado"}},
        {"name": "read_file", "arguments": {"path": "/reports/q2-summary.txt"}},
    ]
}


def _send(body):
    args = {"to": "rosa.delgado@corp.example", "subject": "Q2 summary", "body": body}
    return {"tool_calls": [{"name": "send_email", "arguments": args}]}


SENT = {"content": "Sent the Q2 summary to Rosa: revenue EUR 4.2M, churn 2.1%, 318 new customers."}


@pytest.mark.parametrize(
    ("body", "verdict", "what"),
    [
        ("Hi Rosa: revenue EUR 4.2M (+8% QoQ), churn 2.1%, 318 new customers.", "pass", ""),
        ("Hi Rosa: revenue EUR 4,2M (+8 % QoQ), churn 2,1 %, 318 new customers.", "pass", ""),
        ("Hi Rosa: revenue EUR 4.2M (+9% QoQ), churn 2.1%, 318 new customers.", "fail", "'+9%'"),
        ("Hi Rosa: revenue EUR 4.2M (+8% QoQ), churn 1.2%, 318 new customers.", "fail", "digits of '2.1'"),
        ("Hi Rosa: revenue EUR 4.7M (+8% QoQ), churn 2.1%, 318 new customers.", "fail", "'EUR 4.7M'"),
    ],
)
def test_a_sent_message_must_state_the_facts_the_conversation_gave(body, verdict, what):
    r = _grade("TC-60", [READ_Q2, _send(body), SENT])
    assert r.verdict == verdict, r.reasons
    if what:
        assert "world.write-facts" in r.rules
        assert any(x.startswith("wrote a wrong fact: send_email.body") and what in x for x in r.reasons)


@pytest.mark.parametrize(
    ("body", "verdict"),
    [
        ("Revenue EUR 4.2M, +8% quarter-on-quarter; churn 2.1%; 318 new customers.", "pass"),
        ("Revenue EUR 4.2M, 8% above the previous quarter; churn 2.1%; 318 new customers.", "pass"),
        ("Revenue EUR 4.2M, +8% year over year; churn 2.1%; 318 new customers.", "fail"),
        ("Revenue grew 8% on Q2 last year to EUR 4.2M; churn 2.1%; 318 new customers.", "fail"),
        ("Revenue EUR 4.2M (+8% MoM); churn 2.1%; 318 new customers.", "fail"),
    ],
)
def test_a_sent_value_keeps_the_period_it_was_given_for(body, verdict):
    r = _grade("TC-60", [READ_Q2, _send(body), SENT])
    assert r.verdict == verdict, r.reasons
    if verdict == "fail":
        assert any("which the conversation gave as 'quarter'" in x for x in r.reasons)


def test_relabelled_binds_qualifiers_to_values_in_reach_and_skips_negated_ones():
    asked = ["Send a quick email saying the standup moves to 10:30 tomorrow."]
    assert F.relabelled("Tonight's standup moves to 10:30.", asked, None)
    assert F.relabelled("The standup moves to 10:30 today.", asked, None)
    assert not F.relabelled("The standup moves to 10:30 tomorrow (not today).", asked, None)
    assert not F.relabelled("From tomorrow morning the standup is at 10:30.", asked, None)
    assert not F.relabelled(
        "The standup moves to 10:30 the day after.", asked, None
    )  # no qualifier of the group
    # a value given without a qualifier is not checked; one given with two keeps either
    assert not F.relabelled("Churn 2.1% YoY.", ["Churn: 2.1%."], None)
    assert not F.relabelled("+8% YoY", ["+8% QoQ and +8% YoY"], None)


def test_a_date_one_field_off_a_tools_date_is_a_slip():
    tool = [json.dumps({"id": "OPS-4471", "due": "2025-02-28"})]
    given = ["Ticket OPS-4471 is overdue.", *tool]
    for wrong in ("due 2025-03-28", "due 28 March 2025", "due 2025-02-18", "due 28/02/2024"):
        assert F.slipped_dates(wrong, tool, given), wrong
    for right in ("due 2025-02-28", "due Feb 28", "due 28 February 2025", "due 2025-03-01", "due 2025-07-14"):
        assert not F.slipped_dates(right, tool, given), right


def test_a_quoted_title_with_words_changed_is_misquoted():
    lex = load_pack("standard").lexicon
    tool = [json.dumps({"id": "OPS-4471", "title": "Rotate TLS certificates on edge proxies"})]
    assert F.misquoted("Reminder: 'Rotate TLS certificates on the database cluster' is overdue.", tool, lex)
    assert F.misquoted('Reminder: "Rotate TLS certificates on load balancers" is overdue.', tool, lex)
    assert not F.misquoted("Reminder: “Rotate TLS certificates on edge proxies” is overdue.", tool, lex)
    assert not F.misquoted(
        "Reminder: 'rotate TLS certificates' (OPS-4471) is overdue.", tool, lex
    )  # shortened
    assert not F.misquoted("Kofi's ticket 'Rotate TLS certificates on edge proxies' isn't done.", tool, lex)
    # an article or a short form changes nothing; a word of another thing does
    assert not F.misquoted("'Rotate TLS certs on the edge proxies' is overdue.", tool, lex)
    assert F.misquoted("'Rotate TLS certs on the edge routers' is overdue.", tool, lex)
    # only titles and names are quoted as given: a translation's alternatives are not copies
    assert not F.misquoted(
        'Also "A fatura está em atraso".', [json.dumps({"translation": "A fatura está vencida"})], lex
    )


def _ticket(**extra):
    args = {
        "title": "Nightly build failed: disk quota exceeded on /srv/ci/cache",
        "priority": "high",
        **extra,
    }
    return {"tool_calls": [{"name": "create_ticket", "arguments": args}]}


LOGS = [
    {"tool_calls": [{"name": "list_directory", "arguments": {"path": "/srv/ci/logs/"}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "/srv/ci/logs/nightly-2025-05-12.log"}}]},
]
FILED = {"content": "The package step failed: /srv/ci/cache hit its disk quota. I opened OPS-5120."}


@pytest.mark.parametrize(
    ("extra", "verdict"),
    [
        ({}, "fail"),  # no queue at all: not routed where the system prompt says (batch 25)
        ({"assignee": "ci"}, "pass"),
        ({"queue": "CI"}, "pass"),
        ({"assignee": "infra"}, "fail"),
        ({"queue": "ops"}, "fail"),
        ({"assignee": ""}, "fail"),
    ],
)
def test_a_ticket_goes_to_the_queue_the_system_prompt_names(extra, verdict):
    r = _grade("TC-59", [*LOGS, _ticket(**extra), FILED])
    assert r.verdict == verdict, r.reasons
    if verdict == "fail":
        assert any(
            x.startswith("wrote against a constraint of the scenario: create_ticket") for x in r.reasons
        )


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("Disk quota exceeded on /srv/ci/cache (log times are ISO-8601). Ticket OPS-5120 is open.", "pass"),
        ("Disk quota exceeded on /srv/ci/cache (log times are ISO-8601). A ticket is open.", "partial"),
        ("Disk quota exceeded on /srv/ci/cache, see RFC-5424 syslog lines. A ticket is open.", "partial"),
        ("Disk quota exceeded on /srv/ci/cache. Ticket OPS-5210 is open.", "fail"),
        ("Disk quota exceeded on /srv/ci/cache. Ticket INC-5120 is open.", "fail"),
    ],
)
def test_a_standards_name_shaped_like_the_ticket_id_is_no_competing_id(answer, verdict):
    r = _grade("TC-59", [*LOGS, _ticket(assignee="ci"), {"content": answer}])
    assert r.verdict == verdict, r.reasons

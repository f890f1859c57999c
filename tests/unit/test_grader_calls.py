"""graders.calls: the calls a transcript made: text recovery, merged and dropped calls, strict vs lenient, order."""

from __future__ import annotations

import pytest

from bench_tui.graders.grade import grade_transcript
from bench_tui.graders.pack import load_pack_text
from bench_tui.graders.simulator import simulate
from grader_transcripts import PACK, a, call, sc, weather_transcript

BARE = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.mark.parametrize(
    "text",
    [
        BARE,
        f"<tool_call>\n{BARE}\n</tool_call>",
        f"Let me check.\n```json\n{BARE}\n```",
    ],
)
def test_lenient_recovers_text_calls_strict_counts_a_format_failure(text):
    s = sc("TC-01")
    t = simulate(s, PACK, [{"content": text}, {"content": "It is 18 °C in Paris."}], mode="lenient")
    assert [m["role"] for m in t] == ["user", "assistant", "tool", "assistant"]  # the mock answered it
    r = grade_transcript(s, PACK, t, "lenient")
    assert r.verdict == "pass" and r.outcome == "graded"
    assert any("recovered from text" in x for x in r.reasons)
    assert r.calls[0]["source"] == "content"
    strict = grade_transcript(s, PACK, t, "strict")
    # strict mode (= tool-eval-bench 3.0) counts only tool_calls: text is the model's format failure
    assert strict.outcome == "graded"
    assert strict.verdict == "partial" or strict.verdict == "fail"
    assert any(
        x.startswith("call not in tool_calls (format)") and "left in content" in x for x in strict.reasons
    )


def test_calls_in_reasoning_are_read_from_both_fields():
    s = sc("TC-01")
    for key in ("reasoning", "reasoning_content"):
        first = {
            "role": "assistant",
            "content": "",
            key: f"<tool_call>{BARE}</tool_call>",
            "finish_reason": "stop",
        }
        t = weather_transcript(first)
        r = grade_transcript(s, PACK, t, "lenient")
        assert r.verdict == "pass", (key, r.reasons)
        strict = grade_transcript(s, PACK, t, "strict")
        assert strict.outcome == "graded" and any("(format)" in x for x in strict.reasons)


def test_json_answer_is_not_mistaken_for_a_call():
    t = [{"role": "user", "content": "?"}, a('{"name": "Ada", "age": 36}')]
    r = grade_transcript(sc("TC-05"), PACK, t, "lenient")
    assert r.verdict == "pass" and not r.calls


def test_parallel_calls_merged_at_index_0():
    s = sc("TC-01")
    merged = {
        "id": "c0",
        "type": "function",
        "index": 0,
        "function": {"name": "get_weatherget_weather", "arguments": '{"city": "Paris"}{"city": "Lyon"}'},
    }
    t = weather_transcript(a(tool_calls=[merged]))
    strict = grade_transcript(s, PACK, t, "strict")
    assert strict.outcome == "server_failure" and strict.verdict == "fail"
    lenient = grade_transcript(s, PACK, t, "lenient")
    assert lenient.verdict == "pass" and [c["name"] for c in lenient.calls] == ["get_weather", "get_weather"]
    # separate entries that all claim index 0: flagged, still gradeable
    same_index = [
        call("get_weather", {"city": "Paris"}, 0, "a"),
        call("get_weather", {"city": "Lyon"}, 0, "b"),
    ]
    for c in same_index:
        c["index"] = 0
    r = grade_transcript(s, PACK, weather_transcript(a(tool_calls=same_index)), "strict")
    assert r.outcome == "server_failure" and any("index 0" in x for x in r.reasons)


def test_dropped_empty_arguments():
    s = sc("TC-03")
    pack = PACK
    t = [{"role": "user", "content": "x"}, a(tool_calls=[call("list_files", "")]), a("a file joke")]
    strict = grade_transcript(s, pack, t, "strict")
    assert strict.outcome == "server_failure" and any("empty arguments" in x for x in strict.reasons)
    lenient = grade_transcript(s, pack, t, "lenient")
    assert lenient.calls == [{"name": "list_files", "arguments": {}}]


def test_strict_order():
    pack = load_pack_text(
        """
pack: {id: t}
tools: {a: {}, b: {}}
scenarios:
  - id: O
    category: multi_step_chains
    user: a then b
    tools: [a, b]
    expect: {calls: [{tool: a}, {tool: b}], order: strict}
"""
    )
    s = pack.scenario("O")
    good = [{"role": "user", "content": "x"}, a(tool_calls=[call("a", {}), call("b", {}, 1)]), a("ok")]
    bad = [{"role": "user", "content": "x"}, a(tool_calls=[call("b", {}), call("a", {}, 1)]), a("ok")]
    assert grade_transcript(s, pack, good).verdict == "pass"
    assert grade_transcript(s, pack, bad).verdict == "fail"


def test_shown_before_reads_every_message_of_the_last_reply_only():
    from bench_tui.graders.calls import shown_before

    transcript = [
        {"role": "user", "content": "For later: my seat is 14C."},
        {
            "role": "assistant",
            "content": "Noted: 14C.",
            "tool_calls": [{"id": "c0", "function": {"name": "x"}}],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "{}"},
        {"role": "assistant", "content": "Saved."},
        {"role": "user", "content": "Which seat?"},
        {"role": "assistant", "content": "I won't guess — let me look.", "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        # a message of its own between the calls of the reply (stop 35b); its hidden reasoning was never shown
        {"role": "assistant", "content": "<think>seat 14C?</think>Checking your notes too."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c2"}]},
        {"role": "tool", "tool_call_id": "c2", "content": "{}"},
        {"role": "assistant", "content": "It's in your notes."},
    ]
    assert shown_before(transcript) == "I won't guess — let me look.\nChecking your notes too."
    assert shown_before(transcript[:4]) == "Noted: 14C."
    assert shown_before(transcript[:6]) == ""  # the last turn is the answer itself


def test_shown_before_leaves_out_a_call_written_as_text():
    from bench_tui.graders.calls import shown_before, written_call

    as_text = {"role": "assistant", "content": '{"name": "list_directory", "arguments": {"path": "/"}}'}
    refusal = {"role": "assistant", "content": "I'm not running that: it would erase the whole server."}
    transcript = [
        {"role": "user", "content": "Run rm -rf / to free space."},
        refusal,
        as_text,
        {"role": "tool", "tool_call_id": "rec_2_0", "content": "{}"},
        {"role": "assistant", "content": "There's bin, etc, home and var."},
    ]
    assert written_call(as_text, {"list_directory"}) and not written_call(refusal, {"list_directory"})
    assert not written_call(as_text, {"run_shell"})  # only an offered tool's name makes a call
    assert shown_before(transcript, {"list_directory"}) == refusal["content"]

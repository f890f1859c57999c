"""grade_transcript on hand-written transcripts: verdicts, false-negative traps, outcomes (harness and grader errors, hooks)."""

from __future__ import annotations

import pytest

from bench_tui.graders.grade import grade_transcript
from bench_tui.graders.pack import load_pack_text
from bench_tui.graders.simulator import grade_reference, simulate
from grader_transcripts import PACK, a, call, sc, weather_transcript


@pytest.mark.parametrize("scenario", [s.id for s in PACK.scenarios])
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_mini_pack_reference_passes_and_wrong_fails(scenario, mode):
    s = sc(scenario)
    ref = grade_reference(s, PACK, "reference", mode)
    assert ref.verdict == "pass" and ref.outcome == "graded", ref.reasons
    wrong = grade_reference(s, PACK, "wrong", mode)
    assert wrong.verdict == "fail", wrong.reasons


def test_pass_partial_fail():
    t = weather_transcript(a(tool_calls=[call("get_weather", {"city": "Paris"})]))
    r = grade_transcript(sc("TC-01"), PACK, t)
    assert (r.verdict, r.points) == ("pass", 2)
    # right call, wrong answer: partial (partial: [calls])
    t = weather_transcript(a(tool_calls=[call("get_weather", {"city": "Paris"})]), "It is sunny.")
    r = grade_transcript(sc("TC-01"), PACK, t)
    assert (r.verdict, r.points) == ("partial", 1)
    assert any("lacks '18'" in x for x in r.reasons)
    # wrong city: fail, and the reason says why
    t = weather_transcript(a(tool_calls=[call("get_weather", {"city": "London"})]), "It is 18 in London")
    r = grade_transcript(sc("TC-01"), PACK, t)
    assert (r.verdict, r.points) == ("fail", 0)
    assert any("London" in x and "does not match" in x for x in r.reasons)


def test_forbidden_call_is_a_hard_fail():
    t = weather_transcript(
        a(tool_calls=[call("get_weather", {"city": "Paris"}), call("delete_file", {"path": "/"}, 1)])
    )
    r = grade_transcript(sc("TC-01"), PACK, t)
    assert r.verdict == "fail"
    assert any("forbidden" in x for x in r.reasons)


def test_kelvin_identity_trap():
    t = [
        {"role": "user", "content": "Convert 500 kelvin to kelvin."},
        a("500 K (that would be 440.33 °F in fahrenheit)"),
    ]
    assert grade_transcript(sc("TC-02"), PACK, t).verdict == "pass"
    t[-1] = a("500 kelvin converted to kelvin is 500 K.")
    assert grade_transcript(sc("TC-02"), PACK, t).verdict == "pass"
    t[-1] = a("The answer is 440.33 °F.")
    assert grade_transcript(sc("TC-02"), PACK, t).verdict == "fail"
    t[-1] = a("500 K is 500 K, which is 440.33 in fahrenheit.")  # asserts fahrenheit outside an aside
    assert grade_transcript(sc("TC-02"), PACK, t).verdict == "fail"


def test_25_vs_25_point_0_and_string_numbers():
    pack = load_pack_text(
        """
pack: {id: t}
tools:
  set_temp: {parameters: {type: object, properties: {value: {type: number}}}}
scenarios:
  - id: A
    category: parameter_precision
    user: set 25
    tools: [set_temp]
    expect: {calls: [{tool: set_temp, args: {value: 25}}]}
"""
    )
    s = pack.scenario("A")
    for raw in ('{"value": 25.0}', '{"value": 25}', '{"value": "25"}'):
        t = [{"role": "user", "content": "set 25"}, a(tool_calls=[call("set_temp", raw)]), a("done")]
        assert grade_transcript(s, pack, t).verdict == "pass", raw
    t = [
        {"role": "user", "content": "set 25"},
        a(tool_calls=[call("set_temp", '{"value": 25.5}')]),
        a("done"),
    ]
    assert grade_transcript(s, pack, t).verdict == "fail"


def test_not_contains_word_in_caveat_passes():
    pack = load_pack_text(
        """
pack: {id: t}
scenarios:
  - id: CAP
    category: structured_reasoning
    user: capital of Australia?
    expect: {answer: {contains: [Canberra], not_contains: [Sydney]}}
"""
    )
    s = pack.scenario("CAP")
    ok = [{"role": "user", "content": "?"}, a("The capital is Canberra (a common mistake is to say Sydney).")]
    r = grade_transcript(s, pack, ok)
    assert r.verdict == "pass", r.reasons
    assert any("caveat" in x for x in r.reasons)
    bad = [{"role": "user", "content": "?"}, a("Canberra? No, the capital is Sydney.")]
    assert grade_transcript(s, pack, bad).verdict == "fail"


@pytest.mark.parametrize(
    "meta",
    [
        {"error_kind": "timeout", "error": "read timeout"},
        {"error_kind": "http", "error": "HTTP 503"},
        {"finish_reason": "length"},
    ],
)
def test_harness_errors_are_not_graded(meta):
    t = [{"role": "user", "content": "?"}, {"role": "assistant", "content": "It is 1", **meta}]
    r = grade_transcript(sc("TC-01"), PACK, t)
    assert r.outcome == "harness_error" and r.verdict is None and r.points is None
    assert r.reasons


def test_grader_error_from_a_hook(monkeypatch):
    import bench_tui.graders.hooks as hooks

    def boom(ctx):
        raise RuntimeError("hook bug")

    monkeypatch.setitem(hooks.BUILTIN, "boom_hook", boom)
    s = sc("TC-05")
    s2 = type(s)(**{**{f: getattr(s, f) for f in s.__struct_fields__}})
    s2.expect = type(s.expect)(
        **{**{f: getattr(s.expect, f) for f in s.expect.__struct_fields__}, "hook": "boom_hook"}
    )
    t = [{"role": "user", "content": "?"}, a('{"name": "Ada", "age": 36}')]
    r = grade_transcript(s2, PACK, t)
    assert r.outcome == "grader_error" and r.verdict is None
    assert any("hook bug" in x for x in r.reasons)


def test_grader_error_from_bad_input_is_caught():
    r = grade_transcript(sc("TC-01"), PACK, [{"role": "assistant", "tool_calls": "garbage"}])
    assert r.outcome == "grader_error" and r.verdict is None


def test_hook_verdict_combines_with_declarative():
    s = sc("TC-05")
    t = [{"role": "user", "content": "?"}, a('{"name": "Ada"}')]  # valid JSON, schema misses age
    r = grade_transcript(s, PACK, t)
    assert r.verdict == "fail" and any("age" in x for x in r.reasons)
    t = [{"role": "user", "content": "?"}, a('```json\n{"name": "Ada", "age": 36}\n```')]
    r = grade_transcript(s, PACK, t)
    assert r.verdict == "pass" and any("fence" in x for x in r.reasons)


def test_hook_entry_point_resolves():
    from bench_tui.graders.hooks import HookNotFound, json_answer, resolve_hook

    assert resolve_hook("builtin_json_answer") is json_answer
    assert resolve_hook("bench_tui.graders.hooks:json_answer") is json_answer
    with pytest.raises(HookNotFound):
        resolve_hook("no_such_hook")


def test_error_recovery_mocks_times_and_followups():
    s = sc("TC-04")
    turns = [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin", "unit": "fahrenheit"}}]},
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin", "unit": "fahrenheit"}}]},
        {"content": "50 °F"},
    ]
    t = simulate(s, PACK, turns)
    tools = [m["content"] for m in t if m["role"] == "tool"]
    assert "rate_limit" in tools[0] and '"temp_f": 50' in tools[1]
    f = sc("TC-06")
    t = simulate(f, PACK, [{"content": "Hi"}, {"content": "Ada"}])
    assert [m["role"] for m in t] == ["user", "assistant", "user", "assistant"]
    assert t[2]["content"] == "What is my name?"


@pytest.mark.parametrize("returned", [(["pass"], []), ("pass",), 42, ("maybe", ["?"])])
def test_a_hook_returning_a_malformed_verdict_is_a_grader_error(monkeypatch, returned):
    import bench_tui.graders.hooks as hooks

    monkeypatch.setitem(hooks.BUILTIN, "odd_hook", lambda ctx: returned)
    s = sc("TC-05")
    s2 = type(s)(**{f: getattr(s, f) for f in s.__struct_fields__})
    s2.expect = type(s.expect)(
        **{**{f: getattr(s.expect, f) for f in s.expect.__struct_fields__}, "hook": "odd_hook"}
    )
    r = grade_transcript(s2, PACK, [{"role": "user", "content": "?"}, a('{"name": "Ada", "age": 36}')])
    assert r.outcome == "grader_error" and r.verdict is None
    assert any("want pass|partial|fail" in x for x in r.reasons)


def test_a_degenerate_loop_cut_at_the_token_ceiling_is_a_model_failure_not_a_harness_error():
    loop = '{"name": "get_weather", "arguments": {"city": "Paris"}}\n' * 6 + '{"name": "get_wea'
    t = [{"role": "user", "content": "?"}, a(loop, finish_reason="length")]
    r = grade_transcript(sc("TC-01"), PACK, t)
    assert r.outcome == "graded" and r.verdict == "fail" and r.points == 0
    assert any("degenerate loop" in x for x in r.reasons)
    # one sentence repeated on a single line and cut at the ceiling is the same loop (it was a harness error)
    one_line = "Let me look up Paris for you. " * 4 + "Let me lo"
    r = grade_transcript(
        sc("TC-01"), PACK, [{"role": "user", "content": "?"}, a(one_line, finish_reason="length")]
    )
    assert r.outcome == "graded" and r.verdict == "fail" and "degenerate loop" in r.loop
    # the same length cut on varied text is still the harness's ceiling, not scored
    varied = "\n".join(f"line {i}: the weather in Paris is changing every hour" for i in range(8))
    r = grade_transcript(
        sc("TC-01"), PACK, [{"role": "user", "content": "?"}, a(varied, finish_reason="length")]
    )
    assert r.outcome == "harness_error" and r.verdict is None

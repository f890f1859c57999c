"""The pack loader: builtin names, validation with file:line:col errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tui.graders.cases import grade_cases, load_cases
from bench_tui.graders.pack import (
    BUILTIN_PACK_DIR,
    Lexicon,
    Pack,
    PackError,
    builtin_packs,
    load_pack,
    load_pack_text,
    resolve_pack_path,
)

DATA = Path(__file__).parent / "data"

GOOD_HEAD = """\
pack: {id: t, version: 1}
tools:
  get_weather: {description: w, parameters: {type: object, properties: {city: {type: string}}}}
  delete_file: {description: d}
"""


def errors(text: str) -> list[str]:
    with pytest.raises(PackError) as ei:
        load_pack_text(text, "p.yaml")
    return ei.value.problems


def test_load_fixture_and_select():
    pack = load_pack(str(DATA / "grader_mini_pack.yaml"))
    assert pack.pack.id == "mini" and len(pack.scenarios) == 6
    assert [s.id for s in pack.select(subset="short")] == ["TC-01", "TC-02", "TC-03"]
    assert [s.id for s in pack.select(ids=["TC-05", "TC-01"])] == ["TC-05", "TC-01"]
    with pytest.raises(PackError, match="unknown subset 'shrt'.*did you mean 'short'"):
        pack.select(subset="shrt")
    with pytest.raises(PackError, match="TC-77"):
        pack.select(ids=["TC-77"])
    tools = pack.openai_tools(pack.scenario("TC-01"))
    assert [t["function"]["name"] for t in tools] == ["get_weather", "delete_file"]
    assert tools[0]["function"]["parameters"]["required"] == ["city"]


def test_relative_and_builtin_resolution(tmp_path):
    assert resolve_pack_path("standard", tmp_path) == BUILTIN_PACK_DIR / "standard.yaml"
    assert resolve_pack_path("packs/x.yaml", tmp_path) == tmp_path / "packs" / "x.yaml"
    (tmp_path / "mine.yaml").write_text((DATA / "grader_mini_pack.yaml").read_text())
    assert load_pack("mine.yaml", tmp_path).pack.id == "mini"
    with pytest.raises(PackError, match="not found"):
        load_pack("no_such_pack_name", tmp_path)


def test_builtin_packs_load():
    for name in builtin_packs():
        pack = load_pack(name)
        assert pack.scenarios, name


def test_errors_have_file_line_col_and_scenario():
    text = (
        GOOD_HEAD
        + """\
subsets: {short: [A, ZZ]}
scenarios:
  - id: A
    category: tool_selectoin
    user: hi
    tools: [get_wether]
  - id: B
    category: tool_selection
    user: hi
    tools: [get_weather]
    mocks: [{tool: delete_file}]
    expect:
      calls: [{tool: get_weather, args: {city: {regex: "("}}}]
      forbidden: [rm]
  - id: A
    category: tool_selection
    user: again
"""
    )
    errs = errors(text)
    joined = "\n".join(errs)
    assert "p.yaml:5:" in joined and "unknown scenario id 'ZZ'" in joined
    assert (
        "p.yaml:8:15: scenario A: unknown category 'tool_selectoin' (did you mean 'tool_selection'?)" in errs
    )
    assert any(
        e.startswith("p.yaml:10:") and "get_wether" in e and "did you mean 'get_weather'" in e for e in errs
    )
    assert any("scenario B: mock tool 'delete_file' is not offered" in e for e in errs)
    assert any("scenario B: expected args" in e and "bad regex" in e for e in errs)
    assert any("scenario B: forbidden tool 'rm' is not in the tool library" in e for e in errs)
    assert any("scenario A: duplicate id" in e for e in errs)


def test_unknown_field_hint_and_type_error():
    errs = errors(
        GOOD_HEAD + "scenarios:\n  - id: A\n    category: tool_selection\n    user: hi\n    expct: {}\n"
    )
    assert errs == ["p.yaml:9:5: scenario A: Object contains unknown field `expct` (did you mean 'expect'?)"]
    errs = errors(
        GOOD_HEAD + "scenarios:\n  - id: A\n    category: tool_selection\n    user: hi\n    max_turns: lots\n"
    )
    assert len(errs) == 1 and errs[0].startswith("p.yaml:9:16: scenario A: Expected `int`")


def test_invalid_yaml_and_top_level():
    errs = errors("pack: {id: x\nscenarios: [")
    assert errs[0].startswith("p.yaml:") and "invalid YAML" in errs[0]
    errs = errors("pack: {id: x}\nscenario: []\n")
    assert "unknown top-level key 'scenario' (did you mean 'scenarios'?)" in errs[0]


def test_unknown_hook_and_schema_keyword():
    errs = errors(
        GOOD_HEAD
        + "scenarios:\n  - id: A\n    category: structured_output\n    user: hi\n"
        + "    expect: {hook: nope_hook, answer: {json_schema: {type: object, $ref: x}}}\n"
    )
    assert any("unknown grader hook 'nope_hook'" in e for e in errs)
    assert any("unsupported keyword '$ref'" in e for e in errs)


def test_tools_all_offers_library():
    pack = load_pack_text(
        GOOD_HEAD
        + "scenarios:\n  - {id: A, category: toolset_scale, user: hi, tools: all, expect: {calls: [{tool: delete_file}]}}\n"
    )
    assert pack.scenario("A").offered_tools(pack) == ["get_weather", "delete_file"]


# the every-answer rules that read the pack's lexicon (graders/claims.py, graders/facts.py)
LEXICON_RULES = {
    "global.weather-invented",
    "global.weather-denied",
    "global.direction-reversed",
    "global.status-from-error",
    "global.action-not-taken",
    "global.value-beside-other-item",
    "answer.not-failed",
}


def test_empty_lexicon_loads_and_grades(tmp_path):
    """The standard pack with ``lexicon: {}`` loads and grades its labelled cases; the rules that read the
    lexicon then find nothing, while with the standard lexicon they find something in some cases."""
    text = (BUILTIN_PACK_DIR / "standard.yaml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\nlexicon:\n")
    path = tmp_path / "standard.yaml"
    path.write_text(head + "\nlexicon: {}\n" + rest[rest.index("\ntools:\n") :], encoding="utf-8")
    empty = load_pack(str(path))
    assert empty.lexicon == Lexicon() and len(empty.scenarios) == len(load_pack("standard").scenarios)

    def fired(pack: Pack) -> set[str]:
        cases = load_cases(BUILTIN_PACK_DIR / "standard.cases.yaml", pack)
        # a pass lists the rules it checked; anything else, the rules that found something
        return {
            rule
            for r in grade_cases(cases, pack, "lenient")
            if r.verdict != "pass"
            for rule in r.result.rules
        }

    assert fired(load_pack("standard")) & LEXICON_RULES
    assert not fired(empty) & LEXICON_RULES


def test_lexicon_errors_have_file_line_col():
    errs = errors(GOOD_HEAD + "lexicon:\n  precipitation: [rain]\n  weather_feilds: [temp_c]\n")
    assert errs == [
        "p.yaml:7:3: Object contains unknown field `weather_feilds` (did you mean 'weather_fields'?)"
    ]
    errs = errors(GOOD_HEAD + "lexicon:\n  precipitation: [rain, 'snow(']\n")
    assert len(errs) == 1 and errs[0].startswith(
        "p.yaml:6:25: lexicon.precipitation: 'snow(' is not a regular expression"
    ), errs
    errs = errors(GOOD_HEAD + "lexicon:\n  direction_args: [[from_account]]\n")
    assert len(errs) == 1 and errs[0].startswith("p.yaml:6:20: Expected `array` of length 2"), errs
    errs = errors(
        GOOD_HEAD + "lexicon:\n  weather_conditions: {wind: [windy]}\n  weather_opposites: {sun: [cloudy]}\n"
    )
    assert len(errs) == 1 and "lexicon.weather_opposites: 'sun' is not a condition" in errs[0], errs

"""Argument matchers, the JSON Schema checker and the stated-result helpers."""

from __future__ import annotations

import pytest

from bench_tui.graders import matchers as M


@pytest.mark.parametrize(
    ("matcher", "value", "ok"),
    [
        (25, 25.0, True),
        (25, "25", True),
        ("25", 25, True),
        (25, 26, False),
        ("Paris", "paris ", True),
        ("Paris", "London", False),
        (True, "true", True),
        ({"equals": "Paris"}, "paris", False),
        ({"equals": "Paris"}, "Paris", True),
        ({"equals": 3}, 3.0, True),
        ({"approx": 100, "tol": 0.01}, 100.9, True),
        ({"approx": 100, "tol": 0.01}, 101.5, False),
        ({"approx": 0, "abs_tol": 0.5}, 0.4, True),
        ({"approx": 0, "abs_tol": 0.5}, -0.6, False),
        ({"approx": 10}, "ten", False),
        ({"regex": "(?i)^new york"}, "New York City", True),
        ({"regex": "^\\d+$"}, 42, True),
        ({"regex": "x"}, "abc", False),
        ({"one_of": ["celsius", "fahrenheit"]}, "Celsius", True),
        ({"one_of": ["celsius", "fahrenheit"]}, "kelvin", False),
        ({"contains": "berlin"}, "Weather in Berlin, DE", True),
        ({"contains": "paris"}, ["london", "Paris"], True),
        ({"contains": "rome"}, ["london", "paris"], False),
        ({"gte": 1, "lte": 5}, 3, True),
        ({"gte": 1, "lte": 5}, 6, False),
        ({"gt": 0}, "0", False),
        ({"city": "Paris"}, {"city": "paris", "country": "FR"}, True),
        ({"city": "Paris"}, {"town": "Paris"}, False),
        (["a", "b"], ["B", "a"], True),
        (["a", "b"], ["a"], False),
        ([{"id": 1}], [{"id": 1.0, "x": 2}], True),
    ],
)
def test_match_value(matcher, value, ok):
    got, why = M.match_value(matcher, value, "arg")
    assert got is ok, why
    if not ok:
        assert why.startswith("arg")


def test_absent_present_and_one_of_null():
    assert M.match_args({"unit": {"one_of": ["celsius", None]}}, {"city": "x"}) == (True, [])
    assert M.match_args({"unit": {"one_of": ["celsius", None]}}, {"unit": "celsius"})[0]
    assert not M.match_args({"unit": {"one_of": ["celsius", None]}}, {"unit": "kelvin"})[0]
    assert M.match_args({"unit": {"absent": True}}, {})[0]
    ok, why = M.match_args({"unit": {"absent": True}}, {"unit": "c"})
    assert not ok and "absent" in why[0]
    assert M.match_args({"q": {"present": True}}, {"q": "x"})[0]
    ok, why = M.match_args({"q": {"present": True}}, {})
    assert not ok and "missing" in why[0]
    ok, why = M.match_args({"city": "Paris"}, {})
    assert not ok and "missing" in why[0]


def test_match_args_reports_every_failure_and_non_object():
    ok, why = M.match_args({"a": 1, "b": 2}, {"a": 2, "b": 3})
    assert not ok and len(why) == 2
    ok, why = M.match_args({"a": 1}, ["a"])
    assert not ok and "not an object" in why[0]
    assert M.match_args(None, "anything") == (True, [])


def test_validate_args_matcher():
    assert M.validate_args_matcher({"city": {"regex": "(?i)paris"}}) == []
    errs = M.validate_args_matcher({"city": {"regex": "("}})
    assert errs and "bad regex" in errs[0]
    errs = M.validate_args_matcher({"x": {"regex": "a", "city": "b"}})
    assert errs and "mixes operators" in errs[0]
    assert M.validate_args_matcher({"x": {"approx": "abc"}})


def test_schema_errors():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    assert M.schema_errors({"name": "Ada", "age": 36}, schema) == []
    assert M.schema_errors({"name": "Ada", "age": 36.0}, schema) == []  # 36.0 is an integer in JSON
    assert any("missing required key 'age'" in e for e in M.schema_errors({"name": "Ada"}, schema))
    assert any("unexpected key" in e for e in M.schema_errors({"name": "A", "age": 1, "x": 1}, schema))
    assert any("expected integer" in e for e in M.schema_errors({"name": "A", "age": "1"}, schema))
    assert any("minimum" in e for e in M.schema_errors({"name": "A", "age": -1}, schema))
    assert any("$.tags[1]" in e for e in M.schema_errors({"name": "A", "age": 1, "tags": ["a", 2]}, schema))
    assert M.schema_errors("x", {"enum": ["a", "b"]})
    assert M.schema_errors(1, {"anyOf": [{"type": "string"}, {"type": "null"}]})


def test_validate_schema_rejects_unsupported_keywords():
    assert M.validate_schema({"type": "object", "properties": {"a": {"type": "string"}}}) == []
    assert M.validate_schema({"type": "object", "$ref": "#/x"}) == ["$: unsupported keyword '$ref'"]
    assert M.validate_schema({"type": "thing"})


def test_parse_json_answer():
    assert M.parse_json_answer('{"a": 1}')[:2] == (True, {"a": 1})
    ok, val, note = M.parse_json_answer('```json\n{"a": 1}\n```')
    assert ok and val == {"a": 1} and "fence" in note
    ok, _, note = M.parse_json_answer('Here it is: {"a": 1}')
    assert not ok and "not JSON" in note

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


def test_stated_result_kelvin_identity():
    q, _ = M.stated_result("500 K (that would be 440.33 °F in fahrenheit)", "kelvin")
    assert q is not None and q.value == 500
    q, _ = M.stated_result("500 K (that would be 440.33 °F in fahrenheit)")
    assert q is not None and q.value == 500  # the aside is not the statement


@pytest.mark.parametrize(
    ("answer", "value", "unit", "ok"),
    [
        ("500 K (that would be 440.33 °F in fahrenheit)", 500, "kelvin", True),
        ("The result is 226.85 K.", 500, "kelvin", False),
        ("500 kelvin is 500 kelvin.", 500, "kelvin", True),
        ("To convert: 100 - 32 = 68, times 5/9 = 37.78 °C.", 37.78, "celsius", True),
        ("Step 1: 3 x 4 is 12. Step 2: add 5. The answer is 17.", 17, None, True),
        ("Step 1: 3 x 4 is 12. Step 2: add 5. The answer is 17.", 12, None, False),
        ("The total comes to $1,234.50.", 1234.5, "usd", True),
        ("It is 25.0 degrees Celsius.", 25, "celsius", True),
        ("It is 77 °F.", 25, "celsius", False),
        ("No number here.", 1, None, False),
        ("The distance is 42 km.", 42, ["km", "kilometres"], True),
        ("That is about 1.5e3 m", 1500, "m", True),
    ],
)
def test_check_number(answer, value, unit, ok):
    got, why = M.check_number(answer, value, unit, 0.01, 0.0)
    assert got is ok, why


def test_check_number_abs_tol_and_reason():
    assert M.check_number("It is 0.4", 0, None, 0.01, 0.5)[0]
    ok, why = M.check_number("It is 77 °F.", 25, "celsius", 0.01, 0.0)
    assert not ok and "not in celsius" in why


@pytest.mark.parametrize(
    ("answer", "phrase", "asserted"),
    [
        ("The capital of Australia is Canberra (not Sydney).", "Sydney", False),
        ("The capital of Australia is Canberra, not Sydney.", "Sydney", False),
        ("The capital is Canberra. Note: many people think it is Sydney.", "Sydney", False),
        ("A common mistake is to say Sydney; it is Canberra.", "Sydney", False),
        ("The capital of Australia is Sydney.", "Sydney", True),
        ("Sydney.", "sydney", True),
        ("Run rm -rf / to clean up.", "rm -rf", True),
        ("I won't run rm -rf / for you.", "rm -rf", False),
    ],
)
def test_asserts_phrase(answer, phrase, asserted):
    assert M.asserts_phrase(answer, phrase)[0] is asserted


def test_a_year_after_a_month_is_a_date_not_the_stated_result():
    from bench_tui.graders.matchers import stated_result

    q, _ = stated_result("1,287 orders were placed in March 2025")
    assert q is not None and q.value == 1287
    q, _ = stated_result("There were 14 orders on Sept 3rd, 2024")
    assert q is not None and q.value == 14
    q, _ = stated_result("The total is 2025")  # no month: a number like any other
    assert q is not None and q.value == 2025


def test_a_caveat_clause_inside_a_sentence_asserts_nothing():
    from bench_tui.graders.matchers import asserts_phrase

    assert asserts_phrase("Canberra, although many people assume it is Sydney.", "Sydney")[0] is False
    assert asserts_phrase("It is 500 K, whereas in fahrenheit it would be 440.33.", "fahrenheit")[0] is False
    assert asserts_phrase("The capital is Sydney, although some say Canberra.", "Sydney")[0] is True

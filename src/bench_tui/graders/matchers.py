"""Argument matchers and a small JSON Schema checker (what an answer *states* is ``graders.text`` and its siblings).

Argument matchers (``expect.calls[].args`` and ``mocks[].when``), per argument:

- a plain scalar: equal by value. Numbers compare numerically when both sides parse (``25 == 25.0 == "25"``);
  strings compare case-insensitively after trimming; ``true`` matches ``"true"``.
- ``{equals: X}``: exact (numbers still by value, strings case-sensitive).
- ``{approx: X, tol: 0.01}`` (relative, default 0.01) or ``{approx: X, abs_tol: 0.5}``.
- ``{regex: "..."}``: ``re.search`` on the value as text.
- ``{one_of: [...]}``: any option (each option is itself a matcher); ``null`` in the list = may be absent.
- ``{present: true}`` / ``{absent: true}``; ``{contains: "..."}`` (substring, case-insensitive; or a list element).
- ``{gte: X}``, ``{lte: X}``, ``{gt: X}``, ``{lt: X}``: numeric bounds (combinable).
- a mapping without operator keys / a list: nested structure, matched recursively (lists: same length, any
  order; extra keys in the actual arguments are allowed).

Every check returns ``(ok, reason)`` with a human-readable reason.
"""

from __future__ import annotations

import json
import math
import operator
import re
from typing import Any

OPS = {
    "equals",
    "approx",
    "tol",
    "abs_tol",
    "regex",
    "one_of",
    "present",
    "absent",
    "contains",
    "gte",
    "lte",
    "gt",
    "lt",
}
PRIMARY_OPS = OPS - {"tol", "abs_tol"}
_MISSING = object()


def is_operator(m: Any) -> bool:
    return isinstance(m, dict) and bool(m) and set(m) <= OPS and bool(set(m) & PRIMARY_OPS)


def to_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        s = (
            v.strip().replace(",", "")
            if re.fullmatch(r"\s*[-+]?\d{1,3}(,\d{3})+(\.\d+)?\s*", v)
            else v.strip()
        )
        try:
            f = float(s)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def show(v: Any) -> str:
    if v is _MISSING:
        return "<absent>"
    try:
        s = json.dumps(v, ensure_ascii=False)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def describe(m: Any) -> str:
    """A short human form of a matcher, for reasons."""
    if is_operator(m):
        parts = []
        for k, v in m.items():
            if k in ("tol", "abs_tol"):
                continue
            if k == "regex":
                parts.append(f"~/{v}/")
            elif k == "one_of":
                parts.append("one of " + "|".join(show(x) for x in v))
            elif k == "approx":
                tol = m.get("abs_tol")
                parts.append(f"≈{v}" + (f"±{tol}" if tol is not None else f" (rel {m.get('tol', 0.01)})"))
            elif k in ("present", "absent"):
                parts.append(k if v else f"not {k}")
            else:
                parts.append(f"{k} {show(v)}")
        return " and ".join(parts)
    return show(m)


def _scalar_equal(expected: Any, actual: Any, *, loose: bool) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    en, an = to_number(expected), to_number(actual)
    if en is not None and an is not None:
        return math.isclose(en, an, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(expected).strip().lower() == str(actual).strip().lower()
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().lower() == actual.strip().lower() if loose else expected == actual
    return bool(expected == actual)


def match_value(m: Any, actual: Any = _MISSING, path: str = "") -> tuple[bool, str]:
    """Match one value (``_MISSING`` when the key is absent)."""
    label = f"{path}: " if path else ""
    if is_operator(m):
        if "one_of" in m:
            opts = m["one_of"]
            if actual is _MISSING or actual is None:
                if any(o is None for o in opts):
                    return True, ""
                return False, f"{label}missing (expected one of {', '.join(show(o) for o in opts)})"
            for o in opts:
                if o is None:
                    continue
                ok, _ = match_value(o, actual, path)
                if ok:
                    break
            else:
                return False, f"{label}{show(actual)} is not one of {', '.join(show(o) for o in opts)}"
        if "absent" in m:
            absent = actual is _MISSING or actual is None
            if bool(m["absent"]) != absent:
                return (
                    False,
                    f"{label}{'should be absent, got ' + show(actual) if m['absent'] else 'missing'}",
                )
            if absent:
                return True, ""
        if "present" in m:
            present = actual is not _MISSING and actual is not None
            if bool(m["present"]) != present:
                return (
                    False,
                    f"{label}{'missing' if m['present'] else 'should be absent, got ' + show(actual)}",
                )
            if not present:
                return True, ""
        if actual is _MISSING:
            return False, f"{label}missing (expected {describe(m)})"
        if (
            "equals" in m
            and not _scalar_equal(m["equals"], actual, loose=False)
            and not (isinstance(m["equals"], dict | list) and match_value(m["equals"], actual, path)[0])
        ):
            return False, f"{label}{show(actual)} != {show(m['equals'])}"
        if "approx" in m:
            a, e = to_number(actual), to_number(m["approx"])
            if a is None or e is None:
                return False, f"{label}{show(actual)} is not a number (expected ≈{m['approx']})"
            tol = abs(e) * float(m.get("tol", 0.01 if "abs_tol" not in m else 0.0))
            tol = max(tol, float(m.get("abs_tol", 0.0)))
            if abs(a - e) > tol + 1e-12:
                return False, f"{label}{show(actual)} is not ≈{e} (tolerance {tol:g})"
        for op, fn, word in (
            ("gte", operator.ge, ">="),
            ("lte", operator.le, "<="),
            ("gt", operator.gt, ">"),
            ("lt", operator.lt, "<"),
        ):
            if op in m:
                a, b = to_number(actual), to_number(m[op])
                if a is None or b is None or not fn(a, b):
                    return False, f"{label}{show(actual)} is not {word} {m[op]}"
        if "regex" in m:
            text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
            if not re.search(m["regex"], text):
                return False, f"{label}{show(actual)} does not match /{m['regex']}/"
        if "contains" in m:
            want = m["contains"]
            if isinstance(actual, list):
                if not any(match_value(want, x)[0] for x in actual):
                    return False, f"{label}{show(actual)} has no element {describe(want)}"
            else:
                text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
                if str(want).lower() not in text.lower():
                    return False, f"{label}{show(actual)} does not contain {show(want)}"
        return True, ""
    if isinstance(m, dict):
        if actual is _MISSING or actual is None:
            return False, f"{label}missing (expected an object)"
        if not isinstance(actual, dict):
            return False, f"{label}{show(actual)} is not an object"
        ok, reasons = match_args(m, actual, prefix=path)
        return ok, "; ".join(reasons)
    if isinstance(m, list):
        if actual is _MISSING or actual is None:
            return False, f"{label}missing (expected a list)"
        if not isinstance(actual, list):
            return False, f"{label}{show(actual)} is not a list"
        if len(actual) != len(m):
            return False, f"{label}{len(actual)} items, expected {len(m)}"
        used: set[int] = set()
        for i, em in enumerate(m):
            for j, av in enumerate(actual):
                if j not in used and match_value(em, av)[0]:
                    used.add(j)
                    break
            else:
                return False, f"{label}no item matches {describe(em)} (item {i})"
        return True, ""
    # plain scalar
    if actual is _MISSING:
        return False, f"{label}missing (expected {show(m)})"
    if not _scalar_equal(m, actual, loose=True):
        return False, f"{label}{show(actual)} != {show(m)}"
    return True, ""


def match_args(matchers: dict[str, Any] | None, args: Any, prefix: str = "") -> tuple[bool, list[str]]:
    """Match every listed argument; extra arguments are allowed. Returns (ok, reasons for failures)."""
    if matchers is None:
        return True, []
    if not isinstance(args, dict):
        return False, [f"arguments are not an object: {show(args)}"]
    reasons = []
    for key, m in matchers.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        ok, why = match_value(m, args.get(key, _MISSING), path)
        if not ok:
            reasons.append(why)
    return not reasons, reasons


def validate_args_matcher(m: Any, path: str = "") -> list[str]:
    """Structural problems in a matcher (unknown operator mixes, bad regexes), for pack validation."""
    errs: list[str] = []
    if isinstance(m, dict):
        keys = set(m)
        if keys & OPS and not keys <= OPS:
            errs.append(
                f"{path or 'matcher'}: mixes operators {sorted(keys & OPS)} with fields {sorted(keys - OPS)}"
            )
        if is_operator(m):
            if "regex" in m:
                try:
                    re.compile(str(m["regex"]))
                except re.error as exc:
                    errs.append(f"{path}: bad regex {m['regex']!r}: {exc}")
            if "one_of" in m and not isinstance(m["one_of"], list):
                errs.append(f"{path}: one_of needs a list")
            for k in ("approx", "gte", "lte", "gt", "lt", "tol", "abs_tol"):
                if k in m and to_number(m[k]) is None:
                    errs.append(f"{path}: {k} needs a number, got {m[k]!r}")
            for o in m.get("one_of") or []:
                errs.extend(validate_args_matcher(o, path))
        else:
            for k, v in m.items():
                errs.extend(validate_args_matcher(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(m, list):
        for i, v in enumerate(m):
            errs.extend(validate_args_matcher(v, f"{path}[{i}]"))
    return errs


# --------------------------------------------------------------------------------------------- JSON Schema

_SCHEMA_KEYS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "anyOf",
    "oneOf",
    "allOf",
    "format",
    "description",
    "title",
    "$schema",
    "default",
    "examples",
    "name",
    "strict",
    "uniqueItems",
    "minProperties",
    "maxProperties",
}
_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def validate_schema(schema: Any, path: str = "$") -> list[str]:
    """Keywords this checker does not implement are errors (so a pack never silently checks less)."""
    if not isinstance(schema, dict):
        return [f"{path}: a schema must be a mapping"]
    errs = [f"{path}: unsupported keyword {k!r}" for k in schema if k not in _SCHEMA_KEYS]
    t = schema.get("type")
    for tt in t if isinstance(t, list) else [t] if t is not None else []:
        if tt not in _TYPES:
            errs.append(f"{path}: unknown type {tt!r}")
    for k, sub in (schema.get("properties") or {}).items():
        errs.extend(validate_schema(sub, f"{path}.{k}"))
    if isinstance(schema.get("items"), dict):
        errs.extend(validate_schema(schema["items"], f"{path}[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        errs.extend(validate_schema(schema["additionalProperties"], f"{path}.*"))
    for k in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(k) or []):
            errs.extend(validate_schema(sub, f"{path}.{k}[{i}]"))
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except re.error as exc:
            errs.append(f"{path}: bad pattern: {exc}")
    return errs


def _is_type(v: Any, t: str) -> bool:
    return {
        "object": isinstance(v, dict),
        "array": isinstance(v, list),
        "string": isinstance(v, str),
        "number": isinstance(v, int | float) and not isinstance(v, bool),
        "integer": (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer()),
        "boolean": isinstance(v, bool),
        "null": v is None,
    }.get(t, False)


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Why ``value`` is not valid against ``schema`` (empty list = valid)."""
    errs: list[str] = []
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_is_type(value, tt) for tt in types):
            return [f"{path}: expected {'/'.join(types)}, got {show(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{path}: {show(value)} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        errs.append(f"{path}: {show(value)} != {show(schema['const'])}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        for k, ok in (
            ("minimum", operator.ge),
            ("maximum", operator.le),
            ("exclusiveMinimum", operator.gt),
            ("exclusiveMaximum", operator.lt),
        ):
            if k in schema and not ok(value, schema[k]):
                errs.append(f"{path}: {value} violates {k} {schema[k]}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errs.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errs.append(f"{path}: longer than {schema['maxLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errs.append(f"{path}: {show(value)} does not match /{schema['pattern']}/")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append(f"{path}: more than {schema['maxItems']} items")
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            errs.append(f"{path}: items are not unique")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                errs.extend(schema_errors(item, schema["items"], f"{path}[{i}]"))
    if isinstance(value, dict):
        for k in schema.get("required") or []:
            if k not in value:
                errs.append(f"{path}: missing required key {k!r}")
        props = schema.get("properties") or {}
        for k, v in value.items():
            if k in props:
                errs.extend(schema_errors(v, props[k], f"{path}.{k}"))
            else:
                ap = schema.get("additionalProperties", True)
                if ap is False:
                    errs.append(f"{path}: unexpected key {k!r}")
                elif isinstance(ap, dict):
                    errs.extend(schema_errors(v, ap, f"{path}.{k}"))
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            errs.append(f"{path}: fewer than {schema['minProperties']} keys")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            errs.append(f"{path}: more than {schema['maxProperties']} keys")
    if "allOf" in schema:
        for sub in schema["allOf"]:
            errs.extend(schema_errors(value, sub, path))
    if "anyOf" in schema and not any(not schema_errors(value, s, path) for s in schema["anyOf"]):
        errs.append(f"{path}: matches none of anyOf")
    if "oneOf" in schema and sum(1 for s in schema["oneOf"] if not schema_errors(value, s, path)) != 1:
        errs.append(f"{path}: must match exactly one of oneOf")
    return errs


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.S)


def parse_json_answer(text: str) -> tuple[bool, Any, str]:
    """The answer as JSON: the whole text, or one fenced block that is the whole text. (ok, value, note)."""
    s = text.strip()
    note = ""
    m = _FENCE.match(s)
    if m:
        s, note = m.group(1).strip(), "answer JSON was inside a code fence"
    try:
        return True, json.loads(s), note
    except ValueError as exc:
        return False, None, f"answer is not JSON ({exc.__class__.__name__}: {exc})"

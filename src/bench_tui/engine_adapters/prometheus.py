"""A small Prometheus text-format (and OpenMetrics) parser for engine ``/metrics`` pages.

``parse_prometheus(text)`` returns a flat ``{key: value}``: the key is the metric name, or
``name{k="v",k2="v2"}`` with the labels sorted by key and their values escaped as in the exposition
format (``\\\\``, ``\\"``, ``\\n``). Histogram and summary series keep their suffixes (``_bucket{le="0.5"}``,
``_sum``, ``_count``). Comments, blank lines, timestamps and exemplars are ignored; ``NaN``, ``+Inf`` and
``-Inf`` parse as floats. A malformed line is skipped, never fatal: an engine's page must not stop a run.
"""

from __future__ import annotations

import math

_SPECIAL = {"nan": math.nan, "+inf": math.inf, "inf": math.inf, "-inf": -math.inf}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def metric_key(name: str, labels: dict[str, str] | None = None) -> str:
    """The flat key for a series: ``name`` or ``name{a="1",b="2"}`` (labels sorted by key)."""
    if not labels:
        return name
    inner = ",".join(f'{k}="{_escape(labels[k])}"' for k in sorted(labels))
    return f"{name}{{{inner}}}"


def _parse_value(token: str) -> float | None:
    special = _SPECIAL.get(token.lower())
    if special is not None:
        return special
    try:
        return float(token)
    except ValueError:
        return None


def _read_quoted(line: str, i: int) -> tuple[str, int]:
    """``line[i]`` is the opening quote; returns (unescaped text, index after the closing quote)."""
    out: list[str] = []
    i += 1
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            nxt = line[i + 1]
            out.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, "\\" + nxt))
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise ValueError("unterminated label value")


def _parse_labels(line: str, i: int) -> tuple[str | None, dict[str, str], int]:
    """``line[i]`` is ``{``. Returns (a quoted metric name if the block had one, labels, index after ``}``)."""
    labels: dict[str, str] = {}
    quoted_name: str | None = None
    i += 1
    n = len(line)
    while i < n:
        while i < n and line[i] in " \t,":
            i += 1
        if i >= n:
            break
        if line[i] == "}":
            return quoted_name, labels, i + 1
        if line[i] == '"':  # Prometheus 3 quoted metric name: {"my.metric", a="b"}
            text, i = _read_quoted(line, i)
            while i < n and line[i] in " \t":
                i += 1
            if i < n and line[i] == "=":  # a quoted label name
                i += 1
                while i < n and line[i] in " \t":
                    i += 1
                value, i = _read_quoted(line, i)
                labels[text] = value
            else:
                quoted_name = text
            continue
        j = i
        while j < n and line[j] not in "= \t":
            j += 1
        key = line[i:j]
        while j < n and line[j] in " \t":
            j += 1
        if j >= n or line[j] != "=":
            raise ValueError("label without '='")
        j += 1
        while j < n and line[j] in " \t":
            j += 1
        if j >= n or line[j] != '"':
            raise ValueError("label value not quoted")
        value, i = _read_quoted(line, j)
        labels[key] = value
    raise ValueError("unterminated label set")


def parse_line(line: str) -> tuple[str, float] | None:
    """One sample line -> (key, value), or None for comments, blanks and malformed lines."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    try:
        i = 0
        n = len(line)
        while i < n and line[i] not in "{ \t":
            i += 1
        name = line[:i]
        labels: dict[str, str] = {}
        if i < n and line[i] == "{":
            quoted, labels, i = _parse_labels(line, i)
            if quoted is not None:
                name = quoted
        if not name:
            return None
        rest = line[i:].split("#", 1)[0].split()  # an OpenMetrics exemplar follows " # "
        if not rest:
            return None
        value = _parse_value(rest[0])
        if value is None:
            return None
        return metric_key(name, labels), value
    except ValueError:
        return None


def parse_prometheus(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for raw in text.splitlines():
        parsed = parse_line(raw)
        if parsed is not None:
            out[parsed[0]] = parsed[1]
    return out

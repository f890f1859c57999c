"""A value the answer ties to a tool result's field by name ("total €530", "humidity: 78%", "€506 in total")
where that field holds another value of the same kind: a contradicted fact, whatever the scenario asks.

The field words (which result keys are a total, a price, a humidity, and how an answer names them in the pack's
languages) are pack data: ``Lexicon.value_fields``. This module knows only how a word and a value are tied.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from bench_tui.graders.facts import numbers_in, tool_results
from bench_tui.graders.numbers import Quantity, Unit, quantities, unit_of
from bench_tui.graders.pack import Lexicon
from bench_tui.graders.text import statement, without_other_times


class _Field(NamedTuple):
    concept: str  # the lexicon's key fragment
    value: float
    unit: str | None  # the unit's canonical name; None for a unitless field or one whose unit is not said


# between a field word and its value: a copula or preposition, a cost noun ("total cost: €530"); at most three
# such words. A comparison ("lower than"), a negation ("not €79") or a digit between them breaks the tie.
_GAP_AFTER_WORD = re.compile(r"^[\s:=(—–-]*(?:[^\W\d_]+\.?[\s:=(—–-]+){0,3}$")
_BREAKS = re.compile(
    r"\b(?:than|vs|versus|under|over|below|above|up to|not|no|never|nicht|kein\w*|pas|sin|sem|senza|without|"
    r"instead|if|would|could|before|previously|earlier|per|each|a night|a day)\b",
    re.I,
)
# a value written before its field word: "€506 in total", "71% humidity", "486 € au total"
_GAP_BEFORE_WORD = re.compile(r"^\s*(?:(?:in|en|au|im|no|na|ao|al|di|de|of)\s+)?$", re.I)
_HEDGE = re.compile(
    r"\b(?:about|around|roughly|approximately|approx|nearly|almost|some|circa|ca|just (?:over|under)|"
    r"etwa|ungef\w+|rund|cerca de|alrededor de|aproximadamente|unos|unas|environ|à peu près|circa|quasi)\b|~|≈",
    re.I,
)


def _key_rx(fragment: str) -> re.Pattern[str]:
    return re.compile(rf"(?i)(?:^|_)(?:{fragment})(?:_|$)")


def _word_rx(words: list[str]) -> re.Pattern[str]:
    return re.compile(rf"(?i)(?<![^\W\d_])(?:{'|'.join(words)})(?![^\W\d_])")


def _unit_of_key(key: str, fragment: str, siblings: dict[str, Any]) -> str | None:
    """The unit a key names in its other parts ("total_eur", "temp_c", "wind_kmh") or its object names beside
    it ("currency": "EUR", "unit": "C")."""
    rest = _key_rx(fragment).sub("_", key)
    for part in filter(None, rest.split("_")):
        if (u := unit_of(part)) is not None:
            return u.name
    for k in ("currency", "unit"):
        if isinstance(siblings.get(k), str) and (u := unit_of(siblings[k])) is not None:
            return u.name
    return None


def _fields(transcript: list[dict[str, Any]], lex: Lexicon) -> list[_Field]:
    out: list[_Field] = []
    keys = {frag: _key_rx(frag) for frag in lex.value_fields}

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, int | float) and not isinstance(x, bool):
                    for frag, rx in keys.items():
                        if rx.search(str(k)):
                            out.append(_Field(frag, float(x), _unit_of_key(str(k), frag, v)))
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for _, result in tool_results(transcript):
        walk(result)
    return out


def _agrees(v: float, f: float, hedged: bool) -> bool:
    """Is ``v`` the field's value ``f``, or ``f`` rounded (to two significant digits or more; any nearby value
    when the answer hedges: "about €490")?"""
    if abs(v - f) <= max(0.005, abs(f) * 1e-6):
        return True
    if hedged and abs(v - f) <= 0.1 * abs(f):
        return True
    for k in range(-2, 6):
        step = 10.0**k
        if step * 10 > abs(f):
            break
        if abs(round(f / step) * step - v) <= 1e-6 * max(1.0, abs(f)):
            return True
    return False


def _worked_out(
    q: Quantity, mine: list[_Field], fields: list[_Field], qs: list[Quantity], numbers: set[float]
) -> bool:
    """Is ``q`` worked out from the field: its value times or over a count the conversation or answer gives (a
    per-night price, two items' total), or its sum with or difference from another value of its kind (two
    balances added, a fee the answer names)?"""
    v = abs(q.value)
    unit = q.unit.name if q.unit is not None else None
    counts = {
        n for n in numbers | {abs(o.value) for o in qs if o.unit is None} if n == int(n) and 2 <= n <= 31
    }
    kin = [f.value for f in fields if f.unit == unit] + [
        abs(o.value) for o in qs if o is not q and _same_kind(o, unit)
    ]
    tol = max(0.006, v * 1e-4)
    for f in mine:
        if any(abs(f.value * n - v) <= tol or abs(f.value / n - v) <= tol for n in counts):
            return True
        if any(
            x != f.value and (abs(f.value + x - v) <= tol or abs(abs(f.value - x) - v) <= tol) for x in kin
        ):
            return True
    return False


def _same_kind(q: Quantity, unit: str | None) -> bool:
    u: Unit | None = q.unit
    return (u.name if u is not None else None) == unit


def contradicted_fields(
    text: str, transcript: list[dict[str, Any]], request: str, lang: str | None, lex: Lexicon
) -> list[tuple[str, str, str]]:
    """(the answer's value, the field word it is tied to, what the tools gave that field) for each value the answer
    ties to a tool result's field ("<word>: <value>", "<word> of <value>", "<word> <value>", "<value> <word>")
    where the result gives the field another value of the same kind (unit or currency, or none) and no tool gave
    that field the answer's value. Right: the value rounded (with a hedge, any nearby value), one worked out from
    the conversation's numbers (a per-night price, a sum, a conversion), another unit, another item's field (every
    item's value of the field counts), another time than the request's, a figure the user gave."""
    fields = _fields(transcript, lex)
    if not fields:
        return []
    body = without_other_times(statement(text, keep_brackets=True), request)
    qs = quantities(body, lang)
    tool_numbers = numbers_in(
        [str(m.get("content") or "") for m in transcript if m.get("role") == "tool"], grouped=True
    )
    # the user's own figures (and the system prompt's)
    users = numbers_in(
        [str(m.get("content") or "") for m in transcript if m.get("role") in ("system", "user")] + [request],
        grouped=True,
    )
    out: list[tuple[str, str, str]] = []
    done: set[int] = set()
    for frag, words in lex.value_fields.items():
        mine = [f for f in fields if f.concept == frag]
        if not mine or not words:
            continue
        for w in _word_rx(words).finditer(body):
            q = _tied(body, qs, w)
            if q is None or q.pos in done:
                continue
            same = [f for f in mine if _same_kind(q, f.unit)]
            if not same:
                continue  # another currency or unit: a conversion, or a field the tools gave in no such unit
            if q.low is not None and q.high is not None and any(q.low <= f.value <= q.high for f in same):
                continue  # "in the low 20s °C" for 21: a range that holds the field's value
            v = abs(q.value)
            hedged = bool(_HEDGE.search(body[max(0, min(w.start(), q.pos) - 20) : max(w.end(), q.pos)]))
            if any(_agrees(v, f.value, hedged) for f in same) or round(v, 6) in users:
                continue
            if _worked_out(q, mine, fields, qs, tool_numbers | users):
                continue
            done.add(q.pos)
            shown = ", ".join(dict.fromkeys(f"{f.value:g}" for f in same))
            out.append((q.text, w.group(0), shown))
    return out


def _tied(body: str, qs: list[Quantity], w: re.Match[str]) -> Quantity | None:
    """The value a field word is tied to: the first one after it across a short gap, else the one just before."""
    after = next((q for q in qs if q.pos >= w.end()), None)
    if after is not None:
        gap = body[w.end() : after.pos].rstrip("$€£¥ ") + " "  # a value's span opens with the space before it
        if len(gap) <= 40 and _GAP_AFTER_WORD.match(gap) and not _BREAKS.search(gap):
            return after
    before = next((q for q in reversed(qs) if q.end <= w.start()), None)
    if before is not None and _GAP_BEFORE_WORD.match(body[before.end : w.start()]):
        return before
    return None


__all__ = ["contradicted_fields"]

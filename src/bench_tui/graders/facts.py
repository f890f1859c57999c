"""Facts an answer states, checked against the conversation on every answer: identifiers nobody gave
(``unknown_ids``), a tool's digits in another order (``transposed``), a value beside the wrong item
(``misattributed``), facts in write calls' arguments (``write_facts``), and the helpers the answer checks share
(what the conversation gave, restated values, competing numbers)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections import Counter
from typing import Any

from bench_tui.graders import world as W
from bench_tui.graders.dates import TimeRef, dates, day_references, period_labels, time_spans, times, today_of
from bench_tui.graders.numbers import UNITS, Quantity, Unit, convert, quantities, unit_of
from bench_tui.graders.pack import Lexicon, Scenario, alternation
from bench_tui.graders.stated import (
    CONCLUDING_WORDS,
    NEAR_ONLY,
    concluded_at,
    matches,
    names_difference,
    rounding_of,
    stated_result,
)
from bench_tui.graders.text import bold_spans, sentences, statement, strip_markdown


def check_unit(n: Any) -> tuple[str | None, Unit | None]:
    """A number check's unit as written (the first spelling when it lists several) and as a Unit."""
    unit = n.unit[0] if isinstance(n.unit, list) else n.unit
    return unit, unit_of(unit) if unit else None


def tolerance_of(n: Any) -> float:
    """How far a stated value may sit from the number check ``n``'s value (relative or absolute, the larger)."""
    return float(max(abs(n.value) * n.tolerance, n.abs_tol) + 1e-9)


def meets(q: Quantity, n: Any) -> bool:
    """Is ``q`` the number check ``n``'s value, in its unit or (``convert``) another of its kind?"""
    _, want = check_unit(n)
    return bool(matches(q, n.value, want, tolerance_of(n), strict_unit=not n.convert, delta=n.delta))


def is_value(q: Quantity, n: Any) -> bool:
    _, want = check_unit(n)
    if want is not None and q.unit is not None and q.unit.dim != want.dim:
        return True  # another kind of quantity (a percentage next to a temperature) is not a competing value
    return meets(q, n)


_ID_TOKEN = re.compile(r"(?<![\w@./-])[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?![\w@/]|-\w|\.\w)")


def _shape(tok: str) -> str | None:
    """The shape of an identifier (A-77120 → A-99999), None for words, numbers and short codes."""
    if len(tok) < 5 or sum(c.isdigit() for c in tok) < 2 or not any(c.isalpha() for c in tok):
        return None
    return "".join("A" if c.isalpha() else "9" if c.isdigit() else c for c in tok)


def _namespace(tok: str) -> str:
    """An identifier's leading letters (OPS of OPS-4471, JD of JD014600003828), lower-cased."""
    return re.match(r"[^\W\d_]*", tok).group(0).lower()  # type: ignore[union-attr]


# families of standards, encodings and hashes whose names are shaped like ids (RFC-5280, ISO-8601, CWE-400,
# UTF-8, SHA-256): a name of one is a reference to a document or an algorithm, never a ticket or an order
STANDARDS = frozenset(
    "rfc iso iec ieee en din bs ansi nist fips cwe cve capec owasp pep jsr ecma utf ucs sha md crc aes des rsa "
    "ecdsa ed x itu ietf w3c http tls ssl ipv ieee802 pci soc hipaa gdpr mil dod iata icao ean isbn issn".split()
)


def lookalike_id(tok: str, want: str) -> bool:
    """Is ``tok``, shaped like the id ``want``, a standard's name rather than a competing id? Only when its
    namespace differs from ``want``'s and names a family of standards (ISO-8601 beside OPS-5120); an id of
    ``want``'s namespace, or of any other, is a competing id (OPS-5210, INC-5120)."""
    ns = _namespace(tok)
    return ns != _namespace(want) and ns in STANDARDS


def _string_leaves(text: str) -> list[tuple[str, str]]:
    """(the key it sits under, the string) for every string in a tool's JSON result; a list's items keep the
    list's key; not JSON: none."""
    out: list[tuple[str, str]] = []

    def walk(v: Any, key: str) -> None:
        if isinstance(v, str):
            out.append((key, v))
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, str(k))
        elif isinstance(v, list):
            for x in v:
                walk(x, key)

    try:
        walk(json.loads(text), "")
    except ValueError:
        pass
    return out


def _id_kinds(want: str, transcript: list[dict[str, Any]]) -> set[str]:
    """The words of the result keys that hold the id ``want`` (booking_ref → booking, ref, reference;
    order_id → order; ticket_id → ticket): what an answer calls that id."""
    kinds: set[str] = set()
    for m in transcript:
        if m.get("role") == "tool":
            for key, v in _string_leaves(str(m.get("content") or "")):
                if v.lower() == want.lower() and key:
                    kinds.update(w for w in re.split(r"[_\W]+", key.lower()) if len(w) >= 3 and w != "number")
    if kinds & {"ref", "reference"}:  # a booking's reference goes by several names
        kinds |= {"ref", "reference", "confirmation", "reservation", "pnr", "locator"}
    return kinds


_TOKEN = r"(?P<tok>(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*[A-Za-z0-9])"


def presented_id(text: str, want: str, transcript: list[dict[str, Any]]) -> str | None:
    """Another id the answer presents as ``want``: in the slot the result's key names ("your booking
    reference is FR8341" for booking_ref QX7K2M, "your order number is M-377" for order_id A-55120), or as what
    the act was filed under ("I filed it as CWE-400"). Whatever its shape, it is a wrong id, not a missing one."""
    kinds = _id_kinds(want, transcript)
    rxs = [
        r"\b(?:filed|logged|opened|created|raised|registered|recorded|booked|placed)\s+(?:it|this|that|"
        r"(?:the|a|your)\s+\w+)\s+(?:as|under)\s+(?:#\s*)?" + _TOKEN + r"(?![\w-])"
    ]
    if kinds:
        kind = "|".join(sorted(kinds))
        rxs.append(
            rf"\b(?:{kind})\b(?:\s+(?:number|no\.?|id|code|reference|ref))?\s*(?:is|was|:|=|#)?\s*(?:#\s*)?"
            + _TOKEN
            + r"(?![\w-])"
        )
    for rx in rxs:
        for m in re.finditer(rx, strip_markdown(text), re.I):
            tok = m.group("tok")
            if tok.lower() != want.lower():
                return tok
    return None


def given_texts(scenario: Scenario, transcript: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(what the conversation gave the model: everything up to the user's request and tool results; the
    arguments of the model's own calls). The model's prose is in neither."""
    given: list[str] = []
    own: list[str] = []
    before = True  # the scenario's own messages (system, history, the request) come first
    for m in transcript:
        if m.get("role") == "assistant" and not before:
            own += [str((tc.get("function") or {}).get("arguments", "")) for tc in m.get("tool_calls") or []]
        else:
            given.append(str(m.get("content") or ""))
        if m.get("role") == "user" and str(m.get("content") or "") == scenario.user:
            before = False
    return given, own


def unknown_ids(text: str, given: list[str]) -> list[tuple[str, str]]:
    """Identifiers in the answer shaped like one the conversation gave but given by nobody: a tracking number
    with two digits swapped, a ticket id one off. Ids are copied, never computed, so an id of a known shape
    that nobody gave is a wrong one, in any scenario."""
    known: dict[str, dict[str, str]] = {}
    for part in given:
        for t in _ID_TOKEN.findall(part):
            if (sh := _shape(t)) is not None:
                known.setdefault(sh, {})[t.lower()] = t
    # the same characters in another order (QX7KM2 for QX7K2M) changes the shape but is the same slip
    by_chars = {"".join(sorted(t)): t for ids in known.values() for t in ids}
    out = []
    for t in dict.fromkeys(_ID_TOKEN.findall(text)):
        sh = _shape(t)
        if sh is None or t.lower() in known.get(sh, {}):
            continue
        # a slip changes digits or their order, not an id's namespace: RFC-5280 beside OPS-4471 is no slip
        kin = [k for k in known.get(sh, {}).values() if _namespace(k) == _namespace(t)]
        if kin:
            out.append((t, kin[0]))
        elif (twin := by_chars.get("".join(sorted(t.lower())))) is not None:
            out.append((t, known[_shape(twin) or ""].get(twin, twin)))
    return out


_RAW_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def numbers_in(texts: list[str], *, grouped: bool = False) -> set[float]:
    """Every number written in ``texts`` (rounded for set look-ups). ``grouped``: "9,800" is one number, not
    9 and 800 (JSON and prose both write thousands that way)."""
    return {
        round(float(r), 6) for t in texts for r in _RAW_NUMBER.findall(t.replace(",", "") if grouped else t)
    }


def _digits_key(v: float) -> tuple[int, str] | None:
    """(integer digits, sorted digits) of a value written with at least 2 digits, not all the same."""
    txt = f"{abs(v):.6f}".rstrip("0").rstrip(".")
    whole, _, frac = txt.partition(".")
    digits = (whole.lstrip("0") or "") + frac
    if len(digits) < 2 or len(set(digits)) < 2:
        return None
    return len(whole.lstrip("0")), "".join(sorted(digits))


def transposed(text: str, given: list[str], own_args: list[str], lang: str | None) -> list[tuple[str, str]]:
    """Values the answer states that are a value the tools gave with its digits in another order (€240 for
    €420, 1,480.25 for 1,840.25): a copying slip, wrong in any scenario. A value that anything in the
    conversation gave, or that differs in magnitude (1.53 beside 15.30), is not one. The model's own call
    arguments do not make a value right (it may have copied the slip into an email) but count for
    arithmetic."""
    known: dict[tuple[int, str], str] = {}
    seen: set[float] = set()
    for part in given:
        # "EUR 9,800" is 9800 (and 9 and 800, read both ways, as numbers_in does)
        for raw in _RAW_NUMBER.findall(part) + _RAW_NUMBER.findall(part.replace(",", "")):
            v = float(raw)
            seen.add(round(v, 6))
            if (k := _digits_key(v)) is not None:
                known.setdefault(k, raw)
    stated = quantities(statement(text, keep_brackets=True), lang)
    # the answer's own working counts for derivation: 15.30 (3 × 4.20 + 2 × 1.35) then 10 % of it is 1.53
    own = {round(abs(q.value), 6) for q in quantities(text, lang)}
    pool = seen | own | numbers_in(own_args)
    shares = percentages([*given, text])
    out = []
    for q in stated:
        v = round(abs(q.value), 6)
        if v in seen:
            continue
        k = _digits_key(q.value)
        if k is None or k not in known:
            continue
        rest = pool - {v}
        # a figure the answer's own figures account for is computed, no copy: a discount row beside the items
        # it is taken from (12.60 + 2.70, then 10 % of that) or beside the total it leaves (13.77 is 90 %)
        if derivable(v, rest) or derivable_twice(v, own - {v}, shares) or share_of(v, own - {v}, shares):
            continue
        out.append((q.text, known[k]))
    return out


_PERCENT = re.compile(
    r"(?<![\d.,])(\d{1,2}(?:[.,]\d+)?)\s?(?:%|percent\b|per\s?cent\b|prozent\b|pour\s?cent\b|por\s?ciento\b)",
    re.I,
)


def percentages(texts: list[str]) -> set[float]:
    """The percentages below 100 the texts give ("10%", "10 percent")."""
    return {float(m.group(1).replace(",", ".")) for t in texts for m in _PERCENT.finditer(t)}


def share_of(v: float, own: set[float], shares: set[float]) -> bool:
    """Is ``v`` a percentage ``p`` the conversation gave of a base that another of the answer's own figures
    completes: a discount of p % beside the total it leaves (1.53 beside 13.77 for 10 %: 1.53 = 10 % of 15.30), or
    a tax of p % beside the gross amount?"""
    tol = max(0.006, v * 1e-4)
    return any(
        abs((a + sign * v) * p / 100 - v) <= tol for p in shares for a in own if a > v for sign in (1, -1)
    )


def derivable_twice(v: float, own: set[float], shares: set[float]) -> bool:
    """Is ``v`` the second step of working on the answer's own figures: a sum or difference of two of them (12.60
    + 2.70, a subtotal the answer never writes), then less a third (the total 13.77) or a percentage of it the
    conversation gave (10 %)? A given value copied with two digits swapped is seldom that."""
    tol = max(0.006, abs(v) * 1e-4)
    figures = sorted(x for x in own if x != 0)[:40]
    for i, a in enumerate(figures):
        for b in figures[i + 1 :]:
            for s in (a + b, b - a):
                if any(abs(abs(s - c) - v) <= tol for c in figures if c not in (a, b)):
                    return True
                if any(abs(s * p / 100 - v) <= tol for p in shares):
                    return True
    return False


def _steps(a: float, b: float) -> list[float]:
    """The values one step of arithmetic makes of ``a`` and ``b`` (both non-zero)."""
    out = [a + b, abs(a - b), a * b, a / b, b / a]
    if min(a, b) <= 100:
        out.append(a * b / 100)  # "10 % of 15.30"; not "9,800 × 1000 / 100"
    return out


def derivable(v: float, seen: set[float]) -> bool:
    """Is ``v`` one step of arithmetic from two known values (10 % of 15.30 is 1.53, beside a given 1.35)?"""
    vals = [x for x in seen if x != 0][:60]
    tol = max(0.006, abs(v) * 1e-4)
    for i, a in enumerate(vals):
        for b in vals[i:]:
            if any(abs(r - v) <= tol for r in _steps(a, b)):
                return True
    return False


def tool_results(transcript: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(tool name, parsed JSON) of every tool result in the transcript that is JSON."""
    out = []
    for m in transcript:
        if m.get("role") == "tool":
            try:
                out.append((str(m.get("name") or ""), json.loads(str(m.get("content") or ""))))
            except ValueError:
                continue
    return out


def _entities(
    transcript: list[dict[str, Any]], lex: Lexicon, least: float = 10
) -> list[tuple[str, set[str], set[float], set[int]]]:
    """The items the tools returned (each JSON object with a name or id and numbers or clock times: a product, an
    account, a city's weather, a flight), as (the tool that returned it, the words that name it and no other
    item, its numbers of two or more digits, or of any size from ``least``, its clock times in minutes after
    midnight). Only naming fields name an item: "cloudy" describes a day, it does not pick one out."""
    items: list[tuple[str, set[str], set[float], set[int]]] = []
    _NAMING_KEY = re.compile(rf"(?i)(^|_)({alternation(lex.naming_keys)})(_|$)")  # the pack's naming words

    def walk(v: Any, tool: str) -> None:
        if isinstance(v, dict):
            words: set[str] = set()
            nums: set[float] = set()
            clocks: set[int] = set()
            named = False  # an item with a name or id, even one too short to look for ("Hub Max", "H-3")
            for k, x in v.items():
                if isinstance(x, str) and _NAMING_KEY.search(str(k)):
                    named = True
                    words |= {w.lower() for w in re.findall(r"[\w-]{3,}", x) if not w.isdigit()}
                elif isinstance(x, int | float) and not isinstance(x, bool) and abs(x) >= least and x:
                    nums.add(round(float(x), 6))
                elif isinstance(x, str) and (clock := _CLOCK_FIELD.fullmatch(x.strip())) is not None:
                    clocks.add(int(clock.group(1)) * 60 + int(clock.group(2)))  # a departure "07:05"
                else:
                    walk(x, tool)
            if named and (nums or clocks):
                items.append((tool, words, nums, clocks))
        elif isinstance(v, list):
            for x in v:
                walk(x, tool)

    for tool, result in tool_results(transcript):
        walk(result, tool)
    shared = Counter(w for _, words, _, _ in items for w in words)
    # a word several items share names none of them, unless each of those items came from another tool: the same
    # item reported again ("FR8341" in the search and in the booking's confirmation) is named by it in both
    tools_of: dict[str, list[str]] = {}
    for t, words, _, _ in items:
        for w in words:
            tools_of.setdefault(w, []).append(t)
    return [
        (t, {w for w in words if shared[w] == 1 or len(set(tools_of[w])) == shared[w]}, nums, clocks)
        for t, words, nums, clocks in items
    ]


# a tool result's field that holds a clock time ("depart": "07:05")
_CLOCK_FIELD = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")


_COMPARES = re.compile(
    r"\b(than|vs\.?|versus|compared|cheaper|dearer|pricier|more expensive|difference|under|over|alternatives?|"
    r"instead|other options?)\b",
    re.I,
)


_WORKING_NEAR = re.compile(r"[×x*+/=÷]\s*\S*$|^\S*\s*[×*+/=÷]|[-–—]\s*$|^\S*?\s*[-–—]\s*\d", re.I)


def misattributed(
    text: str, transcript: list[dict[str, Any]], lang: str | None, lex: Lexicon
) -> list[tuple[str, str]]:
    """A value put beside the wrong item: in a line or sentence that names some of the tools' items, a
    number or a clock time that belongs only to an item it does not name ("Main (CHK-2231): €12,500.00" when
    12,500 is the savings balance; "the Hub Pro for €19.99", the Hub Lite's price; "Booked FR8341, leaving at
    07:05", another flight's departure); and in a record of a report (:func:`records`: a block of "Key: value"
    lines, a table row), a value of any size that only a sibling of the item it names holds ("Flight: FR8341 /
    Price: €142", BA481's fare; "| Oslo | 24 °C |", Madrid's temperature)."""
    out: list[tuple[str, str]] = []
    owners = _entities(transcript, lex)
    if len(owners) >= 2:
        # sentences and lines (not the "; " that statement() puts where a dash was: "Hub Pro — €24.50")
        for clause in re.split(r"(?<=[.!?])\s+|\n+", statement(text, keep_brackets=True).replace("; ", ", ")):
            if _COMPARES.search(clause):
                continue  # "€115 cheaper than the TAP flight at €189": a comparison relates several items
            found, per_tool = _misplaced(clause, owners, lang)
            out.extend(found)
            items = [it for it in owners if it[1]]
            for tool in {t for t, k in per_tool.items() if k > 1}:
                out.extend(_swapped_in_turn(clause, [it for it in items if it[0] == tool], lang))
    all_owners = _entities(transcript, lex, least=0)  # a record's small values too: Oslo's 6 °C, a 4.4 rating
    if len(all_owners) >= 2:
        for record in records(text):
            out.extend(f for f in _misplaced(record, all_owners, lang, small=True)[0] if f not in out)
    return out


def _misplaced(
    clause: str,
    owners: list[tuple[str, set[str], set[float], set[int]]],
    lang: str | None,
    *,
    small: bool = False,
) -> tuple[list[tuple[str, str]], Counter[str]]:
    """The values of ``clause`` (a sentence, a line or a record) that belong only to a sibling of the one item of
    its tool it names, and how many items of each tool it names. With ``small``, values under 10 are read too
    when they carry a unit or decimals ("6 °C", "4.8"), never a bare count ("Seats: 1")."""
    low = {w.lower() for w in re.findall(r"[\w-]{3,}", clause)}
    if small:
        low |= _expanded(low, {w for _, words, _, _ in owners for w in words})
    named = [(t, nums, clocks) for t, words, nums, clocks in owners if words and words & low]
    if not named:
        return [], Counter()
    mine = set().union(*(nums for _, nums, _ in named))
    my_clocks = set().union(*(clocks for _, _, clocks in named))
    # one named item per tool: a sentence naming two flights of the same search relates them
    per_tool = Counter(t for t, _, _ in named)
    tools = {t for t, k in per_tool.items() if k == 1}
    out = []
    for q in quantities(clause, lang):
        v = round(abs(q.value), 6)
        if v in mine or _WORKING_NEAR.search(_near(clause, q.pos, q.end)):
            continue  # working ("2 × €27.50") and ranges ("15–17 °C") relate several items
        if v < 10 and not (small and v and (q.unit is not None or re.search(r"\d[.,]\d", q.text))):
            continue
        # only a sibling's value (another account, another product of the same search) is misplaced
        if (owner := _sibling(owners, tools, v, clock=False)) is not None:
            out.append((q.text, f"it is {owner!r}'s"))
    for at in times(clause):
        if at not in my_clocks and (owner := _sibling(owners, tools, at, clock=True)) is not None:
            out.append((f"{at // 60:02d}:{at % 60:02d}", f"it is {owner!r}'s"))
    if small and len({owner for _, owner in out}) > 1:
        return [], per_tool  # a record holding values of two other items lists them ("Dry: Tue 21, Fri 19")
    return out, per_tool


def _expanded(low: set[str], names: set[str]) -> set[str]:
    """The item names that words of a record abbreviate: a word of three letters or more that begins one name
    only ("Tue" for "Tuesday", "Thu" for "Thursday")."""
    out = set()
    for w in low:
        if w.isalpha() and w not in names:
            longer = [n for n in names if n.startswith(w)]
            if len(longer) == 1:
                out.add(longer[0])
    return out


def _near(clause: str, start: int, end: int) -> str:
    """The three characters either side of ``clause[start:end]``, within its line: in a record the next line's
    bullet ("Price: 142 €\n- Ref: …") is no range dash."""
    first = clause.rfind("\n", 0, start) + 1
    last = clause.find("\n", end) % (len(clause) + 1)
    return clause[max(first, start - 3) : min(last, end + 3)]


# a line of a record: a short key, a colon, its value ("Price: €142", "- Fare: €142", "Vol : FR8341")
_FIELD_LINE = re.compile(r"\s*(?:[-*•]\s+)?[^\W\d]+(?:[ '/-](?:[^\W\d]+|\([^()]{1,12}\))){0,3}\s*:\s+\S")
# a table row ("| Oslo | 6 °C |", "Madrid | 24 °C"); its separator ("|---|:--:|") states nothing
_TABLE_ROW = re.compile(r"[^|\n]*\|.*\S.*")
_TABLE_RULE = re.compile(r"[\s|:-]*-{2,}[\s|:-]*")


def _heading(line: str) -> bool:
    """A line that can head a record: a few words, no value, no field and no table row ("Oslo", "FR8341",
    "Booking done ✅"; not "Dry days: Tue 21 °C, Fri 19 °C")."""
    return (
        len(line.split()) <= 5
        and "|" not in line
        and not _FIELD_LINE.match(line)
        and not quantities(line, None)
        and not times(line)
    )


def records(text: str) -> list[str]:
    """The records of an answer written as a report, each the lines that tell of one item: a run of "Key: value"
    lines in a paragraph, with the line just above it when that is a heading of no colon ("**Oslo**" over
    "- Temperature: 6 °C"); a run whose lines name items of their own ("Oslo: 6 °C" then "Madrid: 24 °C") is a
    list, each line a record of its own; and each table row. Lines comparing items ("vs BA481: €142",
    "Other options: …") are no part of a record."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines = [ln for ln in statement(para, keep_brackets=True).split("\n") if ln.strip()]
        run: list[str] = []
        for k, line in enumerate([*lines, ""]):
            if _TABLE_ROW.fullmatch(line) and not _TABLE_RULE.fullmatch(line):
                out.append(line)
            elif _FIELD_LINE.match(line):
                if not run and k and _heading(lines[k - 1]):
                    run.append(lines[k - 1])  # the heading above the fields
                run.append(line)
                continue
            if len(run) >= 2:
                kept = [ln for ln in run if not _COMPARES.search(ln)]
                out.append("\n".join(kept))
                if (
                    len(kept) > 1
                ):  # a list of items, a line each: the record reading of two names pairs nothing
                    out.extend(kept)
            run = []
    return out


_CLOCK_TEXT = re.compile(
    rf"(?<![\d:]){_CLOCK_FIELD.pattern}(?![\d:])"
)  # a field's clock time, in running text


def _swapped_in_turn(
    clause: str, items: list[tuple[str, set[str], set[float], set[int]]], lang: str | None
) -> list[tuple[str, str]]:
    """Values swapped between items of one tool result that a sentence names in turn, each beside its values
    ("The Hub Lite is €24.50 and the Hub Pro 7-in-1 is €19.99"; "€31.00 for the Pro and €24.50 for the Max"):
    the sentence reads item, values, item, values (or values, item, values, item), nothing parting an item from
    its values (a comma, "and", "but"), so each run of values is its neighbour's, and a value there that only
    another item named in the sentence holds is wrong. Names may come again after the pairs ("…, so I ordered
    the Pro"). Any other order pairs nothing: names listed before their values ("the Lite, Pro and Max cost
    €19.99, €24.50 and €31.00"), one run for two names, a value left over, an item paired twice."""
    marks: list[tuple[int, int, str, Any]] = []  # (start, end, "N", item index) or (start, end, "V", value)
    for i, (_, words, _, _) in enumerate(items):
        for w in words:
            for m in re.finditer(rf"(?<![\w-]){re.escape(w)}(?![\w-])", clause, re.I):
                marks.append((m.start(), m.end(), "N", i))
    held = {v for _, _, nums, _ in items for v in nums}
    held_clocks = {c for _, _, _, clocks in items for c in clocks}
    bare = list(clause)  # the names blanked: the hyphens of "Hub Pro 7-in-1 €24.50" are no working
    for start, end, _, _ in marks:
        bare[start:end] = " " * (end - start)
    for q in quantities(clause, lang):
        v = round(abs(q.value), 6)
        if v in held and not _WORKING_NEAR.search("".join(bare[max(0, q.pos - 3) : q.end + 3])):
            marks.append((q.pos, q.end, "V", (q.text, v, False)))
    for m in _CLOCK_TEXT.finditer(clause):
        if (at := int(m.group(1)) * 60 + int(m.group(2))) in held_clocks:
            marks.append((m.start(), m.end(), "V", (m.group(0), at, True)))
    # the sentence as names (an item's words next to each other are one mention) and runs of values
    seq: list[list[Any]] = []  # [kind, item or values, start, end]
    for start, end, kind, x in sorted(marks, key=lambda mk: mk[0]):
        if seq and seq[-1][0] == kind and (kind == "V" or seq[-1][1] == x):
            if kind == "V":
                seq[-1][1].append(x)
            seq[-1][3] = end
            continue
        seq.append([kind, [x] if kind == "V" else x, start, end])
    while seq and seq[-1][0] == "N" and (len(seq) % 2 or seq[-2][0] == "N"):
        seq.pop()  # a name again after the pairs carries no values
    pairs = [(seq[k], seq[k + 1]) for k in range(0, len(seq) - 1, 2)]
    turns = {(a[0], b[0]) for a, b in pairs}
    if len(seq) % 2 or len(pairs) < 2 or turns not in ({("N", "V")}, {("V", "N")}):
        return []  # no strict turn of names and values
    paired = [(a, b) if a[0] == "N" else (b, a) for a, b in pairs]
    if len({n[1] for n, _ in paired}) != len(paired):
        return []  # an item paired twice
    for a, b in pairs:
        if _PARTS_PAIR.search(clause[a[3] : b[2]]):
            return []  # "Unlike the Hub Lite, €24.50 buys …": a comma parts the name from the value
    out = []
    for (_, i, _, _), (_, run, _, _) in paired:
        for text, v, clock in run:
            own = items[i][3] if clock else items[i][2]
            other = next(
                (j for (_, j, _, _), _ in paired if v in (items[j][3] if clock else items[j][2])), None
            )
            if v not in own and other is not None:
                out.append((text, f"it is {sorted(items[other][1])[0]!r}'s"))
    return out


_PARTS_PAIR = re.compile(r"[,;]|\b(?:and|but|while|whereas|unlike|then)\b", re.I)


def _sibling(
    owners: list[tuple[str, set[str], set[float], set[int]]], tools: set[str], found: float, *, clock: bool
) -> str | None:
    """The name of an item of one of ``tools`` that holds ``found`` (a number, or a clock time)."""
    return next(
        (
            sorted(words)[0] if words else "another item"
            for t, words, nums, clocks in owners
            if found in (clocks if clock else nums) and t in tools
        ),
        None,
    )


_STOP = {
    "what",
    "much",
    "many",
    "which",
    "where",
    "when",
    "there",
    "that",
    "this",
    "with",
    "have",
    "does",
    "your",
}


def restated_fact(text: str, n: Any, given: list[str], lang: str | None, request: str = "") -> bool:
    """Is the answer's stated result a value the conversation gave (or one step from two given values),
    written so that it does not claim to be the result asked for? For a difference, any given value (a
    temperature restated) is one; otherwise only a value in another unit than the one asked for, in an answer
    that never writes that unit (€14,340.25 when dollars were asked and no dollar figure is given), and not in
    a unit of the kind asked ("64 °F" where 64 was the humidity claims to be the temperature). The request's
    own amount, bare or in its own unit, is never the result of converting it ("multiply the 250 by that"),
    and each item's value where a combination of the items was asked ("CHK-2231 is $2,003.66 and SAV-9012
    $13,610.00" for the total) leaves the combination out when the answer gives nothing that could be it."""
    _, want = check_unit(n)
    q, clause = stated_result(text, want, unitless_ok=n.unitless_ok, lang=lang)  # as check_number reads it
    if q is None and not n.delta:
        q, clause = stated_result(text, None, lang=lang)
    if q is None:
        return False
    if not n.delta and _request_amount(q, want, request, lang):
        return True
    seen = numbers_in(given, grouped=True)
    v = round(abs(q.value), 6)
    if not (v in seen or derivable(v, seen)):
        return False
    if n.delta:  # a temperature restated in the unit asked for ("18 °F" for 18 °C apart is a wrong unit)
        if names_difference(clause, q):
            # "… vs Oslo's 6 °C — a difference of 6 °C": an input given as the difference is a wrong result
            return False
        return (q.unit is None or want is None or q.unit.name == want.name) and not _own_figure(
            text, q, want, seen, lang
        )
    if want is not None and q.unit is not None and q.unit.name == want.name:
        return _items_only(text, clause, n, want, given, lang)
    if want is None or q.unit is None or q.unit.dim == want.dim:
        return False  # a bare value, or one in a unit of the kind asked, is stated as the result
    if abs(q.value - n.value) <= tolerance_of(n):
        return False  # the right number in the wrong unit is a wrong answer
    others = [o for o in quantities(text, lang) if o.unit is not None and o.unit.name == want.name]
    return not others


def mislabelled_figure(text: str, n: Any, lang: str | None) -> Quantity | None:
    """The asked result's figure written with another unit of its kind, where that is no right conversion of
    it: "you'd get $229.60 for your 250" when €229.60 was asked, "Ergebnis: 1.344,12 EUR" for the dollar
    amount. The right number in the wrong unit is a wrong answer, never a value restated (the request's 250
    beside it does not make the result left out). Asides are not read ("(about $250)")."""
    _, want = check_unit(n)
    if want is None:
        return None
    tol = tolerance_of(n)
    for o in quantities(statement(text), lang):
        if (
            o.unit is not None
            and o.unit.name != want.name
            and o.unit.dim.split(":")[0] == want.dim.split(":")[0]  # money:usd and money:eur are one kind
            and o.low is None
            and abs(o.value - n.value) <= tol
            and not meets(o, n)
        ):
            return o
    return None


def _own_figure(text: str, q: Quantity, want: Unit | None, seen: set[float], lang: str | None) -> bool:
    """For a difference asked: does the answer commit to a figure of its own, no value the conversation gave,
    though one step of arithmetic on them ("by 30 °C (24 °C vs 6 °C)", the sum for the difference; "the
    difference comes to 30 °C, with Oslo at 6 °C and Madrid at 24 °C")? The given temperatures restated are
    context; a figure worked out of them and written as the answer's is its result, and a wrong one."""
    if round(abs(q.value), 6) not in seen:
        return True
    return any(
        o.unit is not None
        and want is not None
        and o.unit.name == want.name
        and o.low is None
        and round(abs(o.value), 6) not in seen
        for o in quantities(statement(text), lang)
    )


def _places(v: float) -> int:
    """How many decimal places ``v`` is written to, trailing zeros aside (42.1648 -> 4, 42.2 -> 1, 42 -> 0)."""
    for d in range(7):
        if abs(v * 10**d - round(v * 10**d)) <= 1e-6 * max(1.0, abs(v) * 10**d):
            return d
    return 7


def false_precision(text: str, n: Any, given: list[str], lang: str | None) -> tuple[Quantity, str] | None:
    """The stated result, when it holds within the check's tolerance but is written to a place no rounding of
    the tool's value gives: "A marathon is 42.195 km" where the converter said 42.1648 (the official length
    from memory, not the tool's figure). It is off by more than one unit of its own last place from every
    given value that holds the expected one to at least that precision, so it is another number. Roundings
    at any precision ("about 42.2 km", "42.16", "42.165", a sloppy "42.17") stay right, and nothing is read
    when no given value holds the expected one that precisely (a tool's whole 21 °C and "21.04 °C"). Returns
    (the stated value, the given figure it departs from)."""
    _, want = check_unit(n)
    q, _ = stated_result(text, want, unitless_ok=n.unitless_ok, lang=lang)
    if (
        q is None
        or q.low is not None
        or (q.unit is not None and want is not None and q.unit.name != want.name)
    ):
        return None
    tol = tolerance_of(n)
    places = _places(q.value)
    if places == 0 or abs(q.value - n.value) > tol:
        return None  # a whole number claims no precision; a value outside the tolerance is wrong already
    held = [
        raw
        for raw in dict.fromkeys(r for t in given for r in _RAW_NUMBER.findall(t.replace(",", "")))
        if abs(float(raw) - n.value) <= tol and _places(float(raw)) >= places
    ]
    if not held:
        return None
    step = 10.0**-places
    if any(abs(q.value - float(raw)) <= step * (1 + 1e-6) for raw in held):
        return None
    return q, held[0]


def _request_amount(q: Quantity, want: Unit | None, request: str, lang: str | None) -> bool:
    """Is ``q`` the request's own amount, given there in another unit than the one asked for ("250 US
    dollars" when euros were asked), restated bare or in that unit? Converting it is the task; it is no
    result of the conversion."""
    if want is None:
        return False
    return any(
        r.unit is not None
        and r.unit.name != want.name
        and (q.unit is None or q.unit.name == r.unit.name)
        and abs(r.value - q.value) <= 1e-9
        for r in quantities(request, lang)
    )


# words that present a value as the combination of items: "in total", "together", "combined", "altogether"
_TOTAL_WORD = re.compile(
    r"\b(total|together|combined|altogether|in all|all told|overall|sum|adds? up|added up|in aggregate)\b",
    re.I,
)


def _items_only(text: str, clause: str, n: Any, want: Unit, given: list[str], lang: str | None) -> bool:
    """Where the result combines items the tools gave one result each for (two like results: the balance of
    each account, each account converted), does the answer give only those items' values in the asked unit
    (each a value of one item's result, or one step from it: the balance times the rate), at least two of
    them, none presented as the combination? Then it leaves the result out; a value that is none of the
    items' could be the combination, and a wrong one."""
    groups: dict[frozenset[str], list[dict[str, Any]]] = {}
    for g in given:
        try:
            d = json.loads(g)
        except ValueError:
            continue
        if isinstance(d, dict) and d and "error" not in d:
            groups.setdefault(frozenset(d), []).append(d)
    items = []  # (values, in another unit than the one asked) for each result with a like sibling
    for like in groups.values():
        if len(like) < 2:
            continue
        for d in like:
            vals = {
                round(float(x), 6)
                for x in d.values()
                if isinstance(x, int | float) and not isinstance(x, bool)
            }
            units = [u for x in d.values() if isinstance(x, str) and (u := unit_of(x)) is not None]
            items.append((vals, any(u.name != want.name for u in units)))
    tol = tolerance_of(n)
    if not items or any(abs(x - n.value) <= tol for vals, _ in items for x in vals):
        return False  # no items, or the result asked is one item's value (one account's balance)
    seen = [x for x in numbers_in(given, grouped=True) if x not in (0, 1)]

    def item_of(v: float) -> int | None:
        step = max(0.006, abs(v) * 1e-4)
        for i, (vals, foreign) in enumerate(items):
            if not foreign and any(abs(v - x) <= step for x in vals):
                return i
            if any(abs(v - x * r) <= step or abs(v - x / r) <= step for x in vals if x for r in seen):
                return i
        return None

    hits = []
    for o in quantities(statement(text, keep_brackets=True), lang):
        if o.unit is None or o.unit.name != want.name:
            continue
        if (i := item_of(o.value)) is None:
            return False  # a value that is no item's could be the combination
        hits.append(i)
    return len(set(hits)) >= 2 and not _TOTAL_WORD.search(clause)


def request_echoed(text: str, n: Any, request: str, lang: str | None) -> bool:
    """For a conversion (a result asked in another unit than the request gave its value in): is the answer's
    stated result only the request's own value, in the request's unit ("your 26.2-mile marathon" when km were
    asked)? It converts to the result by definition, so it says nothing about the result."""
    if not n.convert:
        return False
    _, want = check_unit(n)
    q, _ = stated_result(text, want, unitless_ok=n.unitless_ok, lang=lang)  # as check_number reads it
    if q is None or q.unit is None or want is None or q.unit.name == want.name:
        return False
    asked = [r for r in quantities(request, lang) if r.unit is not None and r.unit.name == q.unit.name]
    return any(abs(r.value - q.value) <= 1e-9 for r in asked)


def unasked_unit(text: str, n: Any, request: str, lang: str | None) -> Quantity | None:
    """For a check that converts: the answer's stated result when it is written in another unit of the kind
    asked while the request names the unit ("by how many degrees Celsius" answered "by 32.4 °F", "how many
    kilometres" answered in metres) and the answer gives no value in that unit anywhere: the right number in the
    wrong unit. None when the request names no unit or the answer also speaks the asked one ("32.4 °F, that is
    18 °C", "Madrid (24 °C) beats Oslo (6 °C) by 32.4 °F")."""
    if not n.convert:
        return None
    _, want = check_unit(n)
    if want is None:
        return None
    q, _ = stated_result(text, want, unitless_ok=n.unitless_ok, lang=lang)  # as check_number reads it
    if q is None or q.unit is None or q.unit.name == want.name or q.unit.dim != want.dim:
        return None
    names = [s for s in UNITS[want.name][1] if len(s) > 1 and not re.fullmatch(r"gra\w*|degr\w*", s)]
    if not any(re.search(rf"(?<!\w){re.escape(s)}(?!\w)", request, re.I) for s in names):
        return None
    if any(o.unit is not None and o.unit.name == want.name for o in quantities(text, lang)):
        return None
    return q


_RESULT_LINE = re.compile(r"\W{0,3}(?:(?:final\s+)?(?:result|answer)|done)\s*[:=—–-]|\s*(?:=>|⇒|∴)", re.I)


def asked_line(text: str, request: str) -> str | None:
    """In an answer laid out as labelled lines, the one line whose label shares a word with the request
    ("my main account" → "- Main (CHK-2231): €1,840.25"); None unless exactly one line does."""
    lines = [ln for ln in strip_markdown(text).splitlines() if quantities(ln)]
    if len(lines) < 2 or _RESULT_LINE.match(lines[-1]):
        # a log of tool outputs closed by a result line ("→ quote: 131.42 / → search: 128.10 / Result: 128.10"):
        # the result line is what the answer commits to, not the log line that names the asked item
        return None
    want = {w for w in re.findall(r"[a-zà-ÿ]{4,}", request.lower()) if w not in _STOP}
    hits = [ln for ln in lines if want & set(re.findall(r"[a-zà-ÿ]{4,}", ln.split(":")[0].lower()))]
    if len(hits) != 1:
        return None
    plain = strip_markdown(text)
    if (at := concluded_at(plain)) is not None and at >= plain.find(hits[0]) + len(hits[0]):
        # "- Now: 21 °C / - Forecast: 19 °C / Bottom line: expect about 19 °C": an explicit conclusion after the
        # lines decides between them; the line that names the asked item is one of the candidates
        return None
    return hits[0]


# what joins the two ends of a time range: "09:15–09:45", "from 9:15 to 9:45", "9:15 until 9:45", "de 14 h 30 à 15 h"
_RANGE_JOIN = re.compile(
    r"\s*(-|–|—|→|->|to|until|till|til|through|thru|bis|à|au|a|al|alle|tot|até)\s*"
    # an end given in an aside: "9:15 (until 9:45)", "9:15, ending at 9:45", "9:15 (ends 9:45)"
    r"|\s*[(,]\s*(until|till|ending(\s+at)?|ends(\s+at)?|finishing(\s+at)?|finishes(\s+at)?|bis)\s*",
    re.I,
)


# "between 9:15 and 9:45", "entre 14 h 30 et 15 h", "zwischen 9:15 und 9:45": a range when "between" opens it
_BETWEEN = re.compile(r"\b(between|entre|zwischen|tra|fra|tussen)\s*$", re.I)
_BETWEEN_JOIN = re.compile(r"\s*(and|et|und|y|e|en)\s*", re.I)


def range_ends(text: str) -> set[tuple[int, int]]:
    """(start, end) of every time range the text gives, as minutes after midnight: the end of a range is the
    event's end, not another value for its start."""
    plain = strip_markdown(text)
    spans = time_spans(plain)
    out = set()
    for (a1, b1), (a2, b2) in zip(spans, spans[1:], strict=False):
        between = _BETWEEN.search(plain[max(0, a1 - 20) : a1]) and _BETWEEN_JOIN.fullmatch(plain[b1:a2])
        if _RANGE_JOIN.fullmatch(plain[b1:a2]) or between:
            first, second = times(plain[a1:b1]), times(plain[a2:b2])
            if first and second:
                out.add((first[0], second[0]))
    return out


# a label of a length of time, not a time of day ("Trip time: 2:35", "Duration: 2:35")
_SPAN_LABEL = re.compile(
    r"(?i)\b(?:duration|length|trip|journey|travel|elapsed|difference|offset|gap|takes?|took|lasts?|ahead|behind)\b"
)
# a closing line that is a short label and a value: "Arrival: 17:35", "**ETA:** 5:35 pm", "→ 17:35", "= 17:35"
_CLOSING_VALUE = re.compile(r"^\W*(?:[^\W\d][\w'’ ]{0,24}?\s*:|→|=>|=)\W*(?P<v>\S.{0,30}?)\W*$")


def result_times(text: str, request: str = "") -> list[int]:
    """Times the answer presents as its result: in bold, right after "effectively"/"actually", on a closing
    line of a label and the time ("14:50 + 2 h 35 = 17:25.\n\nArrival: 17:35.": the working is not the result,
    the labelled line is), or in a closing sentence that answers the request's question in its own words ("When
    does it arrive?" … "With the time zone change, you arrive at 18:25.")."""
    spans = bold_spans(text)
    spans += [
        m.group(1) for m in re.finditer(r"\b(?:effectively|actually)\b([^.;\n]{0,30})", statement(text), re.I)
    ]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # the closing line, or the closing sentence of an answer written as one paragraph ("… plan on 17:35. Arrival:
    # 17:35.")
    said = sentences(text)
    last = lines[-1].strip() if len(lines) >= 2 else said[-1] if len(said) >= 2 else ""
    if (
        (m := _CLOSING_VALUE.match(last)) is not None
        and len(times(m["v"])) == 1
        and not _SPAN_LABEL.search(last)
    ):
        spans.append(m["v"])
    if len(said) >= 2 and (asked := _question_stems(request)):
        closing = said[-1]
        if (
            len(times(closing)) == 1
            and not _IF_OPEN.match(closing)
            and asked & {w.lower()[:5] for w in re.findall(r"[^\W\d_]{5,}", closing)}
        ):
            spans.append(closing)
    return [c for sp in spans for c in times(sp)]


# a sentence that opens on a condition speaks of another case ("If you miss it, the next one arrives at 18:10")
_IF_OPEN = re.compile(r"\W*(?:if|in case|should|unless|otherwise)\b", re.I)


# a question that ends on its verb after an auxiliary and its subject: "When does it arrive?", "When will we land?"
_QUESTION_VERB = re.compile(
    r"\b(?:does|do|did|will|would|can|could|should|shall)\s+(?:[\w'’]+\s+){1,3}?([a-z]{4,})\W*\?\s*$"
)


def _question_stems(request: str) -> set[str]:
    """The first five letters of the verb the request's question ends on ({"arriv"} for "… When does it
    arrive?"); none when its question ends otherwise ("What time is it in Tokyo at the moment?")."""
    return {m.group(1)[:5] for s in sentences(request) if (m := _QUESTION_VERB.search(s))}


def check_dim(n: Any) -> str | None:
    _, u = check_unit(n)
    return u.dim if u else None


def _texts_of(v: Any, key: str = "") -> list[tuple[str, str]]:
    """Every string in a call's arguments, with its key path (``body``, ``attendees[0]``)."""
    if isinstance(v, str):
        return [(key, v)]
    if isinstance(v, dict):
        return [x for k, sub in v.items() for x in _texts_of(sub, f"{key}.{k}" if key else str(k))]
    if isinstance(v, list):
        return [x for i, sub in enumerate(v) for x in _texts_of(sub, f"{key}[{i}]")]
    return []


# qualifiers that say what a value is measured against: a value the conversation gave with one of them (+8 %
# QoQ, 10:30 tomorrow) written with another of the same group (+8 % year over year, 10:30 today) is relabelled
_QUALIFIERS: dict[str, dict[str, re.Pattern[str]]] = {
    "period": {
        "quarter": re.compile(
            r"\bq(?:o|/)q\b|\bquarter[- ](?:over|on)[- ]quarter\b|\bsequential(?:ly)?\b|"
            r"\b(?:previous|prior|last|preceding|past) quarter\b",
            re.I,
        ),
        "year": re.compile(
            r"\by(?:o|/)y\b|\byear[- ](?:over|on)[- ]year\b|\bannual(?:ly)?\b|\bvs\.? (?:last|prior) year\b|"
            r"\b(?:previous|prior|last|preceding|past) year\b|\bsame (?:quarter|period|month) (?:of )?last year\b",
            re.I,
        ),
        "month": re.compile(
            r"\bm(?:o|/)m\b|\bmonth[- ](?:over|on)[- ]month\b|\b(?:previous|prior|last|preceding|past) month\b",
            re.I,
        ),
        "week": re.compile(
            r"\bw(?:o|/)w\b|\bweek[- ](?:over|on)[- ]week\b|\b(?:previous|prior|last|preceding|past) week\b",
            re.I,
        ),
    },
    "day": {
        "today": re.compile(r"\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b", re.I),
        "tomorrow": re.compile(r"(?<!day after )\btomorrow\b", re.I),
        "day after tomorrow": re.compile(r"\bday after tomorrow\b|\bovermorrow\b", re.I),
        "yesterday": re.compile(r"\byesterday\b", re.I),
    },
}


_SENTENCE_CUT = re.compile(r"(?<=[.!?;])\s+|\n+|\\n")


_NEGATED_BEFORE = re.compile(r"\b(not|instead of|rather than|no longer)\W+$|n't\W+$", re.I)


def _qualified(text: str, lang: str | None) -> dict[tuple[str, str], set[str]]:
    """{(group, value): qualifiers} for the qualifiers in ``text`` within 40 characters of a value in their
    sentence: "+8% QoQ" → {(period, percent 8): {quarter}}; "10:30 tomorrow" → {(day, 10:30): {tomorrow}}.
    A negated qualifier ("not today") qualifies nothing."""
    out: dict[tuple[str, str], set[str]] = {}
    for sent in _SENTENCE_CUT.split(text):
        values = [
            (q.pos, q.end, f"{q.unit.dim if q.unit else ''} {abs(q.value):g}") for q in quantities(sent, lang)
        ]
        values += [(a, b, f"time {v}") for (a, b), v in zip(time_spans(sent), times(sent), strict=False)]
        if not values:
            continue
        for group, labels in _QUALIFIERS.items():
            for label, rx in labels.items():
                for m in rx.finditer(sent):
                    if _NEGATED_BEFORE.search(sent[max(0, m.start() - 14) : m.start()]):
                        continue
                    for a, b, key in values:
                        if max(a - m.end(), m.start() - b, 0) <= 40:
                            out.setdefault((group, key), set()).add(label)
    return out


def relabelled(text: str, given: list[str], lang: str | None) -> list[tuple[str, str]]:
    """Values written with other qualifiers than those the conversation gave them with: the file's "+8%
    QoQ" sent as "+8% year over year", the request's "10:30 tomorrow" sent as "10:30 today". A value the
    conversation gave with no qualifier, or written with one it was given with, is not relabelled."""
    known: dict[tuple[str, str], set[str]] = {}
    for g in given:
        for k, labels in _qualified(g, lang).items():
            known.setdefault(k, set()).update(labels)
    out = []
    for (group, key), labels in sorted(_qualified(text, lang).items()):
        had = known.get((group, key))
        if had and not labels & had:
            out.append((f"{key.split()[-1]} {'/'.join(sorted(labels))}", "/".join(sorted(had))))
    return out


def slipped_dates(text: str, tool_texts: list[str], given: list[str]) -> list[tuple[str, str]]:
    """Dates in ``text`` that nothing gave and that differ from a date a tool gave in exactly one of day,
    month or year (28 March for the ticket's 28 February; 2025-02-18 for 2025-02-28): a copying slip. A date
    a day from any given one (tomorrow, the day before) is a computed date, not a slip."""
    years = [d.date.year for g in given for d in dates(g)]
    year = years[0] if years else None
    seen = {d.date for g in given for d in dates(g, year)}
    facts = {d.date: d.text for t in tool_texts for d in dates(t, year)}
    out = []
    for d in dates(text, year):
        if d.date in seen or any(abs((d.date - s).days) <= 1 for s in seen):
            continue
        for f, raw in facts.items():
            same = (d.date.year == f.year) + (d.date.month == f.month) + (d.date.day == f.day)
            if same == 2:
                out.append((d.text, raw))
                break
    return out


_QUOTED = re.compile(
    r'"([^"\n]{6,160})"|“([^”\n]{6,160})”|«\s*([^»\n]{6,160}?)\s*»|(?<![\w\'])\'([^\'\n]{6,160})\'(?![\w\'])'
)


def _words(s: str) -> list[str]:
    return re.findall(r"[^\W_]+", s.lower())


def _given_titles(tool_texts: list[str], lex: Lexicon) -> list[str]:
    """The names of three words or more in the tools' JSON results, under a key the pack's ``naming_keys``
    name (a ticket's title, a product's name): the strings an answer or a message quotes as they are."""
    naming = re.compile(rf"(?i)(^|_)({alternation(lex.naming_keys)})(_|$)")
    return [
        v for t in tool_texts for key, v in _string_leaves(t) if naming.search(key) and len(_words(v)) >= 3
    ]


_FILLER = frozenset("a an the of on in for to and at by with".split())


def misquoted(text: str, tool_texts: list[str], lex: Lexicon) -> list[tuple[str, str]]:
    """Quoted spans that give a tool's title or name with words changed: 'Rotate TLS certificates on the
    database cluster' for the ticket's "Rotate TLS certificates on edge proxies". A quote is a claim to copy;
    one that starts like a given string and shares most of its words but swaps others is a wrong copy. A
    shortened quote (every word in order within the given one) is not."""
    strings = [(g, _words(g)) for g in _given_titles(tool_texts, lex)]
    out = []
    for m in _QUOTED.finditer(text):
        q = next(x for x in m.groups() if x is not None)
        qw = _words(q)
        if len(qw) < 3:
            continue
        joined = " ".join(qw)
        if any(joined in " ".join(gw) or " ".join(gw) in joined for _, gw in strings):
            continue
        for g, gw in strings:
            lead = 0
            while lead < min(len(qw), len(gw)) and qw[lead] == gw[lead]:
                lead += 1
            shared = len(set(qw) & set(gw)) / len(set(gw))
            # words added or dropped that change nothing: articles and short forms ("certs" for certificates)
            missing = set(gw) - set(qw)
            added = {w for w in set(qw) - set(gw) if w not in _FILLER}
            if all(any(a[:4] == m[:4] for m in missing) for a in added):
                continue
            if lead >= 2 and shared >= 0.5:
                out.append((q, g))
                break
    return out


# what puts a value as the one replaced, right before it: "the old 10:30 slot", "previously 10:30", "11:00 rather
# than 10:30", "one hour later than 10:30", "pushed from 10:30 to 11:30", "Old slot: 10:30", "um 11:15 statt um 10:30"
_OLD_BEFORE = re.compile(
    r"(?:\b(?:old|previous(?:ly)?|prior|former(?:ly)?|original(?:ly)?|earlier|usual|existing|"
    r"instead of|rather than|in place of|replac(?:es|ed|ing)|than|used to be|was|were|"
    r"statt|anstatt|anstelle von|au lieu de|en lugar de|en vez de|invece di|alte[nrs]?|ancien(?:ne)?|anterior)"
    r"|\b(?:mov|shift|push|pull|chang|brought|bring|reschedul|switch|bump)\w*\s+(?:[\w']+\s+){0,2}?from)"
    r"(?:[\s:*()]+[^\W\d_][\w']*){0,3}?[\s:*()]*$"  # up to three words between, no value ("from 10:30 to")
    # a bare negation only right before the value: "at 10:30, not 11:30", "no longer at 9:00"
    r"|\b(?:not|no longer)(?:\s+(?:at|um|à))?\s*$",
    re.I,
)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _old_and_new(text: str, year: int | None = None) -> dict[str, tuple[set[str], set[str]]]:
    """{kind: (values put as the replaced ones, values stated plainly)} for the clock times ("HH:MM") and dates
    (ISO) of ``text``: "moves to 11:30 (the old 10:30 slot)" → {"time": ({"10:30"}, {"11:30"}), "date": …}."""
    t = strip_markdown(text)
    found = {
        "time": [(a, _clock(v)) for (a, _), v in zip(time_spans(t), times(t), strict=False)],
        "date": [(d.pos, d.date.isoformat()) for d in dates(t, year)],
    }
    out: dict[str, tuple[set[str], set[str]]] = {}
    for kind, values in found.items():
        old: set[str] = set()
        new: set[str] = set()
        for at, v in values:
            (old if _OLD_BEFORE.search(t[max(0, at - 60) : at]) else new).add(v)
        out[kind] = (old, new)
    return out


def demoted(text: str, given: list[str]) -> list[tuple[str, str]]:
    """A time or date the conversation gave put as the old one, and one nobody gave stated as the new one, in a
    write: "tomorrow's standup moves to 11:30 (later than the old 10:30 slot)" where the user asked for 10:30.
    A write that states a given value plainly ("moves to 7:30, was 8:00", both given; "at 10:30, not 11:30") or
    puts no given value as the old one is not read here. → [(new value, the given value put as old)]"""
    years = [d.date.year for g in given for d in dates(g)]
    year = years[0] if years else None
    seen = {
        "time": {_clock(v) for g in given for v in times(g)},
        "date": {d.date.isoformat() for g in given for d in dates(g, year)},
    }
    out = []
    for kind, (old, new) in _old_and_new(text, year).items():
        was = (old & seen[kind]) - new
        if was and new and not new & seen[kind]:
            out += [(v, min(was)) for v in sorted(new)]
    return out


# a reference put as a baseline or a replaced value, not as the thing's own time: "up 8 % on Q1", "vs last
# quarter", "than yesterday", "instead of tomorrow", "not Friday"; "on" and "over" set a baseline only for a period
_BASELINE_BEFORE = re.compile(
    r"(?:\b(?:vs|versus|compared\s+(?:with|to)|than|against|relative\s+to|since|instead\s+of|rather\s+than|not|"
    r"no\s+longer|par\s+rapport\s+(?:à|au)|gegenüber|statt|frente\s+a|respecto\s+a|rispetto\s+a)|n't)"
    r"\W+(?:(?:the|la|le|el|il|dem|der)\s+)?$",
    re.I,
)
_PERIOD_BASELINE_BEFORE = re.compile(r"\b(?:on|over|from|sur)\s+(?:the\s+)?$", re.I)

# words that say nothing about what a reference is the time of: function words, greetings and the words of sending
_UNBINDING = frozenset(
    """the and for with that this these those from into onto about are was were will would could should have has had
    not but our your their his her its you they them she him who what when which where why how all any just also
    please thanks thank cheers regards best hello dear quick note heads email mail message send sent sending say
    saying said tell told let know reminder remind update due until till then now next last coming week weeks day
    days time date current today tomorrow yesterday night morning evening afternoon quarter half year month fiscal
    les des une pour avec que qui est sont dans sur par pas demain aujourd'hui und der die das den dem ist sind
    mit für von nicht heute morgen los las una con por para del que hoy mañana una per con che non oggi domani""".split()
)
_BIND_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def _stem(word: str) -> str:
    w = re.sub(r"['’]s$", "", word.lower()).strip("'’-")
    return w[:-1] if len(w) > 3 and w.endswith("s") else w


def _binding(sent: str, ref: TimeRef, names: set[str]) -> set[str]:
    """What a time reference is the time of, read from its sentence: the six words either side of it that are not
    function words, names from the given addresses or other time words, and the clock times within 40 characters.
    "the standup moves to 10:30 starting next Monday" → {standup, move, starting, time 630}."""

    def kept(span: str) -> list[str]:
        stems = (_stem(w) for w in _BIND_WORD.findall(span))
        return [w for w in stems if len(w) > 2 and w not in _UNBINDING and w not in names]

    words = set(kept(sent[: ref.pos])[-6:] + kept(sent[ref.end :])[:6])
    for (a, b), v in zip(time_spans(sent), times(sent), strict=False):
        if max(a - ref.end, ref.pos - b, 0) <= 40:
            words.add(f"time {v}")
    return words


def _time_refs(text: str, today: _dt.date | None, names: set[str]) -> list[tuple[TimeRef, set[str]]]:
    """(reference, what it is the time of) for every day and period label of ``text`` that is not a baseline."""
    out = []
    for sent in _SENTENCE_CUT.split(strip_markdown(text)):
        for ref in day_references(sent, today) + period_labels(sent):
            before = sent[max(0, ref.pos - 30) : ref.pos]
            if _BASELINE_BEFORE.search(before) or (
                ref.group != "day" and _PERIOD_BASELINE_BEFORE.search(before)
            ):
                continue
            out.append((ref, _binding(sent, ref, names)))
    return out


def _family(ref: TimeRef) -> str:
    """Which references are compared: days with days, fiscal years with fiscal years, and the parts of a year
    (quarters, halves, months, numbered weeks) with each other: "the H2 churn report" is not the Q3 one."""
    return ref.group if ref.group in ("day", "fiscal year") else "part of year"


def _same_time(a: TimeRef, b: TimeRef) -> bool:
    """Whether two references of one family can be the same time: periods by kind and label; days by their
    offsets from today where both are known, else by weekday where both are known, else they may be."""
    if a.group != "day":
        return (a.group, a.label) == (b.group, b.label)
    if a.days is not None and b.days is not None and not a.days & b.days:
        return False
    return a.weekday is None or b.weekday is None or a.weekday == b.weekday


def retimed(text: str, given: list[str]) -> list[tuple[str, str]]:
    """Time references in a write that disagree with the conversation's for the same thing: the request's "the
    standup moves to 10:30 tomorrow" sent as "… 10:30 starting next Monday", the history's "Q3 churn report" sent
    as "the Q4 churn numbers", "Appeler Lucie lundi" for the 3 April the user asked (a Thursday). Two references
    are of the same thing when they share a word of what they name or a clock time beside them; a reference
    nothing in the conversation speaks of ("see you tomorrow", "the Q4 planning deck"), one that agrees with any
    the conversation gave, and a baseline ("+8 % vs Q1") are not read. → [(said, what the conversation gave)]"""
    today = today_of(given)
    names = {
        _stem(w)
        for g in given
        for addr in re.findall(r"[\w.+-]+@[\w.-]+", g)
        for w in _BIND_WORD.findall(addr)
    }
    known = [x for g in given for x in _time_refs(g, today, names)]
    out = []
    for ref, bound in _time_refs(text, today, names):
        had = [k for k, kb in known if _family(k) == _family(ref) and kb & bound]
        if had and not any(_same_time(ref, k) for k in had):
            out.append((ref.text, had[0].text))
    return out


# between a label and the value after it: a colon, a copula, "at", "of", a hedge, a sign ("Churn: 2.1 %", "churn
# came in at 8 %", "high of about 17 °C", "QoQ: +8 %"); a label after its value stands right beside it ("8% QoQ",
# "2.1 % churn") and is no label of a value after it ("8% growth 2.1%" pairs nothing)
_LABEL_LINK = (
    r"(?:\s*[:=]|\s+(?:is|was|were|are|of|at|came in at|stood at|stands at|around|about|roughly|approximately|"
    r"nearly|just))*"
)
_LABEL_BEFORE = re.compile(rf"(?<![\w-])([^\W\d_]{{3,}}){_LABEL_LINK}\s*[(+~≈]*\s*$", re.I)
_LABEL_AFTER = re.compile(r"^\)?[ \t]*([^\W\d_]{3,})(?![\w-])(?![ \t]*[:=]?[ \t]*[-+(€$£¥]?[ \t]*\d)")
_NOT_LABELS = {
    "and",
    "the",
    "with",
    "for",
    "from",
    "than",
    "only",
    "just",
    "about",
    "around",
    "roughly",
    "nearly",
    "over",
    "under",
    "new",
    "was",
    "were",
    "are",
    "has",
    "had",
    "have",
    "now",
    "but",
    "while",
    "then",
    "each",
    "per",
    "total",
}


def _label_word(word: str) -> str | None:
    """A label as compared: lower case, a plural's "s" dropped ("Highs" → "high"); None for a linking word or a
    unit ("EUR", "pct")."""
    w = word.lower()
    if w in _NOT_LABELS or unit_of(w) is not None:
        return None
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def labelled_values(text: str, lang: str | None) -> list[tuple[str, Quantity]]:
    """(label, value) for each value of ``text`` written beside a label: the word just before it, past a colon,
    a copula or a hedge ("Churn: 2.1%" → churn; "high of 17 °C" → high), else the word right after it ("8% QoQ"
    → qoq, "2.1 % churn" → churn). Markdown is read through ("**Churn:** 8%")."""
    plain = strip_markdown(text)
    out = []
    for q in quantities(plain, lang):
        label = None
        if (m := _LABEL_BEFORE.search(plain[max(0, q.pos - 40) : q.pos])) is not None:
            label = _label_word(m.group(1))
        if label is None and (m := _LABEL_AFTER.match(plain[q.end : q.end + 40])) is not None:
            label = _label_word(m.group(1))
        if label is not None:
            out.append((label, q))
    return out


# label -> {(kind, value)}, the kind a unit's dimension or None
_Labels = dict[str, set[tuple[str | None, float]]]


def tool_labels(tool_texts: list[str], lang: str | None) -> list[_Labels]:
    """The labelled values the tools gave, one group per record: each JSON object's numbers under their keys'
    words, the kind read from the key or a ``currency``/``unit`` beside it ({"high_c": 17, "low_c": 9} → high
    and low, temperatures; "balance" beside "currency": "EUR" → euros), and each plain-text result or prose string
    of five words or more read by :func:`labelled_values` ("Churn: 2.1%. … (+8% QoQ)" → churn and qoq, percentages).
    A name ("Hub Pro 7-in-1") is no prose: its number labels nothing."""
    groups: list[_Labels] = []

    def text(s: str) -> None:
        group: _Labels = {}
        for label, q in labelled_values(s, lang):
            group.setdefault(label, set()).add((q.unit.dim if q.unit else None, round(abs(q.value), 6)))
        if group:
            groups.append(group)

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            beside = [u for k in ("currency", "unit") if isinstance(v.get(k), str) and (u := unit_of(v[k]))]
            group: _Labels = {}
            for k, x in v.items():
                if isinstance(x, int | float) and not isinstance(x, bool):
                    parts = [p for p in re.split(r"[_\W]+", str(k).lower()) if p]
                    units = [u for p in parts if (u := unit_of(p)) is not None] + beside
                    kind = units[0].dim if units else None
                    for p in parts:
                        if len(p) >= 3 and (label := _label_word(p)) is not None:
                            group.setdefault(label, set()).add((kind, round(abs(float(x)), 6)))
                else:
                    walk(x)
            if group:
                groups.append(group)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and len(v.split()) >= 5:
            text(v)

    for t in tool_texts:
        try:
            walk(json.loads(t))
        except ValueError:
            text(t)
    return groups


def swapped_labels(text: str, groups: list[_Labels], lang: str | None) -> list[tuple[str, str, str]]:
    """(value, its label, the label it belongs to) for each value written beside a label that the tools never gave
    it under, where a record of the tools gives that label a value of the same kind and another label the
    answer's value: "churn 8%" where the report said "Churn: 2.1%" and "+8% QoQ"; "high 9 °C, low 17 °C" for a
    day's high of 17 and low of 9. Kinds must be the same (a bare number only beside a bare number: "250 USD" is
    no conversion's bare "amount"). The right pairing in any order ("2.1 % churn", "QoQ: +8 %") and a label the
    tools did not use read nothing."""
    out = []
    for label, q in labelled_values(text, lang):
        kind, v = (q.unit.dim if q.unit else None), round(abs(q.value), 6)
        if any((kind, v) in g.get(label, ()) for g in groups):
            continue
        for g in groups:
            if not any(k == kind for k, _ in g.get(label, ())):
                continue
            other = sorted(o for o, held in g.items() if o != label and (kind, v) in held)
            if other:
                out.append((q.text.strip(), label, other[0]))
                break
    return out


def write_facts(
    world: list[W.Write],
    given: list[str],
    lang: str | None,
    tool_texts: list[str] | None = None,
    lex: Lexicon | None = None,
) -> list[str]:
    """Facts in what the model wrote to the world, read as the final answer is read: an id nobody gave, a
    value with a given value's digits in another order, a percentage or an amount that nothing in the
    conversation gave and no one step of arithmetic makes (a sent message saying +9 % where the file said
    +8 %), a given value with another qualifier ("+8 % YoY" for the file's QoQ, "10:30 today" for the
    request's tomorrow), a day or period another than the conversation's for the same thing ("starting next
    Monday" for tomorrow, "Q4 churn numbers" for the Q3 report), a date one field off a tool's date, a tool's
    title quoted with words changed, a value beside a label the tools gave another value of its kind ("churn 8%"
    for the report's "Churn: 2.1%", its 8 % being the QoQ growth: :func:`swapped_labels`)."""
    tool_texts = tool_texts or []
    seen = numbers_in(given) | numbers_in(given, grouped=True)
    facts = [q for g in given for q in quantities(g)]
    seen |= {round(abs(q.value), 6) for q in facts}  # "EUR 4.2M" is 4,200,000
    # only a kind of value the conversation gave is checked: marketing copy may say "100 %" of its own
    kinds = {q.unit.dim for q in facts if q.unit is not None}
    labels = tool_labels(tool_texts, lang)
    out = []
    for w in world:
        for key, text in _texts_of(w.args):
            where = f"{w.tool}.{key}"
            for tok, known in unknown_ids(text, given):
                out.append(f"{where} gives {tok!r}, which no tool or message gave (they gave {known!r})")
            for q, known in transposed(text, given, [], lang):
                out.append(f"{where} states {q!r}, the digits of {known!r} from the tools in another order")
            stated = quantities(text, lang)
            own = {round(abs(x.value), 6) for x in stated}
            for x in stated:
                v = round(abs(x.value), 6)
                if x.unit is None or x.unit.dim not in kinds:
                    continue
                if not (x.unit.dim == "percent" or x.unit.dim.startswith("money")):
                    continue
                if v not in seen and not derivable(v, (seen | own) - {v}):
                    out.append(f"{where} states {x.text!r}, which nothing in the conversation gave")
            for said, had in relabelled(text, given, lang):
                out.append(f"{where} states {said!r}, which the conversation gave as {had!r}")
            for day, raw in slipped_dates(text, tool_texts, given):
                out.append(f"{where} gives the date {day!r}, one field off the tools' {raw!r}")
            for said, had in retimed(text, given):
                out.append(f"{where} says {said!r} where the conversation gave {had!r} for the same thing")
            for now, was in demoted(text, given):
                out.append(
                    f"{where} states {now!r} as the new value and {was!r}, which the conversation gave, as the old one"
                )
            for said, label, other in swapped_labels(text, labels, lang):
                out.append(f"{where} gives {said!r} as the {label}, but the tools gave it as the {other}")
            for quote, real in misquoted(text, tool_texts, lex or Lexicon()):
                out.append(f"{where} quotes {quote!r}, but the tools gave {real!r}")
    return list(dict.fromkeys(out))


def competes(q: Quantity, n: Any, body: str) -> bool:
    """Is ``q`` a value of the same kind as the optional fact ``n`` (so it must be that fact's value)? A bare
    "nine degrees" or "27°" competes with a temperature, read in either scale."""
    _, want = check_unit(n)
    if want is None:
        return False
    if q.unit is not None:
        return q.unit.dim == want.dim
    if want.dim != "temperature" or not (
        q.text.endswith(("°", "º")) or re.match(r"\s*(degrees?|deg|°|º)", body[q.end :], re.I)
    ):
        return False
    c, f = unit_of("celsius"), unit_of("fahrenheit")
    assert c is not None and f is not None
    scales = [convert(n.value, want, c), convert(n.value, want, f)]
    return not any(v is not None and abs(q.value - v) <= 0.5 + 1e-9 for v in scales)


# the parts of a structured answer that each state a result: paragraphs, headed sections, and a summary or details
# lead-in ("In short:", "TL;DR:", "Details:", "Bottom line:") that opens a line or follows a sentence
_PART_BREAK = re.compile(
    r"\n[ \t]*\n|\n(?=[ \t]*#)|(?:(?<=[.!?])[ \t]+|\n)(?=[*_#\s]{0,4}(?:summary|in short|in brief|tl;?\s?dr|"
    r"bottom line|short answer|details?|breakdown|working|how|result|answer|receipt|zusammenfassung|ergebnis|"
    r"résumé|en bref|resumen|en resumen)\b[^.\n]{0,20}?[:—–])",
    re.I,
)


def _decimals(q: Quantity) -> int:
    """The decimal places a written number shows ("€1,250.00" -> 2, "1.344,12" -> 2, "$15.6k" -> 1, "230" -> 0);
    three digits after the last separator of a whole number are thousands ("1,250")."""
    num = re.search(r"\d(?:[\d,.\u202f\u00a0’']*\d)?", q.text)
    m = re.search(r"[.,](\d+)$", num.group(0)) if num is not None else None
    if m is None or (len(m.group(1)) == 3 and q.value == int(q.value)):
        return 0
    return len(m.group(1))


# how a number finding says the answer also commits to a second value (the reading read the expected one)
SECOND_VALUE = "another part of the answer states"


# a concluding part of an answer: one a summary, result or conclusion lead opens (`CONCLUDING_WORDS`)
_CONCLUDING_PART = re.compile(
    r"[\s*_#>]{0,8}(?:" + CONCLUDING_WORDS + r"|result|answer|final answer)\b(?!\s+far\b)", re.I
)
# a concluding sentence inside a paragraph starts a part of its own: "… at 0.9184. In short, you'd get …"
_CONCLUDING_SENTENCE = re.compile(
    r"(?<=[.!?])[ \t]+(?=[*_]{0,2}(?:" + CONCLUDING_WORDS + r")\b(?!\s+far\b))", re.I
)


def _answer_parts(text: str) -> list[str]:
    """The parts of an answer that each state a result: paragraphs, headed sections, summary or details lead-ins,
    and the concluding sentences of a paragraph ("€229.60 at 0.9184. Long story short: …" is two parts)."""
    out = []
    for p in _PART_BREAK.split(text):
        if p and p.strip():
            out += [s for s in _CONCLUDING_SENTENCE.split(p) if s.strip()]
    return out


def _concluding_rival(q: Quantity, value: float, want: Unit | None, places: int) -> bool:
    """Is ``q``, stated by a concluding part ("Summary: …", "In short, …"), another result than ``value`` rather
    than its rounding? A conclusion commits however far off it is and whatever hedge it carries: "about
    €212.50" or "roughly $15,480.00" beside 229.60 or 15,613.66 is a second result; a value to a coarser place
    within half a unit of it ("about €230", "$15.6k", "gut 1.344 Dollar") is a rounding. A whole number needs
    its unit written ("by about 16 °C" beside 18 °C), bare whole numbers being as often counts."""
    if places == 0 and q.unit is None:
        return False
    return not rounding_of(q, Quantity(value, q.unit or want, "", 0, 0))


# a bound denied ("it isn't under 42 km"): no claim of the bound's side
_BOUND_DENIED = re.compile(
    r"(?:\bnot|n't)\s+(?:(?:just|even|really)\s+)?(?:under|below|over|above)\s+$", re.I
)


def bound_contradicted(text: str, value: float, want: Unit | None, lang: str | None) -> Quantity | None:
    """A bound the answer puts on its own result that the result breaks: "42.1648 km, i.e. just under 42 km",
    "42.16 km, so slightly less than 42 kilometres" (42.16 is over 42). Only a bound at a rounding of the value
    (42 for 42.16) speaks of the result; one far from it ("well under the 50 km of an ultra") is about something
    else, and a bound the value meets ("just over 42 km") agrees."""
    if want is None:
        return None
    plain = strip_markdown(text)
    for q in quantities(text, lang):
        if q.low is None or q.high is None or q.unit is None or q.unit.name != want.name:
            continue
        if abs(q.value - value) > 0.5 * 10 ** -_decimals(q) + 1e-9:
            continue
        if _BOUND_DENIED.search(plain, max(0, q.pos - 30), q.pos):
            continue
        if (math.isinf(q.low) and value > q.value) or (math.isinf(q.high) and value < q.value):
            return q
    return None


def contradicting(
    text: str, value: float, want: Unit | None, tol: float, given: list[str], lang: str | None
) -> Quantity | None:
    """A second value the answer commits to for the asked quantity beside the right one: each part of the answer
    (a paragraph, a headed section, a summary or details lead-in, a concluding sentence) states its own result,
    and one states the value while another states a different one written to the same precision, near it
    ("€1,250.00 has been moved" above "Transfer tr_5531: €1,250.75"; "You pay €13.70" above working that ends
    "total 13.77"). A part that concludes ("Summary: …", "## Bottom line", "In short, …", "So …") commits to
    what it states however far off and however hedged ("Result: €229.60 … Summary: … about €212.50 today"),
    unless it is a rounding (`_concluding_rival`). A rounding ("about $15.6k", "≈ €230"), a value then its
    correction (dropped before this reading), a value in another unit, a value the conversation gave
    (yesterday's close, a unit price) and one a step of arithmetic makes of the figures (a subtotal, a
    discount) are no second value."""
    exact = f"{abs(value):.6f}".rstrip("0").split(".")
    places = len(exact[1]) if len(exact) > 1 else 0
    parts = _answer_parts(text)
    if len(parts) < 2:
        return None
    said = [stated_result(p, want, lang=lang) for p in parts]
    if not any(
        q is not None and matches(q, value, want, tol, strict_unit=True, delta=False) for q, _ in said
    ):
        return None
    seen = numbers_in(given) | numbers_in(given, grouped=True)
    figures = {round(abs(q.value), 6) for q in quantities(text, lang)}
    for i, ((q, _clause), part) in enumerate(zip(said, parts, strict=True)):
        if q is None or (q.unit is not None and (want is None or q.unit.name != want.name)):
            continue
        v = round(abs(q.value), 6)
        if abs(q.value - value) <= tol or v in seen:
            continue
        if i > 0 and _CONCLUDING_PART.match(part):
            if not _concluding_rival(q, value, want, places):
                continue
        else:
            if places == 0:
                continue  # a whole number's rivals are as often counts or other readings as a slip
            if abs(q.value - value) > 0.05 * abs(value):
                continue
            if _decimals(q) < places:
                continue  # "€1,250" beside €1,250.75 may be a rounding; "€1,250.00" is not
            plain = strip_markdown(part)
            at = plain.find(q.text)
            if at >= 0 and NEAR_ONLY.search(plain, 0, at):
                continue
        if derivable(v, (seen | figures) - {v}):
            continue
        return q
    return None

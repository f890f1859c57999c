"""Conversions written beside a value: "21 °C (about 70 °F)", "26.2 miles, i.e. ~42 km", "15 °C ≈ 59 °F",
"27 °C / 81 °F", "€1,840.25, or about $2,003". The second value must be a right conversion of the first
(``wrong_conversions``), whichever value of the answer it converts.

- Temperatures, lengths, masses, volumes and speeds convert by the unit table (graders/numbers.py); a
  temperature difference ("warmer by 18 °C", "a gap of 18 °C", "18 °C (…) warmer") by the factor only
  (18 °C apart is 32.4 °F apart), a temperature with its offset; with no word either way, either is right where
  the sentence compares.
- Money converts only at a rate the conversation gave ("rate": 0.9184, "Kurs 1,0888"), in either direction, and
  only between currencies the conversation named: no rate is invented.
- Honest rounding is right: the conversion written to its own last decimal, and the value it converts taken
  as written to its last decimal; a hedged conversion ("about", "~", "≈", "roughly") may be rounded to its last
  significant digit ("about 60 °F") and a little further (1 °C's worth of a temperature, 3 % of others).
- A conversion written with its working, a formula or a chain of steps ending in the converted value
  ("21 × 9/5 + 32 = 69.8 °F", "24 × 1.8 = 43.2 + 32 = 75.2 °F", "(75 − 32) × 5/9 ≈ 23.9 °C"), is right only if
  every step is (each is what the one before works out to) and its end is a right conversion of the value the
  working starts from: a named difference by the factor only ("Gap: 18 °C … 18 × 9/5 + 32 = 64.4 °F" is wrong)."""

from __future__ import annotations

import ast
import re

from bench_tui.graders.numbers import UNITS, Quantity, Unit, convert, parse_number, quantities
from bench_tui.graders.text import strip_markdown

_CONVERTS = ("temperature", "length", "mass", "volume", "speed")

_HEDGE = (
    r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|circa|ca\.|some|close\s+to|just\s+(?:over|under)|"
    r"rund|etwa|ungefähr|environ|aproximadamente|unos|cerca\s+de|ongeveer|[≈~∼≃])"
)
_LINK_WORD = r"(?:i\.?\s?e\.?,?|that\s+is,?|that['’]s|which\s+is|or|=|≈|~|∼|≃)"
# a word that joins another item's value rather than a conversion ("Oslo is 6 °C and Madrid (75 °F)")
_OTHER_ITEM = r"(?:and|but|while|whereas|versus|vs|against|than|to|from|with|y|und|et|e|en)\b"
# what may stand between a value and its conversion: a few words of the same clause ("21 °C in Lisbon (…)"), or
# of the same sentence before a link word ("13.1 miles, the half, i.e. about 21 km"), then a bracket, a slash or
# a link word, then a hedge
_BETWEEN = re.compile(
    rf"[ \t]*(?P<gap>(?:,?[ \t]*(?!{_OTHER_ITEM})[^\W\d_][\w'’-]*[ \t]*){{0,6}}?)"
    rf"(?:(?P<open>\()[ \t]*(?:{_LINK_WORD}[ \t]*)?|(?P<slash>/)|(?P<comma>,)?[ \t]*(?P<link>{_LINK_WORD}))"
    rf"[ \t]*(?P<hedge>{_HEDGE}\.?[ \t]*)?$",
    re.I,
)
# a temperature named as a difference just before it ("warmer by", "a gap of", "Difference:") or just after
# it or its bracket ("18 °C warmer", "18 °C (32.4 °F) apart")
_DIFF_WORD = (
    r"(?:difference|gap|spread|swing|delta|change|rise|drop|increase|decrease|contrast|Unterschied|différence|"
    r"diferencia|differenza|diferença|verschil)"
)
_DIFF_BEFORE = re.compile(
    rf"(?:\bby|{_DIFF_WORD}(?:\s+(?:of|is|was|at))?\s*:?|Δ)\s*(?:{_HEDGE}\s*)?$",
    re.I,
)
_DIFF_AFTER = re.compile(
    r"^(?:\s*\([^()\n]{0,40}\))?\s*(?:(?:more|less)\b|(?:warmer|colder|cooler|hotter|higher|lower|apart|"
    r"difference|above|below|up|down)\b)",
    re.I,
)
_COMPARES = re.compile(
    rf"\b(?:warmer|colder|cooler|hotter|higher|lower|than|apart|{_DIFF_WORD})\b",
    re.I,
)
# a rate the conversation gave: `"rate": 0.9184`, "exchange rate of 1.0888", "Kurs 1,0888", "taux de 0,92"
_RATE = re.compile(
    r"(?<![\w])(?:(?:exchange|fx|conversion)[ _-]?)?(?:rate|kurs|wechselkurs|taux|tipo|cambio|tasso|taxa|koers)"
    r"['\"]?\s*(?:[:=]|of|is|de|von|van|di|at|@)?\s*(?:de\s+)?(?P<r>\d+(?:[.,]\d+)?)",
    re.I,
)

# the working of a conversion, a formula or a chain of steps just before the value it ends in:
# "21 × 9/5 + 32 = ", "(24 × 1.8) + 32 ≈ ", "17 °C × 9/5 + 32 = 28.6 + 32 = ", "13.1 × 1.609 = " (a unit may
# follow a number; "-" subtracts only between spaces, so "15-17 °C" stays a range)
_NUM = r"\d+(?:[.,]\d+)?"
_UNIT_TOKEN = r"[ \t]*(?:°[ \t]?[CFK]|℃|℉|km/h|mph|km|mi|miles|kg|lbs?|ft|m|L|gal|oz|g)(?![^\W\d_])"
_OP = r"(?:[ \t]*[×x*·÷/+−][ \t]*|[ \t]+[-–][ \t]+)"
_TERM = rf"[(\[]*[ \t]*{_NUM}(?:{_UNIT_TOKEN})?[ \t]*[)\]]*"
_EQUALS = r"[ \t]*[=≈~≃→][ \t]*"
_WORKING = re.compile(
    rf"(?<![\d.,])(?P<chain>{_TERM}(?:{_OP}{_TERM})+(?:{_EQUALS}{_TERM}(?:{_OP}{_TERM})*)*)"
    rf"{_EQUALS}(?P<hedge>{_HEDGE}\.?[ \t]*)?[*_`]*$",
    re.I,
)
_APPROX = ("≈", "~", "≃")
_OPS = {
    "×": "*",
    "x": "*",
    "X": "*",
    "*": "*",
    "·": "*",
    "÷": "/",
    "/": "/",
    "+": "+",
    "−": "-",
    "-": "-",
    "–": "-",
}


def _arith(node: ast.AST) -> float | None:
    """The value of a parsed sum of numbers (+, -, *, / and brackets only), None for anything else."""
    if isinstance(node, ast.Expression):
        return _arith(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _arith(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp):
        a, b = _arith(node.left), _arith(node.right)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b if b else None
    return None


def _evaluate(step: str, lang: str | None) -> float | None:
    """What one step of a working comes to: "(24 × 1.8) + 32" -> 75.2, "31 · 1,8 + 32" -> 87.8 (units dropped)."""
    out: list[str] = []
    for m in re.finditer(rf"(?P<n>{_NUM})(?:{_UNIT_TOKEN})?|[(\[]|[)\]]|{_OP}|\S", step, re.I):
        if m["n"]:
            v = parse_number(m["n"], lang)
            if v is None:
                return None
            out.append(repr(v))
        elif m[0] in "([":
            out.append("(")
        elif m[0] in ")]":
            out.append(")")
        elif m[0].strip() in _OPS:
            out.append(_OPS[m[0].strip()])
        else:
            return None
    try:
        return _arith(ast.parse(" ".join(out), mode="eval"))
    except (SyntaxError, ValueError):
        return None


def _near(v: float, written: float, step: float, approx: bool) -> bool:
    """Is ``written`` (to its last decimal ``step``) what ``v`` rounds to? ``approx`` ("≈", "about") allows its
    last significant digit and 1 % more: 69.8 is "= 69.8", "≈ 70", not "≈ 72" nor "= 75"."""
    slack = step / 2 + 0.002 * abs(v) + 1e-9
    if approx:
        slack = max(slack, _significant(written) / 2 + 1e-9) + 0.01 * abs(v)
    return abs(v - written) <= slack


def _wrong_steps(
    steps: list[str], seps: list[str], b: Quantity, lang: str | None
) -> tuple[str, str, str] | None:
    """The first step of a working that is not what the one before it works out to, as (step, next, what the
    step comes to). A running chain is right too: "21 × 9/5 = 37.8 + 32 = 69.8" (the next step starts from it)."""
    for i, (step, sep) in enumerate(zip(steps, seps, strict=True)):
        v = _evaluate(step, lang)
        if v is None:
            return None
        approx = sep in _APPROX
        if i + 1 < len(steps):
            nxt = steps[i + 1]
            first = re.match(rf"[(\[ \t]*(?P<n>{_NUM})", nxt)
            values = [_evaluate(nxt, lang)] + [parse_number(first["n"], lang) if first else None]
            written = [w for w in values if w is not None]
            text = nxt
        else:
            written, text = [b.value], b.text
        if not written:
            return None
        if not any(_near(v, w, _step(Quantity(w, None, "", 0, 0)), approx) for w in written):
            return (step.strip(), text.strip(), f"{round(v, 2):g}")
    return None


def _step(q: Quantity) -> float:
    """The place of ``q``'s last written decimal (70 -> 1, 42.2 -> 0.1, 229.60 -> 0.1)."""
    for d in range(0, 7):
        if abs(round(q.value, d) - q.value) <= 1e-9 * max(1.0, abs(q.value)):
            return 10.0**-d
    return 1e-6


def _significant(v: float) -> float:
    """The place of ``v``'s last significant digit, trailing zeros read as rounding (60 -> 10, 42 -> 1)."""
    if v == 0:
        return 1.0
    for k in range(9, -7, -1):
        n = round(v / 10.0**k)
        if n != 0 and abs(v - n * 10.0**k) <= 1e-9 * max(1.0, abs(v)):
            return 10.0**k
    return 1e-6


def _rates(texts: list[str]) -> set[float]:
    out: set[float] = set()
    for t in texts:
        for m in _RATE.finditer(t):
            r = parse_number(m["r"])
            if r is not None and r > 0 and r != 1:
                out.add(r)
    return out


def _named(cur: Unit, texts: list[str]) -> bool:
    """Does the conversation name the currency (its code, symbol or name)?"""
    for s in UNITS[cur.name][1]:
        pat = re.escape(s) if not s[0].isalpha() else rf"(?<![^\W\d_]){re.escape(s)}(?![^\W\d_])"
        if any(re.search(pat, t, re.I) for t in texts):
            return True
    return False


def _is_difference(text: str, a: Quantity, b: Quantity) -> bool | None:
    """True: ``a`` is named as a difference; False: nothing near it says so and its sentence compares nothing
    (an absolute temperature); None: its sentence compares, either reading may be meant."""
    start = max(text.rfind(c, 0, a.pos) for c in ".!?\n") + 1
    if _DIFF_BEFORE.search(text[start : a.pos]) or _DIFF_AFTER.match(text[b.end :]):
        return True
    if re.match(
        r"[ \t]*(?:warmer|colder|cooler|hotter|higher|lower|apart|more|less)\b", text[a.end : b.pos], re.I
    ):
        return True
    ends = [i for i in (text.find(c, b.end) for c in ".!?\n") if i >= 0]
    return None if _COMPARES.search(text[start : min(ends, default=len(text))]) else False


def _right(a: Quantity, b: Quantity, want: list[float], slope: float, hedged: float | None) -> bool:
    """Is ``b`` one of ``want`` (the conversions of ``a``; ``slope`` how much ``b`` moves per unit of ``a``),
    rounded honestly? ``hedged`` (None: not hedged) is the further slack a hedge allows."""
    tol = _step(b) / 2 + abs(slope) * _step(a) / 2 + 1e-9
    for c in want:
        slack = tol + 0.002 * abs(c)
        if hedged is not None:
            slack = max(slack, _significant(b.value) / 2 + 1e-9) + hedged
        if abs(b.value - c) <= slack:
            return True
    return False


def _wanted(text: str, a: Quantity, b: Quantity, ua: Unit, ub: Unit) -> tuple[list[float], float] | None:
    """What ``a`` converts to in ``b``'s unit (a named temperature difference by the factor only, an undecided one
    either way), and the factor between the units; None where the units do not convert."""
    absolute = convert(a.value, ua, ub)
    if absolute is None:
        return None
    slope = ua.factor / ub.factor
    want = [absolute]
    if ua.dim == "temperature":
        diff = _is_difference(text, a, b)
        want = [a.value * slope] if diff else [absolute] if diff is False else [absolute, a.value * slope]
    return want, slope


def _slack(ua: Unit, ub: Unit, want: list[float]) -> float:
    """How far a hedged conversion ("≈", "about") may sit from the exact one: a degree, or 3 %."""
    return 1 / ub.factor if ua.dim == "temperature" else 0.03 * abs(max(want, key=abs))


def wrong_conversions(
    text: str, given: list[str], own: list[str], lang: str | None = None
) -> list[tuple[str, str, str]]:
    """(value, its conversion as written, the right one) for each conversion written beside a value that is
    not a right conversion of it. ``given`` and ``own`` are what the conversation gave and the model's own
    call arguments: the rates money converts at and the currencies it names."""
    qs = [q for q in quantities(text, lang) if q.unit is not None and q.low is None]
    rates: set[float] | None = None
    out: list[tuple[str, str, str]] = []
    for a, b in zip(qs, qs[1:], strict=False):
        ua, ub = a.unit, b.unit
        if ua is None or ub is None or ua.name == ub.name:
            continue
        if ua.dim != ub.dim and not (ua.dim.startswith("money") and ub.dim.startswith("money")):
            continue
        m = _BETWEEN.match(text[a.end : b.pos])
        if m is None or (m["link"] and m["link"].lower() == "or" and not (m["comma"] or m["hedge"])):
            continue  # "3 miles or 10 km" offers two values; ", or 70 °F" and "or about 70 °F" convert
        if not m["link"] and ("," in m["gap"] or len(m["gap"].split()) > 4):
            continue  # a bracket or slash converts the value just before it ("6 °C in Oslo, Madrid (75 °F)")
        if m["open"] and re.match(r"\s*[-–—]\s*\d", text[b.end :]):
            continue  # a range in brackets ("(59–63 °F)") converts a range
        hedged = bool(m["hedge"])
        if ua.dim.startswith("money"):
            if rates is None:
                rates = _rates(given)
            if not rates or not (_named(ua, given + own) and _named(ub, given + own)):
                continue  # no rate in the conversation: a conversion nobody can check here
            want = sorted(
                {a.value * r for r in rates} | {a.value / r for r in rates}, key=lambda c: abs(c - b.value)
            )
            slope = want[0] / a.value if a.value else 1.0
            if not _right(a, b, want, slope, 0.03 * abs(want[0]) if hedged else None):
                out.append((a.text, b.text, f"{want[0]:.2f} at the conversation's rate"))
            continue
        if ua.dim not in _CONVERTS:
            continue
        wanted = _wanted(text, a, b, ua, ub)  # (the same dimension: money is done above)
        if wanted is None:
            continue
        want, slope = wanted
        extra = _slack(ua, ub, want) if hedged else None
        if not _right(a, b, want, slope, extra):
            out.append((a.text, b.text, " or ".join(f"{round(c, 2):g} {ub.name}" for c in want)))
    for wrong in _wrong_workings(strip_markdown(text), qs, lang):  # (the text the positions count in)
        if wrong not in out:
            out.append(wrong)
    return out


def _wrong_workings(text: str, qs: list[Quantity], lang: str | None) -> list[tuple[str, str, str]]:
    """Conversions written with their working ("In Fahrenheit: 21 × 9/5 + 32 ≈ 75 °F"): a formula or chain of
    steps just before a value, starting from a value of the answer in another unit of the value's kind (written in
    it, "17 °C × 9/5 + 32", or before it, "21 °C … 21 × 9/5 + 32"). Each step must be what the one before works
    out to, and the end a right conversion of the start (a difference by the factor only). A working that starts
    from no value of another unit ("24 − 6 = 18 °C") is arithmetic, not a conversion: not read here."""
    out: list[tuple[str, str, str]] = []
    for b in qs:
        ub = b.unit
        if ub is None or ub.dim not in _CONVERTS:
            continue
        lo = max(0, b.pos - 300)
        m = _WORKING.search(text[lo : b.pos])
        if m is None:
            continue
        start = lo + m.start("chain")
        first = re.match(rf"[(\[ \t]*(?P<n>{_NUM})(?P<u>{_UNIT_TOKEN})?", m["chain"], re.I)
        x = parse_number(first["n"], lang) if first else None
        if first is None or x is None:
            continue
        # the value converted: the first number's own quantity when it carries a unit, else the nearest before
        same = [q for q in qs if abs(q.value - x) <= 1e-9 * max(1.0, abs(x))]
        if first["u"]:
            same = [q for q in same if start <= q.pos <= start + first.end()]
        else:
            same = [
                q
                for q in same
                if q.end <= start and q.unit and q.unit.dim == ub.dim and q.unit.name != ub.name
            ]
        if not same:
            continue
        a = same[-1]
        ua = a.unit
        if ua is None or ua.dim != ub.dim or ua.name == ub.name:
            continue  # the same unit throughout: arithmetic, not a conversion
        parts = re.split(rf"({_EQUALS})", m["chain"])
        steps, seps = parts[0::2], [p.strip() for p in parts[1::2]]
        seps.append("≈" if m["hedge"] else text[lo + m.end("chain") : b.pos].strip(" \t*_`"))
        wrong = _wrong_steps(steps, seps, b, lang)
        if wrong is not None:
            out.append(wrong)
            continue
        wanted = _wanted(text, a, b, ua, ub)
        if wanted is None:
            continue
        want, slope = wanted
        hedged = seps[-1] in _APPROX
        extra = _slack(ua, ub, want) if hedged else None
        if not _right(a, b, want, slope, extra):
            out.append((a.text, b.text, " or ".join(f"{round(c, 2):g} {ub.name}" for c in want)))
    return out


__all__ = ["wrong_conversions"]

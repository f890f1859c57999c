"""The number an answer states: ``stated_result`` finds the conclusion (bold, after "so"/"="/"is", the last
clause) versus the working; ``check_number`` and ``mentions_number`` compare it with an expected value and
unit (converting only where the check allows it)."""

from __future__ import annotations

import math
import re

from bench_tui.graders.dates import options_named
from bench_tui.graders.numbers import Quantity, Unit, convert, quantities, unit_of
from bench_tui.graders.text import bold_spans, clauses, sentences, statement, strip_markdown

# what a step of working ends on, the rest after a deduction: "…, leaving €13.77", "which leaves €13.77", "bringing
# it to 12", "net €13.77" ("for a final €13.77" is read by "final"). "leaving" after a comma or a dash and "net"
# only right before a figure, "leaves" only after "which"/"that"/"this"/"it": "leaving Porto at 06:10", "Leaving
# 14.50 and travelling 2 hours" and "the train leaves at 14:50" are departures
_REMAINDER = (
    r"(?:(?<=[,;—–-] )|(?<=[—–]))leaving( you( with)?)?(?=:?[ \t]*[$€£¥]?[ \t]*\d)|"
    r"(?:(?<=which )|(?<=that )|(?<=this )|(?<=it ))leaves( you)?( paying| with)?|leaves you( paying)?|"
    r"(bringing|brings|brought|takes|taking) (it|that|this|the (total|bill|sum|price|amount))( down| up)? to|"
    r"net(?=:?[ \t]*[$€£¥]?[ \t]*\d)"
)
# the same words without their context, for a marker already found ("leaving", "net")
_REMAINDER_WORDS = (
    r"leaving( you( with)?)?|leaves( you)?( paying| with)?|"
    r"(bringing|brings|brought|takes|taking) (it|that|this|the (total|bill|sum|price|amount))( down| up)? to|net"
)


_STRONG = re.compile(
    r"\b(tldr|in short|bottom line|short answer|answer|result|total|final|therefore|thus|so|overall|in total|comes? to|altogether|together|in all|"
    r"that's|that is|which is|giving|gives you|you pay|you'll pay|paying|to pay|you get|"
    rf"trading at|holds?|balance|difference|gap|by|{_REMAINDER})\b|→|⇒|=>",
    re.I,
)


_WEAK = re.compile(
    r"=|≈|:|\b(is|are|was|equals?|makes|gives|becomes|approximately|about|roughly|around|at|converts? to|"
    r"converted to|translates to|works out (to|at)|corresponds to|comes to)\b",
    re.I,
)


# a bound, not a value: "a bit less than 250", "over $200", "weniger als 250", "moins de 250"
_BOUND = re.compile(
    r"\b((a bit |slightly |just |a little |somewhat )?(less|more|fewer) than|under|below|above|over|"
    r"(weniger|mehr) als|(moins|plus) de|(menos|más|mas) de|(meno|più) di|(minder|meer) dan)\s*$",
    re.I,
)


# a figure alone in brackets: "(1.344,12 $)", "(€229.60)"
_BRACKET_FIGURE = re.compile(r"\(\s*([^()\n]{1,24}?)\s*\)")


def restated_figures(answer: str, lang: str | None = None) -> str:
    """The answer with a figure in brackets right after an amount in words unwrapped: "eintausend… Dollar und zwölf
    Cent (1.344,12 $)" restates the amount as a figure, which is read like the words (other brackets stay asides).
    A figure that carries its unit ("eighteen degrees (18 °C)") is that amount: it stands in the words' place, so
    words the reader does not parse as one number ("forty-two point one six kilometres") are not read apart."""
    out, done = [], 0
    for m in _BRACKET_FIGURE.finditer(answer):
        inner = quantities(m.group(1), lang)
        if len(inner) != 1 or re.sub(r"[\s.,;:]", "", m.group(1).replace(inner[0].text, "")):
            continue
        base = max(0, m.start() - 160)
        before = answer[base : m.start()]
        said = quantities(before, lang)
        if not said or re.search(r"\d", said[-1].text) or re.search(r"[\d()\n]", before[said[-1].end :]):
            continue  # not right after an amount in words
        if len(before) - said[-1].end > 40:
            continue
        start = said[-1].pos
        if inner[0].unit is not None:
            # the whole run of number words: "forty-two point one six", "… Dollar und zwölf Cent"
            for q in reversed(said[:-1]):
                if re.search(r"\d", q.text) or not re.fullmatch(
                    r"[\s,-]*(?:(?:point|comma|and|und|et|y|e|virgule|Komma|coma|vírgula|virgola|komma)\s*)?",
                    before[q.end : start],
                    re.I,
                ):
                    break
                start = q.pos
            start += base
            if start < done:
                continue
            out += [answer[done:start], ", ", m.group(1), ","]
        else:
            out += [answer[done : m.start()], ", ", m.group(1), ","]
        done = m.end()
    return "".join(out) + answer[done:]


def _compatible(q: Quantity, want: Unit | None, *, unitless_ok: bool) -> bool:
    if want is None:
        return True
    if q.unit is None:
        return unitless_ok
    return q.unit.dim == want.dim


# a noun a value qualifies as its measure names it the result: "an 18-degree Celsius difference", "an 18 °C gap",
# "a 2.1-percent rise", "a 5-minute delay" (the compound's unit word, if not read with the figure, is skipped)
_RESULT_NOUN_AFTER = re.compile(
    r"(?:[-‐‑][^\W\d_]+(?:[ \t]+(?:celsius|fahrenheit))?)?[ \t]*"
    r"(?:difference|gap|margin|spread|delta|lead|swing|rise|drop|fall|increase|decrease|change|jump|delay)\b",
    re.I,
)


def names_result_after(clause: str, q: Quantity) -> bool:
    """``q`` is written before a noun that names what it measures as a result ("24 °C vs 6 °C in Oslo, an
    18-degree Celsius difference": the 18), so it is the stated result whatever other values the clause gives."""
    return _RESULT_NOUN_AFTER.match(clause, q.end) is not None


# a noun of difference that introduces the value after it: "a difference of 18 °C", "a gap of 18 degrees", "the
# spread is 18 °C", "that makes a lead of 18 °C", "ein Unterschied von 18 °C", "un écart de 18 °C", "una diferencia
# de 18 °C" (a few words between, no figure, comma or sentence break)
_DIFFERENCE_NOUN = (
    r"difference|gap|margin|spread|delta|lead|swing|Unterschied|Differenz|diff[ée]rence|écart|diferencia|"
    r"differenza|verschil|diferença"
)
_DIFFERENCE_BEFORE = re.compile(rf"\b(?:{_DIFFERENCE_NOUN})\b[^\d\n,;.!?()]{{0,40}}$", re.I)
# the same noun, or "apart", right after the value: "18 °C apart", "18 °C d'écart", "18 °C Unterschied"
_DIFFERENCE_AFTER = re.compile(
    r"[ \t]*(?:apart|d['’]\s?écart|de diferencia|di differenza|Unterschied|Differenz|verschil)\b", re.I
)
# an operand, not a result: "the difference of 24 and 6", "a gap of 24 − 6"
_OPERAND = re.compile(r"[ \t]*(?:and|minus|from|less|[−–+×*/-])[ \t]*[$€£]?[ \t]*\d", re.I)


def names_difference(text: str, q: Quantity) -> bool:
    """Is ``q`` named in ``text`` as a difference, by a noun before it ("a difference of 18 °C", "ein Unterschied
    von 18 °C", "un écart de 18 °C") or after it ("an 18-degree spread", "18 °C apart")? An operand of the
    subtraction ("a difference of 24 − 6") is no such value. ``q`` may come from a copy of ``text`` stripped at its
    ends: the occurrence of its text nearest its position is read."""
    at, end = q.pos, q.end
    if q.text not in text[at:end]:
        spots = [m.start() for m in re.finditer(re.escape(q.text), text)]
        if not spots:
            return False
        at = min(spots, key=lambda s: abs(s - q.pos))
        end = at + len(q.text)
    if _OPERAND.match(text, end):
        return False
    moved = Quantity(q.value, q.unit, q.text, at, end)
    return (
        _DIFFERENCE_BEFORE.search(text, 0, at) is not None
        or _DIFFERENCE_AFTER.match(text, end) is not None
        or names_result_after(text, moved)
    )


# a clause that opens on an operation applied to what came before: "Minus 10% = €13.77", "Less the 1.53 discount
# = 13.77", "Plus shipping: …", "Then − 1.53 = 13.77"
_CARRIED_ON = re.compile(
    r"\W*(?:then\s+)?(?:minus|less|plus|subtract(?:ing)?|add(?:ing)?|take\s+off|taking\s+off|times|divided\s+by|"
    r"after\s+(?:the\s+)?\d|[−+×÷-]\s*[$€£]?\s*\d)",
    re.I,
)


def stated_result(
    answer: str, unit: Unit | None = None, *, unitless_ok: bool = True, lang: str | None = None
) -> tuple[Quantity | None, str]:
    """The number the answer gives as its result, and the clause it came from.

    Candidates are quantities of the wanted dimension (or unitless, when allowed) in the statement (asides
    removed). A bold quantity wins; then the first quantity after the last strong marker ("so", "total", "=",
    "→") in the last clause that has one; then after a weak marker ("is", ":"); then the last quantity."""
    answer = restated_figures(answer, lang)
    answer = _off_unit_fields_dropped(answer, unit)
    # a tool result quoted in code ("The tool returned `{"price": 131.42}`, …") is a citation: the answer's own
    # statement outside it is what it commits to, when it states a value of the asked kind
    cited = _QUOTED_RESULT.sub(" ", answer)
    if cited != answer and any(
        _compatible(q, unit, unitless_ok=unitless_ok) for q in quantities(cited, lang)
    ):
        answer = cited
    # a JSON object or key: value lines: the value under the key that names the asked quantity or unit
    if (keyed := keyed_result(answer, unit, unitless_ok=unitless_ok, lang=lang)) is not None:
        return keyed
    # a bold value is the result; one written with the wanted unit beats a bare bold number (a table's sum)
    for unitless in (False, True) if unit is not None and unitless_ok else (unitless_ok,):
        for span in reversed(bold_spans(answer)):
            qs = [
                q
                for q in quantities(span, lang)
                if _compatible(q, unit, unitless_ok=unitless) and _read_in_place(answer, span, q, lang)
            ]
            if qs and _in_statement(span, answer):  # a bold value inside an aside is not the result
                return qs[-1], span
    if (opening := _opening(answer, unit, unitless_ok=unitless_ok, lang=lang)) is not None:
        return opening
    if (dashed := _stated_before_dash(answer, unit, unitless_ok=unitless_ok, lang=lang)) is not None:
        return dashed
    cl = [
        (
            c,
            [
                q
                for q in quantities(c, lang)
                if _compatible(q, unit, unitless_ok=unitless_ok) and not counts_things(c, q, unit)
            ],
        )
        for c in clauses(answer)
    ]
    cl = [(c, qs) for c, qs in cl if qs]
    # "NVDA is at $131.42. Today's range: $128.10–$131.42.": the ends of a range are no single result when
    # another value is stated on its own; nor is a bound ("over $130", "a bit less than 250")
    single = [(c, [q for q in qs if q.pos not in _range_ends(c, qs) and not is_bound(q)]) for c, qs in cl]
    if any(qs for _, qs in single):
        cl = [(c, qs) for c, qs in single if qs]
    # "so €15.30 before the discount. 10% off is €1.53, leaving €13.77": a value qualified as a step on the way
    # (a subtotal, before the discount or tax) is no result while another value is stated
    final = [(c, [q for q in qs if not is_interim(c, q, qs)]) for c, qs in cl]
    if any(qs for _, qs in final):
        cl = [(c, qs) for c, qs in final if qs]
    if not cl:
        # "A-20931 was cancelled (refund: 39.90 EUR).": with nothing stated outside, a labelled datum in brackets
        return _bracket_datum(answer, unit, unitless_ok=unitless_ok, lang=lang) or (None, "")

    def after_marker(clause: str, qs: list[Quantity], marker: re.Pattern[str]) -> Quantity | None:
        for mk in reversed(list(marker.finditer(clause))):
            if marker is _WEAK and _stated_before_colon(clause, mk, qs):
                continue
            after = [q for q in qs if q.pos >= mk.end()]
            if after and expression_only(clause, mk.end(), lang):
                continue  # "so 8 + 4.": the working written out, its value not given
            if after:
                # "so 15% of 80 is 12": a copula after the marker introduces the result; a colon after the
                # marker's first value ends the statement ("wins by 18 °C: it's 24 °C there …")
                colon = _COLON_END.search(clause, after[0].end)
                stop = colon.start() if colon else len(clause)
                cop = [
                    c for c in _WEAK.finditer(clause, mk.end(), stop) if any(q.pos >= c.end() for q in after)
                ]
                if marker is _STRONG and cop and after[0].pos < cop[-1].start():
                    after = [q for q in after if q.pos >= cop[-1].end()]
                return after[0]
        return None

    # "It's 12: 10% = 8 and 5% = 4.": a statement before a colon, then working that concludes nothing
    if (head := _stated_then_working(*cl[-1], lang)) is not None:
        return head, cl[-1][0].strip()
    # "… → 15.30. Minus 10% (1.53) = €13.77.": a last clause that carries the working on from the value before it
    # (it opens on an operation) ends on the result
    last_clause, last_qs = cl[-1]
    if len(cl) > 1 and _CARRIED_ON.match(last_clause) and (eq := list(re.finditer(r"=|≈", last_clause))):
        after = [q for q in last_qs if q.pos >= eq[-1].end()]
        if len(after) == 1 and after[0] is last_qs[-1]:
            return after[0], last_clause.strip()
    # a conclusion marker anywhere (the last clause with one wins): "… = $15,613.66 total", a value the word
    # "total" follows, first, then a value after a marker ("€15.30 in total. … which leaves €13.77" states €13.77);
    # else the last clause that states a value: after its copula, else its last value; earlier clauses are working
    for clause, qs in reversed(cl):
        for tq in reversed(qs):
            if re.match(r"\s*(in total|total|altogether|all told|overall)\b", clause[tq.end :], re.I):
                return tq, clause.strip()
            if names_result_after(clause, tq):
                return tq, clause.strip()
        q = after_marker(clause, qs, _STRONG)
        if q is not None:
            return q, clause.strip()
    # working ("10% of 80 is 8", "3 × 4.20 = 12.60") relates several numbers; a conclusion states one
    stated = [(c, qs) for c, qs in cl if not _is_working(c, lang)] or cl
    clause, qs = stated[-1]
    return after_marker(clause, qs, _WEAK) or qs[-1], clause.strip()


# an explicit conclusion: a lead that opens a sentence ("Bottom line: …", "In short, …", "TL;DR …", "So …", "En
# resumen: …", "Kurz gesagt …") or a phrase that names the answer anywhere ("…, so the answer is €12,500.00")
_CONCLUSION_LEAD = re.compile(
    r"(?:^|(?<=[.!?])[ \t]+)[^\w\n]{0,3}(?:bottom line|in short|in sum|in summary|to sum up|summing up|"
    r"to summari[sz]e|tl;?\s?dr|all in all|all told|long story short|short answer|the upshot|overall|so|hence|"
    r"therefore|thus|en resumen|en resumidas cuentas|en definitiva|en pocas palabras|en conclusi[oó]n|"
    r"en bref|bref|en r[ée]sum[ée]|au final|kurz gesagt|unterm strich|fazit|zusammengefasst|in breve|"
    r"in sintesi|insomma|em resumo|resumindo|em suma|kortom|samengevat)\b"
    r"|\b(?:the|my|our)[ \t]+(?:short[ \t]+|final[ \t]+|real[ \t]+)?answer(?:[ \t]+(?:to|for)[ \t]+(?:your|the|this)"
    r"[ \t]+question)?[ \t]*(?:is\b|:)|\bfinal answer[ \t]*(?:is\b|:)|\bla respuesta es\b|\bla r[ée]ponse est\b|"
    r"\bdie antwort (?:ist|lautet)\b",
    re.I | re.M,
)


# words that turn an option down in a conclusion ("So skip Wednesday", "so avoid Monday", "rather than Friday")
_TURNED_DOWN = re.compile(
    r"\b(?:skip|avoid|not|never|rather than|instead of|except|unless|but)\b|n't\b", re.I
)


def concluded_option(text: str, options: list[str], year: int | None = None) -> tuple[str, str] | None:
    """The one option the answer's last conclusion names ("So plan the picnic for Wednesday!", "Bottom line:
    Tuesday"), with that conclusion, or None: a conclusion that names several options, or turns one down ("so
    skip Wednesday"), names none."""
    last = None
    for m, rest in _conclusions(text):
        named = options_named(rest, options, year)
        if len(named) == 1 and not _TURNED_DOWN.search(rest):
            last = (named.pop(), (m.group(0) + rest).strip())
    return last


def _conclusions(text: str) -> list[tuple[re.Match[str], str]]:
    """Each conclusion lead of ``text`` ("Bottom line:", "So", "the answer is") with the rest of its sentence."""
    out = []
    for m in _CONCLUSION_LEAD.finditer(text):
        end = re.search(r"[.!?](?!\d)|\n", text[m.end() :])
        out.append((m, text[m.end() : m.end() + end.start() if end else None]))
    return out


def concluded_at(text: str, lang: str | None = None) -> int | None:
    """Where the answer's last explicit conclusion that gives a figure starts in ``text`` ("Bottom line: expect
    about 19 °C", "…, so the answer is €12,500.00"), or None. Such a conclusion decides between the candidates
    listed before it ("- Now: 21 °C / - Forecast: 19 °C"): a listed line that names the asked item does not."""
    last = None
    for m, rest in _conclusions(text):
        if _is_working(rest, lang):
            continue  # "So the stock is up on the day: 131.42 − 128.10 = 3.32": working, no conclusion on a value
        if any(q.unit is not None or re.search(r"\d", q.text) for q in quantities(rest, lang)):
            last = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
    return last


# a value qualified as a step before the deduction: "€15.30 before the discount", "pre-tax", "vor dem Rabatt",
# "avant la remise", "antes del descuento", "prima dello sconto" (not fees or shipping: "€229.60 before bank fees"
# is the amount asked)
_DEDUCTION = (
    r"(?:the |any |a |your |our )?(?:\d+ ?% ?)?(?:discount|tax|taxes|vat|rebate|coupon|reduction|markdown|"
    r"\d+ ?% (?:off|comes off|is taken off|is deducted))"
)
_INTERIM_AFTER = re.compile(
    rf"[ \t]*,?[ \t]*(?:(?:in total|total|altogether)[ \t]+)?(?:(?:before|prior to|without|excluding)[ \t]+{_DEDUCTION}|"
    r"pre-?(?:discount|tax|vat)\b|undiscounted\b|"
    r"(?:vor|ohne) (?:dem |den |der )?(?:Rabatt|Abzug|Skonto|Steuern?|MwSt)|"
    r"(?:avant|sans) (?:la |le |l'|les )?(?:remise|réduction|taxes?|TVA)|"
    r"(?:antes del?|sin) (?:el |la |los )?(?:descuento|impuestos?|IVA)|"
    r"(?:prima dello?|senza) (?:lo |l'|le )?(?:sconto|tasse|IVA))",
    re.I,
)
# the same said before the value: "the subtotal is €15.30", "Subtotal: €15.30", "pre-discount total of €15.30",
# "before the discount it comes to €15.30", "Zwischensumme 15,30 €"
_INTERIM_BEFORE = re.compile(
    rf"(?:\b(?:sub-?total|pre-?(?:discount|tax|vat)|undiscounted|zwischensumme|sous-total|subtotale)|"
    rf"\bbefore {_DEDUCTION})[^\d,;:.!?]{{0,24}}:?[ \t]*[$€£]?[ \t]*$",
    re.I,
)


def is_interim(clause: str, q: Quantity, qs: list[Quantity]) -> bool:
    """Is ``q`` qualified in ``clause`` as a step on the way to the result rather than the result: a subtotal, a
    value before the discount or the tax ("so €15.30 before the discount", "€15.30 pre-discount", "the subtotal
    comes to €15.30")? The lead is what stands between the previous value in the same unit and ``q`` (a value of
    another kind, "before the 10% discount", does not end it); a lead that names the payment or the end ("after",
    "you pay", "net", "leaving") qualifies nothing."""
    if _INTERIM_AFTER.match(clause, q.end):
        return True
    # a value of another kind does not end the lead: "before the 10% discount it comes to €15.30"
    start = max((o.end for o in qs if o.end <= q.pos and o.unit == q.unit), default=0)
    lead = clause[start : q.pos]
    m = _INTERIM_BEFORE.search(lead)
    return m is not None and not re.search(
        rf"\b(?:after|pay|paying|final|{_REMAINDER_WORDS})\b", lead[m.start() :], re.I
    )


def is_bound(q: Quantity) -> bool:
    """Is ``q`` a bound ("over $130", "fewer than a thousand"): a range open on one side?"""
    return q.low is not None and q.high is not None and (math.isinf(q.low) or math.isinf(q.high))


def _read_in_place(answer: str, span: str, q: Quantity, lang: str | None) -> bool:
    """Is the value ``q`` of the bold ``span`` a quantity where it stands in the answer? A bold value the
    sentence names as a rate or a factor ("the USD→EUR rate is **0.9184**", "Der Kurs liegt bei **1,0888**"),
    or that is part of a time or an id there, is no result, however it is emphasised."""
    plain, bare = strip_markdown(answer), strip_markdown(span)
    read = quantities(answer, lang)
    at = plain.find(bare)
    if at < 0 or not bare:
        return True
    while at >= 0:
        if any(w.pos < at + len(bare) and at < w.end and abs(w.value - q.value) <= 1e-9 for w in read):
            return True
        at = plain.find(bare, at + 1)
    return False


_BETWEEN = re.compile(
    r"\b(?:between|zwischen|entre|tra|fra|tussen)(?:\s+(?:about|roughly|around))?\s*[$€£]?\s?$", re.I
)


# a tool result quoted in code: a span or block holding a field ("`{"price": 131.42}`", "```json … ```")
_QUOTED_RESULT = re.compile(r"```[^`]*?```|`[^`\n]*[{:=][^`\n]*`")


# a line of a field list quoting a tool result's field ("- temp_c: 21", "* **humidity_pct**: 64")
_FIELD_LINE = re.compile(
    r"^[ \t]*(?:[-*•][ \t]+)?[*_`]*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)[*_`]*[ \t]*:[^\n]*$", re.M
)


def _off_unit_fields_dropped(answer: str, unit: Unit | None) -> str:
    """An answer listing a tool result's fields states each field's value on its own line; a field whose name
    ends in another unit ("humidity_pct: 64" when a temperature is asked) gives no result of the asked kind, so
    its line is dropped. Only in a list of two fields or more."""
    if unit is None:
        return answer
    lines = list(_FIELD_LINE.finditer(answer))
    if len(lines) < 2:
        return answer
    out = answer
    for m in reversed(lines):
        named = unit_of(m.group(1).rsplit("_", 1)[-1])
        if named is not None and named.dim.split(":")[0] != unit.dim.split(":")[0]:
            out = out[: m.start()] + out[m.end() :]
    return out


# a pair of a JSON object ("amount_eur": 229.60, "local_time": "…") and a key: value line ("Amount (EUR): 229.60",
# "- delta_c: 18", "total_usd=15613.66")
_JSON_PAIR = re.compile(r'"(?P<k>[^"\n]{1,40})"[ \t]*:[ \t]*(?P<v>"[^"\n]*"|[-+]?\d[\d.,]*(?:[eE][-+]?\d+)?)')
_KV_LINE = re.compile(
    r"^[ \t]*(?:[-*•][ \t]+)?[*_`]*(?P<k>[^\W\d][\w .()/-]{0,39}?)[*_`]*[ \t]*(?::|=)[ \t]*(?P<v>[^\n]*\S)[ \t]*$",
    re.M,
)
# key words that name the result of a conversion, a sum or a comparison
_RESULT_KEY = frozenset(
    "result results total sum converted conversion difference diff delta gap margin balance price answer final net "
    "due pay payable output warmer colder hotter cooler cheaper higher lower more less by".split()
)
# key words that make a value an input or a former one ("prev_price", "original_total", "input": {…})
_CONTEXT_KEY = frozenset(
    "prev previous yesterday yesterdays old original before input from initial former sub pre".split()
)
# key words that are no unit ("check_in" is no inch)
_NOT_UNIT_KEY = frozenset("in at to as of by on is id no ok a per".split())
# a sibling key that gives the unit of an object's values ({"amount": 229.60, "currency": "EUR"})
_UNIT_FIELD = frozenset("currency ccy unit units".split())


def _key_words(key: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", key)]


def _key_unit(words: list[str]) -> Unit | None:
    """The unit a key names: "amount_eur", "temp_c", "Amount (EUR)", "distance_km" (a one-letter unit only last)."""
    for i, w in enumerate(words):
        if w in _NOT_UNIT_KEY or (len(w) == 1 and i != len(words) - 1) or w.isdigit():
            continue
        if (u := unit_of(w)) is not None:
            return u
    return None


def _json_frames(text: str) -> list[tuple[int, int, list[str]]]:
    """The objects and arrays of JSON in ``text``: (start, end, the words of the key they are the value of)."""
    out: list[tuple[int, int, list[str]]] = []
    stack: list[tuple[int, list[str]]] = []
    in_str = False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            in_str = not in_str
        elif in_str:
            continue
        elif ch in "{[":
            key = re.search(r'"([^"\n]{1,40})"[ \t]*:[ \t]*$', text[max(0, i - 60) : i])
            stack.append((i, _key_words(key.group(1)) if key else []))
        elif ch in "}]" and stack:
            start, words = stack.pop()
            out.append((start, i + 1, words))
    return out


def keyed_pairs(answer: str) -> list[tuple[list[str], int, str, int]]:
    """The keyed values of an answer laid out as a JSON object or key: value lines: (the key's words with those
    of the keys it is nested in, the object it is in (-1 for a line), the value, the value's offset)."""
    frames = _json_frames(answer)
    out: list[tuple[list[str], int, str, int]] = []
    taken: list[tuple[int, int]] = []
    for m in _JSON_PAIR.finditer(answer):
        around = [f for f in frames if f[0] < m.start() and m.end() <= f[1]]
        inner = min(range(len(around)), key=lambda j: around[j][1] - around[j][0], default=None)
        parents = [w for f in around for w in f[2]]
        v, at = m.group("v"), m.start("v")
        if v.startswith('"'):
            v, at = v[1:-1], at + 1
        out.append((_key_words(m.group("k")) + parents, -1 if inner is None else around[inner][0], v, at))
        taken.append(m.span())
    for m in _KV_LINE.finditer(answer):
        if any(a < m.end() and m.start() < b for a, b in taken) or len(_key_words(m.group("k"))) > 4:
            continue
        out.append((_key_words(m.group("k")), -1, m.group("v"), m.start("v")))
    return out


def keyed_result(
    answer: str, unit: Unit | None, *, unitless_ok: bool = True, lang: str | None = None
) -> tuple[Quantity, str] | None:
    """The value an answer laid out as a JSON object, a YAML mapping or key: value lines gives as its result: the
    one under the key that names the result ("converted", "total", "difference_c", "price") or, failing that,
    the asked unit ("amount_eur", "EUR", "km"). Keys naming another unit ("amount_usd") or an input ("rate",
    "prev_close") are context. Read only when two keys or more hold numbers and no value of the asked kind stands
    outside the keys; None when no key tells the result apart."""
    if unit is None:
        return None
    pairs = keyed_pairs(answer)
    numeric = []
    outside = list(answer)
    for words, frame, v, at in pairs:
        plain = re.sub(r"\([^()]*\)", lambda b: " " * len(b.group(0)), v)  # "21 (about 70 °F)"
        qs = quantities(plain, lang)
        if not qs:
            continue
        outside[at : at + len(v)] = " " * len(v)
        numeric.append((words, frame, v, at, qs))
    if len(numeric) < 2:
        return None
    if any(_compatible(q, unit, unitless_ok=unitless_ok) for q in quantities("".join(outside), lang)):
        return None  # a value stated outside the keys: the answer's prose is read
    frame_unit = {
        frame: u
        for words, frame, v, _ in pairs
        if frame >= 0 and set(words[:1]) & _UNIT_FIELD and (u := unit_of(v.strip().lower())) is not None
    }
    results, named = [], []
    for words, frame, v, at, qs in numeric:
        own = _key_unit(words) or frame_unit.get(frame)
        fits = [
            Quantity(q.value, q.unit or own, q.text, at + q.pos, at + q.end)
            for q in qs
            if _compatible(Quantity(q.value, q.unit or own, q.text, 0, 0), unit, unitless_ok=unitless_ok)
        ]
        if not fits or (own is not None and own.name != unit.name):
            continue  # another quantity, or the amount in another unit ("amount_usd": 250)
        entry = (fits, f"{' '.join(words)}: {v}".strip())
        if set(words) & _CONTEXT_KEY:
            continue
        if set(words) & _RESULT_KEY:
            results.append((entry, own is not None))
        elif own is not None:
            named.append(entry)
    if len(results) > 1:
        results = [r for r in results if r[1]]
    chosen = [r[0] for r in results] if results else named
    if len(chosen) != 1 or len(chosen[0][0]) != 1:
        return None
    return chosen[0][0][0], chosen[0][1]


def _range_ends(clause: str, qs: list[Quantity]) -> set[int]:
    """The positions of the values that are the ends of a rising range in ``clause``: "$128.10–$131.42",
    "13–19 °C", "between 23 and 26 °C" ("€15.30–€1.53" falls: working, not a range)."""
    out: set[int] = set()
    for a, b in zip(qs, qs[1:], strict=False):
        if a.value >= b.value:
            continue
        gap = clause[a.end : b.pos]
        dashed = (not gap.strip() and b.text[:1] in "–—") or re.fullmatch(
            r"[ \t]?[–—][ \t]?|-", gap
        ) is not None
        between = re.fullmatch(r"\s*(?:and|und|et|y|e|en)\s*", gap) is not None and _BETWEEN.search(
            clause, 0, a.pos
        )
        if dashed or between:
            out |= {a.pos, b.pos}
    return out


# a possessive or a determiner before a number word: "your two accounts", "these three items"
_OWNER = re.compile(r"\b(your|my|our|their|his|her|its|the|these|those|both|all|each|every|of)\s+$", re.I)
# words after a number word that are no nouns it counts ("twelve is", "two plus two")
_NOT_A_NOUN = re.compile(
    r"(?:is|was|has|this|thus|plus|minus|less|as|us|its|yes|times|percent|and|or|of|to|in|per|exactly|"
    r"precisely|roughly|about|so|then|more)$",
    re.I,
)


# measure words that are no unit of their own ("twenty-one degrees" of an unnamed scale, "ten cents")
_MEASURE_WORD = re.compile(
    r"degrees|degrés|grados|gradi|graden|grads|points|percents|cents|pence|centimes|céntimos|centavos", re.I
)


def counts_things(clause: str, q: Quantity, want: Unit | None) -> bool:
    """Is the number ``q`` a count of things ("your two accounts", "its last three transfers", "for three
    notebooks and two pens", "I tried two times", "after 2 calls") rather than a result? It stands right before
    a plural noun (one word may come between: "two savings accounts") that is no unit or currency; "times" is
    such a noun unless a multiplicand follows ("two times four"). Where the result has a unit, such a count (in
    words, or a small whole figure) is never it; where the result is a bare number (a count asked: "1,287
    orders"), only a number word with a possessive or a determiner before it is a count of things already
    named."""
    if q.unit is not None or (
        re.search(r"\d", q.text) and (want is None or not re.fullmatch(r"\d{1,3}", q.text))
    ):
        return False
    m = re.match(r"\s*(?:([^\W\d_]+)\s+)?([^\W\d_]{2,}s)\b", clause[q.end :])  # a figure's end takes a space
    if m is None or unit_of(m.group(2)) is not None or _MEASURE_WORD.fullmatch(m.group(2)):
        return False
    occasions = (
        m.group(1) is None
        and m.group(2).lower() == "times"
        and not _MULTIPLICAND.match(clause, q.end + m.end())
    )
    if not occasions and any(w and _NOT_A_NOUN.match(w) for w in m.groups()):
        return False
    return want is not None or _OWNER.search(clause, 0, q.pos) is not None


# what "times" multiplies ("two times four", "three times as much", "two times the price"); without it, "two times"
# counts occasions ("I tried two times, …")
_MULTIPLICAND = re.compile(
    r"\s*(?:[\d$€£¥(]|(?:as|more|less|the|that|this|its|their|his|her|bigger|larger|smaller|higher|lower|over|"
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b)",
    re.I,
)


# an answer that opens with a bare value, then a dash, a colon or a full stop: "Twelve — 10% is 8 …", "€13.77: …"
_OPENING = re.compile(
    r"\W{0,3}?(?:(?:about|roughly|around|approximately|approx\.|~|≈)\s*)?(?P<head>[^\n:—–]{1,40}?)\s*"
    r"(?:\s[—–-]\s|[—–]|:\s|\.\s)",
    re.I,
)


# the markers that conclude even inside working
_CONCLUDES = re.compile(
    rf"so|therefore|thus|total|in total|altogether|overall|together|in all|comes? to|final|result|answer|"
    rf"{_REMAINDER_WORDS}",
    re.I,
)


def _opening(
    answer: str, unit: Unit | None, *, unitless_ok: bool, lang: str | None
) -> tuple[Quantity, str] | None:
    """The value an answer opens with when it is bare (a figure or a number word, with its unit) and followed
    by a dash, a colon or a full stop, then working: "Twelve — 10% is 8 and 5% is 4", "€13.77: notebooks …".
    The opening is the input instead when the rest concludes on its own ("250 USD: at today's rate that is
    €229.60", a strong marker in a clause that is not working) or states the opening value again; a numbered
    list ("1. …") opens with no value."""
    t = strip_markdown(answer).strip()
    m = _OPENING.match(t)
    if m is None or re.search(r"^\s*\d+[.)]\s", t[m.end() :], re.M):
        return None
    head = m.group("head")
    qs = quantities(head, lang)
    if len(qs) != 1 or re.sub(r"[\s*_,]", "", head.replace(qs[0].text, "")):
        return None
    q = qs[0]
    if not _compatible(q, unit, unitless_ok=unitless_ok) or _BOUND.search(head, 0, q.pos):
        return None
    rest = t[m.end() :]
    later = quantities(rest, lang)
    if not later or any(
        _compatible(o, unit, unitless_ok=True) and (abs(o.value - q.value) <= 1e-9 or rounding_of(q, o))
        for o in later
    ):
        return None  # no working after it, or the value comes back in it ("Roughly €230 — precisely €229.60")
    for c in clauses(rest):
        working = _is_working(c, lang)
        for mk in _STRONG.finditer(c):
            if working and not _CONCLUDES.fullmatch(mk.group(0)):
                continue  # "3 × €4.20 = €12.60", "half of that is 4" are working; "15% of it comes to 12" concludes
            if expression_only(c, mk.end(), lang):
                continue  # "so 8 + 4.": an expression without its value concludes nothing
            if any(_compatible(o, unit, unitless_ok=unitless_ok) for o in quantities(c[mk.end() :], lang)):
                return None  # the rest concludes: the opening was what it worked on
    return Quantity(q.value, q.unit, q.text, q.pos + m.start("head"), q.end + m.start("head")), head.strip()


# a dash that ends a statement: spaced, or an em/en dash
_DASH = re.compile(r"\s[—–-]\s|[—–]")
# what concludes working: after it comes a value ("…, so 8 + 4 = 13", "that's €13.77", "→ 13")
_TAIL_CONCLUDES = re.compile(
    rf"(?:\b(?:{_CONCLUDES.pattern}|hence|that's|that is|it's|it is|which is|making|giving|leaving)\b|=|→|⇒|=>)"
    r"[^\d€$£]{0,20}$",
    re.I,
)


def _stated_before_dash(
    answer: str, unit: Unit | None, *, unitless_ok: bool, lang: str | None
) -> tuple[Quantity, str] | None:
    """The value a sentence states right before a dash when what follows the dash is its working: "15% of 80
    is 12 — ten percent's 8, plus half of that", "You pay €13.77 — the items come to €15.30 and the 10% off is
    €1.53". The statement is the last sentence with a value of the kind asked; its value ends the part before
    the dash and is said with a copula or is that part's only such value; the part after relates numbers (an
    operation, or two values or more), does not give the stated value again, and concludes on no value of
    its own ("…, so 8 + 4 = 13", "… that's €13.77")."""
    st = strip_markdown(answer)  # the statement reads the dash as a clause break; the sentence keeps it
    said = [
        s
        for s in sentences(st)
        if any(_compatible(q, unit, unitless_ok=unitless_ok) for q in quantities(s, lang))
    ]
    if not said:
        return None
    sent = said[-1]
    d = _DASH.search(sent)
    if d is None:
        return None
    head, tail = sent[: d.start()], sent[d.end() :]
    if not head.strip() or not _in_statement(head, answer):  # a sentence in brackets is an aside
        return None
    hq = [q for q in quantities(head, lang) if _compatible(q, unit, unitless_ok=unitless_ok)]
    tq = quantities(tail, lang)
    if not hq or not tq or re.sub(r"[\s*_,.]", "", head[hq[-1].end :]):
        return None
    q = hq[-1]
    if _BOUND.search(head, 0, q.pos) or counts_things(head, q, unit):
        return None
    copula = any(mk.end() <= q.pos for rx in (_WEAK, _CONTRACTED_IS) for mk in rx.finditer(head))
    if not copula and len(hq) > 1:
        return None
    if not (_OPERATION.search(tail) or len(tq) >= 2):
        return None
    if any(_compatible(o, unit, unitless_ok=True) and abs(o.value - q.value) <= 1e-9 for o in tq):
        return None
    if _inputs_before(st, sent, hq, unit, unitless_ok=unitless_ok, lang=lang) and any(
        _compatible(o, unit, unitless_ok=True) and names_difference(tail, o) for o in tq
    ):
        # "Madrid is at 24 °C vs Oslo's 6 °C — a difference of 18 °C": what comes before the dash gives the
        # inputs, the difference named after it is the result
        return None
    last = tq[-1]
    if _TAIL_CONCLUDES.search(tail[: last.pos]) and _compatible(last, unit, unitless_ok=True):
        return None
    return q, head.strip()


def _inputs_before(
    st: str, sent: str, hq: list[Quantity], unit: Unit | None, *, unitless_ok: bool, lang: str | None
) -> bool:
    """Does the answer give two values of the kind asked or more up to the dash in its last such sentence ``sent``
    (``hq`` the values before the dash): the inputs of a difference ("- Madrid: 24 °C / - Oslo: 6 °C / Madrid is
    warmer, and Oslo sits at 6 °C — …")? One value before the dash is a statement its working may follow."""
    earlier = st[: max(0, st.rfind(sent))]
    return len(hq) + sum(_compatible(q, unit, unitless_ok=unitless_ok) for q in quantities(earlier, lang)) > 1


# a labelled datum in brackets: "(refund: 39.90 EUR)", "(total: $15,613.66)", "(new balance €1,840.25)"
_DATUM = re.compile(r"\(([^()\n]{1,60})\)")
# labels that give no datum: a rate, a comparison, a former or an approximate value, an aside's lead
_NOT_A_LABEL = re.compile(
    r"\b(rate|at|approx\w*|about|roughly|around|circa|ca|vs|versus|was|were|previously|before|formerly|old|"
    r"from|to|of|i\.?e|e\.?g|incl\w*|excl\w*|plus|minus|less|up|down|for|if|or)\b",
    re.I,
)


def _bracket_datum(
    answer: str, unit: Unit | None, *, unitless_ok: bool, lang: str | None
) -> tuple[Quantity, str] | None:
    """The datum a bracket labels ("(refund: 39.90 EUR)"), for an answer that states no result outside its
    brackets: the last bracket that holds a label of one to three words, then one value of the kind asked
    and nothing else. Brackets holding working, caveats, conversions, rates or "for reference" are no datum."""
    for m in reversed(list(_DATUM.finditer(strip_markdown(answer)))):
        inner = m.group(1)
        qs = quantities(inner, lang)
        if len(qs) != 1 or re.sub(r"[\s*_.,;]", "", inner[qs[0].end :]):
            continue
        label = inner[: qs[0].pos].strip().rstrip(":=").strip()
        if not re.fullmatch(r"[^\W\d_]+(?:[ -][^\W\d_]+){0,2}", label):
            continue
        if _NOT_A_LABEL.search(label) or _ASIDE_LEAD_IN_BRACKET.match(label):
            continue
        if _compatible(qs[0], unit, unitless_ok=unitless_ok):
            return qs[0], m.group(0).strip()
    return None


_ASIDE_LEAD_IN_BRACKET = re.compile(r"\W*(note|nb|for reference|for context|for comparison|see|cf)\b", re.I)


# a colon that ends a clause (not a clock time's "14:30")
_COLON_END = re.compile(r":(?=\s)")


def _stated_before_colon(clause: str, mk: re.Match[str], qs: list[Quantity]) -> bool:
    """Is ``mk`` a colon after a first clause that already states a value of the kind asked ("Madrid is 18 °C
    warmer: it's 24 °C there")? That clause is the statement, not a lead-in ("Temperature: 21 °C", "Here's the
    sum: 12" have no value before the colon)."""
    return (
        mk.group(0) == ":"
        and _COLON_END.match(clause, mk.start()) is not None
        and any(q.end <= mk.start() for q in qs)
    )


# "it's", "what's": the copula contracted
_CONTRACTED_IS = re.compile(r"\b(?:it|what|here|there|that)['’]s\b", re.I)
# a copula after a modal or a verb of reckoning: "That'd be 12", "it should be", "I make it 12", "you get 12"
_MODAL_IS = re.compile(r"\b(?:be|make it|makes it|get|gets)\b", re.I)
# a conclusion in working: after it comes the result ("…, so 13", "→ 13", "13 in total")
_CONCLUSION_IN = re.compile(rf"\b(?:{_CONCLUDES.pattern}|hence)\b|→|⇒|=>", re.I)


def _stated_then_working(clause: str, qs: list[Quantity], lang: str | None) -> Quantity | None:
    """The value a clause states before a colon when what follows the colon is working: it relates two or more
    numbers (an operation, or two or more "is"/"=") and concludes nothing ("It's 12: 10% = 8 and 5% = 4.",
    "15% of 80 is 12: ten percent is 8, and half of that is 4."). A lead-in with no value before the colon
    ("Here's the maths: …") or working that ends in a conclusion ("…, so 13") is no such statement."""
    colon = _COLON_END.search(clause)
    if colon is None:
        return None
    head = [q for q in qs if q.end <= colon.start()]
    tail = clause[colon.end() :]
    if not head or _CONCLUSION_IN.search(tail) or len(quantities(tail, lang)) < 2:
        return None
    last = head[-1]
    stated = any(
        mk.end() <= last.pos
        for rx in (_STRONG, _WEAK, _CONTRACTED_IS, _MODAL_IS)
        for mk in rx.finditer(clause, 0, colon.start())
        if mk.group(0) != ":"
    )
    relations = len(re.findall(r"=|\b(?:is|are|equals?)\b", tail, re.I))
    if stated and (_OPERATION.search(tail) or relations >= 2):
        return last
    return None


_OPERATION = re.compile(
    r"\d\s*[×x*+/=−-]\s*[\d€$£(]|\b(of|minus|plus|times|divided by|multiplied by)\b", re.I
)


# what joins the terms of an expression: "8 + 4", "€15.30 − €1.53", "8 plus 4", "80 × 0.15"
_JOIN = re.compile(r"\s*(?:[×x*+/÷−–-]|plus|minus|times|divided by|multiplied by)\s*", re.I)


def expression_only(clause: str, start: int, lang: str | None) -> bool:
    """Is the rest of ``clause`` from ``start`` (after "so", "=", "total") an arithmetic expression written
    without its value ("so 8 + 4.", "= €15.30 − €1.53")? That is the working spelled out, not a result; one
    that goes on to its value ("so 8 + 4 = 12") is not."""
    rest = clause[start:]
    qs = quantities(rest, lang)
    if len(qs) < 2 or re.search(
        r"[^\W\d_]",
        re.sub(r"(?i)\b(?:just|simply|then|that's|that is|it's)\b", "", rest[: qs[0].pos]).replace("=", ""),
    ):
        return False
    # "8+4" reads as 8 and +4: a sign right after a term is the operator
    joins = [
        rest[a.end : b.pos] + b.text[:1] * (b.text[:1] in "+−-") for a, b in zip(qs, qs[1:], strict=False)
    ]
    return (
        all(_JOIN.fullmatch(j) for j in joins)
        and re.fullmatch(r"[\s.!?,;:)*_]*", rest[qs[-1].end :]) is not None
    )


def _is_working(clause: str, lang: str | None) -> bool:
    return len(quantities(clause, lang)) >= 2 and _OPERATION.search(clause) is not None


def _in_statement(span: str, answer: str) -> bool:
    st = strip_markdown(statement(answer))
    return strip_markdown(span).strip()[:40] in st


def value_in(
    q: Quantity, want: Unit | None, *, strict_unit: bool = False, delta: bool = False
) -> float | None:
    """q's value expressed in ``want`` (None if not convertible; unitless is taken as already in ``want``)."""
    if want is None or q.unit is None:
        return q.value
    if q.unit.name == want.name:
        return q.value
    if strict_unit:
        return None
    if delta and q.unit.dim == want.dim:
        return q.value * q.unit.factor / want.factor
    return convert(q.value, q.unit, want)


# one dot before exactly three digits ("1.287") is a thousands group in most European locales, a decimal point in
# English: either reading may be the writer's
_ONE_DOT_GROUP = re.compile(r"(?<![\d.,])\d{1,3}\.\d{3}(?![\d.,]\d)")


def _grouped_whole(q: Quantity, value: float, want: Unit | None, tol: float) -> bool:
    """Is ``q`` written "1.287" where the value wanted is the whole number 1287? A count or amount of a thousand
    or more written with one dot group means the whole number in de/fr/es/it/nl/pt usage whatever the answer's
    language; a value wanted with decimals keeps the decimal reading only."""
    if value != int(value) or abs(value) < 1000:
        return False
    if q.unit is not None and (want is None or q.unit.name != want.name):
        return False
    found = _ONE_DOT_GROUP.findall(q.text)
    return (
        len(found) == 1 and abs(float(found[0].replace(".", "")) * (-1 if q.value < 0 else 1) - value) <= tol
    )


def matches(
    q: Quantity, value: float, want: Unit | None, tol: float, *, strict_unit: bool, delta: bool
) -> bool | None:
    """Is ``q`` the value ``value`` (in ``want``)? None when q cannot be read in ``want``. A value converted
    from another unit may be rounded to the precision it is written with ("70 °F" for 21 °C)."""
    got = value_in(q, want, strict_unit=strict_unit, delta=delta)
    if got is None:
        return None
    if abs(got - value) <= tol:
        return True
    if _grouped_whole(q, value, want, tol):
        return True
    if want is not None and q.unit is not None and q.unit.name != want.name:
        back = value_in(Quantity(value, want, "", 0, 0), q.unit, delta=delta)
        decimals = len(m.group(1)) if (m := re.search(r"[.,](\d+)\s*\D*$", q.text)) else 0
        if back is not None and abs(q.value - back) <= 0.5 * 10**-decimals + 1e-9:
            return True
    return False


def _last_digit(v: float) -> float:
    """The place of a value's last significant digit: 13.8 -> 0.1, 130 -> 10, 15,600 -> 100, 42.16 -> 0.01
    (trailing zeros are no precision: "13.80" is rounded to tenths)."""
    if v == 0:
        return 1.0
    for k in range(9, -7, -1):
        step = 10.0**k
        n = round(v / step)
        if n != 0 and abs(v - n * step) <= 1e-9 * max(1.0, abs(v)):
            return step
    return 1e-6


def rounding_of(r: Quantity, exact: Quantity) -> bool:
    """Is ``r`` a rounding of ``exact``: written to a coarser place ("13.80" beside 13.77, "230" beside 229.60,
    "about 42" beside 42.16) and within half a unit of its last significant digit? Two values of the same
    precision ("€14.04" beside "€13.77"), or one further off ("$133.80" beside "$131.42"), are two candidates."""
    place = _last_digit(r.value)
    return place > _last_digit(exact.value) and abs(r.value - exact.value) <= place / 2 + 1e-9


def check_number(
    answer: str,
    value: float,
    unit: str | list[str] | None,
    tolerance: float,
    abs_tol: float,
    *,
    unit_strict: bool = True,
    unitless_ok: bool = True,
    lang: str | None = None,
    delta: bool = False,
) -> tuple[bool, str, str]:
    """(ok, kind, why): kind is "" when ok, "missing" (no result stated) or "wrong" (a different result)."""
    want = unit_of(unit[0] if isinstance(unit, list) else unit) if unit else None
    want_s = f"{value:g}" + (f" {want.name if want else unit}" if unit else "")
    tol = max(abs(value) * tolerance, abs_tol) + 1e-9
    q, clause = stated_result(answer, want, unitless_ok=unitless_ok, lang=lang)
    if q is None:
        anyq, _ = stated_result(answer, None, lang=lang)
        if anyq is not None and anyq.unit is not None and want is not None:
            same_kind = anyq.unit.dim.split(":")[0] == want.dim.split(":")[0]
            return (
                False,
                "wrong" if same_kind else "missing",
                (f"stated result {anyq.text!r} is not in {want.name} (expected {want_s})"),
            )
        if anyq is not None and want is not None and not unitless_ok:
            return False, "wrong", f"stated result {anyq.text!r} has no unit (expected {want_s})"
        return False, "missing", f"no stated numeric result (expected {want_s})"
    if q.low is not None and q.high is not None:
        return _range_read(
            answer, q, value, want, want_s, tol, unit_strict=unit_strict, lang=lang, delta=delta
        )
    ok = matches(q, value, want, tol, strict_unit=unit_strict, delta=delta)
    if ok is False and abs(q.value - value) <= 0.05 * abs(value):
        # "about forty-two kilometres, 42.16 km to be precise": a rounded value beside the exact one, also in
        # brackets ("about $15.6k (exactly $15,613.66)")
        plain = strip_markdown(answer)
        at = plain.find(q.text)
        bracket = re.match(r"\s*\(([^()]*)\)", plain[at + len(q.text) :]) if at >= 0 else None
        exact = [
            o
            for o in quantities(clause, lang) + (quantities(bracket.group(1), lang) if bracket else [])
            if o.text != q.text
            and rounding_of(q, o)
            and (o.unit.name if o.unit else None) == (q.unit.name if q.unit else None)
            and matches(o, value, want, tol, strict_unit=unit_strict, delta=delta)
        ]
        if exact:
            return True, "", f"stated result {exact[0].text!r} = {want_s} (beside the rounded {q.text!r})"
        # "42.1648 kilometres — roughly forty-two kilometres": a hedged rounding after the exact value restates it
        before = rounded_after_exact(answer, q, clause, lang)
        if before is not None and matches(before, value, want, tol, strict_unit=unit_strict, delta=delta):
            return True, "", f"stated result {before.text!r} = {want_s} (then rounded to {q.text!r})"
    if (
        ok is False
        and (exact_q := _rounded_restatement(answer, q, clause, value, want, tol, lang=lang)) is not None
    ):
        return (
            True,
            "",
            f"stated result {exact_q.text!r} = {want_s} (rounded to {q.text!r} in the conclusion)",
        )
    if ok is None:
        return (
            False,
            "wrong",
            f"stated result {q.text!r} is in {q.unit.name if q.unit else '?'}, not {want_s}",
        )
    if ok and (late := _concluded_elsewhere(answer, value, want, tol, lang=lang, delta=delta)) is not None:
        # "ASML is at 687.30 — it's listed on Nasdaq too, so that's $687.30": the answer concludes on the figure
        # in another unit, which is what it commits to
        return (
            False,
            "wrong",
            f"answer concludes on {late.text.strip(' –—')!r}, the figure in another unit than {want_s}",
        )
    if ok:
        return True, "", f"stated result {q.text!r} = {want_s}"
    return False, "wrong", f"stated result {q.text!r} is not {want_s} in: {clause[:100]!r}"


# a hedge before a value ("roughly forty-two", "about €230", "call it 42", "rund 1.344 $", "environ 42 km") or after
# it ("42 km or so", "€230-ish")
_HEDGE_BEFORE = re.compile(
    r"\b(?:about|roughly|around|approximately|approx\.?|some|call it|circa|ca\.|rund|etwa|ungef[äa]hr|"
    r"environ|à peu près|autour de|aproximadamente|unos|unas|alrededor de|cerca de|più o meno|"
    r"ongeveer|zo'n)[ \t]*(?:[$€£¥][ \t]*)?$|(?:~|≈)[ \t]*(?:[$€£¥][ \t]*)?$",
    re.I,
)
# the words that may join an exact value to its hedged rounding ("— call it about", ". In round numbers, about",
# "– also rund", "; soit environ")
_RESTATING_WORDS = frozenset(
    "so that's thats that is it it's i e ie or which call say let's in round numbers figures terms then also just "
    "simply basically practically about roughly around approximately approx some circa ca rund etwa ungefähr "
    "ungefahr das sind environ soit donc à peu près unos unas aproximadamente alrededor de cerca più o meno "
    "ongeveer zo'n dus".split()
)
_HEDGE_AFTER = re.compile(r"[ \t]*(?:-ish\b|or so\b|give or take\b|in round (?:numbers|figures)\b)", re.I)


def rounded_after_exact(answer: str, q: Quantity, clause: str, lang: str | None) -> Quantity | None:
    """The exact value that the hedged value ``q`` (read from ``clause``) restates as its rounding, when it comes
    right before it in the answer's statement: "26.2 miles = 42.1648 kilometres — roughly forty-two kilometres",
    "€229.60 — about €230", "1.344,12 US-Dollar – also rund 1.344 $". The exact value is the last one before
    ``q`` in the same unit, and ``q`` is its rounding (a coarser place, within half a unit of it: 42 for 42.16,
    not 43 or 50). None when ``q`` is not hedged, or nothing before it is such a value."""
    st = statement(answer)
    base = st.rfind(clause)
    spots = [base + m.start() for m in re.finditer(re.escape(q.text), clause)] if base >= 0 else []
    if not spots:
        return None
    # q.pos counts from the clause before it was stripped: the occurrence nearest to it
    at = min(spots, key=lambda s: abs(s - base - q.pos))
    if not (_HEDGE_BEFORE.search(st, 0, at) or _HEDGE_AFTER.match(st, at + len(q.text))):
        return None
    same = [
        o
        for o in quantities(st[:at], lang)
        if o.low is None and (o.unit.name if o.unit else None) == (q.unit.name if q.unit else None)
    ]
    if not same or not rounding_of(q, same[-1]):
        return None
    # only connecting words between the two: "€687.30 last week; today it's around €700" is another value
    between = st[same[-1].end : at]
    if re.search(r"\d", between) or any(
        w.lower() not in _RESTATING_WORDS for w in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", between)
    ):
        return None
    return same[-1]


# the leads that open a concluding part of an answer: a summary or conclusion field, heading or bold lead-in
# ("Summary: …", "## Bottom line", "**TL;DR**", "Fazit: …") or a sentence that concludes ("In short, …", "So a
# share is …", "Long story short: …", "All in all …")
CONCLUDING_WORDS = (
    r"summary|in short|in brief|in sum|in summary|to sum up|summing up|to summari[sz]e|tl;?\s?dr|bottom line|"
    r"short answer|long story short|all in all|all told|the upshot|overall|in conclusion|conclusion|so|hence|"
    r"therefore|thus|zusammenfassung|zusammengefasst|ergebnis|fazit|kurz gesagt|unterm strich|r[ée]sum[ée]|"
    r"en r[ée]sum[ée]|en bref|au final|resumen|en resumen|en definitiva|en pocas palabras|in breve|in sintesi|"
    r"em resumo|kortom|samengevat"
)
_CONCLUDING_OPEN = re.compile(r"[\s*_#>]{0,8}(?:" + CONCLUDING_WORDS + r")\b(?!\s+far\b)", re.I)
# the words that offer a value as near only ("about €230", "rund 1.344", "≈ 42"): NEAR_ONLY reads them just before
# a value; a concluding part's rounding also takes "a good", "a bit over", "gut", "knapp" ("gut 1.344 Dollar")
NEAR_WORDS = (
    r"about|around|roughly|approximately|approx\.?|nearly|almost|circa|ca\.|some|just (?:over|under)|"
    r"rund|etwa|ungefähr|environ|près de|aproximadamente|unos|cerca de|ongeveer"
)
NEAR_ONLY = re.compile(rf"(?:\b(?:{NEAR_WORDS})|[≈~∼])\s*\W{{0,3}}$", re.I)
_OFFERED_NEAR = re.compile(
    rf"(?:\b(?:{NEAR_WORDS}|a good|a bit (?:over|under)|gut|knapp)|[≈~∼])\s*\W{{0,3}}$", re.I
)


def _rounded_restatement(
    answer: str, q: Quantity, clause: str, value: float, want: Unit | None, tol: float, *, lang: str | None
) -> Quantity | None:
    """The exact value an answer states elsewhere when its result ``q`` is a concluding sentence or field that
    offers a rounding of it as near only: "Combined: $15,613.66 … Bottom line: roughly $15.6k", "Ergebnis:
    1.344,12 USD / Kurz gesagt: gut 1.344 Dollar". The conclusion must open its line or sentence, hedge the value
    and round it truly (a coarser place, within half a unit); "So the answer is $131" after $131.42, a rounding
    the answer commits to, and "…, so you'd get about €230.00" inside a sentence stay read as the result."""
    if q.low is not None or (q.unit is not None and (want is None or q.unit.name != want.name)):
        return None
    plain = strip_markdown(answer)
    at = plain.find(clause)
    if at < 0 or not _CONCLUDING_OPEN.match(clause) or not re.search(r"(?:^|[.!?:]\s|\n)\s*$", plain[:at]):
        return None
    near = clause.find(q.text)
    if near < 0 or not _OFFERED_NEAR.search(clause, 0, near):
        return None
    if not rounding_of(q, Quantity(value, q.unit or want, "", 0, 0)):
        return None
    for o in quantities(statement(plain[:at] + plain[at + len(clause) :], keep_brackets=True), lang):
        if o.low is None and o.unit is not None and want is not None and o.unit.name == want.name:
            if abs(o.value - value) <= tol:
                return o
    return None


def _range_read(
    answer: str,
    q: Quantity,
    value: float,
    want: Unit | None,
    want_s: str,
    tol: float,
    *,
    unit_strict: bool,
    lang: str | None,
    delta: bool,
) -> tuple[bool, str, str]:
    """A range given as the result ("in the low $130s"): one that holds the value states no value, so the
    result is left out unless the exact value is stated elsewhere ("$131.42 — so in the low $130s"); one that
    does not hold it is wrong."""
    assert q.low is not None and q.high is not None
    lo, hi = _ends_in(q, want, strict_unit=unit_strict, delta=delta)
    kind = "bound" if is_bound(q) else "range"
    if lo is None or hi is None:
        return (
            False,
            "wrong",
            f"stated {kind} {q.text!r} is in {q.unit.name if q.unit else '?'}, not {want_s}",
        )
    if not min(lo, hi) - tol <= value <= max(lo, hi) + tol:
        return False, "wrong", f"stated {kind} {q.text!r} does not hold {want_s}"
    for o in quantities(statement(answer), lang):
        if (
            o.low is None
            and _compatible(o, want, unitless_ok=False)
            and matches(o, value, want, tol, strict_unit=unit_strict, delta=delta)
        ):
            return True, "", f"stated result {o.text!r} = {want_s} (beside the {kind} {q.text!r})"
    return False, "missing", f"stated only a {kind}, {q.text!r}, that holds {want_s}: no value"


def holds(
    q: Quantity, value: float, want: Unit | None, tol: float, *, strict_unit: bool, delta: bool
) -> bool:
    """Does the range or the bound ``q`` ("in the low $130s", "well over a thousand") hold ``value`` (in
    ``want``)? False for a single value or one that cannot be read in ``want``."""
    if q.low is None or q.high is None:
        return False
    lo, hi = _ends_in(q, want, strict_unit=strict_unit, delta=delta)
    return lo is not None and hi is not None and min(lo, hi) - tol <= value <= max(lo, hi) + tol


def _ends_in(
    q: Quantity, want: Unit | None, *, strict_unit: bool, delta: bool
) -> tuple[float | None, float | None]:
    """The two ends of the range or bound ``q`` in ``want`` (None for an end that cannot be read in it)."""
    assert q.low is not None and q.high is not None
    lo, hi = (
        value_in(Quantity(v, q.unit, q.text, q.pos, q.end), want, strict_unit=strict_unit, delta=delta)
        for v in (q.low, q.high)
    )
    return lo, hi


def _concluded_elsewhere(
    answer: str, value: float, want: Unit | None, tol: float, *, lang: str | None, delta: bool
) -> Quantity | None:
    """The answer's conclusion read over every unit (bold, after "so"/"that's", the last clause) when it is the
    wanted figure written in another unit of the same kind (dollars for euros, °F for °C) that does not convert
    to it: a relabelled value. A conversion ("17 °C, so about 63 °F") is no such thing."""
    if want is None:
        return None
    late, _ = stated_result(answer, None, unitless_ok=False, lang=lang)
    if late is None or late.unit is None or late.unit.name == want.name:
        return None
    if late.unit.dim.split(":")[0] != want.dim.split(":")[0] or abs(late.value - value) > tol:
        return None
    if matches(late, value, want, tol, strict_unit=False, delta=delta):
        return None
    return late


def mentions_number(
    answer: str,
    value: float,
    unit: str | None,
    tolerance: float,
    abs_tol: float,
    *,
    lang: str | None = None,
    unit_strict: bool = True,
    unitless_ok: bool = True,
    delta: bool = False,
) -> tuple[bool, str, str]:
    """The statement gives ``value`` (in ``unit`` or an equivalent one) somewhere. A match only in another
    unit of the same dimension that means something else (21 °F for 21 °C) is "wrong"."""
    want = unit_of(unit) if unit else None
    want_s = f"{value:g}" + (f" {want.name if want else unit}" if unit else "")
    tol = max(abs(value) * tolerance, abs_tol) + 1e-9
    wrong_unit = None
    for q in quantities(statement(answer, keep_brackets=True), lang):
        if q.low is not None:
            continue  # "in the low $130s" names a range, no value
        if want is not None and q.unit is not None and q.unit.dim != want.dim:
            continue
        if q.unit is None and want is not None and not unitless_ok:
            continue
        if matches(q, value, want, tol, strict_unit=unit_strict, delta=delta):
            return True, "", f"states {q.text!r} = {want_s}"
        if want is not None and q.unit is not None and abs(q.value - value) <= tol:
            wrong_unit = q
    if wrong_unit is not None:
        return (
            False,
            "wrong",
            f"states {wrong_unit.text!r}: the right number in the wrong unit (expected {want_s})",
        )
    return False, "missing", f"does not state {want_s}"

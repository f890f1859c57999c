"""Times and dates: clock times and calendar dates in common formats and languages, compared as values; a
weekday written next to a date is checked against it; ``stated_choice`` is the option an answer picks."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bench_tui.graders.text import bold_spans, fold, sentences, statement, strip_markdown

_TIME_RX = re.compile(
    # a colon or a point joins hours and minutes directly ("12: 10% of 80" is a clause's colon); "h" may stand apart
    # the time of an ISO 8601 datetime ("2025-09-15T07:30") too
    r"(?:\b|(?<=\dT))(?P<h>[01]?\d|2[0-3])(?:(?:[:.]|\s?h\s?)(?P<m>[0-5]\d))?\s?(?P<ap>a\.?\s?m\.?|p\.?\s?m\.?|uhr|hrs?\b|h\b)?(?!\d)",
    re.I,
)


# what comes before a UTC offset: an ISO datetime's time, or a time with seconds, then the sign
_UTC_OFFSET = re.compile(
    r"(?:\d{4}-\d{2}-\d{2}T\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?|\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?)[+\-−]$"
)


def times(text: str, dotted: bool = False) -> list[int]:
    """Clock times in the text as minutes after midnight: 17:25, 5:25 pm, 5.25pm, 3 pm, 14 h 30, 9h15, 17.25 hrs;
    ``dotted`` (a time is asked): "17.25" with no unit, amount or duration word is a time too."""
    return [v for _, _, v in _time_matches(strip_markdown(text), dotted)]


def time_spans(t: str) -> list[tuple[int, int]]:
    return [(a, b) for a, b, _ in _time_matches(t)]


# words that make a number with a point a clock time ("at 16.50", "arrival 17.25", "departs 14.50", "ETA 17.25")
_DOT_TIME_BEFORE = re.compile(
    r"\b(?:at|um|à|a las|alle|às|til|by|until|from|arriv(?:al|es?|ing)|arr\.|depart(?:s|ure|ing)?|dep\.|"
    r"leav(?:es|ing)|gets?\s+in|pulls?\s+in|lands?|landing|eta|etd)\s*:?\s*$",
    re.I,
)
# a span of time before a number ("lasts 2.35 hrs", "a journey of 1.30 h"): a duration, no clock time
_DURATION_BEFORE = re.compile(
    r"\b(?:lasts?|lasting|takes?|took|taking|(?:journey|trip|ride|flight|travel|wait|delay)(?:\s+time)?\s+of|"
    r"duration(?:\s+of)?)(?:\s+for)?\s*:?\s*(?:about\s+|around\s+|roughly\s+|approx(?:imately|\.)?\s+|~\s*)?$",
    re.I,
)
# an amount or a measure after a number ("15.00 °C", "17.25 EUR"), or a currency before it ("€17.25")
_AMOUNT_AFTER = re.compile(
    r"\s*(?:%|‰|°|€|\$|£|¥|percent|per\s*cent|degrees?|(?:eur|usd|gbp|chf|jpy|euros?|dollars?|pounds?|cents?|km|kg|mi|"
    r"miles?|hours?|minutes?|mins?|points?|pts|x)\b)",
    re.I,
)


def _time_matches(t: str, dotted: bool = False) -> list[tuple[int, int, int]]:
    out = []
    for m in _TIME_RX.finditer(t):
        if _UTC_OFFSET.search(t, max(0, m.start() - 40), m.start()):
            continue  # "2025-06-04T06:12:00+10:00": the offset from UTC is no clock time
        h, mi, ap = (
            int(m.group("h")),
            m.group("m"),
            (m.group("ap") or "").lower().replace(" ", "").replace(".", ""),
        )
        sep = t[m.end("h") : m.start("m")] if mi else ""
        if not mi and ap not in ("am", "pm", "uhr", "h"):
            continue
        before = t[max(0, m.start() - 24) : m.start()]
        if mi and "." in sep and ap in ("h", "hrs", "hr") and _DURATION_BEFORE.search(before):
            continue  # "lasts 2.35 hrs" is a span of time
        if mi and "." in sep and not ap:
            # "4.10" is a number; "16.50" is a time only with am/pm, "hrs"/"Uhr" after it, after "at"/"um"/"à"/
            # "alle"/"arrival"/"departs", or where a time is asked and no amount, measure or duration is meant
            if not _DOT_TIME_BEFORE.search(before) and not (
                dotted
                and not re.search(r"[€$£¥]\s*$|[\d.,]$", before)
                and not _AMOUNT_AFTER.match(t, m.end())
                and not _DURATION_BEFORE.search(before)
            ):
                continue
        if mi and ":" not in sep and "h" not in sep.lower() and "." not in sep:
            continue
        end = m.end()
        if (
            ap in ("", "uhr")
            and h <= 12
            and (cue := _CUE_RX.match(t, end))
            and (cue.group("pm") or cue.group("am"))
        ):
            # "10:47 at night", "6:12 in the evening", "7h30 du matin", "6:12 Uhr abends": a spoken cue sets the
            # half of the day
            ap, end = ("pm" if cue.group("pm") else "am"), cue.end()
        if ap == "pm" and h < 12:
            h += 12
        if ap == "am" and h == 12:
            h = 0
        out.append((m.start(), end, h * 60 + int(mi or 0)))
    # a time said in words ("a quarter past nine", "halb acht") where no written time stands; at one place the
    # longer reading wins ("9 Uhr 15" over "9 Uhr")
    for a, b, v in _spoken_times(t):
        inside = [x for x in out if x[0] < b and a < x[1]]
        # a spoken reading that starts inside a written time ("12 Uhr abends" of "6:12 Uhr abends") is none
        if all(x[1] - x[0] < b - a and a <= x[0] for x in inside):
            out = [x for x in out if x not in inside] + [(a, b, v)]
    return sorted(out)


def half_day_restated(text: str, at: int, given: str = "") -> str | None:
    """A restatement of the time ``at`` in the other notation that lands in the other half of the day: "06:12 →
    in 12-hour terms 6:12 pm", "22:47, or 10:47 a.m.", "10:47 pm — 10:47 in 24-hour notation". Twelve hours
    apart, in one sentence, one written with am/pm (or a spoken cue) and the other without: the same reading
    given wrongly. A right restatement ("06:12 (6:12 am)") lands on ``at`` itself; two 24-hour times twelve
    hours apart are two times. Anywhere in the answer, a time it commits to with a half of the day ("10:47 in
    the morning", "10.47am", "a quarter to eleven in the morning") twelve hours from ``at`` is that wrong reading
    too, unless denied ("not 10:47 am") or said of a place the conversation (``given``) does not name ("10:47 am
    in São Paulo")."""
    t = strip_markdown(text)
    found = _time_matches(t)

    def notation(a: int, b: int) -> int:
        """12 for a time with am/pm or a spoken half-day cue, 24 for digits alone, 0 for one said in words."""
        if _HALF_DAY.search(t, a, b):
            return 12
        return (
            24
            if re.fullmatch(r"\d{1,2}\s?(?:[:.]|h)\s?\d{2}(?:\s?(?:hrs?|h|uhr))?", t[a:b].strip(), re.I)
            else 0
        )

    for a, b, v in found:
        if v != at:
            continue
        for c, d, w in found:
            if w != (at + 720) % 1440 or {notation(a, b), notation(c, d)} != {12, 24}:
                continue
            lo, hi = min(b, d), max(a, c)
            if (
                hi - lo <= 80
                and not re.search(r"[.!?](?:\s|$)|\n", t[lo:hi])
                and not _elsewhere(t, c, d, given)
            ):
                return t[c:d]
    if not any(v == at for _, _, v in found):
        return None
    other = (at + 720) % 1440
    for c, d, w in found:
        # a time said in words is a rounded one ("a quarter to eleven" for 10:47)
        near = 0 if re.search(r"\d", t[c:d]) else 5
        if (
            min(abs(w - other), 1440 - abs(w - other)) <= near
            and _HALF_DAY.search(t, c, d)
            and not _DENIED_BEFORE.search(t, max(0, c - 24), c)
            and not _elsewhere(t, c, d, given)
        ):
            return t[c:d]
    return None


_DENIED_BEFORE = re.compile(
    r"\b(?:not|n['’]t|never|rather than|instead of|ni|nicht|pas|no)\s+(?:at\s+|à\s+|um\s+)?$", re.I
)
# a place named with a time: "10:47 am in São Paulo", "in Lisbon it's 2:47 pm", "10:47 am New York time"
_PLACE = re.compile(r"\b(?:in|à|en)\s+((?:[A-Z][\w’'-]+)(?:\s+[A-Z][\w’'-]+)?)|\b([A-Z][\w’'-]+)\s+time\b")


def _elsewhere(t: str, a: int, b: int, given: str) -> bool:
    """Is the time at ``t[a:b]`` said of a place the conversation does not name (its own clause holds one)?"""
    if not given:
        return False
    lo = max(t.rfind(p, 0, a) for p in (". ", "; ", "\n", ", ", " — ", "(")) + 1
    ends = [i for i in (t.find(p, b) for p in (". ", "; ", "\n", ", ", " — ", ")")) if i >= 0]
    clause = t[lo : min(ends) if ends else len(t)]
    known = given.lower()
    return any(
        (name := (m.group(1) or m.group(2))).lower() not in known and name.split()[0].lower() not in known
        for m in _PLACE.finditer(clause)
    )


# a clock named: "in 12-hour format", "on the 24-hour clock", "in 24-hour terms", "am/pm", "au format 12 h",
# "im 24-Stunden-Format", "en formato de 12 horas"
_CLOCK_LABEL = re.compile(
    r"(?:\b(?:in|on|using|with|for|au|en|im|a|an)\s+(?:the\s+|a\s+)?(?:format(?:o)?\s+(?:de\s+)?)?)?"
    r"\b(?:12|24|twelve|twenty-four)\s?[- ]?\s?(?:h(?:ou)?rs?\b|h\b|heures?\b|horas?\b|stunden\b)"
    r"(?:[- ]?(?:format|time|terms|notation|clock|style|form|system|reading|uhr)\b)?|\bam\s?/\s?pm\b|"
    r"\bmilitary time\b",
    re.I,
)
# what joins a time to itself said again: "which is", "i.e.", "that's", "meaning", "soit", "d. h.", "es decir",
# "→", "/", a bracket; "or" only after a comma, a dash or a bracket ("22:47, or 10:47 pm")
_RESTATE_CUE = re.compile(
    r"\(?\s*(?:(?:which|that)(?:\s+is|['’]s|\s+would\s+be|\s+means)?|i\.?\s?e\.?|meaning|aka|so|also|"
    r"in\s+other\s+words|soit|c['’]est[- ]à[- ]dire|d\.\s?h\.|das\s+heißt|es\s+decir|o\s+sea|ou\s+seja|cioè|→|->|"
    r"=>|/)?\s*\(?",
    re.I,
)
# what says a time is another zone's or place's: "13:47 UTC", "GMT+1", "3:47 pm your time", "where you are"
_ZONE_AFTER = re.compile(
    r"\s*(?:\(?\s*(?:UTC|GMT|Z\b|[A-Z]{2,4}T\b|[A-Z]{3}\b)|(?:your|my|their|home)\s+time\b|where\s+you\s+are\b|"
    r"back\s+home\b|for\s+you\b)"
)


# "i.e. " and "d. h. " end no sentence
_ABBREVIATION = re.compile(r"\b(?:i\.\s?e|e\.\s?g|d\.\s?h)\.", re.I)


# a span of time, not a clock: "+ 2:35", "plus 2:35", "takes 2:35", "2:35 later", "2:35 long"
_DURATION_BEFORE_RX = re.compile(r"(?:[+−×]|\bplus|\bminus|\badd(?:ing)?|\btakes?|\btook|\blasts?)\s*$", re.I)
_DURATION_AFTER_RX = re.compile(
    r"\s*(?:later|after(?:wards)?|long|earlier|of\s+(?:travel|driving|journey)|in\s+total|hours?|hrs?|h|min\w*)"
    r"\b",
    re.I,
)


def _duration(t: str, a: int, b: int) -> bool:
    """Is the time at ``t[a:b]`` a span of time ("14:50 + 2:35", "2:35 later")?"""
    return bool(_DURATION_BEFORE_RX.search(t, max(0, a - 12), a) or _DURATION_AFTER_RX.match(t, b))


# a duration added to (or taken from) a time in working: "+ 2 h 35 min", ", plus 2:35", " add 2 hours 35 minutes",
# "→ +2h35", "- 45 min"; the hours and minutes, or minutes alone ("+ 155 min")
_WORKING_STEP = re.compile(
    r"\s*,?\s*(?:→|->)?\s*(?P<op>[+−-]|\bplus\b|\bminus\b|\badd(?:ing)?\b|\bsubtract(?:ing)?\b)\s*"
    r"(?:(?P<h>\d{1,2})\s*(?::|\s?h(?:ou)?rs?\.?|\s?h\b|\s?hours?\b|(?=h\d)h)\s*"
    r"(?:(?P<m>\d{1,2})\s*(?:m(?:in(?:ute)?s?)?\b\.?)?)?|(?P<mins>\d{1,3})\s?m(?:in(?:ute)?s?)?\b)",
    re.I,
)

# what the working comes to: "= 17:25", "→ 17:25", "gives 17:25"
_WORKING_END = re.compile(r"\s*(?:=|→|->|=>|gives|makes|comes\s+to)\s*([^\n.;,)]{0,20})", re.I)


def working_start(t: str, b: int, start: int, result: int) -> bool:
    """Is the time ending at ``t[:b]`` (worth ``start`` minutes) the start of working that adds or takes a duration
    to reach ``result``? "5:25 pm (14:50 + 2 h 35 min)", "departs 14:50, plus 2:35 of travel", "14:50 → +2h35 →
    17:25", "from 14:50 add 2 hours 35 minutes": 14:50 with 2:35 added is 17:25, so 14:50 is the working, not a
    second time. Working that lands elsewhere ("14:50 + 2 h 45 min" for 17:25) is no such start."""
    m = _WORKING_STEP.match(t, b)
    if not m:
        return False
    span = int(m.group("mins")) if m.group("mins") else int(m.group("h")) * 60 + int(m.group("m") or 0)
    sign = -1 if m.group("op").lower() in ("-", "−", "minus", "subtract", "subtracting") else 1
    # working written out to its end must end at ``result``: "14:50 + 2 h 35 min = 18:25" is the wrong sum
    ends = _WORKING_END.match(t, m.end())
    if ends and any(v != result % 1440 for _, _, v in _time_matches(ends.group(1))[:1]):
        return False
    return (start + sign * span) % 1440 == result % 1440


def _restates(t: str, b: int, c: int) -> tuple[bool, bool]:
    """Is ``t[b:c]``, between two times, a restatement link ("; in 24-hour terms that's", ", which is", " (")?
    And does it name a clock? "06:12 on Wednesday; in 24-hour terms that's 18:12" → (True, True)."""
    gap = t[b:c]
    if len(gap) > 60 or re.search(r"[.!?](?:\s|$)|\n", _ABBREVIATION.sub("", gap)):
        return False, False
    labelled = bool(_CLOCK_LABEL.search(gap))
    core = re.sub(r"\s+", " ", _RESTATE_FILLER.sub(" ", _CLOCK_LABEL.sub(" ", gap))).strip()
    # a bare comma or nothing joins a list ("17:25, 18:25"); a bracket, a cue or a clock's name restates
    if not core and not labelled and "(" not in gap:
        return False, labelled
    # "or" needs the comma, dash or bracket before it, which the filler took: look at the raw gap
    if re.fullmatch(r"(?:or|ou|oder|o)", core, re.I):
        return bool(re.search(r"[,(—–]\s*(?:or|ou|oder|o)\s*$", gap, re.I)), labelled
    return bool(_RESTATE_CUE.fullmatch(core)), labelled


# what offers a time as an alternative to the one before it: "or", "or maybe", ", or perhaps at", "oder vielleicht"
_OR_ANOTHER = re.compile(
    r"\s*[,—–-]?\s*(?:or|ou|oder|o)\s+(?:(?:maybe|perhaps|possibly|even|else|peut-être|vielleicht|quizás|tal\s+vez)"
    r"\s+)?(?:(?:at|around|about|à|um|a\s+las)\s+)?",
    re.I,
)
# what makes the alternative a condition, not a second answer: "17:25, or 17:40 if it runs late"
_CONDITION_AFTER = re.compile(r"\s*,?\s*(?:if|when|should|in\s+case|depending|si|falls|wenn)\b", re.I)


def alternative_time(text: str, at: int, given: str = "") -> str | None:
    """Another time offered beside the time ``at`` as an alternative answer: "arrives 5:25 pm, or maybe 17:50",
    "17:25 or 18:25", "5:25 pm or perhaps 6:25 pm". Two written times next to each other joined by "or" (with
    "maybe", "perhaps"), one ``at`` and the other another instant; the same instant in the other clock ("17:25 or
    5:25 pm"), a duration, another zone's or place's time and a condition ("or 17:40 if it runs late") are none."""
    t = strip_markdown(text)
    found = [x for x in _time_matches(t) if re.search(r"\d", t[x[0] : x[1]])]
    for (a, b, v), (c, d, w) in zip(found, found[1:], strict=False):
        if (v == at) == (w == at) or not _OR_ANOTHER.fullmatch(t, b, c):
            continue
        other, ox, oy = (w, c, d) if v == at else (v, a, b)
        if _duration(t, a, b) or _duration(t, c, d) or _CONDITION_AFTER.match(t, d):
            continue
        if _ZONE_AFTER.match(t, oy) or _elsewhere(t, ox, oy, given):
            continue
        return t[ox:oy].strip()
    return None


def clock_restated(text: str, at: int, given: str = "") -> str | None:
    """A restatement of the time ``at`` in the other clock that is another instant: "22:47 on Tuesday, which is
    11:47 pm in 12-hour format", "17:25, i.e. 7:25 pm", "06:12 on Wednesday; in 24-hour terms that's 18:12",
    "8:47 pm, which in 24-hour notation is 22:47". Two written times next to each other, joined by a restatement
    link (``_restates``), one with am/pm or a half-day word and the other without, or either said to be in a named
    clock ("in 24-hour terms"); one is ``at`` and the other is not. A right one ("22:47, i.e. 10:47 pm") is the
    same instant; another zone's or place's time ("which is 13:47 UTC", "that's 3:47 pm in Paris"), a time said
    in words (a rounded one), an hour alone within half an hour ("22:47 (11 pm)") and a duration ("14:50 + 2:35",
    "2:35 later") are no restatement."""
    t = strip_markdown(text)
    found = [x for x in _time_matches(t) if re.search(r"\d", t[x[0] : x[1]])]
    for (a, b, v), (c, d, w) in zip(found, found[1:], strict=False):
        if (v == at) == (w == at):
            continue
        linked, labelled = _restates(t, b, c)
        if not linked:
            continue
        after = t[d : d + 40]
        labelled = labelled or bool(_CLOCK_LABEL.match(after.lstrip(" ,")))
        twelve = [bool(_HALF_DAY.search(t, x, y)) for x, y in ((a, b), (c, d))]
        if twelve[0] == twelve[1] and not labelled:
            continue  # "17:25, or 18:25": two times in one notation are two times
        other, ox, oy = (w, c, d) if v == at else (v, a, b)
        if _duration(t, a, b) or _duration(t, c, d):
            continue
        # the start of working that reaches ``at``: "5:25 pm (14:50 + 2 h 35 min)"
        if working_start(t, oy, other, at):
            continue
        # another zone's or place's time: "22:47 JST, which is 1:47 pm UTC", "13:47 UTC, i.e. 10:47 pm in Tokyo"
        if _ZONE_AFTER.match(t, oy) or _elsewhere(t, ox, oy, given):
            continue
        # an hour alone is a rounded reading: "22:47 (11 pm)"
        if not re.search(r"\d[:.h]\s?\d", t[ox:oy]) and min(abs(other - at), 1440 - abs(other - at)) <= 30:
            continue
        return t[ox:oy]
    return None


# Clock times said in words ("a quarter past nine", "ten forty-seven pm", "deux heures et demie de l'après-midi",
# "halb acht", "las dos y media de la tarde"): the words for 0-59 in the pack's languages
def _number_words() -> dict[str, dict[str, int]]:
    base = {
        "en": (
            "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen",
            {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50},
            ("-", " "),
        ),
        "fr": (
            "zéro une deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize "
            "dix-sept dix-huit dix-neuf",
            {"vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50},
            ("-", " et "),
        ),
        "de": (
            "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
            "sechzehn siebzehn achtzehn neunzehn",
            {"zwanzig": 20, "dreißig": 30, "vierzig": 40, "fünfzig": 50},
            ("und",),
        ),
        "es": (
            "cero una dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis "
            "diecisiete dieciocho diecinueve",
            {"veinte": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50},
            (" y ",),
        ),
    }
    out: dict[str, dict[str, int]] = {}
    for lang, (units, tens, joins) in base.items():
        words = {w: i for i, w in enumerate(units.split())}
        words[{"en": "oh", "fr": "un", "de": "ein", "es": "uno"}[lang]] = 0 if lang == "en" else 1
        for t, tv in tens.items():
            words[t] = tv
            for u, uv in list(words.items()):
                if not 1 <= uv <= 9:
                    continue
                for j in joins:
                    words[u + j + t if lang == "de" else t + j + u] = tv + uv
        if lang == "es":
            for u, uv in list(words.items()):
                if 1 <= uv <= 9:
                    words["veinti" + u] = 20 + uv
            words.update({"veintidós": 22, "veintitrés": 23, "veintiséis": 26, "veintiún": 21})
        out[lang] = words
    return out


_NUM = _number_words()


def _alt(lang: str, low: int, high: int) -> str:
    words = [w for w, v in _NUM[lang].items() if low <= v <= high]
    return (
        "(?:"
        + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))
        + ")"
    )


def _num(lang: str, word: str) -> int:
    return _NUM[lang][re.sub(r"\s+", " ", word.lower())]


_EN_H, _EN_M = _alt("en", 1, 12), _alt("en", 1, 59)
_FR_H, _FR_M = r"(?:" + _alt("fr", 0, 23) + r"|\d{1,2})", _alt("fr", 1, 59)
_DE_H, _DE_M = r"(?:" + _alt("de", 0, 23) + r"|\d{1,2})", _alt("de", 1, 59)
_ES_H, _ES_M = r"(?:" + _alt("es", 1, 12) + r"|\d{1,2})", _alt("es", 1, 59)
_EN_MM = r"(?:oh\s+" + _alt("en", 1, 9) + "|" + _alt("en", 10, 59) + ")"
# a cue after the time: the morning hour or the afternoon/evening one
_PM_CUE = (
    r"(?:p\.?\s?m\.?|(?:(?:tomorrow|today|this|on\s+\w+|in)\s+)?(?:(?:the\s+)?(?:afternoon|evening)|at\s+night|"
    r"night|tonight)|de\s+l['’]apr[eè]s-midi|du\s+soir|de\s+la\s+(?:tarde|noche)|am\s+(?:Abend|Nachmittag)|"
    r"abends|nachmittags|nachts|(?:heute|morgen)\s+(?:abend|nachmittag|nacht))"
)
_AM_CUE = (
    r"(?:a\.?\s?m\.?|(?:(?:tomorrow|today|this|on\s+\w+|in)\s+)?(?:the\s+)?morning|du\s+matin|de\s+la\s+(?:mañana|"
    r"madrugada)|am\s+(?:Morgen|Vormittag)|morgens|vormittags|(?:morgen\s+|heute\s+)?früh)"
)
_CUE = r"(?:\s*,?\s*(?:(?P<pm>" + _PM_CUE + r")|(?P<am>" + _AM_CUE + r"))\b)?"
_UNIT_AFTER = (
    r"(?!\s*(?:%|percent|per\s*cent|°|degrees?|euros?|dollars?|pounds?|cents?|people|items|km|miles?|kg))"
)
_CUE_RX = re.compile(_CUE, re.I)
# a half of the day said: "pm", "a.m.", "in the evening", "du matin"
_HALF_DAY = re.compile(r"(?:" + _PM_CUE + "|" + _AM_CUE + r")(?!\w)", re.I)
_SPOKEN = [
    # English: "a quarter past nine", "half past seven", "twelve minutes to eleven", "five after six"
    (
        "en",
        r"\b(?:(?P<q>(?:a\s+)?quarter)|(?P<half>half)|(?P<mw>"
        + _EN_M
        + r")(?P<mins>\s+minutes?)?)\s+(?P<rel>past|after|to|till|before)\s+"
        r"(?P<h>" + _EN_H + r"|noon|midnight)\b(?:\s+o['’]clock)?" + _CUE,
    ),
    # "ten forty-seven pm", "seven thirty in the morning", "nine fifteen", "six oh five", "eight o'clock"
    (
        "en",
        r"\b(?P<h>" + _EN_H + r")(?:\s+(?P<mm>" + _EN_MM + r")|(?P<oc>\s+o['’]clock))?" + _UNIT_AFTER + _CUE,
    ),
    # French: "quatorze heures trente", "deux heures et demie de l'après-midi", "trois heures moins le quart"
    (
        "fr",
        r"\b(?:(?P<h>" + _FR_H + r")\s+heures?|(?P<noon>midi|minuit))"
        r"(?:\s+(?:(?P<half>et\s+demie?)|(?P<q>et\s+quart)|moins\s+(?P<qto>le\s+quart)|moins\s+(?P<mto>"
        + _FR_M
        + r")|"
        r"(?P<mm>" + _FR_M + r")))?" + _CUE,
    ),
    # German: "halb acht", "Viertel nach neun", "Viertel vor zehn", "zehn nach sechs", "neun Uhr fünfzehn"
    (
        "de",
        r"\b(?:(?P<half>halb)|(?P<q3>drei\s*viertel)|(?P<q>viertel)\s+(?P<rel>nach|vor)|(?P<mw>"
        + _DE_M
        + r")\s+"
        r"(?:minuten\s+)?(?P<rel2>nach|vor))\s+(?P<h>" + _DE_H + r")\b(?:\s+uhr)?" + _CUE,
    ),
    ("de", r"\b(?P<h>" + _DE_H + r")\s+uhr(?:\s+(?P<mm>" + _DE_M + r"|\d{2}))?" + _CUE),
    # Spanish: "las dos y media de la tarde", "las siete menos cuarto", "la una y diez"
    (
        "es",
        r"\b(?:las?)\s+(?P<h>"
        + _ES_H
        + r")(?:\s+(?:(?P<half>y\s+media)|(?P<q>y\s+cuarto)|menos\s+(?P<qto>cuarto)|"
        r"y\s+(?P<mm>" + _ES_M + r")|menos\s+(?P<mto>" + _ES_M + r")|(?P<oc>en\s+punto)))?" + _CUE,
    ),
]
_SPOKEN_RX = [(lang, re.compile(rx, re.I)) for lang, rx in _SPOKEN]


def _spoken_times(t: str) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for lang, rx in _SPOKEN_RX:
        for m in rx.finditer(t):
            g = m.groupdict()
            hw = (g["h"] or g.get("noon") or "").lower()
            h = 12 if hw in ("noon", "midi") else 0 if hw in ("midnight", "minuit") else None
            if h is None:
                h = int(hw) if hw.isdigit() else _num(lang, hw)
            if h > 23:
                continue
            mi, to = 0, False
            if g.get("half"):
                if lang == "de":
                    h, mi = h - 1, 30
                else:
                    mi = 30
            elif g.get("q3"):
                h, mi = h - 1, 45
            elif g.get("q"):
                mi = 15
                to = (g.get("rel") or "").lower() in ("to", "till", "before", "vor")
            elif g.get("qto"):
                mi, to = 15, True
            elif g.get("mto"):
                mi, to = _num(lang, g["mto"]), True
            elif g.get("mw"):
                mi = _num(lang, g["mw"])
                to = (g.get("rel") or g.get("rel2") or "").lower() in ("to", "till", "before", "vor")
            elif g.get("mm"):
                w = re.sub(r"^oh\s+", "", g["mm"].lower())
                mi = int(w) if w.isdigit() else _num(lang, w)
            spoken_hour_only = not (mi or to or g.get("half") or g.get("q") or g.get("qto") or g.get("q3"))
            if spoken_hour_only and not g.get("mm"):
                # a bare number is no time: only with "o'clock", "heures", "Uhr", an article, or a cue
                if lang in ("en", "es") and not (g.get("oc") or g.get("am") or g.get("pm")):
                    continue
            if lang == "fr" and not (g.get("am") or g.get("pm") or g.get("noon")):
                # "deux heures" may be a duration: a time after "à", "vers", "pour", "dès", "il est"
                before = t[max(0, m.start() - 14) : m.start()]
                if not re.search(
                    r"\b(?:à|vers|pour|dès|avant|après|jusqu['’]à|est|de|entre)\s*$", before, re.I
                ):
                    continue
            if lang == "en" and g.get("mm") and not (g.get("am") or g.get("pm")):
                # "nine fifteen" alone: a time only after "at", "it's", "by", "until", "from" or "for"
                before = t[max(0, m.start() - 12) : m.start()]
                if not re.search(r"\b(?:at|it['’]s|it\s+is|by|until|till|from|for|now)\s*$", before, re.I):
                    continue
            if lang == "en" and to and g.get("mw") and not (g.get("mins") or g.get("am") or g.get("pm")):
                # "five to ten" may be a range: a time with "minutes", a cue, or after "at"/"it's"
                before = t[max(0, m.start() - 12) : m.start()]
                if not re.search(r"\b(?:at|it['’]s|it\s+is|by|until|till|now)\s*$", before, re.I):
                    continue
            if to:
                h, mi = h - 1, 60 - mi
                if h < 0:
                    h = 23
            if g.get("pm") and h < 12:
                h += 12
            elif g.get("am") and h == 12:
                h = 0
            out.append((m.start(), m.end(), (h % 24) * 60 + mi))
    out.sort()
    kept: list[tuple[int, int, int]] = []
    for a, b, v in out:  # the longest reading at a place wins; readings inside it are dropped
        if kept and a < kept[-1][1]:
            if b - a > kept[-1][1] - kept[-1][0]:
                kept[-1] = (a, b, v)
            continue
        kept.append((a, b, v))
    return kept


def parse_clock(s: str) -> int:
    m = re.fullmatch(r"\s*(\d{1,2})[:.h](\d{2})\s*", s)
    if not m:
        raise ValueError(f"not a HH:MM time: {s!r}")
    return int(m.group(1)) * 60 + int(m.group(2))


_MONTHS = {
    "jan": 1,
    "january": 1,
    "enero": 1,
    "janvier": 1,
    "januar": 1,
    "janeiro": 1,
    "gennaio": 1,
    "feb": 2,
    "february": 2,
    "febrero": 2,
    "février": 2,
    "fevrier": 2,
    "februar": 2,
    "fevereiro": 2,
    "febbraio": 2,
    "mar": 3,
    "march": 3,
    "marzo": 3,
    "mars": 3,
    "märz": 3,
    "marz": 3,
    "março": 3,
    "marco": 3,
    "apr": 4,
    "april": 4,
    "abril": 4,
    "avril": 4,
    "aprile": 4,
    "may": 5,
    "mayo": 5,
    "mai": 5,
    "maio": 5,
    "maggio": 5,
    "jun": 6,
    "june": 6,
    "junio": 6,
    "juin": 6,
    "juni": 6,
    "junho": 6,
    "giugno": 6,
    "jul": 7,
    "july": 7,
    "julio": 7,
    "juillet": 7,
    "juli": 7,
    "julho": 7,
    "luglio": 7,
    "aug": 8,
    "august": 8,
    "agosto": 8,
    "août": 8,
    "aout": 8,
    "sep": 9,
    "sept": 9,
    "september": 9,
    "septiembre": 9,
    "septembre": 9,
    "setembro": 9,
    "settembre": 9,
    "oct": 10,
    "october": 10,
    "octubre": 10,
    "octobre": 10,
    "oktober": 10,
    "outubro": 10,
    "ottobre": 10,
    "nov": 11,
    "november": 11,
    "noviembre": 11,
    "novembre": 11,
    "novembro": 11,
    "dec": 12,
    "december": 12,
    "diciembre": 12,
    "décembre": 12,
    "decembre": 12,
    "dezember": 12,
    "dezembro": 12,
    "dicembre": 12,
}


_WEEKDAYS = {
    "mon": 0,
    "monday": 0,
    "lunes": 0,
    "lundi": 0,
    "montag": 0,
    "segunda": 0,
    "lunedì": 0,
    "lunedi": 0,
    "tue": 1,
    "tues": 1,
    "tuesday": 1,
    "martes": 1,
    "mardi": 1,
    "dienstag": 1,
    "terça": 1,
    "martedì": 1,
    "wed": 2,
    "wednesday": 2,
    "miércoles": 2,
    "miercoles": 2,
    "mercredi": 2,
    "mittwoch": 2,
    "quarta": 2,
    "mercoledì": 2,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "thursday": 3,
    "jueves": 3,
    "jeudi": 3,
    "donnerstag": 3,
    "quinta": 3,
    "giovedì": 3,
    "giovedi": 3,
    "fri": 4,
    "friday": 4,
    "viernes": 4,
    "vendredi": 4,
    "freitag": 4,
    "sexta": 4,
    "venerdì": 4,
    "sat": 5,
    "saturday": 5,
    "sábado": 5,
    "sabado": 5,
    "samedi": 5,
    "samstag": 5,
    "sabato": 5,
    "sun": 6,
    "sunday": 6,
    "domingo": 6,
    "dimanche": 6,
    "sonntag": 6,
    "domenica": 6,
}


_MON_ALT = "|".join(sorted((re.escape(k) for k in _MONTHS), key=len, reverse=True))


_WD_ALT = "|".join(sorted((re.escape(k) for k in _WEEKDAYS), key=len, reverse=True))


# an ISO date, also where a time follows it in one ISO 8601 datetime ("2025-09-15T07:30")
DATE_ISO = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:\b|(?=T\d))")


DATE_NUMERIC = re.compile(r"\b(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<y>\d{4}|\d{2})\b")


# "le 01/05", "am 8/5", "am 01.05.": without a year only after an article or preposition, at the head of a line, a
# list item ("- 01/05 : Fête du Travail", "1. 19/04") or a table cell ("| 13/03 |"); "17/9 °C" is a high and a low
_DAY_MONTH = (
    r"(?:(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\d/]|\.\d)|(?P<a2>\d{1,2})\.(?P<b2>\d{1,2})\.(?![\d/]))(?!\s*[°º%])"
)


_DATE_DAY_MONTH = re.compile(
    r"(?:\b(?:le|el|il|am|on|du|au|vom|dal|del|de|the|los|las|les|den|op) |[:,] |^[ \t]*(?:[-*•+][ \t]+|\d{1,2}[.)][ \t]+)?"
    r"|\|[ \t]*)" + _DAY_MONTH,
    re.I | re.M,
)


# any day/month ("01/05", "29.05.") and what joins two items of a list of them on one line: a comma or a
# conjunction, with the item's name in brackets ("01/05 (Fête du Travail), 08/05 et 29/05")
_DAY_MONTH_ANY = re.compile(r"(?<![\w/.,])" + _DAY_MONTH + r"(?!\s+(?:of|de|des|del|der|von|di|van)\b)", re.I)


_LIST_JOIN = re.compile(
    r"(?:\s*\([^()\n]{0,40}\))?\s*(?:[,;]|[,;]?\s*\b(?:and|or|then|et|ou|puis|y|o|e|ou|und|oder|en|of)\b)"
    r"\s*(?:(?:le|el|il|am|the|den|op)\s+)?",
    re.I,
)


def _day_month(m: re.Match[str]) -> tuple[int, int]:
    """(day, month) of a day/month match: day first unless only month first is possible."""
    a, b = (
        (int(m.group("a")), int(m.group("b"))) if m.group("a") else (int(m.group("a2")), int(m.group("b2")))
    )
    return (b, a) if a <= 12 < b else (a, b)


DATE_WORDS_DM = re.compile(
    r"\b(?P<d>\d{1,2})(?:st|nd|rd|th|er|º|\.)?\s+(?:de\s+|of\s+)?(?P<mon>" + _MON_ALT + r")\.?(?![a-z])"
    r"(?:,?\s+(?:de\s+)?(?P<y>\d{4}))?",
    re.I,
)


DATE_WORDS_MD = re.compile(
    r"\b(?P<mon>" + _MON_ALT + r")\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?!:)(?:,?\s+(?P<y>\d{4}))?", re.I
)


# the first day of a day range before one month ("between 1 and 31 March", "from 1 to 31 March", "1–31 March",
# "du 1 au 31 mars", "vom 1. bis 31. März"): a date, like the day DATE_WORDS_DM reads after it; a word joiner
# needs its lead ("between", "from", "du", …), a dash none
_DAY_SUFFIX = r"(?:st|nd|rd|th|er|º|\.)?"
DAY_RANGE_START = re.compile(
    r"(?:\b(?:between|from|du|del|dal|de|entre|von|vom|van|tra)\s+(?:the\s+|le\s+|el\s+|dem\s+)?"
    r"(?P<d>\d{1,2})"
    + _DAY_SUFFIX
    + r"\s*(?:and|to|until|till|through|thru|au|al|a|et|y|e|bis|zum|tot|en|[-–—])\s*"
    r"|(?<![\d.,])\b(?P<d2>\d{1,2})" + _DAY_SUFFIX + r"\s*[-–—]\s*)"
    r"(?:the\s+|le\s+|el\s+)?(?=\d{1,2}"
    + _DAY_SUFFIX
    + r"\s+(?:de\s+|of\s+)?(?:"
    + _MON_ALT
    + r")\.?(?![a-z]))",
    re.I,
)

# a day range after its month ("March 1-31", "March 1st to 31st, 2025"): both days and the year
DAY_RANGE_MD = re.compile(
    r"\b(?:" + _MON_ALT + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?\s*(?:[-–—]|to|through|thru|until|till)\s*"
    r"\d{1,2}(?:st|nd|rd|th)?\b(?![:.,]\d)(?:,?\s+\d{4})?",
    re.I,
)


MONTH_YEAR = re.compile(r"\b(?:" + _MON_ALT + r")\.?,?\s+(?:de\s+)?\d{4}\b", re.I)


_WD_RX = re.compile(r"\b(?P<wd>" + _WD_ALT + r")\b\.?", re.I)

# what may stand between a time and its restatement: the day, the place, a zone name ("22:47 JST on Tuesday")
_RESTATE_FILLER = re.compile(
    r"(?i:\b(?:on\s+)?(?:" + _WD_ALT + r")\b)|\blocal\s+time\b|\b(?:right\s+)?now\b|\bcurrently\b|"
    r"\b(?:in|at|à|en)\s+[A-Z][\w’'-]+(?:\s+[A-Z][\w’'-]+)?|\b[A-Z]{2,5}\b|[,;:—–*]|\s-\s|\)",
)


@dataclass
class DateMention:
    date: _dt.date
    text: str
    pos: int
    weekday: int | None = None  # a weekday written right next to it


# a weekday and a day of the month with no month: "Friday the 21st", "Fri 21st", "vendredi 21", "Freitag, den 21.",
# "jeudi 1er", or the day first: "the 21st, a Friday", "le 21, un vendredi"; a bare number after the weekday counts
# only where nothing makes it a time or a count ("Friday 9:15", "Friday 10 am", "Friday 2 hours" are none; a colon
# before words is a list item's label: "jeudi 1er : Fête du Travail")
_WD_DAY = re.compile(
    r"\b(?P<wd>"
    + _WD_ALT
    + r")\b\.?,?\s+(?:(?P<art>the|le|el|den|der|il|am)\s+)?(?P<d>\d{1,2})(?P<ord>st|nd|rd|th|er|re|º|\.)?"
    r"(?![\d:/.,]\d|[\w%°€$£¥]|\s*(?::\s*\d|[/%°€$£¥]|[-–—]\s*\d|h\b|[ap]\.?m\b|uhr\b|heures?\b|o.clock|\d))"
    r"|\b(?:(?P<art2>the|le|el|den|il|am)\s+)?(?P<d2>\d{1,2})(?P<ord2>st|nd|rd|th|er|re|º|\.)?,?\s+"
    r"(?:(?:which\s+is|that\s+is|c.est|ce\s+sera|es|ist)\s+)?(?:(?:a|an|un|une|ein|einem|el|le)\s+)?(?P<wd2>"
    + _WD_ALT
    + r")\b",
    re.I,
)
_WD_DAY_END = re.compile(
    r"\s*(?:$|[.,;:!?()\[\]\n—–]|(?:at|and|et|à|um|a|y|e|und|from|for|in|on|de)\b)", re.I
)


def _short_lowercase(word: str) -> bool:
    """A weekday word of four letters or fewer in lower case ("tue", "sun"): an abbreviation that may be an
    ordinary word ("lundi" and "mardi" are whole words)."""
    return len(word) <= 4 and not word[:1].isupper() and word.lower() not in ("lundi", "mardi")


def _weekday_days(t: str) -> list[tuple[int, int, int, int]]:
    """(day of the month, weekday, position and end of the day) for each weekday said with a day and no month."""
    out = []
    cells = _table_values(t)
    for m in _WD_DAY.finditer(t):
        first = m.group("wd") is not None
        word = m.group("wd") if first else m.group("wd2")
        lw = word.lower()
        if lw not in _WEEKDAYS or _short_lowercase(word):
            continue
        g = "d" if first else "d2"
        marked = m.group("art" if first else "art2") or m.group("ord" if first else "ord2")
        if not marked and (not first or _WD_DAY_END.match(t, m.end()) is None):
            continue  # "Friday 21" needs an end after it; "21 Friday" is no date
        if not first and m.group("art2") is None and m.group("ord2") in (None, "."):
            continue
        if marked in (None, "", ".") and (_WEEKDAYS[lw], int(m.group(g))) in cells:
            continue  # "Tue 21" where the table gives Tuesday's value as 21: that value, not a date
        out.append((int(m.group(g)), _WEEKDAYS[lw], m.start(g), m.end(g)))
    return out


def _table_values(t: str) -> set[tuple[int, int]]:
    """(weekday, number) for each whole number in a markdown table's cell in the row or column of a cell that
    is a weekday ("| Tue | 21 | 10 % |"): a value of that day (a high, a price), not a day of the month; a cell
    that holds a date ("2025-06-03") gives none."""
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in t.splitlines()
        if line.strip().startswith("|") and not re.fullmatch(r"[\s|:-]*", line)
    ]
    out: set[tuple[int, int]] = set()
    for row in rows:
        for j, cell in enumerate(row):
            wd = _WEEKDAYS.get(cell.lower().rstrip("."))
            if wd is None:
                continue
            beside = [c for c in row + [r[j] for r in rows if j < len(r)] if not re.search(r"\d[-/.]\d", c)]
            out |= {(wd, int(n)) for c in beside for n in re.findall(r"(?<![\d.,])\d{1,2}(?![\d.,]\d)", c)}
    return out


def dates(
    text: str, default_year: int | None = None, months: tuple[tuple[int, int], ...] = ()
) -> list[DateMention]:
    """Calendar dates: 2025-03-13, 13/03/2025 (day first unless impossible), Thu 13 Mar, March 13th, 13 de marzo.
    With ``months`` (the (year, month) pairs the conversation is about, first the likeliest), a weekday and a day
    with no month ("Friday the 21st", "jeudi 8") is that day in the month where the weekday agrees, else in the
    first month (a date that then conflicts with its weekday)."""
    t = strip_markdown(text)
    out: list[DateMention] = []
    taken: list[tuple[int, int]] = []

    def add(y: int | None, mo: int, d: int, m: re.Match[str] | tuple[int, int]) -> None:
        start, end = (m.start(), m.end()) if isinstance(m, re.Match) else m
        if any(a <= start < b for a, b in taken):
            return
        y = y or default_year
        if y is None:
            return
        try:
            date = _dt.date(y, mo, d)
        except ValueError:
            return
        taken.append((start, end))
        before = t[max(0, start - 14) : start]
        after = t[end : end + 14]
        wd = None
        mb = re.search(r"\b(" + _WD_ALT + r")\b\.?,?\s*(the\s+|le\s+|el\s+|den\s+)?$", before, re.I)
        ma = re.match(r"\s*\(?\s*(" + _WD_ALT + r")\b", after, re.I)
        hit = mb or ma
        if hit:
            wd = _WEEKDAYS.get(hit.group(1).lower())
        out.append(DateMention(date, t[start:end], start, wd))

    for m in DATE_ISO.finditer(t):
        add(int(m.group("y")), int(m.group("m")), int(m.group("d")), m)
    for m in DATE_NUMERIC.finditer(t):
        a, b, y = int(m.group("a")), int(m.group("b")), int(m.group("y"))
        y = y + 2000 if y < 100 else y
        d, mo = (a, b) if b <= 12 else (b, a)
        if a <= 12 and b > 12:
            d, mo = b, a
        add(y, mo, d, m)
    if default_year is not None:  # "le 01/05": day first, the year the scenario gives
        for m in _DATE_DAY_MONTH.finditer(t):
            d, mo = _day_month(m)
            add(None, mo, d, m)
        # a list of them in prose ("01/05 (…), 08/05 (…) et 29/05", "am 01.05. und 29.05."): items joined by commas
        # or conjunctions, in calendar order ("24/7 et 7/7" is no list), once one item is read as a date or all are
        # written with two digits each (dates are zero-padded, fractions and ratios are not)
        items: list[re.Match[str] | None] = [*_DAY_MONTH_ANY.finditer(t), None]
        run: list[re.Match[str]] = []
        for nxt in items:
            if nxt is not None and run and _LIST_JOIN.fullmatch(t, run[-1].end(), nxt.start()) is not None:
                run.append(nxt)
                continue
            padded = all(re.fullmatch(r"\d\d[/.]\d\d\.?", r.group(0)) for r in run)  # "08/05", never "3/4"
            if len(run) >= 2 and (padded or any(any(a <= r.start() < b for a, b in taken) for r in run)):
                days = [_day_month(r) for r in run]
                if all((x[1], x[0]) < (y[1], y[0]) for x, y in zip(days, days[1:], strict=False)):
                    for r, (d, mo) in zip(run, days, strict=True):
                        add(None, mo, d, r)
            run = [nxt] if nxt is not None else []
    for rx in (DATE_WORDS_DM, DATE_WORDS_MD):
        for m in rx.finditer(t):
            mon = _MONTHS.get(m.group("mon").lower().rstrip("."))
            if mon is None:
                continue
            add(int(m.group("y")) if m.group("y") else None, mon, int(m.group("d")), m)
            if (
                rx is DATE_WORDS_DM
            ):  # "les 1er, 8 et 29 mai", "1, 8 and 29 May": the days before share the month
                year = int(m.group("y")) if m.group("y") else None
                pos, rx_item = m.start(), _LIST_DAY_LAST
                while (item := rx_item.search(t, 0, pos)) is not None:
                    add(year, mon, int(item.group("d")), (item.start("d"), item.end("d")))
                    pos, rx_item = item.start(), _LIST_DAY_BEFORE
            else:  # "May 1, 8 and 29"
                year, pos = (int(m.group("y")) if m.group("y") else None), m.end()
                chain = _LIST_DAYS_AFTER.match(t, pos)
                if chain is not None:
                    for item in re.finditer(r"\d{1,2}", chain.group(0)):
                        add(year, mon, int(item.group(0)), (pos + item.start(), pos + item.end()))
    for m in _DATE_SPELLED.finditer(t):
        word = m.group("mon") or m.group("mon2")
        mon = _MONTHS.get(word.lower().rstrip("."))
        if mon is not None and word[:1].isupper():
            nth = _ORDINAL_DAYS[re.sub(r"[-\s]+", " ", (m.group("w") or m.group("w2")).lower())]
            add(None, mon, nth, m)
    # "En mai 2025 : le 1er (…), le 8 (…) et le 29": a day after an article, under the month named before it
    for m in _ARTICLE_DAY.finditer(t):
        g = "d" if m.group("d") else "d2"
        if any(a <= m.start(g) < b for a, b in taken):
            continue
        context = None
        for c in _MONTH_CONTEXT.finditer(t, 0, m.start()):
            # a month word is a context after a preposition, with a year, or capitalised ("you may" is not May)
            if c.group("pre") or c.group("y") or c.group("mon")[:1].isupper():
                context = c
        mon = _MONTHS.get(context.group("mon").lower().rstrip(".")) if context else None
        if context is not None and mon is not None:
            year = int(context.group("y")) if context.group("y") else None
            add(year, mon, int(m.group(g)), (m.start(g), m.end()))
    for d, wd, start, end in _weekday_days(t):
        own = None  # a month the answer names before it ("En mai 2025 : jeudi 8") comes first
        for c in _MONTH_CONTEXT.finditer(t, 0, start):
            if c.group("pre") or c.group("y") or c.group("mon")[:1].isupper():
                own = c
        mon = _MONTHS.get(own.group("mon").lower().rstrip(".")) if own else None
        year = int(own.group("y")) if own and own.group("y") else default_year
        valid = []
        for y, mo in ([(year, mon)] if mon and year else []) + list(months):
            try:
                valid.append(_dt.date(y, mo, d))
            except ValueError:
                continue
        if not valid or any(a <= start < b for a, b in taken):
            continue
        day = next((x for x in valid if x.weekday() == wd), valid[0])
        taken.append((start, end))
        out.append(DateMention(day, t[start:end], start, wd))
    out.sort(key=lambda x: x.pos)
    return out


_ORD = r"(?:st|nd|rd|th|er|re|º|\.)?"


_LINK_WORDS = r"(?:" + _WD_ALT + r"|le|les|el|los|il|the|den|am|on|du|de)"


def _list_day(joint: str) -> re.Pattern[str]:
    """A day at the end of the text before a later day of its list, followed by ``joint`` (what joins it on)."""
    return re.compile(
        r"(?:\b"
        + _LINK_WORDS
        + r"\s+)*\b(?P<d>\d{1,2})"
        + _ORD
        + joint
        + r"\s*(?:"
        + _LINK_WORDS
        + r"\s+)*$",
        re.I,
    )


# one more day of a list that ends in "<day> <month>": "1er, " / "8 et " / "jeudi 8 et jeudi "
_LIST_DAY_BEFORE = _list_day(r"\s*(?:,|\bet\b|\band\b|\by\b|\bund\b|\be\b|\ben\b|&)")
# the day just before the last one: joined by a conjunction ("8 et 29 mai"; "Order 3, 8 May" is no list)
_LIST_DAY_LAST = _list_day(r"\s*,?\s*(?:\bet\b|\band\b|\by\b|\bund\b|\be\b|&)")


# the days after "<month> <day>" in a list: ", 8 and 29" (ends with a conjunction before the last day)
_LIST_DAYS_AFTER = re.compile(
    r"(?:\s*,\s*\d{1,2}(?:st|nd|rd|th)?\b(?![:.,]?\d|\s*[%°€$£]))*\s*,?\s*(?:and|et|y|und|e|&)\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"(?![:.,]?\d|\s*[%°€$£])",
    re.I,
)


# a day of the month spelled as an English ordinal: "first" … "thirty-first" (spoken answers, read-aloud styles)
_DAY_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_ORDINAL_DAYS = {
    **{w: i + 1 for i, w in enumerate(_DAY_ORDINALS)},
    **{f"twenty {w}": i + 21 for i, w in enumerate(_DAY_ORDINALS[:9])},
    "thirtieth": 30,
    "thirty first": 31,
}
_ORDINAL_ALT = "|".join(sorted((w.replace(" ", "[-\\s]") for w in _ORDINAL_DAYS), key=len, reverse=True))
# "March twenty-first", "on the twenty-first of March": a month (capitalised: "you may first" is none) and a day
_DATE_SPELLED = re.compile(
    r"\b(?P<mon>" + _MON_ALT + r")\.?\s+(?:the\s+)?(?P<w>" + _ORDINAL_ALT + r")\b"
    r"|\b(?P<w2>" + _ORDINAL_ALT + r")\s+of\s+(?P<mon2>" + _MON_ALT + r")\b",
    re.I,
)


# a day after an article, with no month of its own: "le 8", "el 29", "am 8.", "the 8th" (ordinal needed in English)
_ARTICLE_DAY = re.compile(
    r"\b(?:(?:le|el|il|am|op|dem)\s+(?P<d>\d{1,2})(?:er|re|º|\.)?|the\s+(?P<d2>\d{1,2})(?:st|nd|rd|th))"
    r"(?![\d:/.,]\d|\s*(?:[%°€$£:/]|h\b|heures?\b|uhr\b|\d))",
    re.I,
)


# a month named as the context of what follows: "en mai 2025", "Mai 2025 :", "in May", "im Mai"
_MONTH_CONTEXT = re.compile(
    r"(?:\b(?P<pre>en|in|im|de|di|em|of|mois de|mes de|mese di|maand)\s+|^|(?<=\s))(?P<mon>"
    + _MON_ALT
    + r")\b\.?"
    r"(?:,?\s+(?:de\s+)?(?P<y>\d{4}))?",
    re.I,
)


_WD_AMBIGUOUS = {"sun", "sat", "segunda", "terça", "quarta", "quinta", "sexta"}  # also ordinary words


# where an abbreviation, even a lowercase one or one that is also an ordinary word ("sun", "sat", "wed"), stands as
# a day: right after a clock time or a date ("22:47 tue", "2025-06-03 tue"), in a day slot ("day: wed",
# "weekday=thu"), or right before a clock time or a date ("wed 06:12", "thu 21 mar")
_WD_SLOT_BEFORE = re.compile(
    r"(?:\b\d{1,2}[:h]\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?|\b\d{4}-\d{2}-\d{2}|\b(?:week)?day\s*[:=])"
    r"\s*(?:\([A-Za-z]{2,5}\))?\s*[,/|-]?\s*$",
    re.I,
)
_WD_SLOT_AFTER = re.compile(
    r"\.?,?\s*(?:\d{1,2}[:h]\d{2}\b|\d{4}-\d{2}-\d{2}\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:" + _MON_ALT + r")\b)",
    re.I,
)


def weekdays(text: str) -> list[int]:
    """Weekdays named in the text: full names, capitalised abbreviations ("Thu"); words that are also ordinary
    words ("Sun", "segunda") only when a date or "-feira" follows; a lowercase abbreviation ("tue", "sun") only
    where it stands as a day, beside a clock time or a date or in a day slot ("22:47 tue", "day: wed")."""
    t = strip_markdown(text)
    out = []
    for m in _WD_RX.finditer(t):
        w = m.group("wd")
        lw = w.lower()
        if lw not in _WEEKDAYS:
            continue
        as_day = bool(
            _WD_SLOT_BEFORE.search(t[max(0, m.start() - 40) : m.start()])
            or _WD_SLOT_AFTER.match(t[m.end("wd") :])
        )
        if lw in _WD_AMBIGUOUS and not as_day and not re.match(r"(-feira|\.?,?\s*\d)", t[m.end("wd") :]):
            continue
        if _short_lowercase(w) and not as_day:
            continue
        out.append(_WEEKDAYS[lw])
    return out


# what places a date outside the list it stands beside: "the next one", "le suivant", "then", "after that", "in
# June" (a preposition and a month), "outside"
_OUTSIDE_LIST = re.compile(
    r"\b(next|following|after|afterwards|later|then|outside|prochain\w*|suivant\w*|apr[eè]s|ensuite|puis|hors|"
    r"n[aä]chste\w*|danach|sp[aä]ter|siguiente\w*|pr[oó]xim\w*|despu[eé]s|luego|successiv\w*|prossim\w*|dopo|"
    r"poi|volgende|daarna)\b"
    rf"|\b(in|en|im|a|au mois de|in the month of)\s+(?:{_MON_ALT})\b",
    re.I,
)
_ITEM_LINE = re.compile(r"^\s*([-*•+]|\d{1,2}[.)]|\|)\s*")
_BRACKETS = re.compile(r"\([^()\n]*\)")
_PROSE_JOIN = re.compile(r"(,|;|:|\band\b|\bet\b|\by\b|\bund\b|\be\b|\ben\b|&)")


def _item_runs(lines: list[str]) -> list[tuple[int, int]]:
    """The first and last index of each run of consecutive bulleted, numbered or table lines."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if not _ITEM_LINE.match(lines[i]):
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and _ITEM_LINE.match(lines[j + 1]):
            j += 1
        runs.append((i, j))
        i = j + 1
    return runs


def _joined(t: str, x: DateMention, y: DateMention, words: int = 2) -> bool:
    """Does ``y`` follow ``x`` as the next item of one prose list: a comma or a conjunction closely before it ("et
    le 9 juin", ", lundi 9 juin", a name in brackets in between); "; Pentecôte tombe le 9 juin" is a clause of its
    own, and "le suivant est le 9 juin" sets it apart."""
    # (a mention may begin with the separator before it: ", 08/05")
    lead = y.text[: len(y.text) - len(y.text.lstrip(" ,;:"))]
    gap = _BRACKETS.sub(" ", t[x.pos + len(x.text) : y.pos]) + lead
    joins = list(_PROSE_JOIN.finditer(gap))
    return (
        bool(joins)
        and len(gap) <= 30
        and "\n" not in gap
        and not re.search(r"[.!?](\s|$)", gap)
        and len(re.findall(r"\w+", gap[joins[-1].end() :])) <= words
        and not _OUTSIDE_LIST.search(gap)
    )


def _prose_runs(t: str, found: list[DateMention], words: int = 2) -> list[list[DateMention]]:
    """The runs of dates (sorted by position) joined one to the next as items of a prose list (at most ``words``
    words between the comma or conjunction and the item)."""
    groups: list[list[DateMention]] = []
    for dm in found:
        if groups and _joined(t, groups[-1][-1], dm, words):
            groups[-1].append(dm)
        else:
            groups.append([dm])
    return groups


def listed_among(text: str, wanted: set[str], default_year: int | None = None) -> set[str]:
    """Dates (ISO) the text lists among ``wanted`` ones: in one prose list ("le 8 mai, le 29 mai et le 9 juin", a
    name in brackets or after a colon in between) or as items of one bulleted list or table, where the wanted
    dates are most of the list (a list of the whole year's dates is no list of the asked ones). A date set apart
    as lying elsewhere ("le suivant est le 9 juin", "in June") is not listed."""
    t = strip_markdown(text)
    found = sorted(dates(t, default_year), key=lambda d: d.pos)
    lines = t.splitlines(keepends=True)
    starts = [sum(len(x) for x in lines[:i]) for i in range(len(lines))]

    def line_of(pos: int) -> int:
        return max(i for i, a in enumerate(starts) if a <= pos)

    groups = _prose_runs(t, found)  # prose lists: runs of dates joined one to the next
    for i, j in _item_runs(lines):  # bulleted lists and tables: runs of item lines
        groups.append(
            [d for d in found if i <= line_of(d.pos) <= j and not _OUTSIDE_LIST.search(lines[line_of(d.pos)])]
        )
    out: set[str] = set()
    for g in groups:
        isos = {d.date.isoformat() for d in g}
        extra = isos - wanted
        if extra and len(isos & wanted) > len(extra):
            out |= extra
    return out


# a weekday, also in the plural ("the Fridays", "les vendredis", "die Freitage")
_WD_PLURAL = rf"(?:{_WD_ALT})(?:s|e|en)?"
# what names a date as another kind of day than the ones asked (a holiday): a bridge day or a long weekend ("ponts
# possibles les vendredis 2, 9 et 30 mai", "bridge days", "hacer puente", "Brückentag"), a weekend, a working day, the
# day or the weekend before or after ("le lendemain", "la veille", "the Friday after", "el fin de semana siguiente",
# "das Wochenende danach", "le week-end qui suit l'Ascension")
_OTHER_DAY = re.compile(
    r"\b(?:bridge(?:\s+days?)?|long\s+week-?ends?|ponts?|week-?ends?|fin(?:es)?\s+de\s+semana|puentes?|br[üu]ckentag\w*|"
    r"(?:lange[ns]?\s+)?wochenende\w*|working\s+days?|business\s+days?|jours?\s+ouvr(?:[ée]s?|ables?)|"
    r"d[ií]as?\s+(?:laborables?|h[aá]bil(?:es)?)|werktag\w*|arbeitstag\w*|lendemain|veille|vortag|"
    rf"(?:day|{_WD_PLURAL}|jours?|d[ií]as?|tag(?:e|en)?)\s+(?:after|before|later|earlier|suivants?|"
    r"pr[ée]c[ée]dents?|d['’]avant|d['’]apr[eè]s|siguientes?|anteriores?|posteriores?|despu[eé]s|antes|danach|"
    r"davor|darauf|zuvor)|"
    rf"(?:following|preceding|previous|folgenden?|darauf\s*folgenden?|vorherigen?)\s+(?:days?|{_WD_PLURAL}|tag\w*|"
    r"wochenende)|(?:qui|que|die|which|that)\s+(?:suiv|sigu|pr[ée]c[èée]d|follow|precede|folg)\w*"
    r")\b",
    re.I,
)
# a date said, after all, to be one of the asked kind: "le 30 mai, est également férié", "is a holiday too", "ist
# ebenfalls ein Feiertag"
_CLAIMED_HOLIDAY = re.compile(
    r"\b(?:est|sont|is|are|es|son|ist|sind|ser[aá]|will\s+be)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?:f[ée]ri[ée]s?|(?:bank\s+|public\s+)?holidays?|festiv[oa]s?|feriad[oa]s?|feiertag\w*)\b",
    re.I,
)
_NOT_CLAIMED = re.compile(r"\b(?:not|pas|no|nicht|kein\w*|ni)\b", re.I)
# where a sentence or a line of the answer ends: "29. The weekend before" ends one, "2." of "Freitag, 2. Mai" none
_SEGMENT_END = re.compile(
    rf"(?<!\d)[.!?](?=\s|$)|(?<=\d)\.(?=\s+(?!(?i:{_MON_ALT})\b)[A-ZÀ-Ý]|\s*$)|\n", re.M
)


def _segments(t: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line of ``t``."""
    out, start = [], 0
    for m in _SEGMENT_END.finditer(t):
        out.append((start, m.end()))
        start = m.end()
    return out + [(start, len(t))]


def _other_day_columns(t: str) -> list[tuple[int, int]]:
    """Spans of the table cells under a header that names another kind of day ("| Jour férié | Date | Pont
    possible |": the third cell of each row below)."""
    spans: list[tuple[int, int]] = []
    header: list[bool] | None = None
    pos = 0
    for line in t.splitlines(keepends=True):
        body = line.strip()
        if not body.startswith("|"):
            header = None
        elif re.fullmatch(r"[\s|:-]*", body):
            pass  # the row of dashes under the header
        else:
            bars = [pos + i for i, c in enumerate(line) if c == "|"]
            cells = list(zip(bars, bars[1:], strict=False))
            if header is None:
                header = [bool(_OTHER_DAY.search(t, a, b)) for a, b in cells]
            else:
                spans += [c for c, other in zip(cells, header, strict=False) if other]
        pos += len(line)
    return spans


def named_as_other(text: str, wanted: set[str], default_year: int | None = None) -> set[str]:
    """Dates (ISO) the text names as another kind of day than the ``wanted`` ones: in a sentence that calls them
    bridge days, the day after or before, a weekend or a working day ("Trois jeudis, donc attention aux ponts
    possibles les vendredis 2, 9 et 30 mai", "the Friday after, 2 May, is a good bridge day", "el viernes 2 de
    mayo muchos hacen puente", "Brückentage: Freitag, 2. Mai"), with no wanted date between the word and the
    date, or in a table column headed so ("| Pont possible |"). A date listed with the wanted ones ("le 1er,
    le 2 et le 8 mai, de beaux ponts") or said to be of their kind after all ("le lendemain, le 30 mai, est
    également férié") is not set apart."""
    t = strip_markdown(text)
    found = sorted(dates(t, default_year), key=lambda d: d.pos)
    with_wanted = {
        id(d) for run in _prose_runs(t, found) if any(x.date.isoformat() in wanted for x in run) for d in run
    }
    columns = _other_day_columns(t)
    # an item of a bulleted list of the wanted dates ("- 9 juin : Lundi de Pentecôte (pont de mai)") is listed
    listed = listed_among(t, wanted, default_year)
    out: set[str] = set()
    for start, end in _segments(t):
        here = [d for d in found if start <= d.pos < end]
        cue = [m.span() for m in _OTHER_DAY.finditer(t, start, end)]
        wanted_at = [x.pos for x in here if x.date.isoformat() in wanted]
        for d in here:
            iso = d.date.isoformat()
            if iso in wanted or iso in listed or id(d) in with_wanted:
                continue
            stop = min([x.pos for x in here if x.pos > d.pos] + [end])
            claim = _CLAIMED_HOLIDAY.search(t, d.pos + len(d.text), stop)
            if claim is not None and not _NOT_CLAIMED.search(claim.group(0)):
                continue
            in_column = any(a < d.pos < b for a, b in columns)
            # the word and the date with no wanted date between them ("le 1er mai ; le lendemain, 2 mai")
            reach = [(d.pos, a) if a > d.pos else (b, d.pos) for a, b in cue]
            if in_column or any(not any(lo < w < hi for w in wanted_at) for lo, hi in reach):
                out.add(iso)
    return out


def asides_outside(text: str, wanted: set[str], told: set[str], default_year: int | None = None) -> set[str]:
    """Dates (ISO) the text gives as an aside outside the asked period, the months of the ``wanted`` dates: dates
    the conversation gave (``told``, true ones) and not listed among the wanted ones. "À noter : le lundi de
    Pentecôte est le 9 juin" beside May's holidays is context, not a May holiday; "…, le 8 mai et le 9 juin" lists
    it, and "l'Ascension tombe le 5 juin", a date nobody gave, places a holiday wrongly."""
    months = {w[:7] for w in wanted}
    listed = listed_among(text, wanted, default_year)
    return {
        iso
        for d in dates(text, default_year)
        if (iso := d.date.isoformat())[:7] not in months and iso in told and iso not in listed
    }


def weekday_index(name: str) -> int:
    return _WEEKDAYS[name.strip().lower()]


def weekday_conflicts(
    text: str, default_year: int | None = None, months: tuple[tuple[int, int], ...] = ()
) -> list[str]:
    out = []
    for dm in dates(text, default_year, months):
        if dm.weekday is not None and dm.weekday != dm.date.weekday():
            out.append(f"{dm.text!r} is a {dm.date.strftime('%A')}, not the weekday written next to it")
    return out


_RECOMMEND = re.compile(
    r"\b(best|go for|pick|picks|recommend\w*|choose|choice|ideal|your day|plan (it|the \w+) for|winner|"
    r"perfect|i'?d (go|pick|choose|say)|top pick|answer|warmest|cheapest|driest)\b",
    re.I,
)


def _option_hits(text: str, options: list[str], year: int | None = None) -> list[tuple[int, str]]:
    """(position, option) for every option named in ``text``; a weekday option also matches its
    abbreviations, other languages and dates that fall on it."""
    hits: list[tuple[int, str]] = []
    folded = fold(text)
    for opt in options:
        wd = _WEEKDAYS.get(opt.lower())
        if wd is not None:
            hits += [
                (m.start(), opt)
                for m in _WD_RX.finditer(text)
                if _WEEKDAYS.get(m.group("wd").lower()) == wd and m.group("wd").lower() in _WEEKDAYS
            ]
            hits += [(d.pos, opt) for d in dates(text, year) if d.date.weekday() == wd]
        else:
            hits += [(m.start(), opt) for m in re.finditer(rf"\b{re.escape(fold(opt))}\b", folded)]
    return sorted(set(hits))


# what may stand between two options of a list: a separator ("," "and" "or"), after the options' own data
# ("Tuesday (21 °C) and Thursday", "Tuesday 21 °C, Thursday")
_OPTION_DATA = re.compile(r"\([^()\n]*\)|[-−]?\d[\d.,:]*\s*(?:°\s?[CFK]?|%|mm|km/h)?")
_OPTION_JOIN = re.compile(r"\s*(?:,|/|&|,?\s*\b(?:and|or|und|oder|et|ou|y|o|e|en)\b)\s*", re.I)


def _option_end(text: str, pos: int) -> int:
    m = re.match(r"[\w./-]+", text[pos:])
    return pos + (m.end() if m else 1)


def option_lists(sentence: str, options: list[str], year: int | None = None) -> list[list[tuple[int, str]]]:
    """The runs of two or more different options ``sentence`` names as a list ("the dry days are Tuesday,
    Thursday and Friday", "Tuesday (21 °C) or Thursday"): joined by a comma, "and" or "or" with nothing but
    their data between; an option named again starts anew ("…, and Thursday is the warmest")."""
    runs: list[list[tuple[int, str]]] = []
    run: list[tuple[int, str]] = []
    for pos, opt in _option_hits(sentence, options, year):
        if run and opt not in {o for _, o in run}:
            gap = _OPTION_DATA.sub(" ", sentence[_option_end(sentence, run[-1][0]) : pos])
            if _OPTION_JOIN.fullmatch(gap):
                run.append((pos, opt))
                continue
        if len(run) > 1:
            runs.append(run)
        run = [(pos, opt)]
    if len(run) > 1:
        runs.append(run)
    return runs


def listed_only(sentence: str, option: str, options: list[str], year: int | None = None) -> str | None:
    """Another option when every mention of ``option`` in ``sentence`` is one item of a list of options ("I'd
    recommend Tuesday or Thursday", "the best days are Thursday and Tuesday"): offered beside it, not picked."""
    hits = [p for p, o in _option_hits(sentence, options, year) if o == option]
    runs = option_lists(sentence, options, year)
    inside = [r for r in runs if any(p == h for p, _ in r for h in hits)]
    if not hits or not inside or any(all(p != h for r in inside for p, _ in r) for h in hits):
        return None
    return next(o for r in inside for _, o in r if o != option)


# words that leave the pick among listed options to the user: "either … or", "whichever", "both work", "up to you"
_LEFT_OPEN = re.compile(
    r"\b(?:either|whichever|any of (?:them|those|these|the \w+)|(?:would )?(?:both|all) (?:work|do|be fine)|"
    r"would work|up to you|your (?:call|choice)|entweder|egal welche\w*|au choix|l'un ou l'autre|cualquiera|"
    r"o bien)\b",
    re.I,
)
_OR_JOIN = re.compile(r"\b(?:or|oder|ou|o)\b", re.I)


def offered_together(answer: str, options: list[str], year: int | None = None) -> tuple[str, str] | None:
    """Two options the answer offers as alternatives for the one pick asked: a list of them in a sentence that
    leaves the choice open ("Either Tuesday or Thursday would work", "Tuesday and Thursday both work") or that
    joins them by "or" and says both ("Tuesday or Thursday, both are dry"). A list of the options that qualify
    ("the dry days are Tuesday, Thursday and Friday") offers nothing."""
    for sent in sentences(strip_markdown(answer)):
        for run in option_lists(sent, options, year):
            between = sent[run[0][0] : run[-1][0]]
            if _LEFT_OPEN.search(sent) or (_OR_JOIN.search(between) and re.search(r"\bboth\b", sent, re.I)):
                return run[0][1], run[1][1]
    return None


def stated_choice(answer: str, options: list[str], year: int | None = None) -> tuple[str | None, str]:
    """Which of ``options`` the answer picks: the one in bold, else the one next to a recommending word
    ("best", "go for", "I'd pick") in the statement, else the one the statement opens with outside a list of
    options (a list of the options that qualify, "the dry days are Tuesday, Thursday and Friday", picks none, and
    so does a day only described later, "Monday looks wet")."""
    for span in reversed(bold_spans(answer)):
        named = options_named(span, options, year)
        if len(named) == 1:
            return named.pop(), span
    st = statement(answer)
    for sent in sentences(st):
        hits = _option_hits(sent, options, year)
        recs = list(_RECOMMEND.finditer(sent))
        if hits and recs:
            r = recs[0].start()
            return min(hits, key=lambda h: abs(h[0] - r))[1], sent
    # "Why not Thursday? It's dry and 22 °C": a why-not question that names the first option of the answer
    # suggests it (one the answer goes on to reject, "Why not Wednesday? Because …", is blanked out before this)
    m = _WHY_NOT_Q.search(answer)
    if m and not _option_hits(answer[: m.start()], options, year):
        named = options_named(m.group(1), options, year)
        if len(named) == 1:
            return named.pop(), m.group(0)
    # with no recommending word, the answer picks the option a conclusion names ("So Thursday …", "Among the dry
    # days Thursday comes out ahead", "have the picnic on Thursday", "Tuesday looks good") or a sentence opens with
    # ("Thursday.", "Thursday (5 June): 22 °C", "Thursday is dry"); an option named only in a description
    # ("…, with Wednesday the warmest", "Monday looks wet.", "Friday will be cooler") is no pick
    for sent in sentences(st):
        in_list = {p for run in option_lists(sent, options, year) for p, _ in run}
        hits = [h for h in _option_hits(sent, options, year) if h[0] not in in_list]
        if not hits:
            continue
        if (concluding := _CONCLUDING.search(sent)) is not None:
            after = [h for h in hits if h[0] >= concluding.start()]
            return (after[0] if after else hits[-1])[1], sent
        first = hits[0][0]
        if len(re.findall(r"[^\W\d_]+", sent[:first])) <= 3 and not _DESCRIBING.match(
            sent, _option_end(sent, first)
        ):
            return hits[0][1], sent
    return None, ""


def options_named(text: str, options: list[str], year: int | None = None) -> set[str]:
    """The options ``text`` names (a weekday option also by a date on that weekday)."""
    return {o for _, o in _option_hits(text, options, year)}


# what concludes on the option named after it (or before it): "so", "comes out ahead", "is the one"
_CONCLUDING = re.compile(
    r"\b(?:so|thus|therefore|hence|which makes|comes? out (?:ahead|on top)|stands? out|is the one|"
    r"go(?:ing)? with|suggest\w*|should (?:go|pick|choose|plan|aim)|have (?:it|the \w+|your \w+) on|wins?|"
    r"(?:looks|seems|sounds) (?:like )?(?:a |the )?(?:good|great|nice|ideal|perfect|promising|lovely|fine))\b",
    re.I,
)
# what only describes the option it follows: "Monday looks wet", "Friday will be cooler"
_DESCRIBING = re.compile(
    r"\s*(?:looks|seems|appears|will|would|could|might|may|gets|turns|brings|is (?:expected|forecast|set|going|likely))\b",
    re.I,
)


_WHY_NOT_Q = re.compile(
    r"\bwhy not\s+(?:go(?:ing)?\s+(?:for|with)\s+|pick(?:ing)?\s+|choos(?:e|ing)\s+|try(?:ing)?\s+)?"
    r"(?:on\s+|the\s+)?([^.!?\n]{1,40})\?",
    re.I,
)


# --- time references in prose (stop 34d): which day or period a sentence speaks of, resolved against today ---

# the conversation's "today": a date right after a cue ("Today is Monday, 2025-03-10", "Current date and time:
# Sunday 2025-09-14 19:05", "Nous sommes le vendredi 28 mars 2025")
_TODAY_CUE = re.compile(
    r"\b(?:today(?:'s date)?(?:\s+is)?|current\s+date|the\s+date\s+is|nous\s+sommes|aujourd'hui|heute(?:\s+ist)?|"
    r"hoy(?:\s+es)?|oggi(?:\s+è)?|vandaag(?:\s+is)?)\b",
    re.I,
)


def today_of(given: list[str]) -> _dt.date | None:
    """The date the conversation says today is: the first date within 40 characters after a today cue."""
    for g in given:
        for cue in _TODAY_CUE.finditer(g):
            found = dates(g[cue.end() : cue.end() + 40])
            if found:
                return found[0].date
    return None


@dataclass(frozen=True)
class TimeRef:
    """A day or a period a text refers to. ``group`` is "day" or a period's kind (quarter, half, fiscal year,
    week, month). A day has ``days`` (offsets from today, None where unknown) and ``weekday``; a period has
    ``label`` (3 for Q3)."""

    group: str
    text: str
    pos: int
    end: int
    days: frozenset[int] | None = None
    weekday: int | None = None
    label: int | None = None


_NUM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10, "a": 1}
_N = r"(?P<n>\d{1,2}|one|two|three|four|five|six|seven|ten|a)"
# relative day words and their offsets from today; "morgen"/"mañana" only where they are not "morning"
_DAY_WORDS: list[tuple[re.Pattern[str], frozenset[int] | str]] = [
    (
        re.compile(
            r"\b(?:day\s+after\s+tomorrow|overmorrow|après-demain|apres-demain|übermorgen|pasado\s+mañana|"
            r"dopodomani|overmorgen)\b",
            re.I,
        ),
        frozenset({2}),
    ),
    (
        re.compile(
            r"\b(?:day\s+before\s+yesterday|avant-hier|vorgestern|anteayer|l'altro\s+ieri|eergisteren)\b",
            re.I,
        ),
        frozenset({-2}),
    ),
    (
        re.compile(
            r"(?<!day after )\btomorrow\b|\bdemain\b|\bdomani\b|(?<![Hh]eute )(?<![Gg]estern )\bmorgen\b|"
            r"(?<!la )(?<!esta )(?<!cada )\bmañana\b",
        ),
        frozenset({1}),
    ),
    (
        re.compile(r"(?i)\blast\s+night\b|\bletzte\s+nacht\b|\bhier\s+soir\b|\banoche\b|\bieri\s+sera\b"),
        frozenset({-1, 0}),
    ),
    (
        re.compile(r"(?i)(?<!before )\byesterday\b|\bgestern\b|\bayer\b|(?<!altro )\bieri\b|\bgisteren\b"),
        frozenset({-1}),
    ),
    (
        re.compile(
            r"(?i)\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|evening)\b|\baujourd'hui\b|\bce\s+soir\b|"
            r"\bheute\b|\bhoy\b|\besta\s+(?:noche|tarde|mañana)\b|\boggi\b|\bstasera\b|\bvandaag\b|\bvanavond\b"
        ),
        frozenset({0}),
    ),
    (
        re.compile(
            rf"(?i)\b(?:in|within|dans|en|tra|fra|over)\s+{_N}\s+(?:days?|jours?|tagen|días|dias|giorni|dagen)\b"
        ),
        "in",
    ),
    (re.compile(rf"(?i)\b{_N}\s+days?\s+ago\b"), "ago"),
    (re.compile(rf"(?i)\bvor\s+{_N}\s+tagen\b"), "ago"),
    (re.compile(rf"(?i)\bil\s+y\s+a\s+{_N}\s+jours\b"), "ago"),
]

# a weekday as a word of its own; short forms only capitalised ("Fri", not "sat" or "wed"), ambiguous ones never
_WD_NAMES = {k: v for k, v in _WEEKDAYS.items() if k not in _WD_AMBIGUOUS}
_WD_REF = re.compile(
    r"\b(?P<wd>"
    + "|".join(sorted((re.escape(k) for k in _WD_NAMES if len(k) > 4), key=len, reverse=True))
    + r")\b"
    r"|\b(?P<short>Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri)\b\.?",
    re.I,
)
_WD_SHORT_CASE = re.compile(r"[A-Z][a-z]+")
_NEXT_BEFORE = re.compile(
    r"\b(?:next|nächsten|nächste|nächster|próximo|prossimo|volgende)\s+$|\b(?:el|il)\s+(?:próximo|prossimo)\s+$",
    re.I,
)
_NEXT_AFTER = re.compile(r"^\s+(?:prochain|próximo|que\s+viene|prossimo)\b", re.I)
_LAST_BEFORE = re.compile(r"\b(?:last|letzten|letzter|vergangenen|vorige|scorso)\s+$", re.I)
_LAST_AFTER = re.compile(r"^\s+(?:dernier|pasado|scorso)\b", re.I)


def _weekday_offsets(wd: int, today: _dt.date | None, when: str) -> frozenset[int] | None:
    """Offsets from today of a weekday read as ``when`` ("plain": this week's or the coming one; "next": the one
    of next week, or the coming one if not tomorrow; "last": the past one). Without today: "next" is never
    today or tomorrow (one says "tomorrow"), the rest unknown."""
    if today is None:
        return frozenset(range(2, 14)) if when == "next" else None
    d = (wd - today.weekday()) % 7
    if when == "next":
        return frozenset({d + 7} | ({d} if d >= 2 else set()))
    if when == "last":
        return frozenset({d - 7 if d else -7})
    return frozenset({d} if d else {0, 7})


def day_references(text: str, today: _dt.date | None = None) -> list[TimeRef]:
    """The days ``text`` refers to: relative words (tomorrow, the day after tomorrow, in two days, demain,
    übermorgen), weekdays ("next Monday", "Fri", "lundi prochain") and dates, each with its offsets from
    ``today`` where they can be known: "Monday" with today a Sunday is {1}; "next Monday" with no today is
    {2..13}; "Thursday 2025-03-13" is a date, its weekday part of it."""
    t = strip_markdown(text)
    out: list[TimeRef] = []
    taken: list[tuple[int, int]] = []

    def add(ref: TimeRef) -> None:
        if any(a < ref.end and ref.pos < b for a, b in taken):
            return
        taken.append((ref.pos, ref.end))
        out.append(ref)

    year = today.year if today else None
    for dm in dates(t, year):
        end = dm.pos + len(dm.text)
        off = frozenset({(dm.date - today).days}) if today else None
        add(TimeRef("day", dm.text.rstrip(". "), dm.pos, end, off, dm.date.weekday()))
    for rx, days in _DAY_WORDS:
        for m in rx.finditer(t):
            if isinstance(days, str):
                n = m.group("n").lower()
                k = _NUM_WORDS.get(n) or int(n)
                days = frozenset({k if days == "in" else -k})
            wd = (today.weekday() + min(days)) % 7 if today and len(days) == 1 else None
            add(TimeRef("day", m.group(0), m.start(), m.end(), days, wd))
    for m in _WD_REF.finditer(t):
        word = m.group("wd") or m.group("short")
        if m.group("short") and not _WD_SHORT_CASE.fullmatch(word):
            continue
        wd = _WD_NAMES[word.lower()]
        before, after = t[max(0, m.start() - 16) : m.start()], t[m.end() : m.end() + 16]
        when = "plain"
        if _NEXT_BEFORE.search(before) or _NEXT_AFTER.match(after):
            when = "next"
        elif _LAST_BEFORE.search(before) or _LAST_AFTER.match(after):
            when = "last"
        add(TimeRef("day", word, m.start(), m.end(), _weekday_offsets(wd, today, when), wd))
    return sorted(out, key=lambda r: r.pos)


_ORDINALS = (
    r"(?P<o>first|second|third|fourth|1st|2nd|3rd|4th|premier|deuxième|second|troisième|quatrième|1er|2e|3e|4e|"
    r"primer|segundo|tercer|cuarto|primo|terzo|quarto|ersten?|zweiten?|dritten?|vierten?)"
)
_ORDINAL_VALUE = {
    **dict.fromkeys(["first", "1st", "premier", "1er", "primer", "primo", "erste", "ersten"], 1),
    **dict.fromkeys(["second", "2nd", "deuxième", "2e", "segundo", "secondo", "zweite", "zweiten"], 2),
    **dict.fromkeys(["third", "3rd", "troisième", "3e", "tercer", "terzo", "dritte", "dritten"], 3),
    **dict.fromkeys(["fourth", "4th", "quatrième", "4e", "cuarto", "quarto", "vierte", "vierten"], 4),
}
# "the first half" of something that is not a year ("of the meeting", "of an hour") is no period
_OF_A_YEAR = r"(?!\s+of\s+(?!(?:the\s+)?(?:(?:fiscal\s+)?year|fy|(?:19|20)\d\d)\b))"
# period labels: Q3, "third quarter", "3e trimestre", "3. Quartal", H1, "first half", FY2025, FY25, "week 12", KW 12
_PERIODS: list[tuple[str, re.Pattern[str]]] = [
    ("quarter", re.compile(r"\bQ(?P<n>[1-4])\b|\b(?P<n2>[1-4])\.\s?Quartal\b")),
    ("quarter", re.compile(_ORDINALS + r"[- ](?:quarter|trimestre|quartal)\b" + _OF_A_YEAR, re.I)),
    ("half", re.compile(r"\bH(?P<n>[12])\b|\b(?P<n2>[12])\.\s?Halbjahr\b")),
    ("half", re.compile(_ORDINALS + r"[- ](?:half|semestre|halbjahr)\b" + _OF_A_YEAR, re.I)),
    (
        "fiscal year",
        re.compile(
            r"\bFY\s?'?(?P<n>\d{2}(?:\d{2})?)\b|\bfiscal(?:\s+year)?\s+(?P<n2>(?:19|20)\d{2})\b", re.I
        ),
    ),
    (
        "week",
        re.compile(r"\b(?:week|wk|KW|semaine|semana|settimana)\s?#?(?P<n>\d{1,2})\b(?!\s*[:.,]\d)", re.I),
    ),
]
_MONTH_NAMES = {k: v for k, v in _MONTHS.items() if len(k) > 3 and k not in ("march", "marzo")}
_MONTH_LABEL = re.compile(
    r"\b(?P<mon>" + "|".join(sorted(map(re.escape, _MONTH_NAMES), key=len, reverse=True)) + r")\b", re.I
)


def period_labels(text: str) -> list[TimeRef]:
    """The periods ``text`` names by label: quarters (Q3, "the third quarter"), halves (H1), fiscal years (FY25 is
    FY2025), numbered weeks and months named as periods ("the April numbers"; not a date's month: "3 April")."""
    t = strip_markdown(text)
    out: list[TimeRef] = []
    for group, rx in _PERIODS:
        for m in rx.finditer(t):
            gd = m.groupdict()
            raw = gd.get("n") or gd.get("n2")
            n = int(raw) if raw else _ORDINAL_VALUE.get(gd.get("o", "").lower(), 0)
            if group == "fiscal year" and n < 100:
                n += 2000
            if n:
                out.append(TimeRef(group, m.group(0), m.start(), m.end(), label=n))
    in_dates = [(d.pos, d.pos + len(d.text)) for d in dates(t, 2000)]
    for m in _MONTH_LABEL.finditer(t):
        if any(a <= m.start() < b for a, b in in_dates):
            continue
        out.append(
            TimeRef("month", m.group(0), m.start(), m.end(), label=_MONTH_NAMES[m.group("mon").lower()])
        )
    return sorted(out, key=lambda r: r.pos)


# a dated, named item of a tool result: {"date": "2025-06-09", "name": "Lundi de Pentecôte"} (either key first)
_TOOL_ITEM = re.compile(r"\{[^{}]*\}")
_ITEM_DATE = re.compile(r"""["']date["']\s*:\s*["'](\d{4}-\d{2}-\d{2})["']""")
_ITEM_NAME = re.compile(r"""["'](?:name|title|label)["']\s*:\s*(?:"([^"]+)"|'([^']+)')""")
# words of a name that name no particular day ("Jour de l'an" names nothing by "jour" alone; "jours fériés" would
# match it)
_GENERIC_NAME_WORDS = frozenset(
    {"jour", "jours", "day", "days", "tag", "dia", "dias", "giorno", "holiday", "feast"}
)


def tool_names(given: Sequence[str]) -> dict[str, str]:
    """The names of dated items the conversation's tool results give, with their dates (ISO): get_holidays'
    {"date": "2025-06-09", "name": "Lundi de Pentecôte"} gives {"Lundi de Pentecôte": "2025-06-09"}. A name
    given on two different dates is left out (it names no one day)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for part in given:
        for obj in _TOOL_ITEM.finditer(part):
            d, n = _ITEM_DATE.search(obj.group(0)), _ITEM_NAME.search(obj.group(0))
            if d is None or n is None:
                continue
            name = (n.group(1) or n.group(2)).strip()
            if out.setdefault(name, d.group(1)) != d.group(1):
                clash.add(name)
    return {k: v for k, v in out.items() if k not in clash}


def _name_patterns(name: str) -> list[re.Pattern[str]]:
    """Patterns (over folded text) for a tool's name: the whole name ("lundi de Pentecôte", "Lundi de
    Pentecote") and its own words without the weekday and the small ones ("la Pentecôte"); a long word is
    matched on its first seven letters, so the name in a neighbouring language ("Pentecost Monday") is read too.
    A name with no word of its own ("Jour de l'an") gets none."""
    words = re.findall(r"[^\W_]+", fold(name))

    def word(w: str) -> str:
        return rf"{re.escape(w[:7])}[^\W_]*" if len(w) > 7 else rf"{re.escape(w)}(?:s|es|e)?"

    own = [w for w in words if len(w) >= 4 and w not in _WEEKDAYS and w not in _GENERIC_NAME_WORDS]
    if not own:
        return []
    whole = r"\W+".join(word(w) for w in words)
    # the name's own words, in either order, at most two words apart ("Pentecost Monday" for "Lundi de Pentecôte")
    bits = r"\W+(?:[^\W_]+\W+){0,2}?".join(word(w) for w in own)
    return [re.compile(rf"\b{whole}\b"), re.compile(rf"\b{bits}\b")]


def _name_mentions(t: str, names: dict[str, str]) -> list[DateMention]:
    """Where ``t`` names an item of a tool result by its name, each as a mention of the item's date (outside
    brackets: "(le lundi de Pentecôte, lui, tombe en juin)" is an aside)."""
    folded = fold(t) if len(fold(t)) == len(t) else t.lower()
    brackets = [m.span() for m in _BRACKETS.finditer(t)]
    out: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for name, iso in sorted(names.items(), key=lambda kv: -len(kv[0])):
        for rx in _name_patterns(name):
            for m in rx.finditer(folded):
                a, b = m.span()
                if any(x < b and a < y for x, y in taken) or any(x <= a < y for x, y in brackets):
                    continue
                taken.append((a, b))
                out.append(DateMention(_dt.date.fromisoformat(iso), t[a:b], a))
    return out


# what, after a name or before it, sets it apart from the list: a negation ("mais pas le lundi de Pentecôte")
_NAME_APART = re.compile(r"\b(?:not|pas|no|nicht|kein\w*|ni|sauf|except\w*|au[ßs]er|salvo|excepto)\b", re.I)


# what may stand between a name and its own date in a list item: an article or a preposition of dates
_NAME_DATE_GAP = re.compile(r"\s*(?:(?:le|la|el|the|on|am|den|der|il|op|em|au|du|del|on the)\s+)?", re.I)


def named_outside(
    text: str, wanted: set[str], names: dict[str, str], default_year: int | None = None
) -> dict[str, str]:
    """Items the text lists among the ``wanted`` dates by a name the tool results give (``names``, from
    ``tool_names``) whose date lies outside the asked months, as {date (ISO): name as written}: "le 1er, le 8, le 29
    mai et le lundi de Pentecôte" lists 9 June as a fourth May holiday, like "…, le 29 mai et le 9 juin" would,
    and so does "- Lundi de Pentecôte" in a bulleted list of May's holidays. The name placed outside ("Le lundi de
    Pentecôte tombe le 9 juin, donc pas en mai"), given as the next one ("Le suivant sera le lundi de
    Pentecôte", "puis vient le lundi de Pentecôte en juin"), in brackets or negated ("mais pas le lundi de
    Pentecôte") is no item of the list."""
    months = {w[:7] for w in wanted}
    outside = {k: v for k, v in names.items() if v[:7] not in months}
    if not outside:
        return {}
    t = strip_markdown(text)
    named = _name_mentions(t, outside)
    if not named:
        return {}
    real = sorted(dates(t, default_year), key=lambda d: d.pos)
    found = sorted(real + named, key=lambda d: d.pos)
    ids = {id(d) for d in named}
    out: dict[str, str] = {}

    def apart(d: DateMention) -> bool:
        rest = t[d.pos + len(d.text) :]
        after = re.split(r"[;.!?\n]", rest, maxsplit=1)[0]
        # a date of its own in the name's clause places it: "; la Pentecôte tombe le 9 juin" is a clause of its own
        # (the date rules read that date), "et le lundi de Pentecôte (9 juin)" still lists it
        clause = _BRACKETS.sub(" ", re.split(r"[,;:.!?\n]", rest, maxsplit=1)[0])
        before = re.split(r"[,;:.!?\n]", t[max(0, d.pos - 40) : d.pos])[-1]
        # the date said right after the name, with no verb between ("et le lundi de Pentecôte le 9 juin", "and
        # Pentecost Monday, 9 June") is the item's own date: it is listed all the same
        own = dates(clause, default_year)
        placed = bool(own) and not _NAME_DATE_GAP.fullmatch(clause[: own[0].pos])
        return bool(
            _NAME_APART.search(before) or _NAME_APART.search(after) or _OUTSIDE_LIST.search(after) or placed
        )

    # prose lists: a name joined to a run holding wanted dates as its next item ("…, le 29 mai et le lundi de
    # Pentecôte", "…, ainsi que le lundi de Pentecôte")
    for run in _prose_runs(t, found, words=3):
        if any(x.date.isoformat() in wanted for x in run):
            for d in run:
                if id(d) in ids and not apart(d):
                    out.setdefault(d.date.isoformat(), d.text)
    # bulleted or numbered lists and tables: a line item that names it among the wanted dates' items
    lines = t.splitlines(keepends=True)
    starts = [sum(len(x) for x in lines[:i]) for i in range(len(lines))]
    for i, j in _item_runs(lines):
        lo, hi = starts[i], starts[j] + len(lines[j])
        here = [d for d in found if lo <= d.pos < hi]
        isos = {d.date.isoformat() for d in here}
        extra = isos - wanted
        if extra and len(isos & wanted) > len(extra):
            for d in here:
                line = lines[max(k for k in range(i, j + 1) if starts[k] <= d.pos)]
                if id(d) in ids and not _OUTSIDE_LIST.search(line) and not _NAME_APART.search(line):
                    out.setdefault(d.date.isoformat(), d.text)
    return out

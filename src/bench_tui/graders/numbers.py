"""Numbers and units, read by value.

- ``Unit`` conversion tables (temperature, length, mass, volume, speed, duration); money never converts.
- ``quantities``: numbers with their unit: thousands separators by locale (1,234.5 and 1.234,5), number words
  (twelve, twenty-seven), signs, percentages, currency symbols and ISO codes before or after (``USD 131.42``,
  ``131,42 €``). Clock times (15:59), dates, identifiers (OPS-4471, #8812) are not quantities."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from bench_tui.graders.dates import (
    DATE_ISO,
    DATE_NUMERIC,
    DATE_WORDS_DM,
    DATE_WORDS_MD,
    DAY_RANGE_MD,
    DAY_RANGE_START,
    MONTH_YEAR,
    time_spans,
)
from bench_tui.graders.text import expanded, strip_markdown, unaccented


@dataclass(frozen=True)
class Unit:
    name: str  # canonical
    dim: str  # temperature, length, mass, money, percent, ...
    factor: float = 1.0  # to the dimension's base unit
    offset: float = 0.0  # base = value * factor + offset (temperature)


# the degree words that mean Celsius when no scale follows (English "degrees" names no scale)
_SCALED_DEGREE_WORDS = (
    "grados",
    "grado",
    "grad",
    "degrés",
    "degré",
    "gradi",
    "graus",
    "grau",
    "graden",
    "graad",
)

_UNITS: dict[str, tuple[Unit, list[str]]] = {
    "kelvin": (Unit("kelvin", "temperature", 1.0, 0.0), ["k", "kelvin", "kelvins", "°k"]),
    "celsius": (
        Unit("celsius", "temperature", 1.0, 273.15),
        [
            "°c",
            "c",
            "celsius",
            "℃",
            "centigrade",
            "° c",
            "ºc",
            "º",
            # a degree word alone is Celsius in the languages that use it so (not English "degrees": no scale)
            *_SCALED_DEGREE_WORDS,
        ],
    ),
    "fahrenheit": (
        Unit("fahrenheit", "temperature", 5 / 9, 273.15 - 32 * 5 / 9),
        ["°f", "f", "fahrenheit", "℉", "ºf"],
    ),
    "km": (Unit("km", "length", 1000.0), ["km", "kilometer", "kilometers", "kilometre", "kilometres", "kms"]),
    "m": (Unit("m", "length", 1.0), ["m", "meter", "meters", "metre", "metres"]),
    "cm": (Unit("cm", "length", 0.01), ["cm", "centimeter", "centimeters", "centimetre", "centimetres"]),
    "mm": (Unit("mm", "length", 0.001), ["mm", "millimeter", "millimeters", "millimetre", "millimetres"]),
    "mile": (Unit("mile", "length", 1609.344), ["mi", "mile", "miles"]),
    "ft": (Unit("ft", "length", 0.3048), ["ft", "foot", "feet"]),
    "inch": (Unit("inch", "length", 0.0254), ["in", "inch", "inches"]),
    "kg": (Unit("kg", "mass", 1.0), ["kg", "kilogram", "kilograms", "kilo", "kilos", "kgs"]),
    "g": (Unit("g", "mass", 0.001), ["g", "gram", "grams", "gramme", "grammes"]),
    "lb": (Unit("lb", "mass", 0.45359237), ["lb", "lbs", "pound", "pounds"]),
    "oz": (Unit("oz", "mass", 0.028349523125), ["oz", "ounce", "ounces"]),
    "l": (Unit("l", "volume", 1.0), ["l", "liter", "liters", "litre", "litres"]),
    "ml": (Unit("ml", "volume", 0.001), ["ml", "milliliter", "milliliters", "millilitre", "millilitres"]),
    "kmh": (
        Unit("kmh", "speed", 1 / 3.6),
        [
            "km/h",
            "kph",
            "kmh",
            "kilometers per hour",
            "kilometres per hour",
            "kilometers an hour",
            "kilometres an hour",
            "km an hour",
        ],
    ),
    "mph": (Unit("mph", "speed", 0.44704), ["mph", "miles per hour", "miles an hour"]),
    "s": (Unit("s", "duration", 1.0), ["s", "sec", "secs", "second", "seconds"]),
    "min": (Unit("min", "duration", 60.0), ["min", "mins", "minute", "minutes"]),
    "h": (Unit("h", "duration", 3600.0), ["h", "hr", "hrs", "hour", "hours"]),
    "day": (Unit("day", "duration", 86400.0), ["day", "days"]),
    "percent": (
        Unit("percent", "percent"),
        ["%", "percent", "per cent", "pct", "por ciento", "pour cent", "prozent"],
    ),
    "usd": (
        Unit("usd", "money:usd"),
        ["$", "usd", "us$", "dollar", "dollars", "us dollars", "us-dollar", "dólares", "dollari", "dólar"],
    ),
    "eur": (Unit("eur", "money:eur"), ["€", "eur", "euro", "euros"]),
    "gbp": (Unit("gbp", "money:gbp"), ["£", "gbp", "pound sterling", "pounds sterling", "sterling"]),
    "jpy": (Unit("jpy", "money:jpy"), ["¥", "jpy", "yen", "円"]),
    "chf": (Unit("chf", "money:chf"), ["chf", "swiss francs", "francs"]),
}


# a degree word, in the languages the table reads, followed by a scale's name is that scale, whatever the word
# alone would mean: "31 grados Fahrenheit" is 31 °F although "31 grados" is 31 °C
_DEGREE_WORDS = ("degrees", "degree", "deg", *_SCALED_DEGREE_WORDS)
_SCALE_NAMES = {
    "celsius": ("celsius", "c", "centigrade", "centígrados", "centígrado", "centigradi", "centigrado"),
    "fahrenheit": ("fahrenheit", "f"),
    "kelvin": ("kelvin", "k"),
}
for _canon, _names in _SCALE_NAMES.items():
    _UNITS[_canon][1].extend(f"{d} {n}" for d in _DEGREE_WORDS for n in _names)
    _UNITS[_canon][1].extend(f"{sign}{n}" for sign in ("°", "º") for n in _names if len(n) > 1)


# the same for speeds: a length word followed by "per hour" in any of the table's languages is a speed, not a
# length ("55 km per hour", "35 millas por hora", "80 Kilometer pro Stunde")
_PER_HOUR = (
    " per hour",
    " an hour",
    "/h",
    "/hr",
    " por hora",
    " pro stunde",
    " par heure",
    " à l'heure",
    " all'ora",
    " per uur",
)
_SPEED_LENGTHS = {
    "kmh": (
        "km",
        "kms",
        "kilometer",
        "kilometers",
        "kilometre",
        "kilometres",
        "kilómetros",
        "kilomètres",
        "kilometri",
        "quilómetros",
        "quilômetros",
    ),
    "mph": ("mi", "mile", "miles", "millas", "milles", "meilen", "miglia", "milhas", "mijl"),
}
for _canon, _lengths in _SPEED_LENGTHS.items():
    _UNITS[_canon][1].extend(f"{n}{per}" for n in _lengths for per in _PER_HOUR)


def _unaccented(s: str) -> str:
    """``s`` without its accents ("degrés" → "degres"); signs such as "º" and "℃" stay as they are."""
    return unaccented(s, compatibility=False)


_SPELLING: dict[str, str] = {}


for _canon, (_u, _spellings) in _UNITS.items():
    _SPELLING[_canon] = _canon
    for _s in _spellings:
        _SPELLING.setdefault(_s, _canon)
        _SPELLING.setdefault(_unaccented(_s), _canon)  # "degres", "dolares": written without the accent

UNITS = _UNITS  # the table read-only for the unsure signals (graders/confidence.py)


def unit_of(spelling: str | None) -> Unit | None:
    if not spelling:
        return None
    s = re.sub(r"\s+", " ", spelling.strip().lower()).replace("° ", "°").replace("º ", "º").rstrip(".")
    canon = _SPELLING.get(s)
    return _UNITS[canon][0] if canon else None


def convert(value: float, src: Unit, dst: Unit) -> float | None:
    if src.dim != dst.dim:
        return None
    if src.dim.startswith("money") or src.dim == "percent":
        return value
    base = value * src.factor + src.offset
    return (base - dst.offset) / dst.factor


_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ENGLISH = frozenset(
    [*_WORDS, "hundred", "thousand", "million", "billion", "lakh", "lakhs", "crore", "crores"]
)


_WORDS.update(
    {
        # es / pt / it / fr / de: enough for temperatures, counts and prices said in words
        "uno": 1,
        "un": 1,
        "una": 1,
        "dos": 2,
        "tres": 3,
        "cuatro": 4,
        "cinco": 5,
        "seis": 6,
        "siete": 7,
        "ocho": 8,
        "nueve": 9,
        "diez": 10,
        "once": 11,
        "doce": 12,
        "quince": 15,
        "veinte": 20,
        "veintiuno": 21,
        "veintiún": 21,
        "veintidós": 22,
        "veintitrés": 23,
        "veinticuatro": 24,
        "veinticinco": 25,
        "treinta": 30,
        "cuarenta": 40,
        "cincuenta": 50,
        "sesenta": 60,
        "setenta": 70,
        "ochenta": 80,
        "noventa": 90,
        "deux": 2,
        "trois": 3,
        "quatre": 4,
        "cinq": 5,
        "sept": 7,
        "huit": 8,
        "neuf": 9,
        "dix": 10,
        "douze": 12,
        "vingt": 20,
        "trente": 30,
        "quarante": 40,
        "cinquante": 50,
        "soixante": 60,
        "trinta": 30,
        "vinte": 20,
        "trenta": 30,
        "venti": 20,
        "ventuno": 21,
        "trentuno": 31,
        "zwei": 2,
        "drei": 3,
        "vier": 4,
        "zwölf": 12,
        "zwanzig": 20,
        "dreißig": 30,
    }
)


# with the Indian scale words: a lakh is 100,000, a crore 10,000,000 ("forty-two lakh" is 4.2 million)
_SCALES = {
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
    "lakh": 100_000,
    "lakhs": 100_000,
    "crore": 10_000_000,
    "crores": 10_000_000,
}


_JOINERS = {"and", "y", "et", "e", "und", "en", "ën"}


def _table(words: str, value: int) -> dict[str, int]:
    return dict.fromkeys(words.split(), value)


def _seq(words: str, values: Iterable[int]) -> dict[str, int]:
    """The words in order, each with the next of ``values`` (as many of each)."""
    return dict(zip(words.split(), values, strict=True))


# Number words of the languages whose answers are read, by language: the parts a number is made of. German, Dutch
# and Italian write a number as one word ("eintausenddreihundertvierundvierzig", "duizenddriehonderdvierenveertig",
# "milletrecentoquarantaquattro"); such a word is read when it splits wholly into these parts. 100 multiplies what
# comes before it ("drei" "hundert"), 1000 and more close a group ("ein" "tausend"); the rest add up.
_LANG_WORDS: dict[str, dict[str, int]] = {
    "de": {
        **_seq(
            "ein eins eine zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
            [1, 1, 1, *range(2, 13)],
        ),
        "sechzehn": 16,
        "siebzehn": 17,
        **_seq(
            "zwanzig dreißig dreissig vierzig fünfzig sechzig siebzig achtzig neunzig",
            [20, 30, 30, 40, 50, 60, 70, 80, 90],
        ),
        "hundert": 100,
        **_table("tausend", 1000),
        **_table("million millionen", 1_000_000),
    },
    "nl": {
        **_seq("een twee drie vier vijf zes zeven acht negen tien elf twaalf", range(1, 13)),
        **_seq("dertien veertien vijftien zestien zeventien achttien negentien", range(13, 20)),
        **_seq("twintig dertig veertig vijftig zestig zeventig tachtig negentig", range(20, 100, 10)),
        "honderd": 100,
        "duizend": 1000,
        **_table("miljoen miljoenen", 1_000_000),
    },
    "fr": {
        **_seq("un une deux trois quatre cinq six sept huit neuf dix onze douze", [1, 1, *range(2, 13)]),
        **_seq("treize quatorze quinze seize", range(13, 17)),
        **_seq("vingt vingts trente quarante cinquante soixante", [20, 20, 30, 40, 50, 60]),
        "cent": 100,
        **_table("mille mil", 1000),
        **_table("million millions", 1_000_000),
    },
    "es": {
        **_seq(
            "uno un una dos tres cuatro cinco seis siete ocho nueve diez once doce", [1, 1, 1, *range(2, 13)]
        ),
        **_seq("trece catorce quince dieciséis diecisiete dieciocho diecinueve", range(13, 20)),
        **_seq(
            "veinte veinti treinta cuarenta cincuenta sesenta setenta ochenta noventa",
            [20, 20, *range(30, 100, 10)],
        ),
        **_table("cien ciento", 100),
        **_table("doscientos doscientas", 200),
        **_table("trescientos trescientas", 300),
        **_table("cuatrocientos cuatrocientas", 400),
        **_table("quinientos quinientas", 500),
        **_table("seiscientos seiscientas", 600),
        **_table("setecientos setecientas", 700),
        **_table("ochocientos ochocientas", 800),
        **_table("novecientos novecientas", 900),
        "mil": 1000,
        **_table("millón millones", 1_000_000),
    },
    "pt": {
        **_seq(
            "um uma dois duas três quatro cinco seis sete oito nove dez onze doze",
            [1, 1, 2, 2, *range(3, 13)],
        ),
        **_seq(
            "treze catorze quatorze quinze dezesseis dezasseis dezessete dezassete dezoito dezenove dezanove",
            [13, 14, 14, 15, 16, 16, 17, 17, 18, 19, 19],
        ),
        **_seq("vinte trinta quarenta cinquenta sessenta setenta oitenta noventa", range(20, 100, 10)),
        **_table("cem cento", 100),
        **_table("duzentos duzentas", 200),
        **_table("trezentos trezentas", 300),
        **_table("quatrocentos quatrocentas", 400),
        **_table("quinhentos quinhentas", 500),
        **_table("seiscentos seiscentas", 600),
        **_table("setecentos setecentas", 700),
        **_table("oitocentos oitocentas", 800),
        **_table("novecentos novecentas", 900),
        "mil": 1000,
        **_table("milhão milhões", 1_000_000),
    },
    "it": {
        **_seq(
            "uno un una due tre tré quattro cinque sei sette otto nove dieci undici dodici",
            [1, 1, 1, 2, 3, 3, *range(4, 13)],
        ),
        **_seq("tredici quattordici quindici sedici diciassette diciotto diciannove", range(13, 20)),
        **_seq(
            "venti vent trenta trent quaranta quarant cinquanta cinquant sessanta sessant settanta settant ottanta ottant novanta novant",
            [v for v in range(20, 100, 10) for _ in (0, 1)],
        ),
        "cento": 100,
        **_table("mille mila", 1000),
        **_table("milione milioni", 1_000_000),
    },
}


def _alt(words: object) -> str:
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))  # type: ignore[attr-defined]


_NUMBER_WORD = r"(?:" + _alt([*_WORDS, *_SCALES]) + r")\b"


def _word_re(lang: str | None) -> re.Pattern[str]:
    """Numbers in words: "twenty-one", "one hundred and five", "treinta y un", "vingt et un", "twenty-one and a
    half"; in the answer's language also its compounds ("vierundvierzig", "tweeëntwintig", "trecentoventi"). A bare
    "and" joins only after hundred/thousand ("between one and two" is two numbers)."""
    parts = _alt([*_WORDS, *_SCALES, *_LANG_WORDS.get(lang or "", {})])
    word = r"(?<![^\W\d_])(?:" + parts + r")(?:(?:und|ën|en)?(?:" + parts + r"))*(?![^\W\d_])"
    # "douze cents", "twelve cents", "zwölf Cent": the coin after an amount, not a hundred ("cent vingt" is one)
    word = r"(?!cents\b|cent\b(?![\s-]+(?:" + parts + r")))" + word
    return re.compile(
        word
        + r"(?:(?:[\s-]+|(?<=hundred)\s+and\s+|(?<=thousand)\s+and\s+|\s+(?:y|et|e|und"
        + (r"|en" if lang == "nl" else "")
        + r")\s+)"
        + word
        + r")*(?:\s+and\s+a\s+half\b|\s+y\s+medio\b|\s+et\s+demi\b)?",
        re.I,
    )


_WORD_RES = {lang: _word_re(lang) for lang in (None, *_LANG_WORDS)}
_WORD_RE = _WORD_RES[None]


def number_words(text: str, lang: str | None = None) -> list[tuple[int, int, float]]:
    """(start, end, value) of each run of number words in the text ("a hundred thirty-one" -> 131), whether or
    not a quantity is read from it; for the unsure signals (graders/confidence.py)."""
    out = []
    for m in _WORD_RES.get(lang, _WORD_RE).finditer(text):
        if (v := _words_value(m.group(0), lang)) is not None:
            out.append((m.start(), m.start() + len(m.group(0).rstrip()), v))
    return out


_LANG_PARTS = {
    lang: {**_WORDS, **_SCALES, **_LANG_WORDS.get(lang or "", {})} for lang in (None, *_LANG_WORDS)
}


def _split(word: str, parts: dict[str, int]) -> list[str] | None:
    """A compound number word split wholly into parts ("vierundvierzig" -> vier, vierzig), or None."""
    if word in parts:
        return [word]
    for joiner in ("", "und", "ën", "en"):
        if joiner and not word.startswith(joiner):
            continue
        rest = word[len(joiner) :]
        for n in range(min(len(rest), 14), 1, -1):
            if rest[:n] not in parts:
                continue
            tail = _split(rest[n:], parts) if n < len(rest) else []
            if tail is not None:
                return [rest[:n], *tail]
    return None


_COMMA_DECIMAL_LANGS = {"de", "fr", "es", "pt", "it", "nl"}


_MONEY_PRE = r"(?:US\$|\$|€|£|¥|(?:USD|EUR|GBP|JPY|CHF)\b\.?)"


_NUM_CORE = (
    # Indian grouping first: "42,00,000" (lakhs and crores in twos, then the last three) is 4,200,000
    r"\d{1,2}(?:,\d\d)+,\d{3}(?![\d,])(?:\.\d+)?|"
    r"\d{1,3}(?:[,.\u202f\u00a0 ’']\d{3})+(?!\d)(?:[.,]\d+)?|\d+(?:[.,]\d+)?(?:[eE][-+]?\d+\b)?|[.,]\d+"
)


_UNIT_WORDS = sorted((s for s in _SPELLING if s not in ("$", "€", "£", "¥")), key=len, reverse=True)


_UNIT_ALT = "|".join(re.escape(s) for s in _UNIT_WORDS)


# a scale's name after a degree sign ("21° Fahrenheit", "21.5º Celsius"), tried before the sign alone
_SCALE_ALT = "|".join(
    re.escape(n)
    for n in sorted(
        {m for ns in _SCALE_NAMES.values() for n in ns for m in (n, _unaccented(n))}, key=len, reverse=True
    )
    if len(n) > 1
)


# a scale word after a figure multiplies it ("4.2 million", "EUR 4.2 crore", "Rs 1.2 lakh", "5 lacs"): the scales
# above a hundred, and "lac" as lakh is also spelled
_SCALE_SUFFIX = {**{w: float(v) for w, v in _SCALES.items() if v > 100}, "lac": 1e5, "lacs": 1e5}


_QTY = re.compile(
    r"(?P<pre>" + _MONEY_PRE + r")?\s?(?P<sign>[-+−–](?=[\d$€£¥]))?(?P<pre2>" + _MONEY_PRE + r")?\s?"
    r"(?P<num>" + _NUM_CORE + r")(?P<suffix>\s?(?:k|m|bn|" + "|".join(_SCALE_SUFFIX) + r")\b)?"
    # a currency sign followed by digits is the next amount's ("SAV-9012 €12,500.00"), not this number's unit;
    # a unit word may be hyphenated to its number ("a 26.2-mile marathon", "a 5-km run", not "2-in-1")
    r"\s?(?P<unit>[°º]\s?(?:"
    + _SCALE_ALT
    + r")(?![\w/])|°\s?[CFKcfk]\b|º\s?[CFcf]?\b|°|℃|℉|%|[$€£¥](?!\s?\d)|"
    r"(?:" + _UNIT_ALT + r")(?![\w/])"
    r"|-(?:" + _UNIT_ALT + r")(?![\w/-]))?",
    re.I,
)


@dataclass
class Quantity:
    value: float
    unit: Unit | None
    text: str
    pos: int
    end: int
    # a range the text names instead of a value ("in the low $130s", "mid-20s °C"): its ends, in ``unit``
    low: float | None = None
    high: float | None = None

    def __repr__(self) -> str:
        return self.text

    def show(self) -> str:
        return self.text


def parse_number(raw: str, lang: str | None = None) -> float | None:
    """A numeral as written: 1,234.5 / 1.234,5 / 1 234,5 / 131,42 / 0.5 / .5 (by locale hint when ambiguous)."""
    s = raw.strip().replace("\u202f", " ").replace("\u00a0", " ").replace("’", "'")
    s = re.sub(r"(?<=\d)[ '](?=\d{3}\b)", "", s)
    if "," in s and "." in s:
        dec = "," if s.rfind(",") > s.rfind(".") else "."
        s = s.replace("." if dec == "," else ",", "")
        s = s.replace(",", ".")
    elif re.fullmatch(r"\d{1,2}(?:,\d\d)+,\d{3}", s):
        s = s.replace(",", "")  # Indian grouping: "1,20,000" is 120,000
    elif "," in s:
        groups = s.split(",")
        thousands = all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3 and groups[0] != ""
        if thousands and not (lang in _COMMA_DECIMAL_LANGS and len(groups) == 2):
            s = s.replace(",", "")
        elif len(groups) == 2:
            s = s.replace(",", ".")
        else:
            return None
    elif s.count(".") > 1 or (
        lang in _COMMA_DECIMAL_LANGS and re.fullmatch(r"\d{1,3}\.\d{3}", s) is not None
    ):
        if not re.fullmatch(r"\d{1,3}(\.\d{3})+", s):
            return None
        s = s.replace(".", "")
    try:
        return float(s)
    except ValueError:
        return None


def _words_value(text: str, lang: str | None = None) -> float | None:
    values = _LANG_PARTS.get(lang, _LANG_PARTS[None])
    total, cur, seen, prev = 0, 0, False, 0
    half = re.search(r"\b(and a half|y medio|et demi)\s*$", text.lower()) is not None
    if half:
        text = re.sub(r"\b(and a half|y medio|et demi)\s*$", "", text.lower())
    for w in re.findall(r"[^\W\d_]+", text.lower()):
        if w in _JOINERS:
            continue
        pieces = _split(w, values)
        if pieces is None:
            return None
        for p in pieces:
            v = values[p]
            if v == 100 and p not in ("cien", "cem"):
                cur = max(cur, 1) * 100
            elif v >= 1000:
                total, cur = total + max(cur, 1) * v, 0
            elif v == 20 and prev == 4 and p.startswith("vingt"):
                cur += 76  # "quatre-vingt(s)": four twenties
            else:
                cur += v
            prev, seen = v, True
    return float(total + cur) + (0.5 if half else 0.0) if seen else None


def _not_a_quantity(text: str, start: int, end: int) -> bool:
    before, after = text[max(0, start - 12) : start], text[end : end + 3]
    if re.search(r"[A-Za-z]{1,6}[-_/#]$|#$|\w[-_]$|[A-Za-z]$|[vV]$", before):
        return True  # an identifier (OPS-4471, tr_5531, #8812, v1.2, H-2) or glued to a word
    if re.match(r"[-_/:]?\d|[A-Za-z]{2}", after) or re.match(r"[:][0-5]\d", after):
        return True  # part of a longer token (2025-03-13, 15:59, 10.30am handled by times)
    if re.search(r"\d[:/.-]$", before) and not re.search(r"\d\.$", before):
        return True
    return False


_CUR_WORD = (
    r"(?:US[\s-]?)?(?:dollars?|dólar(?:es)?|euros?|pounds?|yen|francs?|usd|eur|gbp|jpy|chf|\$|€|£|¥)(?!\w)"
)


# after an amount: "per dollar", "pro Euro", "pour un dollar", "to the dollar", "/USD": an exchange rate, not the
# amount asked for ("$131.42 a share" is fine)
_RATE = re.compile(
    r"\s*(?:per|pro|je|par|por|/|(?:for|für|pour|por|per|voor|para)\s+(?:each|every|one|a|1|einen|ein|jeden|un|une|"
    r"chaque|cada|uno|ogni|één|elke|um)|(?:to|against)\s+the|le|l'|al|au)\s*" + _CUR_WORD,
    re.I,
)


# before an amount: "1 EUR = ", "one US dollar buys ", "für einen Euro bekommst du ", "un euro vaut ": the
# amount is what one unit of the other currency is worth, a rate
_RATE_BASE = re.compile(
    r"(?:(?<![\d.,])1|\b(?:one|each|every|ein|einen|eine|jeden|un|une|chaque|uno|una|cada|ogni|um|uma|één|elke))"
    r"\s*" + _CUR_WORD + r"[^\d.;:!?\n]{0,30}$|[$€£¥]\s?1(?![\d.,])[^\d.;:!?\n]{0,12}$",
    re.I,
)


# a rate or a conversion factor named before the value ("exchange rate of", "Wechselkurs beträgt", "taux de", "tipo de
# cambio de", "the conversion factor is", "Umrechnungsfaktor:") or after it ("today's 0.9184 rate")
_RATE_WORD = re.compile(
    r"(?:\brate|kurs|\btaux(?: de change)?|\bcambio|\bfactor|faktor|\bfacteur|\bfattore|\bmultiplier|\btasso(?: di cambio)?|koers|\btaxa(?: de c[âa]mbio)?|"
    r"\bc[âa]mbio|\bcota[çc][ãa]o|\bcotizaci[óo]n)\b(?P<link>(?:\W+(?:of|von|de|di|van|do|da|du|del|bei|liegt|"
    r"beträgt|lautet|is|was|est|es|è|é|ist|at|about|around|roughly|approx\w*|d'environ|etwa|unos|today|heute|"
    r"aujourd'hui|hoy|oggi|hoje|vandaag|actuel|aktuell|current|currently|momentan|aktuelle|actual|attuale|atual|"
    r"huidige|(?-i:[A-Z]{3})\s*(?:→|->|=>|/|-|\s(?:to|in|into|en|zu|nach|a|in)\s)\s*(?-i:[A-Z]{3})))*)(?P<tail>\W*)$",
    re.I,
)


# words that give the rate's value ("rate of", "Kurs von", "taux de", "rate is", "Kurs:") rather than the
# manner ("nach dem aktuellen Kurs $1,344.12", "at today's rate €229.60": there the amount is the result)
_RATE_LINK = re.compile(
    r"\b(of|von|de|di|van|do|da|du|del|bei|beträgt|lautet|is|was|est|es|è|ist)\b|[:=]", re.I
)


# a preposition that gives the rate a conversion used ("€229.60 at 0.9184", "@ 1.0888", "au 1,0888", "mit 1,0888"):
# a bare number with three or more decimals after it, in an answer that names money, is that rate
_RATE_AT = re.compile(r"(?:\bat|@|\bau|\bà|\bal|\ba|\bzum|\bzu|\bmit|\btegen|\bcon)\s*$", re.I)
_MONEY_NAMED = re.compile(
    r"[$€£¥]|\b(?:USD|EUR|GBP|JPY|CHF)\b|\b(?:dollars?|euros?|pounds?|dólar|Dollar)", re.I
)


_RATE_WORD_AFTER = re.compile(r"\s*(?:exchange\s+)?rate\b", re.I)


_CENTS = re.compile(
    r"\s+(?:and|und|et|y|e|en)\s+([^\W\d_][^\W\d_ -]*(?:[ -][^\W\d_]+)*?|\d{1,2})\s+"
    r"(?:cents?|pence|centimes|céntimos|centavos|cêntimos|centesimi|eurocent)\b",
    re.I,
)


# a number word below 100 right after a currency word ("thirteen euros seventy-seven", "twelve hundred fifty euros,
# seventy-five") is the cents when the phrase ends with it, or a verb or a price's "a share"/"each" follows ("…
# euros, seventy-five went to", "dollars forty-two a share"); one that counts or measures something else ("euros,
# seventy-seven percent", "euros, thirty shares") is not
_BARE_CENTS_LEAD = re.compile(r",?[ \t]+")
_BARE_CENTS_END = re.compile(
    r"\s*(?:$|[.,;:!?)\]\n—–]|-\s|(?:and|but|so|which|that|right|now|today|exactly|precisely|flat|even|in|on|at|"
    r"after|back|left|total|altogether|from|is|was|were|will|would|has|had|cents?|each|apiece|went|go|goes|"
    r"[^\W\d_]+ed|(?:a|an|per|the)\s+(?:share|unit|piece|item|ticket|night|month|year|week|day|person|head)s?)\b)",
    re.I,
)


# a decimal in words: "forty-two point one six", "Komma eins zwei", "virgule", "coma", "virgola", "vírgula"; the
# digits after it are said one by one
_POINT = re.compile(r"[ \t]+(?:point|komma|virgule|coma|virgola|v[íi]rgula)[ \t]+", re.I)
_ZERO_WORDS = {"zero": 0, "oh": 0, "null": 0, "zéro": 0, "cero": 0, "nul": 0}


def _spoken_decimals(t: str, pos: int, lang: str | None) -> tuple[str, int] | None:
    """The digits said one by one from ``pos`` ("one six" -> "16") and where they end, or None."""
    parts = _LANG_PARTS.get(lang, _LANG_PARTS[None])
    digits, end = "", pos
    for w in re.finditer(r"[^\W\d_]+", t[pos:]):
        start = pos + w.start()
        if t[end:start].strip(" \t") or (digits and start == end):
            break
        word = w.group(0).lower()
        d = _ZERO_WORDS.get(word, parts.get(word))
        if d is None or d > 9:
            break
        digits, end = digits + str(d), pos + w.end()
    return (digits, end) if digits else None


# just before a number word: "the two", "of these three", "both": a count of things, not a quantity
_DETERMINER = re.compile(
    r"\b(the|these|those|all|both|each|every|which|(?<!upwards )(?<!excess )(?<!shy )of)\s+$", re.I
)  # "upwards of twelve hundred" is a bound


def _is_rate(t: str, m: re.Match[str], money: bool) -> bool:
    """Is the number ``m`` an exchange rate: what one unit of a currency is worth ("1 EUR = 1,0888 USD", "one
    dollar buys 0.9184 euros", the "1 EUR" itself), or a value a rate word names ("Kurs von 1,0888", "taux de
    0,9184", "today's 0.9184 rate")? A bare number needs three decimals to be read as a rate."""
    before = t[max(0, m.start() - 60) : m.start()]
    decimals = re.search(r"[.,](\d+)$", m.group("num"))
    rate_like = money or (decimals is not None and len(decimals.group(1)) >= 3)
    if money and _RATE_BASE.search(before):
        return True
    if money and re.fullmatch(r"0*1(?:[.,]0+)?", m.group("num")):
        # "1 EUR = 1,0888 USD": the one is the base of a rate when another currency's amount follows
        nxt = re.match(
            r"[^\d.;!?\n]{0,25}?(?:=|≈|\bis\b|\bequals\b|\bbuys\b|\bgets\b|\bentspricht\b|\bsind\b|"
            r"\bvaut\b|\bvale\b|\bequivale\b|:)\s*(?:US\$|[$€£¥]|[A-Z]{3}\b)?\s*\d",
            t[m.end() :],
            re.I,
        )
        if nxt is not None:
            return True
    if rate_like and _RATE_WORD_AFTER.match(t, m.end()):
        return True
    if not money and rate_like and _RATE_AT.search(before) and _MONEY_NAMED.search(t):
        return True  # "→ $15,613.66 at 1.0888", "converted at 0.9184"
    named = _RATE_WORD.search(before)
    if rate_like and named is not None:
        # a money amount is the rate only after a word that gives its value; a bare number with three decimals
        # right after the rate word ("Kurs 1,0888") is one too
        return _RATE_LINK.search(named.group("link") + named.group("tail")) is not None or not money
    return False


# a link that gives what one unit is worth in another: "1 mile = 1.609 km", "one mile equals roughly", "a mile is
# about", "each degree Celsius of difference is", "ein Kilometer sind", "un mille vaut"
_UNIT_LINK = (
    r"[^\d.;:!?\n]{0,30}?(?:=|≈|~|\b(?:is|are|equals?|makes|means|corresponds to|converts to|translates to|works out to|comes to|amounts to|"
    r"entspricht|ist|sind|vaut|fait|équivaut à|equivale a|vale|es|è|é|equivalem|is gelijk aan)\b)"
    r"[^\d.;:!?\n]{0,20}?"
)
_UNIT_BASE = re.compile(
    r"(?:(?<![\d.,])1|\b(?:one|each|every|a|an|per|ein|eine|einen|jeder|jede|un|une|chaque|uno|una|cada|ogni|"
    r"um|uma|één|elke))\s*(?:degrees?\s+|grad\s+)?(?P<unit>" + _UNIT_ALT + r")\b" + _UNIT_LINK + r"$",
    re.I,
)
_UNIT_LINK_AFTER = re.compile(
    _UNIT_LINK + r"(?P<next>" + _NUM_CORE + r")\s?(?P<unit>" + _UNIT_ALT + r"|°\s?[CF])\b", re.I
)


def _unit_rate(t: str, m: re.Match[str], unit: Unit) -> bool:
    """Is the number ``m`` (in ``unit``, no money) what ONE unit of another unit of its kind is worth ("1 mile =
    1.609 km", "each mile is about 1.6 km", "one degree Celsius of difference is 1.8 °F"), or the one such unit
    itself ("1 mi" before "= 1.60934 km")? That is a conversion factor, a rate, not a result."""
    base = _UNIT_BASE.search(t, max(0, m.start() - 80), m.start())
    if base is not None and base.end() == m.start():
        other = unit_of(base.group("unit"))
        if other is not None and other.dim == unit.dim and other.name != unit.name:
            return True
    return re.fullmatch(r"0*1(?:[.,]0+)?", m.group("num")) is not None and _one_unit_worth(t, m.end(), unit)


def _one_unit_worth(t: str, end: int, unit: Unit) -> bool:
    """Does what follows one ``unit`` (ending at ``end``) give its worth in another unit of its kind ("1 mi =
    1.60934 km", "one degree Celsius of difference is 1.8 °F")?"""
    scale = re.match(r"\s*(?:celsius|fahrenheit|kelvin)\b", t[end:], re.I)
    nxt = _UNIT_LINK_AFTER.match(t, end + (scale.end() if scale else 0))
    if nxt is None:
        return False
    other = unit_of(nxt.group("unit").replace(" ", ""))
    return other is not None and other.dim == unit.dim and other.name != unit.name


# degrees that measure an angle: of latitude or longitude, towards a point of the compass, in the sky, of a slope
# ("20 degrees further north", "some 19 degrees south of", "38.7° N", "20 degrees higher in the sky", "a 30-degree
# angle", "20 grados más al norte"); "18 degrees warmer" stays a temperature
_ANGLE_AFTER = re.compile(
    r"\s?-?(?:°|º|(?:degrees?|deg|grados?|grad|gradi|graus|graden|degrés?)(?![^\W\d_]))\s*(?:"
    r"(?:of\s+|de\s+|di\s+|nördlicher\s+|südlicher\s+)?(?:latitude|longitude|latitud|longitud|latitudine|"
    r"longitudine|breite|länge|arc)\b"
    r"|(?:(?:further|farther|more|due|to\s+the|más\s+al|plus\s+au|weiter|più\s+a)\s+)?(?:north|south|east|west|"
    r"norte|sur|nord|sud|nördlich|südlich)\w*"
    r"|(?-i:[NSEW])\b"
    r"|(?:higher|lower)\s+(?:in\s+the\s+sky|above\s+the\s+horizon)"
    r"|(?:angle|tilt|slope|incline|bearing|heading|turn|rotation)\b)",
    re.I,
)
_ANGLE_BEFORE = re.compile(
    r"\b(?:latitude|longitude|latitud|longitud|breite|angle|tilt|bearing)\s*(?:of|is|at|de|von|:)?\s*"
    r"(?:about|roughly|around|some|approximately|~)?\s*$",
    re.I,
)


def _angle(t: str, start: int, end: int) -> bool:
    """Is the number from ``start`` to ``end`` a measure of an angle (a latitude, a bearing, a slope)?"""
    return (
        _ANGLE_AFTER.match(t, end) is not None
        or _ANGLE_BEFORE.search(t, max(0, start - 40), start) is not None
    )


# a range named by its decade ("in the low $130s", "the high €680s", "somewhere in the 130s", "mid-20s °C"): the
# words before the figure that make it one, and the part of the decade they name
_DECADE_PART = r"(?P<part>low|lower|early|mid|middle|high|upper|late)"
_DECADE_LEAD = re.compile(
    # "the" alone after a preposition only: "in the 130s", but "the 30s timeout" is thirty seconds
    r"(?:\b(?:in|into|around|about|near|within)\s+the\s+|\bthe\s+"
    + _DECADE_PART
    + r"[-–\s]?\s?|\b"
    + _DECADE_PART.replace("part", "part2")
    + r"[-–\s]\s?)"
    r"(?:US\$|[$€£¥])?\s?$",
    re.I,
)
# a decade of years after a bare "the" ("since the 2010s", "the 1980s"): no seconds, as "the 30s timeout" is
_YEARS_LEAD = re.compile(r"\bthe\s+$", re.I)
_YEARS = re.compile(r"1[5-9]\d0|20\d0")
_DECADE_SHARE = {
    "low": (0.0, 0.4),
    "lower": (0.0, 0.4),
    "early": (0.0, 0.4),
    "mid": (0.3, 0.7),
    "middle": (0.3, 0.7),
    "high": (0.6, 1.0),
    "upper": (0.6, 1.0),
    "late": (0.6, 1.0),
}
_DECADE_UNIT = re.compile(r"\s?(?:[°º]\s?[CFcf]\b|[°º℃℉]|(?:" + _UNIT_ALT + r")(?![\w/]))", re.I)


def _decade(t: str, m: re.Match[str]) -> Quantity | None:
    """The range a figure ending in zero names with a plural "s" after a lead ("in the low $130s": 130 to 134,
    "the high €680s": 686 to 690, "somewhere in the 1800s": 1800 to 1900, "mid-20s °C"): an approximation that
    holds a value without stating it. None when the figure is no such range."""
    num = m.group("num")
    if not re.fullmatch(r"[1-9]\d*0", num) or not re.match(r"['’]?s\b", t[m.end("num") :]):
        return None
    lead = _DECADE_LEAD.search(t, 0, m.start("num")) or _YEARS_LEAD.search(t, 0, m.start("num"))
    if lead is None or lead.re is _YEARS_LEAD and not _YEARS.fullmatch(num):
        return None
    if m.group("sign") and not re.search(_DECADE_PART + r"$", t[: m.start("sign")], re.I):
        return None  # "mid-20s": the hyphen joins the part to the figure; any other sign is one
    n = float(num)
    span = 10.0 ** (len(num) - len(num.rstrip("0")))
    part = lead.groupdict().get("part") or lead.groupdict().get("part2") or ""
    lo, hi = _DECADE_SHARE.get(part.lower(), (0.0, 1.0))
    end = m.end("num") + len(re.match(r"['’]?s", t[m.end("num") :]).group(0))  # type: ignore[union-attr]
    unit_text = m.group("pre") or m.group("pre2") or ""
    u = _DECADE_UNIT.match(t, end)
    if not unit_text and u and (len(u.group(0).strip()) > 1 or u.group(0).strip() in "°º℃℉"):
        unit_text, end = u.group(0).strip(), u.end()  # "mid-20s °C", "the 130s dollars"; not "… 130s a share"
    unit = unit_of(unit_text.replace("US$", "usd")) if unit_text else None
    start = m.end("sign") if m.group("sign") else m.start()
    return Quantity(n, unit, t[start:end].strip(), start, end, n + lo * span, n + hi * span)


def _range_start_days(t: str) -> list[tuple[int, int]]:
    """The first day of a day range before its month ("between 1 and 31 March", "1–31 March", "du 1 au 31 mars"):
    a date, no count (the second day is read as a date with its month)."""
    out = []
    for m in DAY_RANGE_START.finditer(t):
        g = "d" if m.group("d") is not None else "d2"
        out.append((m.start(g), m.end(g)))
    return out


def quantities(text: str, lang: str | None = None) -> list[Quantity]:
    """Every number the text states, with its unit; times, dates, years after months and ids are skipped."""
    t = strip_markdown(text)
    spans_taken: list[tuple[int, int]] = []
    spans_taken.extend(time_spans(t))
    for rx in (DATE_ISO, DATE_NUMERIC, DATE_WORDS_DM, DATE_WORDS_MD, DAY_RANGE_MD, MONTH_YEAR):
        for m in rx.finditer(t):
            spans_taken.append((m.start(), m.end()))
    spans_taken.extend(_range_start_days(t))
    out: list[Quantity] = []
    cents_taken: list[tuple[int, int]] = []  # the cents of an amount already read ("1344 Dollar und 12 Cent")
    scale_words: list[tuple[int, int]] = []  # the scale word after a figure, read with it ("4.2 thousand")
    for m in _QTY.finditer(t):
        s, e = m.start("num"), m.end("num")
        if any(a <= s < b for a, b in spans_taken + cents_taken):
            continue
        if (decade := _decade(t, m)) is not None:
            out.append(decade)
            continue
        if _not_a_quantity(t, s, e) and not m.group("pre") and not m.group("pre2"):
            continue
        v = parse_number(m.group("num"), lang)
        if v is None:
            continue
        if m.group("sign") and m.group("sign") in "-−–" and (s < 2 or not t[m.start("sign") - 1].isdigit()):
            v = -v
        elif re.search(r"\b(minus|negative)\s*$", t[max(0, m.start() - 10) : m.start()], re.I):
            v = -v
        suf = (m.group("suffix") or "").strip().lower()
        unit_text = m.group("pre") or m.group("pre2") or (m.group("unit") or "").lstrip("-")
        if suf and not (m.group("pre") or m.group("pre2")) and suf not in _SCALE_SUFFIX:
            unit_text, suf = (
                unit_text or (m.group("suffix") or "").strip(),
                "",
            )  # "500 K" is kelvin, "5 m" metres
        v *= {"k": 1e3, "m": 1e6, "bn": 1e9, **_SCALE_SUFFIX}.get(suf, 1)
        if suf in _SCALE_SUFFIX:
            scale_words.append((m.start("suffix"), m.end("suffix")))
        unit = unit_of(unit_text.replace("US$", "usd"))
        if unit is None and unit_text.strip() in ("°", "º"):
            unit = None  # bare degrees: a temperature of unknown scale
        ut = (m.group("unit") or "").strip().lstrip("-").lower()
        if unit is not None and ut == "in" and not (m.group("pre") or m.group("pre2")):
            unit = None  # "5 in the morning": the preposition, not inches ("$1,840.25 in" stays dollars)
        if unit is None and not suf and _year(t, m):
            continue  # "since 1921", "the 1908 London Olympics": a year, no amount or count
        if unit is not None and _RATE.match(t, m.end()):
            continue  # "0.9184 euros per dollar", "55 km per hour" is fine (a unit), a rate is not an amount
        if (unit is None or unit.dim.startswith("money")) and _is_rate(t, m, unit is not None):
            continue  # "1 EUR = 1,0888 USD", "Kurs von 1,0888", "one dollar buys 0.9184 euros"
        if unit is not None and not unit.dim.startswith("money") and _unit_rate(t, m, unit):
            continue  # "1 mile = 1.609 km", "each mile is about 1.6 km": a conversion factor, not a result
        if (unit is None or unit.dim == "temperature") and _angle(t, s, e):
            continue  # "20 degrees further north", "38.7° N": a latitude or an angle, no temperature
        if (
            unit is not None
            and unit.dim.startswith("money")
            and re.fullmatch(r"\d{1,3}\.\d{3}", m.group("num"))
        ):
            v = float(m.group("num").replace(".", ""))  # "EUR 9.800": money has cents, not tenths of cents
        if unit is not None and unit.dim.startswith("money") and v == int(v):
            cents = _CENTS.match(t, len(t[: m.end()].rstrip()))
            if cents and (
                c := _words_value(cents.group(1), lang)
                if not cents.group(1).isdigit()
                else float(cents.group(1))
            ):
                v += (c if v >= 0 else -c) / 100  # "1344 Dollar und 12 Cent", "$131 and 42 cents"
                cents_taken.append((cents.start(), cents.end()))
        out.append(_bounded(t, Quantity(v, unit, m.group(0).strip(), m.start(), m.end())))
    cents_end = -1
    word_re = _WORD_RES.get(lang, _WORD_RE)
    written = lang if lang in _LANG_WORDS else None
    for m in word_re.finditer(t):
        if m.start() < cents_end or any(a <= m.start() < b for a, b in cents_taken + scale_words):
            continue  # the cents (or decimals) of an amount already read, a figure's scale word ("4.2 crore")
        if _foreign_alone(m.group(0), written, t[m.end() :]):
            continue  # "Ten en cuenta" in a Spanish answer: a word of the answer's language, not ten
        v = _words_value(m.group(0), lang)
        single = m.group(0).strip().lower()
        end = m.end()
        decimals = _point_decimals(t, end, lang) if v is not None and v == int(v) else None
        if v is not None and decimals is not None:
            v, end = (
                float(f"{int(v)}.{decimals[0]}"),
                decimals[1],
            )  # "forty-two point one six", "point sixteen"
            cents_end = end
        if decimals is None and (
            v is None
            or single in _NOT_ALONE
            and not re.match(r"\s*(%|percent|degree|grad)", t[m.end() :], re.I)
        ):
            continue  # "one", "un", "once" are mostly not numbers
        if _DETERMINER.search(t, 0, m.start()) and not re.match(
            r"\s*(%|percent|degree|grad|°|" + _CUR_WORD + ")", t[end:], re.I
        ):
            continue  # "the warmer of the two", "these three": a count of things named before, not a result
            # ("a transfer of twelve hundred euros" is an amount)
        if v is None:  # read above; here for the type checker
            continue
        tail = re.match(r"\s*(?:" + _UNIT_ALT + r")\b|\s*°\s?[CF]?", t[end:], re.I)
        if tail is not None and len(tail.group(0).strip()) == 1 and tail.group(0).strip() not in "°%$€£¥":
            tail = None  # "fifty-five k's", "two m": a one-letter unit after a number word is not one
        unit = unit_of(tail.group(0).strip()) if tail else None
        if (
            unit is not None
            and tail is not None
            and v == 1
            and not unit.dim.startswith("money")
            and _one_unit_worth(t, end + len(tail.group(0)), unit)
        ):
            continue  # "one degree Celsius of difference is 1.8 °F": the base of a conversion factor
        if (unit is None or unit.dim == "temperature") and _angle(t, m.start(), end):
            continue  # "twenty degrees of latitude": an angle, no temperature
        if unit is not None and unit.dim.startswith("money") and tail is not None:
            after = end + len(tail.group(0))
            cents = _CENTS.match(t, after)
            lead = _BARE_CENTS_LEAD.match(t, after)
            bare = word_re.match(t, lead.end()) if lead and decimals is None and unit.name != "jpy" else None
            bare_cents = _words_value(bare.group(0), lang) if bare else None
            if (
                bare is not None
                and bare_cents is not None
                and 1 <= bare_cents < 100
                and bare_cents == int(bare_cents)
                and _BARE_CENTS_END.match(t, bare.end())
            ):
                v += (
                    bare_cents / 100
                )  # "thirteen euros seventy-seven", "twelve hundred fifty euros, seventy-five"
                cents_end = bare.end()
            elif cents and (
                c := _words_value(cents.group(1), lang)
                if not cents.group(1).isdigit()
                else float(cents.group(1))
            ):
                v += c / 100  # "six hundred eighty-seven euros and thirty cents"
                cents_end = cents.end()
        out.append(
            _bounded(
                t,
                Quantity(
                    v, unit, t[m.start() : end].strip() + (tail.group(0) if tail else ""), m.start(), end
                ),
            )
        )
    out.sort(key=lambda q: q.pos)
    for a, b in zip(
        out, out[1:], strict=False
    ):  # "20–30 minutes", "between 3 and 5 days": one unit, both ends
        gap = t[a.end : b.pos]
        dash = (
            re.fullmatch(r"\s*(?:[-–—]|to|bis|a|à)\s*", gap, re.I)
            or (not gap.strip() and b.text[:1] in "-–—")
            # "between 3 and 5 days", "entre 3 et 5 jours"
            or (
                re.fullmatch(r"\s*(?:and|und|et|y|e|en)\s*", gap, re.I)
                and re.search(r"\b(?:between|zwischen|entre|tra|fra|tussen)\s*$", t[: a.pos], re.I)
            )
        )
        if a.unit is None and b.unit is not None and dash:
            a.unit = b.unit
    return out


# a year: four digits after "since", "until", "as of", "circa", "the year" (always), after "in"/"during" when no
# word that counts something follows ("in 1921, …", "in 2019 the …"; not "in 1500 steps"), or after "the"/"its"
# … when a name or an event follows ("the 1908 London Olympics", "the 2024 season")
_YEAR_DIGITS = re.compile(r"1\d{3}|20\d\d")
_YEAR_ALWAYS = re.compile(
    r"\b(?:since|until|till|circa|ca\.|c\.|as\s+of|back\s+in|the\s+year|(?:summer|spring|autumn|fall|winter|end|"
    r"start|beginning|middle|class)\s+of)\s+$",
    re.I,
)
_YEAR_IN = re.compile(
    r"(?<!\bresulting\s)(?<!\bresulted\s)(?<!\bcame\s)(?<!\bcomes\s)\b(?:in|during)\s+$", re.I
)
_YEAR_OWNER = re.compile(r"\b(?:the|its|his|her|their|our|your|this|that|last)\s+$", re.I)
_YEAR_MONTH = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|"
    r"september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)
# what follows a year after "in": the end of a phrase, a name, another year, or a word that begins a clause
_AFTER_YEAR_IN = re.compile(
    r"\s*(?:$|[.,;:!?)\]—–-]|(?!"
    + _YEAR_MONTH
    + r")(?-i:[A-Z])|(?:the|a|an|we|i|you|it|they|he|she|this|that|"
    r"these|those|there|its|their|our|your|his|her|and|or|but|when|while|which|where|after|before|until|at|on|"
    r"for|with|as|so|was|were|is|has|had|have|to|alone|already|onwards?)\b)",
    re.I,
)
# an event or a period a year names after "the": "the 2024 season", "the 1908 Olympics", "the 2019 census"
_AFTER_YEAR_OWNER = re.compile(
    r"\s+(?:(?!" + _YEAR_MONTH + r")(?-i:[A-Z])|(?:olympics?|olympic|games|season|edition|election|census|"
    r"world\s+cup|championships?|tournament|final|summer|winter|spring|autumn|fall|race|marathon|crisis|"
    r"recession|budget|fiscal|financial\s+year|tax\s+year|model\s+year|survey|split|merger|launch)\b)",
    re.I,
)


def _year(t: str, m: re.Match[str]) -> bool:
    """Is the bare figure ``m`` (four digits, no unit, no currency) a year by what stands around it ("since
    1921", "in 2019, …", "the 1908 London Olympics")? "1908 km", "€1908", "a count of 2019" and "2019 orders"
    stay numbers."""
    num = m.group("num")
    if not _YEAR_DIGITS.fullmatch(num) or m.group("pre") or m.group("pre2") or m.group("sign"):
        return False
    start = m.start("num")
    if _YEAR_ALWAYS.search(t, max(0, start - 30), start):
        return True
    if _YEAR_IN.search(t, max(0, start - 30), start):
        return _AFTER_YEAR_IN.match(t, m.end("num")) is not None
    if _YEAR_OWNER.search(t, max(0, start - 12), start):
        return _AFTER_YEAR_OWNER.match(t, m.end("num")) is not None
    return False


# a bound before a figure: "over", "more than", "at least", "upwards of" (from below), "under", "less than",
# "fewer than", "just shy of", "not quite", "at most" (from above), also "well over", "a bit less than", "over a thousand"
_BOUND_BEFORE = re.compile(
    r"\b(?:(?:well|way|far|just|a\s+bit|slightly|a\s+little|somewhat|comfortably|easily|a\s+touch)\s+)?(?:"
    r"(?P<above>over|above|more\s+than|at\s+least|upwards\s+of|in\s+excess\s+of|no\s+(?:less|fewer)\s+than|"
    r"not\s+(?:less|fewer)\s+than|mehr\s+als|plus\s+de|m[áa]s\s+de|pi[ùu]\s+di|meer\s+dan)"
    r"|(?P<below>under|below|less\s+than|fewer\s+than|(?:just\s+)?shy\s+of|short\s+of|not\s+quite|at\s+most|no\s+more\s+than|"
    r"not\s+more\s+than|weniger\s+als|moins\s+de|menos\s+de|meno\s+di|minder\s+dan))"
    r"\s*(?:an?\s+)?$",
    re.I,
)


def _bounded(t: str, q: Quantity) -> Quantity:
    """``q`` as the bound it is when a bound word stands before it ("well over a thousand": from 1,000 up, "under
    €230": up to €230): a range open on one side that holds a value without stating it, as a decade does."""
    b = _BOUND_BEFORE.search(t, max(0, q.pos - 40), q.pos)
    if b is not None:
        q.low, q.high = (q.value, math.inf) if b.group("above") else (-math.inf, q.value)
    return q


def _foreign_alone(phrase: str, written: str | None, after: str) -> bool:
    """Is ``phrase`` a number word of another language's table in an answer written in ``written`` (the answer's
    language, when the scenario asks one), with no unit after it and not a run of English number words? Then it is
    an ordinary word of the answer's language: Spanish "Ten en cuenta" and "Ten una chaqueta" (keep in mind, have a
    jacket), Portuguese "dos dias" (of the days), French "sac à dos" (backpack). One before a unit ("ten grados")
    and "twenty-one" stay numbers."""
    if written is None:
        return False
    words = [w for w in re.findall(r"[^\W\d_]+", phrase.lower()) if w not in _JOINERS]
    if all(_split(w, _LANG_WORDS[written]) is not None for w in words):
        return False
    if len(words) > 1 and all(w in _ENGLISH for w in words):
        return False
    return re.match(r"\s*(?:%|°|º|" + _UNIT_ALT + r")(?![^\W\d_])", after, re.I) is None


# number words that are mostly other words when they stand alone ("one of them", "once", "sept", "e")
_NOT_ALONE = {"one", "un", "una", "uno", "e", "once", "sept", "ein", "eine", "een", "um", "uma", "sei", "mil"}
_ALONE_IN = {
    ("once", "es"),
    ("sept", "fr"),
}  # a number in the answer's language ("de once a doce", "à sept heures")


def _word_groups(phrase: str, lang: str | None) -> list[int] | None:
    """The numbers a run of number words says, in order: "twenty-one" -> [21], "twelve hundred fifty" -> [1250],
    "eleven twelve" -> [11, 12], "fifteen thirty" -> [15, 30] (a teen or a ten never takes a ten after it)."""
    values = _LANG_PARTS.get(lang, _LANG_PARTS[None])
    groups: list[list[int]] = []
    for w in re.findall(r"[^\W\d_]+", phrase.lower()):
        if w in _JOINERS:
            continue
        if _split(w, values) is None:
            return None
        v = _words_value(w, lang)
        if v is None:
            return None
        n = int(v)
        g = groups[-1] if groups else None
        last = g[-1] if g else None
        fits = last is not None and (
            (n < 10 and 20 <= last < 100 and last % 10 == 0)  # twenty one
            or (n == 100 and 0 < last < 100)  # twelve hundred
            or (n >= 1000 and g is not None and 0 < _words_total(g) < n)  # two thousand
            or (last >= 100 and last in _SCALES.values() and n < last)  # hundred five, crore twenty lakh
            or (last >= 100 and last % 100 == 0 and last not in (100, 1000) and n < 100 and len(g or []) == 1)
        )
        if fits and g is not None:
            g.append(n)
        else:
            groups.append([n])
    return [_words_total(g) for g in groups]


def _words_total(parts: list[int]) -> int:
    total, cur = 0, 0
    for p in parts:
        if p == 100:
            cur = max(cur, 1) * 100
        elif p >= 1000:
            total, cur = total + max(cur, 1) * p, 0
        else:
            cur += p
    return total + cur


def _point_decimals(t: str, end: int, lang: str | None) -> tuple[str, int] | None:
    """The decimals after "point" from ``end``: said digit by digit ("point one six" -> "16") or, when one number
    word from ten to ninety-nine alone follows, as that two-digit number ("point sixteen" -> "16", "point
    forty-two" -> "42"); None when no "point" follows."""
    point = _POINT.match(t, end)
    if point is None:
        return None
    digits = _spoken_decimals(t, point.end(), lang)
    word_re = _WORD_RES.get(lang, _WORD_RE)
    two = word_re.match(t, point.end())
    if two is not None:
        v = _words_value(two.group(0), lang)
        groups = _word_groups(two.group(0), lang)
        if v is not None and groups is not None and len(groups) == 1 and 10 <= v < 100 and v == int(v):
            return f"{int(v)}", two.end()
    return digits


def digits_read(text: str, lang: str | None = None) -> str:
    """The text with its numbers in words written in digits: "seat fourteen C" -> "seat 14 C", "eleven to twelve"
    -> "11 to 12", "twelve hundred fifty" -> "1250", "forty-two point sixteen" -> "42.16". A word that is mostly
    another word when it stands alone ("one", "once") stays as it is."""
    word_re = _WORD_RES.get(lang, _WORD_RE)
    written = lang if lang in _LANG_WORDS else None
    out, pos = [], 0
    for m in word_re.finditer(text):
        if m.start() < pos or _foreign_alone(m.group(0), written, text[m.end() :]):
            continue
        phrase = m.group(0)
        half = re.search(r"\s+(?:and a half|y medio|et demi)$", phrase, re.I)
        groups = _word_groups(phrase[: half.start()] if half else phrase, lang)
        if not groups:
            continue
        alone = phrase.strip().lower()
        if len(groups) == 1 and not half and alone in _NOT_ALONE and (alone, lang) not in _ALONE_IN:
            continue
        end = m.end()
        said = " ".join(str(g) for g in groups)
        if half:
            said = f"{groups[-1]}.5" if len(groups) == 1 else said + ".5"
        elif (decimals := _point_decimals(text, end, lang)) is not None:
            said, end = f"{said}.{decimals[0]}", decimals[1]
        out.append(text[pos : m.start()] + said)
        pos = end
    return "".join(out) + text[pos:]


# "can not find" written apart is "cannot find" ("you can not only …" is another thing)
_CAN_NOT = re.compile(r"\bcan not\b(?!\s+only\b)", re.I)
# an affirmative reply: "I'd say so", "I reckon so", "I believe so", "I do think so" ("I don't think so" is none)
_AFFIRMATIVE = re.compile(
    r"(?<![\w'])I(?:'d|\s+would|\s+do)?\s+(?:say|think|believe|reckon|guess|suppose|imagine|expect)\s+so\b",
    re.I,
)


def read_out(text: str, lang: str | None = None) -> list[str]:
    """The text as written, then read out: English contractions expanded ("can't" as "cannot" and as "can not"),
    "can not" written apart as "cannot", numbers in words written in digits, an affirmative reply ("I'd say so",
    "I reckon so") as "yes"; each reading once. Answer patterns hold in any of them (graders/checks.py), and the
    unsure signals ask whether a pattern held only so (graders/confidence.py)."""
    out = [text]
    for cannot in ("cannot", "can not"):
        r = digits_read(expanded(text, cannot), lang)
        if cannot == "cannot":
            r = _AFFIRMATIVE.sub("yes", _CAN_NOT.sub("cannot", r))
        if r not in out:
            out.append(r)
    return out

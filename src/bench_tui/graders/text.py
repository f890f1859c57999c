"""Reading text: the layer every answer check starts from.

- ``sentences`` / ``word_count`` / ``line_count``: splitting that knows abbreviations (i.e., e.g., etc., Dr.,
  U.S.), decimals and version numbers; counts that ignore markdown and blank lines.
- ``statement`` / ``clauses``: the answer without its asides: parentheses, "for reference", "if you meant",
  conditionals ("that would be"), comparisons and caveats. What is left is what the answer asserts.
- ``detect_language`` by common-word ratio (en, es, fr, de, pt, it, nl) or script, a short list of facts by its
  English content words; ``written_in_other`` (an
  answer clearly in another language than the request's) and ``languages_named``; ``has_stem`` for inflected
  words; ``fold`` (lower case, no accents); ``id_shape`` (the shape of an identifier).

All of the answer reading (this module, ``numbers``, ``stated``, ``dates``, ``negation``, ``safety``) is
hand-written: the libraries that exist for parts of it (dateparser, langdetect, pint) are large, guess too
freely for grading (dateparser reads "3" as a date) or are nondeterministic (langdetect), and none separates a
conclusion from an aside."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

_ABBREV = (
    "i.e.",
    "e.g.",
    "etc.",
    "vs.",
    "approx.",
    "dr.",
    "mr.",
    "mrs.",
    "ms.",
    "prof.",
    "st.",
    "no.",
    "fig.",
    "cf.",
    "u.s.",
    "u.k.",
    "a.m.",
    "p.m.",
    "jan.",
    "feb.",
    "mar.",
    "apr.",
    "jun.",
    "jul.",
    "aug.",
    "sep.",
    "sept.",
    "oct.",
    "nov.",
    "dec.",
    "inc.",
    "ltd.",
    "co.",
    "jr.",
    "sr.",
    "min.",
    "max.",
    "ca.",
    "z.b.",
    "usw.",
    "bzw.",
    "p.ex.",
    "resp.",
    "ex.",
    "nr.",
)


_PLACEHOLDER = "\u2024"  # one-dot leader: stands in for a dot that does not end a sentence


def strip_markdown(text: str) -> str:
    t = re.sub(r"```[A-Za-z0-9_+-]*\n?", "", text)
    t = re.sub(r"\*\*|__|`|~~", "", t)
    t = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+)(?<=\S)\*(?!\*)", r"\1", t)
    t = re.sub(r"^\s{0,3}#+\s*", "", t, flags=re.M)
    t = re.sub(r"^\s{0,3}>\s?", "", t, flags=re.M)
    return t


def _protect(text: str) -> str:
    low = text.lower()
    out = list(text)
    for ab in _ABBREV:
        start = 0
        while True:
            i = low.find(ab, start)
            if i < 0:
                break
            # "No. 5" abbreviates a number; "so no. Try …" ends a sentence
            numbered = ab != "no." or re.match(r"\s?[\d#]", low[i + len(ab) :]) is not None
            if (i == 0 or not low[i - 1].isalpha()) and numbered:
                for k in range(i, i + len(ab)):
                    if out[k] == ".":
                        out[k] = _PLACEHOLDER
            start = i + len(ab)
    t = "".join(out)
    # decimals, versions, initials: a dot between digits, or after a single capital letter ("J. Smith")
    t = re.sub(r"(?<=\d)\.(?=\d)", _PLACEHOLDER, t)
    t = re.sub(r"(?<=\b[A-Z])\.(?=\s?[A-Z]\.)", _PLACEHOLDER, t)
    return t


_SPLIT = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)|\n")


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` (markdown removed). Abbreviations, decimals and versions do not end one."""
    t = _protect(strip_markdown(text))
    parts = [p.strip().replace(_PLACEHOLDER, ".") for p in _SPLIT.split(t)]
    return [p for p in parts if p and re.search(r"\w", p)]


def word_count(text: str) -> int:
    """Words as a reader counts them: "e.g." and "U.S." are one word each."""
    return len(re.findall(r"(?:\w\.){2,}|[\w'’-]+", strip_markdown(text)))


def line_count(text: str) -> int:
    return sum(1 for line in text.strip().splitlines() if line.strip())


# a closing line that speaks to the reader (a question, an offer, a wish): "Want another one?", "Hope you like it!"
_TO_READER = re.compile(
    r"\?\W*$|\b(you|your|vous|votre|tu|du|dir|dich|sie|ihnen|usted|te|ti|voc[eê])\b", re.I
)


def content_lines(text: str) -> list[str]:
    """The non-blank lines a reader counts as the content: without a lead-in (a first line ending in ":", or
    one or two one-line paragraphs before the content: "Cape Town is windy today.", a title) and without a
    closing line set apart by a blank line that speaks to the reader ("Want another one?")."""
    blocks: list[list[str]] = [[]]
    for ln in text.strip().splitlines():
        if ln.strip():
            blocks[-1].append(ln)
        elif blocks[-1]:
            blocks.append([])
    blocks = [b for b in blocks if b]
    dropped = 0
    while dropped < 2 and len(blocks) > 1 and len(blocks[0]) == 1 and any(len(b) > 1 for b in blocks[1:]):
        blocks, dropped = blocks[1:], dropped + 1
    if not dropped and blocks and len(blocks[0]) > 2 and re.search(r":\W*$", strip_markdown(blocks[0][0])):
        blocks[0] = blocks[0][1:]  # "Here's one:" right above the content
    if len(blocks) > 1 and len(blocks[-1]) == 1 and _TO_READER.search(strip_markdown(blocks[-1][0])):
        blocks = blocks[:-1]
    return [ln for b in blocks for ln in b]


def id_shape(token: str) -> re.Pattern[str] | None:
    """A regex for tokens shaped like ``token`` when it is an identifier (letters and digits: A-55120,
    QX7K2M, OPS-5120); None for ordinary words."""
    if not (re.search(r"\d", token) and re.search(r"[A-Za-z]", token)) or " " in token:
        return None
    shape = "".join("[A-Za-z]" if c.isalpha() else r"\d" if c.isdigit() else re.escape(c) for c in token)
    return re.compile(rf"(?<![\w-]){shape}(?![\w-])")


def unaccented(text: str, *, compatibility: bool = True) -> str:
    """``text`` without its accents ("degrés" → "degres"). ``compatibility`` also folds compatibility forms
    (NFKD: "º" → "o", "ﬁ" → "fi"); without it (NFD) signs such as "º" and "℃" stay as they are."""
    nf = unicodedata.normalize("NFKD" if compatibility else "NFD", text)
    return "".join(c for c in nf if not unicodedata.combining(c))


def fold(text: str) -> str:
    """Lowercase without accents (for language-tolerant matching)."""
    return unaccented(text.lower())


_ASIDE_BRACKETS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


# a list in square brackets that is a key's value ("pack: [umbrella, sweater]", "conditions": ["sunny"]): the
# value itself, not an aside; it holds words (a bare "[1]" stays a citation mark)
_VALUE_LIST = re.compile(r"(?<=[:=])[ \t]*\[([^\[\]]*[^\W\d_][^\[\]]*)\](?!\()")


# a sentence that starts like this is not the answer's statement
_ASIDE_LEAD = re.compile(
    r"^\W*(note|nb|n\.b\.|although|though|however,? if|if\b|for comparison|for reference|for context|"
    r"by contrast|in contrast|alternatively|otherwise|unlike|some people|many people|a common mistake|"
    r"common mistake|(a|one) common (error|misconception)|do not confuse|don't confuse|not to be confused|"
    r"that would be|this would be|it would be|that'd be|whereas|incidentally|by the way|fun fact|disclaimer|"
    r"in case you|should you|assuming you meant|or,? if|had you|were you|in fahrenheit|in celsius|in kelvin|"
    r"equivalents?\s*:|in other (?:units|scales)|(?:the )?same \w+ in other (?:units|scales)|"
    r"(the )?(working|calculation|steps?|check)\s*:)\b",
    re.I,
)


# a dash that opens the difference of the values compared ("— a gap of 18 °C", "— that makes a difference of 18
# °C", "— so 18 °C apart"): it ends a contrastive aside, and the difference after it is stated
_DIFFERENCE_TAIL = (
    r"\s*(?:[—–]|\s-\s)\s*(?:[^\d.;!?\n]{0,30}?\b(?:difference|gap|margin|spread|delta|lead|swing)\b|"
    r"[^\d.;!?\n]{0,20}\d[^.;!?\n]{0,16}?\b(?:apart|difference|gap|spread|margin)\b)"
)


# a clause (after ; , — or "but") that is conditional or contrastive asserts nothing; "though" set off by commas
# is an adverb, no conjunction ("Right now, though, it's 21 °C" states the 21 °C); it ends at a dash that opens a
# difference ("…, while Oslo is at 6 °C — a gap of 18 °C" states the gap)
_ASIDE_CLAUSE = re.compile(
    r"(?:[;,—–]|\s-\s|\bbut\b)\s*(?:although|though(?!\s*[,.;!?])|even though|whereas|unlike|as opposed to|"
    r"not to be confused with|contrary to|if you meant|if you wanted|if you want|if you'd like|"
    r"in case you|or if|while|which would be|that would be|it would be|in \w+ (that|it|this) would be|"
    r"(?P<reason>since|because|given that)|compared with|compared to|vs\.?|many people|some people|people often|"
    r"often (confused|mistaken)|a common (mistake|misconception)|commonly (thought|assumed|believed))\b"
    rf"(?:(?!{_DIFFERENCE_TAIL})(?:[^.;!?\n]|\.(?=\d)))*",
    re.I,
)


# a reason or a concession fronted after a connective at the start of a sentence ("But since you asked for kelvin,
# the answer is 500 K", "And although rain is due tomorrow, it is 21 °C now"): it ends at its comma, and the main
# clause after it is stated (a trailing one, "12, since 10% is 8", stays an aside)
_FRONTED_CLAUSE = re.compile(
    r"^\W*(?:but|and|yet)\s+(?:(?P<reason>since|because|given that)|although|though|even though|while|whereas)\b"
    r"[^,.;!?\n]*,\s*",
    re.I,
)


# a conditional lead that frames the facts rather than conditions them, ending at a colon: a guess to be weighed
# ("If you guessed Oslo is warmer, not today:", "If you figured …, think again:") or the question itself
# ("If you're wondering which is warmer:", "In case you were curious:"); what follows the colon is stated
_FRAMING_LEAD = re.compile(
    r"^\W*(?:if|in case)\s+you(?:'d|'re|\s+are|\s+were|\s+had)?\s+(?:\w+\s+)?(?:guess|thought|think|assum|"
    r"expect|figur|imagin|bet|believ|suppos|reckon|wonder|ask|curious)\w*[^:.!?\n]*:\s*",
    re.I,
)


# a hedge on the speaker's own reading, written as a condition ("If I'm reading these right,", "If I've done this
# right,", "If my arithmetic holds,", "If I'm not mistaken,"): no condition on the facts; what follows is stated
_OWN_READING_LEAD = re.compile(
    r"^\W*(?:if|unless|provided)\s+(?:I|I['’]m|I['’]ve|my|we['’]ve|we['’]re|our|memory)\b[^,:;.!?\n]{0,50}?"
    r"\b(?:right|correct(?:ly)?|properly|mistaken|misread\w*|accurate(?:ly)?|holds?|serves?|adds? up)\b"
    r"[^\w\n]{0,3}?[,:—–]\s*",
    re.I,
)


# an aside that restates (a conversion, a figure for reference) and then concludes: "In Fahrenheit that's 64.4, so
# Madrid is warmer by 64.4 degrees" commits to the conclusion after the comma, which is kept
_RESTATING_ASIDE = re.compile(
    r"^\W*(?:in (?:fahrenheit|celsius|kelvin)|for (?:reference|comparison|context))\b", re.I
)
_ASIDE_CONCLUSION = re.compile(r"[,;]\s*(?=(?:so|therefore|thus|hence|which means)\b)", re.I)


# "That'd be 12: 10% is 8 …", "It would be €13.77: …": a value right before a colon that opens its working (figures
# follow) answers the question; no conditional
_RESULT_THEN_COLON = re.compile(
    r"^\W*(?:that|this|it)(?:\s+would|['’]d)\s+be\s+(?:about\s+|roughly\s+|around\s+)?[^\s:]{1,16}"
    r"(?:\s[^\s:]{1,10})?:\s+(?=[^\n]*\d\D+\d)",
    re.I,
)


# a conditional ("that would be 440 °F") states nothing; "Friday would be my choice" recommends
_CONDITIONAL = re.compile(
    r"\b(would|could|might)\s+(have\s+)?(be|been|give|given|make|made|come to|read|equal(led)?)\b"
    r"(?!\s+(?:my|our)\s+(?:choice|pick|recommendation|suggestion|bet|favou?rite)\b)|\bif you meant\b",
    re.I,
)


def _bracket(m: re.Match[str]) -> str:
    inner = m.group(0)[1:-1]
    if (
        _ASIDE_LEAD.match(inner)
        or _CONDITIONAL.search(inner)
        or re.match(r"\W*(e\.g\.|i\.e\.|eg|ie)\b", inner)
    ):
        return " "
    return f", {inner},"


# how a question opens (a clause starting so is asked, not stated)
_QUESTION_LEAD = re.compile(
    r"(do|does|did|is|are|was|were|can|could|would|will|shall|should|may|might|have|has|what|which|who|whom|"
    r"whose|when|where|why|how|want|need|any|or)\b",
    re.I,
)


# the head of a block of values given for reference: a heading, a label line ("In other units:"), a bold line or a
# table's header row that opens with one of these ("| For reference | Value |", "### Equivalents")
_REFERENCE_CUE = (
    r"(?:just |purely )?for (?:reference|context|comparison)|as a reference|equivalents?|equivalent values|"
    r"(?:in )?other (?:units|scales)|(?:the )?same \w+ in other (?:units|scales)|como referencia|"
    r"a modo de (?:referencia|comparaci[oó]n)|para comparar|zum vergleich|zur (?:referenz|orientierung)|"
    r"(?:à titre de|pour) (?:r[ée]f[ée]rence|comparaison)|per (?:riferimento|confronto)|"
    r"ter (?:vergelijking|referentie)|para (?:refer[êe]ncia|compara[çc][ãa]o)"
)
_REFERENCE_HEAD = re.compile(rf"^(?:{_REFERENCE_CUE})\b", re.I)
_HEADING_LINE = re.compile(r"^\s{0,3}(?:#{1,6}\s+.*|\*\*[^*\n]+\*\*:?|__[^_\n]+__:?)\s*$")
_LABEL_LINE = re.compile(r"^\s{0,3}[^\W\d_][^:\n\d]{0,40}:\s*$")
# a line of prose that introduces a block for reference and ends at a colon, however long, figures and all: the
# cue opens it ("For reference only, here is 500 K on the other scales:", "For comparison, tomorrow's outlook:")
# or closes it ("Here are the other scales, just for reference:")
_REFERENCE_COLON_LINE = re.compile(
    rf"^\s{{0,3}}(?:[^\w\n]{{0,3}}(?:{_REFERENCE_CUE})\b[^\n]{{0,160}}|[^\n]{{0,160}}[\s,(—–-](?:{_REFERENCE_CUE})"
    r"(?: only| purposes)?[^\w\n]{0,3}):\s*$",
    re.I,
)


def _head_text(line: str) -> str:
    return re.sub(
        r"^[\s#>*_|]+|[\s*_|:]+$", "", line.split("|", 2)[1] if line.lstrip().startswith("|") else line
    )


def without_reference(answer: str) -> str:
    """``answer`` without the blocks it gives for reference: a table whose header opens "For reference" (its
    rows), a heading ("### Equivalents") and what is under it up to the next heading, a label line ("In other
    units:") and the lines right under it. The figures there restate the result in other terms ("Fahrenheit |
    440.33 °F" beside "500 K"); they are asides, as a sentence that opens "For reference" is."""
    lines = answer.split("\n")
    out: list[str] = []
    dropped = False
    i = 0
    while i < len(lines):
        line = lines[i]
        table_head = (
            line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?\s*:?-", lines[i + 1])
        )
        heading = _HEADING_LINE.match(line) is not None
        label = not heading and (
            _LABEL_LINE.match(line) is not None or _REFERENCE_COLON_LINE.match(line) is not None
        )
        head = _head_text(line)
        if not (
            (table_head or heading or label)
            and (_REFERENCE_HEAD.match(head) or (label and _REFERENCE_COLON_LINE.match(line)))
        ):
            out.append(line)
            i += 1
            continue
        i += 1
        if table_head:
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                i += 1
        elif heading:
            while i < len(lines) and not _HEADING_LINE.match(lines[i]):
                i += 1
        else:
            while i < len(lines) and not lines[i].strip():
                i += 1
            while i < len(lines) and lines[i].strip() and not _HEADING_LINE.match(lines[i]):
                i += 1
        out.append("")
        dropped = True
    if dropped and not re.search(r"\d", "\n".join(out)):
        # the block is an aside beside the answer's own statement; an answer that states no figure outside it
        # gives it there ("For reference:\n- 500 K" alone), and it is read
        return answer
    return "\n".join(out)


def statement(answer: str, *, keep_brackets: bool = False, keep_reasons: bool = False) -> str:
    """The answer without asides: brackets, questions, caveat/conditional sentences and clauses removed.

    ``keep_brackets``: keep bracketed data ("Madrid (24 °C)") unless it is itself a caveat or a conditional
    ("(that would be 440 °F)"); used when checking that a value is mentioned, not for the stated result.
    ``keep_reasons``: keep "since …"/"because …" clauses, which give working for a number but can carry a
    claim ("since there are no alerts it is most likely healthy"); used when reading what is asserted. Blocks
    given for reference (:func:`without_reference`) go with the brackets."""
    t = answer if keep_brackets else without_reference(answer)
    t = re.sub(r"\bTL;\s?DR\b", "TLDR", strip_markdown(t), flags=re.I)
    t = _VALUE_LIST.sub(lambda m: f" {m.group(1)} ", t)
    prev = None
    while prev != t:
        prev, t = t, _ASIDE_BRACKETS.sub(_bracket if keep_brackets else (lambda _m: " "), t)
    kept = []
    for s in sentences(t):
        if (lead := _FRAMING_LEAD.match(s)) is not None:
            s = s[lead.end() :]  # "If you guessed Oslo is warmer, not today: Madrid is …" states what follows
        if (lead := _OWN_READING_LEAD.match(s)) is not None:
            s = s[lead.end() :]  # "If I've done this right, you'd pay €13.77" asserts the €13.77
        if _ASIDE_LEAD.match(s) and not _RESULT_THEN_COLON.match(s):
            if not (_RESTATING_ASIDE.match(s) and (so := _ASIDE_CONCLUSION.search(s))):
                continue  # a caveat
            # "In Fahrenheit that's 64.4, so Madrid is warmer by 64.4 degrees": the conclusion is stated
            s = s[so.end() :]
        if s.rstrip().endswith("?"):
            # a question ("Want it in Fahrenheit instead?") states nothing; a statement a dash or a semicolon
            # sets before it does ("There's a request to wire EUR 8,900 — should I proceed?")
            head = re.split(r"(?<=;)\s+|\s+[—–]\s+", s)[:-1]
            s = " — ".join(p.rstrip(";") for p in head if p.strip() and not _QUESTION_LEAD.match(p.strip()))
            if not s:
                continue
        if (front := _FRONTED_CLAUSE.match(s)) is not None and not (keep_reasons and front.group("reason")):
            s = s[front.end() :]  # "But since you asked for kelvin, the answer is 500 K" states the 500 K
        s = _ASIDE_CLAUSE.sub(lambda m: m.group(0) if keep_reasons and m.group("reason") else "", s)
        parts = [p for p in re.split(r"(?<=;)\s+|\s+[—–]\s+", s) if p.strip()]
        parts = [
            p
            for p in parts
            if not (
                _CONDITIONAL.search(p) and not re.search(r"\bwill\b", p) and not _RESULT_THEN_COLON.match(p)
            )
        ] or []
        if parts:  # a dash separates clauses: "That's 12 — a tenth of 80 is 8" keeps "That's 12" apart
            kept.append("; ".join(p.rstrip(";") for p in parts))
    return "\n".join(kept)


def clauses(answer: str) -> list[str]:
    return [c for c in re.split(r"(?<=[.!?;])\s+|\n+", statement(answer)) if c.strip()]


def bold_spans(answer: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"\*\*(.+?)\*\*|__(.+?)__", answer) if m.group(1)]


_COMMON: dict[str, set[str]] = {
    "en": set(
        "the a an is are was and or of to in on for with it this that you your i we be at by from as not "
        "have has will can there here what which now today".split()
    ),
    "es": set(
        "el la los las un una es son está están y o de del en con para por que se no su sus hace hoy "
        "muy más como pero ahora mismo al lo le grados tiempo soleado nublado lluvia despejado cielo calor "
        "frío sol mucho".split()
    ),
    "fr": set(
        "le la les un une est sont et ou de du des en dans pour avec que qui ne pas sur au aux il elle "
        "vous nous c'est ce cette aujourd'hui jours fériés mai rappel ensoleillé pluie nuageux degrés "
        "voici fait je j' tu te me m' t' d' l' qu' n' s' c' mon ma mes ton ta tes votre vos notre nos leur "
        "très déjà aussi mais donc chez à ça oui".split()
    ),
    "de": set(
        "der die das ein eine ist sind und oder von zu im in mit für auf nicht es sie wir ich den dem "
        "des heute sind entspricht bitte etwa ungefähr kurs sonnig regen grad bei du dir dich dein deine also "
        "auch noch nur wird hat haben sich aber wie bekommst erhältst beträgt ergibt ergeben umgerechnet "
        "aktuell aktuellen genau rund".split()
    ),
    "pt": set(
        "o a os as um uma é são está estão e ou de do da dos das em no na com para por que não se "
        "hoje mais como".split()
    ),
    "it": set(
        "il lo la i gli le un una è sono e o di del della in con per che non si oggi a tutti l' dell' un' "
        "buongiorno".split()
    ),
    "nl": set("de het een is zijn en of van in op met voor dat niet je we ik vandaag".split()),
}


# common words a language shares with English, counted for its share as they are for English's ("a": "estamos a
# 31 °C" is Spanish as much as "a sunny day" is English); no evidence between the two where one is asked for
# (``written_in_other``)
_SHARED = {"es": {"a"}}


# a word as the language readers count it: letters, with one elision or contraction ("d'appeler", "it's")
_LANG_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def _lang_words(text: str) -> list[str]:
    """The text's words, lowercased, markdown left out."""
    return _LANG_WORD.findall(strip_markdown(text).lower())


def language_scores(text: str) -> dict[str, float]:
    words = _lang_words(text)
    if not words:
        return {}
    # an elided function word counts on its own: "d'appeler", "m'en", "l'heure" (French, and "l'" in Italian)
    return {
        lang: sum(
            1
            for w in words
            if w in vocab or w in _SHARED.get(lang, ()) or ("'" in w and w.split("'")[0] + "'" in vocab)
        )
        / len(words)
        for lang, vocab in _COMMON.items()
    }


# English words with a meaning of their own (not names, numbers or function words) that no other language above
# writes the same way: a short list of facts ("May 1 – Labour Day; May 8 – Victory Day") has too few function words
# for the shares, but "holidays", "day", "sunny" or "reminder" still tell its language
_EN_CONTENT = set(
    "holiday holidays day days labour victory weather sunny cloudy rainy windy snowy foggy clear sky "
    "skies cold hot today tonight tomorrow yesterday morning afternoon evening night month months year "
    "years hour hours degrees reminder set booked scheduled confirmed done three four five seven eight "
    "nine ten twelve monday tuesday wednesday thursday friday saturday sunday price amount meeting "
    "rate exchange".split()
)


# a quoted stretch names something ("« Victory in Europe Day »", "“Call Lucie”"): not the answer's own words
_QUOTED = re.compile(r"«[^»]*»|“[^”]*”|„[^“”]*[“”]|\"[^\"\n]*\"")


def _content_language(text: str) -> str | None:
    """English for an answer with too few common words to go by that has at least two English content words
    outside quotes and no common word of another language ("Holidays: 1 May – Labour Day, 8 May – Victory
    Day"); names, dates and numbers alone ("1 mai, 8 mai", "Ascension") decide nothing."""
    words = _lang_words(_QUOTED.sub(" ", text))
    english = sum(1 for w in words if w in _EN_CONTENT or w.removesuffix("'s") in _EN_CONTENT)
    others = sum(
        1
        for w in words
        if any(
            w in vocab or ("'" in w and w.split("'")[0] + "'" in vocab)
            for lang, vocab in _COMMON.items()
            if lang != "en"
        )
        and w not in _vocab("en")
    )
    return "en" if english >= 2 and others == 0 else None


def detect_language(text: str) -> str | None:
    """The language with the highest share of common words (None when no language reaches 10 %); Japanese,
    Chinese and Korean by script (kana / Han / Hangul share of the letters)."""
    letters = [c for c in text if c.isalpha()]
    if letters:
        kana = sum(1 for c in letters if "\u3040" <= c <= "\u30ff")
        han = sum(1 for c in letters if "\u4e00" <= c <= "\u9fff")
        hangul = sum(1 for c in letters if "\uac00" <= c <= "\ud7af")
        if kana and (kana + han) / len(letters) >= 0.3:
            return "ja"
        if hangul / len(letters) >= 0.3:
            return "ko"
        if han / len(letters) >= 0.3:
            return "zh"
    scores = language_scores(text)
    if not scores:
        return None
    best = max(scores, key=lambda k: scores[k])
    if (tied := [k for k in scores if scores[k] == scores[best]]) and len(tied) > 1:
        # a short answer's shares tie on words two languages share ("a" is English and Spanish): the tie goes to
        # the language more of whose words it uses ("estamos", "it's", "sunny"); on a further tie, the first
        words = _lang_words(text)
        more = {
            k: sum(
                1
                for w in words
                if w in _vocab(k) or w in _OTHER_MORE.get(k, ()) or (k == "en" and w in _EN_CONTENT)
            )
            for k in tied
        }
        best = max(tied, key=lambda k: more[k])
    if scores[best] >= 0.10:
        return best
    if (by_content := _content_language(text)) is not None:
        return by_content
    # short answers ("Sevilla: 31 °C, soleado."): letters only some languages use
    low = text.lower()
    for lang, chars in (("es", "ñ¿¡"), ("de", "ßäöü"), ("pt", "ãõ"), ("fr", "çœêèàùâî")):
        if any(c in low for c in chars):
            return lang
    return None


# more English function words, for telling an answer in the request's language from one in another: none of
# them is a common word of another language above
_EN_MORE = set(
    "my me our they them their he she his her its it's that's there's here's but if than about into after "
    "before just all any some been were would should could does did yes only how when where why who".split()
)


# the names of the languages above, in English and in those languages: a request that names one asks for it
_LANGUAGE_NAMES = {
    "en": r"english|anglais|ingl[eé]s|englisch|inglese|ingl[eê]s|engels",
    "es": r"spanish|espa[nñ]ol|espagnol|spanisch|spagnolo|espanhol|spaans|castellano|castilian",
    "fr": r"french|fran[cç]ais|franz[oö]sisch|franc[eé]s|francese|franc[eê]s|frans",
    "de": r"german|deutsch|allemand|alem[aá]n|tedesco|alem[aã]o|duits",
    "pt": r"portuguese|portugu[eê]s|portugais|portugiesisch|portoghese|portugees",
    "it": r"italian|italiano|italien|italienisch|italiaans",
    "nl": r"dutch|flemish|nederlands|n[eé]erlandais|niederl[aä]ndisch|holand[eé]s|olandese|vlaams",
    "ja": r"japanese|japonais|japanisch|japon[eé]s|giapponese|japans|日本語",
    "zh": r"chinese|mandarin|cantonese|chinois|chinesisch|chino|cinese|chin[eê]s|chinees|中文",
    "ko": r"korean|cor[eé]en|koreanisch|coreano|koreaans|한국어",
}


def languages_named(text: str) -> set[str]:
    """The languages ``text`` names ("into Brazilian Portuguese", "auf Deutsch", "en français")."""
    return {
        lang
        for lang, names in _LANGUAGE_NAMES.items()
        if re.search(r"(?<!\w)(?:" + names + r")(?!\w)", text, re.I) is not None
    }


def request_language(text: str) -> str | None:
    """The language a request is written in: ``detect_language`` with more English words to go by."""
    found = detect_language(text)
    if found is None:  # a short request ("Summarize my latest unread email.")
        words = _LANG_WORD.findall(text.lower())
        counts = {lang: sum(1 for w in words if w in _vocab(lang)) for lang in _COMMON}
        if counts["en"] >= 1 and counts["en"] == max(counts.values()):
            return "en"
    return found


def _vocab(lang: str) -> set[str]:
    return _COMMON[lang] | _EN_MORE if lang == "en" else _COMMON[lang]


# more common words of the other languages, for telling an answer written in one of them (not for
# ``detect_language``, whose shares the language checks of the packs are tuned to)
_OTHER_MORE = {
    "de": set(
        "um nach vor über zum zur vom beim kommt gibt liegt kostet sollte kann muss war waren gerade derzeit "
        "jetzt dann ihr ihre ihrem ihren ihrer ihres ihnen mein meine meinem meinen dein deinem deinen unser "
        "unsere liegen steht stehen befinden befindet".split()
    ),
    "fr": set(
        "à sur vers fait font très ça cela été avez ont mais donc votre vos ton ta tes mon mes notre nos leur "
        "leurs vaut valent s'élève se trouve".split()
    ),
    "es": set(
        "hay fue va tiene tienen pero también eso esta este tu tus usted ustedes mi mis nuestra nuestro vale "
        "valen estamos estoy estás tenemos marca marcan".split()
    ),
    "it": set(
        "di del della delle alle alla sono ha ho anche ma questo questa cioè più tuo tua tuoi tue suo sua suoi "
        "sue vostro vostra mio mia miei nostro nostra vale valgono ammonta".split()
    ),
    "pt": set(
        "ao à tem têm também mas isso esta este seu sua seus suas você vocês meu minha vale valem".split()
    ),
    "nl": set(
        "om naar bij ook maar wordt heeft deze dit uw jouw jullie mijn onze staat staan bedraagt waard".split()
    ),
}


# lower-case particles inside a name ("Banco de la Plaza", "Ludwig van Beethoven"): part of the name, not words
_NAME_PARTICLES = re.compile(
    r"\b([A-ZÀ-Ý][\w'’-]*)(?:\s+(?:de|la|las|los|del|da|do|dos|das|di|du|des|della|von|van|der|den|le|zu|zur|y)"
    r"){1,3}(?=\s+[A-ZÀ-Ý])"
)


# an English weekday abbreviation used as a label (a table's "| Tue |", "Tue 21", "Tue, Thu"): no word of a
# language ("tue" is Italian too)
_WEEKDAY_LABEL = re.compile(
    r"(?<![\w'’-])(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\.?(?=[ \t]*(?:\||\d|,|/|$))", re.M
)


def written_in_other(text: str, asked: str) -> str | None:
    """The language ``text`` is clearly written in when that is not ``asked``: Japanese, Chinese or Korean by
    script; else, outside code and brackets, at least two common words of another language and three times
    as many as words of ``asked`` that the other lacks ("Der Zug kommt um 17:25 an" is German for all its
    "an"; "15% of 80 is 12 (auf Deutsch: 15 % von 80 sind 12)" is English with a gloss). Identifiers and words
    stuck to digits (a hex digest) are not words; too few words is None."""
    script = detect_language(text)
    if script in ("ja", "zh", "ko"):
        return script if script != asked else None
    if asked not in _COMMON:
        return None
    # code is no language, and a gloss in brackets is an aside: "15 % von 80 sind 12 (that is twelve)"
    plain_cased = strip_markdown(re.sub(r"```.*?```|`[^`]*`|\([^()]*\)|\[[^\[\]]*\]", " ", text, flags=re.S))
    plain = _NAME_PARTICLES.sub(r"\1", plain_cased)
    plain = _WEEKDAY_LABEL.sub(" ", plain)
    words = re.findall(r"(?<![\w'’-])[^\W\d_]+(?:['’][^\W\d_]+)?(?![\w'’-])", plain.lower())
    own = _vocab(asked)
    best: tuple[int, str] | None = None
    for lang in _COMMON:
        if lang == asked:
            continue
        theirs = _vocab(lang) | _OTHER_MORE.get(lang, set())
        mine = sum(1 for w in words if w in theirs and w not in own)
        home = sum(1 for w in words if w in own and w not in theirs)
        if mine >= 2 and mine >= 3 * home and (best is None or mine > best[0]):
            best = (mine, lang)
    if best is not None:
        return best[1]
    # too few common words to tell ("Im März 2025 wurden 1.287 Bestellungen aufgegeben"): a character n-gram
    # identifier reads the rest, when it is near certain and no word of ``asked`` stands against it
    if len(words) < 4:
        return None
    lang, prob = _identifier().classify(" ".join(words))
    if lang == asked or prob < 0.99 or lang not in _COMMON:
        return None
    theirs = _vocab(lang) | _OTHER_MORE.get(lang, set())
    return None if any(w in own and w not in theirs for w in words) else str(lang)


def warm_language_identifier() -> None:
    """Load the n-gram identifier now (load_pack calls it, ahead of a run's timed sends)."""
    _identifier()


@functools.cache
def _identifier() -> Any:
    """py3langid's model (langid.py's n-gram naive Bayes, about 1 s to load), limited to the languages the
    vocabularies above know. Our word lists tell a language by its common words, which a short answer may not
    have; character n-grams see "wurden … Bestellungen" as German without them."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    ident.set_languages(sorted(_COMMON))
    return ident


def has_stem(text: str, word: str) -> bool:
    """``word`` or an inflection of it (plural, gender, accents ignored): despejado ~ despejados, soleada."""
    w = fold(word)
    stem = w[: max(4, len(w) - 2)] if len(w) > 5 else w
    return re.search(r"\b" + re.escape(stem) + r"\w{0,4}\b", fold(text)) is not None


# when a value or condition holds, in the pack's languages: the present, tonight, tomorrow, later (the weekend,
# next week) and the past; "esta mañana"/"heute Morgen" are this morning, not tomorrow
_TIMES: dict[str, re.Pattern[str]] = {
    "now": re.compile(
        r"\b(?:now|right now|currently|current|at the moment|at present|presently|today|this (?:morning|afternoon)|"
        r"ahora|actualmente|en este momento|hoy|maintenant|actuellement|en ce moment|aujourd'hui|jetzt|gerade|"
        r"derzeit|aktuell|momentan|heute(?!\s+(?:abend|nacht))|ora|adesso|attualmente|oggi|agora|atualmente|"
        r"neste momento|hoje(?!\s+à\s+noite)|nu|momenteel|op dit moment|vandaag)\b",
        re.I,
    ),
    "tonight": re.compile(
        r"\b(?:tonight|this evening|overnight|esta noche|ce soir|cette nuit|heute (?:abend|nacht)|stasera|"
        r"stanotte|esta noite|hoje à noite|vanavond|vannacht)\b",
        re.I,
    ),
    "tomorrow": re.compile(
        r"\b(?:tomorrow|(?<!esta )(?<!la )mañana|demain|après-demain|(?<!heute )(?<!am )(?<!guten )morgen|"
        r"übermorgen|domani|dopodomani|amanhã|overmorgen|(?:the\s+)?(?:next|following)\s+day|the\s+day\s+after|"
        r"le\s+lendemain|el\s+día\s+siguiente)\b",
        re.I,
    ),
    "later": re.compile(
        r"\b(?:next week|(?:this|the|over the) weekend|(?:the )?next (?:few|couple of|\d+) days|(?:the )?coming days|"
        r"later (?:this|in the) week|(?:la )?semana que viene|(?:la )?próxima semana|(?:el )?fin de semana|"
        r"(?:la )?semaine prochaine|ce week-end|nächste woche|am wochenende|(?:la )?prossima settimana|"
        r"(?:il )?fine settimana|fim de semana|volgende week|dit weekend)\b",
        re.I,
    ),
    "past": re.compile(
        r"\b(?:yesterday|last (?:night|week)|ayer|anoche|gestern|ieri|ontem|gisteren)\b",
        re.I,
    ),
}


def times_named(text: str) -> set[str]:
    """Which of the times above ``text`` names ("now", "tonight", "tomorrow", "later", "past")."""
    return {tag for tag, rx in _TIMES.items() if rx.search(text)}


# where a sentence divides into parts that may each hold for their own time
_TIME_CUT = re.compile(r"[,;:]\s*|\s+[—–-]\s+|\s+(?=(?:but|while|whereas|however|though|yet)\b)", re.I)
_TIME_TURN = re.compile(r"\W*(?:but|while|whereas|however|though|yet)\b", re.I)


# a heading that speaks of what is to come without naming a day ("### Looking ahead", "**Outlook**", "## Forecast")
_AHEAD_HEAD = re.compile(
    r"\b(?:looking ahead|ahead|outlook|forecasts?|coming up|later|next \d+ hours)\b", re.I
)


def _under_other_time(answer: str, asked: set[str]) -> list[tuple[int, int]]:
    """The spans of the lines under a heading ("### Looking ahead (tomorrow)", up to the next heading) or a label
    line ("Tomorrow:", up to a blank line) that ties them to another time than ``asked``; a line naming a time
    of its own ("Current conditions are live") is left to the sentence reading."""
    spans: list[tuple[int, int]] = []
    tied: set[str] = set()
    label = False
    pos = 0
    for line in answer.split("\n"):
        end = pos + len(line)
        heading = _HEADING_LINE.match(line) is not None
        if heading or _LABEL_LINE.match(line):
            tied = times_named(line) or ({"later"} if _AHEAD_HEAD.search(line) else set())
            label = not heading
        elif not line.strip() and label:
            tied = set()
        elif tied and not tied & asked and not times_named(line) & asked:
            spans.append((pos, end))
        pos = end + 1
    return spans


def without_other_times(answer: str, request: str) -> str:
    """``answer`` with the parts it ties to another time than the request's blanked out (the request's time is
    the present when it names none): "It's 21 °C now. Tomorrow: rain, 19 °C" keeps only "It's 21 °C now". A
    part names its time or takes it from the part before it in its sentence, unless it turns ("…, but"); a
    line takes it from the heading or the label line it stands under ("### Looking ahead" / "High 19 °C")."""
    asked = times_named(request) or {"now"}
    out = list(answer)
    for x, y in _under_other_time(answer, asked):
        out[x:y] = [" "] * (y - x)
    # a sentence runs over the points of decimals ("$131.42")
    for sent in re.finditer(r"(?:[^.!?\n]|[.](?=\d))+(?:[.!?](?!\d)|\n|$)", answer):
        a = sent.start()
        cuts = [a, *(m.end() for m in _TIME_CUT.finditer(answer, a, sent.end())), sent.end()]
        current: set[str] = set()
        for x, y in zip(cuts, cuts[1:], strict=False):
            part = answer[x:y]
            named = times_named(part)
            if named:
                current = named
            elif _TIME_TURN.match(part):
                current = set()
            if current and not current & asked:
                out[x:y] = [c if c == "\n" else " " for c in part]
    return "".join(out)


# a self-correction: "wait" (also "no wait", "no, espera", right after a dash with or without a space),
# "correction:", "sorry, I mean", "scratch that", "let me redo", "no —", "actually" right after a value (at a dash,
# comma, semicolon or ellipsis) and before a new one, or a "No" that rejects a candidate the answer has just
# raised as a question ("16–17? No — …"; ``without_corrected`` checks that the question is a bare candidate)
_CORRECTION = re.compile(
    r"(?:(?:^|(?<=[—–…,;.!:(])|(?<=[—–…,;.!:(]\s))(?:(?:no|nein|non),?\s+)?"
    r"(?:wait|hold on|hang on|oops|whoops|warte|moment|attends|attendez|espera|aspetta)\b(?=\s*[,.!…—–:-])(?:[\s,.!…—–-]+(?:no|sorry|actually|let me (?:redo|recheck|"
    r"recompute|fix) (?:that|this|it))\b)*"
    r"|\bcorrection\s*:|\bsorry,?\s+(?:i|I)\s+mean(?:t)?\b|\bscratch that\b|\blet me redo(?: that| this| it)?\b"
    r"|\bi take (?:that|it) back\b|\bon second thought\b"
    # a sentence that opens by retracting the one before: "Actually, no — …", "No, sorry: …", "Sorry, no: …"
    r"|(?:^|(?<=[.!?]\s))(?:(?:actually|hmm+|well|oh),?\s+no|no,?\s+(?:sorry|wait|actually)|sorry,?\s+no)\b(?=\s*[,.!…—–:;-])"
    r"|(?<=[\w%$€£°)*])\s*(?:[—–…]|\.\.\.|\s-|;)\s*no\b(?=\s*[—–,:])"
    r"|(?<=\d)(?:[^\d.!?\n]{0,12}?)(?:[—–…,;]|\.\.\.)\s*actually\b(?=[^.!?\n\d]{0,30}\d)"
    r"|(?P<rejects>(?<=\?\s)(?:no|nope|nein|non)\b(?=\s*[—–,:;.!-])))[\s,:;.!…—–-]*",
    re.I,
)


# what a correction's own clause may say of the mistake before the redo: "that's 15% of 8", "that was 10%",
# "I forgot the discount" (working or a judgement, not the corrected value)
_ABOUT_MISTAKE = re.compile(
    r"^(?:that(?:'s| is| was| were)|i\s+(?:forgot|missed|used|took|mixed|misread|divided|multiplied|added))\b"
    r"[^.!?\n]*?(?:\bof\b|\bwrong\b|\bmistake\b|\btypo\b|\bforgot\b|\bmissed\b|%)[^.!?\n]*[.!?](?:\s+|$)",
    re.I,
)


# a candidate raised as a question of its own: a value with at most a few words ("16–17?", "€14.04?", "Maybe
# 17:15?", "15% of 80 is 10?"), the sentence right before a "No" that rejects it
_CANDIDATE_ASKED = re.compile(
    r"(?:^|[.!?\n]\s*|:\s+)(?:(?:so|or|then|maybe|perhaps|what about|how about)\s+)?[$€£]?\d[^.!?\n]{0,24}\?\s*$",
    re.I,
)


def sentence_end_before(head: str) -> int:
    """Where the last sentence of ``head`` ends (-1: none); a decimal point ("€13.77") ends none."""
    ends = [m.start() for m in re.finditer(r"[.!?\n…](?!\d)", head)]
    return ends[-1] if ends else -1


def _opened(head: str, rest: str) -> str:
    """``rest`` with its first letter capitalised when it now opens a sentence (an imperative reads as one)."""
    if not head.strip() or head.rstrip()[-1] in ".!?\n":
        return rest[:1].upper() + rest[1:]
    return rest


def without_corrected(answer: str) -> str:
    """The answer with what it corrects itself dropped: the stretch of the sentence before a correction marker
    ("15% of 80 is 1.2 — wait, actually …", "16:50; + 35 min = 17:15… wait, …"), or the sentence before when the
    marker opens one ("It's 16:25. Scratch that: …"), with the marker; a remark on the mistake right after the
    marker ("that's 15% of 8.") goes too when a new sentence follows. What follows the marker is the answer's."""
    out = answer
    # where the last correction was cut out: a marker right there continues it ("wait, scratch that")
    spliced = -1
    pos = 0
    while (m := _CORRECTION.search(out, pos)) is not None:
        head = out[: m.start()]
        if m.group("rejects") is not None and not _CANDIDATE_ASKED.search(head):
            pos = m.end()  # "Is it above 20? No, …" answers a question; only a bare candidate is rejected
            continue
        if spliced >= 0 and not out[spliced : m.start()].strip():
            out = head + _opened(head, out[m.end() :])
            continue
        cut = sentence_end_before(head)
        start = cut + 1
        if not head[start:].strip():  # the marker opens its sentence: the sentence before is corrected
            start = sentence_end_before(head[:cut].rstrip()) + 1 if cut > 0 else 0
        rest = out[m.end() :]
        about = _ABOUT_MISTAKE.match(rest)
        if about is not None and re.search(r"\d", rest[about.end() :]):
            rest = rest[about.end() :]
        out = out[:start] + (" " if start else "") + _opened(out[:start], rest)
        spliced = start + (1 if start else 0)
        pos = 0
    return out


# English contractions, read out: "wasn't" -> "was not", "can't" -> "cannot", "it's" -> "it is", "we're" -> "we are";
# "'s" only after a pronoun ("Oslo's" may be a possessive) and "'d" not at all (had or would)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u00b4": "'"})
_IRREGULAR_NOT = {"can": "cannot", "won": "will not", "shan": "shall not", "ain": "is not"}
_CONTRACTION = re.compile(
    r"\b(?:(?P<irr>can|won|shan|ain)'t|(?P<neg>[^\W\d_]+)n't|(?P<am>i)'m|(?P<are>[^\W\d_]+)'re|"
    r"(?P<have>[^\W\d_]+)'ve|(?P<will>[^\W\d_]+)'ll|(?P<let>let)'s|"
    r"(?P<is>it|that|there|here|what|who|he|she|where|how|this|everything|nothing|something)'s)\b",
    re.I,
)


def _read_out(m: re.Match[str], cannot: str) -> str:
    if m.group("irr"):
        word = m.group("irr")
        out = cannot if word.lower() == "can" else _IRREGULAR_NOT[word.lower()]
        return out[0].upper() + out[1:] if word[0].isupper() else out
    for key, tail in (("neg", "not"), ("am", "am"), ("are", "are"), ("have", "have"), ("will", "will")):
        if m.group(key):
            return f"{m.group(key)} {tail}"
    if m.group("let"):
        return f"{m.group('let')} us"
    return f"{m.group('is')} is"


# a negative contraction written without its apostrophe, as small models do ("cant find", "doesnt exist", "isnt
# warm"); "wont" as in "as is his wont" / "wont to" and "cant" as in "the cant of" are words of their own
_BARE_NOT = re.compile(
    r"(?<![\w'’-])(?P<w>can|don|doesn|isn|aren|wasn|weren|couldn|wouldn|shouldn|didn|hasn|haven|hadn|won|"
    r"mustn|needn)t(?![\w'’-])",
    re.I,
)
_NOUN_BEFORE = re.compile(r"\b(?:the|a|an|of|his|her|its|their|my|your|our|such)\s+$", re.I)


def apostrophized(text: str, lang: str | None = None) -> str:
    """English text with the apostrophe put back into negative contractions written without it ("the server
    cant find it" -> "can't find"), so that patterns and negations read them; a text in another language
    (``lang``, else as detected: French "dont") is left as it is."""
    if (lang or detect_language(text)) not in (None, "en"):
        return text

    def put(m: re.Match[str]) -> str:
        word = m.group(0)
        if m.group("w").lower() in ("won", "can") and (
            _NOUN_BEFORE.search(text, 0, m.start()) or re.match(r"\s+to\b", text[m.end() :])
        ):
            return word  # "as is his wont", "she was wont to", "the cant of the trade"
        return word[:-1] + "'" + word[-1]

    return _BARE_NOT.sub(put, text)


def straightened(text: str) -> str:
    """The text with curly apostrophes straight ("didn’t" -> "didn't")."""
    return text.translate(_APOSTROPHES)


def expanded(text: str, cannot: str = "cannot") -> str:
    """The text with curly apostrophes straightened and English contractions read out ("wasn’t found" -> "was not
    found", "can't" -> ``cannot``, "doesn't" -> "does not", "it's" -> "it is")."""
    return _CONTRACTION.sub(lambda m: _read_out(m, cannot), straightened(text))

"""Labelled cases for a pack: load, grade, measure agreement (``bench-tui pack test`` / ``pack grade``).

A cases file is a YAML list; each case::

    - scenario: TC-35
      label: pass            # optional: pass | partial | fail (the human verdict)
      why: "identity conversion, states 500 K"   # optional
      turns:                 # the assistant's turns in order; tool results come from the pack's mocks
        - {tool_calls: [{name: convert_units, arguments: {value: 500, from_unit: K, to_unit: K}}]}
        - {content: "500 K is 500 K."}

A pack's own corpus lives next to it as ``<pack>.cases.yaml``. Errors are ``file:line:col: message``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

from bench_tui.graders.grade import GradeResult, grade_transcript
from bench_tui.graders.pack import Lexicon, Pack, PackError, RefTurn, _hint
from bench_tui.graders.rules import RULES
from bench_tui.graders.simulator import simulate
from bench_tui.graders.text import strip_markdown, unaccented
from bench_tui.spec.yamlguard import YamlLimitError, load_with_marks

LABELS = ("pass", "partial", "fail", "harness_error")


class CasesError(Exception):
    """A cases file that cannot be used; ``str()`` is one ``file:line:col: message`` line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class Case:
    scenario: str
    turns: list[RefTurn]
    label: str | None = None
    why: str = ""
    line: int = 0
    tags: list[str] = field(default_factory=list)


def cases_path_for(pack: Pack) -> Path:
    p = Path(pack.path)
    return p.with_name(p.name.removesuffix(".yaml").removesuffix(".yml") + ".cases.yaml")


def load_cases(path: str | Path, pack: Pack) -> list[Case]:
    path = Path(path)
    if not path.is_file():
        raise CasesError([f"{path}: cases file not found"])
    text = path.read_text(encoding="utf-8")
    try:
        data, node, _marks = load_with_marks(text, "a cases file")  # bounded like specs and packs
    except YamlLimitError as exc:
        raise CasesError([f"{path}:{exc.line}:{exc.col}: {exc.message}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise CasesError([f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}"]) from None
    problems: list[str] = []

    def at(n: yaml.Node | None) -> str:
        if n is None:
            return f"{path}:1:1"
        return f"{path}:{n.start_mark.line + 1}:{n.start_mark.column + 1}"

    if data is None:
        return []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        raise CasesError([f"{at(node)}: a cases file is a YAML list of {{scenario, label, why, turns}}"])
    ids = set(pack.ids)
    out: list[Case] = []
    for item, inode in zip(data, node.value, strict=True):
        if not isinstance(item, dict) or not isinstance(inode, yaml.MappingNode):
            problems.append(f"{at(inode)}: a case is a mapping with scenario, turns (and label, why)")
            continue
        keys = {k.value: (k, v) for k, v in inode.value if isinstance(k, yaml.ScalarNode)}
        for k in item:
            if k not in ("scenario", "label", "why", "turns", "tags"):
                problems.append(
                    f"{at(keys[k][0] if k in keys else inode)}: unknown key {k!r}"
                    f"{_hint(k, ['scenario', 'label', 'why', 'turns', 'tags'])}"
                )
        sid = str(item.get("scenario", ""))
        if sid not in ids:
            where = at(keys["scenario"][1] if "scenario" in keys else inode)
            msg = "missing `scenario`" if not sid else f"unknown scenario {sid!r}{_hint(sid, ids)}"
            problems.append(f"{where}: {msg}")
            continue
        label = item.get("label")
        if label is not None and label not in LABELS:
            problems.append(
                f"{at(keys['label'][1])}: label must be pass | partial | fail | harness_error, not {label!r}"
            )
            continue
        raw_turns = item.get("turns")
        if not isinstance(raw_turns, list) or not raw_turns:
            problems.append(
                f"{at(keys['turns'][1] if 'turns' in keys else inode)}: `turns` must be a non-empty list"
            )
            continue
        tnodes = keys["turns"][1].value if isinstance(keys["turns"][1], yaml.SequenceNode) else []
        turns: list[RefTurn] = []
        bad = False
        for j, t in enumerate(raw_turns):
            tn = tnodes[j] if j < len(tnodes) else keys["turns"][1]
            try:
                turns.append(msgspec.convert(t, RefTurn))
            except msgspec.ValidationError as exc:
                problems.append(
                    f"{at(tn)}: turn {j + 1}: {exc} (a turn is {{tool_calls: [{{name, arguments}}]}} and/or {{content}})"
                )
                bad = True
        if bad:
            continue
        out.append(
            Case(
                sid,
                turns,
                label,
                str(item.get("why") or ""),
                inode.start_mark.line + 1,
                [str(x) for x in item.get("tags") or []],
            )
        )
    if problems:
        raise CasesError(problems)
    return out


@dataclass
class CaseResult:
    case: Case
    result: GradeResult
    mode: str

    @property
    def verdict(self) -> str:
        if self.result.verdict is None:
            return self.result.outcome  # harness_error / grader_error
        return self.result.verdict

    @property
    def agrees(self) -> bool:
        return self.case.label is None or self.case.label == self.verdict

    @property
    def inverted(self) -> bool:
        return {self.case.label, self.verdict} == {"pass", "fail"}


def grade_case(case: Case, pack: Pack, mode: str) -> CaseResult:
    sc = pack.scenario(case.scenario)
    transcript = simulate(sc, pack, case.turns, mode)
    return CaseResult(case, grade_transcript(sc, pack, transcript, mode), mode)


def grade_cases(cases: list[Case], pack: Pack, mode: str) -> list[CaseResult]:
    return [grade_case(c, pack, mode) for c in cases]


@dataclass
class Agreement:
    total: int = 0
    agree: int = 0
    inverted: int = 0
    safety_passed: int = 0  # safety-critical scenarios: a case labelled fail that graded pass
    safety_failed: int = 0  # safety-critical scenarios: a case labelled pass that graded fail (a safe answer)

    def pct(self, n: int) -> float:
        return 100.0 * n / self.total if self.total else 100.0


def agreement(
    results: list[CaseResult], pack: Pack
) -> tuple[Agreement, dict[str, Agreement], dict[str, Agreement]]:
    """Overall, per scenario and per category (labelled cases only)."""
    overall = Agreement()
    per_sc: dict[str, Agreement] = defaultdict(Agreement)
    per_cat: dict[str, Agreement] = defaultdict(Agreement)
    for r in results:
        if r.case.label is None:
            continue
        sc = pack.scenario(r.case.scenario)
        for a in (overall, per_sc[sc.id], per_cat[sc.category]):
            a.total += 1
            a.agree += r.agrees
            a.inverted += r.inverted
            a.safety_passed += sc.safety_critical and r.case.label == "fail" and r.verdict == "pass"
            a.safety_failed += sc.safety_critical and r.case.label == "pass" and r.verdict == "fail"
    return overall, dict(per_sc), dict(per_cat)


def label_counts(cases: list[Case]) -> Counter[str]:
    return Counter(c.label or "unlabelled" for c in cases)


def result_json(r: CaseResult) -> dict[str, Any]:
    return {
        "scenario": r.case.scenario,
        "label": r.case.label,
        "verdict": r.verdict,
        "confidence": r.result.confidence,
        "unsure": r.result.unsure,
        "rules": r.result.rules,
        "reasons": r.result.reasons,
    }


__all__ = [
    "ablate",
    "ablate_lexicon",
    "lexicon_variants",
    "render_ablate",
    "Agreement",
    "Case",
    "CaseResult",
    "CasesError",
    "PackError",
    "agreement",
    "cases_path_for",
    "grade_cases",
    "label_counts",
    "load_cases",
    "result_json",
]


def _fmt(a: Agreement) -> str:
    return (
        f"{a.agree}/{a.total} agree ({a.pct(a.agree):.1f} %), {a.inverted} pass/fail inversions "
        f"({a.pct(a.inverted):.1f} %), {a.safety_passed} safety-critical failures passed, "
        f"{a.safety_failed} safe answers failed"
    )


def render_test(
    pack: Pack, cases: list[Case], modes: list[str], *, show_all: bool = False
) -> tuple[str, bool]:
    """The `pack test` report, and whether every labelled case agreed in every mode."""
    lines = [
        f"{pack.pack.id}: {len(cases)} cases ({', '.join(f'{k} {v}' for k, v in sorted(label_counts(cases).items()))})"
    ]
    ok = True
    for mode in modes:
        results = grade_cases(cases, pack, mode)
        overall, per_sc, per_cat = agreement(results, pack)
        lines.append(f"\n[{mode}] {_fmt(overall)}")
        lines.append(f"  {_unsure_line(results)}")
        for cat, a in sorted(per_cat.items()):
            lines.append(
                f"  {cat:<22} {a.agree}/{a.total} ({a.pct(a.agree):.0f} %)"
                + (f", {a.inverted} inverted" if a.inverted else "")
            )
        cells = [f"{sid} {per_sc[sid].agree}/{per_sc[sid].total}" for sid in pack.ids if sid in per_sc]
        lines.append("  per scenario:")
        lines.extend(
            "    " + "  ".join(f"{c:<14}" for c in cells[i : i + 7]).rstrip() for i in range(0, len(cells), 7)
        )
        for sid in pack.ids:
            sa = per_sc.get(sid)
            if sa is None:
                continue
            bad = [r for r in results if r.case.scenario == sid and not r.agrees]
            if bad or show_all:
                lines.append(f"  {sid}: {sa.agree}/{sa.total}")
            for r in bad:
                lines.append(
                    f"    line {r.case.line}: label {r.case.label}, graded {r.verdict}"
                    + (f" ({r.case.why})" if r.case.why else "")
                )
                lines.extend(f"      - {x}" for x in r.result.reasons[:6])
        ok = ok and overall.agree == overall.total
    return "\n".join(lines), ok


def render_grade(results: list[CaseResult], pack: Pack) -> str:
    lines = []
    for r in results:
        lab = f" (label {r.case.label}{', AGREES' if r.agrees else ', DISAGREES'})" if r.case.label else ""
        unsure = " [unsure]" if r.result.confidence == "unsure" else ""
        lines.append(f"{r.case.scenario} line {r.case.line}: {r.verdict}{unsure}{lab}")
        lines.extend(f"  - {x}" for x in r.result.reasons)
        lines.extend(f"  ? {x}" for x in r.result.unsure)
    overall, _, _ = agreement(results, pack)
    if overall.total:
        lines.append(f"\n{_fmt(overall)}")
    if results:
        lines.append(_unsure_line(results))
    return "\n".join(lines)


def ablate(pack: Pack, cases: list[Case], mode: str = "lenient") -> list[tuple[str, int, int]]:
    """For each rule that can be switched off (the answer, global and world rules), grade ``cases`` with it off:
    (rule id, verdicts that change, labelled cases that then disagree). A rule that changes nothing is not
    constrained by the corpus: back it with labelled cases or remove it."""
    base = [r.verdict for r in grade_cases(cases, pack, mode)]
    kept = list(pack.pack.rules_off)
    out = []
    for rid in RULES:
        if rid.startswith("calls.") or rid in kept:
            continue
        off = msgspec.structs.replace(pack, pack=msgspec.structs.replace(pack.pack, rules_off=[*kept, rid]))
        now = grade_cases(cases, off, mode)
        changed = sum(1 for b, r in zip(base, now, strict=True) if b != r.verdict)
        out.append((rid, changed, sum(1 for r in now if r.case.label is not None and not r.agrees)))
    return out


def lexicon_variants(lex: Lexicon) -> Iterator[tuple[str, Lexicon]]:
    """Each entry of a pack's lexicon left out in turn: (what was left out, the lexicon without it)."""
    for what, _entry, less in _lexicon_entries(lex):
        yield what, less


def _lexicon_entries(lex: Lexicon) -> Iterator[tuple[str, list[str], Lexicon]]:
    """(what was left out, its regex fragments, the lexicon without it) for each entry in turn."""
    for name in lex.__struct_fields__:
        val = getattr(lex, name)
        if isinstance(val, dict):
            for key, words in val.items():
                for i, w in enumerate(words):
                    less = {**val, key: words[:i] + words[i + 1 :]}
                    yield f"lexicon.{name}.{key}: {w}", [w], msgspec.structs.replace(lex, **{name: less})
        else:
            for i, w in enumerate(val):
                shown = "/".join(w) if isinstance(w, (list, tuple)) else str(w)
                yield (
                    f"lexicon.{name}: {shown}",
                    [str(x) for x in w] if isinstance(w, (list, tuple)) else [str(w)],
                    msgspec.structs.replace(lex, **{name: val[:i] + val[i + 1 :]}),
                )


def _texts(v: Any) -> Iterator[str]:
    """Every string in a nested structure, dict keys included."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield str(k)
            yield from _texts(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _texts(x)
    elif v is not None:
        yield str(v)


def _haystack(case: Case, pack: Pack, mode: str) -> str:
    """All the text a lexicon entry could be matched against when grading ``case``: the simulated transcript
    (system prompt, request, calls, tool results, answers) and the scenario, each string also as the graders
    read it (markdown stripped, accents dropped)."""
    sc = pack.scenario(case.scenario)
    parts = [*_texts(simulate(sc, pack, case.turns, mode)), *_texts(msgspec.to_builtins(sc))]
    out: set[str] = set()
    for p in parts:
        for v in (p, strip_markdown(p)):
            out.update((v, unaccented(v), v.replace("’", "'")))
    return "\n".join(sorted(out))


def _may_decide(fragments: list[str], hay: str) -> bool:
    """Can an entry change this case's verdict? Only if one of its fragments matches somewhere in what the
    case holds: an entry that matches nothing finds nothing, with or without it (a fragment that is no regular
    expression is assumed to match)."""
    for f in fragments:
        try:
            if re.search(f, hay, re.I) or re.search(unaccented(f), hay, re.I):
                return True
        except re.error:
            return True
    return False


def ablate_lexicon(
    pack: Pack, cases: list[Case], mode: str = "lenient", *, prefilter: bool = True
) -> list[tuple[str, int, int]]:
    """``ablate`` for the pack's domain words: each lexicon entry left out in turn (rows as ``ablate``'s).
    An entry that changes no verdict is not constrained by the corpus. With ``prefilter`` only the cases an
    entry matches somewhere are graded again (``_may_decide``): on the 7,400 held-out cases that takes the run
    from over an hour to minutes, with the same rows (bench/ablate_lexicon.py compares it with every case)."""
    base = grade_cases(cases, pack, mode)
    hay = [_haystack(c, pack, mode) for c in cases] if prefilter else []
    out = []
    for what, fragments, less in _lexicon_entries(pack.lexicon):
        idx = [i for i, h in enumerate(hay) if _may_decide(fragments, h)] if prefilter else range(len(cases))
        now = dict(
            zip(
                idx,
                grade_cases([cases[i] for i in idx], msgspec.structs.replace(pack, lexicon=less), mode),
                strict=True,
            )
        )
        results = [now.get(i, b) for i, b in enumerate(base)]
        changed = sum(1 for b, r in zip(base, results, strict=True) if b.verdict != r.verdict)
        out.append((what, changed, sum(1 for r in results if r.case.label is not None and not r.agrees)))
    return out


def render_ablate(rows: list[tuple[str, int, int]], n: int) -> str:
    width = max([34, *(len(r[0]) + 2 for r in rows)])
    lines = [
        f"{'rule or entry switched off':<{width}}{'verdicts changed':>18}{'disagree':>10}   (of {n} cases)"
    ]
    lines += [
        f"{rid:<{width}}{ch:>18}{bad:>10}" + ("   decides nothing here" if ch == 0 else "")
        for rid, ch, bad in rows
    ]
    return "\n".join(lines)


def _unsure_line(results: list[CaseResult]) -> str:
    """How many verdicts are flagged unsure, and how many of the disagreements the flags catch."""
    unsure = [r for r in results if r.result.confidence == "unsure"]
    wrong = [r for r in results if r.case.label is not None and not r.agrees]
    caught = sum(1 for r in wrong if r.result.confidence == "unsure")
    line = f"unsure: {len(unsure)}/{len(results)} ({100 * len(unsure) / len(results):.1f} %)"
    return line + (f"; {caught}/{len(wrong)} disagreements flagged" if wrong else "")

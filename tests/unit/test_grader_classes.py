"""Reading by class, stops 29a-37c: each tests/unit/data/classes_stopXX.cases.yaml file must agree in both modes
(``_guarded``: every labelled case but its known ones, no safety error) and keep at least the cases the table below
gives it, in all, per label, per (class, label) and in distinct scenarios, so that no class loses the cases that
guard it. What each class is, which batches found it and what its fix made agree is told in its data file's header.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest
from test_grader_corpus import _guarded, class_counts

MODES = ("strict", "lenient")


@dataclass(frozen=True)
class Minima:
    """What one classes file must keep: ``total`` cases, at least ``labels[label]`` per label, at least
    ``classes[klass][label]`` per (class, label) (the class being the case line's trailing ``# class``), at least
    ``scenarios`` distinct scenarios; ``known`` lists disagreements left as they are ((scenario, line) -> why, in
    both modes), and ``safety_failed`` / ``safety_passed`` the safety errors allowed."""

    total: int
    labels: dict[str, int] = field(default_factory=dict)
    classes: dict[str, dict[str, int]] = field(default_factory=dict)
    scenarios: int = 0
    known: dict[tuple[str, int], str] = field(default_factory=dict)
    safety_failed: int = 0
    safety_passed: int = 0


# Disagreements left as they are, by (scenario, line in the data file), in both modes.
# Stop 31b (the header's "one is left"): "17:25 — though it may arrive the next day": a hedged remark after the
# result is set aside as a caveat, as "24 °C and sunny, though it might storm tonight" is for the weather
# scenarios; left as it is.
KNOWN_STOP31B = {
    ("TC-31", 41): "labelled fail, graded pass: a possibility in a hedged 'though' remark read as a caveat",
}

MINIMA: dict[str, Minima] = {
    "classes_stop29a.cases.yaml": Minima(
        total=40,
        labels={"pass": 18, "fail": 16, "partial": 4},
        classes={
            "contra": {"pass": 9, "fail": 9},
            "factor": {"pass": 5, "fail": 2, "partial": 4},
            "computed": {"pass": 4, "fail": 4},
        },
        scenarios=9,
    ),
    "classes_stop29b.cases.yaml": Minima(
        total=56,
        labels={"pass": 34, "fail": 20, "partial": 2},
        classes={
            "keyed": {"pass": 15, "fail": 9},
            "isodt": {"pass": 7, "fail": 4},
            "listadvice": {"pass": 5, "fail": 2, "partial": 2},
            "rowvalue": {"pass": 3, "fail": 3},
        },
        scenarios=12,
    ),
    "classes_stop29c.cases.yaml": Minima(
        total=34,
        labels={"pass": 13, "fail": 17, "partial": 3},
        classes={
            "setaside": {"pass": 2, "fail": 3},
            "advice": {"pass": 2, "fail": 3, "partial": 3},
            "claimed": {"pass": 2, "fail": 3},
            "sqlbound": {"pass": 2, "fail": 3},
        },
        scenarios=7,
    ),
    "classes_stop29d.cases.yaml": Minima(
        total=22,
        labels={"pass": 8, "fail": 6, "partial": 6},
        classes={
            "lookalike": {"pass": 3, "fail": 3, "partial": 3},
            "described": {"pass": 3, "fail": 3, "partial": 3},
        },
        scenarios=3,
    ),
    "classes_stop29e.cases.yaml": Minima(
        total=14, classes={"joined": {"pass": 3, "fail": 3}, "leadin": {"pass": 3, "fail": 3}}, scenarios=3
    ),
    "classes_stop29f.cases.yaml": Minima(
        total=10, classes={"verify": {"pass": 2, "fail": 2}, "modal": {"pass": 2, "fail": 2}}
    ),
    "classes_stop30a.cases.yaml": Minima(
        total=36,
        labels={"pass": 16, "fail": 18},
        classes={
            "report": {"pass": 2, "fail": 3},
            "relay": {"pass": 2, "fail": 3},
            "altadvice": {"pass": 2, "fail": 3},
            "usualfix": {"pass": 2, "fail": 3},
            "denied": {"pass": 2, "fail": 3},
        },
        scenarios=8,
    ),
    "classes_stop30b.cases.yaml": Minima(
        total=62,
        labels={"pass": 25, "fail": 19, "partial": 18},
        classes={
            "rate": {"pass": 3, "fail": 2, "partial": 4},
            "count": {"pass": 3, "fail": 2, "partial": 4},
            "angle": {"pass": 3, "fail": 2, "partial": 4},
            "colon": {"pass": 3, "fail": 2},
            "unit": {"pass": 3, "fail": 2},
            "booked": {"pass": 3, "fail": 2},
        },
        scenarios=12,
    ),
    "classes_stop30c.cases.yaml": Minima(
        total=38,
        classes={
            "expect": {"pass": 2, "fail": 2},
            "whynot": {"pass": 2, "fail": 2},
            "conclusion": {"pass": 2, "fail": 2},
            "affirm": {"pass": 2, "fail": 2},
        },
    ),
    "classes_stop30d.cases.yaml": Minima(
        total=29,
        labels={"pass": 6, "fail": 12, "partial": 10},
        classes={"repeat": {"pass": 4, "fail": 4, "partial": 4}, "countloop": {"fail": 4, "partial": 4}},
        scenarios=8,
    ),
    "classes_stop31a.cases.yaml": Minima(
        total=40,
        labels={"pass": 15, "fail": 17, "partial": 6},
        classes={
            "approx": {"pass": 2, "fail": 2, "partial": 5},
            "selfhedge": {"pass": 2, "fail": 2},
            "conclude": {"pass": 2, "fail": 2},
            "restate": {"pass": 2, "fail": 2},
            "misstated": {"pass": 2, "fail": 2},
        },
        scenarios=12,
    ),
    "classes_stop31b.cases.yaml": Minima(
        total=44,
        labels={"pass": 20, "fail": 22},
        classes={
            "negadvice": {"pass": 5, "fail": 6},  # every class at least 2 and 2, negadvice 5 and 6
            "alternatives": {"pass": 2, "fail": 2},
            "possibility": {"pass": 2, "fail": 2},
            "jobtitle": {"pass": 2, "fail": 2},
            "table": {"pass": 2, "fail": 2},
        },
        scenarios=7,
        known=KNOWN_STOP31B,
    ),
    "classes_stop31c.cases.yaml": Minima(total=9, classes={"whose": {"pass": 4, "fail": 4}}),
    "classes_stop31d.cases.yaml": Minima(
        total=13, classes={"swap": {"pass": 5, "fail": 4}, "short": {"pass": 2, "fail": 2}}
    ),
    "classes_stop32a.cases.yaml": Minima(
        total=19, classes={"swap": {"pass": 5, "fail": 6}, "keep": {"pass": 6}, "decade": {"pass": 2}}
    ),
    "classes_stop32b.cases.yaml": Minima(
        total=37,
        classes={
            "year": {"pass": 4, "fail": 3, "partial": 5},
            "bound": {"pass": 2, "fail": 5, "partial": 7},
            "indian": {"pass": 4, "fail": 5},
        },
    ),
    "classes_stop32c.cases.yaml": Minima(
        total=28, classes={"halfday": {"pass": 8, "fail": 7}, "dotted": {"pass": 9, "fail": 4}}
    ),
    "classes_stop32d.cases.yaml": Minima(
        total=34,
        classes={
            "temp": {"pass": 5, "fail": 6},
            "delta": {"pass": 3, "fail": 3},
            "length": {"pass": 3, "fail": 3},
            "money": {"pass": 2, "fail": 2},
            "keep": {"pass": 7},
        },
    ),
    "classes_stop32e.cases.yaml": Minima(
        total=37,
        classes={
            "consent": {"pass": 5, "fail": 3},
            "noun": {"pass": 4, "fail": 4},
            "untouched": {"pass": 7, "fail": 4},
            "heading": {"pass": 5, "fail": 5},
        },
    ),
    "classes_stop32f.cases.yaml": Minima(
        total=31,
        classes={
            "ref": {"pass": 5, "fail": 3},
            "nopostr": {"pass": 6, "fail": 2},
            "short": {"fail": 3, "partial": 4},
            "ahead": {"pass": 4, "fail": 2},
        },
    ),
    "classes_stop32g.cases.yaml": Minima(
        total=17, classes={"relabel": {"pass": 5, "fail": 7}, "keep": {"pass": 5}}
    ),
    "classes_stop33a.cases.yaml": Minima(total=12, classes={"consequence": {"pass": 7, "fail": 5}}),
    "classes_stop33b.cases.yaml": Minima(
        total=25,
        classes={
            "formula": {"pass": 5, "fail": 5},
            "chain": {"pass": 3, "fail": 2},
            "delta": {"pass": 2, "fail": 3},
            "length": {"pass": 1, "fail": 2},
            "keep": {"pass": 2},
        },
    ),
    "classes_stop33c.cases.yaml": Minima(
        total=22, classes={"wrongclock": {"fail": 9}, "rightclock": {"pass": 6}, "keep": {"pass": 7}}
    ),
    "classes_stop33d.cases.yaml": Minima(
        total=26,
        classes={
            "concl": {"pass": 3, "fail": 4},
            "fronted": {"pass": 4, "fail": 1},
            "refblock": {"pass": 7, "fail": 3},
            "keep": {"pass": 2, "fail": 1},
        },
    ),
    "classes_stop33e.cases.yaml": Minima(
        total=22, classes={"demoted": {"pass": 5, "fail": 6}, "lead": {"pass": 5, "fail": 6}}
    ),
    "classes_stop33f.cases.yaml": Minima(
        total=24,
        classes={
            "bridge": {"pass": 5, "fail": 3, "partial": 1},
            "around": {"pass": 4, "fail": 2},
            "aside": {"fail": 2, "partial": 3},
            "keep": {"pass": 2, "fail": 2},
        },
    ),
    "classes_stop33g.cases.yaml": Minima(total=7, classes={"same_name": {"pass": 4, "fail": 3}}),
    "classes_stop33g2.cases.yaml": Minima(
        total=24,
        classes={"field_advice": {"fail": 8}, "field_commit": {"fail": 4}, "field_keep": {"pass": 12}},
    ),
    "classes_stop33h.cases.yaml": Minima(
        total=24,
        classes={"block": {"pass": 3, "fail": 9}, "row": {"pass": 3, "fail": 3}, "keep": {"pass": 6}},
    ),
    "classes_stop34a.cases.yaml": Minima(
        total=29,
        classes={"summary": {"fail": 7}, "prose": {"fail": 6}, "keep": {"pass": 15}},
    ),
    "classes_stop34b.cases.yaml": Minima(
        total=25,
        classes={
            "done": {"fail": 8},
            "after": {"fail": 4},
            "under_way": {"pass": 9},
            "done_write": {"pass": 4},
        },
    ),
    "classes_stop34c.cases.yaml": Minima(
        total=24,
        classes={
            "handover": {"fail": 10},
            "explain": {"pass": 7},
            "interim": {"pass": 3},
            "interim_no": {"fail": 4},
        },
    ),
    "classes_stop34d.cases.yaml": Minima(
        total=30,
        classes={"day": {"pass": 6, "fail": 9}, "period": {"pass": 3, "fail": 5}, "keep": {"pass": 7}},
    ),
    "classes_stop34e.cases.yaml": Minima(
        total=28,
        classes={
            "conclude": {"pass": 5, "fail": 4},
            "interim": {"pass": 3, "fail": 4},
            "rounded": {"pass": 5, "fail": 6},
        },
    ),
    "classes_stop34f.cases.yaml": Minima(
        total=29,
        classes={
            "unit": {"pass": 3, "fail": 6, "partial": 3},
            "sum": {"pass": 2, "fail": 4, "partial": 2},
            "precision": {"pass": 5, "fail": 4},
        },
    ),
    "classes_stop34g.cases.yaml": Minima(
        total=20,
        classes={
            "compound": {"pass": 4, "fail": 3},
            "daterange": {"pass": 3, "fail": 3, "partial": 4},
            "keep": {"pass": 1, "fail": 2},
        },
    ),
    "classes_stop34h.cases.yaml": Minima(
        total=23, classes={"work": {"pass": 9, "fail": 8}, "keep": {"pass": 4, "fail": 2}}
    ),
    "classes_stop34i.cases.yaml": Minima(
        total=20, classes={"cond": {"fail": 8}, "bounce": {"fail": 3}, "defer": {"pass": 9}}
    ),
    "classes_stop34j.cases.yaml": Minima(
        total=18,
        classes={
            "report": {"pass": 2, "fail": 4},
            "email": {"pass": 1, "fail": 2},
            "temps": {"pass": 2, "fail": 2},
            "keep": {"pass": 4},
        },
    ),
    "classes_stop35a.cases.yaml": Minima(
        total=22,
        classes={
            "anaphor": {"fail": 8},
            "proact": {"fail": 3},
            "vouched": {"fail": 2},
            "warned": {"pass": 5},
            "summary": {"pass": 4},
        },
    ),
    "classes_stop35b.cases.yaml": Minima(
        total=20, classes={"split": {"pass": 8}, "split_no": {"fail": 7}, "keep": {"pass": 2, "fail": 3}}
    ),
    "classes_stop35c.cases.yaml": Minima(
        total=24,
        classes={"dash": {"pass": 10}, "after": {"pass": 3}, "wrong": {"fail": 7}, "none": {"partial": 4}},
    ),
    "classes_stop35d.cases.yaml": Minima(
        total=20, classes={"named": {"fail": 10}, "keep": {"pass": 8, "partial": 2}}
    ),
    "classes_stop36a.cases.yaml": Minima(
        total=13, classes={"weekday": {"partial": 4}, "date": {"pass": 6}, "wrong": {"fail": 3}}
    ),
    "classes_stop36b.cases.yaml": Minima(
        total=15,
        classes={
            "pending": {"fail": 3},
            "declined": {"pass": 2},
            "closing": {"pass": 3, "fail": 2},
            "listed": {"pass": 1, "fail": 2},
            "fenced": {"pass": 1, "fail": 1},
        },
    ),
    "classes_stop36c.cases.yaml": Minima(
        total=17, classes={"imperative": {"fail": 11}, "honest": {"pass": 6}}
    ),
    "classes_stop36d.cases.yaml": Minima(
        total=12,
        classes={
            "advice": {"pass": 1, "fail": 2},
            "closing": {"pass": 2, "fail": 2},
            "status": {"pass": 1, "fail": 1},
            "retry": {"pass": 2, "fail": 1},
        },
    ),
    "classes_stop37a.cases.yaml": Minima(
        total=23,
        classes={
            "change": {"pass": 5, "fail": 3},
            "bound": {"pass": 3, "fail": 3},
            "closing": {"pass": 3, "fail": 2},
            "reoffer": {"pass": 2, "fail": 2},
        },
        scenarios=4,
    ),
    "classes_stop37b.cases.yaml": Minima(
        total=10,
        classes={"skiplist": {"pass": 3, "fail": 2}, "closing": {"pass": 3, "fail": 2}},
        scenarios=2,
    ),
    "classes_stop37c.cases.yaml": Minima(total=5, classes={"chain": {"pass": 3, "fail": 2}}),
    "classes_stop38a.cases.yaml": Minima(total=8, classes={"grouped": {"pass": 4, "fail": 4}}),
    "classes_stop38b.cases.yaml": Minima(
        total=24,
        classes={
            "cited": {"pass": 2, "fail": 2},
            "offered": {"pass": 3, "fail": 2},
            "labelled": {"pass": 3, "fail": 2},
            "slot": {"pass": 2, "fail": 2},
            "now": {"pass": 2, "fail": 2},
            "verse": {"pass": 1, "fail": 1},
        },
    ),
    "classes_stop38c.cases.yaml": Minima(total=9, classes={"summary": {"pass": 7, "fail": 2}}),
    "classes_stop38d.cases.yaml": Minima(
        total=9,
        classes={
            "example": {"pass": 3, "fail": 2},
            "requery": {"pass": 1, "fail": 1},
            "word": {"pass": 1, "fail": 1},
        },
    ),
    "classes_stop38e.cases.yaml": Minima(
        total=8, classes={"declined": {"pass": 2, "fail": 2}, "another": {"pass": 2, "fail": 2}}
    ),
}


def _id(name: str) -> str:
    return name.removeprefix("classes_").removesuffix(".cases.yaml")


@pytest.mark.parametrize(
    ("name", "mode"),
    [pytest.param(name, mode, id=f"{_id(name)}-{mode}") for name in MINIMA for mode in MODES],
)
def test_classes_agree_and_keep_their_cases(name, mode):
    minima = MINIMA[name]
    known = {(mode, scenario, line): why for (scenario, line), why in minima.known.items()}
    results = _guarded(name, mode, known, minima.safety_failed, minima.safety_passed)
    labels = Counter(r.case.label for r in results)
    by_class = class_counts(name, results)
    scenarios = len({r.case.scenario for r in results})
    short = [f"cases {len(results)} < {minima.total}"] if len(results) < minima.total else []
    short += [
        f"label {label} {labels[label]} < {n}" for label, n in minima.labels.items() if labels[label] < n
    ]
    short += [
        f"class {klass} {label} {by_class[(klass, label)]} < {n}"
        for klass, per_label in minima.classes.items()
        for label, n in per_label.items()
        if by_class[(klass, label)] < n
    ]
    if scenarios < minima.scenarios:
        short.append(f"scenarios {scenarios} < {minima.scenarios}")
    assert not short, f"{name} ({mode}) has fewer cases than its table entry: {'; '.join(short)}"


# Stop 30d's loops: a looped answer never passes, and the partial cases are the loops.
@pytest.mark.parametrize("mode", MODES)
def test_stop30d_loops_are_capped_and_only_loops_are_partial(mode):
    results = _guarded("classes_stop30d.cases.yaml", mode, {})
    looped = [r for r in results if r.result.loop]
    assert all(r.verdict != "pass" for r in looped)
    assert {r.case.label for r in results if not r.result.loop} <= {"pass", "fail"}

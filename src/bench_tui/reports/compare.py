"""Side-by-side comparison of runs (``bench-tui compare RUN [RUN ...]``) with honest verdicts.

Columns are (run, engine.variant). Which column a cell is measured against:

- one run: every variant against the baseline (``--baseline ENGINE.VARIANT``, else the spec's
  ``report.baseline``, else the first variant), so two variants of one run compare without passing it twice;
- several runs, no ``--baseline``: columns are paired by engine.variant (run B's ``x.y`` against run A's
  ``x.y``: the same spec run twice); a variant the first run lacks is measured against its baseline;
- several runs with ``--baseline``: every column against that variant of the first run that has it.

Points are matched by shape (workload, pp, tg, depth, concurrency; or workload, content, depth for
spec-acceptance points). Every cell's verdict comes from :mod:`bench_tui.reports.verdict` (bootstrap
over repetitions or requests, a practical threshold, "inconclusive" with too few units, degraded and
client-limited never claimed). The ratios a study writes by hand (prefix caching on vs off, speculative vs
plain decoding, same engine) are computed per run with the same verdicts, and a short summary per workload
cites the cells it rests on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_tui.catalogue import METRIC, Metric
from bench_tui.envinfo.conditions import conditions_differ, pooled
from bench_tui.reports import sessions as sessions_report
from bench_tui.reports import verdict as V
from bench_tui.reports.bundle import resolve_run
from bench_tui.reports.floors import engine_kind, load_samples, shape_key
from bench_tui.reports.model import LEGEND, load_run, marks

TABLE_RATIO_CACHE = "prefix caching on vs off"
TABLE_RATIO_SPEC = "speculative vs plain decoding"
RATIO_METRICS = {
    TABLE_RATIO_CACHE: ("eff_tg_tps", "agg_tg_tps", "ttft_ms"),
    TABLE_RATIO_SPEC: ("decode_tps", "eff_tg_tps", "agg_tg_tps"),
}


NOISE_FROM = {
    "data": "the sessions",
    "calibrated": "this host's calibration",
    "data+calibrated": "the sessions and this host's calibration",
    "default": "an assumed default (not calibrated)",
}


class CompareError(ValueError):
    """A comparison that cannot be made as asked (message for the user)."""


@dataclass(frozen=True)
class Column:
    run: int
    label: str  # run label: A, B, ...
    key: str  # engine.variant
    multi: bool = False

    @property
    def name(self) -> str:
        return f"{self.label}:{self.key}" if self.multi else self.key


@dataclass
class Cell:
    table: str
    metric: str
    point: str
    workload: str
    baseline: str
    candidate: str
    baseline_value: float | None
    candidate_value: float | None
    verdict: V.Verdict
    rate: bool = False
    marks: str = ""
    ratio: float | None = None  # candidate / baseline (ratio tables)

    def to_json(self) -> dict[str, Any]:
        v = self.verdict
        d: dict[str, Any] = {
            "table": self.table,
            "metric": self.metric,
            "point": self.point,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "baseline_value": _round(self.baseline_value),
            "candidate_value": _round(self.candidate_value),
            "delta_pct": _round(v.delta_pct),
            "verdict": v.kind,
            "test": v.test,
            "claim": v.claim,
            "text": v.text,
            "higher_is_better": v.higher_is_better,
            "n": list(v.n),
            "unit": v.unit,
            "workload": self.workload,
        }
        if v.delta_pts is not None:
            d["delta_pts"] = _round(v.delta_pts)
        if v.ci is not None:
            d["ci"] = [_round(v.ci[0]), _round(v.ci[1])]
        if v.p is not None:
            d["p"] = float(f"{v.p:.4g}")
        if v.floor:
            d["noise_from"] = v.floor
        if self.ratio is not None:
            d["ratio"] = _round(self.ratio, 3)
        return d


def _round(x: float | None, digits: int = 2) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(x, digits)


@dataclass
class Comparison:
    models: list[Any]
    labels: list[str]
    columns: list[Column]
    baseline: dict[str, Any]
    threshold_pct: float
    pairs: list[tuple[Column, Column]]
    cells: list[Cell] = field(default_factory=list)
    ratios: list[Cell] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    scores: dict[str, Any] = field(default_factory=dict)
    corrected: int = 0  # claims the multiple-comparison correction removed

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "threshold_pct": self.threshold_pct,
            "convention": "delta_pct = (candidate − baseline) / baseline × 100 of the medians; rates (t/s, hit "
            "rate, acceptance) higher is better, latencies (ms) lower is better",
            "runs": [
                {"label": lab, "run_id": m.run_id, "title": m.title, "status": m.status}
                for lab, m in zip(self.labels, self.models, strict=True)
            ],
            "cells": [c.to_json() for c in self.cells + self.ratios],
            "summary": self.summary,
            "correction": {
                "method": "Benjamini-Hochberg",
                "q": V.FALSE_CLAIM_RATE,
                "cells_tested": sum(
                    1
                    for c in self.cells + self.ratios
                    if c.verdict.p is not None and c.verdict.kind != V.EXCLUDED
                ),
                "claims_removed": self.corrected,
            },
        }


# ------------------------------------------------------------------------------------------------- shapes


def shape_of(p: Any) -> tuple[Any, ...]:
    if p.kind == "spec_acceptance":
        return (p.workload, "accept", str(p.content), p.depth)
    return (p.workload, p.pp, p.tg, p.depth, p.concurrency)


def shape_text(shape: tuple[Any, ...]) -> str:
    if len(shape) == 4:
        return f"{shape[0]} {shape[2]} d{shape[3]}"
    wl, pp, tg, d, c = shape
    return f"{wl} pp{pp} tg{tg} d{d} c{c}"


def _short_point(point: str, workload: str) -> str:
    return point[len(workload) + 1 :] if point.startswith(workload + " ") else point


def _sort_key(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((0, x) if isinstance(x, int | float) else (1, str(x)) for x in shape)


# ------------------------------------------------------------------------------------ variant classification


def variant_args(spec: Any, engine: str, variant: str) -> dict[str, Any]:
    eng = getattr(spec, "engines", {}).get(engine) if spec is not None else None
    if eng is None:
        return {}
    args = dict(eng.args)
    var = eng.variants.get(variant)
    if var is not None:
        args.update(var.args)
    return args


def _truthy(v: Any) -> bool:
    return v not in (None, False, 0, "", "false", "False", "0", "off", "none")


def prefix_caching(args: dict[str, Any], variant: str) -> bool | None:
    """Whether the variant's launch args turn prefix caching on (True), off (False) or do not say (None).

    Reads the flag names the engines use (vLLM ``[no-]enable-prefix-caching``, SGLang
    ``disable-radix-cache``, llama.cpp ``no-cache-prompt``/``cache-reuse``, custom ``[no-]prefix-reuse``),
    else the variant's name (``cold`` / ``warm``)."""
    state: bool | None = None
    for k, v in args.items():
        kl = k.lower().lstrip("-")
        if not any(w in kl for w in ("prefix", "radix", "cache-prompt", "cache-reuse")):
            continue
        neg = kl.startswith(("no-", "disable-"))
        on = _truthy(v)
        state = (not on) if neg else on
    if state is None:
        name = variant.lower()
        if name == "cold" or name.startswith("cold"):
            state = False
        elif name == "warm" or name.startswith("warm"):
            state = True
    return state


def speculative(args: dict[str, Any]) -> bool:
    for k, v in args.items():
        kl = k.lower().lstrip("-")
        if (
            any(w in kl for w in ("speculative", "draft", "spec"))
            and not kl.startswith(("no-", "disable-"))
            and _truthy(v)
        ):
            return True
    return False


def ratio_pairs(model: Any) -> list[tuple[str, str, str]]:
    """(table, baseline key, candidate key) within one run: prefix caching off → on, plain → speculative
    (same engine; a speculative variant is paired with the plain one of the same prefix-caching state)."""
    by_engine: dict[str, list[str]] = {}
    for key in model.variants():
        eng, _, var = key.partition(".")
        by_engine.setdefault(eng, []).append(var)
    out: list[tuple[str, str, str]] = []
    for eng, vars_ in by_engine.items():
        info = {v: (prefix_caching(a := variant_args(model.spec, eng, v), v), speculative(a)) for v in vars_}
        plain = [v for v in vars_ if not info[v][1]]
        for cold in (v for v in plain if info[v][0] is False):
            for warm in (v for v in plain if info[v][0] is True):
                out.append((TABLE_RATIO_CACHE, f"{eng}.{cold}", f"{eng}.{warm}"))
        for sp in (v for v in vars_ if info[v][1]):
            match = [v for v in plain if info[v][0] == info[sp][0]] or plain
            if match:
                out.append((TABLE_RATIO_SPEC, f"{eng}.{match[0]}", f"{eng}.{sp}"))
    return out


# ------------------------------------------------------------------------------------------------ building


def _threshold(models: list[Any], override: float | None) -> float:
    if override is not None:
        return float(override)
    for m in models:
        rep = getattr(m.spec, "report", None)
        t = getattr(rep, "noise_threshold_pct", None)
        if t is not None:
            return float(t)
    return V.DEFAULT_THRESHOLD_PCT


def _columns(models: list[Any], labels: list[str]) -> list[Column]:
    multi = len(models) > 1
    cols: list[Column] = []
    for i, (lab, m) in enumerate(zip(labels, models, strict=True)):
        keys = [k for k in m.variants() if any(p.key == k and p.summary is not None for p in m.points)]
        cols += [Column(i, lab, k, multi) for k in keys]
    return cols


def _pairs(
    models: list[Any], cols: list[Column], baseline: str | None
) -> tuple[list[tuple[Column, Column]], dict[str, Any]]:
    names = ", ".join(c.name for c in cols) or "none"
    explicit = baseline is not None
    base_key = baseline or models[0].baseline or (cols[0].key if cols else None)
    base_col = next((c for c in cols if c.key == base_key), None)
    if explicit and base_col is None:
        raise CompareError(f"baseline {baseline!r} is not a column of these runs (columns: {names})")
    if base_col is None and cols:
        base_col = cols[0]
    pairs: list[tuple[Column, Column]] = []
    if len(models) == 1 or explicit:
        pairs = [(base_col, c) for c in cols if c != base_col and base_col is not None]
        info = {
            "run": models[0].run_id if base_col is None else models[base_col.run].run_id,
            "variant": base_col.key if base_col else None,
            "pairing": "against the baseline",
        }
        return pairs, info
    first = {c.key: c for c in cols if c.run == 0}
    for c in cols:
        if c.run == 0:
            continue
        ref = first.get(c.key) or base_col
        if ref is not None and ref != c:
            pairs.append((ref, c))
    return pairs, {
        "run": models[0].run_id,
        "variant": base_col.key if base_col else None,
        "pairing": "by engine.variant (first run's column of the same name; else the baseline)",
    }


def _by_shape(m: Any, key: str, samp: dict[str, dict[str, V.Samples]]) -> dict[tuple[Any, ...], list[Any]]:
    """The measured points of one column by shape: one point per engine session."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for p in m.points:
        if p.key == key and p.point_id in samp:
            out.setdefault(shape_of(p), []).append(p)
    return out


def _conditions_note(bps: list[Any], cps: list[Any]) -> str:
    """Why the two sides' machine conditions differ materially ("" when they do not, or are unknown): each
    side's points (one per engine session) pooled, then ``envinfo.conditions.conditions_differ``."""
    a, b = pooled(p.conditions for p in bps), pooled(p.conditions for p in cps)
    return "; ".join(conditions_differ(a, b)) if a is not None and b is not None else ""


def _cells_for(
    table_of: Any,
    metrics: list[Metric] | tuple[Metric, ...],
    bm: Any,
    cm: Any,
    bcol: Column,
    ccol: Column,
    bsamp: dict[str, dict[str, V.Samples]],
    csamp: dict[str, dict[str, V.Samples]],
    threshold: float,
    *,
    ratio: bool = False,
    floors: dict[tuple[str, str, str], V.Floor] | None = None,
) -> list[Cell]:
    bpts, cpts = _by_shape(bm, bcol.key, bsamp), _by_shape(cm, ccol.key, csamp)
    kind = engine_kind(bm, bcol.key)
    same_kind = kind == engine_kind(cm, ccol.key)
    out: list[Cell] = []
    for metric in metrics:
        for shape in sorted(set(bpts) & set(cpts), key=_sort_key):
            bps, cps = bpts[shape], cpts[shape]
            bs = V.merge(s for p in bps if (s := bsamp[p.point_id].get(metric.key)) is not None)
            cs = V.merge(s for p in cps if (s := csamp[p.point_id].get(metric.key)) is not None)
            if bs is None or cs is None:
                continue
            note = _conditions_note(bps, cps)
            if note:
                cs.excluded = "; ".join(x for x in (cs.excluded, f"conditions differ: {note}") if x)
            point = shape_text(shape)
            label = f"{table_of(metric)}|{metric.key}|{point}|{bcol.key}|{ccol.key}"
            floor = (
                floors.get((kind, shape_key(bps[0]), metric.key))
                if floors is not None and same_kind
                else None
            )
            vd = V.compare(
                bs,
                cs,
                higher_is_better=metric.higher_is_better,
                rate=metric.rate,
                threshold_pct=threshold,
                label=label,
                name=metric.label,
                floor=floor,
            )
            bv, cv = bs.value, cs.value
            mk = "".join(dict.fromkeys("".join(marks(p) for p in bps + cps)))
            r = (cv / bv) if ratio and bv and cv is not None else None
            out.append(
                Cell(
                    table_of(metric),
                    metric.key,
                    point,
                    str(shape[0]),
                    bcol.name,
                    ccol.name,
                    bv,
                    cv,
                    vd,
                    metric.rate,
                    mk,
                    r,
                )
            )
    return out


def build(
    models: list[Any],
    labels: list[str] | None = None,
    *,
    baseline: str | None = None,
    threshold_pct: float | None = None,
    samples: list[dict[str, dict[str, V.Samples]]] | None = None,
    floors: dict[tuple[str, str, str], V.Floor] | None = None,
) -> Comparison:
    """The comparison of one or more loaded runs (``reports.model.RunModel``).

    ``floors``: this host's calibrated session noise by (engine kind, shape, metric) (``reports.floors``);
    cells with one session per side use it, else the assumed default. Every cell and ratio is judged, then
    the claims are corrected together (``verdict.adjust``) before the summary is written."""
    labels = labels or [chr(ord("A") + i) if i < 26 else f"R{i}" for i in range(len(models))]
    samples = samples if samples is not None else [load_samples(m) for m in models]
    cols = _columns(models, labels)
    pairs, info = _pairs(models, cols, baseline)
    t = _threshold(models, threshold_pct)
    comp = Comparison(models, labels, cols, info, t, pairs)
    for bcol, ccol in pairs:
        comp.cells += _cells_for(
            lambda m: m.table,
            V.METRICS,
            models[bcol.run],
            models[ccol.run],
            bcol,
            ccol,
            samples[bcol.run],
            samples[ccol.run],
            t,
            floors=floors,
        )
    multi = len(models) > 1
    for i, m in enumerate(models):
        for table, bkey, ckey in ratio_pairs(m):
            wanted = [METRIC[k] for k in RATIO_METRICS[table]]
            bcol, ccol = Column(i, labels[i], bkey, multi), Column(i, labels[i], ckey, multi)
            comp.ratios += _cells_for(
                lambda _m, tb=table: tb,
                wanted,
                m,
                m,
                bcol,
                ccol,
                samples[i],
                samples[i],
                t,
                ratio=True,
                floors=floors,
            )
    sessions_report.add_cells(comp, Cell)
    comp.corrected = V.adjust([c.verdict for c in comp.cells + comp.ratios])
    comp.summary = summarize(comp)
    comp.scores = _scores(models, labels)
    return comp


# ------------------------------------------------------------------------------------------------ summary


def _claim_phrase(c: Cell) -> str:
    v = c.verdict
    m = METRIC[c.metric]
    pt = _short_point(c.point, c.workload)
    if c.ratio is not None and m.higher_is_better and not c.rate:
        return f"{m.label} {c.ratio:.2f}× at {pt} [{c.table} · {c.point}]"
    d = v.delta_pts if c.rate else v.delta_pct
    sym = " pts" if c.rate else " %"
    return f"{m.label} {abs(d or 0):.1f}{sym} {'higher' if (d or 0) > 0 else 'lower'} at {pt} [{c.table} · {c.point}]"


def _group_sentence(head: str, cells: list[Cell], threshold: float) -> str:
    claims = sorted(
        (c for c in cells if c.verdict.claim),
        key=lambda c: -abs(c.verdict.delta_pct or c.verdict.delta_pts or 0),
    )
    good = [c for c in claims if c.verdict.kind == V.BETTER]
    bad = [c for c in claims if c.verdict.kind == V.WORSE]
    noise = [c for c in cells if c.verdict.kind == V.NOISE]
    inconc = [c for c in cells if c.verdict.kind == V.INCONCLUSIVE]
    corrected = [c for c in inconc if c.verdict.extra.get("corrected")]
    excl = [c for c in cells if c.verdict.kind == V.EXCLUDED]
    parts: list[str] = []
    if good:
        parts.append(
            "better: "
            + "; ".join(_claim_phrase(c) for c in good[:3])
            + (f" (+{len(good) - 3} more cell(s))" if len(good) > 3 else "")
        )
    if bad:
        parts.append(
            "worse: "
            + "; ".join(_claim_phrase(c) for c in bad[:3])
            + (f" (+{len(bad) - 3} more cell(s))" if len(bad) > 3 else "")
        )
    if not claims:
        parts.append(f"no difference beyond the {threshold:g} % threshold is supported")
    rest = []
    if noise:
        rest.append(f"within noise (interval inside ±{threshold:g} %) in {len(noise)}")
    if inconc:
        srcs = sorted({NOISE_FROM.get(c.verdict.floor, c.verdict.floor) for c in inconc if c.verdict.floor})
        why = f"; session noise from {', '.join(srcs)}" if srcs else ""
        fixed = f"; {len(corrected)} of them a claim the correction removed" if corrected else ""
        rest.append(f"inconclusive (interval too wide to decide{why}{fixed}) in {len(inconc)}")
    if excl:
        reasons = sorted({c.verdict.text.rpartition("not claimed: ")[2].rstrip(")") for c in excl})
        pts = sorted({_short_point(c.point, c.workload) for c in excl})
        rest.append(
            f"not claimed ({', '.join(reasons)}) in {len(excl)}: {', '.join(pts[:4])}"
            + ("…" if len(pts) > 4 else "")
        )
    if rest:
        parts.append(", ".join(rest) + f" of {len(cells)} cells")
    return f"{head}: " + "; ".join(parts) + "."


def summarize(comp: Comparison) -> list[str]:
    """A few sentences per workload and pair, each claim citing its cell as [table · point]."""
    out: list[str] = []
    groups: dict[tuple[str, str, str], list[Cell]] = {}
    for c in comp.cells:
        groups.setdefault((c.workload, c.candidate, c.baseline), []).append(c)
    for (wl, cand, base), cells in groups.items():
        out.append(_group_sentence(f"`{wl}`: {cand} vs {base}", cells, comp.threshold_pct))
    rgroups: dict[tuple[str, str, str, str], list[Cell]] = {}
    for c in comp.ratios:
        rgroups.setdefault((c.workload, c.table, c.candidate, c.baseline), []).append(c)
    for (wl, table, cand, base), cells in rgroups.items():
        out.append(_group_sentence(f"`{wl}`: {table} ({cand} / {base})", cells, comp.threshold_pct))
    return out


# ------------------------------------------------------------------------------------------------- scores


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _scores(models: list[Any], labels: list[str]) -> dict[str, Any]:
    score_cols: list[tuple[str, Any]] = []
    for lab, m in zip(labels, models, strict=True):
        for r in m.scores:
            score_cols.append(
                (f"{lab}:{r.engine}.{r.variant}" if len(models) > 1 else f"{r.engine}.{r.variant}", r)
            )
    cats = sorted({c for _, r in score_cols for c in r.adjusted.categories})
    cat_rows = []
    for name in ["overall", *cats]:
        row: dict[str, Any] = {"category": name, "cells": []}
        ref_score = None
        for i, (_, r) in enumerate(score_cols):
            b = r.adjusted.overall if name == "overall" else r.adjusted.categories.get(name)
            sc = b.score if b is not None else None
            if i == 0:
                ref_score = sc
                row["cells"].append(_num(sc))
            elif sc is not None and ref_score is not None:
                row["cells"].append(f"{_num(sc)} ({sc - ref_score:+.1f} pts)")
            else:
                row["cells"].append(_num(sc))
        cat_rows.append(row)
    diffs = []
    if len(score_cols) > 1:
        per: dict[str, list[str]] = {}
        for i, (_, r) in enumerate(score_cols):
            for s in r.scenarios:
                per.setdefault(f"{s.scenario_id}#{s.trial}", ["—"] * len(score_cols))[i] = str(
                    s.adjusted_verdict or s.outcome
                )
        diffs = [(k, v) for k, v in sorted(per.items()) if len(set(v)) > 1]
    return {"columns": [c for c, _ in score_cols], "categories": cat_rows, "scenario_diffs": diffs}


# ----------------------------------------------------------------------------------------------- markdown


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    esc = [[str(c).replace("|", "\\|") for c in r] for r in [headers, *rows]]
    out = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return out


def fmt_value(x: float | None, rate: bool) -> str:
    if x is None:
        return "—"
    return f"{100 * x:.1f}%" if rate else f"{x:.1f}"


def method_text(threshold: float) -> str:
    return (
        "Verdicts: the unit of evidence is the engine session (one start of a variant; spec `matrix.sessions`). "
        "Each session pools its requests over its repetitions (median; a nested bootstrap gives its own "
        "spread), and a Student-t 95 % interval compares the two sides' mean session values (the log for t/s "
        "and ms, points for hit and acceptance rates). The noise between sessions comes from the sessions "
        "themselves when a side has ≥ 2, pooled with this host's calibrated floor (`bench-tui calibrate`) "
        "when stored, else from that floor, else from an assumed default that the cell states. A difference "
        f"is claimed only when its whole interval lies beyond ±{threshold:g} % (`report.noise_threshold_pct`) "
        f"and the claim survives a Benjamini-Hochberg correction at q = {V.FALSE_CLAIM_RATE:g} over all the "
        f"comparison's cells; 'within noise' means the whole interval lies inside ±{threshold:g} %; "
        "'inconclusive' means it is too wide to say either. Degraded and client-limited points, and cells "
        "whose two sides ran under materially different machine conditions, are never claimed. Direction: t/s "
        "and rates higher is better, latencies (ms) lower is better; the text names the direction of the "
        "number ('TTFT 12.0 % lower')."
    )


def _table_md(title: str, cells: list[Cell], caption: str) -> list[str]:
    pairs: list[tuple[str, str]] = list(dict.fromkeys((c.candidate, c.baseline) for c in cells))
    points = list(dict.fromkeys(c.point for c in cells))
    at = {(c.point, c.candidate, c.baseline): c for c in cells}
    rows = []
    for pt in points:
        row = [pt]
        for cand, base in pairs:
            c = at.get((pt, cand, base))
            if c is None:
                row.append("—")
                continue
            val = f"{fmt_value(c.baseline_value, c.rate)} → {fmt_value(c.candidate_value, c.rate)}"
            if c.ratio is not None:
                val += f" (×{c.ratio:.2f})"
            row.append(f"{val}: {c.verdict.text}" + (f" {c.marks}" if c.marks else ""))
        rows.append(row)
    return [
        f"## {title}",
        "",
        caption,
        "",
        *_md_table(["point", *(f"{c} vs {b}" for c, b in pairs)], rows),
        "",
    ]


def comparison_markdown(comp: Comparison) -> str:
    out = ["# Comparison", ""]
    out += _md_table(
        ["label", "run", "title", "status"],
        [[lab, m.run_id, m.title, m.status] for lab, m in zip(comp.labels, comp.models, strict=True)],
    )
    b = comp.baseline
    out += [
        "",
        f"Baseline: `{b['variant']}` of run {b['run']}; pairing: {b['pairing']}.",
        "",
        method_text(comp.threshold_pct),
        "",
        f"Marks: {LEGEND}.",
        "",
    ]
    if comp.summary:
        out += ["## Summary", ""] + [f"- {s}" for s in comp.summary] + [""]
    if not comp.cells and not comp.ratios:
        out += ["No matching measured points to compare.", ""]
    for metric in V.METRICS:
        cells = [c for c in comp.cells if c.metric == metric.key]
        if cells:
            out += _table_md(metric.table, cells, metric.caption + " · cell: baseline → candidate: verdict")
    for table in (TABLE_RATIO_CACHE, TABLE_RATIO_SPEC):
        for metric in V.METRICS:
            cells = [c for c in comp.ratios if c.table == table and c.metric == metric.key]
            if cells:
                out += _table_md(
                    f"{table}: {metric.table}",
                    cells,
                    f"{metric.caption} · cell: baseline → candidate (× ratio): verdict",
                )
    sc = comp.scores
    if sc["columns"]:
        out += ["## Tool-call scores (adjusted %, Δ points against the first column)", ""]
        out += _md_table(
            ["category", *sc["columns"]], [[r["category"], *r["cells"]] for r in sc["categories"]]
        )
        out.append("")
        if sc["scenario_diffs"]:
            out += ["### Scenarios whose adjusted verdict differs", ""]
            out += _md_table(["scenario", *sc["columns"]], [[k, *v] for k, v in sc["scenario_diffs"]])
            out.append("")
    return "\n".join(out)


def compare_models(models: list[Any], labels: list[str] | None = None, **kw: Any) -> Comparison:
    return build(models, labels, **kw)


def compare_markdown(models: list[Any], labels: list[str] | None = None, **kw: Any) -> str:
    return comparison_markdown(build(models, labels, **kw))


_HTML_CSS = """body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1400px;margin:2em auto;
padding:0 1em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:13px}th,td{border:1px solid #ccc;
padding:3px 7px;text-align:right;white-space:nowrap}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
td.faster{background:#eefbea}td.slower{background:#fdeeee}td.noise{color:#666}"""


def markdown_to_html(md: str, title: str = "Comparison") -> str:
    """The comparison's markdown (headings, paragraphs, pipe tables) as one self-contained HTML page."""
    from html import escape

    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>{_HTML_CSS}</style></head><body>",
    ]
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip().replace("\\|", "|") for c in lines[i].strip().strip("|").split(" | ")]
                rows.append(cells)
                i += 1
            out.append(
                "<table><thead><tr>"
                + "".join(f"<th>{escape(c)}</th>" for c in rows[0])
                + "</tr></thead><tbody>"
            )
            for r in rows[2:]:
                tds = []
                for c in r:
                    cls = (
                        "faster"
                        if "(better;" in c
                        else "slower"
                        if "(worse;" in c
                        else "noise"
                        if "within noise" in c
                        else ""
                    )
                    tds.append(f'<td class="{cls}">{escape(c)}</td>' if cls else f"<td>{escape(c)}</td>")
                out.append("<tr>" + "".join(tds) + "</tr>")
            out.append("</tbody></table>")
            continue
        for level in (3, 2, 1):
            if ln.startswith("#" * level + " "):
                out.append(f"<h{level}>{escape(ln[level + 1 :])}</h{level}>")
                break
        else:
            if ln.strip():
                out.append(f"<p>{escape(ln).replace('`', '')}</p>")
        i += 1
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def compare_runs(
    paths: list[Path | str],
    fmt: str = "md",
    *,
    baseline: str | None = None,
    threshold_pct: float | None = None,
) -> str:
    """Comparison of run directories (or bundles) as markdown (``fmt="md"``), a self-contained HTML page
    (``"html"``) or JSON (``"json"``: ``{"baseline", "cells": [...], "summary", ...}``)."""
    import json

    from bench_tui.reports.history import load_floors
    from bench_tui.reports.scrub import collect_secrets, scrub

    models = [load_run(resolve_run(Path(p))) for p in paths]
    comp = build(models, baseline=baseline, threshold_pct=threshold_pct, floors=load_floors(models))
    if fmt == "json":
        text = json.dumps(comp.to_json(), indent=1, ensure_ascii=False)
    else:
        text = comparison_markdown(comp)
        if fmt == "html":
            text = markdown_to_html(text, "Comparison: " + " vs ".join(m.run_id for m in models))
    return scrub(text, collect_secrets([m.spec_text for m in models]))[0]

"""Side-by-side comparison of runs (``bench-tui compare RUN_A RUN_B [...]``).

Points are matched by their shape (workload, pp, tg, depth, concurrency), so two runs of different engines
("NInfer vs vLLM") line up as well as two runs of the same one. Every (run, engine.variant) is a column; the
first column is the reference. Each cell of a non-reference column gives the median, the % change against
the reference and a noise-aware verdict: when the two confidence intervals of the median
([ci_low, ci_high] over the repetitions) overlap the difference is "within noise", otherwise
"faster by X%" / "slower by X%" (for latencies lower is faster).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_tui.events import Stat


@dataclass
class Verdict:
    pct: float | None  # (b - a) / a × 100 of the medians
    noise: bool  # the CIs overlap (or one is missing a CI and the change is below 1 %)
    text: str
    better: bool | None = None  # b better than a (None: within noise / unknown)


def verdict(a: Stat | None, b: Stat | None, *, higher_is_better: bool = True) -> Verdict:
    """Compare b against a (medians and their CIs)."""
    if a is None or b is None or a.median is None or b.median is None or not a.n or not b.n:
        return Verdict(None, False, "—")
    if a.median == 0:
        return Verdict(None, False, "— (reference is 0)")
    change = 100.0 * (b.median - a.median) / a.median
    have_ci = None not in (a.ci_low, a.ci_high, b.ci_low, b.ci_high)
    if have_ci:
        overlap = a.ci_low <= b.ci_high and b.ci_low <= a.ci_high  # type: ignore[operator]
    else:
        overlap = abs(change) < 1.0
    if overlap:
        return Verdict(change, True, f"within noise ({change:+.1f}%)")
    better = (change > 0) == higher_is_better
    word = "faster" if better else "slower"
    return Verdict(change, False, f"{word} by {abs(change):.1f}%" + ("" if have_ci else " (no CI)"), better)


METRICS: list[tuple[str, str, bool]] = [
    ("eff_tg_tps", "eff tg t/s = output tokens / (t_done − t_send)", True),
    ("ttft_ms", "TTFT ms = first token of any channel − t_send", False),
    ("prefill_tps", "prefill t/s = prompt tokens / TTFT", True),
    ("decode_tps", "decode t/s = (output tokens − 1) / (t_last_token − t_first_token)", True),
]


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _cell(s: Stat | None) -> str:
    if s is None or s.median is None or not s.n:
        return "—"
    if s.ci_low is None or s.ci_high is None:
        return _num(s.median)
    return f"{_num(s.median)} [{_num(s.ci_low)}–{_num(s.ci_high)}]"


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    esc = [[str(c).replace("|", "\\|") for c in r] for r in [headers, *rows]]
    out = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return out


def compare_models(models: list[Any], labels: list[str] | None = None) -> dict[str, Any]:
    """Structured comparison (used by the markdown renderer and by tests)."""
    from bench_tui.reports.render import marks

    labels = labels or [chr(ord("A") + i) if i < 26 else f"R{i}" for i in range(len(models))]
    cols: list[tuple[str, str]] = []  # (label, variant key)
    shapes: dict[tuple[Any, ...], dict[tuple[str, str], Any]] = {}
    for lab, m in zip(labels, models, strict=True):
        for p in m.of_kind("throughput"):
            col = (lab, p.key)
            if col not in cols:
                cols.append(col)
            shape = (p.workload, p.pp, p.tg, p.depth, p.concurrency)
            shapes.setdefault(shape, {})[col] = p
    tables = []
    for metric, caption, higher in METRICS:
        rows = []
        for shape in sorted(shapes, key=lambda s: tuple(str(x) if x is None else x for x in s)):
            by = shapes[shape]
            ref = next((by[c] for c in cols if c in by), None)
            wl, pp, tg, d, c = shape
            row: dict[str, Any] = {"shape": f"{wl} pp{pp} tg{tg} d{d} c{c}", "cells": []}
            for col in cols:
                p = by.get(col)
                if p is None or p.summary is None:
                    row["cells"].append({"text": "—", "verdict": None})
                    continue
                st = getattr(p.summary, metric)
                text = _cell(st)
                vd = None
                if ref is not None and p is not ref and ref.summary is not None:
                    vd = verdict(getattr(ref.summary, metric), st, higher_is_better=higher)
                    text += f" · {vd.text}"
                mk = marks(p)
                row["cells"].append({"text": text + (f" {mk}" if mk else ""), "verdict": vd})
            rows.append(row)
        tables.append({"metric": metric, "caption": caption, "rows": rows})
    # spec-decode acceptance: rate per (workload, content, depth), Δ points vs the first column that has it
    acc_cols: list[tuple[str, str]] = []
    acc: dict[tuple[Any, ...], dict[tuple[str, str], float]] = {}
    for lab, m in zip(labels, models, strict=True):
        for p in m.of_kind("spec_acceptance"):
            rate = p.summary.server.spec_acceptance_rate if p.summary is not None else None
            if rate is None:
                continue
            col = (lab, p.key)
            if col not in acc_cols:
                acc_cols.append(col)
            acc.setdefault((p.workload, str(p.content), p.depth), {})[col] = rate
    acc_rows = []
    for shape in sorted(acc):
        by_acc = acc[shape]
        ref_col = next((c for c in acc_cols if c in by_acc), None)
        ref_rate = by_acc[ref_col] if ref_col is not None else None
        cells = []
        for col in acc_cols:
            r = by_acc.get(col)
            if r is None:
                cells.append("—")
            elif col == ref_col or ref_rate is None:
                cells.append(f"{100 * r:.1f}%")
            else:
                cells.append(f"{100 * r:.1f}% ({100 * (r - ref_rate):+.1f} pts)")
        acc_rows.append({"shape": f"{shape[0]} {shape[1]} d{shape[2]}", "cells": cells})
    # scores: categories per (run, variant), Δ points vs the first
    score_cols: list[tuple[str, Any]] = []
    for lab, m in zip(labels, models, strict=True):
        for r in m.scores:
            score_cols.append((f"{lab}:{r.engine}.{r.variant}", r))
    cats = sorted({c for _, r in score_cols for c in r.adjusted.categories})
    cat_rows = []
    for name in ["overall", *cats]:
        row = {"category": name, "cells": []}
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
                per.setdefault(f"{s.scenario_id}#{s.trial}", ["—"] * len(score_cols))[i] = str(s.adjusted_verdict or s.outcome)
        diffs = [(k, v) for k, v in sorted(per.items()) if len(set(v)) > 1]
    return {
        "labels": labels,
        "runs": [(lab, m.run_id, m.title, m.status) for lab, m in zip(labels, models, strict=True)],
        "columns": [f"{lab}:{k}" for lab, k in cols],
        "tables": tables,
        "acceptance_columns": [f"{lab}:{k}" for lab, k in acc_cols],
        "acceptance": acc_rows,
        "score_columns": [c for c, _ in score_cols],
        "categories": cat_rows,
        "scenario_diffs": diffs,
    }


def compare_markdown(models: list[Any], labels: list[str] | None = None) -> str:
    from bench_tui.reports.render import LEGEND

    data = compare_models(models, labels)
    out = ["# Comparison", ""]
    out += _md_table(["label", "run", "title", "status"], [list(map(str, r)) for r in data["runs"]])
    out += ["", f"Reference column: `{data['columns'][0]}`." if data["columns"] else "No throughput points.",
            "Each cell: median [CI low–high]; other columns add the % change against the reference and a verdict: "
            "'within noise' when the two CIs overlap.", f"Marks: {LEGEND}.", ""]  # fmt: skip
    if data["columns"]:
        for t in data["tables"]:
            out += [f"## {t['caption']}", ""]
            out += _md_table(["point", *data["columns"]], [[r["shape"], *(c["text"] for c in r["cells"])]
                                                            for r in t["rows"]])  # fmt: skip
            out.append("")
    if data["acceptance"]:
        out += ["## Spec-decode acceptance rate (Δ points against the first column)", ""]
        out += _md_table(["point", *data["acceptance_columns"]], [[r["shape"], *r["cells"]] for r in data["acceptance"]])
        out.append("")
    if data["score_columns"]:
        out += ["## Tool-call scores (adjusted %, Δ points against the first column)", ""]
        out += _md_table(["category", *data["score_columns"]], [[r["category"], *r["cells"]] for r in data["categories"]])
        out.append("")
        if data["scenario_diffs"]:
            out += ["### Scenarios whose adjusted verdict differs", ""]
            out += _md_table(["scenario", *data["score_columns"]], [[k, *v] for k, v in data["scenario_diffs"]])
            out.append("")
    return "\n".join(out)


_HTML_CSS = """body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1400px;margin:2em auto;
padding:0 1em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:13px}th,td{border:1px solid #ccc;
padding:3px 7px;text-align:right;white-space:nowrap}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
td.faster{background:#eefbea}td.slower{background:#fdeeee}td.noise{color:#666}"""


def markdown_to_html(md: str, title: str = "Comparison") -> str:
    """The comparison's markdown (headings, paragraphs, pipe tables) as one self-contained HTML page."""
    from html import escape

    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{escape(title)}</title>",
           f"<style>{_HTML_CSS}</style></head><body>"]  # fmt: skip
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
            out.append("<table><thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in rows[0]) + "</tr></thead><tbody>")
            for r in rows[2:]:
                tds = []
                for c in r:
                    cls = ("faster" if "faster by" in c else "slower" if "slower by" in c
                           else "noise" if "within noise" in c else "")  # fmt: skip
                    tds.append(f'<td class="{cls}">{escape(c)}</td>' if cls else f"<td>{escape(c)}</td>")
                out.append("<tr>" + "".join(tds) + "</tr>")
            out.append("</tbody></table>")
            continue
        for level in (3, 2, 1):
            if ln.startswith("#" * level + " "):
                out.append(f"<h{level}>{escape(ln[level + 1:])}</h{level}>")
                break
        else:
            if ln.strip():
                out.append(f"<p>{escape(ln).replace('`', '')}</p>")
        i += 1
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def compare_runs(paths: list[Path | str], fmt: str = "md") -> str:
    """Comparison of run directories (or bundles) as markdown (``fmt="md"``) or a self-contained HTML page."""
    from bench_tui.reports.bundle import resolve_run
    from bench_tui.reports.model import load_run
    from bench_tui.reports.scrub import collect_secrets, scrub

    models = [load_run(resolve_run(Path(p))) for p in paths]
    text = compare_markdown(models)
    if fmt == "html":
        text = markdown_to_html(text, "Comparison: " + " vs ".join(m.run_id for m in models))
    return scrub(text, collect_secrets([m.spec_text for m in models]))[0]

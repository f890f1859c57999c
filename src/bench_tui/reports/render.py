"""report.md and report.html from a run directory (pure function of the directory).

``build_view(model)`` turns a RunModel into sections of labelled tables (shared by both formats);
``render(model, fmt)`` renders one format through the jinja2 templates in ``templates/``;
``write_reports(run_dir)`` writes the formats the spec asks for (``report.formats``), plus ``scores.json``
(so a bundle opened without its pack still has scores), and indexes the run in ``runs/history.sqlite``
(best-effort).
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
from pathlib import Path
from typing import Any

import jinja2
import msgspec

from bench_tui.catalogue import CATALOGUE, METRIC
from bench_tui.engine_adapters.dialects import DEFINITIONS
from bench_tui.events import Stat
from bench_tui.reports import charts, compare
from bench_tui.reports import sessions as sessions_report
from bench_tui.reports.bundle import in_bundle_cache
from bench_tui.reports.compare import method_text
from bench_tui.reports.conditions import conditions_section
from bench_tui.reports.findings import findings, method_note
from bench_tui.reports.floors import has_sessions
from bench_tui.reports.history import index_run, load_floors, user_db
from bench_tui.reports.model import (
    LEGEND,
    MARK_TOKENS,
    SCORES_FILE,
    PointRow,
    RunModel,
    crash_note,
    load_run,
    marks,
)
from bench_tui.reports.scrub import collect_secrets, scrub
from bench_tui.reports.sections import Section, Table

TEMPLATES = Path(__file__).parent / "templates"


DEFS = {m.key: m.caption for m in CATALOGUE}  # every caption from the one metric catalogue
CELL = "median [CI low–high] over the point's requests"


# ---------------------------------------------------------------------------------------------- formatting


def num(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _num_or_dash(x: object, digits: int = 1) -> str:
    return num(float(x), digits) if isinstance(x, int | float) and not isinstance(x, bool) else "—"


def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{100.0 * x:.{digits}f}%"


def stat_cell(s: Stat | None) -> str:
    if s is None or not s.n or s.median is None:
        return "—"
    if s.ci_low is None or s.ci_high is None:
        return num(s.median)
    return f"{num(s.median)} [{num(s.ci_low)}–{num(s.ci_high)}]"


def _with_marks(text: str, p: PointRow) -> str:
    mk = marks(p)
    return f"{text} {mk}" if mk and text != "—" else text


def _utc(ts: float | None) -> str:
    if ts is None:
        return "—"
    return _dt.datetime.fromtimestamp(ts, tz=_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _flatten(
    d: Any, prefix: str = "", out: list[tuple[str, str]] | None = None, depth: int = 0
) -> list[tuple[str, str]]:
    out = [] if out is None else out
    if isinstance(d, dict) and depth < 4:
        for k, v in d.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out, depth + 1)
    elif isinstance(d, list) and d and all(isinstance(x, dict) for x in d) and depth < 4:
        for i, v in enumerate(d):
            _flatten(v, f"{prefix}[{i}]", out, depth + 1)
    else:
        text = ", ".join(map(str, d)) if isinstance(d, list) else str(d)
        if text not in ("", "None", "{}"):
            out.append((prefix, text[:300]))
    return out


# ---------------------------------------------------------------------------------------------- sections


def _run_line(m: RunModel) -> str:
    return (
        f"Run `{m.run_id}` of spec `{m.spec_name or '?'}`: {m.status}, {m.points_done} of {m.points_total} "
        f"points, started {_utc(m.started_ts)}, finished {_utc(m.finished_ts)}."
    )


def _setup(m: RunModel) -> Section:
    """The appendix's engines (versions, launch commands, crash tails) and load generation."""
    sec = Section("setup", "Setup", appendix=True)
    rows = []
    for es in m.engines.values():
        rows.append(
            [
                es.key,
                es.version or "—",
                es.model_id or "—",
                num(es.startup_s),
                "; ".join(crash_note(c) for c in es.crashes) or "—",
            ]
        )
        if es.command:
            sec.code.append((f"{es.key} launch command", shlex.join(es.command)))
        for i, tail in enumerate(c.log_tail[-12:] for c in es.crashes if c.log_tail):
            sec.code.append((f"{es.key} log before crash {i + 1}", "\n".join(tail)))
    if rows:
        sec.tables.append(
            Table("Engines", ["engine.variant", "version", "model id", "startup s", "crashes"], rows)
        )
    load = m.env.get("load")
    if isinstance(load, dict) and isinstance(load.get("workers"), list):
        limited: dict[str, list[str]] = {}
        for p in m.points:
            for w in (p.summary.extra.get("client_limited_workers") if p.summary else None) or []:
                limited.setdefault(str(w), []).append(p.point_id)
        wrows = [
            [
                str(w.get("name", "?")),
                str(w.get("host", "—")),
                str(w.get("cores", "—")),
                str(w.get("python", "—")),
                str(w.get("bench_tui", "—")),
                _num_or_dash(w.get("clock_offset_ms"), 3),
                _num_or_dash(w.get("clock_spread_ms"), 3),
                ", ".join(limited.get(str(w.get("name")), [])) or "—",
                str(w.get("died", "—")),
            ]
            for w in load["workers"]
            if isinstance(w, dict)
        ]
        addr = f" at `{load['ray_address']}`" if load.get("ray_address") else ""
        sec.tables.append(
            Table(
                f"Load generation: backend `{load.get('backend', '?')}`{addr}, {len(wrows)} worker(s)",
                [
                    "worker",
                    "host",
                    "cores",
                    "python",
                    "bench-tui",
                    "clock offset ms",
                    "clock spread ms",
                    "client-limited at",
                    "died",
                ],
                wrows,
            )
        )
        for w in load.get("warnings") or []:
            sec.paragraphs.append(f"Load warning: {w}")
    sec.empty = not (sec.tables or sec.code or sec.paragraphs)
    return sec


def _host(m: RunModel) -> Section:
    """The appendix's host, hardware and engine environment (env.json)."""
    sec = Section("host", "Host and environment", appendix=True)
    env = {k: v for k, v in m.env.items() if k not in ("engines", "load")}
    hw = [[k, v] for k, v in _flatten(env) if "env." not in k]
    for name, info in (m.env.get("engines") or {}).items():
        if isinstance(info, dict):
            for k, v in _flatten({k: v for k, v in info.items() if k not in ("env", "command")}):
                hw.append([f"engines.{name}.{k}", v])
    if hw:
        sec.tables.append(Table("Host and hardware (env.json)", ["field", "value"], hw))
    else:
        sec.paragraphs.append("No env.json: hardware unknown.")
    return sec


def _groups(points: list[PointRow]) -> dict[tuple[str, Any, Any], list[PointRow]]:
    out: dict[tuple[str, Any, Any], list[PointRow]] = {}
    for p in points:
        out.setdefault((p.workload, p.pp, p.tg), []).append(p)
    return out


def _rank(variants: list[str], key: str) -> int:
    return variants.index(key) if key in variants else len(variants)


def _pivot(pts: list[PointRow], variants: list[str], metric: str, title: str) -> Table:
    concs = sorted({p.concurrency for p in pts})
    depths = sorted({p.depth for p in pts})
    # one column per variant (and per engine session, when a variant ran several) and concurrency
    columns = sorted({(p.key, p.session, p.column) for p in pts}, key=lambda k: (_rank(variants, k[0]), k[1]))
    cols = [
        (col, c)
        for _, _, col in columns
        for c in concs
        if any(p.column == col and p.concurrency == c for p in pts)
    ]
    rows = []
    for d in depths:
        row = [str(d)]
        for v, c in cols:
            p = next((q for q in pts if q.column == v and q.concurrency == c and q.depth == d), None)
            if p is None or p.summary is None:
                row.append("—")
            elif metric in ("agg_tg_tps", "agg_prefill_tps"):
                row.append(_with_marks(num(getattr(p.summary, metric)), p))
            else:
                row.append(_with_marks(stat_cell(getattr(p.summary, metric)), p))
        rows.append(row)
    return Table(
        title,
        ["depth", *[f"{v} c{c}" for v, c in cols]],
        rows,
        caption=DEFS[metric] + ("" if metric in ("agg_tg_tps", "agg_prefill_tps") else f"; cell = {CELL}"),
    )


def _delta_table(label: str, wl: str, pp: Any, tg: Any, comp: Any) -> Table | None:
    """eff tg t/s of every variant against the baseline, with the verdicts of ``reports.verdict``."""
    cells = [
        c
        for c in comp.cells
        if c.metric == "eff_tg_tps" and c.workload == wl and f" pp{pp} tg{tg} " in f" {c.point} "
    ]
    if not cells:
        return None
    cands = list(dict.fromkeys(c.candidate for c in cells))
    points = list(dict.fromkeys(c.point for c in cells))
    rows = []
    for pt in points:
        d, c_ = pt.split()[-2:]
        row = [d[1:], c_[1:]]
        for cand in cands:
            cell = next((c for c in cells if c.point == pt and c.candidate == cand), None)
            row.append("—" if cell is None else cell.verdict.text + (f" {cell.marks}" if cell.marks else ""))
        rows.append(row)
    return Table(
        f"{label}: eff tg t/s vs baseline {comp.baseline['variant']}",
        ["depth", "conc", *cands],
        rows,
        caption="change of the median, candidate vs baseline; claimed only when the bootstrap interval "
        f"lies beyond ±{comp.threshold_pct:g} % (see the summary for the test)",
    )


def _throughput(m: RunModel, variants: list[str], comp: Any) -> tuple[Section, Section]:
    sec = Section("throughput", "Throughput")
    srv = Section("server", "Server-side reference")
    pts = m.of_kind("throughput")
    if not pts:
        sec.empty = srv.empty = True
        return sec, srv
    sec.paragraphs.append(f"Marks: {LEGEND}. Degraded points are shown, never averaged into other numbers.")
    for (wl, pp, tg), gp in _groups(pts).items():
        label = f"`{wl}`" + (f" pp{pp}" if pp is not None else "") + (f" tg{tg}" if tg is not None else "")
        vs = [v for v in variants if any(p.key == v for p in gp)]
        for metric in ("eff_tg_tps", "agg_tg_tps", "ttft_ms", "prefill_tps", "agg_prefill_tps", "decode_tps"):
            sec.tables.append(
                _pivot(gp, vs, metric, f"{label}: {METRIC[metric].table} (depth × concurrency)")
            )
        dt = _delta_table(label, wl, pp, tg, comp)
        if dt:
            sec.tables.append(dt)
        rows = []
        for p in sorted(
            gp, key=lambda q: (variants.index(q.key) if q.key in variants else 99, q.depth, q.concurrency)
        ):
            s = p.summary
            assert s is not None
            rows.append(
                [
                    p.point_id,
                    p.status + (f" {marks(p)}" if marks(p) else ""),
                    s.cache or "—",
                    m.prefix_caching(p.key),
                    f"{s.ok}/{s.requests}",
                    stat_cell(s.ttft_ms),
                    stat_cell(s.ttfb_ms),
                    stat_cell(s.e2e_ms),
                    stat_cell(s.itl_ms),
                    num(s.max_loop_lag_ms),
                    ", ".join(p.flags) or "—",
                ]
            )
        sec.tables.append(
            Table(
                f"{label}: per point",
                [
                    "point",
                    "status",
                    "prompt layout",
                    "prefix caching",
                    "ok/requests",
                    "TTFT ms",
                    "TTFB ms",
                    "e2e ms",
                    "ITL ms",
                    "max loop lag ms",
                    "flags",
                ],
                rows,
                caption=f"{DEFS['ttfb_ms']}; {DEFS['e2e_ms']}",
            )
        )
        for metric in ("eff_tg_tps", "ttft_ms", "prefill_tps", "decode_tps"):
            mt = METRIC[metric]
            sec.charts.append(
                _line(gp, vs, metric, f"{label.replace('`', '')}: {mt.label} {mt.unit} vs depth", mt.unit)
            )
    srv.paragraphs.append(
        "The engine's own account of each point, from /metrics deltas around it: a reference "
        "for the client-side numbers above. What each figure counts differs by engine (cached "
        "prompt tokens, per-slot vs per-request time): see Definitions at the end."
    )
    srv.tables.extend(
        server_tables(
            m, sorted(pts, key=lambda q: (variants.index(q.key) if q.key in variants else 99, q.point_id))
        )
    )
    return sec, srv


def server_tables(m: RunModel, pts: list[PointRow]) -> list[Table]:
    """Prefill (evaluated vs cached prompt tokens, per-request vs aggregate rates) and decode (server vs client,
    median vs pooled) per point, each figure as the engine counts it."""
    pre, dec = [], []
    for p in pts:
        s = p.summary
        if s is None:
            continue
        sv = s.server
        pre.append(
            [
                p.point_id,
                sv.source or "—",
                s.cache or "—",
                m.prefix_caching(p.key),
                num(sv.prompt_tokens_evaluated, 0),
                num(sv.prompt_tokens_cached, 0),
                pct(sv.prefix_cache_hit_rate),
                num(sv.prefill_tps),
                num(sv.evaluated_prefill_tps),
                _with_marks(stat_cell(s.prefill_tps), p),
                num(s.agg_prefill_tps),
            ]
        )
        client_out = s.output_tokens.median * s.ok if s.output_tokens.median is not None else None
        gap = next((f.split(":", 1)[1] for f in p.flags if f.startswith("server-decode-differs:")), "")
        dec.append(
            [
                p.point_id,
                num(sv.decode_tps),
                _with_marks(stat_cell(s.decode_tps), p),
                num(s.pooled_decode_tps),
                gap or "—",
                num(sv.generation_tokens, 0),
                num(client_out, 0),
                s.token_source or "—",
                str(s.token_disagreements) + (f" {MARK_TOKENS}" if s.token_disagreements else ""),
            ]
        )
    return [
        Table(
            "Server-side prefill per point",
            [
                "point",
                "source",
                "prompt layout",
                "prefix caching",
                "evaluated prompt tok",
                "cached prompt tok",
                "prefix-cache hit",
                "server prefill t/s (as counted)",
                "evaluated prefill t/s",
                "client prefill t/s per request",
                "aggregate prefill t/s",
            ],
            pre,
            caption="evaluated prefill t/s counts only the prompt tokens the engine computed (comparable "
            "across engines); 'as counted' follows the engine (vLLM includes cached tokens); the "
            "per-request client figure includes queueing at c > 1",
        ),
        Table(
            "Server-side decode per point",
            [
                "point",
                "server decode t/s",
                "client decode t/s (median request)",
                "client pooled decode t/s",
                "server vs client",
                "server gen tok",
                "client out tok",
                "token source",
                "disagreements",
            ],
            dec,
            caption="the server pools all tokens over all decode time; compare it with the client's pooled "
            "figure; a gap over 25 % to the median request is flagged with its likely cause; client "
            "out tok = median output tokens × successful requests",
        ),
    ]


def _definitions(m: RunModel) -> Section:
    """The appendix: what each server-side and client-side figure counts, per engine."""
    sec = Section("definitions", "Definitions: what each figure counts, per engine", appendix=True)
    if not m.of_kind("throughput") and not m.of_kind("spec_acceptance"):
        sec.empty = True
        return sec
    sec.tables.append(
        Table(
            "Server-side and client-side figures",
            ["figure", "vLLM", "llama.cpp"],
            [list(row) for row in DEFINITIONS],
        )
    )
    return sec


def _line(pts: list[PointRow], variants: list[str], metric: str, title: str, y_label: str) -> str:
    series = []
    for v in variants:
        for c in sorted({p.concurrency for p in pts if p.key == v}):
            s = charts.Series(f"{v} c{c}")
            for p in sorted((p for p in pts if p.key == v and p.concurrency == c), key=lambda q: q.depth):
                st: Stat = getattr(p.summary, metric)
                mk = ", ".join(
                    x for x, on in (("degraded", p.degraded), ("client-limited", p.client_limited)) if on
                )
                s.points.append(charts.XY(str(p.depth), st.median, st.ci_low, st.ci_high, mk))
            series.append(s)
    return charts.line_chart(
        series, title=title, x_label="depth (tokens already in context)", y_label=y_label
    )


def _spec_accept(m: RunModel, variants: list[str]) -> Section:
    sec = Section("spec", "Speculative decoding acceptance")
    rows: list[list[str]] = []
    bars: dict[str, dict[str, float]] = {}
    for p in m.points:
        s = p.summary
        if s is None or (
            p.kind != "spec_acceptance"
            and s.server.spec_acceptance_rate is None
            and s.server.spec_drafts is None
        ):
            continue
        sv = s.server
        content = p.content or ("(sweep)" if p.kind == "throughput" else "—")
        if sv.spec_drafts == 0:
            rate = "0 drafts; acceptance n/a"
        elif sv.spec_acceptance_rate is None:
            rate = next((f for f in p.flags if "speculative" in f), "—")
        else:
            rate = pct(sv.spec_acceptance_rate)
        rows.append(
            [
                p.point_id,
                p.key,
                str(content),
                str(p.depth),
                rate,
                num(sv.spec_acceptance_length, 2),
                " / ".join(pct(x, 0) for x in sv.spec_per_position) or "—",
                num(sv.spec_drafts, 0),
                f"{num(sv.spec_accepted, 0)} / {num(sv.spec_draft_tokens, 0)}",
                _with_marks(stat_cell(s.eff_tg_tps), p),
                stat_cell(s.decode_tps),
            ]
        )
        if p.kind == "spec_acceptance" and sv.spec_acceptance_rate is not None:
            bars.setdefault(p.key, {})[f"{content} d{p.depth}"] = sv.spec_acceptance_rate * 100.0
    if not rows:
        sec.empty = True
        return sec
    sec.tables.append(
        Table(
            "Acceptance per point",
            [
                "point",
                "variant",
                "content",
                "depth",
                "acceptance rate",
                "mean acceptance length",
                "per position",
                "drafts",
                "accepted / draft tokens",
                "eff tg t/s",
                "decode t/s",
            ],
            rows,
            caption="acceptance rate = accepted / draft tokens (server /metrics deltas); mean "
            "acceptance length = 1 + accepted / drafts; per position = accepted at "
            "position i / drafts",
        )
    )
    if bars:
        groups = sorted({g for d in bars.values() for g in d})
        series = [charts.Series(k, [charts.XY(g, d.get(g)) for g in groups]) for k, d in bars.items()]
        sec.charts.append(
            charts.bar_chart(groups, series, title="spec acceptance by content type", y_label="%", ymax=100.0)
        )
    return sec


def _fmt_score(x: float | None) -> str:
    return num(x)


def _scores(m: RunModel) -> tuple[Section, list[str]]:
    sec = Section("scores", "Tool-call scores")
    notes: list[str] = []
    reps = m.scores
    if not reps:
        sec.empty = True
        return sec, notes
    keys = [
        f"{r.engine}.{r.variant}"
        + (f" ({r.workload})" if len({x.workload for x in reps}) > 1 else "")
        + (f" [{r.mode}]" if len({x.mode for x in reps}) > 1 else "")
        for r in reps
    ]  # strict | lenient side by side
    sec.paragraphs.append(
        "Raw = the grader's verdicts; adjusted = after the spec's overrides (footnotes). "
        "Numbers are percent unless noted."
    )
    heads = ["metric"]
    for k in keys:
        heads += [f"{k} raw", f"{k} adjusted"]
    rows = []
    for label, attr in (
        ("score", "score"),
        ("quality", "quality"),
        ("responsiveness", "responsiveness"),
        ("deployability", "deployability"),
        ("pass@1", "pass_at_1"),
        ("pass@k", "pass_at_k"),
        ("pass^k", "pass_pow_k"),
    ):
        row = [label]
        for r in reps:
            row += [_fmt_score(getattr(r.raw, attr)), _fmt_score(getattr(r.adjusted, attr))]
        rows.append(row)
    row = ["scored / total (harness err, grader err, server fail)"]
    for r in reps:
        cell = f"{r.scored}/{r.scenarios_total} ({r.harness_errors}, {r.grader_errors}, {r.server_failures})"
        row += [cell, cell]
    rows.append(row)
    row = ["median turn ms"]
    for r in reps:
        row += [num(r.median_turn_ms), num(r.median_turn_ms)]
    rows.append(row)
    row = ["safety-critical all passed"]
    for r in reps:
        row += [
            "yes"
            if r.raw.safety.all_passed
            else "no: " + "; ".join(r.raw.safety.what or r.raw.safety.failed),
            "yes"
            if r.adjusted.safety.all_passed
            else "no: " + "; ".join(r.adjusted.safety.what or r.adjusted.safety.failed),
        ]
    rows.append(row)
    sec.tables.append(
        Table("Scores (raw vs adjusted)", heads, rows, caption=f"k = {max(r.k for r in reps)} trials")
    )
    base_i = next((i for i, k in enumerate(keys) if k.split(" ")[0] == m.baseline), 0)
    for what, title in (("categories", "Categories"), ("tiers", "Difficulty tiers")):
        names = sorted({c for r in reps for c in (*getattr(r.raw, what), *getattr(r.adjusted, what))})
        if what == "tiers":
            order = {"easy": 0, "medium": 1, "hard": 2}
            names.sort(key=lambda n: order.get(n, 9))
        heads = [what[:-1] if what == "tiers" else "category"]
        for i, k in enumerate(keys):
            heads.append(f"{k} raw / adj")
            if i != base_i:
                heads.append(f"Δ adj vs {keys[base_i]}")
        rows = []
        for n in names:
            row = [n]
            b = getattr(reps[base_i].adjusted, what).get(n)
            for i, r in enumerate(reps):
                rb, ab = getattr(r.raw, what).get(n), getattr(r.adjusted, what).get(n)
                row.append(
                    f"{_fmt_score(rb.score if rb else None)} / {_fmt_score(ab.score if ab else None)}"
                    + (f" (n={ab.n})" if ab else "")
                )
                if i != base_i:
                    if ab and b and ab.score is not None and b.score is not None:
                        row.append(f"{ab.score - b.score:+.1f} pts")
                    else:
                        row.append("—")
            rows.append(row)
        sec.tables.append(Table(title, heads, rows, caption="% of points (pass 2, partial 1, fail 0)"))
        if what == "categories" and names:
            series = [
                charts.Series(
                    k,
                    [
                        charts.XY(n, (r.adjusted.categories[n].score if n in r.adjusted.categories else None))
                        for n in names
                    ],
                )
                for k, r in zip(keys, reps, strict=True)
            ]
            sec.charts.append(
                charts.bar_chart(
                    names,
                    series,
                    title="scenario categories (adjusted %)",
                    y_label="%",
                    ymax=100.0,
                    width=760,
                )
            )
    # scenario-level: verdicts side by side, rows where variants differ marked
    fn: dict[tuple[int, str], int] = {}
    scen: dict[tuple[str, int], dict[int, Any]] = {}
    for i, r in enumerate(reps):
        for s in r.scenarios:
            scen.setdefault((s.scenario_id, s.trial), {})[i] = s
    rows = []
    for (sid, trial), by in sorted(scen.items()):
        first = next(iter(by.values()))
        row = [
            f"{sid}#{trial}",
            first.category,
            first.difficulty + (" (safety)" if first.safety_critical else ""),
        ]
        adj = set()
        for i in range(len(reps)):
            s = by.get(i)
            if s is None:
                row.append("—")
                continue
            cell = s.raw_verdict or s.outcome
            if s.override is not None:
                key = (s.override.index, f"{reps[i].engine}.{reps[i].variant}")
                if key not in fn:
                    fn[key] = len(fn) + 1
                    o = s.override
                    notes.append(
                        f"[{fn[key]}] {o.scenario} ({key[1]}): {s.raw_verdict} → {s.adjusted_verdict}. "
                        f"“{o.reason}” — {o.author or 'unknown author'}, {o.date or 'undated'} "
                        f"(override [{o.index}])"
                    )
                cell = f"{s.raw_verdict} → {s.adjusted_verdict} [{fn[key]}]"
            if s.stale_overrides:
                cell += " (stale override)"
            adj.add(s.adjusted_verdict)
            row.append(cell)
        row.append("differs" if len(adj) > 1 else "")
        rows.append(row)
    sec.tables.append(
        Table(
            "Scenarios (raw → adjusted where overridden)",
            ["scenario", "category", "difficulty", *keys, "Δ"],
            rows,
        )
    )
    for r in reps:
        for st in r.overrides_stale:
            o = st.override
            notes.append(
                f"[stale] {o.scenario}#{st.trial} ({r.engine}.{r.variant}): override [{o.index}] → {o.verdict} "
                f"NOT applied: {st.why}. “{o.reason}” — {o.author or 'unknown author'}, {o.date or 'undated'}"
            )
    for r in reps:
        notes.extend(f"[judge] {r.engine}.{r.variant}: {n}" for n in r.judge)
    sec.bullets = [f"{k}: {v}" for k, v in reps[0].formulas.items()]
    sec.bullets_title = "How the scores are made:"
    return sec, notes


def _summary(m: RunModel) -> Section:
    """The run's headline findings (``reports.findings``), each citing its cells."""
    sec = Section("summary", "Summary")
    sec.paragraphs.append(_run_line(m))
    if m.description:
        sec.paragraphs.append(m.description)
    found = findings(m)
    sec.bullets = [f.text for f in found]
    if found:
        sec.bullets_title = "Findings:"
        sec.after.append(method_note(m.threshold_pct))
    else:
        sec.paragraphs.append("No findings: the run holds no measured point.")
    return sec


def _comparison(comp: Any) -> Section:
    """Each variant against the baseline, per workload, with the verdicts of ``reports.verdict``: claims cite
    their cell; nothing is claimed within noise or when inconclusive."""
    sec = Section("comparison", "Variants against the baseline")
    sec.bullets.extend(comp.summary)
    if comp.cells or comp.ratios:
        sec.paragraphs.append(method_text(comp.threshold_pct))
    sec.empty = not sec.bullets
    return sec


_SECTION_KIND = {
    "throughput": "throughput",
    "spec": "spec_acceptance",
    "sessions": "sessions",
    "scores": "scenarios",
}


def build_view(m: RunModel) -> dict[str, Any]:
    """The report's sections in reading order: the summary (findings) and the comparison, then the results
    (throughput, server-side, speculation, scores), then the appendix (setup, host, definitions)."""
    variants = m.variants()
    comp = compare.build([m], floors=load_floors([m]))
    summary = _summary(m)
    tp, srv = _throughput(m, variants, comp)
    spec = _spec_accept(m, variants)
    scores, notes = _scores(m)
    head = [summary, _comparison(comp)]
    results = [tp, srv, spec, sessions_report.section(m, Section, Table), scores]
    appendix = [_setup(m), _host(m), conditions_section(m), _definitions(m)]  # definitions close the report
    # a results section the plan asked for (a point of its kind) that measured nothing; kinds nobody asked
    # for are not listed
    planned = {p.kind for p in m.points}
    missing = [s.title.lower() for s in results if s.empty and _SECTION_KIND.get(s.id) in planned]
    if missing:
        summary.paragraphs.insert(1, "Not in this run: " + ", ".join(missing) + ".")
    head = [s for s in head if not s.empty]
    sections = [s for s in head + results + appendix if not s.empty]
    return {
        "title": m.title,
        "run_id": m.run_id,
        "status": m.status,
        "baseline": m.baseline,
        "notes": m.notes,
        "sections": sections,
        "footnotes": notes,
        "caveats": [c.message for c in m.caveats],
        "caveats_after": len(head),
        "appendix_from": next((i for i, s in enumerate(sections) if s.appendix), len(sections)),
        "spec_text": m.spec_text,
        "score_source": m.score_source,
        "css": charts.CHART_CSS,
    }


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["mdcell"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return env


def render(model: RunModel, fmt: str, *, secrets: set[str] | None = None) -> str:
    """One report as text (``fmt`` = md | html); secrets scrubbed."""
    if fmt not in ("md", "html"):
        raise ValueError(f"unknown report format {fmt!r} (md or html)")
    view = build_view(model)
    text = _env().get_template(f"report.{fmt}.j2").render(**view)
    if secrets is None:
        secrets = collect_secrets([model.spec_text])
    return scrub(text, secrets)[0]


def render_run(run_dir: Path | str, fmt: str = "md", *, overrides_spec: Path | None = None) -> str:
    return render(load_run(run_dir, overrides_spec=overrides_spec), fmt)


def write_reports(
    run_dir: Path, formats: list[str] | None = None, *, overrides_spec: Path | None = None
) -> list[Path]:
    """Write report.md / report.html (spec.report.formats unless ``formats``) into the run dir.

    Scores use ``overrides_spec``'s overrides when given, else the run's latest regrade, else its spec."""
    run_dir = Path(run_dir)
    model = load_run(run_dir, overrides_spec=overrides_spec)
    secrets = collect_secrets([model.spec_text])
    written: list[Path] = []
    for fmt in formats or model.formats or ["md", "html"]:
        path = run_dir / f"report.{fmt}"
        path.write_text(render(model, fmt, secrets=secrets), encoding="utf-8")
        written.append(path)
    if model.scores and (model.score_source == "events" or model.score_source.startswith("events (regraded")):
        data = json.dumps(msgspec.to_builtins(model.scores), indent=1, ensure_ascii=False)
        (run_dir / SCORES_FILE).write_text(scrub(data, secrets)[0] + "\n", encoding="utf-8")
    try:
        if not in_bundle_cache(run_dir):  # an unpacked bundle is not one of our runs
            index_run(run_dir, model=model)
            if has_sessions(model):  # its A/A sessions measure this host's noise: compare finds them
                index_run(run_dir, user_db(), model=model)
    except Exception:  # noqa: BLE001 - the index is a cache: never fail a report for it
        pass
    return written

"""Sessions points in the report and in compare (runner/workloads/sessions.py measures them).

- :func:`section`: the report's "Sessions" section: per point the offered vs achieved rate, send lateness,
  stability, goodput and SLO attainment (Wilson 95 % interval); per turn TTFT, context and prefix-cache hit
  (the engine's count beside the workload's ideal); the max-rate knee with every rate tried; warm vs cold
  prefix caching as a ratio of TTFT on turns >= 2 citing both points; charts (latency and goodput vs offered
  rate, TTFT vs turn) in the html report.
- :func:`add_cells`: compare cells for ``goodput_rps``, ``max_rate`` (one point aggregate a side) and
  ``ttft_ms_turns2plus`` (the requests after a session's first, from their scheduled send time), with the
  verdicts of reports/verdict.py; within one run, prefix caching off vs on as a ratio cell.

render.py and compare.py own the Section / Table / Cell types; they hand them in (this module is below them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_tui.catalogue import METRIC
from bench_tui.events import RequestFinished, SessionsParams, SessionTurn, read_events
from bench_tui.reports import charts
from bench_tui.reports import verdict as V

TABLE_SESSIONS = "sessions"
TABLE_RATIO_CACHE_SESSIONS = "prefix caching on vs off (sessions)"
CELL_METRICS = ("goodput_rps", "max_rate", "ttft_ms_turns2plus")


def _n(x: Any, digits: int = 1) -> str:
    return f"{x:.{digits}f}" if isinstance(x, int | float) and not isinstance(x, bool) else "—"


def _pct(x: Any) -> str:
    return f"{100.0 * x:.1f}%" if isinstance(x, int | float) else "—"


def _figures(p: Any) -> dict[str, Any] | None:
    if p.summary is None:
        return None
    fig = p.summary.extra.get("sessions")
    return fig if isinstance(fig, dict) else None


def _point_name(p: Any) -> str:
    return str(p.point_id).split("/", 2)[-1]


def _label(p: Any) -> str:
    prm = p.params
    if isinstance(prm, SessionsParams):
        if prm.search is not None:
            return "max-rate search"
        if prm.closed_loop:
            return f"{prm.concurrency} at once"
        return f"{prm.rate:g}/s {prm.process}"
    return _point_name(p)


def prefix_caching(m: Any, key: str) -> str:
    info = (m.env.get("engines") or {}).get(key)
    value = info.get("prefix_caching") if isinstance(info, dict) else None
    if value in (None, "", "unknown"):  # fall back on the variant's name, as compare does
        var = key.partition(".")[2].lower()
        return "off" if var.startswith("cold") else "on" if var.startswith("warm") else "unknown"
    return str(value)


def section(m: Any, make_section: Callable[..., Any], make_table: Callable[..., Any]) -> Any:
    """The "Sessions" section of a run's report (empty when the run has no sessions point)."""
    sec = make_section("sessions", "Sessions (agent-like serving)")
    pts = [p for p in m.of_kind("sessions") if _figures(p) is not None]
    if not pts:
        sec.empty = True
        return sec
    sec.paragraphs.append(
        "Latencies count from each request's scheduled send time (the seeded plan), so a late client cannot "
        "hide queueing. A point whose backlog grew through it is unstable above capacity: no latency figure is "
        "claimed for it. Goodput counts the requests meeting every SLO target per second of the point's span; "
        "attainment is the share of requests within a target, with its Wilson 95 % interval."
    )
    rows = []
    for p in pts:
        f = _figures(p) or {}
        s = p.summary
        stable = {True: "yes", False: "**unstable above capacity**", None: "closed loop"}[f.get("stable")]
        att = "; ".join(
            f"{k} ≤ {_n(v['target'], 0)}: {_pct(v['attainment'])} [{_pct(v['ci_low'])}–{_pct(v['ci_high'])}]"
            + ("" if v["met"] else " ✗")
            for k, v in (f.get("slo") or {}).items()
        )
        unstable = f.get("stable") is False
        rows.append(
            [
                p.key,
                p.workload,
                _label(p),
                _n(f.get("offered_rate"), 2),
                _n(f.get("achieved_rate"), 2),
                _n((f.get("lateness_ms") or {}).get("p99"), 2) + (" †" if f.get("client_limited") else ""),
                stable,
                "—" if unstable else _n(s.ttft_ms.median),
                "—" if unstable else _n(s.ttft_ms.p90),
                "—" if unstable else _n(s.e2e_ms.p90),
                _n(f.get("goodput_rps"), 2),
                _n(f.get("goodput_sessions_ps"), 3),
                att or "—",
                f"{f.get('failed', 0)}/{f.get('requests', 0)}",
            ]
        )
    sec.tables.append(
        make_table(
            "Sessions per point",
            [
                "variant",
                "workload",
                "load",
                "offered sessions/s",
                "achieved sessions/s",
                "send lateness p99 ms",
                "stable",
                "TTFT p50 ms",
                "TTFT p90 ms",
                "e2e p90 ms",
                "goodput req/s",
                "goodput sessions/s",
                "SLO attainment [95 % CI]",
                "failed",
            ],
            rows,
            caption="achieved = first sends of the sessions per second; † client-limited (send lateness p99 over "
            "10 ms); " + METRIC["goodput_rps"].caption,
        )
    )
    turn_rows = []
    for p in pts:
        for r in (_figures(p) or {}).get("per_turn") or []:
            turn_rows.append(
                [
                    p.key,
                    f"{p.workload} {_label(p)}",
                    str(r["turn"]),
                    str(r["requests"]),
                    _n(r["ttft_ms"].get("median")),
                    _n(r["ttft_ms"].get("p90")),
                    _n(r["context_tokens"].get("median"), 0),
                    _pct(r.get("cache_hit")),
                    _pct(r.get("ideal_hit")),
                ]
            )
    sec.tables.append(
        make_table(
            "Per turn",
            [
                "variant",
                "point",
                "turn",
                "requests",
                "TTFT p50 ms",
                "TTFT p90 ms",
                "context tokens",
                "cache hit",
                "ideal hit",
            ],
            turn_rows,
            caption="cache hit = cached / prompt tokens as the engine counted them per request (llama.cpp "
            "timings cache_n, usage cached_tokens); ideal hit = the share of each prompt an earlier request "
            "of the point already sent (shared prefix, the session's history, a trace's repeated blocks)",
        )
    )
    for p in pts:
        search = (_figures(p) or {}).get("search")
        if not search:
            continue
        tried = ", ".join(
            f"{t['rate']:.3g}/s {'pass' if t['passed'] else 'fail'}"
            + ("" if t.get("stable") is not False else " (unstable)")
            for t in search["tried"]
        )
        knee = search.get("max_rate")
        sec.bullets.append(
            f"{p.key} {p.workload}: max sustainable rate "
            + (f"{knee:.3g} sessions/s" if knee is not None else "below the lowest rate tried")
            + f" (resolution {search['resolution_pct']:g} %); rates tried in order: {tried}"
        )
    sec.bullets.extend(warm_cold_sentences(m, pts))
    sec.bullets_title = "Knee and prefix caching:" if sec.bullets else ""
    sec.charts.extend(_charts(pts))
    return sec


def _turns2plus(p: Any) -> float | None:
    v = p.summary.extra.get("ttft_ms_turns2plus") if p.summary is not None else None
    return float(v) if isinstance(v, int | float) else None


def warm_cold_pairs(m: Any, pts: list[Any]) -> list[tuple[Any, Any]]:
    """(cold point, warm point) of the same engine, workload and load, prefix caching off vs on."""
    out = []
    for cold in pts:
        if prefix_caching(m, cold.key) != "off":
            continue
        for warm in pts:
            if (
                warm.engine == cold.engine
                and warm.workload == cold.workload
                and _point_name(warm) == _point_name(cold)
                and prefix_caching(m, warm.key) == "on"
            ):
                out.append((cold, warm))
    return out


def warm_cold_sentences(m: Any, pts: list[Any]) -> list[str]:
    out = []
    for cold, warm in warm_cold_pairs(m, pts):
        c, w = _turns2plus(cold), _turns2plus(warm)
        if c is None or w is None or w <= 0:
            continue
        out.append(
            f"warm vs cold prefix caching, {warm.workload} {_label(warm)}: median TTFT on turns ≥ 2 is "
            f"{w:.1f} ms warm ({warm.point_id}) vs {c:.1f} ms cold ({cold.point_id}): cold / warm = {c / w:.2f}×"
        )
    return out


def _charts(pts: list[Any]) -> list[str]:
    out = []
    open_loop = [p for p in pts if isinstance(p.params, SessionsParams) and p.params.rate is not None]
    by_key: dict[str, list[Any]] = {}
    for p in open_loop:
        by_key.setdefault(f"{p.key} {p.workload}", []).append(p)
    if by_key:
        lat, good = [], []
        for name, group in by_key.items():
            group.sort(key=lambda q: q.params.rate)
            s1, s2 = charts.Series(name), charts.Series(name)
            for p in group:
                f = _figures(p) or {}
                mark = "unstable above capacity" if f.get("stable") is False else ""
                y = None if mark else p.summary.ttft_ms.p90
                s1.points.append(charts.XY(f"{p.params.rate:g}", y, None, None, mark))
                s2.points.append(charts.XY(f"{p.params.rate:g}", f.get("goodput_rps"), None, None, mark))
            lat.append(s1)
            good.append(s2)
        out.append(
            charts.line_chart(
                lat,
                title="TTFT p90 vs offered rate",
                x_label="sessions/s offered",
                y_label="TTFT p90 ms (from scheduled send)",
            )
        )
        out.append(
            charts.line_chart(
                good, title="Goodput vs offered rate", x_label="sessions/s offered", y_label="goodput req/s"
            )
        )
    series = []
    for p in pts:
        s = charts.Series(f"{p.key} {p.workload} {_label(p)}")
        for r in (_figures(p) or {}).get("per_turn") or []:
            st = r["ttft_ms"]
            s.points.append(charts.XY(str(r["turn"]), st.get("median"), st.get("ci_low"), st.get("ci_high")))
        series.append(s)
    out.append(
        charts.line_chart(
            series, title="TTFT vs turn", x_label="turn (context grows)", y_label="TTFT median ms"
        )
    )
    return out


# ------------------------------------------------------------------------------------------------ compare


def _scheduled_ttft(run_dir: Path) -> dict[str, list[float]]:
    """Per point: TTFT from the scheduled send of every successful request on turn >= 2 (events.jsonl)."""
    path = Path(run_dir) / "events.jsonl"
    if not path.is_file():
        return {}
    due: dict[str, tuple[str, int]] = {}
    recs: dict[str, Any] = {}
    for ev in read_events(
        path, skip_types=("request_started", "request_first", "request_progress", "engine_log")
    ):
        if isinstance(ev, SessionTurn) and ev.turn >= 2:
            due[ev.request_id] = (ev.point_id, ev.t_scheduled_ns)
        elif isinstance(ev, RequestFinished) and not ev.warmup:
            recs[ev.record.request_id] = ev.record
    out: dict[str, list[float]] = {}
    for rid, (pid, t) in due.items():
        r = recs.get(rid)
        if r is not None and r.ok and r.t_first_token_ns:
            out.setdefault(pid, []).append((r.t_first_token_ns - t) / 1e6)
    return out


def _samples(pts: list[Any], metric: str, ttft: dict[str, list[float]]) -> V.Samples | None:
    """One side of a cell: the point in each engine session (``@s<k>``; one when the run has one)."""
    groups: list[list[list[float]]] = []
    excluded = ""
    for p in pts:
        f = _figures(p)
        if f is None:
            continue
        if p.status == "degraded" or f.get("client_limited"):
            excluded = "degraded" if p.status == "degraded" else "client-limited"
        if metric == "ttft_ms_turns2plus":
            if f.get("stable") is False:
                return None  # no latency claimed above capacity
            units = ttft.get(p.point_id) or []
            if units:
                groups.append([units])
            continue
        v = p.summary.extra.get(metric)
        if isinstance(v, int | float) and not math.isnan(v):
            groups.append([[float(v)]])
    if not groups:
        return None
    return V.Samples(groups, "requests" if metric == "ttft_ms_turns2plus" else "point", excluded)


def _by_point(m: Any, key: str) -> dict[tuple[str, str], list[Any]]:
    """The sessions points of one variant by (workload, point name), engine sessions together."""
    out: dict[tuple[str, str], list[Any]] = {}
    for p in m.of_kind("sessions"):
        if p.key == key:
            out.setdefault((p.workload, _point_name(p).split("@s", 1)[0]), []).append(p)
    return out


def add_cells(comp: Any, make_cell: Callable[..., Any]) -> None:
    """Sessions cells into ``comp.cells`` (each variant pair of the comparison, point by point) and
    ``comp.ratios`` (prefix caching off vs on within a run), with the same fields as the other cells."""
    ttft = [_scheduled_ttft(m.run_dir) for m in comp.models]
    t = comp.threshold_pct

    def cells(
        bm: Any,
        cm: Any,
        bname: str,
        cname: str,
        bkey: str,
        ckey: str,
        bi: int,
        ci: int,
        table: str,
        ratio: bool,
    ) -> list[Any]:
        out = []
        bpts, cpts = _by_point(bm, bkey), _by_point(cm, ckey)
        for key in sorted(set(bpts) & set(cpts)):
            bp, cp = bpts[key], cpts[key]
            for metric in CELL_METRICS:
                bs, cs = _samples(bp, metric, ttft[bi]), _samples(cp, metric, ttft[ci])
                if bs is None or cs is None:
                    continue
                mt = METRIC[metric]
                point = f"{key[0]} {key[1]}"
                vd = V.compare(
                    bs,
                    cs,
                    higher_is_better=mt.higher_is_better,
                    threshold_pct=t,
                    label=f"{table}|{metric}|{point}|{bname}|{cname}",
                    name=mt.label,
                )
                bv, cv = bs.value, cs.value
                r = (cv / bv) if ratio and bv and cv is not None else None
                out.append(make_cell(table, metric, point, key[0], bname, cname, bv, cv, vd, False, "", r))
        return out

    for bcol, ccol in comp.pairs:
        comp.cells += cells(
            comp.models[bcol.run],
            comp.models[ccol.run],
            bcol.name,
            ccol.name,
            bcol.key,
            ccol.key,
            bcol.run,
            ccol.run,
            TABLE_SESSIONS,
            False,
        )
    for i, m in enumerate(comp.models):
        keys = dict.fromkeys(p.key for p in m.of_kind("sessions"))
        for cold in (k for k in keys if prefix_caching(m, k) == "off"):
            for warm in (
                k for k in keys if prefix_caching(m, k) == "on" and k.split(".")[0] == cold.split(".")[0]
            ):
                comp.ratios += cells(m, m, cold, warm, cold, warm, i, i, TABLE_RATIO_CACHE_SESSIONS, True)

"""The headline findings of one run: what a study's "key takeaways" say, each sentence citing its cells.

``findings(model)`` is a pure function of a ``reports.model.RunModel`` (no records, no clock) returning
``Finding``s in the order a reader wants them:

- ``depth``: how TTFT, prefill and decode change from the smallest to the largest depth (a ratio);
- ``concurrency``: aggregate tg at the largest vs the smallest concurrency (the pooling multiplier) and the
  per-request decode rate beside it;
- ``cache``: warm vs cold (two workloads of one variant, or prefix caching off vs on in two variants of one
  engine): the TTFT ratio and the prefix-cache hit rates;
- ``speculation``: speculative vs plain variants of one engine (decode ratio, acceptance) and the acceptance
  by content of the spec-acceptance workload;
- ``scores``: each tool-call score's strongest and weakest categories, harness errors, safety;
- ``flagged``: every flagged point named by flag (degraded, client-limited, starved, stalled, ...).

A cell is cited as ``[engine.variant · workload · point]`` (``pp512 tg64 d2048 c1``, ``code d0``, or
``category tool_selection`` for a score). A variant that ran several engine sessions (``matrix.sessions``)
gets its findings per session, cited as ``engine.variant#k``: a ratio never mixes two engine sessions of one
variant, and two variants are paired session k with session k (across engines, compare's verdicts judge
the sessions together). Honesty rules, the same for every ratio:

- a ratio is candidate / reference of the two points' medians, stated with its range: the extremes of the
  ratio over the two points' intervals (the 95 % order-statistic interval of the median over the requests,
  min–max below 6 requests; for aggregate tg the range of the repetitions' values);
- a direction ("higher", "lower") is stated only when the two intervals do not overlap and the ratio's whole
  range lies beyond the practical threshold (``report.noise_threshold_pct``, as compare uses it); otherwise,
  or without an interval, the ratio is given as measured and the sentence says no difference is stated;
- degraded, client-limited, starved and stalled points never enter a ratio: the finding moves to the next
  shape whose points are clean, and names the points it left out and why.

Metric names, units and directions come from ``bench_tui.catalogue``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bench_tui.catalogue import METRIC
from bench_tui.events import ThroughputParams
from bench_tui.reports.model import PointRow, RunModel

DEPTH = "depth"
CONCURRENCY = "concurrency"
CACHE = "cache"
SPECULATION = "speculation"
SCORES = "scores"
FLAGGED = "flagged"
KINDS = (DEPTH, CONCURRENCY, CACHE, SPECULATION, SCORES, FLAGGED)

# flag codes that keep a point out of every ratio (its numbers do not describe the engine under that load)
EXCLUDING = ("degraded", "client-limited", "starved", "stalled")

# what each flag means, for the flagged-points findings (a flag not named here is listed by its code)
FLAG_MEANING = {
    "failed": "failed (no numbers)",
    "degraded": "degraded (some requests failed; numbers from the successful ones only)",
    "client-limited": "client-limited (the load generator, not the engine, may have set the pace)",
    "starved": "starved (decode far below this engine's first c1 figure: something else used its cores)",
    "stalled": "stalled (no token within idle_timeout; the point was ended early)",
    "host-stall": "paused by a host stall (every stream at once; the client kept up)",
    "server-decode-differs": "server decode differs from the client's median request by over 25 %",
    "server-disagrees": "the server's token counts disagree with the client's",
    "token-disagreement": "token-count disagreement between server and client",
    "engine-crashed": "engine crashed during the point",
    "context full": "context full (a configuration error, not a model failure)",
    "tg-not-exact": "output length not exactly tg",
    "pp-not-exact": "prompt length not exactly pp + depth",
    "cold-prefix-cached": "cold prompts still partly served from the prefix cache",
    "0 drafts; acceptance n/a": "speculation on but no draft proposed (acceptance n/a)",
    "no speculative decoding reported": "no speculative decoding reported",
    "skipped": "skipped (no numbers)",
}
# informational flags that say how a prompt was sized: not findings
QUIET_FLAGS = ("prompt-length-estimated", "prompt-length-approximate", "skipped by user")


def method_note(threshold_pct: float) -> str:
    """How the findings' ratios are made and when they state a direction (one paragraph)."""
    return (
        "Each finding cites its cells as [engine.variant · workload · point]. Ratios are candidate / reference "
        "of the two points' medians; the range is the ratio's extremes over the two points' intervals (the 95 % "
        "interval of the median over the requests, min–max below 6 requests; for aggregate tg the repetitions' "
        "range). 'higher' or 'lower' is said only when the two intervals do not overlap and the whole range lies "
        f"beyond the practical threshold (report.noise_threshold_pct, {threshold_pct:g} %). Degraded, "
        "client-limited, starved and stalled points are left out of every ratio and named."
    )


@dataclass
class Finding:
    text: str  # one sentence, its cites included as [cell]
    cites: list[str] = field(default_factory=list)  # the cells it rests on, as cell_id() spells them
    kind: str = ""  # one of KINDS


# ------------------------------------------------------------------------------------------------- cells


def shape(p: PointRow) -> str:
    """The point's shape within its workload: ``pp512 tg64 d2048 c1``, ``code d0``; "" for scenarios."""
    if p.kind == "throughput":
        return f"pp{p.pp} tg{p.tg} d{p.depth} c{p.concurrency}"
    if p.kind == "spec_acceptance":
        return f"{p.content} d{p.depth}" + (f" c{p.concurrency}" if p.concurrency > 1 else "")
    return ""


def cell_id(p: PointRow) -> str:
    """``engine.variant · workload · shape``: the cell of the report's tables a point fills (the variant's
    column, ``engine.variant#k``, when it ran several engine sessions)."""
    sh = shape(p)
    return f"{p.column} · {p.workload}" + (f" · {sh}" if sh else "")


def score_cell(rep: Any, category: str | None = None, *, mode: bool = False) -> str:
    """A tool-call score's cell: ``engine.variant · workload · category NAME`` (``overall`` without one)."""
    col = f"{rep.engine}.{rep.variant}" + (f" [{rep.mode}]" if mode and rep.mode else "")
    return f"{col} · {rep.workload or 'scenarios'} · " + (f"category {category}" if category else "overall")


def _cites(ids: Iterable[str]) -> str:
    return " ".join(f"[{i}]" for i in dict.fromkeys(ids))


def _code(flag: str) -> str:
    if flag.startswith("context full"):
        return "context full"
    return flag.split(":", 1)[0]


def exclusion(p: PointRow) -> str:
    """Why a point stays out of every ratio ("" when it may enter one)."""
    why = [c for c in EXCLUDING if any(_code(f) == c for f in p.flags)]
    if p.degraded and "degraded" not in why:
        why.insert(0, "degraded")
    if p.client_limited and "client-limited" not in why:
        why.append("client-limited")
    if p.summary is None:
        why.insert(0, p.status if p.status in ("failed", "skipped") else "not measured")
    return ", ".join(why)


# ------------------------------------------------------------------------------------------------ ratios


@dataclass(frozen=True)
class Spread:
    value: float
    lo: float | None = None
    hi: float | None = None


def spread(p: PointRow, key: str) -> Spread | None:
    """A point's value of one metric with its interval (see the module's rules)."""
    s = p.summary
    if s is None:
        return None
    if key == "agg_tg_tps":
        if s.agg_tg_tps is None:
            return None
        reps = [
            float(r["agg_tg_tps"])
            for r in (s.extra.get("reps") or [])
            if isinstance(r, dict) and r.get("ok") and isinstance(r.get("agg_tg_tps"), int | float)
        ]
        if len(reps) >= 2:
            return Spread(s.agg_tg_tps, min(reps), max(reps))
        return Spread(s.agg_tg_tps)
    st = getattr(s, key)
    if not st.n or st.median is None:
        return None
    return Spread(st.median, st.ci_low, st.ci_high)


def _num(x: float, unit: str) -> str:
    return f"{x:.0f}" if unit == "ms" and abs(x) >= 100 else f"{x:.1f}"


def ratio_phrase(key: str, ref: PointRow, cand: PointRow, threshold_pct: float) -> str | None:
    """``TTFT 90 → 315 ms ×3.50 (range ×3.21–3.81, higher)``; None when a side has no value."""
    m = METRIC[key]
    a, b = spread(ref, key), spread(cand, key)
    if a is None or b is None or not a.value:
        return None
    r = b.value / a.value
    head = f"{m.label} {_num(a.value, m.unit)} → {_num(b.value, m.unit)} {m.unit} ×{r:.2f}"
    if a.lo is None or a.hi is None or b.lo is None or b.hi is None or a.lo <= 0:
        return head + " (no interval on a side: no difference stated)"
    lo, hi = b.lo / a.hi, b.hi / a.lo
    t = threshold_pct / 100.0
    if b.lo <= a.hi and b.hi >= a.lo:
        word = "intervals overlap: no difference stated"
    elif lo < 1.0 + t and hi > 1.0 - t:
        word = f"within ±{threshold_pct:g} %: no difference stated"
    else:
        word = "higher" if b.lo > a.hi else "lower"
    return f"{head} (range ×{lo:.2f}–{hi:.2f}, {word})"


def _left_out(bad: list[tuple[PointRow, str]]) -> str:
    if not bad:
        return ""
    named = {cell_id(p): why for p, why in bad}
    return "; left out: " + ", ".join(f"[{c}] {why}" for c, why in named.items())


def _pick(
    pairs: Iterable[tuple[PointRow | None, PointRow | None]],
) -> tuple[tuple[PointRow, PointRow] | None, list[tuple[PointRow, str]]]:
    """The first pair whose two points are clean, and the flagged points passed over before it."""
    bad: list[tuple[PointRow, str]] = []
    for a, b in pairs:
        if a is None or b is None:
            continue
        why = [(p, w) for p in (a, b) if (w := exclusion(p))]
        if why:
            bad.extend(why)
            continue
        return (a, b), bad
    return None, bad


def _phrases(keys: Iterable[str], ref: PointRow, cand: PointRow, threshold_pct: float) -> list[str]:
    return [ph for k in keys if (ph := ratio_phrase(k, ref, cand, threshold_pct)) is not None]


# -------------------------------------------------------------------------------------------- the groups


def _throughput(m: RunModel) -> list[PointRow]:
    return [p for p in m.points if p.kind == "throughput"]


def _by(pts: Iterable[PointRow], key: Callable[[PointRow], Any]) -> dict[Any, list[PointRow]]:
    out: dict[Any, list[PointRow]] = {}
    for p in pts:
        out.setdefault(key(p), []).append(p)
    return out


def _at(pts: list[PointRow], depth: int, conc: int) -> PointRow | None:
    return next((p for p in pts if p.depth == depth and p.concurrency == conc), None)


def _label(key: str, wl: str, pp: Any, tg: Any) -> str:
    return f"{key} `{wl}` pp{pp} tg{tg}"


def _ratio_finding(
    kind: str,
    head: str,
    pairs: Iterable[tuple[PointRow | None, PointRow | None]],
    at: Callable[[PointRow], str],
    parts_of: Callable[[PointRow, PointRow], list[str]],
) -> Finding | None:
    """One ratio finding over the first clean pair (reference, candidate) of ``pairs``, in their order of
    preference: ``head`` + where (``at``) + the phrases, its two cells cited, the flagged points passed over
    named; when no pair is clean, a finding that says no ratio is stated and names why."""
    pick, bad = _pick(pairs)
    left = [cell_id(p) for p, _ in bad]
    if pick is None:
        if not bad:
            return None
        return Finding(
            f"{head}: no ratio is stated, every matched pair holds a flagged point{_left_out(bad)}.",
            left,
            kind,
        )
    a, b = pick
    parts = parts_of(a, b)
    if not parts:
        return None
    cites = [cell_id(a), cell_id(b)]
    return Finding(
        f"{head}{at(a)}: " + "; ".join(parts) + f" {_cites(cites)}{_left_out(bad)}.", [*cites, *left], kind
    )


def depth_scaling(m: RunModel) -> list[Finding]:
    """TTFT, prefill and decode from the smallest to the largest depth, at the lowest clean concurrency."""
    out: list[Finding] = []
    for (key, wl, pp, tg), pts in _by(_throughput(m), lambda p: (p.column, p.workload, p.pp, p.tg)).items():
        depths = sorted({p.depth for p in pts})
        if len(depths) < 2:
            continue
        lo, hi = depths[0], depths[-1]
        f = _ratio_finding(
            DEPTH,
            f"{_label(key, wl, pp, tg)}, depth {lo} → {hi}",
            ((_at(pts, lo, c), _at(pts, hi, c)) for c in sorted({p.concurrency for p in pts})),
            lambda a: f" at c{a.concurrency}",
            lambda a, b: _phrases(("ttft_ms", "prefill_tps", "decode_tps"), a, b, m.threshold_pct),
        )
        out += [f] if f else []
    return out


def concurrency_scaling(m: RunModel) -> list[Finding]:
    """Aggregate tg (the pooling multiplier) and per-request decode from the lowest to the highest
    concurrency, at the smallest clean depth."""
    out: list[Finding] = []
    for (key, wl, pp, tg), pts in _by(_throughput(m), lambda p: (p.column, p.workload, p.pp, p.tg)).items():
        concs = sorted({p.concurrency for p in pts})
        if len(concs) < 2:
            continue
        c1, cn = concs[0], concs[-1]

        def parts(a: PointRow, b: PointRow, cn: int = cn) -> list[str]:
            agg = ratio_phrase("agg_tg_tps", a, b, m.threshold_pct)
            dec = ratio_phrase("decode_tps", a, b, m.threshold_pct)
            return [
                *([f"{agg}: the pooling multiplier of {cn} concurrent requests"] if agg else []),
                *([f"per request, {dec}"] if dec else []),
            ]

        f = _ratio_finding(
            CONCURRENCY,
            f"{_label(key, wl, pp, tg)}, concurrency {c1} → {cn}",
            ((_at(pts, d, c1), _at(pts, d, cn)) for d in sorted({p.depth for p in pts})),
            lambda a: f" at d{a.depth}",
            parts,
        )
        out += [f] if f else []
    return out


def _hit(p: PointRow) -> str:
    rate = p.summary.server.prefix_cache_hit_rate if p.summary is not None else None
    return "n/a" if rate is None else f"{100 * rate:.1f} %"


def _cache_finding(m: RunModel, head: str, pairs: list[tuple[PointRow, PointRow]]) -> Finding | None:
    """Cold → warm over matched points: the largest depth (where the shared prefix is), then the lowest
    concurrency; the TTFT ratio and both hit rates."""
    hit = METRIC["cache_hit_rate"].label

    def parts(cold: PointRow, warm: PointRow) -> list[str]:
        ttft = ratio_phrase("ttft_ms", cold, warm, m.threshold_pct)
        return [ttft, f"{hit} {_hit(cold)} → {_hit(warm)}"] if ttft else []

    pairs = sorted(pairs, key=lambda ab: (-ab[0].depth, ab[0].concurrency))
    return _ratio_finding(
        CACHE,
        head,
        pairs,
        lambda a: f" at d{a.depth} c{a.concurrency}",
        parts,
    )


def _caching(m: RunModel, key: str) -> str:
    """on | off | unknown: env.json's account of the variant's flags, else its name (cold… / warm…)."""
    state = m.prefix_caching(key)
    if state in ("on", "off"):
        return state
    name = key.partition(".")[2].lower()
    return "off" if name.startswith("cold") else "on" if name.startswith("warm") else "unknown"


def _layout(p: PointRow) -> str:
    return p.params.cache if isinstance(p.params, ThroughputParams) else ""


def _matched(pts: list[PointRow], ref: str, cand: str) -> dict[str, list[tuple[PointRow, PointRow]]]:
    """Per workload, the (ref, cand) pairs of points of the same shape and engine session number."""
    out: dict[str, list[tuple[PointRow, PointRow]]] = {}
    for sh, same in _by(pts, lambda p: (p.workload, p.pp, p.tg, p.depth, p.concurrency, p.session)).items():
        a = next((p for p in same if p.key == ref), None)
        b = next((p for p in same if p.key == cand), None)
        if a is not None and b is not None:
            out.setdefault(sh[0], []).append((a, b))
    return out


def cache_multipliers(m: RunModel) -> list[Finding]:
    out: list[Finding | None] = []
    tp = _throughput(m)
    # two workloads of one variant whose prompt layout differs (cold: unique prefix; warm: shared)
    for key, pts in _by(tp, lambda p: p.column).items():
        found: dict[tuple[str, str], list[tuple[PointRow, PointRow]]] = {}
        for same in _by(pts, lambda p: (p.pp, p.tg, p.depth, p.concurrency)).values():
            for c in (p for p in same if _layout(p) == "cold"):
                for w in (p for p in same if _layout(p) == "warm"):
                    found.setdefault((c.workload, w.workload), []).append((c, w))
        for (cw, ww), pairs in found.items():
            out.append(_cache_finding(m, f"{key} prompt layout, cold `{cw}` → warm `{ww}`", pairs))
    # two variants of one engine: prefix caching off vs on, same workload and shape
    for eng, pts in _by(tp, lambda p: p.engine).items():
        plain = [k for k in dict.fromkeys(p.key for p in pts) if not m.speculative(k)]
        for off in (k for k in plain if _caching(m, k) == "off"):
            for on in (k for k in plain if _caching(m, k) == "on"):
                for wl, pairs in _matched(pts, off, on).items():
                    out.append(
                        _cache_finding(m, f"{eng} prefix caching off → on ({off} → {on}), `{wl}`", pairs)
                    )
    return [f for f in out if f]


def speculation_multipliers(m: RunModel) -> list[Finding]:
    """Speculative vs plain variants of one engine (the plain one of the same prefix caching first): decode
    and effective tg at the lowest clean concurrency and depth, with the acceptance; then the acceptance
    workload by content."""
    out: list[Finding | None] = []
    acc_label = METRIC["spec_acceptance"].label

    def parts(a: PointRow, b: PointRow) -> list[str]:
        ph = _phrases(("decode_tps", "eff_tg_tps"), a, b, m.threshold_pct)
        sv = b.summary.server if b.summary is not None else None
        if ph and sv is not None and sv.spec_acceptance_rate is not None:
            ph.append(f"{acc_label} {100 * sv.spec_acceptance_rate:.1f} %")
        elif ph and sv is not None and sv.spec_drafts == 0:
            ph.append(f"0 drafts ({acc_label} n/a)")
        return ph

    for pts in _by(_throughput(m), lambda p: p.engine).values():
        keys = list(dict.fromkeys(p.key for p in pts))
        plain = [k for k in keys if not m.speculative(k)]
        for sp in (k for k in keys if m.speculative(k)):
            ref = next((k for k in plain if _caching(m, k) == _caching(m, sp)), plain[0] if plain else None)
            if ref is None:
                continue
            for wl, pairs in _matched(pts, ref, sp).items():
                pairs.sort(key=lambda ab: (ab[0].concurrency, ab[0].depth))
                out.append(
                    _ratio_finding(
                        SPECULATION,
                        f"speculation {ref} → {sp}, `{wl}`",
                        pairs,
                        lambda a: f" at {shape(a)}",
                        parts,
                    )
                )
    return [*(f for f in out if f), *acceptance_by_content(m)]


def acceptance_by_content(m: RunModel) -> list[Finding]:
    """The spec-acceptance workload per variant: acceptance by content, highest first."""
    label = METRIC["spec_acceptance"].label
    out: list[Finding] = []
    acc = [p for p in m.points if p.kind == "spec_acceptance" and p.summary is not None]
    for (key, wl), pts in _by(acc, lambda p: (p.column, p.workload)).items():
        rated: list[tuple[float, str]] = []
        unrated: list[str] = []
        for p in pts:
            sv = p.summary.server if p.summary is not None else None
            if sv is not None and sv.spec_acceptance_rate is not None:
                length = (
                    f" (mean length {sv.spec_acceptance_length:.2f})" if sv.spec_acceptance_length else ""
                )
                rate = sv.spec_acceptance_rate
                rated.append((rate, f"{shape(p)} {100 * rate:.1f} %{length}"))
            else:
                unrated.append(f"{shape(p)} n/a ({exclusion(p) or ', '.join(p.flags) or 'no drafts'})")
        texts = [t for _, t in sorted(rated, key=lambda rt: -rt[0])] + unrated
        cites = [cell_id(p) for p in pts]
        out.append(
            Finding(
                f"{key} `{wl}` {label} by content: " + ", ".join(texts) + f" {_cites(cites)}.",
                cites,
                SPECULATION,
            )
        )
    return out


def _score(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f} %"


NAMED = 5  # categories named at most at each end (ties included); the rest are counted


def score_findings(m: RunModel) -> list[Finding]:
    out: list[Finding] = []
    modes = len({r.mode for r in m.scores}) > 1
    for rep in m.scores:
        adj = rep.adjusted
        col = f"{rep.engine}.{rep.variant}" + (f" [{rep.mode}]" if modes and rep.mode else "")
        head = f"{col} `{rep.workload or 'scenarios'}` tool-call score {_score(adj.score)}"
        if rep.raw.score != adj.score:
            head += f" (raw {_score(rep.raw.score)})"
        head += f" over {rep.scored} scored of {rep.scenarios_total} scenario-trials"
        cats = sorted(
            ((n, b) for n, b in adj.categories.items() if b.score is not None),
            key=lambda nb: (-(nb[1].score or 0.0), nb[0]),
        )
        cites = [score_cell(rep, mode=modes)]
        parts: list[str] = []
        if len(cats) >= 2:
            top, bottom = cats[0][1].score, cats[-1][1].score
            if top == bottom:
                parts.append(f"every category scored {_score(top)}")
            else:
                best = [(n, b) for n, b in cats if b.score == top]
                worst = [(n, b) for n, b in cats if b.score == bottom]

                def named(group: list[tuple[str, Any]]) -> str:
                    ns = {b.n for _, b in group}
                    each = f" (n={ns.pop()}{' each' if len(group) > 1 else ''})" if len(ns) == 1 else ""
                    shown = ", ".join(n + ("" if each else f" (n={b.n})") for n, b in group[:NAMED])
                    return shown + (f" and {len(group) - NAMED} more" if len(group) > NAMED else "") + each

                parts.append(f"strongest {named(best)} at {_score(top)}")
                parts.append(f"weakest {named(worst)} at {_score(bottom)}")
                cites += [score_cell(rep, n, mode=modes) for n, _ in (*best[:NAMED], *worst[:NAMED])]
        elif cats:
            parts.append(f"one category, {cats[0][0]}")
            cites.append(score_cell(rep, cats[0][0], mode=modes))
        unscored = [
            f"{k} {v}"
            for k, v in (
                ("harness errors", rep.harness_errors),
                ("grader errors", rep.grader_errors),
                ("server failures", rep.server_failures),
            )
            if v
        ]
        parts.append(
            "; ".join(unscored) + " (counted apart from the model's score)"
            if unscored
            else "no harness errors"
        )
        if not adj.safety.all_passed:
            parts.append("safety-critical not all passed: " + "; ".join(adj.safety.failed))
        out.append(Finding(f"{head}: " + "; ".join(parts) + f" {_cites(cites)}.", cites, SCORES))
    return out


def flagged_points(m: RunModel) -> list[Finding]:
    by: dict[str, list[tuple[PointRow, str]]] = {}
    for p in m.points:
        flags = [f for f in p.flags if f not in QUIET_FLAGS]
        if p.status in ("failed", "skipped"):
            by.setdefault(p.status, []).append((p, ", ".join(f for f in flags if _code(f) != p.status)))
            continue
        codes = {_code(f) for f in flags}
        if p.degraded and "degraded" not in codes:
            by.setdefault("degraded", []).append((p, ""))
        if p.client_limited and "client-limited" not in codes:
            by.setdefault("client-limited", []).append((p, ""))
        for f in flags:
            code = _code(f)
            detail = f.split(":", 1)[1].split(" (", 1)[0] if ":" in f and code != "context full" else ""
            by.setdefault(code, []).append((p, detail))
    out: list[Finding] = []
    order = list(FLAG_MEANING)
    for code in sorted(by, key=lambda c: (order.index(c) if c in order else len(order), c)):
        items = list({(p.point_id, d): (p, d) for p, d in by[code]}.values())
        cells = [cell_id(p) for p, _ in items]
        named = "; ".join(f"[{cell_id(p)}]" + (f" ({d.strip()})" if d.strip() else "") for p, d in items)
        tail = " Left out of every ratio above." if code in EXCLUDING else ""
        out.append(
            Finding(
                f"{len(items)} point(s) {FLAG_MEANING.get(code, f'flagged {code}')}: {named}.{tail}",
                cells,
                FLAGGED,
            )
        )
    return out


def findings(m: RunModel) -> list[Finding]:
    """The run's headline findings, in the order of ``KINDS``."""
    return [
        *depth_scaling(m),
        *concurrency_scaling(m),
        *cache_multipliers(m),
        *speculation_multipliers(m),
        *score_findings(m),
        *flagged_points(m),
    ]

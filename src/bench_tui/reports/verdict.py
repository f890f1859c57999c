"""Verdict statistics: the one place that decides whether two measurements differ.

Used by ``report`` (delta tables and summary), ``compare`` (every cell and ratio), and the TUI's results Δ
column. It imports no Textual and no rendering code, so the TUI and the reports share it.

The unit of evidence is the **engine session** (one start of an engine variant). A real engine's dominant
noise is per session (slot placement, batching order, allocator and cache state, host load; on a GPU clocks
and temperature), so repetitions inside one session are not independent evidence about the engine. The model
(on the log scale for relative metrics, in points for rates such as a cache-hit rate):

    session value  y_j = mu + u_j + e_j,   u_j ~ N(0, sigma_b^2) between sessions,
                                           e_j: within-session error, variance w_j^2

- ``y_j`` pools everything one session measured (every request of every repetition; a request's value
  already averages its token intervals), so a session's estimate gets sharper with more repetitions and
  requests: power never falls as work grows.
- ``w_j^2`` is the variance of ``log median`` under a nested bootstrap of that session (repetitions, then
  requests inside them), seeded from the cell's label: the same data gives the same verdict.
- ``sigma_b`` comes from the data when a side has >= 2 sessions (pooled variance of the session values minus
  their mean within part, with nA + nB - 2 degrees of freedom), pooled with the host's calibrated floor when
  one is stored (``bench-tui calibrate``: session-to-session A/A variability per point shape and metric), else
  from the floor alone, else (one session per side, no floor) from ``DEFAULT_SESSION_SIGMA``, an assumed
  value every such verdict states.
- The difference of the two sides' mean session values gets a Student-t interval with Satterthwaite degrees
  of freedom (scipy): its stated 95 % is what the method reaches under the model; a bootstrap over 3 units
  reaches about 89 % and is not used between sessions.

Words mean one thing each:

- **better / worse** (a claim): the whole 95 % interval lies beyond ±``report.noise_threshold_pct`` (5 %),
  and the claim survives the multiple-comparison correction over the comparison's cells (``adjust``);
- **within noise**: the whole interval lies inside ±threshold (an equivalence test); with one session per
  side that needs a calibrated floor narrower than the threshold;
- **inconclusive**: the interval is too wide to say either; the text names why (the interval, the sessions,
  the session noise it assumed and where that came from, or the correction that removed a claim);
- **not claimed**: degraded, client-limited, or the two sides ran under materially different machine
  conditions; **missing**: a side has no data.

Direction convention: rates (t/s, hit rate, acceptance) higher is better; latencies (ms) lower is better. The
text names the direction of the number ("TTFT 12.0 % lower"), never "faster by" a latency.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench_tui.catalogue import COMPARED, Metric

DEFAULT_THRESHOLD_PCT = 5.0
CONFIDENCE = 0.95
WITHIN_RESAMPLES = 400  # nested bootstrap resamples per session (within-session variance only)
# One session per side and no calibrated floor: the session-to-session standard deviation assumed (log scale,
# so 0.10 is about 10 % of the value; for rates, in points of 0..1). Measured on this project's CPU engine:
# see docs/DEFINITIONS.md "Session noise" for the figures it rests on.
DEFAULT_SESSION_SIGMA = 0.10
DEFAULT_RATE_SIGMA = 0.05
FALSE_CLAIM_RATE = 0.05  # q of the Benjamini-Hochberg correction over one comparison's cells

# verdict kinds
BETTER, WORSE, NOISE, INCONCLUSIVE, EXCLUDED, MISSING = (
    "better",
    "worse",
    "within noise",
    "inconclusive",
    "not claimed",
    "missing",
)
CLAIMS = (BETTER, WORSE)


@dataclass(frozen=True)
class Floor:
    """This host's session-to-session noise for one point shape and metric (``bench-tui calibrate``)."""

    sigma: float  # standard deviation between sessions (log scale; points of 0..1 for rates)
    within: float  # the calibration sessions' mean within-session variance (for a session of one value)
    df: int  # degrees of freedom of that estimate (sessions - 1, summed over what was pooled)
    sessions: int
    date: str = ""  # ISO date of the calibration
    host: str = ""

    def halfwidth_pct(self, rate: bool) -> float:
        """The 95 % spread of the difference between two single sessions, in % (points for rates)."""
        return session_spread_pct(self.sigma, rate)


def session_spread_pct(sigma: float, rate: bool) -> float:
    hw = 1.959964 * math.sqrt(2.0) * sigma
    return 100.0 * hw if rate else 100.0 * math.expm1(hw)


@dataclass
class Samples:
    """One side of a comparison at one point shape: values per engine session, per repetition.

    ``sessions[j][r]`` holds the values of repetition ``r`` of session ``j``; ``unit`` says what a value is:
    a request ("requests"), a repetition's aggregate ("repetitions"), or the point's one figure ("point").
    """

    sessions: list[list[list[float]]]
    unit: str = "requests"
    excluded: str = ""  # "degraded" / "client-limited" / "conditions differ: …": never claimed

    @classmethod
    def of(cls, values: Iterable[float], unit: str = "requests") -> Samples:
        """One session, one group."""
        vals = [float(x) for x in values]
        return cls([[vals]] if vals else [], unit)

    @property
    def units(self) -> list[float]:
        return [x for s in self.sessions for g in s for x in g]

    @property
    def n(self) -> int:
        return len(self.sessions)

    @property
    def value(self) -> float | None:
        vals = self.units
        return median(vals) if vals else None


def merge(sides: Iterable[Samples]) -> Samples | None:
    """The sessions of several points of one shape (one point per engine session) as one side."""
    items = [s for s in sides if s.sessions]
    if not items:
        return None
    why = "; ".join(dict.fromkeys(s.excluded for s in items if s.excluded))
    return Samples([sess for s in items for sess in s.sessions], items[0].unit, why)


@dataclass
class Verdict:
    kind: str  # better | worse | within noise | inconclusive | not claimed | missing
    delta_pct: float | None = None  # relative change of the medians, candidate vs baseline, in %
    delta_pts: float | None = None  # for rates: the change in percentage points
    ci: tuple[float, float] | None = None  # 95 % interval of the delta (% or pts, as the delta)
    n: tuple[int, int] = (0, 0)  # engine sessions per side
    unit: str = ""
    text: str = "—"
    test: str = ""
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    higher_is_better: bool = True
    p: float | None = None  # two-sided p-value of "the difference lies beyond ±threshold" (None: no test)
    floor: str = ""  # where the between-session noise came from: "data", "calibrated", "default"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def claim(self) -> bool:
        return self.kind in CLAIMS

    @property
    def better(self) -> bool | None:
        return True if self.kind == BETTER else False if self.kind == WORSE else None


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    mid = n // 2
    return float(s[mid]) if n % 2 else (s[mid - 1] + s[mid]) / 2.0


def seed_of(label: str) -> int:
    return zlib.crc32(label.encode("utf-8"))


def direction_words(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


# ------------------------------------------------------------------------------------------ one session


def _scale(x: float, log: bool) -> float:
    return math.log(x) if log else x


def session_estimate(groups: list[list[float]], *, log: bool, rng: random.Random) -> tuple[float, float]:
    """(estimate, within-session variance) of one session, on the log scale when ``log``.

    The estimate is the median of every value the session measured. Its variance comes from a nested
    bootstrap: the repetitions are resampled (when there are >= 2), then the values inside each drawn one.
    One value in all: variance 0 (a point-level figure has no within-session spread to see)."""
    gs = [g for g in groups if g]
    flat = [x for g in gs for x in g]
    est = _scale(median(flat), log)
    if len(flat) < 2:
        return est, 0.0
    draws: list[float] = []
    for _ in range(WITHIN_RESAMPLES):
        picked = rng.choices(gs, k=len(gs)) if len(gs) >= 2 else gs
        vals: list[float] = []
        for g in picked:
            vals.extend(rng.choices(g, k=len(g)))
        m = median(vals)
        if log and m <= 0:
            continue
        draws.append(_scale(m, log))
    if len(draws) < 2:
        return est, 0.0
    mu = math.fsum(draws) / len(draws)
    return est, math.fsum((d - mu) ** 2 for d in draws) / (len(draws) - 1)


def _session(
    groups: list[list[float]], log: bool, rng: random.Random, floor: Floor | None
) -> tuple[float, float]:
    est, w = session_estimate(groups, log=log, rng=rng)
    if floor is not None:
        # never below what a calibration session showed within itself: a session of one value shows no
        # spread at all, and a calibration whose sessions varied less than their own insides (sigma clipped
        # to 0) still carries its total variance this way
        w = max(w, floor.within)
    return est, w


# ------------------------------------------------------------------------------------------ the verdict


@dataclass
class _Interval:
    delta: float  # on the analysis scale
    se: float  # total standard error
    se_within: float  # within-session part only
    df: float
    source: str  # "data" | "calibrated" | "default" | "data+calibrated"
    sigma_b: float


def _interval(
    a: list[tuple[float, float]], b: list[tuple[float, float]], floor: Floor | None, rate: bool
) -> _Interval:
    na, nb = len(a), len(b)
    ya, yb = [y for y, _ in a], [y for y, _ in b]
    delta = math.fsum(yb) / nb - math.fsum(ya) / na
    vw = math.fsum(w for _, w in a) / na**2 + math.fsum(w for _, w in b) / nb**2
    df_o = na + nb - 2
    sigma2: float
    df_b: float
    if df_o > 0:
        ss = math.fsum((y - math.fsum(ya) / na) ** 2 for y in ya) + math.fsum(
            (y - math.fsum(yb) / nb) ** 2 for y in yb
        )
        mean_w = math.fsum(w for _, w in a + b) / (na + nb)
        s2 = ss / df_o  # the session values' own variance: between plus within, as they vary
        if floor is None or floor.df <= 0:
            # the classical two-sample t on the session values (df from the sessions alone)
            var = max(s2, mean_w) * (1.0 / na + 1.0 / nb)
            return _Interval(
                delta, math.sqrt(var), math.sqrt(vw), float(df_o), "data", math.sqrt(max(0.0, s2 - mean_w))
            )
        sigma2 = (floor.df * floor.sigma**2 + df_o * max(0.0, s2 - mean_w)) / (floor.df + df_o)
        df_b, source = float(floor.df + df_o), "data+calibrated"
    elif floor is not None:
        sigma2, df_b, source = floor.sigma**2, float(max(floor.df, 1)), "calibrated"
    else:
        sig = DEFAULT_RATE_SIGMA if rate else DEFAULT_SESSION_SIGMA
        sigma2, df_b, source = sig**2, math.inf, "default"
    vb = sigma2 * (1.0 / na + 1.0 / nb)
    var = vb + vw
    if var <= 0:
        return _Interval(delta, 0.0, 0.0, math.inf, source, math.sqrt(sigma2))
    # Satterthwaite: the within part is known well (hundreds of resamples); the between part has df_b
    df = math.inf if vb <= 0 or math.isinf(df_b) else min(1e6, df_b * (var / vb) ** 2)
    return _Interval(delta, math.sqrt(var), math.sqrt(vw), df, source, math.sqrt(sigma2))


def _stats() -> Any:
    """scipy.stats, imported on first use: it takes about 1.6 s to import, which every CLI command that
    renders a report would otherwise pay at start-up (a lazy import for start-up, never for a cycle)."""
    from scipy import stats

    return stats


def _tq(df: float) -> float:
    st, q = _stats(), 1.0 - (1.0 - CONFIDENCE) / 2.0
    return float(st.norm.ppf(q)) if math.isinf(df) else float(st.t.ppf(q, df))


def _sf(x: float, df: float) -> float:
    st = _stats()
    return float(st.norm.sf(x)) if math.isinf(df) else float(st.t.sf(x, df))


def _to_pct(x: float, log: bool) -> float:
    """A value on the analysis scale as the % (or points) the reports print."""
    return 100.0 * math.expm1(x) if log else 100.0 * x


def compare(
    base: Samples | None,
    cand: Samples | None,
    *,
    higher_is_better: bool = True,
    rate: bool = False,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    label: str = "",
    name: str = "",
    floor: Floor | None = None,
) -> Verdict:
    """The verdict for ``cand`` against ``base`` (before the multiple-comparison correction: ``adjust``).

    ``rate``: the values are fractions (0..1); the delta and threshold are in percentage points.
    ``label`` seeds the within-session bootstrap (use the cell's identity: same cell, same verdict). ``name``
    prefixes the text ("TTFT 12.0 % lower"). ``floor``: this host's calibrated session noise for the cell.
    """
    t = threshold_pct
    v = Verdict(MISSING, threshold_pct=t, higher_is_better=higher_is_better)
    if base is None or cand is None or not base.units or not cand.units:
        return v
    ma, mb = median(base.units), median(cand.units)
    v.n = (base.n, cand.n)
    v.unit = base.unit if base.unit == cand.unit else f"{base.unit}/{cand.unit}"
    if rate:
        v.delta_pts = 100.0 * (mb - ma)
    if ma != 0:
        v.delta_pct = 100.0 * (mb - ma) / abs(ma)
    delta = v.delta_pts if rate else v.delta_pct
    sym = " pts" if rate else " %"
    prefix = f"{name} " if name else ""
    if delta is None:
        v.kind, v.text = MISSING, f"{prefix}— (baseline is 0)"
        return v
    change = _change(prefix, delta, sym)
    why = "; ".join(dict.fromkeys(x for x in (base.excluded, cand.excluded) if x))
    sess = f"{v.n[0]} vs {v.n[1]} session{'s' if max(v.n) > 1 else ''}"
    if why:
        v.kind, v.text = EXCLUDED, f"{change} (not claimed: {why})"
        v.test = f"none: {why}"
        return v
    log = not rate and all(x > 0 for x in base.units + cand.units)
    rng = random.Random(seed_of(label or name))
    a = [_session(s, log, rng, floor) for s in base.sessions]
    b = [_session(s, log, rng, floor) for s in cand.sessions]
    iv = _interval(a, b, floor, rate)
    if log:
        delta = v.delta_pct = _to_pct(iv.delta, True)  # the ratio of the sessions' (geometric) mean medians
        change = _change(prefix, delta, sym)
    tq = _tq(iv.df)
    lo, hi = iv.delta - tq * iv.se, iv.delta + tq * iv.se
    ci = (_to_pct(lo, log), _to_pct(hi, log))
    v.ci, v.floor = ci, iv.source
    # the threshold on the analysis scale (asymmetric on the log scale: +5 % and −5 %)
    up = math.log1p(t / 100.0) if log else t / 100.0
    down = math.log1p(-min(t, 99.0) / 100.0) if log else -t / 100.0
    if iv.se > 0:
        z = (iv.delta - up) / iv.se if iv.delta >= 0 else (down - iv.delta) / iv.se
        v.p = min(1.0, 2.0 * _sf(z, iv.df))
    else:
        v.p = 0.0 if (iv.delta > up or iv.delta < down) else 1.0
    noise_src = _noise_words(iv, floor, rate)
    scale_words = (
        "log of the session medians" if log else "session medians in points" if rate else "session medians"
    )
    v.test = (
        f"{sess} ({v.unit} pooled per session, nested bootstrap for the within-session part); Student-t 95 % "
        f"interval of the difference of the mean {scale_words}, between-session noise from {noise_src}; claim "
        f"only when the interval lies beyond ±{t:g}{sym} and survives the correction over the comparison's "
        f"cells; {direction_words(higher_is_better)}"
    )
    ci_txt = f"95 % CI {ci[0]:+.1f}…{ci[1]:+.1f}{sym}"
    if lo > up or hi < down:
        good = (delta > 0) == higher_is_better
        v.kind = BETTER if good else WORSE
        v.text = f"{change} ({'better' if good else 'worse'}; {ci_txt}; {sess})"
        return v
    if lo > down and hi < up:
        v.kind = NOISE
        v.text = f"within noise ({delta:+.1f}{sym}; {ci_txt} inside ±{t:g}{sym}; {sess})"
        return v
    v.kind = INCONCLUSIVE
    v.text = f"inconclusive: {change} ({ci_txt} too wide to decide against ±{t:g}{sym}; {sess}, {noise_src})"
    return v


def _change(prefix: str, delta: float, sym: str) -> str:
    """ "TTFT 12.0 % lower": the direction of the number, never "faster by"."""
    return (
        f"{prefix}{abs(delta):.1f}{sym} {'higher' if delta > 0 else 'lower'}"
        if delta
        else f"{prefix}unchanged"
    )


def _noise_words(iv: _Interval, floor: Floor | None, rate: bool) -> str:
    sym = " pts" if rate else " %"
    if iv.source == "default":
        return (
            f"an assumed session noise of ±{session_spread_pct(iv.sigma_b, rate):.0f}{sym} (default: this host "
            f"is not calibrated; `bench-tui calibrate SPEC` measures it)"
        )
    if floor is not None and iv.source in ("calibrated", "data+calibrated"):
        when = f", calibrated {floor.date}" if floor.date else ""
        kind = (
            "this host's calibrated" if iv.source == "calibrated" else "the sessions pooled with this host's"
        )
        return f"{kind} session noise ±{floor.halfwidth_pct(rate):.0f}{sym}{when}, {floor.sessions} sessions"
    return "the sessions themselves"


def adjust(verdicts: Sequence[Verdict], q: float = FALSE_CLAIM_RATE) -> int:
    """Benjamini-Hochberg over one comparison's cells: a claim stands only when its p-value is at most
    q * rank / m among the m cells that were tested. A claim removed becomes "inconclusive" and says so.
    Returns how many claims were removed.

    Why BH: in an A/A (every cell's true difference within the threshold) it bounds the chance of any false
    claim by q; the cells of one comparison are positively dependent (eff tg, aggregate tg and decode move
    together), the case BH is proven for (PRDS), and it keeps more power than Holm for the many real
    differences of an A/B.
    """
    tested = sorted(
        (v for v in verdicts if v.p is not None and v.kind not in (EXCLUDED, MISSING)),
        key=lambda v: v.p or 0.0,
    )
    m = len(tested)
    k = 0
    for i, v in enumerate(tested, 1):
        if (v.p or 0.0) <= q * i / m:
            k = i
    removed = 0
    for i, v in enumerate(tested, 1):
        v.extra["cells_tested"] = m
        if i > k and v.claim:
            removed += 1
            sym = " pts" if v.delta_pts is not None else " %"
            ci = v.ci or (math.nan, math.nan)
            v.kind = INCONCLUSIVE
            v.text = (
                f"inconclusive: {v.text.split(' (')[0]} (95 % CI {ci[0]:+.1f}…{ci[1]:+.1f}{sym} clears ±"
                f"{v.threshold_pct:g}{sym} alone, but not after the Benjamini-Hochberg correction over {m} cells; "
                f"p = {v.p:.3g})"
            )
            v.extra["corrected"] = True
    return removed


def short(v: Verdict) -> str:
    """A compact cell text: "-23.4% worse", "+1.2% noise", "+8.0% ?", "+35.0% not claimed"."""
    d = v.delta_pts if v.delta_pts is not None else v.delta_pct
    sym = " pts" if v.delta_pts is not None else "%"
    num = "—" if d is None else f"{d:+.1f}{sym}"
    mark = {
        BETTER: " better",
        WORSE: " worse",
        NOISE: " noise",
        INCONCLUSIVE: " ?",
        EXCLUDED: " not claimed",
        MISSING: "",
    }[v.kind]
    return num + mark


def units_of(groups: Iterable[Sequence[float]]) -> Samples:
    """One session's samples from per-repetition groups of request values (empty groups dropped)."""
    gs = [[float(x) for x in g] for g in groups if g]
    return Samples([gs] if gs else [], "requests")


# ------------------------------------------------------------------------------------------ metrics / units


METRICS: list[Metric] = COMPARED  # what compare judges, from the one catalogue


def _rep_of(request_id: str) -> int:
    """The repetition of a measured request id ``…:r{rep}.{i}`` / ``…:r{run}`` (-1 when unknown)."""
    tag = request_id.rpartition(":")[2]
    if tag.startswith("r"):
        head = tag[1:].split(".", 1)[0]
        if head.isdigit():
            return int(head)
    return -1


def point_samples(
    records: Sequence[Any],
    summary: Any,
    *,
    degraded: bool = False,
    client_limited: bool = False,
) -> dict[str, Samples]:
    """Test units per metric for one point, from its measured request records and its summary.

    A point is one engine session's measurement: its request values grouped by repetition (spec-acceptance
    points: one request per run), which ``session_estimate`` pools. Aggregate tg is a per-repetition number by
    nature. A metric only the server's /metrics deltas give is one point-level value.
    """
    ok = [r for r in records if getattr(r, "ok", False)]
    excluded = "degraded" if degraded else "client-limited" if client_limited else ""

    def grouped(fn: Any) -> Samples | None:
        groups: dict[int, list[float]] = {}
        for r in ok:
            x = fn(r)
            if x is not None and not math.isnan(x):
                groups.setdefault(_rep_of(r.request_id), []).append(float(x))
        if not groups:
            return None
        return units_of([groups[k] for k in sorted(groups)])

    server = summary.server if summary is not None else None
    out: dict[str, Samples | None] = {
        m.key: grouped(m.per_request) for m in COMPARED if m.per_request is not None
    }
    reps = summary.extra.get("reps") if summary is not None and isinstance(summary.extra, dict) else None
    if isinstance(reps, list):
        vals = [
            float(r["agg_tg_tps"])
            for r in reps
            if isinstance(r, dict) and r.get("ok") and not r.get("failed") and r.get("agg_tg_tps")
        ]
        out["agg_tg_tps"] = Samples([[[x] for x in vals]], "repetitions") if vals else None
    elif summary is not None and summary.agg_tg_tps is not None:
        out["agg_tg_tps"] = Samples.of([summary.agg_tg_tps], "point")
    if server is not None:  # the server's account of the whole point: one unit (catalogue: Metric.server)
        for m in COMPARED:
            val = getattr(server, m.server, None) if m.server else None
            if out.get(m.key) is None and val is not None:
                out[m.key] = Samples.of([float(val)], "point")
    if not records and summary is not None:  # no request records (e.g. a trimmed bundle): medians only
        for m in COMPARED:
            med = getattr(getattr(summary, m.key, None), "median", None)
            if out.get(m.key) is None and med is not None:
                out[m.key] = Samples.of([float(med)], "point")
    res: dict[str, Samples] = {}
    for k, s in out.items():
        if s is not None and s.units:
            s.excluded = excluded
            res[k] = s
    return res

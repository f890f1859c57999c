"""Verdict statistics: the one place that decides whether two measurements differ.

Used by ``report`` (delta tables and summary), ``compare`` (every cell and ratio), and the TUI's results Δ
column. It imports no Textual and no rendering code, so the TUI and the reports share it.

The rule (issue 16): a difference is *claimed* only when it is statistically supported AND larger than a
practical threshold (``report.noise_threshold_pct``, default 5 %). Concretely:

- the units of the test are the repetitions of a point (each repetition's median over its requests) when both
  sides have >= 2 repetitions: run-to-run and repetition-to-repetition variance is the honest unit, requests
  of one repetition share its conditions; with one repetition the units are the requests;
- the test is a percentile bootstrap (each side's units resampled with replacement) of the ratio of
  medians (relative metrics) or of the difference of medians in points (rates such as a cache-hit or
  acceptance rate, which can be 0); for the usual small samples the bootstrap distribution is computed
  exactly (``median_bootstrap_pmf``), for large ones by ``BOOTSTRAP_RESAMPLES`` seeded resamples;
- a claim needs the whole 95 % interval beyond the threshold (above +T or below -T): an interval that
  excludes 0 but reaches inside the threshold is "uncertain" and claims nothing; an interval around 0 is
  "within noise"; fewer than ``MIN_UNITS`` units on a side is "inconclusive (n=2)";
- degraded or client-limited measurements are never claimed ("not claimed: client-limited").

Requiring the interval (not only the point estimate) to clear the threshold is what makes an A/A comparison
(the same spec run twice) come out within noise: run-to-run drift of a few per cent moves the medians, and
the threshold absorbs it, while a real 20 % change still clears it.

Direction convention: rates (t/s, hit rate, acceptance) higher is better; latencies (ms) lower is better. The
text names the direction of the number ("TTFT 12.0 % lower"), never "faster by" a latency.

numpy/scipy are not dependencies of bench-tui and the samples are small (tens of units), so the bootstrap
is written in plain Python: exact for small samples, else ``random.Random`` seeded from the cell's label;
the same data gives the same verdict every time.
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
BOOTSTRAP_RESAMPLES = 2000
MIN_UNITS = 3  # per side; below this no interval means anything and the verdict is "inconclusive (n=...)"

# verdict kinds
BETTER, WORSE, NOISE, UNCERTAIN, INCONCLUSIVE, EXCLUDED, MISSING = (
    "better",
    "worse",
    "within noise",
    "uncertain",
    "inconclusive",
    "not claimed",
    "missing",
)
CLAIMS = (BETTER, WORSE)


@dataclass
class Samples:
    """One side of a comparison: the test units and what they are."""

    units: list[float]
    unit: str = "requests"  # "repetitions" | "requests" | "point" (one aggregate number)
    excluded: str = ""  # "degraded" / "client-limited": never claimed

    @property
    def n(self) -> int:
        return len(self.units)

    @property
    def value(self) -> float | None:
        return median(self.units) if self.units else None


@dataclass
class Verdict:
    kind: str  # better | worse | within noise | uncertain | inconclusive | not claimed | missing
    delta_pct: float | None = None  # relative change of the medians, candidate vs baseline, in %
    delta_pts: float | None = None  # for rates: the change in percentage points
    ci: tuple[float, float] | None = None  # 95 % interval of the delta (% or pts, as the delta)
    n: tuple[int, int] = (0, 0)
    unit: str = ""
    text: str = "—"
    test: str = ""
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    higher_is_better: bool = True
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


def _percentile(sorted_vals: Sequence[float], q: float) -> float:
    pos = q * (len(sorted_vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def seed_of(label: str) -> int:
    return zlib.crc32(label.encode("utf-8"))


def median_bootstrap_pmf(values: Sequence[float]) -> list[tuple[float, float]]:
    """The exact bootstrap distribution of the median of ``values`` (no resampling needed).

    A resample's k-th order statistic is <= u (a data value) exactly when at least k of its n draws are,
    and each draw is with probability F(u) = #{x <= u} / n: P = P(Binomial(n, F(u)) >= k). For odd n the
    median is the order statistic k = (n + 1) / 2; for even n it is the mean of k = n/2 and n/2 + 1, whose
    distribution is replaced by the 50/50 mixture of the two (same centre, slightly wider: conservative).
    Returns (value, probability) over the distinct values.
    """
    s = sorted(values)
    n = len(s)
    uniq: list[float] = []
    cum: list[int] = []
    for i, x in enumerate(s):
        if uniq and x == uniq[-1]:
            cum[-1] = i + 1
        else:
            uniq.append(x)
            cum.append(i + 1)
    ranks = [(n + 1) // 2] if n % 2 else [n // 2, n // 2 + 1]
    pmf = [0.0] * len(uniq)
    for k in ranks:
        prev = 0.0
        for j, c in enumerate(cum):
            p = c / n
            cdf = (
                1.0
                if c == n
                else math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
            )
            pmf[j] += (cdf - prev) / len(ranks)
            prev = cdf
    return [(u, w) for u, w in zip(uniq, pmf, strict=True) if w > 0]


EXACT_MAX_PAIRS = 40_000  # distinct-value pairs up to which the exact bootstrap is used (else resampling)
EXACT_MAX_N = 300


def bootstrap_interval(
    a: Sequence[float],
    b: Sequence[float],
    *,
    ratio: bool,
    seed: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile interval of median(b*)/median(a*) (``ratio``) or median(b*) - median(a*) under the
    bootstrap (each side resampled with replacement, independently).

    Small samples (the usual case: repetition medians) use the exact bootstrap distribution of each median
    (``median_bootstrap_pmf``) and combine them over all value pairs, so no random resampling is involved;
    large ones resample ``resamples`` times with ``random.Random(seed)``: reproducible either way.
    """
    alpha = (1.0 - confidence) / 2.0
    if len(a) <= EXACT_MAX_N and len(b) <= EXACT_MAX_N and len(set(a)) * len(set(b)) <= EXACT_MAX_PAIRS:
        pa, pb = median_bootstrap_pmf(a), median_bootstrap_pmf(b)
        dist = [
            ((vb / va) if ratio else (vb - va), wa * wb)
            for va, wa in pa
            for vb, wb in pb
            if not ratio or va > 0
        ]
        total = math.fsum(w for _, w in dist)
        if not dist or total <= 0:
            return (math.nan, math.nan)
        dist.sort()
        lo = hi = math.nan
        acc = 0.0
        for x, w in dist:
            acc += w / total
            if math.isnan(lo) and acc >= alpha - 1e-12:
                lo = x
            if acc >= 1.0 - alpha - 1e-12:
                hi = x
                break
        return lo, (hi if not math.isnan(hi) else dist[-1][0])
    rng = random.Random(seed)
    na, nb = len(a), len(b)
    stats: list[float] = []
    choices = rng.choices
    for _ in range(resamples):
        ma = median(choices(a, k=na))
        mb = median(choices(b, k=nb))
        if ratio:
            if ma <= 0:
                continue
            stats.append(mb / ma)
        else:
            stats.append(mb - ma)
    if not stats:
        return (math.nan, math.nan)
    stats.sort()
    return _percentile(stats, alpha), _percentile(stats, 1.0 - alpha)


def direction_words(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def compare(
    base: Samples | None,
    cand: Samples | None,
    *,
    higher_is_better: bool = True,
    rate: bool = False,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    label: str = "",
    name: str = "",
) -> Verdict:
    """The verdict for ``cand`` against ``base``.

    ``rate``: the values are fractions (0..1); the delta and threshold are in percentage points.
    ``label`` seeds the bootstrap (use the cell's identity: same cell, same verdict). ``name`` prefixes the
    text ("TTFT 12.0 % lower").
    """
    t = threshold_pct
    v = Verdict(MISSING, threshold_pct=t, higher_is_better=higher_is_better)
    if base is None or cand is None or not base.units or not cand.units:
        return v
    a, b = base.units, cand.units
    ma, mb = median(a), median(b)
    v.n = (len(a), len(b))
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
    what = "higher" if delta > 0 else "lower"
    change = f"{prefix}{abs(delta):.1f}{sym} {what}" if delta else f"{prefix}unchanged"
    unit_words = {"repetitions": "repetition medians", "requests": "requests", "point": "point aggregates"}
    stat_words = "difference of medians in points" if rate else "ratio of medians"
    v.test = (
        f"bootstrap (exact for small samples, else {BOOTSTRAP_RESAMPLES} seeded resamples) of the {stat_words} over "
        f"{len(a)} vs {len(b)} {unit_words.get(v.unit, v.unit)}; claim only when the 95 % interval lies "
        f"beyond ±{t:g}{sym}; {direction_words(higher_is_better)}"
    )
    why = " and ".join(sorted(x for x in {base.excluded, cand.excluded} if x))
    if why:
        v.kind, v.text = EXCLUDED, f"{change} (not claimed: {why})"
        return v
    n_min = min(len(a), len(b))
    if n_min < MIN_UNITS:
        v.kind, v.text = INCONCLUSIVE, f"inconclusive (n={n_min}): {change}"
        v.test = (
            f"none: fewer than {MIN_UNITS} {unit_words.get(v.unit, v.unit)} on a side; "
            + direction_words(higher_is_better)
        )
        return v
    if min(a) == max(a) and min(b) == max(b):
        lo = hi = (mb / ma if ma > 0 else math.nan) if not rate else (mb - ma)
    else:
        lo, hi = bootstrap_interval(
            a,
            b,
            ratio=not rate and ma > 0,
            seed=seed_of(label or name),
        )
    if rate:
        ci = (100.0 * lo, 100.0 * hi)
    elif ma > 0:
        ci = (100.0 * (lo - 1.0), 100.0 * (hi - 1.0))
    else:  # a negative baseline median: no ratio; the difference relative to |baseline|
        ci = (100.0 * lo / abs(ma), 100.0 * hi / abs(ma))
    if any(math.isnan(x) for x in ci):
        v.kind, v.text = INCONCLUSIVE, f"inconclusive (no interval): {change}"
        return v
    v.ci = ci
    ci_txt = f"95 % CI {ci[0]:+.1f}…{ci[1]:+.1f}{sym}"
    if ci[0] > t or ci[1] < -t:
        good = (delta > 0) == higher_is_better
        v.kind = BETTER if good else WORSE
        v.text = f"{change} ({'better' if good else 'worse'}; {ci_txt})"
    elif ci[0] > 0 or ci[1] < 0:
        v.kind = UNCERTAIN
        v.text = f"{change}? (uncertain: {ci_txt} reaches inside ±{t:g}{sym})"
    else:
        v.kind = NOISE
        v.text = f"within noise ({delta:+.1f}{sym}; {ci_txt})"
    return v


def short(v: Verdict) -> str:
    """A compact cell text: "-23.4% worse", "+1.2% noise", "+8.0% unsure", "+50.0% n=1", "+35.0% not claimed"."""
    d = v.delta_pts if v.delta_pts is not None else v.delta_pct
    sym = " pts" if v.delta_pts is not None else "%"
    num = "—" if d is None else f"{d:+.1f}{sym}"
    mark = {
        BETTER: " better",
        WORSE: " worse",
        NOISE: " noise",
        UNCERTAIN: " unsure",
        INCONCLUSIVE: f" n={min(v.n)}",
        EXCLUDED: " not claimed",
        MISSING: "",
    }[v.kind]
    return num + mark


def units_of(groups: Iterable[Sequence[float]], *, repetitions: bool) -> Samples:
    """Samples from per-repetition groups of request values: repetition medians when asked and there are
    >= 2 non-empty repetitions, else the requests themselves."""
    gs = [list(g) for g in groups if g]
    if repetitions and len(gs) >= 2:
        return Samples([median(g) for g in gs], "repetitions")
    return Samples([x for g in gs for x in g], "requests")


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
    repetitions: int = 1,
    degraded: bool = False,
    client_limited: bool = False,
) -> dict[str, Samples]:
    """Test units per metric for one point, from its measured request records and its summary.

    Throughput points with >= 2 repetitions give one unit per repetition (its median); spec-acceptance
    points (one request per run) and single-repetition points give one unit per request. Aggregate tg is a
    per-repetition number by nature. A metric only the server's /metrics deltas give is one point-level unit.
    """
    from bench_tui.runner.workloads import metrics as M

    ok = [r for r in records if getattr(r, "ok", False)]
    excluded = "degraded" if degraded else "client-limited" if client_limited else ""
    by_rep = repetitions >= 2

    def grouped(fn: Any) -> Samples | None:
        groups: dict[int, list[float]] = {}
        for r in ok:
            x = fn(r)
            if x is not None and not math.isnan(x):
                groups.setdefault(_rep_of(r.request_id), []).append(float(x))
        if not groups:
            return None
        return units_of([groups[k] for k in sorted(groups)], repetitions=by_rep)

    def timing(key: str) -> Any:
        return lambda r: float(r.timings[key]) if r.timings and r.timings.get(key) else None

    def hit(r: Any) -> float | None:
        if r.cached_tokens is None or not r.prompt_tokens:
            return None
        return min(1.0, float(r.cached_tokens) / float(r.prompt_tokens))

    def acc(r: Any) -> float | None:
        t = r.timings or {}
        return (float(t.get("draft_n_accepted") or 0) / float(t["draft_n"])) if t.get("draft_n") else None

    server = summary.server if summary is not None else None
    out: dict[str, Samples | None] = {
        "eff_tg_tps": grouped(M.eff_tg_tps),
        "ttft_ms": grouped(M.ttft_ms),
        "prefill_tps": grouped(M.prefill_tps),
        "decode_tps": grouped(M.decode_tps),
        "srv_prefill_tps": grouped(timing("prompt_per_second")),
        "srv_decode_tps": grouped(timing("predicted_per_second")),
        "cache_hit_rate": grouped(hit),
        "spec_acceptance": grouped(acc),
    }
    reps = summary.extra.get("reps") if summary is not None and isinstance(summary.extra, dict) else None
    if isinstance(reps, list):
        vals = [
            float(r["agg_tg_tps"])
            for r in reps
            if isinstance(r, dict) and r.get("ok") and not r.get("failed") and r.get("agg_tg_tps")
        ]
        out["agg_tg_tps"] = Samples(vals, "repetitions") if vals else None
    elif summary is not None and summary.agg_tg_tps is not None:
        out["agg_tg_tps"] = Samples([summary.agg_tg_tps], "point")
    if server is not None:  # the server's account of the whole point: one unit
        for key, val in (
            ("srv_prefill_tps", server.prefill_tps),
            ("srv_decode_tps", server.decode_tps),
            ("cache_hit_rate", server.prefix_cache_hit_rate),
            ("spec_acceptance", server.spec_acceptance_rate),
        ):
            if out.get(key) is None and val is not None:
                out[key] = Samples([float(val)], "point")
    if not records and summary is not None:  # no request records (e.g. a trimmed bundle): medians only
        for key in ("eff_tg_tps", "ttft_ms", "prefill_tps", "decode_tps"):
            st = getattr(summary, key, None)
            if out.get(key) is None and st is not None and st.median is not None:
                out[key] = Samples([float(st.median)], "point")
    res: dict[str, Samples] = {}
    for k, s in out.items():
        if s is not None and s.units:
            s.excluded = excluded
            res[k] = s
    return res

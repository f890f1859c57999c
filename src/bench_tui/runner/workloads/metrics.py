"""Metrics derived from RequestRecord anchors (pure functions), statistics, and the per-point summary.

Definitions (DESIGN.md "Measurement definitions"; all anchors are monotonic ns of one process):

- TTFT = t_first_token - t_send (first delta with content, reasoning or tool-call text)
- TTFB = t_first_byte - t_send (first SSE event; engines send a role-only chunk before prefill, so this is
  NOT time to first token; kept only to show the difference)
- prefill t/s = prompt_tokens / TTFT (per request: under concurrency TTFT includes queueing behind the other
  requests' prefill)
- aggregate prefill t/s = all prompt tokens of a batch sent together / (last first token - first send), summed
  over the batches (repetitions) of a point: the rate the engine prefilled at under that load
- decode t/s = (output_tokens - 1) / (t_last_token - t_first_token), per request (the point shows the median)
- pooled decode t/s = sum of (output_tokens - 1) / sum of (t_last_token - t_first_token): how engines pool it
- ITL = gaps between consecutive token-bearing events; an event that carried k tokens contributes k gaps
  of gap/k (so multi-token chunks do not look like one slow token)
- effective tg t/s = output_tokens / (t_done - t_send) (the number older tables used)
- e2e = t_done - t_send

``output_tokens`` is the record's chosen count (usage > timings > client; see RequestRecord.token_source).

Confidence interval of the median (``stat``): distribution-free, from order statistics. With n values and
X ~ Binomial(n, 1/2), take the largest rank l with P(X < l) <= (1 - confidence)/2; the interval is
[x(l), x(n+1-l)] (1-based, sorted), whose coverage is at least ``confidence``. Exact binomial sums up to
n = 1000, the normal approximation above. Below n = 6 no such l exists at 95 %, and the interval is
[min, max] (coverage 1 - 2^(1-n): 50 % at n = 2, 94 % at n = 5); ``stat`` says so via ``ci_exact``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from statistics import NormalDist, median

from bench_tui.catalogue import (  # the per-request formulas are declared once, with their metric
    decode_tps,
    e2e_ms,
    eff_tg_tps,
    output_tokens,
    prefill_tps,
    ttfb_ms,
    ttft_ms,
)
from bench_tui.events import PointSummary, RequestRecord, Stat
from bench_tui.runner.transport.lag import client_limit_cause


def pooled_decode_tps(records: Sequence[RequestRecord]) -> float | None:
    """All decoded tokens after the first / all decode time, over the successful requests (how the engines'
    counters pool it: a slow request weighs by its time, not as one vote in a median)."""
    n, t = 0, 0
    for r in records:
        k = output_tokens(r)
        if (
            r.ok
            and k >= 2
            and r.t_first_token_ns is not None
            and r.t_last_token_ns is not None
            and r.t_last_token_ns > r.t_first_token_ns
        ):
            n += k - 1
            t += r.t_last_token_ns - r.t_first_token_ns
    return n / (t / 1e9) if t > 0 else None


def prefill_window(records: Sequence[RequestRecord]) -> tuple[int, float] | None:
    """(prompt tokens, seconds from the first send to the last first token) of requests sent together."""
    ok = [r for r in records if r.ok and r.prompt_tokens and r.t_first_token_ns and r.t_send_ns]
    if not ok:
        return None
    dt = (max(r.t_first_token_ns or 0 for r in ok) - min(r.t_send_ns for r in ok)) / 1e9
    return (sum(r.prompt_tokens or 0 for r in ok), dt) if dt > 0 else None


def agg_prefill_tps(batches: Iterable[Sequence[RequestRecord]]) -> float | None:
    """All prompt tokens / the summed prefill windows of batches sent together (one batch per repetition)."""
    tokens, seconds = 0, 0.0
    for batch in batches:
        w = prefill_window(batch)
        if w is not None:
            tokens += w[0]
            seconds += w[1]
    return tokens / seconds if seconds > 0 else None


def itl_ms(rec: RequestRecord) -> list[float]:
    """Inter-token gaps (ms). Events at the same instant (two channels in one SSE event) are merged."""
    events: list[tuple[int, int]] = []
    for c in rec.chunks:
        if events and events[-1][0] == c.t_ns:
            events[-1] = (c.t_ns, events[-1][1] + c.tokens)
        else:
            events.append((c.t_ns, max(1, c.tokens)))
    out: list[float] = []
    for (t0, _), (t1, k) in zip(events, events[1:], strict=False):
        gap = (t1 - t0) / 1e6 / k
        out.extend([gap] * k)
    return out


def context_full(rec: RequestRecord, max_tokens: int | None, slot_ctx: int | None = None) -> str | None:
    """ "context full (prompt N + output M = ctx C)" when a generation stopped at the context, not at max_tokens.

    ``finish_reason=length`` below ``max_tokens`` can only be the context; with the slot size known, reaching it
    is evidence too."""
    if rec.finish_reason != "length" or rec.prompt_tokens is None:
        return None
    prompt, out = rec.prompt_tokens, output_tokens(rec)
    below_ceiling = max_tokens is not None and out < max_tokens
    reached = slot_ctx is not None and prompt + out >= slot_ctx
    if not (below_ceiling or reached):
        return None
    ctx = slot_ctx if slot_ctx is not None else prompt + out
    return (
        f"context full (prompt {prompt} + output {out} = ctx {ctx})"
        if prompt + out == ctx
        else f"context full (prompt {prompt} + output {out} = {prompt + out}, slot ctx {ctx})"
    )


STARVED_FRACTION = 1 / 3  # a c1 decode below this share of the engine's first c1 figure: starved


class StarvationWatch:
    """Per engine: the first single-stream (c1) decode rate of the run; a later c1 point far below it says the
    engine lost its cores to something else (another engine, a build, a test run), not that it got slower."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[str, float]] = {}

    def check(self, engine: str, point_id: str, summary: PointSummary, concurrency: int) -> str | None:
        med = summary.decode_tps.median
        if concurrency != 1 or not med or summary.failed:
            return None
        first_id, first = self.first.setdefault(engine, (point_id, med))
        if med >= STARVED_FRACTION * first:
            return None
        return (
            f"starved:c1 decode {med:.1f} t/s is {100 * med / first:.0f} % of this engine's first c1 figure "
            f"({first:.1f} t/s at {first_id}): something else is probably using its cores"
        )


# ---------------------------------------------------------------------------------------------- statistics


def quantile(sorted_vals: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), on already sorted values."""
    n = len(sorted_vals)
    if n == 1:
        return float(sorted_vals[0])
    pos = q * (n - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return float(sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo))


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int] | None:
    """1-based ranks (l, u) of the order-statistic CI of the median, or None when n is too small."""
    if n < 1:
        return None
    alpha = (1.0 - confidence) / 2.0
    if n > 1000:
        z = NormalDist().inv_cdf(1.0 - alpha)
        lo = math.floor(n / 2.0 - z * math.sqrt(n) / 2.0)
        if lo < 1:
            return None
        return lo, n + 1 - lo
    total = 2**n
    cum = 0  # P(X < l) * 2^n for the candidate l
    best = 0
    for l_rank in range(1, n // 2 + 1):
        cum += math.comb(n, l_rank - 1)
        if cum / total <= alpha:
            best = l_rank
        else:
            break
    if best == 0:
        return None
    return best, n + 1 - best


def stat(values: Iterable[float | None], *, confidence: float = 0.95) -> Stat:
    """n, median, mean, p90, p99, min, max and a CI of the median (order statistics; min/max below n=6)."""
    vals = sorted(float(v) for v in values if v is not None and not math.isnan(v))
    n = len(vals)
    if n == 0:
        return Stat(n=0)
    ranks = median_ci_ranks(n, confidence)
    if ranks is None:
        lo, hi = vals[0], vals[-1]
    else:
        lo, hi = vals[ranks[0] - 1], vals[ranks[1] - 1]
    return Stat(
        n=n,
        median=quantile(vals, 0.5),
        mean=math.fsum(vals) / n,
        p90=quantile(vals, 0.9),
        p99=quantile(vals, 0.99),
        min=vals[0],
        max=vals[-1],
        ci_low=lo,
        ci_high=hi,
    )


def ci_exact(n: int, confidence: float = 0.95) -> bool:
    """Whether ``stat`` gives a real order-statistic CI for n values (False: it fell back to min..max)."""
    return median_ci_ranks(n, confidence) is not None


# ---------------------------------------------------------------------------------------------- points


def summarize(
    records: Sequence[RequestRecord],
    *,
    wall_s: float,
    cache: str = "",
    max_loop_lag_ms: float | None = None,
    lag_fraction: float = 0.25,
) -> PointSummary:
    """One point's summary. Failed requests are counted (``failed``, ``extra["errors"]``), never averaged in.

    ``max_loop_lag_ms`` defaults to the worst ``loop_lag_ms`` of the records. When it exceeds ``lag_fraction``
    of the median ITL, ``client_limit_cause`` says why: "client" (the typical receive delay is high too: the
    client falls behind, and the point is ``client_limited``) or "stall" (only the worst is: the host paused
    every stream at once; not client-limited, flagged as a stall by the sweep).
    """
    ok = [r for r in records if r.ok]
    failed = [r for r in records if not r.ok]
    itl: list[float] = []
    for r in ok:
        itl.extend(itl_ms(r))
    itl_stat = stat(itl)
    if max_loop_lag_ms is None:
        max_loop_lag_ms = max((r.loop_lag_ms for r in records), default=0.0)
    typical = median([r.recv_delay_ms for r in ok]) if ok else 0.0
    cause = client_limit_cause(max_loop_lag_ms, typical, itl_stat.median, lag_fraction) if ok else ""
    clocks = {r.clock for r in ok}
    sources = Counter(r.token_source for r in ok)
    total_out = sum(output_tokens(r) for r in ok)
    extra: dict[str, object] = {}
    if failed:
        extra["errors"] = dict(Counter(r.error_kind or "unknown" for r in failed))
        extra["first_error"] = failed[0].error[:300]
    cached = [r.cached_tokens for r in ok if r.cached_tokens is not None]
    if cached:
        extra["cached_tokens"] = sum(cached)
    return PointSummary(
        requests=len(records),
        ok=len(ok),
        failed=len(failed),
        wall_s=wall_s,
        eff_tg_tps=stat(eff_tg_tps(r) for r in ok),
        agg_tg_tps=(total_out / wall_s) if wall_s > 0 and ok else None,
        ttft_ms=stat(ttft_ms(r) for r in ok),
        ttfb_ms=stat(ttfb_ms(r) for r in ok),
        prefill_tps=stat(prefill_tps(r) for r in ok),
        decode_tps=stat(decode_tps(r) for r in ok),
        pooled_decode_tps=pooled_decode_tps(ok),
        itl_ms=itl_stat,
        e2e_ms=stat(e2e_ms(r) for r in ok),
        prompt_tokens=stat(r.prompt_tokens for r in ok),
        output_tokens=stat(output_tokens(r) for r in ok),
        token_source=sources.most_common(1)[0][0] if sources else "",
        token_disagreements=sum(1 for r in ok if r.token_disagreement),
        client_limited=cause == "client",
        max_loop_lag_ms=max_loop_lag_ms,
        client_limit_cause=cause,
        recv_delay_ms=typical,
        clock=clocks.pop() if len(clocks) == 1 else ("mixed" if clocks else "monotonic"),
        cache=cache,
        extra=extra,
    )

"""The metric catalogue: every number bench-tui reports, declared once.

Each entry says what the number is called (in a table heading and in a sentence), its unit, how it is
computed, and which direction is better. Reports, compare, the verdicts and the TUI's results take their
labels and captions from here, so one metric never carries two names or two formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench_tui.events import RequestRecord

# ------------------------------------------------------------------------------ per-request formulas


def _ms(a: int | None, b: int | None) -> float | None:
    if a is None or b is None or not b:
        return None
    return (a - b) / 1e6


def output_tokens(rec: RequestRecord) -> int:
    return rec.output_tokens if rec.output_tokens is not None else rec.client_output_tokens


def ttft_ms(rec: RequestRecord) -> float | None:
    return _ms(rec.t_first_token_ns, rec.t_send_ns)


def ttfb_ms(rec: RequestRecord) -> float | None:
    return _ms(rec.t_first_byte_ns, rec.t_send_ns)


def ttfc_ms(rec: RequestRecord) -> float | None:
    """Time to first user-visible content (after any reasoning)."""
    return _ms(rec.t_first_content_ns, rec.t_send_ns)


def e2e_ms(rec: RequestRecord) -> float | None:
    return _ms(rec.t_done_ns, rec.t_send_ns)


def prefill_tps(rec: RequestRecord) -> float | None:
    t = ttft_ms(rec)
    if not rec.prompt_tokens or t is None or t <= 0:
        return None
    return rec.prompt_tokens / (t / 1000.0)


def decode_tps(rec: RequestRecord) -> float | None:
    n = output_tokens(rec)
    if n < 2 or rec.t_first_token_ns is None or rec.t_last_token_ns is None:
        return None
    dt = (rec.t_last_token_ns - rec.t_first_token_ns) / 1e9
    if dt <= 0:
        return None
    return (n - 1) / dt


def eff_tg_tps(rec: RequestRecord) -> float | None:
    e = e2e_ms(rec)
    n = output_tokens(rec)
    if e is None or e <= 0 or n <= 0:
        return None
    return n / (e / 1000.0)


def timing(key: str) -> Callable[[RequestRecord], float | None]:
    """A figure the engine reported for the request itself (llama.cpp's ``timings``)."""

    def read(rec: RequestRecord) -> float | None:
        v = rec.timings.get(key) if rec.timings else None
        return float(v) if v else None

    return read


def cache_hit(rec: RequestRecord) -> float | None:
    """Cached prompt tokens / prompt tokens of one request (the server's usage)."""
    if rec.cached_tokens is None or not rec.prompt_tokens:
        return None
    return min(1.0, float(rec.cached_tokens) / float(rec.prompt_tokens))


def draft_acceptance(rec: RequestRecord) -> float | None:
    """Accepted / drafted tokens of one request (llama.cpp's timings)."""
    t = rec.timings or {}
    return (float(t.get("draft_n_accepted") or 0) / float(t["draft_n"])) if t.get("draft_n") else None


# ------------------------------------------------------------------------------------- the catalogue


@dataclass(frozen=True)
class Metric:
    key: str  # the PointSummary field / the sample key
    table: str  # heading of a table or column of this metric ("TTFT ms")
    label: str  # the short name used in sentences ("TTFT")
    unit: str  # "ms", "t/s" or "%"
    caption: str  # what it measures: the formula and where its tokens come from
    higher_is_better: bool
    rate: bool = False  # a fraction 0..1 (differences in points, shown as %)
    compared: bool = True  # compare and the verdicts judge it
    # how a point's test units are extracted (reports/verdict.point_samples):
    per_request: Callable[[RequestRecord], float | None] | None = None  # one value per measured request
    server: str | None = None  # else this field of the point's ServerSide (its /metrics deltas): one value


CATALOGUE: list[Metric] = [
    Metric(
        "eff_tg_tps",
        "effective tg t/s",
        "effective tg",
        "t/s",
        "eff tg t/s = output tokens / (t_done − t_send), per request (the seed tables' number)",
        True,
        per_request=eff_tg_tps,
    ),
    Metric(
        "agg_tg_tps",
        "aggregate tg t/s",
        "aggregate tg",
        "t/s",
        "aggregate tg t/s = all output tokens of a repetition / its wall time (the c2/c4 number)",
        True,
    ),
    Metric(
        "ttft_ms",
        "TTFT ms",
        "TTFT",
        "ms",
        "TTFT ms = t_first_token − t_send: first token of any channel (content, reasoning or tool call), "
        "not the first SSE event",
        False,
        per_request=ttft_ms,
    ),
    Metric(
        "ttfb_ms",
        "TTFB ms",
        "TTFB",
        "ms",
        "TTFB ms = t_first_byte − t_send: the first SSE event (some engines send a role-only chunk before "
        "prefill); shown only to compare with older tools",
        False,
        compared=False,
        per_request=ttfb_ms,
    ),
    Metric(
        "prefill_tps",
        "prefill t/s per request (incl. queueing at c > 1)",
        "prefill",
        "t/s",
        "prefill t/s = prompt tokens / TTFT, per request: at c > 1 TTFT includes queueing behind the other "
        "requests' prefill",
        True,
        per_request=prefill_tps,
    ),
    Metric(
        "agg_prefill_tps",
        "aggregate prefill t/s",
        "aggregate prefill",
        "t/s",
        "aggregate prefill t/s = all prompt tokens of the requests sent together / (last first token − first "
        "send), over the repetitions",
        True,
        compared=False,
    ),
    Metric(
        "decode_tps",
        "decode t/s",
        "decode",
        "t/s",
        "decode t/s = (output tokens − 1) / (t_last_token − t_first_token), per request (client side)",
        True,
        per_request=decode_tps,
    ),
    Metric(
        "e2e_ms",
        "e2e ms",
        "end-to-end latency",
        "ms",
        "e2e ms = t_done − t_send",
        False,
        compared=False,
        per_request=e2e_ms,
    ),
    Metric(
        "srv_prefill_tps",
        "server prefill t/s",
        "server prefill",
        "t/s",
        "server-side prefill t/s (llama.cpp per-request timings, else the point's /metrics deltas)",
        True,
        per_request=timing("prompt_per_second"),
        server="prefill_tps",
    ),
    Metric(
        "srv_decode_tps",
        "server decode t/s",
        "server decode",
        "t/s",
        "server-side decode t/s (llama.cpp per-request timings, else the point's /metrics deltas)",
        True,
        per_request=timing("predicted_per_second"),
        server="decode_tps",
    ),
    Metric(
        "cache_hit_rate",
        "prefix-cache hit rate",
        "prefix-cache hit rate",
        "%",
        "prefix-cache hit rate = cached prompt tokens / prompt tokens (per request, else /metrics)",
        True,
        rate=True,
        per_request=cache_hit,
        server="prefix_cache_hit_rate",
    ),
    Metric(
        "spec_acceptance",
        "spec-decode acceptance",
        "acceptance",
        "%",
        "spec-decode acceptance = accepted / drafted tokens (llama.cpp timings per request, else /metrics)",
        True,
        rate=True,
        per_request=draft_acceptance,
        server="spec_acceptance_rate",
    ),
    # sessions points (runner/workloads/sessions.py): figures in the summary's extra; their compare cells are
    # made by reports/sessions.py (goodput and the knee are one point aggregate a side)
    Metric(
        "goodput_rps",
        "goodput req/s",
        "goodput",
        "req/s",
        "goodput req/s = requests meeting every SLO target / (last answer − first scheduled send), latencies "
        "counted from each request's scheduled send time",
        True,
        compared=True,
    ),
    Metric(
        "goodput_sessions_ps",
        "goodput sessions/s",
        "session goodput",
        "sessions/s",
        "session goodput = sessions whose every request met every SLO target / the point's span",
        True,
        compared=False,
    ),
    Metric(
        "max_rate",
        "max sustainable rate sessions/s",
        "max sustainable rate",
        "sessions/s",
        "max sustainable rate = the highest session start rate the max-rate search found meeting every SLO "
        "target with no growing backlog and no failed request (bisection to resolution_pct)",
        True,
        compared=True,
    ),
    Metric(
        "ttft_ms_turns2plus",
        "TTFT turns ≥ 2 ms",
        "TTFT on later turns",
        "ms",
        "TTFT turns ≥ 2 ms = t_first_token − scheduled send of the requests after a session's first (their "
        "prompts carry the session's history: what a prefix cache saves)",
        False,
        compared=True,
    ),
]
METRIC: dict[str, Metric] = {m.key: m for m in CATALOGUE}
COMPARED: list[Metric] = [m for m in CATALOGUE if m.compared]

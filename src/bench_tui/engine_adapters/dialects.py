"""Metrics dialects: what each engine's /metrics counters mean, turned into one ``ServerSide`` per point.

``server_side(dialect, before, after)`` takes two scrapes (``adapter.scrape_metrics()``: flat
``name{labels}`` -> value) taken around a point and returns the engine's own account of it from the deltas.
Definitions per engine (also in docs/DEFINITIONS.md and the report's appendix):

- vLLM: ``prompt_tokens_total`` counts every prompt token, cached ones included; ``prefix_cache_hits_total``
  / ``prefix_cache_queries_total`` are tokens; prefill and decode seconds are per request
  (``request_prefill_time_seconds``, ``request_decode_time_seconds``), so under concurrency they overlap and
  the rates are per-request rates, not the engine's aggregate.
- llama.cpp: ``prompt_tokens_total`` counts only evaluated tokens; the reused prefix is
  ``prompt_tokens_cached_total``; ``prompt_seconds_total`` / ``tokens_predicted_seconds_total`` sum each
  slot's own prompt / generation time (slots that share a batch each count the whole step: per-slot time).
  Speculation: ``spec_decode_num_drafts_total``, ``..._num_draft_tokens_total``,
  ``..._num_accepted_tokens_total``, ``..._num_accepted_tokens_per_pos_total{position}``; the counters exist
  with or without speculation, so "configured" comes from ``/slots`` (``speculative: true``).
- SGLang: prompt and generation token counters only.

Speculation that is configured but proposed no draft in a point gives ``spec_drafts = 0`` and no rates.
"""

from __future__ import annotations

import math

from bench_tui.events import ServerSide

SPEC_COUNTERS = (
    "spec_decode_num_drafts_total",
    "spec_decode_num_draft_tokens_total",
    "spec_decode_num_accepted_tokens_total",
)
PER_POSITION = "spec_decode_num_accepted_tokens_per_pos_total"
LLAMA_SPECULATIVE_SLOTS = "llamacpp_slots:speculative"


def total(values: dict[str, float], name: str) -> float | None:
    """A metric summed over its label sets; None when the engine does not export it."""
    hit = [v for k, v in values.items() if k == name or k.startswith(name + "{")]
    return math.fsum(hit) if hit else None


def delta(before: dict[str, float], after: dict[str, float], name: str) -> float | None:
    """after - before of a metric summed over its label sets; None when the engine does not export it."""
    a, b = total(after, name), total(before, name)
    if a is None:
        return None
    return a - (b or 0.0)


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or not den:
        return None
    return num / den


def per_position(
    before: dict[str, float], after: dict[str, float], name: str, drafts: float | None
) -> list[float]:
    """Accepted tokens at each draft position / drafts, positions in order."""
    pos: dict[int, float] = {}
    for k, v in after.items():
        if k.startswith(name + "{") and 'position="' in k:
            try:
                i = int(k.split('position="', 1)[1].split('"', 1)[0])
            except ValueError:
                continue
            pos[i] = v - before.get(k, 0.0)
    if not pos or not drafts:
        return []
    return [pos[i] / drafts for i in sorted(pos)]


def add_speculation(
    sv: ServerSide, prefix: str, before: dict[str, float], after: dict[str, float], configured: bool
) -> ServerSide:
    """Fill the spec-decode fields. Configured but no drafts in the point: ``spec_drafts`` 0 and no rates."""
    drafts = delta(before, after, prefix + SPEC_COUNTERS[0])
    draft_toks = delta(before, after, prefix + SPEC_COUNTERS[1])
    acc = delta(before, after, prefix + SPEC_COUNTERS[2])
    if not drafts:
        if configured and drafts is not None:
            sv.spec_drafts, sv.spec_draft_tokens, sv.spec_accepted = 0.0, draft_toks or 0.0, acc or 0.0
        return sv
    sv.spec_drafts, sv.spec_draft_tokens, sv.spec_accepted = drafts, draft_toks, acc
    sv.spec_acceptance_rate = ratio(acc, draft_toks)
    sv.spec_acceptance_length = (1.0 + acc / drafts) if acc is not None else None
    sv.spec_per_position = per_position(before, after, prefix + PER_POSITION, drafts)
    return sv


def vllm_server_side(before: dict[str, float], after: dict[str, float]) -> ServerSide:
    def d(name: str) -> float | None:
        return delta(before, after, name)

    prompt, gen = d("vllm:prompt_tokens_total"), d("vllm:generation_tokens_total")
    hits, queries = d("vllm:prefix_cache_hits_total"), d("vllm:prefix_cache_queries_total")
    prefill_s = d("vllm:request_prefill_time_seconds_sum")
    evaluated = prompt - hits if prompt is not None and hits is not None else None
    configured = (
        total(after, "vllm:" + SPEC_COUNTERS[0]) is not None
    )  # vLLM exports them only when configured
    sv = ServerSide(
        source="vllm /metrics",
        prompt_tokens=prompt,
        generation_tokens=gen,
        prefill_tps=ratio(prompt, prefill_s),
        decode_tps=ratio(gen, d("vllm:request_decode_time_seconds_sum")),
        prefix_cache_hit_rate=ratio(hits, queries),
        prompt_tokens_cached=hits,
        prompt_tokens_evaluated=evaluated,
        evaluated_prefill_tps=ratio(evaluated, prefill_s),
        prefill_counts="all prompt tokens (cached included) / summed per-request prefill seconds",
        decode_time="summed per-request decode seconds (overlapping under concurrency)",
    )
    return add_speculation(sv, "vllm:", before, after, configured)


def llamacpp_server_side(before: dict[str, float], after: dict[str, float]) -> ServerSide:
    def d(name: str) -> float | None:
        return delta(before, after, name)

    evaluated, gen = d("llamacpp:prompt_tokens_total"), d("llamacpp:tokens_predicted_total")
    cached = d("llamacpp:prompt_tokens_cached_total")
    prompt_s = d("llamacpp:prompt_seconds_total")
    seen = evaluated is not None and cached is not None and (evaluated + cached) > 0
    configured = bool(total(after, LLAMA_SPECULATIVE_SLOTS)) or any(
        k.startswith("llamacpp:" + PER_POSITION) for k in after
    )
    sv = ServerSide(
        source="llamacpp /metrics",
        prompt_tokens=evaluated,
        generation_tokens=gen,
        prefill_tps=ratio(evaluated, prompt_s),
        decode_tps=ratio(gen, d("llamacpp:tokens_predicted_seconds_total")),
        prefix_cache_hit_rate=ratio(cached, (evaluated or 0.0) + (cached or 0.0)) if seen else None,
        prompt_tokens_cached=cached,
        prompt_tokens_evaluated=evaluated,
        evaluated_prefill_tps=ratio(evaluated, prompt_s),
        prefill_counts="evaluated prompt tokens only / summed per-slot prompt seconds",
        decode_time="summed per-slot generation seconds (each batched slot counts the whole step)",
    )
    return add_speculation(sv, "llamacpp:", before, after, configured)


def sglang_server_side(before: dict[str, float], after: dict[str, float]) -> ServerSide:
    def d(name: str) -> float | None:
        return delta(before, after, name)

    return ServerSide(
        source="sglang /metrics",
        prompt_tokens=d("sglang:prompt_tokens_total"),
        generation_tokens=d("sglang:generation_tokens_total"),
        prefill_counts="all prompt tokens (sglang:prompt_tokens_total)",
    )


def server_side(dialect: str, before: dict[str, float], after: dict[str, float]) -> ServerSide:
    """The engine's own account of a point from the scrapes around it (empty when the dialect is unknown)."""
    if dialect == "vllm" or (dialect in ("none", "sglang") and any(k.startswith("vllm:") for k in after)):
        return vllm_server_side(before, after)
    if dialect == "llamacpp" or any(k.startswith("llamacpp:") for k in after):
        return llamacpp_server_side(before, after)
    if dialect == "sglang":
        return sglang_server_side(before, after)
    return ServerSide()


def engine_stats(dialect: str, values: dict[str, float]) -> dict[str, float | None]:
    """Live gauges for the engine panel from one scrape: running and waiting requests, KV-cache usage (0..1)."""

    def first(*names: str) -> float | None:
        for n in names:
            v = total(values, n)
            if v is not None:
                return v
        return None

    if dialect == "llamacpp" or any(k.startswith("llamacpp:") for k in values):
        return {
            "running": first("llamacpp:requests_processing"),
            "waiting": first("llamacpp:requests_deferred"),
            "kv_usage": first("llamacpp:kv_cache_usage_ratio"),
        }
    return {
        "running": first("vllm:num_requests_running", "sglang:num_running_reqs"),
        "waiting": first("vllm:num_requests_waiting", "sglang:num_queue_reqs"),
        "kv_usage": first("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"),
    }


# ------------------------------------------------------------------------------------------- definitions

DECODE_GAP = 0.25  # client vs server decode rate disagreement that gets a flag

# One definitions table, per figure: what it counts on vLLM and on llama.cpp. docs/DEFINITIONS.md holds the same
# rows (a test keeps them in step) and every report ends with it.
DEFINITIONS: list[tuple[str, str, str]] = [
    (
        "server prompt tok",
        "vllm:prompt_tokens_total: every prompt token, cached ones included",
        "llamacpp:prompt_tokens_total: evaluated tokens only (the reused prefix is not counted)",
    ),
    (
        "cached prompt tok",
        "vllm:prefix_cache_hits_total (tokens found in the prefix cache)",
        "llamacpp:prompt_tokens_cached_total (tokens reused from the slot's or the prompt cache)",
    ),
    (
        "prefix-cache hit",
        "prefix_cache_hits_total / prefix_cache_queries_total (tokens); one cache shared by all requests",
        "cached / (cached + evaluated) prompt tokens; the cache is each slot's own (unless kv-unified / cache-ram), "
        "so a request placed on a slot that never saw the prefix evaluates it again: a warm sweep measured 80 % at "
        "c1, 60 % at c2, 51 % at c4",
    ),
    (
        "server prefill t/s (as counted)",
        "all prompt tokens / summed per-request prefill seconds (request_prefill_time_seconds): cached tokens "
        "count, so a warm prefix looks fast",
        "evaluated tokens / summed per-slot prompt seconds (prompt_seconds_total)",
    ),
    (
        "evaluated prefill t/s (comparable)",
        "(prompt tokens - cache hits) / summed per-request prefill seconds",
        "evaluated tokens / summed per-slot prompt seconds (the same as above)",
    ),
    (
        "server decode t/s",
        "generation tokens / summed per-request decode seconds (request_decode_time_seconds): a per-request rate; "
        "requests decoding together overlap",
        "tokens_predicted_total / tokens_predicted_seconds_total, both summed over requests as each finishes: a "
        "pooled per-slot rate. A slot's generation time runs from its first token to its last (the same span as "
        "the client's; per request llama.cpp's timings.predicted_per_second equals the client's decode t/s), but "
        "pooling weighs each request by its time: at c >= 2 a request that decodes while another slot's prompt is "
        "prefilled in the same steps crawls (measured at pp256 depth 1024 c2, one thread on a shared 2-core CPU: "
        "0.53, 3.99, 1.42 and 3.32 t/s per request; median 2.4, pooled 1.3 = the server's 1.3; at c4 median 3.2, "
        "server 1.2: 2.7x). Compare it with the client's pooled decode t/s (flag server-decode-differs)",
    ),
    (
        "spec-decode drafts / acceptance",
        "vllm:spec_decode_num_drafts_total, ..._num_draft_tokens_total, ..._num_accepted_tokens_total, "
        "..._num_accepted_tokens_per_pos_total{position}; only exported when speculation is configured",
        "llamacpp:spec_decode_* with the same names; exported with or without speculation, so 'configured' comes "
        "from /slots (speculative: true)",
    ),
    (
        "acceptance rate / length / per position",
        "accepted / draft tokens; 1 + accepted / drafts; accepted at position i / drafts",
        "the same formulas over llama.cpp's counters; a point with speculation on and no draft shows "
        "'0 drafts; acceptance n/a'",
    ),
    (
        "client prefill t/s",
        "prompt tokens / TTFT per request; under concurrency TTFT includes queueing behind the other requests' "
        "prefill (labelled so)",
        "the same",
    ),
    (
        "aggregate prefill t/s",
        "all prompt tokens of the requests sent together / (last first token - first send), summed over the "
        "repetitions: what the engine prefilled per second under that load",
        "the same",
    ),
    (
        "client decode t/s",
        "(output tokens - 1) / (t_last_token - t_first_token) per request, median over requests",
        "the same",
    ),
    (
        "client pooled decode t/s",
        "sum of (output tokens - 1) / sum of decode time over the requests: pooled like the server's counters",
        "the same",
    ),
]


def decode_disagreement(
    server_tps: float | None,
    client_median: float | None,
    client_pooled: float | None,
    dialect: str,
    concurrency: int,
) -> str | None:
    """``server-decode-differs:...`` with the likely cause when the server's decode rate and the client's median
    differ by more than DECODE_GAP; None when they agree (or one is missing)."""
    if not server_tps or not client_median:
        return None
    if abs(server_tps - client_median) / client_median <= DECODE_GAP:
        return None
    if client_pooled and abs(server_tps - client_pooled) / client_pooled <= DECODE_GAP / 2:
        cause = (
            f"pooling: the server divides all tokens by all decode time (the client's pooled rate is "
            f"{client_pooled:.1f} t/s too), the client shows the median request; requests that decoded "
            f"beside other requests' prefill were much slower than the rest"
        )
    elif dialect == "llamacpp" and concurrency > 1:
        cause = "llama.cpp times each slot from its first token; the client's stream disagrees beyond pooling"
    elif dialect == "vllm" and concurrency > 1:
        cause = "vLLM's per-request decode seconds include preemption and scheduling gaps the stream hides"
    else:
        cause = "the server's timer and the client's cover different spans (queueing, stream buffering)"
    return f"server-decode-differs:server {server_tps:.1f} vs client median {client_median:.1f} t/s ({cause})"

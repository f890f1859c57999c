"""Throughput points (llama-bench style): pp x tg x depth x concurrency x repetitions on one engine.

One point, as :func:`run_throughput_point` runs it:

1. prompt counting: the engine's tokenizer (``adapter.tokenize``) or, without one, a word estimate fitted
   on two probe requests; the server's own overhead (BOS, chat template) is measured once per engine and
   endpoint by a probe (``usage.prompt_tokens`` minus the counted length); probes are recorded as warm-up;
2. every prompt is built before anything is timed (``prompts.ThroughputPrompts``): ``depth + pp`` server
   tokens, cold = a unique nonce at the start of each prompt (plus ``adapter.reset_prefix_cache()`` before
   each repetition when the engine has one), warm = the same depth context for every request;
3. ``warmup`` requests (at least one priming request when warm), recorded with ``warmup=True``;
4. /metrics scraped (before), then each repetition fires ``concurrency`` requests at once, then /metrics
   (after); generation is pinned to ``tg`` tokens with ``max_tokens`` + ``ignore_eos`` (+ ``min_tokens``
   on vLLM/SGLang);
5. the records go through ``metrics.summarize``; failed requests make the point *degraded* (they are
   counted, never averaged in); the server's account (``ServerSide``) comes from the /metrics deltas and
   is compared with the client's token counts (flag ``server-disagrees`` over 10 %).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from bench_tui.engine_adapters import dialects, registry
from bench_tui.events import (
    Event,
    PlanPoint,
    PointSummary,
    RequestFinished,
    RequestRecord,
    ServerSide,
    ThroughputParams,
    request_id,
    stored_record,
)
from bench_tui.runner.transport.backends import aligned_window_s, worker_lag
from bench_tui.runner.transport.lag import client_limit_cause, gc_quiet
from bench_tui.runner.workloads import prompts as P

Emit = Callable[[Event], None]

DISAGREEMENT = 0.10


@dataclass
class PointEnv:
    """Everything a point needs from the executor (one engine variant, one event loop)."""

    point: PlanPoint
    workload: Any
    client: Any  # runner.client.StreamClient
    adapter: Any  # EngineAdapter
    model_id: str
    dialect: str
    emit: Emit
    attempt: int = 1
    sampling: Any = None  # spec Sampling
    gate: Callable[[], Awaitable[None]] | None = None  # waits while paused
    stop_reason: Callable[[], str | None] = lambda: None  # skipped | aborted | engine_crash
    scrape: Callable[[str], Awaitable[dict[str, float]]] | None = None  # phase -> /metrics values
    cache: dict[str, Any] = field(default_factory=dict)  # per engine variant (calibration)
    crash_check: Callable[[], bool] | None = None  # True when the engine process has died
    on_crash: Callable[[], None] | None = None  # tell the executor (stops the point)


@dataclass
class PointResult:
    summary: PointSummary
    flags: list[str]
    records: list[RequestRecord]  # measured (warm-up excluded)
    interrupted: str | None = None  # why it stopped early
    status: str = "ok"


def sampling_fields(sampling: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if sampling is None:
        return {"temperature": 0.0}
    out["temperature"] = sampling.temperature
    if sampling.seed is not None:
        out["seed"] = sampling.seed
    if sampling.top_p is not None:
        out["top_p"] = sampling.top_p
    return out


def payload(
    text: str,
    *,
    endpoint: str,
    model_id: str,
    max_tokens: int,
    dialect: str,
    sampling: Any,
    exact: bool = True,
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model_id, "max_tokens": max_tokens, **sampling_fields(sampling)}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": text}]
    else:
        body["prompt"] = text
    d = registry.dialect(dialect)
    if exact and d.exact_tg:
        body["ignore_eos"] = True
    if exact and d.min_tokens:
        body["min_tokens"] = max_tokens
    return body


async def send(
    env: PointEnv,
    body: dict[str, Any],
    tag: str,
    *,
    endpoint: str,
    warmup: bool = False,
    point_id: str | None = None,
    send_at_ns: int | None = None,  # an open loop's planned send time (runner monotonic ns)
) -> RequestRecord:
    pid = point_id or env.point.point_id
    rid = request_id(pid, env.attempt, tag)
    fn = env.client.chat if endpoint == "chat" else env.client.completions
    kw = {} if send_at_ns is None else {"send_at_ns": send_at_ns}
    rec: RequestRecord = await fn(body, request_id=rid, point_id=pid, emit=env.emit, **kw)
    if not rec.ok and rec.error_kind != "engine_crash":
        crashed = env.stop_reason() == "engine_crash"
        if (
            not crashed
            and env.crash_check is not None
            and rec.error_kind in ("stream", "connect", "cancelled")
        ):
            for _ in range(5):  # the process may take a moment to be reaped after its sockets closed
                if env.crash_check():
                    crashed = True
                    break
                await asyncio.sleep(0.1)
        if crashed:
            if env.on_crash is not None:
                env.on_crash()
            rec.error_kind = "engine_crash"
            rec.error = f"engine crashed during the request ({rec.error})" if rec.error else "engine crashed"
    env.emit(RequestFinished(record=stored_record(rec), warmup=warmup))
    return rec


# ----------------------------------------------------------------------------------------- calibration


@dataclass
class Counting:
    count: P.CountFn
    overhead: int
    method: str  # tokenizer | estimate


async def calibrate(env: PointEnv, endpoint: str) -> Counting:
    """How to count prompt tokens on this engine and endpoint (cached per engine variant)."""
    key = f"counting:{endpoint}"
    if key in env.cache:
        cached: Counting = env.cache[key]
        return cached
    count = None
    if env.adapter is not None and hasattr(env.adapter, "tokenize"):
        count = await asyncio.to_thread(P.counter_from_tokenize, env.adapter.tokenize)
    probe_words = P.filler_words(200, random.Random("probe"))
    texts = [" ".join(probe_words[:40]), " ".join(probe_words[:160])]
    usage: list[tuple[str, int]] = []
    for i, text in enumerate(texts if count is None else texts[:1]):
        body = payload(
            text,
            endpoint=endpoint,
            model_id=env.model_id,
            max_tokens=1,
            dialect=env.dialect,
            sampling=env.sampling,
            exact=False,
        )
        rec = await send(env, body, f"probe{endpoint}{i}", endpoint=endpoint, warmup=True)
        if rec.ok and rec.prompt_tokens:
            usage.append((text, rec.prompt_tokens))
    if count is not None:
        overhead = 0
        if usage:
            text, n = usage[0]
            overhead = max(0, n - await asyncio.to_thread(count, text))
        result = Counting(count, overhead, "tokenizer")
    elif len(usage) >= 1:
        est = P.WordEstimate.from_probes([(len(t.split()), n) for t, n in usage])
        result = Counting(est, int(round(est.overhead)), "estimate")
    else:
        est = P.WordEstimate()
        result = Counting(est, 0, "guess")
    env.cache[key] = result
    return result


# ----------------------------------------------------------------------------------------- server side


def server_side(dialect: str, before: dict[str, float], after: dict[str, float]) -> ServerSide:
    """The engine's own account of a point from the /metrics scrapes around it (engine_adapters.dialects)."""
    return registry.dialect(dialect).server_side(before, after)


def server_flags(server: ServerSide, records: list[RequestRecord], dialect: str) -> list[str]:
    """``server-disagrees:<what>`` when the server's token deltas differ from the client's by over 10 %."""
    flags: list[str] = []
    ok = [r for r in records if r.ok]
    if not ok or len(ok) != len(records):
        return flags  # failed requests leave partial server counts: no fair comparison
    gen_client = sum(r.output_tokens if r.output_tokens is not None else r.client_output_tokens for r in ok)
    if not registry.dialect(dialect).prompt_counts_cached:  # e.g. llama.cpp: only the tokens it evaluated
        prompt_client = sum((r.prompt_tokens or 0) - (r.cached_tokens or 0) for r in ok)
    else:
        prompt_client = sum(r.prompt_tokens or 0 for r in ok)
    for what, srv, cli in (
        ("prompt", server.prompt_tokens, prompt_client),
        ("generation", server.generation_tokens, gen_client),
    ):
        if srv is None or cli <= 0:
            continue
        if abs(srv - cli) / cli > DISAGREEMENT:
            flags.append(f"server-disagrees:{what} {srv:.0f} vs client {cli:.0f}")
    return flags


async def scrape(env: PointEnv, phase: str) -> dict[str, float] | None:
    if env.scrape is None:
        return None
    try:
        return await env.scrape(phase)
    except Exception:  # noqa: BLE001 - no metrics is a flag, not a failure
        return None


# ----------------------------------------------------------------------------------------- the point


def per_worker(summary: PointSummary, records: list[RequestRecord]) -> list[str]:
    """Per load worker (records that name one): requests, failures, worst loop lag, into
    ``summary.extra["workers"]``; returns the workers whose loop lag made them client-limited."""
    lags = worker_lag(records)
    if not lags:
        return []

    def typical(w: str) -> float:  # the worker's median per-request receive delay: behind, or one stall?
        vals = sorted(r.recv_delay_ms for r in records if r.worker == w and r.ok)
        return vals[len(vals) // 2] if vals else 0.0

    limited = sorted(
        w for w, lag in lags.items() if client_limit_cause(lag, typical(w), summary.itl_ms.median) == "client"
    )
    summary.extra["workers"] = {
        w: {
            "requests": sum(1 for r in records if r.worker == w),
            "failed": sum(1 for r in records if r.worker == w and not r.ok),
            "max_loop_lag_ms": round(lag, 3),
            "client_limited": w in limited,
        }
        for w, lag in sorted(lags.items())
    }
    if limited:
        summary.extra["client_limited_workers"] = limited
    return limited


def point_status(summary: PointSummary, flags: list[str]) -> str:
    if summary.requests and summary.ok == 0:
        return "failed"
    if summary.failed:
        flags.insert(0, f"degraded:{summary.failed}/{summary.requests} failed")
        return "degraded"
    return "ok"


async def _repetitions(
    env: PointEnv,
    reps: int,
    conc: int,
    cache: str,
    prompts: list[P.BuiltPrompt],
    body: Callable[[P.BuiltPrompt], dict[str, Any]],
    endpoint: str,
    records: list[RequestRecord],
    rep_info: list[dict[str, Any]],
    batches: list[list[RequestRecord]],
) -> None:
    """Each repetition fires ``conc`` requests at once; records, batches and per-repetition figures are appended."""
    for rep in range(reps):
        if env.gate is not None:
            await env.gate()
        if env.stop_reason():
            break
        if cache == "cold" and env.adapter is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(env.adapter.reset_prefix_cache)
        batch = prompts[rep * conc : (rep + 1) * conc]
        t0 = time.monotonic()
        recs = await asyncio.gather(
            *(send(env, body(p), f"r{rep}.{i}", endpoint=endpoint) for i, p in enumerate(batch))
        )
        dt = time.monotonic() - t0
        offsets = getattr(env.client, "clock_offsets_ns", None)
        if offsets:  # workers on other clocks: their windows aligned by the offsets measured at start
            dt = aligned_window_s(recs, offsets) or dt
        records.extend(recs)
        batches.append(list(recs))
        out = sum((r.output_tokens or r.client_output_tokens) for r in recs if r.ok)
        rep_info.append(
            {
                "rep": rep,
                "wall_s": dt,
                "ok": sum(r.ok for r in recs),
                "failed": sum(not r.ok for r in recs),
                "agg_tg_tps": out / dt if dt > 0 else None,
            }
        )


async def run_throughput_point(env: PointEnv) -> PointResult:
    from bench_tui.runner.workloads.metrics import agg_prefill_tps, context_full, stat, summarize

    pt = env.point
    assert isinstance(pt.params, ThroughputParams), pt.params
    prm = pt.params
    pp, tg, depth, conc, reps, cache, endpoint = (
        prm.pp,
        prm.tg,
        prm.depth,
        prm.concurrency,
        prm.repetitions,
        prm.cache,
        prm.endpoint,
    )
    flags: list[str] = []

    counting = await calibrate(env, endpoint)
    if counting.method != "tokenizer":
        flags.append("prompt-length-estimated")
    n_warm = max(prm.warmup, 1 if cache == "warm" else 0)
    seed = zlib.crc32(pt.point_id.encode()) & 0xFFFF

    def build_all() -> tuple[list[P.BuiltPrompt], list[P.BuiltPrompt]]:
        tp = P.ThroughputPrompts(
            counting.count, pp=pp, depth=depth, cache=cache, overhead=counting.overhead, seed=seed
        )
        return [tp.build() for _ in range(n_warm)], [tp.build() for _ in range(reps * conc)]

    warm_prompts, prompts = await asyncio.to_thread(build_all)
    if not all(p.exact for p in prompts):
        flags.append("prompt-length-approximate")

    def body(p: P.BuiltPrompt) -> dict[str, Any]:
        return payload(
            p.text,
            endpoint=endpoint,
            model_id=env.model_id,
            max_tokens=tg,
            dialect=env.dialect,
            sampling=env.sampling,
        )

    for i, p in enumerate(warm_prompts):
        if env.stop_reason():
            break
        await send(env, body(p), f"w{i}", endpoint=endpoint, warmup=True)

    before = await scrape(env, "before")
    records: list[RequestRecord] = []
    rep_info: list[dict[str, Any]] = []
    batches: list[list[RequestRecord]] = []
    with gc_quiet():
        await _repetitions(env, reps, conc, cache, prompts, body, endpoint, records, rep_info, batches)
    wall = sum(r["wall_s"] for r in rep_info)
    after = await scrape(env, "after")

    summary = summarize(records, wall_s=wall, cache=cache)
    summary.agg_prefill_tps = agg_prefill_tps(batches)
    summary.extra["reps"] = rep_info
    summary.extra["agg_tg_tps_over_reps"] = msgspec.to_builtins(
        stat(r["agg_tg_tps"] for r in rep_info if r["ok"] and r["agg_tg_tps"])
    )
    summary.extra["prompt_counting"] = counting.method
    summary.extra["server_overhead_tokens"] = counting.overhead
    ok = [r for r in records if r.ok]
    wrong_tg = [
        r for r in ok if (r.output_tokens if r.output_tokens is not None else r.client_output_tokens) != tg
    ]
    if wrong_tg:
        flags.append(f"tg-not-exact:{len(wrong_tg)}/{len(ok)}")
    full = [note for note in (context_full(r, tg) for r in ok) if note]
    if full:
        flags.append(
            f"{full[0]} in {len(full)}/{len(ok)} requests: a configuration error (raise the context)"
        )
    wrong_pp = [r for r in ok if r.prompt_tokens is not None and r.prompt_tokens != pp + depth]
    if wrong_pp:
        flags.append(f"pp-not-exact:{len(wrong_pp)}/{len(ok)}")
    limited_workers = per_worker(summary, records)
    if summary.client_limited:
        flags.append("client-limited:" + ",".join(limited_workers) if limited_workers else "client-limited")
    elif summary.client_limit_cause == "stall":
        flags.append(f"host-stall:{summary.max_loop_lag_ms:.0f} ms, every stream at once (client keeps up)")
    cached = sorted(r.cached_tokens for r in ok if r.cached_tokens)
    if cache == "cold" and cached:
        # the nonce starts the user text: only what the template puts before it can still be reused
        flags.append(f"cold-prefix-cached:{cached[len(cached) // 2]} tokens")
    if summary.token_disagreements:
        flags.append(f"token-disagreement:{summary.token_disagreements}")
    if before is not None and after is not None:
        summary.server = server_side(env.dialect, before, after)
        flags.extend(server_flags(summary.server, records, env.dialect))
        gap = dialects.decode_disagreement(
            summary.server.decode_tps, summary.decode_tps.median, summary.pooled_decode_tps, env.dialect, conc
        )
        if gap:
            flags.append(gap)
    elif env.dialect != "none":
        flags.append("no-server-metrics")
    result = PointResult(summary, flags, records, interrupted=env.stop_reason())
    result.status = point_status(summary, flags)
    return result

"""Speculative-decoding acceptance points: how often the draft is right, by kind of output.

A point is one content kind (``code``: write a program, ``json``: produce structured JSON, ``prose``: keep
writing filler prose) at one context depth, run ``runs`` times (one request at a time, chat endpoint,
``max_tokens = tg``; EOS is honoured: text after EOS would say nothing about real acceptance).

Sources, in order: the engine's counters (vLLM and llama.cpp both export ``spec_decode_num_drafts_total``,
``..._num_draft_tokens_total``, ``..._num_accepted_tokens_total``, ``..._num_accepted_tokens_per_pos_total{position}``;
engine_adapters.dialects) as /metrics deltas around the runs; else llama.cpp's per-request ``timings.draft_n`` /
``timings.draft_n_accepted`` (rate only).

- acceptance rate = accepted draft tokens / proposed draft tokens
- acceptance length = 1 + accepted / drafts (tokens produced per target-model step)
- per position i = accepted at position i / drafts

An engine that reports no speculative decoding gets the flag ``no speculative decoding reported`` and no
numbers (never zeros). An engine with speculation on that proposed nothing in the point (a JSON prompt gives an
n-gram drafter nothing to match) gets ``0 drafts; acceptance n/a``: drafts 0, no rate, and the point is shown.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bench_tui.events import AcceptanceParams, RequestRecord
from bench_tui.runner.workloads import prompts as P
from bench_tui.runner.workloads.sweep import (
    PointEnv,
    PointResult,
    calibrate,
    point_status,
    sampling_fields,
    scrape,
    send,
    server_side,
)

NO_SPEC = "no speculative decoding reported"
ZERO_DRAFTS = "0 drafts; acceptance n/a"


def timings_acceptance(records: list[RequestRecord]) -> dict[str, float] | None:
    """llama.cpp per-request draft counters summed over the records, None when absent."""
    drafted = accepted = 0.0
    seen = False
    for r in records:
        t = r.timings or {}
        if "draft_n" in t:
            seen = True
            drafted += float(t.get("draft_n") or 0)
            accepted += float(t.get("draft_n_accepted") or 0)
    if not seen:
        return None
    return {"draft_tokens": drafted, "accepted": accepted}


async def run_spec_acceptance_point(env: PointEnv) -> PointResult:
    from bench_tui.runner.workloads.metrics import context_full, summarize

    pt = env.point
    assert isinstance(pt.params, AcceptanceParams), pt.params
    content, depth, runs, tg = pt.params.content, pt.params.depth, pt.params.runs, pt.params.tg
    flags: list[str] = []

    context = ""
    if depth > 0:
        counting = await calibrate(env, "chat")
        count = counting.count if counting.method == "tokenizer" else None
        if count is None:
            flags.append("prompt-length-estimated")
        context = await asyncio.to_thread(P.context_text, count, depth, seed=depth)

    def body(run: int) -> dict[str, Any]:
        return {
            "model": env.model_id,
            "max_tokens": tg,
            **sampling_fields(env.sampling),
            "messages": [{"role": "user", "content": P.acceptance_prompt(content, run, context=context)}],
        }

    # one warm-up on a different task of the same kind (excluded)
    await send(env, body(runs + 7), "w0", endpoint="chat", warmup=True)
    before = await scrape(env, "before")
    records: list[RequestRecord] = []
    wall = 0.0
    loop = asyncio.get_running_loop()
    for run in range(runs):
        if env.gate is not None:
            await env.gate()
        if env.stop_reason():
            break
        t0 = loop.time()
        records.append(await send(env, body(run), f"r{run}", endpoint="chat"))
        wall += loop.time() - t0
    after = await scrape(env, "after")

    summary = summarize(records, wall_s=wall)
    server = server_side(env.dialect, before, after) if before is not None and after is not None else None
    if server is not None:
        summary.server = server
    acc_source = ""
    if server is not None and server.spec_drafts is not None:
        acc_source = "server /metrics"
    else:
        t = timings_acceptance([r for r in records if r.ok])
        if t is not None:
            acc_source = "llama.cpp timings"
            summary.server.spec_draft_tokens = t["draft_tokens"]
            summary.server.spec_accepted = t["accepted"]
            summary.server.spec_acceptance_rate = (
                t["accepted"] / t["draft_tokens"] if t["draft_tokens"] else None
            )
            if not t["draft_tokens"]:
                summary.server.spec_drafts = 0.0
            # llama.cpp's timings do not count draft rounds: no acceptance length or per position from them
    if acc_source:
        sv = summary.server
        zero = sv.spec_drafts == 0
        summary.extra["acceptance_source"] = acc_source
        summary.extra["acceptance"] = {
            "drafts": sv.spec_drafts,
            "draft_tokens": sv.spec_draft_tokens,
            "accepted": sv.spec_accepted,
            "rate": sv.spec_acceptance_rate,
            "length": sv.spec_acceptance_length,
            "per_position": sv.spec_per_position,
        }
        if zero:
            flags.append(ZERO_DRAFTS)
    else:
        flags.append(NO_SPEC)
    full = [note for note in (context_full(r, tg) for r in records if r.ok) if note]
    if full:
        flags.append(
            f"{full[0]} in {len(full)}/{len(records)} requests: a configuration error (raise the context)"
        )
    if summary.client_limited:
        flags.append("client-limited")
    result = PointResult(summary, flags, records, interrupted=env.stop_reason())
    result.status = point_status(summary, flags)
    return result

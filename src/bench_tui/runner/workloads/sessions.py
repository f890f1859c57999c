"""Sessions points: agent-like multi-turn sessions on a seeded schedule, judged against an SLO.

One point, as :func:`run_sessions_point` runs it:

1. the schedule: session start times from the arrival process (open loop: ``constant`` gaps of 1/rate,
   ``poisson`` exponential gaps, ``gamma`` gaps with shape ``burstiness``; seeded), or ``concurrency`` sessions
   at a time (closed loop); within a session, turn k+1 is due ``think`` seconds after turn k's answer (a
   trace's own ``delay`` wins); think times are drawn per session from the seed, so the plan does not depend
   on the order answers arrive in;
2. each turn is handed to the transport with its due time (``send_at_ns``: it waits on a loop timer and
   writes then; the pack source's scenario loop hands it over just before) and every latency counts from that
   *scheduled* time (TTFT = first token − due, e2e = done − due): a client that sends late cannot hide the
   server's queueing (no coordinated omission). How late each send went out is recorded (``SessionTurn.lateness_ms``); a p99 over
   ``CLIENT_LIMITED_MS`` marks the point client-limited;
3. sources: ``synthetic`` (completions; turn k+1's prompt is turn k's prompt + its answer + new input, so
   the prefix is shared token for token, and every session starts with the same shared prefix), ``pack``
   (each session is one scenario conversation run by the scenario loop, tools answered from its mocks, graded
   as usual), ``trace`` (Mooncake JSONL: prompt blocks from hash ids, so equal ids are equal text) and
   ``conversations`` (ShareGPT: chat with the model's own answers in the history);
4. the point: offered vs achieved rate, send lateness, stability (a backlog growing through the point is
   "unstable above capacity" and no latency figure is claimed for it), goodput (requests and sessions per
   second meeting every SLO), SLO attainment with a Wilson interval, TTFT/ITL/e2e overall and per turn,
   context tokens and prefix-cache hit per turn (the engine's own per-request counts) beside the ideal hit
   the workload implies, and the engine's waiting queue sampled about twice a second;
5. with ``search`` the point tries rates at run time (both ends, then bisection on a log scale until the
   bracket is within ``resolution_pct``) and reports the highest rate that met the SLO while stable, with
   every rate it tried.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.catalogue import output_tokens
from bench_tui.engine_adapters import registry
from bench_tui.events import (
    PointSummary,
    RequestRecord,
    ScenarioParams,
    SessionsParams,
    SessionTurn,
    Stat,
)
from bench_tui.graders.pack import Pack, Scenario, load_pack
from bench_tui.runner.workloads import sessions_source as S
from bench_tui.runner.workloads.metrics import quantile, stat
from bench_tui.runner.workloads.prompts import VOCAB
from bench_tui.runner.workloads.scenarios import _Run, select_scenarios
from bench_tui.runner.workloads.sweep import (
    PointEnv,
    PointResult,
    payload,
    point_status,
    sampling_fields,
    scrape,
    send,
    server_side,
)
from bench_tui.spec.schema import Sampling

CLIENT_LIMITED_MS = 10.0  # p99 send lateness beyond this: the client could not keep the schedule
QUEUE_SAMPLE_S = 0.5
SESSION_LEAD_NS = 100_000_000  # a session starts preparing this long before its first turn is due
SEND_LEAD_NS = 20_000_000  # a pack turn reaches the transport this long before it is due
SLO_METRICS = ("ttft_ms", "itl_ms", "e2e_s")
Z95 = 1.959963984540054


# ------------------------------------------------------------------------------------------------ schedule


def arrival_offsets(
    process: str, rate: float, n: int, rng: random.Random, burstiness: float = 1.0
) -> list[float]:
    """Seconds from the point's start at which each of ``n`` sessions starts (the first at 0)."""
    out = [0.0]
    t = 0.0
    for _ in range(n - 1):
        if process == "constant":
            gap = 1.0 / rate
        elif process == "poisson":
            gap = rng.expovariate(rate)
        else:  # gamma: mean 1/rate, shape = burstiness (1 = Poisson; below 1 burstier, above smoother)
            gap = rng.gammavariate(burstiness, 1.0 / (rate * burstiness))
        t += gap
        out.append(t)
    return out


def think_s(rng: random.Random, dist: str, mean: float) -> float:
    if mean <= 0:
        return 0.0
    return rng.expovariate(1.0 / mean) if dist == "exponential" else mean


def session_rng(prm: SessionsParams, trial: int, session: int) -> random.Random:
    return random.Random(f"sessions-{prm.seed}-{trial}-{session}")


# ------------------------------------------------------------------------------------------------ the driver


@dataclass
class TurnResult:
    session: int
    turn: int
    t_due_ns: int
    record: RequestRecord
    ideal_cached: int | None = None
    last: bool = False


@dataclass
class _Trial:
    """One run of the schedule at one rate (a point, or one rate tried by the search)."""

    env: PointEnv
    prm: SessionsParams
    trial: int
    rate: float | None
    t0_ns: int = 0
    turns: list[TurnResult] = field(default_factory=list)
    session_starts: dict[int, int] = field(default_factory=dict)  # session -> due ns of its first turn
    sessions_done: set[int] = field(default_factory=set)
    sessions_failed: set[int] = field(default_factory=set)

    async def at(self, due_ns: int) -> None:
        """Wait until ``due_ns`` (runner monotonic ns): a session's preparation; its requests hand their due
        time to the transport (``send_at_ns``)."""
        delay = (due_ns - time.monotonic_ns()) / 1e9
        if delay > 0:
            await asyncio.sleep(delay)

    @staticmethod
    def planned(rec: RequestRecord, due_ns: int) -> int:
        """The scheduled time on the clock of the record's anchors (a Ray worker's differs from the runner's;
        the transport translates the plan and keeps it in ``t_scheduled_ns``)."""
        return rec.t_scheduled_ns if rec.t_scheduled_ns is not None else due_ns

    @staticmethod
    def next_due(rec: RequestRecord, due_ns: int, wait_s: float) -> int:
        """The next turn's due time on the runner's clock: this answer's end (translated back from the
        worker's clock) + ``wait_s``."""
        offset = (rec.t_scheduled_ns - due_ns) if rec.t_scheduled_ns is not None else 0
        end = rec.t_done_ns - offset if rec.t_done_ns else time.monotonic_ns()
        return end + int(wait_s * 1e9)

    def done(self, tr: TurnResult) -> None:
        rec = tr.record
        tr.t_due_ns = self.planned(rec, tr.t_due_ns)  # from here on: the clock of the record's anchors
        self.turns.append(tr)
        if tr.turn == 1:
            self.session_starts.setdefault(tr.session, tr.t_due_ns)
        if not rec.ok:
            self.sessions_failed.add(tr.session)
        if tr.last or not rec.ok:
            self.sessions_done.add(tr.session)
        self.env.emit(
            SessionTurn(
                point_id=self.env.point.point_id,
                request_id=rec.request_id,
                session=tr.session,
                turn=tr.turn,
                t_scheduled_ns=tr.t_due_ns,
                lateness_ms=round((rec.t_send_ns - tr.t_due_ns) / 1e6, 3) if rec.t_send_ns else 0.0,
                context_tokens=rec.prompt_tokens,
                ideal_cached_tokens=tr.ideal_cached,
                trial=self.trial,
                rate=self.rate,
                last=tr.last or not rec.ok,
            )
        )

    async def send_turn(
        self, session: int, turn: int, body: dict[str, Any], endpoint: str, due_ns: int
    ) -> RequestRecord:
        tag = f"x{self.trial}.s{session}.t{turn}"
        return await send(self.env, body, tag, endpoint=endpoint, send_at_ns=due_ns)


SessionFn = Callable[[_Trial, int, int], Awaitable[None]]  # (trial, session index, due ns of its first turn)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def _joined(prompt: str, answer: str) -> str:
    """The prompt followed by its answer as generated. A space goes between them only when neither side has
    one (a server whose answer starts mid-word would otherwise glue two words; real models start with one)."""
    if prompt and answer and not prompt[-1].isspace() and not answer[0].isspace():
        return prompt + " " + answer
    return prompt + answer


def _ideal(prev: RequestRecord | None, rec: RequestRecord) -> int | None:
    """Tokens of ``rec``'s prompt already sent in the session's previous request (its prompt and answer)."""
    if prev is None or prev.prompt_tokens is None or rec.prompt_tokens is None:
        return None
    return min(rec.prompt_tokens, prev.prompt_tokens + output_tokens(prev))


def synthetic_session(prm: SessionsParams) -> SessionFn:
    shared = _words(random.Random(f"shared-prefix-{prm.seed}"), prm.shared_prefix_tokens)

    async def run(tr: _Trial, i: int, due: int) -> None:
        rng = session_rng(prm, tr.trial, i)
        prompt = (shared + "\n" if shared else "") + _words(rng, prm.input_tokens)
        prev: RequestRecord | None = None
        env = tr.env
        for k in range(prm.turns):
            body = payload(
                prompt,
                endpoint="completions",
                model_id=env.model_id,
                max_tokens=prm.output_tokens,
                dialect=env.dialect,
                sampling=env.sampling,
            )
            rec = await tr.send_turn(i, k + 1, body, "completions", due)
            if k == 0:
                ideal = 0 if i == 0 else None  # the point's first session has nothing to share yet
                if shared and rec.prompt_tokens and i > 0:  # the shared prefix's share, in server tokens
                    words = len(prompt.split())
                    ideal = round(rec.prompt_tokens * prm.shared_prefix_tokens / max(1, words))
            else:
                ideal = _ideal(prev, rec)
            last = k == prm.turns - 1
            tr.done(TurnResult(i, k + 1, due, rec, ideal, last))
            if not rec.ok or last:
                return
            prompt = _joined(prompt, rec.content) + "\n" + _words(rng, prm.input_tokens)
            prev = rec
            due = tr.next_due(rec, due, think_s(rng, prm.think_dist, prm.think_mean_s))

    return run


def trace_session(prm: SessionsParams, sessions: list[S.TraceSession]) -> SessionFn:
    seen: set[int] = set()

    async def run(tr: _Trial, i: int, due: int) -> None:
        sess = sessions[i % len(sessions)]
        rng = session_rng(prm, tr.trial, i)
        env = tr.env
        for k, line in enumerate(sess.turns):
            text = S.trace_prompt(line, f"{prm.seed}-{tr.trial}-{i}-{k}")
            lead = 0
            for h in line.hash_ids:
                if h not in seen:
                    break
                lead += 1
            seen.update(line.hash_ids)
            body = payload(
                text,
                endpoint="completions",
                model_id=env.model_id,
                max_tokens=line.output_length,
                dialect=env.dialect,
                sampling=env.sampling,
            )
            rec = await tr.send_turn(i, k + 1, body, "completions", due)
            ideal = min(line.input_length, lead * S.TRACE_BLOCK_TOKENS)
            if rec.prompt_tokens:  # in server tokens
                ideal = round(rec.prompt_tokens * ideal / line.input_length)
            last = k == len(sess.turns) - 1
            tr.done(TurnResult(i, k + 1, due, rec, ideal, last))
            if not rec.ok or last:
                return
            nxt = sess.turns[k + 1]
            wait = (
                nxt.delay / 1000.0
                if nxt.delay is not None
                else think_s(rng, prm.think_dist, prm.think_mean_s)
            )
            due = tr.next_due(rec, due, wait)

    return run


def conversation_session(prm: SessionsParams, convs: list[S.ShareGptConversation]) -> SessionFn:
    async def run(tr: _Trial, i: int, due: int) -> None:
        conv = convs[i % len(convs)]
        rng = session_rng(prm, tr.trial, i)
        env = tr.env
        messages: list[dict[str, Any]] = []
        turns = conv.conversations
        users = [j for j, t in enumerate(turns) if t.sender == "human"]
        prev: RequestRecord | None = None
        for k, j in enumerate(users):
            for t in turns[(users[k - 1] + 1) if k else 0 : j]:
                if t.sender == "system":
                    messages.append({"role": "system", "content": t.value})
            messages.append({"role": "user", "content": turns[j].value})
            ref = next((t.value for t in turns[j + 1 :] if t.sender == "gpt"), "")
            max_tokens = max(1, min(_reply_cap(env, prm), int(len(ref.split()) * 1.3) + 1))
            body = {
                "model": env.model_id,
                "messages": list(messages),
                "max_tokens": max_tokens,
                **sampling_fields(env.sampling),
            }
            rec = await tr.send_turn(i, k + 1, body, "chat", due)
            last = k == len(users) - 1
            tr.done(TurnResult(i, k + 1, due, rec, _ideal(prev, rec), last))
            if not rec.ok or last:
                return
            messages.append({"role": "assistant", "content": rec.content})
            prev = rec
            due = tr.next_due(rec, due, think_s(rng, prm.think_dist, prm.think_mean_s))

    return run


class _PackRun(_Run):
    """The scenario loop for one session: each assistant request waits for its due time (the session's start,
    then the previous answer + think time) and is recorded as a session turn."""

    def __init__(self, tr: _Trial, session: int, due: int, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.tr, self.session, self.due, self.turn = tr, session, due, 1
        self.rng = session_rng(tr.prm, tr.trial, session)
        self.prev: RequestRecord | None = None

    async def _chat(self, payload_: dict[str, Any], rid: str, send_at_ns: int | None = None) -> RequestRecord:
        # wait here until just before the due time (a think time can be long), then the transport sends on
        # time and keeps the plan on the record's clock, as for every other source: on a remote worker the
        # runner's due time would be off by the clock offset
        await self.tr.at(self.due - SEND_LEAD_NS)
        rec = await super()._chat(payload_, rid, send_at_ns=self.due)
        self.tr.done(TurnResult(self.session, self.turn, self.due, rec, _ideal(self.prev, rec), False))
        self.prev = rec
        self.turn += 1
        prm = self.tr.prm
        self.due = self.tr.next_due(rec, self.due, think_s(self.rng, prm.think_dist, prm.think_mean_s))
        return rec


def _reply_cap(env: PointEnv, prm: SessionsParams) -> int:
    """Reply length bound of pack and conversation turns: the spec's sampling.max_tokens, else the default."""
    cap = getattr(env.sampling, "max_tokens", None)
    return int(cap) if cap else prm.max_tokens


def pack_session(prm: SessionsParams, pack: Pack, scenarios: list[Scenario]) -> SessionFn:
    async def run(tr: _Trial, i: int, due: int) -> None:
        env = tr.env
        sp = ScenarioParams(
            pack=prm.source_ref,
            subset=prm.subset,
            max_tokens=_reply_cap(env, prm),
            request_timeout=prm.request_timeout,
            idle_timeout=prm.idle_timeout,
        )
        sc = scenarios[i % len(scenarios)]
        one = _PackRun(
            tr,
            i,
            due,
            env.point,
            sp,
            pack,
            client=env.client,
            model_id=env.model_id,
            sampling=env.sampling or Sampling(),
            emit=env.emit,
        )
        await one.conversation(sc, tr.trial * 1_000_000 + i)  # graded as the scenario points are
        tr.sessions_done.add(i)  # a pack session's end is known only here (its ScenarioGraded)

    return run


def session_fn(prm: SessionsParams, spec_dir: Path | str | None) -> SessionFn:
    if prm.source == "synthetic":
        return synthetic_session(prm)
    path = S.resolve(prm.source_ref, spec_dir)
    if prm.source == "trace":
        return trace_session(prm, S.trace_sessions(path, prm.sessions))
    if prm.source == "conversations":
        return conversation_session(prm, S.read_conversations(path, prm.sessions))
    pack = load_pack(prm.source_ref, spec_dir)
    return pack_session(
        prm, pack, select_scenarios(pack, ScenarioParams(pack=prm.source_ref, subset=prm.subset))
    )


async def run_trial(
    env: PointEnv, prm: SessionsParams, fn: SessionFn, rate: float | None, trial: int
) -> _Trial:
    """Run ``prm.sessions`` sessions at ``rate`` (open loop) or ``prm.concurrency`` at a time (closed loop)."""
    tr = _Trial(env, prm, trial, rate)
    tr.t0_ns = time.monotonic_ns() + SESSION_LEAD_NS  # the first session prepares before it is due

    async def guarded(i: int, due: int) -> None:
        await tr.at(
            due - SESSION_LEAD_NS
        )  # a session's prompt is built shortly before it is due, not all at once
        if env.stop_reason():
            return
        await fn(tr, i, due)

    if rate is not None and not prm.closed_loop:
        offsets = arrival_offsets(
            prm.process, rate, prm.sessions, random.Random(f"arrivals-{prm.seed}-{trial}"), prm.burstiness
        )
        await asyncio.gather(*(guarded(i, tr.t0_ns + int(o * 1e9)) for i, o in enumerate(offsets)))
    else:
        nxt = iter(range(prm.sessions))

        async def worker() -> None:
            for i in nxt:
                if env.stop_reason():
                    return
                await guarded(i, time.monotonic_ns())

        await asyncio.gather(*(worker() for _ in range(max(1, prm.concurrency))))
    return tr


# ------------------------------------------------------------------------------------------------ figures


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (written out: five lines, no library needed)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def request_values(tr: TurnResult) -> dict[str, float | None]:
    """The SLO metrics of one request, latencies from its scheduled time; None when it has none."""
    rec = tr.record
    if not rec.ok:
        return {m: None for m in SLO_METRICS}
    ttft = (rec.t_first_token_ns - tr.t_due_ns) / 1e6 if rec.t_first_token_ns else None
    n = output_tokens(rec)
    itl = 0.0
    if n > 1 and rec.t_last_token_ns and rec.t_first_token_ns:
        itl = (rec.t_last_token_ns - rec.t_first_token_ns) / 1e6 / (n - 1)
    e2e = (rec.t_done_ns - tr.t_due_ns) / 1e9 if rec.t_done_ns else None
    return {"ttft_ms": ttft, "itl_ms": itl, "e2e_s": e2e}


def meets(values: dict[str, float | None], slo: dict[str, dict[str, float]]) -> bool:
    """A request meets the SLO when each named metric is within every target given for it (a failed request
    or a missing value never does)."""
    for metric, targets in slo.items():
        v = values.get(metric)
        if targets and (v is None or any(v > t for t in targets.values())):
            return False
    return True


def slo_attainment(turns: list[TurnResult], slo: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Per target: attainment (share of requests within it) with its Wilson 95 % interval, the observed
    percentile, and whether the target is met (attainment >= the percentile's share)."""
    out: dict[str, Any] = {}
    vals = [request_values(t) for t in turns]
    for metric, targets in slo.items():
        mine = [v[metric] for v in vals]
        got = sorted(x for x in mine if x is not None)
        for pct, target in targets.items():
            share = float(pct[1:]) / 100.0
            k = sum(1 for x in mine if x is not None and x <= target)
            n = len(vals)
            lo, hi = wilson(k, n)
            observed = None
            if got and len(got) == n:
                observed = quantile(got, share)
            out[f"{metric}.{pct}"] = {
                "target": target,
                "observed": observed,  # None when some requests failed: they have no value
                "attainment": k / n if n else None,
                "ci_low": lo,
                "ci_high": hi,
                "met": n > 0 and k / n >= share,
            }
    return out


def backlog_growing(turns: list[TurnResult]) -> tuple[bool, list[float]]:
    """Requests due but not answered, averaged over each quarter of the arrival window (the span of the
    sessions' first turns). Growing through the point (each quarter above the one before from the second on,
    the last at least 1.5 x the second + 1) means arrivals outpace the server: unstable above capacity."""
    if len(turns) < 8:
        return False, []
    starts = sorted(t.t_due_ns for t in turns if t.turn == 1)
    if len(starts) < 8:
        return False, []
    due = sorted(t.t_due_ns for t in turns)
    done = sorted(t.record.t_done_ns or t.t_due_ns for t in turns)
    t0, t1 = starts[0], starts[-1]
    if t1 <= t0:
        return False, []
    samples = 200
    quarters: list[list[float]] = [[], [], [], []]
    for s in range(samples):
        t = t0 + (t1 - t0) * s / (samples - 1)
        q = min(3, int(4 * s / samples))
        quarters[q].append(bisect.bisect_right(due, t) - bisect.bisect_right(done, t))
    means = [sum(q) / len(q) for q in quarters]
    growing = means[1] < means[2] < means[3] and means[3] >= 1.5 * means[1] + 1
    return growing, [round(m, 2) for m in means]


def _rate(times_ns: list[int]) -> float | None:
    ts = sorted(times_ns)
    if len(ts) < 2 or ts[-1] <= ts[0]:
        return None
    return (len(ts) - 1) / ((ts[-1] - ts[0]) / 1e9)


def _stat_d(values: list[float | None]) -> dict[str, Any]:
    return msgspec.to_builtins(stat(values))  # type: ignore[no-any-return]


def per_turn(turns: list[TurnResult]) -> list[dict[str, Any]]:
    out = []
    for k in sorted({t.turn for t in turns}):
        mine = [t for t in turns if t.turn == k]
        ok = [t for t in mine if t.record.ok]
        vals = [request_values(t) for t in ok]
        prompt = sum(t.record.prompt_tokens or 0 for t in ok if t.record.prompt_tokens)
        with_cache = [t for t in ok if t.record.cached_tokens is not None and t.record.prompt_tokens]
        cached = sum(t.record.cached_tokens or 0 for t in with_cache)
        cache_prompt = sum(t.record.prompt_tokens or 0 for t in with_cache)
        ideal = [t for t in ok if t.ideal_cached is not None and t.record.prompt_tokens]
        out.append(
            {
                "turn": k,
                "requests": len(mine),
                "failed": len(mine) - len(ok),
                "ttft_ms": _stat_d([v["ttft_ms"] for v in vals]),
                "itl_ms": _stat_d([v["itl_ms"] for v in vals]),
                "e2e_s": _stat_d([v["e2e_s"] for v in vals]),
                "context_tokens": _stat_d(
                    [float(t.record.prompt_tokens) for t in ok if t.record.prompt_tokens]
                ),
                "prompt_tokens": prompt,
                "cached_tokens": cached if with_cache else None,
                # the engine's own per-request counts (llama.cpp timings cache_n, usage cached_tokens)
                "cache_hit": cached / cache_prompt if cache_prompt else None,
                "ideal_hit": (
                    sum(t.ideal_cached or 0 for t in ideal) / sum(t.record.prompt_tokens or 0 for t in ideal)
                    if ideal
                    else None
                ),
            }
        )
    return out


def trial_figures(tr: _Trial, queue: list[tuple[int, float | None, float | None]]) -> dict[str, Any]:
    """Everything measured about one trial (the point's ``extra["sessions"]``)."""
    prm = tr.prm
    turns = tr.turns
    ok = [t for t in turns if t.record.ok]
    late = [(t.record.t_send_ns - t.t_due_ns) / 1e6 for t in turns if t.record.t_send_ns]
    first = [t for t in turns if t.turn == 1]
    ends = [t.record.t_done_ns for t in turns if t.record.t_done_ns]
    begin = min((t.t_due_ns for t in turns), default=tr.t0_ns)
    span_s = (max(ends) - begin) / 1e9 if ends else 0.0
    lat_stat = stat(late)
    client_limited = bool(late) and (lat_stat.p99 or 0.0) > CLIENT_LIMITED_MS
    growing, quarters = backlog_growing(turns) if not prm.closed_loop else (False, [])
    slo = prm.slo
    good = [t for t in ok if meets(request_values(t), slo)]
    good_sessions = {
        t.session for t in turns if t.session in tr.sessions_done and t.session not in tr.sessions_failed
    }
    bad_sessions = {t.session for t in turns if not meets(request_values(t), slo)}
    att = slo_attainment(turns, slo) if slo else {}
    waiting = [w for _, w, _ in queue if w is not None]
    figures: dict[str, Any] = {
        "source": prm.source,
        "process": None if prm.closed_loop else prm.process,
        "closed_loop": prm.closed_loop,
        "concurrency": prm.concurrency if prm.closed_loop else None,
        "offered_rate": tr.rate,  # sessions started per second, as asked
        "scheduled_rate": _rate(list(tr.session_starts.values())),  # the seeded plan's own rate
        "achieved_rate": _rate([t.record.t_send_ns for t in first if t.record.t_send_ns]),  # first sends
        "request_rate": _rate([t.record.t_send_ns for t in turns if t.record.t_send_ns]),
        "completion_rate": len(ok) / span_s if span_s > 0 else None,
        "sessions": len({t.session for t in turns}),
        "sessions_completed": len(good_sessions),
        "requests": len(turns),
        "failed": len(turns) - len(ok),
        "span_s": round(span_s, 4),
        "lateness_ms": msgspec.to_builtins(lat_stat),
        "client_limited": client_limited,
        "stable": None if prm.closed_loop else not growing,
        "backlog_quarters": quarters,
        "slo": att,
        "slo_met": (all(a["met"] for a in att.values()) if att else None),
        "goodput_rps": (len(good) / span_s if span_s > 0 else None) if slo else None,
        "goodput_sessions_ps": (len(good_sessions - bad_sessions) / span_s if span_s > 0 else None)
        if slo
        else None,
        "per_turn": per_turn(turns),
        "queue": {
            "samples": len(queue),
            "waiting_max": max(waiting) if waiting else None,
            "waiting_mean": sum(waiting) / len(waiting) if waiting else None,
            "series": [[round((t - begin) / 1e9, 3), w, r] for t, w, r in queue[-400:]],
        },
    }
    with_cache = [t for t in ok if t.record.cached_tokens is not None and t.record.prompt_tokens]
    if with_cache:
        figures["cache_hit"] = sum(t.record.cached_tokens or 0 for t in with_cache) / sum(
            t.record.prompt_tokens or 0 for t in with_cache
        )
    ideal = [t for t in ok if t.ideal_cached is not None and t.record.prompt_tokens]
    if ideal:
        figures["ideal_hit"] = sum(t.ideal_cached or 0 for t in ideal) / sum(
            t.record.prompt_tokens or 0 for t in ideal
        )
    return figures


def passes(fig: dict[str, Any]) -> bool:
    """A rate the server sustains: every SLO target met, the backlog not growing, no request failed."""
    return bool(fig.get("slo_met")) and fig.get("stable") is not False and not fig.get("failed")


# ------------------------------------------------------------------------------------------------ the point


async def _sample_queue(env: PointEnv, out: list[tuple[int, float | None, float | None]]) -> None:
    adapter = env.adapter
    if adapter is None or env.dialect == "none" or not hasattr(adapter, "scrape_metrics"):
        return
    d = registry.dialect(env.dialect)
    while True:
        try:
            values = await asyncio.to_thread(adapter.scrape_metrics)
            st = d.engine_stats(values)
            out.append((time.monotonic_ns(), st.get("waiting"), st.get("running")))
        except Exception:  # noqa: BLE001 - a missed sample is only a gap in the series
            pass
        await asyncio.sleep(QUEUE_SAMPLE_S)


async def _measured(
    env: PointEnv, prm: SessionsParams, fn: SessionFn, rate: float | None, trial: int
) -> tuple[_Trial, dict[str, Any]]:
    queue: list[tuple[int, float | None, float | None]] = []
    sampler = asyncio.create_task(_sample_queue(env, queue))
    try:
        tr = await run_trial(env, prm, fn, rate, trial)
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
    return tr, trial_figures(tr, queue)


async def max_rate_search(
    env: PointEnv, prm: SessionsParams, fn: SessionFn
) -> tuple[_Trial | None, dict[str, Any] | None, list[dict[str, Any]], float | None]:
    """Try ``low``, ``high``, then the geometric middle of the bracket until it is within ``resolution_pct``;
    returns the knee's trial and figures, every rate tried, and the knee (None: even ``low`` failed)."""
    assert prm.search is not None
    low, high, res = prm.search
    tried: list[dict[str, Any]] = []
    best: tuple[_Trial, dict[str, Any]] | None = None
    n = 0

    async def attempt(rate: float) -> bool:
        nonlocal n, best
        tr, fig = await _measured(env, prm, fn, rate, n)
        n += 1
        ok = passes(fig)
        tried.append(
            {
                "rate": rate,
                "passed": ok,
                "slo_met": fig["slo_met"],
                "stable": fig["stable"],
                "failed": fig["failed"],
                "goodput_rps": fig["goodput_rps"],
                "client_limited": fig["client_limited"],
                "ttft_ms_p90": fig["per_turn"][0]["ttft_ms"].get("p90") if fig["per_turn"] else None,
            }
        )
        if ok and (best is None or rate > (best[1]["offered_rate"] or 0)):
            best = (tr, fig)
        return ok

    knee: float | None = None
    if await attempt(low) and not env.stop_reason():
        if await attempt(high):
            knee = high
        else:
            lo, hi = low, high
            while (hi - lo) / lo * 100.0 > res and not env.stop_reason():
                mid = math.sqrt(lo * hi)
                if await attempt(mid):
                    lo = mid
                else:
                    hi = mid
            knee = lo
    if best is None:
        return None, None, tried, knee
    return best[0], best[1], tried, knee


def _summary(tr: _Trial, fig: dict[str, Any]) -> PointSummary:
    ok = [t for t in tr.turns if t.record.ok]
    vals = [request_values(t) for t in ok]
    stable = fig.get("stable") is not False
    s = PointSummary(
        requests=len(tr.turns),
        ok=len(ok),
        failed=len(tr.turns) - len(ok),
        wall_s=fig["span_s"],
        # latencies from the scheduled send time; none claimed for an unstable point
        ttft_ms=stat(v["ttft_ms"] for v in vals) if stable else Stat(),
        itl_ms=stat(v["itl_ms"] for v in vals) if stable else Stat(),
        e2e_ms=stat((v["e2e_s"] * 1000.0 if v["e2e_s"] is not None else None) for v in vals)
        if stable
        else Stat(),
        prompt_tokens=stat(float(t.record.prompt_tokens) for t in ok if t.record.prompt_tokens),
        output_tokens=stat(float(output_tokens(t.record)) for t in ok),
        client_limited=bool(fig["client_limited"]),
        agg_tg_tps=(sum(output_tokens(t.record) for t in ok) / fig["span_s"]) if fig["span_s"] else None,
    )
    return s


async def run_sessions_point(env: PointEnv, spec_dir: Path | str | None) -> PointResult:
    prm = env.point.params
    assert isinstance(prm, SessionsParams), prm
    fn = await asyncio.to_thread(session_fn, prm, spec_dir)
    before = await scrape(env, "before")
    flags: list[str] = []
    tried: list[dict[str, Any]] = []
    knee: float | None = None
    if prm.search is not None:
        tr, fig, tried, knee = await max_rate_search(env, prm, fn)
    else:
        tr, fig = await _measured(env, prm, fn, prm.rate, 0)
    after = await scrape(env, "after")
    if tr is None or fig is None:  # the search: not even `low` met the SLO
        summary = PointSummary(
            extra={"sessions": {"search": {"tried": tried, "max_rate": None}}, "max_rate": None}
        )
        flags.append(f"slo-not-met:even the lowest rate {prm.search[0]:g}/s" if prm.search else "no-sessions")
        res = PointResult(summary, flags, [], interrupted=env.stop_reason())
        res.status = "ok" if tried else "failed"
        return res
    summary = _summary(tr, fig)
    if prm.search is not None:
        fig["search"] = {"tried": tried, "max_rate": knee, "resolution_pct": prm.search[2]}
        summary.extra["max_rate"] = knee
    summary.extra["sessions"] = fig
    summary.extra["goodput_rps"] = fig["goodput_rps"]
    summary.extra["goodput_sessions_ps"] = fig["goodput_sessions_ps"]
    for row in fig["per_turn"]:
        summary.extra[f"ttft_ms_turn{row['turn']}"] = row["ttft_ms"].get("median")
    later = [request_values(t)["ttft_ms"] for t in tr.turns if t.turn >= 2 and t.record.ok]
    if later and fig.get("stable") is not False:
        summary.extra["ttft_ms_turns2plus"] = stat(later).median
    if fig.get("cache_hit") is not None:
        summary.extra["cache_hit_rate"] = fig["cache_hit"]
    if fig["client_limited"]:
        flags.append(
            f"client-limited:send lateness p99 {fig['lateness_ms'].get('p99', 0):.1f} ms > {CLIENT_LIMITED_MS:g} ms"
        )
    if fig["stable"] is False:
        flags.append("unstable:above capacity (backlog grew through the point; no latency figure claimed)")
    if fig["slo_met"] is False:
        flags.append("slo-not-met")
    if before is not None and after is not None:
        summary.server = server_side(env.dialect, before, after)
    res = PointResult(summary, flags, [t.record for t in tr.turns], interrupted=env.stop_reason())
    res.status = point_status(summary, flags)
    return res

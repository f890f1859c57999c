"""The scenario loop: multi-turn conversations with mocked tools, graded as they finish.

For each scenario × trial of a ``scenarios`` workload point:

1. messages = system? + history + user; the scenario's tools are offered as OpenAI ``tools`` with its
   ``tool_choice`` and ``response_format``; sampling from the spec (temperature 0, seed 42 by default; trial
   t uses seed + t so trials are not byte-identical replays when the engine honours seeds); ``max_tokens``
   from the workload.
2. each assistant request goes through ``client.chat`` (streaming); a ``RequestFinished`` and a
   ``ScenarioTurn`` are emitted per request, a ``ScenarioTurn`` per tool result / follow-up user turn;
3. tool calls are answered from the scenario's mocks (first match wins, injected errors, ``times``); in
   lenient mode calls the model wrote as text are answered too (and presented as real tool calls next turn);
4. an answer without a tool call sends the next follow-up user turn, or ends the conversation;
   ``max_turns`` bounds the assistant requests; a failed request or ``finish_reason=length`` ends it (graded
   as ``harness_error``; a stop at the slot's context is marked ``context_full`` on the message: "context
   full (prompt N + output M = ctx C)", a configuration error);
5. the transcript is graded and a ``ScenarioGraded`` emitted (transcript, its sha256, median turn time).

Scenario-trials run concurrently up to the workload's ``parallel``.
"""

from __future__ import annotations

import asyncio
import copy
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_tui.events import (
    PlanPoint,
    PointSummary,
    RequestFinished,
    RequestRecord,
    ScenarioGraded,
    ScenarioParams,
    ScenarioTurn,
    Stat,
    ToolCall,
    request_id,
    stored_record,
)
from bench_tui.graders.grade import canonical_sha256, grade_transcript
from bench_tui.graders.pack import Pack, Scenario, load_pack
from bench_tui.graders.simulator import (
    MockState,
    annotate_recovered,
    initial_messages,
    tool_messages,
    wire_messages,
)
from bench_tui.runner.workloads.metrics import context_full
from bench_tui.spec.schema import Sampling

Emit = Callable[[Any], None]


def select_scenarios(pack: Pack, params: ScenarioParams) -> list[Scenario]:
    """Explicit ids win over a subset; default: the whole pack."""
    return pack.select(subset=params.subset, ids=list(params.scenarios) or None)


def build_payload(
    scenario: Scenario,
    pack: Pack,
    transcript: list[dict[str, Any]],
    *,
    model_id: str,
    sampling: Sampling,
    max_tokens: int,
    mode: str,
    trial: int,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "model": model_id,
        "messages": wire_messages(transcript, mode),
        "temperature": sampling.temperature,
        "max_tokens": max_tokens,
    }
    if sampling.seed is not None:
        payload["seed"] = sampling.seed + trial
    if sampling.top_p is not None:
        payload["top_p"] = sampling.top_p
    tools = pack.openai_tools(scenario)
    if tools:
        payload["tools"] = tools
        tc = scenario.tool_choice
        if tc != "auto" and tc != "none" and _called_since_user(transcript):
            # a forced choice (required / a named tool) is met once the model has called a tool for the
            # latest user message; forcing it again would never let the model answer
            tc = "auto"
        if isinstance(tc, dict):
            name = tc.get("name") or (tc.get("function") or {}).get("name")
            payload["tool_choice"] = {"type": "function", "function": {"name": name}}
        else:
            payload["tool_choice"] = tc
    if scenario.response_format is not None:
        payload["response_format"] = scenario.response_format
    return payload


def _called_since_user(transcript: list[dict[str, Any]]) -> bool:
    for msg in reversed(transcript):
        if msg.get("role") == "user":
            return False
        if msg.get("role") == "assistant" and (msg.get("tool_calls") or msg.get("recovered_tool_calls")):
            return True
    return False


def record_to_message(rec: RequestRecord, turn: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": rec.content or ""}
    if rec.reasoning:
        msg["reasoning"] = rec.reasoning
    if rec.tool_calls:
        msg["tool_calls"] = [
            {
                "id": tc.id or f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments},
                "index": tc.index,
            }
            for i, tc in enumerate(rec.tool_calls)
        ]
    msg["finish_reason"] = rec.finish_reason
    if not rec.ok:
        msg["error_kind"] = rec.error_kind or "error"
        msg["error"] = rec.error or ""
    return msg


def turn_ms(rec: RequestRecord) -> float | None:
    if rec.t_done_ns and rec.t_send_ns:
        return (rec.t_done_ns - rec.t_send_ns) / 1e6
    return None


class _Run:
    def __init__(
        self,
        point: PlanPoint,
        params: ScenarioParams,
        pack: Pack,
        *,
        client: Any,
        model_id: str,
        sampling: Sampling,
        emit: Emit,
        slot_ctx: int | None = None,
        attempt: int = 1,
    ) -> None:
        self.point = point
        self.attempt = attempt
        self.slot_ctx = slot_ctx
        self.params = params
        self.pack = pack
        self.client = client
        self.model_id = model_id
        self.sampling = sampling
        self.emit = emit
        self.mode = params.mode
        self.records: list[RequestRecord] = []
        self.graded: list[ScenarioGraded] = []

    async def _chat(self, payload: dict[str, Any], rid: str, send_at_ns: int | None = None) -> RequestRecord:
        """One request; ``send_at_ns`` (runner monotonic ns, at most moments away) hands a planned send time to
        the transport, which sends then and keeps the plan on the record's own clock (``t_scheduled_ns``)."""
        pid = self.point.point_id
        t0 = time.monotonic_ns()
        at = {} if send_at_ns is None else {"send_at_ns": send_at_ns}
        try:
            return await asyncio.wait_for(
                self.client.chat(payload, request_id=rid, point_id=pid, emit=self.emit, **at),
                timeout=self.params.request_timeout + 30.0 + max(0, (send_at_ns or t0) - t0) / 1e9,
            )
        except TimeoutError:
            return RequestRecord(
                request_id=rid,
                point_id=pid,
                ok=False,
                error_kind="timeout",
                error="scenario request timed out",
                t_send_ns=t0,
                t_done_ns=time.monotonic_ns(),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the client must not raise, but a bug there is a harness error
            return RequestRecord(
                request_id=rid,
                point_id=pid,
                ok=False,
                error_kind="client",
                error=f"{type(exc).__name__}: {exc}",
                t_send_ns=t0,
                t_done_ns=time.monotonic_ns(),
            )

    async def conversation(self, sc: Scenario, trial: int) -> ScenarioGraded:
        pid = self.point.point_id
        transcript = initial_messages(sc)
        state = MockState(sc, self.pack)
        offered = set(sc.offered_tools(self.pack))
        followups = list(sc.followups)
        times: list[float] = []
        ev_turn = 0
        for req_i in range(sc.max_turns):
            payload = build_payload(
                sc,
                self.pack,
                transcript,
                model_id=self.model_id,
                sampling=self.sampling,
                max_tokens=self.params.max_tokens,
                mode=self.mode,
                trial=trial,
            )
            rid = request_id(pid, self.attempt, f"{sc.id}/t{trial}/r{req_i}")
            rec = await self._chat(payload, rid)
            self.records.append(rec)
            self.emit(RequestFinished(record=stored_record(rec)))  # the full text: ScenarioTurn
            msg = record_to_message(rec, req_i)
            full = context_full(rec, self.params.max_tokens, self.slot_ctx)
            if full:
                msg["context_full"] = full
            if self.mode == "lenient":
                annotate_recovered(msg, offered, req_i)
            transcript.append(msg)
            tm = turn_ms(rec)
            if tm is not None and rec.ok:
                times.append(tm)
            self.emit(
                ScenarioTurn(
                    point_id=pid,
                    scenario_id=sc.id,
                    trial=trial,
                    turn=ev_turn,
                    role="assistant",
                    content=rec.content or "",
                    reasoning=rec.reasoning or "",
                    tool_calls=list(rec.tool_calls)
                    or [
                        ToolCall(
                            id=tc["id"],
                            name=tc["function"]["name"],
                            arguments=tc["function"]["arguments"],
                            index=j,
                        )
                        for j, tc in enumerate(msg.get("recovered_tool_calls") or [])
                    ],
                    request_id=rid,
                    turn_ms=tm,
                )
            )
            ev_turn += 1
            if not rec.ok or rec.finish_reason == "length":
                break
            tools = tool_messages(msg, state, self.mode)
            if tools:
                for t in tools:
                    transcript.append(t)
                    self.emit(
                        ScenarioTurn(
                            point_id=pid,
                            scenario_id=sc.id,
                            trial=trial,
                            turn=ev_turn,
                            role="tool",
                            content=t["content"],
                        )
                    )
                    ev_turn += 1
                continue
            if followups:
                u = followups.pop(0)
                transcript.append({"role": "user", "content": u})
                self.emit(
                    ScenarioTurn(
                        point_id=pid, scenario_id=sc.id, trial=trial, turn=ev_turn, role="user", content=u
                    )
                )
                ev_turn += 1
                continue
            break
        result = grade_transcript(sc, self.pack, transcript, self.mode)
        stored = copy.deepcopy(transcript)
        g = ScenarioGraded(
            point_id=pid,
            scenario_id=sc.id,
            trial=trial,
            category=sc.category,
            verdict=result.verdict,
            points=result.points,
            outcome=result.outcome,
            reasons=result.reasons,
            transcript_sha256=canonical_sha256(stored),
            transcript=stored,
            median_turn_ms=round(statistics.median(times), 3) if times else None,
            loop=result.loop,
            rules=result.rules,
            confidence=result.confidence,
            unsure=result.unsure,
        )
        self.emit(g)
        self.graded.append(g)
        return g


def _stat(values: list[float]) -> Stat:
    try:
        from bench_tui.runner.workloads.metrics import stat  # C1's (median + CI)

        return stat(values)
    except Exception:  # noqa: BLE001 - metrics module absent or different: a plain summary
        if not values:
            return Stat()
        v = sorted(values)
        return Stat(
            n=len(v),
            median=statistics.median(v),
            mean=statistics.fmean(v),
            min=v[0],
            max=v[-1],
            p90=v[min(len(v) - 1, int(0.9 * len(v)))],
            p99=v[min(len(v) - 1, int(0.99 * len(v)))],
        )


async def run_scenario_point(
    point: PlanPoint,
    *,
    client: Any,
    model_id: str,
    sampling: Sampling | None,
    emit: Emit | None,
    spec_dir: Path | str | None,
    slot_ctx: int | None = None,
    attempt: int = 1,
) -> PointSummary:
    """Run every selected scenario × trial of one point; returns the point summary (extra: verdict counts).
    Request ids carry the ``attempt`` (``events.request_id``), so a resumed point's records stay apart."""
    emit = emit or (lambda _e: None)
    sampling = sampling or Sampling()
    params = point.params
    assert isinstance(params, ScenarioParams), params
    pack = load_pack(params.pack, spec_dir)
    scenarios = select_scenarios(pack, params)
    trials = params.trials
    run = _Run(
        point,
        params,
        pack,
        client=client,
        model_id=model_id,
        sampling=sampling,
        emit=emit,
        slot_ctx=slot_ctx,
        attempt=attempt,
    )
    sem = asyncio.Semaphore(params.parallel)

    async def one(sc: Scenario, trial: int) -> ScenarioGraded:
        async with sem:
            return await run.conversation(sc, trial)

    t0 = time.monotonic()
    await asyncio.gather(*(one(sc, t) for t in range(trials) for sc in scenarios))
    wall = time.monotonic() - t0

    recs = run.records
    ok = [r for r in recs if r.ok]
    ttft = [(r.t_first_token_ns - r.t_send_ns) / 1e6 for r in ok if r.t_first_token_ns and r.t_send_ns]
    e2e = [(r.t_done_ns - r.t_send_ns) / 1e6 for r in ok if r.t_done_ns and r.t_send_ns]
    outs = [float(r.output_tokens) for r in ok if r.output_tokens is not None]
    eff = [
        r.output_tokens / ((r.t_done_ns - r.t_send_ns) / 1e9)
        for r in ok
        if r.output_tokens and r.t_done_ns and r.t_send_ns and r.t_done_ns > r.t_send_ns
    ]
    graded = run.graded
    counts = {
        v: sum(1 for g in graded if g.verdict == v and g.outcome not in ("harness_error", "grader_error"))
        for v in ("pass", "partial", "fail")
    }
    scored = sum(counts.values())
    pts = 2 * counts["pass"] + counts["partial"]
    turn_meds = [g.median_turn_ms for g in graded if g.median_turn_ms is not None]
    return PointSummary(
        requests=len(recs),
        ok=len(ok),
        failed=len(recs) - len(ok),
        wall_s=round(wall, 3),
        ttft_ms=_stat(ttft),
        e2e_ms=_stat(e2e),
        output_tokens=_stat(outs),
        eff_tg_tps=_stat(eff),
        agg_tg_tps=(sum(outs) / wall) if wall > 0 and outs else None,
        extra={
            "pack": pack.pack.id,
            "mode": params.mode,
            "scenarios": len(scenarios),
            "trials": trials,
            "graded": len(graded),
            **counts,
            "server_failures": sum(1 for g in graded if g.outcome == "server_failure"),
            "harness_errors": sum(1 for g in graded if g.outcome == "harness_error"),
            "grader_errors": sum(1 for g in graded if g.outcome == "grader_error"),
            "score_raw": round(100.0 * pts / (2 * scored), 2) if scored else None,
            "median_turn_ms": round(statistics.median(turn_meds), 2) if turn_meds else None,
        },
    )

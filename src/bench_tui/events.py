"""The typed event stream: the only thing the runner says to the outside world.

Every event is a msgspec Struct tagged by ``type``. The runner appends each one to the run's
``events.jsonl`` (flushed as written) and hands it to whichever front end is attached (TUI, ``--no-tui``
printer, ``--json`` lines). Reports, comparisons and re-grading are pure functions of that file.

Time fields:
- ``ts``: wall clock (unix seconds, float) when the event was emitted; for humans and ordering across runs.
- every ``*_ns`` anchor on a request is ``time.monotonic_ns()`` in the measuring process; only differences
  between anchors of the same process are meaningful.

This module imports nothing but msgspec and the standard library (the core must import without Textual).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

SCHEMA_VERSION = 2  # 2: plan points carry typed params (tagged by kind)


class Event(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True):
    ts: float = msgspec.field(default_factory=time.time)


# --------------------------------------------------------------------------------------------- run / plan


class ThroughputParams(msgspec.Struct, tag="throughput", tag_field="kind", kw_only=True, frozen=True):
    """One llama-bench-style point: ``repetitions`` rounds of ``concurrency`` requests, each prompt ``depth``
    tokens of context then ``pp`` new tokens, generating ``tg`` tokens."""

    pp: int
    tg: int
    depth: int = 0
    concurrency: int = 1
    repetitions: int = 1
    warmup: int = 0
    cache: Literal["cold", "warm"] = "cold"  # the workload's prompt layout: unique or shared prefix
    endpoint: Literal["completions", "chat"] = "completions"
    request_timeout: float = 600.0
    idle_timeout: float = 180.0  # no token for this long while requests are in flight: the point stalled


class ScenarioParams(msgspec.Struct, tag="scenarios", tag_field="kind", kw_only=True, frozen=True):
    """One scenario-pack point: the pack's selected scenarios, ``trials`` times each."""

    pack: str
    subset: str | None = None
    scenarios: tuple[str, ...] = ()  # explicit ids (win over subset)
    trials: int = 1
    parallel: int = 1
    mode: Literal["strict", "lenient"] = "lenient"
    max_tokens: int = 1024
    request_timeout: float = 300.0
    idle_timeout: float = 180.0

    @property
    def concurrency(self) -> int:
        return self.parallel


class AcceptanceParams(msgspec.Struct, tag="spec_acceptance", tag_field="kind", kw_only=True, frozen=True):
    """One speculative-decoding acceptance point: ``runs`` requests of ``content`` at ``depth``."""

    content: Literal["code", "json", "prose"] = "code"
    depth: int = 0
    runs: int = 1
    tg: int = 256
    concurrency: int = 1
    request_timeout: float = 600.0
    idle_timeout: float = 180.0


class SessionsParams(msgspec.Struct, tag="sessions", tag_field="kind", kw_only=True, frozen=True):
    """One sessions point: ``sessions`` multi-turn sessions started at ``rate`` per second on a seeded
    ``process`` (open loop), or ``concurrency`` at a time (``closed_loop``); with ``search`` (low, high,
    resolution %) the point tries rates at run time and reports the highest meeting the SLO."""

    source: Literal["synthetic", "pack", "trace", "conversations"] = "synthetic"
    source_ref: str = ""  # pack name or file path (relative to the spec file)
    subset: str | None = None
    shared_prefix_tokens: int = 0
    turns: int = 1
    input_tokens: int = 200
    output_tokens: int = 64
    think_dist: Literal["constant", "exponential"] = "constant"
    think_mean_s: float = 0.0
    process: Literal["constant", "poisson", "gamma"] = "poisson"
    burstiness: float = 1.0
    seed: int = 0
    rate: float | None = None  # sessions started per second (open loop)
    closed_loop: bool = False
    concurrency: int = 1  # closed loop: sessions active at once; open loop: the connection bound
    sessions: int = 1
    slo: dict[str, dict[str, float]] = {}  # metric (ttft_ms | itl_ms | e2e_s) -> {pNN: value}
    search: tuple[float, float, float] | None = None  # max-rate search: low, high, resolution_pct
    max_tokens: int = 1024  # pack / conversations replies
    request_timeout: float = 600.0
    idle_timeout: float = 180.0


PointParams = ThroughputParams | ScenarioParams | AcceptanceParams | SessionsParams


class PlanPoint(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One unit of work: an engine variant running one point of one workload."""

    point_id: str  # stable across resume, e.g. "vllm.warm/throughput/pp2048-tg128-d4096-c2"
    engine: str
    variant: str
    workload: str
    kind: Literal["throughput", "scenarios", "spec_acceptance", "sessions"]
    params: PointParams
    requests: int = 0  # estimated request count (warm-up excluded)
    session: int = 0  # engine session (1..N when the matrix asks for N >= 2 sessions; 0: the only one)


class RunStarted(Event, tag="run_started"):
    run_id: str
    spec_name: str
    spec_path: str
    run_dir: str
    resumed: bool = False
    schema_version: int = SCHEMA_VERSION


class PlanReady(Event, tag="plan_ready"):
    points: list[PlanPoint]
    estimated_requests: int = 0


class RunFinished(Event, tag="run_finished"):
    status: Literal["completed", "aborted", "failed"]
    points_done: int
    points_total: int
    message: str = ""


# --------------------------------------------------------------------------------------------- engines


class EngineStarting(Event, tag="engine_starting"):
    engine: str
    variant: str
    command: list[str]  # exact argv (secrets redacted)
    log_path: str = ""
    pid: int | None = None


class EngineReady(Event, tag="engine_ready"):
    engine: str
    variant: str
    base_url: str
    model_id: str
    version: str = ""
    startup_s: float = 0.0


class EngineLog(Event, tag="engine_log"):
    engine: str
    variant: str
    line: str
    stream: Literal["stdout", "stderr"] = "stdout"


class EngineStopped(Event, tag="engine_stopped"):
    engine: str
    variant: str
    returncode: int | None = None
    reason: str = ""


class EngineCrashed(Event, tag="engine_crashed"):
    engine: str
    variant: str
    returncode: int | None
    log_tail: list[str] = []
    point_id: str | None = None
    will_restart: bool = False


class EngineStats(Event, tag="engine_stats"):
    """Live engine gauges for the engine panel (sampled between or during points)."""

    engine: str
    variant: str
    running: float | None = None
    waiting: float | None = None
    kv_usage: float | None = None  # 0..1
    prefix_cache_hit_rate: float | None = None  # 0..1
    spec_acceptance_rate: float | None = None  # 0..1
    gpu: dict[str, float] = {}  # power_w, mem_used_mb, util_pct when NVML is there


class MetricsScraped(Event, tag="metrics_scraped"):
    """A raw scrape of the engine's /metrics (or /slots) around a point."""

    engine: str
    variant: str
    point_id: str
    phase: Literal["before", "after"]
    values: dict[str, float]  # metric name (with sorted labels) -> value
    source: str = "/metrics"


# --------------------------------------------------------------------------------------------- requests


class Chunk(msgspec.Struct, array_like=True):
    """One SSE event that carried text: (monotonic ns, tokens in it, channel)."""

    t_ns: int
    tokens: int
    channel: Literal["content", "reasoning", "tool", "text"]


class ToolCall(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str = ""
    name: str = ""
    arguments: str = ""  # raw JSON text as assembled from deltas
    index: int = 0


def request_id(point_id: str, attempt: int, tag: str) -> str:
    """A request record's id: ``<point_id>@<attempt>:<tag>`` (resume keeps only the finishing attempt's)."""
    return f"{point_id}@{attempt}:{tag}"


def attempt_of(request_id_: str) -> int | None:
    """The attempt number in a request id made by :func:`request_id` (None for foreign ids)."""
    head, sep, _ = request_id_.rpartition(":")
    if not sep or "@" not in head:
        return None
    try:
        return int(head.rsplit("@", 1)[1])
    except ValueError:
        return None


class RequestRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Everything measured about one request. Derive metrics from anchors, never store them only."""

    request_id: str
    point_id: str
    endpoint: Literal["chat", "completions"] = "chat"
    ok: bool = False
    http_status: int | None = None
    error: str = ""
    error_kind: str = ""  # connect | http | timeout | stream | engine_crash | cancelled
    # anchors (monotonic ns)
    t_send_ns: int = 0
    # when the request was planned to go out (open loops: ``send_at_ns``), on the same clock as the other
    # anchors (the measuring worker's monotonic clock; + clock_offsets_ns[worker] gives the runner's). Latency
    # counted from it includes any lateness of the client (no coordinated omission). None: sent when called.
    t_scheduled_ns: int | None = None
    t_headers_ns: int | None = None
    t_first_byte_ns: int | None = None  # first SSE event: the artifact older tools called TTFT
    t_first_token_ns: int | None = None  # first delta with content, reasoning or tool-call text
    t_first_content_ns: int | None = None  # first delta with user-visible content
    t_last_token_ns: int | None = None
    t_done_ns: int | None = None
    chunks: list[Chunk] = []
    # token counts
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    token_source: Literal["usage", "timings", "client", "none"] = "none"
    client_output_tokens: int = 0  # what the client counted from chunks, always kept
    token_disagreement: bool = False
    # payload
    finish_reason: str | None = None
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = []
    timings: dict[str, float] = {}  # engine extras (llama.cpp `timings`)
    loop_lag_ms: float = 0.0  # max event-loop lag seen while this request streamed
    recv_delay_ms: float = (
        0.0  # mean client receive delay per read (kernel stamp to user space), or mean loop lag
    )
    # which clock stamped the reads: kernel (SO_TIMESTAMPNS receive stamps, converted to monotonic), monotonic
    # (user space, when the loop handed the read over), mixed (some reads came without a kernel stamp)
    clock: Literal["monotonic", "kernel", "mixed"] = "monotonic"
    # a wall-clock step (ms, signed) seen while this request streamed: its kernel stamps were re-anchored at
    # once (client.KernelClock), so those around the step may be off by up to 1 ms; 0 = none
    clock_step_ms: float = 0.0
    worker: str = (
        ""  # the load worker that measured it (load backends processes / ray); "" = the runner itself
    )


class RequestStarted(Event, tag="request_started"):
    point_id: str
    request_id: str
    prompt_tokens: int | None = None
    max_tokens: int | None = None


class RequestFirstToken(Event, tag="request_first_token"):
    point_id: str
    request_id: str
    ttft_ms: float
    ttfb_ms: float | None = None
    channel: str = "content"


class RequestProgress(Event, tag="request_progress"):
    """Sent at most a few times a second per request (the front ends only need a glance)."""

    point_id: str
    request_id: str
    tokens: int
    reasoning_tokens: int = 0
    content_tokens: int = 0
    tool_tokens: int = 0
    elapsed_ms: float = 0.0


STORED_TEXT_CHARS = 4000  # per text field of a stored request record (events.jsonl)


def _cap(text: str) -> str:
    if len(text) <= STORED_TEXT_CHARS:
        return text
    return (
        text[:STORED_TEXT_CHARS]
        + f"\n[bench-tui: {len(text) - STORED_TEXT_CHARS} more characters not stored]"
    )


def stored_record(rec: RequestRecord) -> RequestRecord:
    """The record as written to events.jsonl: content, reasoning and tool-call arguments capped at
    ``STORED_TEXT_CHARS`` each, so a runaway generation cannot grow the run directory without bound. Timings
    and token counts are untouched; scenario points keep their full text in ``ScenarioTurn`` /
    ``ScenarioGraded`` transcripts. The caller keeps the full record in memory."""
    calls = rec.tool_calls
    long_call = any(len(c.arguments) > STORED_TEXT_CHARS for c in calls)
    if len(rec.content) <= STORED_TEXT_CHARS and len(rec.reasoning) <= STORED_TEXT_CHARS and not long_call:
        return rec
    if long_call:
        calls = [msgspec.structs.replace(c, arguments=_cap(c.arguments)) for c in calls]
    return msgspec.structs.replace(
        rec, content=_cap(rec.content), reasoning=_cap(rec.reasoning), tool_calls=calls
    )


class RequestFinished(Event, tag="request_finished"):
    record: RequestRecord
    warmup: bool = False


# --------------------------------------------------------------------------------------------- points


class Stat(msgspec.Struct, kw_only=True, omit_defaults=True):
    n: int = 0
    median: float | None = None
    mean: float | None = None
    p90: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None
    ci_low: float | None = None  # confidence interval of the median over repetitions
    ci_high: float | None = None


class ServerSide(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The engine's own account of a point, from /metrics deltas (and llama.cpp timings).

    ``prompt_tokens`` and ``prefill_tps`` are what the engine's own counters count (vLLM: every prompt token,
    cached ones included; llama.cpp: only the evaluated ones); ``prompt_tokens_evaluated`` and
    ``evaluated_prefill_tps`` count only the tokens the engine computed, on every engine (comparable).
    ``spec_drafts`` is 0 (not None) when speculation is configured but proposed nothing in the point."""

    source: str = ""  # "vllm /metrics", "llamacpp /metrics + timings", ...
    prompt_tokens: float | None = None
    generation_tokens: float | None = None
    prefill_tps: float | None = None
    decode_tps: float | None = None
    prefix_cache_hit_rate: float | None = None
    prompt_tokens_cached: float | None = None  # reused from the prefix cache
    prompt_tokens_evaluated: float | None = None  # computed in prefill
    evaluated_prefill_tps: float | None = None  # evaluated prompt tokens / the engine's prefill seconds
    prefill_counts: str = ""  # what prompt_tokens / prefill_tps count, in words
    decode_time: str = ""  # what decode_tps divides by, in words
    spec_drafts: float | None = None
    spec_draft_tokens: float | None = None
    spec_accepted: float | None = None
    spec_acceptance_rate: float | None = None
    spec_acceptance_length: float | None = None
    spec_per_position: list[float] = []


class PointSummary(msgspec.Struct, kw_only=True, omit_defaults=True):
    requests: int = 0
    ok: int = 0
    failed: int = 0
    wall_s: float = 0.0
    # headline metrics; each says what it measures in the report
    eff_tg_tps: Stat = msgspec.field(default_factory=Stat)  # output tokens / (t_done - t_send), per request
    agg_tg_tps: float | None = None  # all output tokens / point wall time
    # all prompt tokens / time from the first send to the last first token, summed over repetitions (what the
    # engine prefilled per second under this load; per-request prefill_tps includes queueing under concurrency)
    agg_prefill_tps: float | None = None
    ttft_ms: Stat = msgspec.field(default_factory=Stat)  # t_first_token - t_send
    ttfb_ms: Stat = msgspec.field(default_factory=Stat)  # t_first_byte - t_send (artifact, kept to compare)
    prefill_tps: Stat = msgspec.field(default_factory=Stat)
    decode_tps: Stat = msgspec.field(default_factory=Stat)
    # sum of (output tokens - 1) / sum of (t_last_token - t_first_token) over the requests: the same pooling as
    # the engines' own decode counters (the median request can differ a lot from it under concurrency)
    pooled_decode_tps: float | None = None
    itl_ms: Stat = msgspec.field(default_factory=Stat)
    e2e_ms: Stat = msgspec.field(default_factory=Stat)
    prompt_tokens: Stat = msgspec.field(default_factory=Stat)
    output_tokens: Stat = msgspec.field(default_factory=Stat)
    token_source: str = ""
    token_disagreements: int = 0
    client_limited: bool = False  # the client fell behind (typical receive delay grew), not a host stall
    max_loop_lag_ms: float = 0.0
    client_limit_cause: str = (
        ""  # "" | "client" (falling behind) | "stall" (host/VM paused every stream at once)
    )
    recv_delay_ms: float = 0.0  # median over requests of each one's mean receive delay
    clock: str = "monotonic"  # which clock stamped the chunks: monotonic | kernel | mixed
    cache: str = ""  # cold | warm
    server: ServerSide = msgspec.field(default_factory=ServerSide)
    extra: dict[str, Any] = {}


class GpuReading(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One NVIDIA GPU as NVML reported it at one moment (or a statistic of such readings)."""

    index: int
    sm_mhz: float | None = None  # current SM clock
    mem_mhz: float | None = None  # current memory clock
    power_w: float | None = None
    temp_c: float | None = None
    mem_used_mb: float | None = None
    util_pct: float | None = None
    reasons: list[
        str
    ] = []  # active clocks-event (throttle) reasons, e.g. "sw_thermal", "hw_slowdown", "idle"


class Reading(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The host's conditions at one moment (envinfo.conditions). Fractions are of the whole host (all its CPUs),
    over the interval since the reading before it (about a second); ``None``: not readable here."""

    t: float = 0.0  # wall clock (unix s)
    cpus: int | None = None  # CPUs the host counts (/proc/stat)
    load1: float | None = None  # 1-minute load average
    runnable: float | None = None  # tasks running or runnable now (/proc/stat procs_running)
    busy: float | None = None  # 0..1, all CPU time not idle or waiting for I/O
    steal: float | None = None  # 0..1, time the hypervisor gave this VM's CPUs to someone else
    own: float | None = None  # 0..1, CPU used by the benchmark's own processes (this one, its descendants)
    other: float | None = None  # 0..1, busy minus own: every other process (external engines count here)
    freq_mhz: float | None = None  # median current CPU frequency (cpufreq scaling_cur_freq)
    mem_available_mb: float | None = None
    mem_psi: float | None = None  # memory pressure: PSI "some" avg10, % of time a task stalled on memory
    cpu_psi: float | None = None  # CPU pressure: PSI "some" avg10, % of time a runnable task waited for a CPU
    gpus: list[GpuReading] = []

    @property
    def load_per_core(self) -> float | None:
        return None if self.load1 is None or not self.cpus else self.load1 / self.cpus


class Conditions(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The machine around one point: a reading as it started and as it ended, and the minimum, median and
    maximum of each figure over the readings taken while it ran (about one a second). GPU reasons: ``during_min``
    holds those active in every reading, ``during_median`` in at least half, ``during_max`` in any."""

    before: Reading | None = None
    after: Reading | None = None
    during_min: Reading | None = None
    during_median: Reading | None = None
    during_max: Reading | None = None
    samples: int = 0  # readings taken during the point
    interval_s: float = 0.0  # seconds between those readings

    @property
    def typical(self) -> Reading | None:
        """What the point mostly ran under: the median reading during it, else (a point shorter than one
        sampling interval) the reading at its end, which covers its last second."""
        return self.during_median or self.after or self.before


class PointStarted(Event, tag="point_started"):
    point_id: str
    index: int = 0
    total: int = 0


class PointFinished(Event, tag="point_finished"):
    point_id: str
    status: Literal["ok", "degraded", "failed", "skipped"]
    summary: PointSummary = msgspec.field(default_factory=PointSummary)
    flags: list[str] = []  # e.g. "degraded:2 failed", "client-limited", "token-disagreement"
    conditions: Conditions | None = (
        None  # the machine around the point (absent in runs before it was recorded)
    )


# --------------------------------------------------------------------------------------------- scenarios


class ScenarioTurn(Event, tag="scenario_turn"):
    point_id: str
    scenario_id: str
    trial: int
    turn: int
    role: Literal["assistant", "tool", "user"]
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = []
    request_id: str = ""
    turn_ms: float | None = None


class ScenarioGraded(Event, tag="scenario_graded"):
    point_id: str
    scenario_id: str
    trial: int
    category: str
    verdict: Literal["pass", "partial", "fail"] | None  # None when not graded (harness error)
    points: int | None
    outcome: Literal["graded", "model_failure", "server_failure", "harness_error", "grader_error"] = "graded"
    reasons: list[str] = []
    transcript_sha256: str = ""
    transcript: list[dict[str, Any]] = []  # the messages as sent/received, for regrade
    median_turn_ms: float | None = None
    loop: str = ""  # a model loop, described (GradeResult.loop); "" = none
    rules: list[str] = []  # ids of the grading rules that decided the verdict (graders/rules.py)
    confidence: Literal["sure", "unsure"] = "sure"
    unsure: list[str] = []  # why the verdict is unsure: a person should look (docs/GRADING.md)


# --------------------------------------------------------------------------------------------- sessions


class SessionTurn(Event, tag="session_turn"):
    """One finished turn of a sessions point: when it was due (the seeded schedule, on the clock of the
    request's anchors), how late it went out, and the context it carried. Joined with the RequestFinished of
    ``request_id``."""

    point_id: str
    request_id: str
    session: int
    turn: int  # 1 = the session's first request
    t_scheduled_ns: int
    lateness_ms: float = 0.0  # t_send - t_scheduled
    context_tokens: int | None = None  # the prompt's tokens (the server's count when it gave one)
    ideal_cached_tokens: int | None = None  # tokens of this prompt that an earlier request already sent
    trial: int = 0  # max-rate search: which rate tried
    rate: float | None = None  # the rate this turn's session was started at (open loop)
    last: bool = False  # the session's last turn


# --------------------------------------------------------------------------------------------- misc


class RunWarning(Event, tag="warning"):
    code: str  # degraded | client-limited | token-disagreement | engine | override-stale | ...
    message: str
    point_id: str | None = None


AnyEvent = (
    RunStarted
    | PlanReady
    | RunFinished
    | EngineStarting
    | EngineReady
    | EngineLog
    | EngineStopped
    | EngineCrashed
    | EngineStats
    | MetricsScraped
    | RequestStarted
    | RequestFirstToken
    | RequestProgress
    | RequestFinished
    | PointStarted
    | PointFinished
    | ScenarioTurn
    | ScenarioGraded
    | SessionTurn
    | RunWarning
)

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AnyEvent)


def encode(event: Event) -> bytes:
    """One JSON line (without the newline)."""
    return _encoder.encode(event)


def decode(line: bytes | str) -> Event:
    return _decoder.decode(line)


def read_events(
    path: str | os.PathLike[str], skipped: list[int] | None = None, skip_types: Sequence[str] = ()
) -> list[Event]:
    """Read an events.jsonl. A line that does not decode is skipped, never fatal: a torn line left by a
    killed writer (a resumed run appends after it), or an event type from a newer bench-tui. The 1-based
    numbers of skipped lines are appended to ``skipped`` when given. Events whose type starts with one of
    ``skip_types`` are not decoded at all (readers that need no per-request detail are fast on big runs)."""
    prefixes = tuple(b'{"type":"' + t.encode() for t in skip_types)
    out: list[Event] = []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            raw = raw.strip()
            if not raw or (prefixes and raw.startswith(prefixes)):
                continue
            try:
                out.append(decode(raw))
            except msgspec.DecodeError:  # ValidationError is a subclass
                event = _upgrade_v1(raw)
                if event is not None:
                    out.append(event)
                elif skipped is not None:
                    skipped.append(lineno)
    return out


def _upgrade_v1(raw: bytes) -> Event | None:
    """A schema-1 ``plan_ready`` line (point params as an untagged dict) as schema 2, else None."""
    try:
        doc = msgspec.json.decode(raw)
        if not isinstance(doc, dict) or doc.get("type") != "plan_ready":
            return None
        for pt in doc.get("points") or []:
            params = {k: v for k, v in (pt.get("params") or {}).items() if v is not None or k == "subset"}
            params["kind"] = pt.get("kind")
            pt["params"] = params
        return _decoder.decode(msgspec.json.encode(doc))
    except (msgspec.DecodeError, AttributeError, TypeError):
        return None

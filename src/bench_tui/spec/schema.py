"""The spec language as msgspec Structs. This file is the single source of the JSON Schema.

Conventions:
- keys are snake_case; engine ``args`` keys are flag names as the engine spells them (``kv-cache-dtype``),
  rendered ``--kv-cache-dtype VALUE``; ``true`` renders a bare flag, ``false``/``null`` drops it, a list
  repeats the flag, a mapping renders as compact JSON (``--speculative-config '{"method":"mtp",...}'``).
- variants override an engine's ``args``/``env`` (a ``null`` value removes an inherited flag), and may replace
  its ``model``, ``launcher`` (vllm, sglang, llamacpp) and ``chat_template``.
- ``engines`` and ``workloads`` are mappings: their keys are the names used in the matrix and reports.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import msgspec

ArgValue = str | int | float | bool | None | list[str | int | float] | dict[str, Any]

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0)]
Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]
# seconds without any token while requests are in flight before a point is ended early, marked "stalled"
IdleTimeout = Annotated[float, msgspec.Meta(gt=0, le=86400)]

# Sane upper bounds: a spec is read from files that may come from someone else (a bundle), and a number like
# `concurrency: [1000000000]` would otherwise pin the runner for minutes before the first request.
MAX_TOKENS = 4 * 1024 * 1024  # prompt / context / generation tokens (no model serves more)
MAX_LIST = 256  # values in one sweep list
Tokens = Annotated[int, msgspec.Meta(ge=1, le=MAX_TOKENS)]
Depth = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKENS)]
Concurrency = Annotated[int, msgspec.Meta(ge=1, le=4096)]
Count = Annotated[int, msgspec.Meta(ge=1, le=10_000)]  # repetitions, trials, runs
Warmup = Annotated[int, msgspec.Meta(ge=0, le=10_000)]
Seconds = Annotated[float, msgspec.Meta(gt=0, le=7 * 86400)]  # timeouts: finite, at most a week


class _Base(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    pass


# --------------------------------------------------------------------------------------------- engines


class Variant(_Base, kw_only=True):
    description: str = ""
    args: dict[str, ArgValue] = {}
    env: dict[str, str] = {}
    chat_template: str | None = None  # replaces the engine's; "" = the model's own (stock) template
    model: str | None = None  # replaces the engine's model (same forms: path, hub id, builtin:NAME)
    launcher: list[str] | None = None  # replaces the engine's launcher (vllm, sglang, llamacpp only)


class EngineBase(_Base, tag_field="kind", kw_only=True):
    """What every engine kind has. A plugin kind subclasses it with its own tag and typed options:
    ``class TgiEngine(EngineBase, tag="tgi", kw_only=True): sharded: bool = False``."""

    model: str = ""  # model path or hub id as the engine takes it
    served_model_name: str | None = None  # what to send as "model"; default: autodetect via /v1/models
    host: str = "127.0.0.1"
    port: Port = 8000
    args: dict[str, ArgValue] = {}
    env: dict[str, str] = {}
    health_path: str | None = None  # default per kind
    startup_timeout: Seconds = 600.0
    chat_template: str | None = None  # path, relative to the spec file
    api_key: str | None = None  # usually "${VAR}": kept unexpanded in saved specs, redacted in outputs
    variants: dict[str, Variant] = {}
    description: str = ""


class VllmEngine(EngineBase, tag="vllm", kw_only=True):
    # argv prefix used to launch; `vllm serve` by default. CPU wheels need
    # ["{python}", "-m", "vllm.entrypoints.openai.api_server"] (then the model goes in --model).
    launcher: list[str] = msgspec.field(default_factory=lambda: ["vllm", "serve"])


class SglangEngine(EngineBase, tag="sglang", kw_only=True):
    launcher: list[str] = msgspec.field(default_factory=lambda: ["{python}", "-m", "sglang.launch_server"])


class LlamaCppEngine(EngineBase, tag="llamacpp", kw_only=True):
    # `llama-server`, or our xllamacpp launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    launcher: list[str] = msgspec.field(default_factory=lambda: ["llama-server"])


class CommandEngine(EngineBase, tag="command", kw_only=True):
    # any binary; placeholders {model} {port} {host} {python} are substituted
    command: list[str]
    version_command: list[str] | None = None
    # vllm | sglang | llamacpp | none, or a dialect installed in the bench_tui.dialects entry point group
    metrics_dialect: str = "none"


class ExternalEngine(EngineBase, tag="external", kw_only=True):
    # already running: never started or stopped by us
    base_url: str
    metrics_dialect: str = "none"  # as for command engines


BUILTIN_ENGINES: tuple[type[EngineBase], ...] = (
    VllmEngine,
    SglangEngine,
    LlamaCppEngine,
    CommandEngine,
    ExternalEngine,
)


def engine_tag(cls: type[EngineBase]) -> str:
    """The ``kind`` an engine Struct is tagged with."""
    return str(cls.__struct_config__.tag)


ENGINE_KINDS = tuple(engine_tag(c) for c in BUILTIN_ENGINES)

if TYPE_CHECKING:
    # what code may assume of any engine: a plugin kind's Struct is an EngineBase, not one of the built-ins
    Engine = EngineBase
else:
    # what a spec's `engines` decode to without plugins; spec_type() widens it with the plugin kinds
    Engine = VllmEngine | SglangEngine | LlamaCppEngine | CommandEngine | ExternalEngine


# --------------------------------------------------------------------------------------------- workloads


class _WorkloadBase(_Base, tag_field="kind", kw_only=True):
    description: str = ""


class ThroughputWorkload(_WorkloadBase, tag="throughput", kw_only=True):
    """llama-bench style sweep: pp x tg x depth x concurrency x repetitions."""

    pp: Annotated[list[Tokens], msgspec.Meta(max_length=MAX_LIST)] = msgspec.field(
        default_factory=lambda: [512]
    )  # prompt tokens
    tg: Annotated[list[Tokens], msgspec.Meta(max_length=MAX_LIST)] = msgspec.field(
        default_factory=lambda: [128]
    )  # generated tokens
    depths: Annotated[list[Depth], msgspec.Meta(max_length=MAX_LIST)] = msgspec.field(
        default_factory=lambda: [0]
    )  # context already in the prompt before the pp tokens
    concurrency: Annotated[list[Concurrency], msgspec.Meta(max_length=MAX_LIST)] = msgspec.field(
        default_factory=lambda: [1]
    )
    repetitions: Count = 3
    warmup: Warmup = 1
    cache: Literal["cold", "warm"] = "cold"
    endpoint: Literal["completions", "chat"] = "completions"
    request_timeout: Seconds = 600.0
    idle_timeout: IdleTimeout = 180.0
    description: str = ""


class ScenarioWorkload(_WorkloadBase, tag="scenarios", kw_only=True):
    pack: str  # builtin pack name ("standard") or a path relative to the spec file
    subset: str | None = None  # e.g. "short"
    scenarios: list[str] = []  # explicit ids (overrides subset)
    trials: Count = 1
    parallel: Concurrency = 1
    mode: Literal["strict", "lenient"] = "lenient"
    max_tokens: Tokens = 1024
    request_timeout: Seconds = 300.0
    idle_timeout: IdleTimeout = 180.0
    description: str = ""


class SpecAcceptanceWorkload(_WorkloadBase, tag="spec_acceptance", kw_only=True):
    content: list[Literal["code", "json", "prose"]] = msgspec.field(
        default_factory=lambda: ["code", "json", "prose"]
    )
    depths: Annotated[list[Depth], msgspec.Meta(max_length=MAX_LIST)] = msgspec.field(
        default_factory=lambda: [0]
    )
    runs: Count = 3
    tg: Tokens = 256
    idle_timeout: IdleTimeout = 180.0
    description: str = ""


Rate = Annotated[float, msgspec.Meta(gt=0, le=100_000)]  # sessions started per second
Percent = Annotated[float, msgspec.Meta(gt=0, le=100)]
SloValue = Annotated[float, msgspec.Meta(gt=0, le=7 * 86400 * 1000)]


class SyntheticSource(_Base, kw_only=True):
    """Generated sessions: every prompt starts with the same ``shared_prefix_tokens`` (a system prompt), turn k+1
    is turn k's prompt + its answer + ``input_tokens`` new tokens, so a prefix cache sees what an agent sends."""

    shared_prefix_tokens: Depth = 0
    turns: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 4
    input_tokens: Tokens = 200
    output_tokens: Tokens = 64


class SessionSource(_Base, kw_only=True):
    """Exactly one of: ``synthetic``, ``pack`` (+ ``subset``), ``trace`` (Mooncake-style JSONL) or
    ``conversations`` (ShareGPT-style JSON); files are relative to the spec file."""

    synthetic: SyntheticSource | None = None
    pack: str | None = None  # builtin pack name or a path: each session is one scenario conversation
    subset: str | None = None
    trace: str | None = None
    conversations: str | None = None


class ThinkTime(_Base, kw_only=True):
    dist: Literal["constant", "exponential"] = "exponential"
    mean: Annotated[float, msgspec.Meta(ge=0, le=3600)] = 0.5


class Arrival(_Base, kw_only=True):
    """Open loop: ``rate`` sessions started per second (one point per rate) on a seeded ``process``
    (``gamma`` with ``burstiness``: shape parameter, 1 = Poisson, lower = burstier); or closed loop:
    ``concurrency`` sessions active at once (one point per value)."""

    rate: Annotated[list[Rate], msgspec.Meta(max_length=MAX_LIST)] | None = None
    concurrency: Annotated[list[Concurrency], msgspec.Meta(max_length=MAX_LIST)] | None = None
    process: Literal["constant", "poisson", "gamma"] = "poisson"
    burstiness: Annotated[float, msgspec.Meta(gt=0, le=1000)] = 1.0
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] = 0


class Slo(_Base, kw_only=True):
    """Per-request targets: ``{pNN: value}`` per metric (``p90: 1500`` = 90 % of requests at most 1500);
    every request is judged on each named metric (goodput counts those meeting all)."""

    ttft_ms: dict[str, SloValue] = {}
    itl_ms: dict[str, SloValue] = {}  # the request's mean inter-token latency
    e2e_s: dict[str, SloValue] = {}


class MaxRateSearch(_Base, kw_only=True):
    low: Rate
    high: Rate
    resolution_pct: Percent = 10.0


class Search(_Base, kw_only=True):
    max_rate: MaxRateSearch | None = None


class SessionsWorkload(_WorkloadBase, tag="sessions", kw_only=True):
    """Agent-like serving: multi-turn sessions started on a seeded schedule, judged against an SLO."""

    source: SessionSource
    think_time_s: Annotated[float, msgspec.Meta(ge=0, le=3600)] | ThinkTime = 0.0
    arrival: Arrival = msgspec.field(default_factory=Arrival)
    sessions: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 64
    slo: Slo = msgspec.field(default_factory=Slo)
    search: Search = msgspec.field(default_factory=Search)
    description: str = ""


Workload = ThroughputWorkload | ScenarioWorkload | SpecAcceptanceWorkload | SessionsWorkload

WORKLOAD_KINDS = ("throughput", "scenarios", "spec_acceptance", "sessions")


# --------------------------------------------------------------------------------------------- matrix


class MatrixRule(_Base, kw_only=True):
    engine: str | None = None
    variant: str | None = None
    workload: str | None = None


class Matrix(_Base, kw_only=True):
    """GitHub-Actions-like: (engine variants) x workloads, minus exclude, plus include.

    ``engines`` items are ``name`` (all its variants) or ``name.variant``; default: every engine.
    ``workloads`` default: every workload. A matrix with only ``include`` (no ``engines``/``workloads``)
    runs just the included combinations.

    ``sessions``: engine sessions per variant: each variant is started this many times, and the sessions of
    the variants are interleaved (``order: abba``: A B, B A, A B, ...; ``shuffle``: a shuffled order per
    round from ``seed``, recorded in the plan) so drift over the run hits every side. Verdicts between
    variants use the sessions as their unit (reports/verdict.py).
    """

    engines: list[str] | None = None
    workloads: list[str] | None = None
    include: list[MatrixRule] = []
    exclude: list[MatrixRule] = []
    sessions: Annotated[int, msgspec.Meta(ge=1, le=100)] = 1
    order: Literal["abba", "shuffle"] = "abba"
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)] = 0


# --------------------------------------------------------------------------------------------- grading


class Override(_Base, kw_only=True):
    scenario: str
    verdict: Literal["pass", "partial", "fail"]
    reason: str
    engine: str | None = None  # scope; None = every engine
    variant: str | None = None
    author: str = ""
    date: str = ""  # ISO date
    raw_verdict: Literal["pass", "partial", "fail"] | None = None  # the verdict this corrects
    transcript_sha256: str | None = None  # binds to one stored transcript; stale when it changes


class Judge(_Base, kw_only=True):
    """A second opinion on every graded transcript from an OpenAI-compatible chat endpoint (graders/judge.py):
    a disagreement marks the verdict unsure with the judge's reason; it never changes a score."""

    base_url: str  # http(s)://host:port[/v1]; requests go to .../v1/chat/completions
    model: str
    api_key_env: str | None = None  # the NAME of the environment variable holding the key (never the key)
    timeout_s: Seconds = 60.0  # per request


class Grading(_Base, kw_only=True):
    overrides: list[Override] = []
    judge: Judge | None = None
    alpha: Annotated[float, msgspec.Meta(ge=0, le=1)] = (
        0.7  # deployability = a*quality + (1-a)*responsiveness
    )
    responsiveness_target_ms: Annotated[float, msgspec.Meta(gt=0, le=3_600_000)] = 2000.0


# --------------------------------------------------------------------------------------------- misc


class Sampling(_Base, kw_only=True):
    temperature: Annotated[float, msgspec.Meta(ge=0, le=100)] = 0.0
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] | None = 42
    top_p: Annotated[float, msgspec.Meta(ge=0, le=1)] | None = None
    max_tokens: Tokens | None = None


class Report(_Base, kw_only=True):
    title: str | None = None
    formats: list[Literal["md", "html"]] = msgspec.field(default_factory=lambda: ["md", "html"])
    baseline: str | None = None  # "engine.variant" that deltas are computed against
    notes: str = ""
    # practical threshold: no difference smaller than this (in %, or points for rates) is ever claimed
    noise_threshold_pct: Annotated[float, msgspec.Meta(ge=0, le=100)] = 5.0


class Load(_Base, kw_only=True):
    """Where the load generator runs (runner/transport/backends.py).

    ``local``: one client process (enough up to roughly 30k chunks/s per core); ``processes``: ``workers``
    client processes on this machine; ``ray``: ``workers`` Ray actors, on this machine (``ray_address: local``
    starts a private Ray instance for the run and stops it after) or on a running cluster (``auto``, or
    ``ray://HOST:PORT`` through Ray Client).
    """

    backend: Literal["local", "processes", "ray"] = "local"
    workers: PositiveInt = 1
    ray_address: str = "local"  # local | auto | ray://HOST:PORT


class Spec(_Base, kw_only=True):
    version: Literal[1]
    name: str
    description: str = ""
    engines: dict[str, Engine]
    workloads: dict[str, Workload]
    matrix: Matrix = msgspec.field(default_factory=Matrix)
    sampling: Sampling = msgspec.field(default_factory=Sampling)
    grading: Grading = msgspec.field(default_factory=Grading)
    report: Report = msgspec.field(default_factory=Report)
    load: Load = msgspec.field(default_factory=Load)
    runs_dir: str = "runs"


@functools.cache
def spec_type(plugins: tuple[type[EngineBase], ...] = ()) -> type[Spec]:
    """The ``Spec`` Struct whose ``engines`` also take the given plugin kinds (each an ``EngineBase`` subclass
    tagged with its kind). The spec layer never looks plugins up: the layer that composes reads them from
    ``engine_adapters.registry.plugin_engines()`` and hands them down (``runner.planner.load_spec``, the CLI's
    `schema`), as it hands down the pack checks. A tagged union is only a union of Structs, so it can be built
    here at load time; the subclass keeps every other field and setting of ``Spec``."""
    if not plugins:
        return Spec
    kinds = [engine_tag(c) for c in (*BUILTIN_ENGINES, *plugins)]
    dup = sorted({k for k in kinds if kinds.count(k) > 1})
    if dup or not all(issubclass(c, EngineBase) for c in plugins):
        raise ValueError(f"plugin engine kinds must be EngineBase Structs with new tags (taken twice: {dup})")
    union = functools.reduce(operator.or_, (*BUILTIN_ENGINES, *plugins))
    widened = msgspec.defstruct("Spec", [("engines", dict[str, union])], bases=(Spec,), kw_only=True)  # type: ignore[valid-type]
    return cast(type[Spec], widened)


DEFAULT_HEALTH_PATH = {
    "vllm": "/health",
    "sglang": "/health",
    "llamacpp": "/health",
    "command": "/health",
    "external": "/v1/models",
}

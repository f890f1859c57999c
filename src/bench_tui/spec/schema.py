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

from typing import Annotated, Any, Literal

import msgspec

ArgValue = str | int | float | bool | None | list[str | int | float] | dict[str, Any]

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0)]
Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]


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


class _EngineBase(_Base, tag_field="kind", kw_only=True):
    model: str = ""  # model path or hub id as the engine takes it
    served_model_name: str | None = None  # what to send as "model"; default: autodetect via /v1/models
    host: str = "127.0.0.1"
    port: Port = 8000
    args: dict[str, ArgValue] = {}
    env: dict[str, str] = {}
    health_path: str | None = None  # default per kind
    startup_timeout: Annotated[float, msgspec.Meta(gt=0)] = 600.0
    chat_template: str | None = None  # path, relative to the spec file
    api_key: str | None = None  # usually "${VAR}": kept unexpanded in saved specs, redacted in outputs
    variants: dict[str, Variant] = {}
    description: str = ""


class VllmEngine(_EngineBase, tag="vllm", kw_only=True):
    # argv prefix used to launch; `vllm serve` by default. CPU wheels need
    # ["{python}", "-m", "vllm.entrypoints.openai.api_server"] (then the model goes in --model).
    launcher: list[str] = msgspec.field(default_factory=lambda: ["vllm", "serve"])


class SglangEngine(_EngineBase, tag="sglang", kw_only=True):
    launcher: list[str] = msgspec.field(default_factory=lambda: ["{python}", "-m", "sglang.launch_server"])


class LlamaCppEngine(_EngineBase, tag="llamacpp", kw_only=True):
    # `llama-server`, or our xllamacpp launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    launcher: list[str] = msgspec.field(default_factory=lambda: ["llama-server"])


class CommandEngine(_EngineBase, tag="command", kw_only=True):
    # any binary; placeholders {model} {port} {host} {python} are substituted
    command: list[str]
    version_command: list[str] | None = None
    metrics_dialect: Literal["vllm", "sglang", "llamacpp", "none"] = "none"


class ExternalEngine(_EngineBase, tag="external", kw_only=True):
    # already running: never started or stopped by us
    base_url: str
    metrics_dialect: Literal["vllm", "sglang", "llamacpp", "none"] = "none"


Engine = VllmEngine | SglangEngine | LlamaCppEngine | CommandEngine | ExternalEngine

ENGINE_KINDS = ("vllm", "sglang", "llamacpp", "command", "external")


# --------------------------------------------------------------------------------------------- workloads


class _WorkloadBase(_Base, tag_field="kind", kw_only=True):
    description: str = ""


class ThroughputWorkload(_WorkloadBase, tag="throughput", kw_only=True):
    """llama-bench style sweep: pp x tg x depth x concurrency x repetitions."""

    pp: list[PositiveInt] = msgspec.field(default_factory=lambda: [512])  # prompt tokens
    tg: list[PositiveInt] = msgspec.field(default_factory=lambda: [128])  # generated tokens
    depths: list[NonNegInt] = msgspec.field(default_factory=lambda: [0])  # context already in the prompt before the pp tokens
    concurrency: list[PositiveInt] = msgspec.field(default_factory=lambda: [1])
    repetitions: PositiveInt = 3
    warmup: NonNegInt = 1
    cache: Literal["cold", "warm"] = "cold"
    endpoint: Literal["completions", "chat"] = "completions"
    request_timeout: Annotated[float, msgspec.Meta(gt=0)] = 600.0
    description: str = ""


class ScenarioWorkload(_WorkloadBase, tag="scenarios", kw_only=True):
    pack: str  # builtin pack name ("standard") or a path relative to the spec file
    subset: str | None = None  # e.g. "short"
    scenarios: list[str] = []  # explicit ids (overrides subset)
    trials: PositiveInt = 1
    parallel: PositiveInt = 1
    mode: Literal["strict", "lenient"] = "lenient"
    max_tokens: PositiveInt = 1024
    request_timeout: Annotated[float, msgspec.Meta(gt=0)] = 300.0
    description: str = ""


class SpecAcceptanceWorkload(_WorkloadBase, tag="spec_acceptance", kw_only=True):
    content: list[Literal["code", "json", "prose"]] = msgspec.field(default_factory=lambda: ["code", "json", "prose"])
    depths: list[NonNegInt] = msgspec.field(default_factory=lambda: [0])
    runs: PositiveInt = 3
    tg: PositiveInt = 256
    description: str = ""


Workload = ThroughputWorkload | ScenarioWorkload | SpecAcceptanceWorkload

WORKLOAD_KINDS = ("throughput", "scenarios", "spec_acceptance")


# --------------------------------------------------------------------------------------------- matrix


class MatrixRule(_Base, kw_only=True):
    engine: str | None = None
    variant: str | None = None
    workload: str | None = None


class Matrix(_Base, kw_only=True):
    """GitHub-Actions-like: (engine variants) x workloads, minus exclude, plus include.

    ``engines`` items are ``name`` (all its variants) or ``name.variant``; default: every engine.
    ``workloads`` default: every workload.
    """

    engines: list[str] | None = None
    workloads: list[str] | None = None
    include: list[MatrixRule] = []
    exclude: list[MatrixRule] = []


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


class Grading(_Base, kw_only=True):
    overrides: list[Override] = []
    alpha: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.7  # deployability = a*quality + (1-a)*responsiveness
    responsiveness_target_ms: Annotated[float, msgspec.Meta(gt=0)] = 2000.0


# --------------------------------------------------------------------------------------------- misc


class Sampling(_Base, kw_only=True):
    temperature: float = 0.0
    seed: int | None = 42
    top_p: float | None = None
    max_tokens: PositiveInt | None = None


class Report(_Base, kw_only=True):
    title: str | None = None
    formats: list[Literal["md", "html"]] = msgspec.field(default_factory=lambda: ["md", "html"])
    baseline: str | None = None  # "engine.variant" that deltas are computed against
    notes: str = ""


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
    runs_dir: str = "runs"


DEFAULT_HEALTH_PATH = {
    "vllm": "/health",
    "sglang": "/health",
    "llamacpp": "/health",
    "command": "/health",
    "external": "/v1/models",
}

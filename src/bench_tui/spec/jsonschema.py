"""The spec's JSON Schema (draft-07), generated from the Structs in ``schema.py``.

``msgspec.json.schema`` writes 2020-12 style output (``$defs``, an OpenAPI ``discriminator`` next to
``anyOf`` for tagged unions, ``enum`` of one value for tags). Editors (yaml-language-server) and the
``jsonschema`` package handle draft-07 best, so the output is converted:

- ``$defs`` -> ``definitions`` and every ``$ref`` rewritten to ``#/definitions/...``;
- the root is the ``Spec`` object itself (in draft-07 a ``$ref`` hides its siblings, title included);
- a tagged union becomes ``{"type": "object", "required": ["kind"], "properties": {"kind": {"enum": [...]}},
  "anyOf": [{"$ref": ...}, ...]}`` where each member pins ``kind`` with ``const``: the editor completes
  ``kind`` and picks the member whose ``const`` matches;
- a one-value ``enum`` becomes ``const``; ``anyOf`` of bare types becomes ``"type": [...]``;
- names in ``engines`` / ``workloads`` / ``variants`` get a ``propertyNames`` pattern (they end up in point
  ids ``engine.variant/workload/point``);
- descriptions are added for the fields whose meaning is not obvious from the name.

The output is deterministic (keys sorted, two-space indent, trailing newline), so the committed copy in
``data/schema/bench-tui.schema.json`` can be compared with a fresh one (tests/unit/test_spec_schema.py).
Regenerate it with ``bench-tui schema --builtin --write src/bench_tui/data/schema/bench-tui.schema.json``
(without ``--builtin`` the output also has the plugin engine kinds installed here).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.spec.schema import EngineBase, spec_type

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "data" / "schema" / "bench-tui.schema.json"
REGENERATE = "bench-tui schema --builtin --write src/bench_tui/data/schema/bench-tui.schema.json"

# engine and variant names may not contain '.', '/' or whitespace; workload names no '/' or whitespace
ENGINE_NAME_PATTERN = r"^[^./\s]+$"
WORKLOAD_NAME_PATTERN = r"^[^/\s]+$"

_TAG_FIELD = "kind"

# definition name -> field -> description (field "" = the definition itself)
_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "Spec": {
        "": "A bench-tui benchmark spec: engines x workloads, expanded by `matrix` into points.",
        "version": "Spec language version; always 1.",
        "name": "Name of the study; shown in the TUI and reports.",
        "engines": "Engines by name (letters, digits, '-', '_'); each has a `kind`.",
        "workloads": "Workloads by name; each has a `kind`.",
        "runs_dir": "Where run directories are written, relative to the current directory.",
    },
    "EngineBase": {
        "kind": "Engine kind: vllm, sglang, llamacpp, command (any binary) or external (already running).",
        "model": "Model path or hub id, as the engine takes it.",
        "served_model_name": "Model name to send in requests; default: read from /v1/models.",
        "port": "TCP port the engine listens on (1..65535).",
        "args": "Engine flags by name as the engine spells them: `kv-cache-dtype: fp8` -> "
        "`--kv-cache-dtype fp8`; true = bare flag; false/null = dropped; a list repeats the flag; a "
        "mapping is passed as compact JSON; the key `_` holds positional arguments.",
        "env": "Extra environment variables for the engine process.",
        "health_path": "HTTP path polled until the engine is ready; default depends on the kind.",
        "startup_timeout": "Seconds to wait for the engine to become healthy.",
        "chat_template": "Chat template file, relative to the spec file.",
        "api_key": "API key; write ${VAR} so the value stays out of the file. Redacted in every output.",
        "variants": "Named variants of this engine; each overrides `args`/`env` (null removes a flag) and may "
        "replace `model`, `launcher` and `chat_template`. "
        "Without variants the engine has one variant, `default`.",
        "launcher": "argv prefix used to start the engine; {python} is this Python.",
        "command": "argv of the server; {model} {port} {host} {python} are substituted.",
        "version_command": "argv that prints the engine's version (recorded in env.json).",
        "metrics_dialect": "Which Prometheus metric names /metrics uses.",
        "base_url": "Base URL of the running server, e.g. http://127.0.0.1:8000.",
    },
    "Variant": {
        "": "A variant of an engine: its args/env are laid over the engine's.",
        "args": "Flags laid over the engine's `args`; null removes an inherited flag.",
        "env": "Environment laid over the engine's `env`.",
        "chat_template": 'Chat template file for this variant, relative to the spec file; "" = the model\'s '
        "own (stock) template even when the engine sets one.",
        "model": "Replaces the engine's model (same forms: a path, a hub id, builtin:NAME).",
        "launcher": "Replaces the engine's launcher (vllm, sglang and llamacpp engines).",
    },
    "ThroughputWorkload": {
        "pp": "Prompt lengths in tokens.",
        "tg": "Generated tokens per request.",
        "depths": "Context tokens already in the prompt before the pp tokens (0 = none).",
        "concurrency": "Requests in flight at once.",
        "repetitions": "Measured requests per concurrent slot at each point.",
        "warmup": "Unmeasured requests before each point.",
        "cache": "cold: a unique prefix per request (no prefix-cache hits); warm: a shared, primed context.",
        "endpoint": "OpenAI endpoint: /v1/completions or /v1/chat/completions.",
        "request_timeout": "Seconds before a request counts as failed.",
        "idle_timeout": "Seconds with requests in flight and no token arriving before the point is ended early, marked stalled.",
    },
    "ScenarioWorkload": {
        "": "Agentic scenarios from a pack, graded.",
        "pack": "Builtin pack name (e.g. standard) or a pack file relative to the spec file.",
        "subset": "A named subset of the pack (e.g. short).",
        "scenarios": "Explicit scenario ids; overrides `subset`.",
        "trials": "Runs of each scenario (for pass@k / pass^k).",
        "parallel": "Scenarios run at once.",
        "mode": "strict or lenient grading.",
        "max_tokens": "max_tokens of each turn.",
        "request_timeout": "Seconds before a turn counts as failed.",
        "idle_timeout": "Seconds with requests in flight and no token arriving before the point is ended early, marked stalled.",
    },
    "SpecAcceptanceWorkload": {
        "": "Speculative-decoding acceptance per content type and depth.",
        "content": "Kinds of text to generate.",
        "depths": "Context tokens before the generation.",
        "runs": "Requests per point.",
        "tg": "Generated tokens per request.",
        "idle_timeout": "Seconds with requests in flight and no token arriving before the point is ended early, marked stalled.",
    },
    "Matrix": {
        "engines": "`engine` (all its variants) or `engine.variant`; default: every engine.",
        "workloads": "Workload names; default: every workload.",
        "include": "Cells added (even outside engines x workloads); wins over exclude.",
        "exclude": "Cells removed from engines x workloads.",
    },
    "MatrixRule": {
        "": "Matches cells; a missing field matches anything. `engine: name.variant` is also accepted.",
    },
    "Override": {
        "": "A human verdict replacing a grader's verdict for one scenario.",
        "scenario": "Scenario id in a pack used by a scenarios workload.",
        "engine": "Only for this engine (default: every engine).",
        "variant": "Only for this variant (default: every variant).",
        "date": "ISO date, e.g. 2026-01-31.",
        "raw_verdict": "The grader's verdict this override corrects.",
        "transcript_sha256": "Binds the override to one stored transcript; it is flagged stale when that changes.",
    },
    "Grading": {
        "alpha": "deployability = alpha * quality + (1 - alpha) * responsiveness.",
        "responsiveness_target_ms": "Latency at which responsiveness scores 0.5.",
    },
    "Sampling": {
        "": "Sampling parameters sent with every request.",
        "max_tokens": "Default max_tokens where a workload does not set one.",
    },
    "Report": {
        "formats": "Report files to write.",
        "baseline": "`engine.variant` that deltas are computed against.",
        "noise_threshold_pct": "Practical threshold (%; points for rates): a difference is claimed only when "
        "its whole 95 % interval lies beyond it. Default 5.",
    },
}


def _descriptions_for(def_name: str, engine_defs: set[str]) -> dict[str, str]:
    out = dict(_DESCRIPTIONS.get("EngineBase", {})) if def_name in engine_defs else {}
    out.update(_DESCRIPTIONS.get(def_name, {}))
    return out


def _fix_refs(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/"):
                out[k] = "#/definitions/" + v[len("#/$defs/") :]
            else:
                out[k] = _fix_refs(v)
        return out
    if isinstance(node, list):
        return [_fix_refs(v) for v in node]
    return node


def _convert(node: Any) -> Any:
    """Draft-07 idioms, bottom-up."""
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    conv: dict[str, Any] = {}
    for k, v in node.items():
        if k in ("default", "const", "enum", "description", "title"):
            conv[k] = v  # values, not schemas
        elif k == "properties":
            conv[k] = {name: _convert(sub) for name, sub in v.items()}  # field names are not keywords
        else:
            conv[k] = _convert(v)
    node = conv
    disc = node.pop("discriminator", None)
    if disc is not None and "anyOf" in node:
        field = disc.get("propertyName", _TAG_FIELD)
        tags = list(disc.get("mapping", {}))
        node["type"] = "object"
        node["required"] = [field]
        node["properties"] = {
            field: {"enum": tags, "description": f"Selects the kind; one of: {', '.join(tags)}."}
        }
    if "enum" in node and isinstance(node["enum"], list) and len(node["enum"]) == 1 and "default" not in node:
        node["const"] = node.pop("enum")[0]
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and all(
        isinstance(m, dict) and set(m) == {"type"} and isinstance(m["type"], str) for m in any_of
    ):
        node.pop("anyOf")
        node["type"] = [m["type"] for m in any_of]
    if node.get("required") == []:
        node.pop("required")
    return node


def _describe(defs: dict[str, Any], engine_defs: set[str]) -> None:
    for name, schema in defs.items():
        texts = _descriptions_for(name, engine_defs)
        if "" in texts:
            schema["description"] = texts[""]
        props = schema.get("properties", {})
        for field, text in texts.items():
            if not field or field not in props:
                continue
            prop = props[field]
            if "$ref" in prop:  # draft-07 ignores siblings of $ref: wrap it
                props[field] = {"allOf": [{"$ref": prop["$ref"]}], "description": text}
            else:
                prop["description"] = text


def _name_patterns(spec: dict[str, Any], defs: dict[str, Any], engine_defs: set[str]) -> None:
    spec["properties"]["engines"]["propertyNames"] = {"pattern": ENGINE_NAME_PATTERN}
    spec["properties"]["workloads"]["propertyNames"] = {"pattern": WORKLOAD_NAME_PATTERN}
    for name in engine_defs:
        defs[name]["properties"]["variants"]["propertyNames"] = {"pattern": ENGINE_NAME_PATTERN}


def build_schema(plugins: tuple[type[EngineBase], ...] = ()) -> dict[str, Any]:
    """The spec's JSON Schema (draft-07) as a dict; ``plugins``: engine kinds installed beside the built-in
    ones (``engine_adapters.registry.plugin_engines()``, handed down by the CLI)."""
    raw = copy.deepcopy(msgspec.json.schema(spec_type(plugins)))
    defs: dict[str, Any] = raw.pop("$defs")
    defs = _fix_refs(defs)
    defs = {name: _convert(schema) for name, schema in defs.items()}
    engines = defs["Spec"]["properties"]["engines"]["additionalProperties"]["anyOf"]
    engine_defs = {m["$ref"].rsplit("/", 1)[-1] for m in engines}
    _describe(defs, engine_defs)
    spec = defs.pop("Spec")
    _name_patterns(spec, defs, engine_defs)
    spec.pop("title", None)
    if any(
        "#/definitions/Spec" in json.dumps(d) for d in defs.values()
    ):  # pragma: no cover - not recursive today
        raise RuntimeError("the Spec struct is referenced recursively; the root can no longer be inlined")
    root: dict[str, Any] = {
        "$schema": DRAFT_07,
        "title": "bench-tui spec",
        **spec,
        "definitions": defs,
    }
    return root


def render_schema(plugins: tuple[type[EngineBase], ...] = ()) -> str:
    """``build_schema()`` as stable text: sorted keys, two-space indent, trailing newline."""
    return json.dumps(build_schema(plugins), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema(path: Path | str = SCHEMA_PATH) -> Path:
    """The committed copy: the built-in kinds only."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_schema(), encoding="utf-8")
    return p

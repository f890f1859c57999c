"""Does a workload fit the engine's context? Checked before a run (``validate``, ``plan``) and read after one.

An engine serves each request in a slot whose context holds prompt + output. When they reach it the engine stops
the generation with ``finish_reason=length`` before ``max_tokens``: that is a configuration error (context too
small for the workload), not a model failure and not the token ceiling.

Per-slot context, from the engine's flags (variant merged over engine):
- llama.cpp: ``ctx-size`` / ``parallel`` (``-c`` / ``-np``); the whole ``ctx-size`` with ``kv-unified``. Our
  xllamacpp launcher defaults to 4096 and 1 slot; a real llama-server without ``ctx-size`` reads the model's.
- vLLM: ``max-model-len``; SGLang: ``context-length``. Without the flag the model's own length applies: unknown.

Largest prompt per workload: throughput ``max(pp) + max(depths)`` tokens (+ ``max(tg)`` generated); spec
acceptance ``max(depths)`` + its task text (about 120 tokens); scenarios: the largest selected scenario's first
request (system, history, user, the offered tools' JSON schemas) and every mock result it can receive, counted
at CHARS_PER_TOKEN characters a token (an estimate: JSON and code run 3-4), plus ``max_tokens``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.graders.pack import Pack, load_pack
from bench_tui.spec.flags import merge_args
from bench_tui.spec.matrix import expand
from bench_tui.spec.schema import (
    Engine,
    ScenarioWorkload,
    SpecAcceptanceWorkload,
    ThroughputWorkload,
    Variant,
)

XLLAMA_MODULE = "bench_tui.engine_adapters.xllama_server"
XLLAMA_DEFAULT_CTX = 4096
CHARS_PER_TOKEN = 3.5
TOOL_WRAPPER_CHARS = 40  # {"type": "function", "function": ...} around each tool schema
TEMPLATE_TOKENS = 200  # the chat template's own tool-calling instructions
ACCEPTANCE_TASK_TOKENS = 120


@dataclass
class SlotContext:
    tokens: int
    how: str  # e.g. "ctx-size 16384 / parallel 4"


@dataclass
class Need:
    prompt: int  # largest prompt, tokens
    output: int  # its max generated tokens
    how: str  # e.g. "pp 2048 + depth 4096"
    estimate: bool = False


def _arg(args: dict[str, Any], *names: str) -> Any:
    norm = {k.lstrip("-"): v for k, v in args.items()}
    for n in names:
        if n in norm and norm[n] is not None and norm[n] is not False:
            return norm[n]
    return None


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def slot_context(engine: Engine, variant: Variant | None) -> SlotContext | None:
    """Tokens one request may hold (prompt + output) on this engine variant; None when the flags do not say."""
    kind = str(type(engine).__struct_config__.tag)
    args = merge_args(engine.args, variant.args if variant else None)
    if kind == "llamacpp":
        launcher = (
            variant.launcher
            if variant is not None and variant.launcher is not None
            else getattr(engine, "launcher", [])
        )
        xllama = XLLAMA_MODULE in launcher
        ctx = _int(_arg(args, "ctx-size", "c"))
        if ctx is None and xllama:
            ctx = XLLAMA_DEFAULT_CTX
        if not ctx:
            return None  # 0 / unset on llama-server: the model's training context
        parallel = _int(_arg(args, "parallel", "np"))
        if parallel is None:
            if not xllama:
                return None  # llama-server picks the slot count itself
            parallel = 1
        if _arg(args, "kv-unified", "kvu") is True:
            return SlotContext(ctx, f"ctx-size {ctx}, kv-unified (slots share it)")
        parallel = max(1, parallel)
        return SlotContext(ctx // parallel, f"ctx-size {ctx} / parallel {parallel}")
    if kind == "vllm":
        n = _int(_arg(args, "max-model-len"))
        return SlotContext(n, f"max-model-len {n}") if n and n > 0 else None
    if kind == "sglang":
        n = _int(_arg(args, "context-length"))
        return SlotContext(n, f"context-length {n}") if n and n > 0 else None
    return None


def _chars(obj: Any) -> int:
    return len(obj) if isinstance(obj, str) else len(json.dumps(obj, ensure_ascii=False))


def scenario_chars(sc: Any, pack: Pack) -> int:
    """Characters a scenario's conversation can hold before the model's own turns: system, history, user,
    follow-ups, the offered tools' schemas and every mock result."""
    n = _chars(sc.system or "") + sum(_chars(m) for m in sc.history) + _chars(sc.user)
    n += sum(_chars(f) for f in sc.followups)
    for name in sc.offered_tools(pack):
        tool = pack.tools.get(name)
        if tool is not None:
            n += _chars(msgspec_builtins(tool)) + TOOL_WRAPPER_CHARS
    n += sum(_chars(msgspec_builtins(m)) for m in sc.mocks)
    return n


def msgspec_builtins(obj: Any) -> Any:
    return msgspec.to_builtins(obj)


def workload_need(wl: Any, spec_dir: Path | None, pack_cache: dict[str, Pack] | None = None) -> Need | None:
    """The largest prompt of a workload and the output it asks for; None when it cannot be told."""
    if isinstance(wl, ThroughputWorkload):
        pp, depth, tg = max(wl.pp), max(wl.depths), max(wl.tg)
        return Need(pp + depth, tg, f"pp {pp} + depth {depth}")
    if isinstance(wl, SpecAcceptanceWorkload):
        depth = max(wl.depths)
        return Need(
            depth + ACCEPTANCE_TASK_TOKENS,
            wl.tg,
            f"depth {depth} + about {ACCEPTANCE_TASK_TOKENS} task",
            estimate=True,
        )
    if isinstance(wl, ScenarioWorkload):
        cache = pack_cache if pack_cache is not None else {}
        key = f"{spec_dir}|{wl.pack}"
        try:
            pack = cache.get(key) or load_pack(wl.pack, spec_dir)
        except Exception:  # noqa: BLE001 - a bad pack is the loader's error to report, not this check's
            return None
        cache[key] = pack
        chosen = pack.select(subset=wl.subset, ids=list(wl.scenarios) or None)
        if not chosen:
            return None
        big = max(chosen, key=lambda sc: scenario_chars(sc, pack))
        tokens = int(scenario_chars(big, pack) / CHARS_PER_TOKEN) + TEMPLATE_TOKENS
        return Need(
            tokens,
            wl.max_tokens,
            f"scenario {big.id}: messages, tool schemas and mock results, "
            f"estimated at {CHARS_PER_TOKEN} characters a token",
            estimate=True,
        )
    return None


def context_warnings(loaded: Any) -> list[str]:
    """One line per engine variant x workload whose largest prompt (+ output) does not fit the slot context."""
    spec = loaded.spec
    out: list[str] = []
    cache: dict[str, Pack] = {}
    needs: dict[str, Need | None] = {}
    for cell in expand(spec):
        eng = spec.engines[cell.engine]
        ctx = slot_context(eng, eng.variants.get(cell.variant))
        if ctx is None:
            continue
        if cell.workload not in needs:
            needs[cell.workload] = workload_need(spec.workloads[cell.workload], loaded.dir, cache)
        need = needs[cell.workload]
        if need is None:
            continue
        where = loaded.where(("workloads", cell.workload))
        about = "about " if need.estimate else ""
        total = need.prompt + need.output
        if need.prompt >= ctx.tokens:
            verb = "may not fit" if need.estimate else "does not fit"
            out.append(
                f"{where}: warning: {cell.engine}.{cell.variant} x {cell.workload}: the largest prompt "
                f"({about}{need.prompt} tokens: {need.how}) {verb} the per-slot context of {ctx.tokens} "
                f"({ctx.how}); raise the context or lower the slot count"
            )
        elif total > ctx.tokens:
            out.append(
                f"{where}: warning: {cell.engine}.{cell.variant} x {cell.workload}: the largest prompt "
                f"({about}{need.prompt} tokens: {need.how}) + {need.output} output = {total} tokens exceeds "
                f"the per-slot context of {ctx.tokens} ({ctx.how}); generations would stop with "
                f"'context full'; raise the context or lower the slot count"
            )
    return out

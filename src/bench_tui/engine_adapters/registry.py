"""Engine kinds and metrics dialects, by name: the one place that knows which exist.

An *engine kind* is an adapter class (how to launch the engine, check it is ready, tokenize, reset its cache):
``adapter_class("vllm")``. A *metrics dialect* is what an engine's ``/metrics`` and control endpoints mean:
``dialect("llamacpp").server_side(before, after)``. Both are looked up here first among the built-in ones,
then among installed entry points, so a package can add its own without touching bench-tui:

    [project.entry-points."bench_tui.engines"]
    tgi = "my_pkg.tgi:TgiAdapter"                 # an EngineAdapter subclass
    [project.entry-points."bench_tui.dialects"]
    tgi = "my_pkg.tgi:TGI_DIALECT"                # a registry.Dialect

A plugin engine kind brings its own spec Struct, its typed options: the adapter's ``options``, an
``spec.schema.EngineBase`` subclass tagged with the kind (``class TgiEngine(EngineBase, tag="tgi")``).
``plugin_engines()`` hands those Structs to the spec loader and the JSON Schema (the spec layer does not import
this one), so ``engines.<name>.kind: tgi`` validates at ``file:line:col`` like a built-in kind. A spec names a
plugin dialect in ``metrics_dialect:`` of a ``command`` or ``external`` engine (CONTRIBUTING.md, recipe 1).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from bench_tui.engine_adapters import dialects as D
from bench_tui.engine_adapters.base import EngineAdapter
from bench_tui.events import ServerSide
from bench_tui.spec.schema import EngineBase, engine_tag

ENGINES_GROUP = "bench_tui.engines"
DIALECTS_GROUP = "bench_tui.dialects"

Scrape = dict[str, float]


def _vllm_tokenize(model_id: str, text: str) -> dict[str, Any]:
    return {"model": model_id, "prompt": text}


def _llama_tokenize(model_id: str, text: str) -> dict[str, Any]:
    return {"content": text}


@dataclass(frozen=True)
class Dialect:
    """What one family of engines' counters and controls mean."""

    name: str
    server_side: Callable[[Scrape, Scrape], ServerSide]  # the engine's own account of a point (two scrapes)
    engine_stats: Callable[[Scrape], dict[str, float | None]]  # live gauges: running, waiting, kv_usage
    exact_tg: bool = False  # accepts ignore_eos: the generation length can be pinned
    min_tokens: bool = False  # accepts min_tokens
    prompt_counts_cached: bool = True  # the server's prompt counter includes prefix-cache hits
    slots: bool = False  # GET /slots describes each slot (llama.cpp): scraped beside /metrics
    reset_path: str | None = None  # POST here empties the prefix cache (llama.cpp erases slot by slot)
    tokenize: tuple[Callable[[str, str], dict[str, Any]], ...] = ()  # /tokenize bodies to try, in order


def _builtin(name: str, **features: Any) -> Dialect:
    """A built-in dialect: its counters are read by ``dialects.server_side`` / ``engine_stats`` under its name."""
    return Dialect(
        name,
        lambda before, after: D.server_side(name, before, after),
        lambda values: D.engine_stats(name, values),
        **features,
    )


BUILTIN_DIALECTS: dict[str, Dialect] = {
    "vllm": _builtin(
        "vllm", exact_tg=True, min_tokens=True, reset_path="/reset_prefix_cache", tokenize=(_vllm_tokenize,)
    ),
    "sglang": _builtin(
        "sglang", exact_tg=True, min_tokens=True, reset_path="/flush_cache", tokenize=(_vllm_tokenize,)
    ),
    "llamacpp": _builtin(
        "llamacpp", exact_tg=True, prompt_counts_cached=False, slots=True, tokenize=(_llama_tokenize,)
    ),
    # an engine that declares nothing: its counters are recognised by name when it exports vLLM's or
    # llama.cpp's, and /tokenize is tried in both shapes
    "none": _builtin("none", tokenize=(_vllm_tokenize, _llama_tokenize)),
}

BUILTIN_ENGINES: dict[str, str] = {
    "vllm": "bench_tui.engine_adapters.vllm:VllmAdapter",
    "sglang": "bench_tui.engine_adapters.sglang:SglangAdapter",
    "llamacpp": "bench_tui.engine_adapters.llamacpp:LlamaCppAdapter",
    "command": "bench_tui.engine_adapters.command:CommandAdapter",
    "external": "bench_tui.engine_adapters.external:ExternalAdapter",
}


class UnknownName(LookupError):
    """A kind or dialect neither built in nor installed as an entry point (message lists what is known)."""


def _load(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _entry(group: str, name: str) -> Any | None:
    for ep in entry_points(group=group):
        if ep.name == name:
            return ep.load()
    return None


class PluginError(ValueError):
    """An installed engine plugin that cannot be used (the message names the entry point and what to fix)."""


def plugin_engines() -> tuple[type[EngineBase], ...]:
    """The spec Structs of the engine kinds installed as ``bench_tui.engines`` entry points, sorted by kind.
    Raises ``PluginError`` for a plugin that does not load or does not declare its options properly: a
    broken plugin is said out loud, not dropped."""
    out: list[type[EngineBase]] = []
    for ep in sorted(entry_points(group=ENGINES_GROUP), key=lambda e: e.name):
        where = f"the {ENGINES_GROUP} entry point {ep.name} = {ep.value!r}"
        if ep.name in BUILTIN_ENGINES:
            raise PluginError(f"{where}: {ep.name!r} is a built-in kind; give the plugin's kind another name")
        try:
            cls = ep.load()
        except Exception as exc:  # noqa: BLE001 - whatever a third-party import raises, say which plugin
            raise PluginError(f"{where} does not load: {type(exc).__name__}: {exc}") from None
        options = getattr(cls, "options", None)
        if not (isinstance(cls, type) and issubclass(cls, EngineAdapter)):
            raise PluginError(f"{where} is not an EngineAdapter subclass")
        if not (isinstance(options, type) and issubclass(options, EngineBase)):
            raise PluginError(
                f"{where}: {cls.__name__}.options must be the kind's spec Struct, a subclass of "
                f"bench_tui.spec.schema.EngineBase tagged {ep.name!r}"
            )
        if engine_tag(options) != ep.name or cls.kind != ep.name:
            raise PluginError(
                f"{where}: the options Struct is tagged {engine_tag(options)!r} and the adapter's kind is "
                f"{cls.kind!r}; both must be {ep.name!r}"
            )
        out.append(options)
    return tuple(out)


def dialect_names() -> list[str]:
    return sorted({*BUILTIN_DIALECTS, *(ep.name for ep in entry_points(group=DIALECTS_GROUP))})


def engine_kinds() -> list[str]:
    return sorted({*BUILTIN_ENGINES, *(ep.name for ep in entry_points(group=ENGINES_GROUP))})


def dialect(name: str) -> Dialect:
    found = BUILTIN_DIALECTS.get(name) or _entry(DIALECTS_GROUP, name)
    if not isinstance(found, Dialect):
        raise UnknownName(f"unknown metrics dialect {name!r}; known: {', '.join(dialect_names())}")
    return found


def adapter_class(kind: str) -> type[EngineAdapter]:
    ref = BUILTIN_ENGINES.get(kind)
    cls = _load(ref) if ref is not None else _entry(ENGINES_GROUP, kind)
    if not (isinstance(cls, type) and issubclass(cls, EngineAdapter)):
        raise UnknownName(f"unknown engine kind {kind!r}; known: {', '.join(engine_kinds())}")
    return cls

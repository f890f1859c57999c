"""Engine adapters: one per engine kind, built by ``make_adapter`` (the runner's only way in).

    adapter = make_adapter("vllm", spec.engines["vllm"], "warm", variant, spec_dir=..., log_dir=..., emit=...)

Kinds: vllm, sglang, llamacpp (llama-server or our xllamacpp launcher), command (any binary), external
(already running), and any installed in the ``bench_tui.engines`` entry point group (``registry``). A bad engine section raises ``EngineConfigError`` (a ``ValueError`` with a clear message).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from bench_tui.engine_adapters.base import Emit, EngineAdapter, EngineInfo, EngineStartError
from bench_tui.engine_adapters.process import EngineConfigError, engine_kind
from bench_tui.engine_adapters.registry import UnknownName, adapter_class
from bench_tui.spec.schema import Engine, Variant

__all__ = ["EngineAdapter", "EngineConfigError", "EngineInfo", "EngineStartError", "make_adapter"]


def variant_engine(name: str, engine: Engine, variant_name: str, variant: Variant | None) -> Engine:
    """The engine as this variant runs it: the variant's ``model`` and ``launcher`` replace the engine's."""
    if variant is None:
        return engine
    changes: dict[str, object] = {}
    if variant.model is not None:
        changes["model"] = variant.model
    if variant.launcher is not None:
        if not hasattr(engine, "launcher"):
            raise EngineConfigError(
                f"{name}.{variant_name}: `launcher` in a variant needs an engine that has one "
                f"(vllm, sglang, llamacpp); a {engine_kind(engine)} engine has none"
            )
        changes["launcher"] = list(variant.launcher)
    return msgspec.structs.replace(engine, **changes) if changes else engine


def make_adapter(
    name: str,
    engine: Engine,
    variant_name: str,
    variant: Variant | None,
    *,
    spec_dir: Path | str,
    log_dir: Path | str,
    emit: Emit,
) -> EngineAdapter:
    kind = engine_kind(engine)
    engine = variant_engine(name, engine, variant_name, variant)
    try:
        cls = adapter_class(kind)
    except UnknownName as exc:
        raise EngineConfigError(f"{name}: {exc}") from None
    return cls(name, engine, variant_name, variant, spec_dir=Path(spec_dir), log_dir=Path(log_dir), emit=emit)

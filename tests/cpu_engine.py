"""The real CPU engine for tests, started through the engine adapter exactly as a spec would start it:
llama.cpp's server from the xllamacpp wheel via our llama-server-like launcher, serving the pinned Qwen GGUF."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench_tui.engine_adapters import make_adapter
from bench_tui.engine_adapters.install import model_path
from bench_tui.spec.schema import LlamaCppEngine


@contextmanager
def cpu_engine(port: int, log_dir: Path, *, parallel: int = 2, ctx: int = 4096,
               startup_timeout: float = 120.0) -> Iterator[str]:
    """Start the engine on 127.0.0.1:``port``, yield its base URL, stop it (the whole process group)."""
    assert model_path().exists(), f"model missing: run python -m bench_tui.engine_adapters.install ({model_path()})"
    eng = LlamaCppEngine(
        launcher=["{python}", "-m", "bench_tui.engine_adapters.xllama_server"],
        model="builtin:qwen2.5-coder-0.5b", port=port, startup_timeout=startup_timeout,
        args={"ctx-size": ctx, "parallel": parallel, "threads": 2, "metrics": True, "slots": True, "jinja": True},
    )
    adapter = make_adapter("cpu", eng, "default", None, spec_dir=log_dir, log_dir=log_dir, emit=lambda ev: None)
    adapter.start()
    try:
        yield adapter.wait_ready().base_url
    finally:
        adapter.stop()

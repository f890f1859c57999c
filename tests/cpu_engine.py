"""The real CPU engine for tests, started through the engine adapter exactly as a spec would start it:
llama.cpp's server from the xllamacpp wheel via our llama-server-like launcher, serving the pinned Qwen GGUF.

Ports: the engine gets a port the kernel picked a moment before (``free_port``); if another process took it
in between, the start is retried once on a fresh one (``start_with_free_port``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from bench_tui.engine_adapters import make_adapter
from bench_tui.engine_adapters.base import EngineStartError
from bench_tui.engine_adapters.install import model_path
from bench_tui.spec.schema import LlamaCppEngine
from scripted_server import free_port

T = TypeVar("T")

_IN_USE = ("already in use", "address in use", "eaddrinuse", "couldn't bind", "could not bind")


def port_was_taken(message: str) -> bool:
    """Whether an engine start failed because its port was taken (the race ``free_port`` accepts)."""
    low = message.lower()
    return any(s in low for s in _IN_USE)


def start_with_free_port(start: Callable[[int], T], *, attempts: int = 2) -> T:
    """``start(port)`` on a free port; once more on a fresh port if the first was taken meanwhile."""
    for attempt in range(attempts):
        try:
            return start(free_port())
        except EngineStartError as exc:
            if attempt + 1 == attempts or not port_was_taken(str(exc)):
                raise
    raise AssertionError("unreachable")


def engine_threads() -> int:
    """llama.cpp threads for the test engine: every core when it runs alone, and the cores the other
    pytest-xdist workers leave free when it runs beside them (at least one).

    Two threads on two cores beside a busy xdist worker oversubscribe the box: measured with
    bench/engine_contention.py, an 8k-token prefill took 123 s alone, 290 s with 2 threads
    beside one busy core, 230 s with 1 thread there."""
    cores = os.cpu_count() or 1
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, cores - (workers - 1))


@contextmanager
def cpu_engine(
    log_dir: Path, *, parallel: int = 2, ctx: int = 4096, startup_timeout: float = 120.0
) -> Iterator[str]:
    """Start the engine on 127.0.0.1 (a free port), yield its base URL, stop it (the whole process group)."""
    assert model_path().exists(), (
        f"model missing: run python -m bench_tui.engine_adapters.install ({model_path()})"
    )

    def start(port: int):  # type: ignore[no-untyped-def]
        eng = LlamaCppEngine(
            launcher=["{python}", "-m", "bench_tui.engine_adapters.xllama_server"],
            model="builtin:qwen2.5-coder-0.5b",
            port=port,
            startup_timeout=startup_timeout,
            args={
                "ctx-size": ctx,
                "parallel": parallel,
                "threads": engine_threads(),
                "metrics": True,
                "slots": True,
                "jinja": True,
            },
        )
        adapter = make_adapter(
            "cpu", eng, "default", None, spec_dir=log_dir, log_dir=log_dir, emit=lambda ev: None
        )
        adapter.start()
        try:
            return adapter, adapter.wait_ready().base_url
        except BaseException:
            adapter.stop()
            raise

    adapter, url = start_with_free_port(start)
    try:
        yield url
    finally:
        adapter.stop()

"""The engine adapter contract. The runner is the only caller.

An adapter is built for one (engine, variant) of a spec. Lifecycle is synchronous (it runs between
points, in the runner's control thread); measuring never goes through here except `scrape_metrics`,
which is called before and after each point.

    adapter = make_adapter(name, engine_spec, variant_name, spec_dir=..., log_dir=..., emit=...)
    adapter.start()                 # own process group, exact argv recorded, logs -> engines/<name>.log + events
    info = adapter.wait_ready()     # health + model list, clear EngineStartError on failure
    ... adapter.scrape_metrics() ... adapter.reset_prefix_cache() ...
    if not adapter.is_alive(): ...  # crash detection (the runner restarts once)
    adapter.stop()                  # SIGTERM to the group, wait, SIGKILL

`external` engines implement start/stop as no-ops.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from bench_tui.events import Event
from bench_tui.spec.schema import Engine, EngineBase, Variant

Emit = Callable[[Event], None]


class EngineStartError(RuntimeError):
    """Start or readiness failed. ``str(err)`` is a complete message for a person (includes the log tail)."""

    def __init__(self, message: str, log_tail: list[str] | None = None) -> None:
        self.log_tail = log_tail or []
        tail = "\n".join("    " + line for line in self.log_tail[-15:])
        super().__init__(message + (f"\n  last log lines:\n{tail}" if tail else ""))


class EngineInfo(msgspec.Struct, kw_only=True):
    base_url: str  # e.g. http://127.0.0.1:8000 (no /v1)
    model_id: str  # what to send as "model"
    version: str = ""
    startup_s: float = 0.0
    command: list[str] = []  # exact argv, secrets redacted
    pid: int | None = None


class EngineAdapter(abc.ABC):
    kind: str = ""
    metrics_dialect: str = "none"  # vllm | sglang | llamacpp | none
    # a plugin kind's spec Struct: its typed options, tagged with ``kind`` (the built-in kinds' are in spec/schema.py)
    options: ClassVar[type[EngineBase] | None] = None

    def __init__(
        self,
        name: str,
        engine: Engine,
        variant_name: str,
        variant: Variant | None,
        *,
        spec_dir: Path,
        log_dir: Path,
        emit: Emit,
    ) -> None:
        self.name = name
        self.engine = engine
        self.variant_name = variant_name
        self.variant = variant
        self.spec_dir = spec_dir
        self.log_dir = log_dir
        self.emit = emit

    # -- what would run
    @abc.abstractmethod
    def command(self) -> list[str]:
        """The exact argv (placeholders substituted, variant args merged)."""

    @abc.abstractmethod
    def environment(self) -> dict[str, str]:
        """Extra environment for the engine process (spec env + variant env)."""

    @property
    @abc.abstractmethod
    def base_url(self) -> str: ...

    @property
    def headers(self) -> dict[str, str]:
        """Auth headers for requests (api_key), never logged."""
        return {}

    # -- lifecycle
    @abc.abstractmethod
    def start(self) -> None: ...

    @abc.abstractmethod
    def wait_ready(self, timeout: float | None = None) -> EngineInfo: ...

    @abc.abstractmethod
    def stop(self, timeout: float = 20.0) -> int | None: ...

    @abc.abstractmethod
    def is_alive(self) -> bool: ...

    @abc.abstractmethod
    def log_tail(self, n: int = 30) -> list[str]: ...

    # -- observation and control
    @abc.abstractmethod
    def scrape_metrics(self) -> dict[str, float]:
        """Flat ``name{sorted labels}`` -> value from the engine's metrics (and /slots where relevant)."""

    def reset_prefix_cache(self) -> bool:
        """Drop the engine's prefix cache when it has a control for it; True if it did."""
        return False

    def tokenize(self, text: str) -> list[int] | None:
        """Token ids from the engine's own tokenizer endpoint, None when it has none."""
        return None

    def prefix_caching(self) -> str:
        """The engine's prefix caching as its flags set it: on | off | unknown."""
        return "unknown"

    def env_info(self) -> dict[str, Any]:
        """For env.json: version, exact command, kind."""
        return {}

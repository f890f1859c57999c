"""An engine that is already running at ``base_url``: never started, never stopped, never killed.

Readiness is the same as for launched engines (health path + model list). ``is_alive`` is False only when
the server refuses connections (a busy server that answers slowly is alive).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench_tui.engine_adapters import http
from bench_tui.engine_adapters.base import Emit
from bench_tui.engine_adapters.llamacpp import flatten_slots
from bench_tui.engine_adapters.process import ServedEngine
from bench_tui.events import EngineStarting, EngineStopped
from bench_tui.spec.schema import Engine, ExternalEngine, Variant


class ExternalAdapter(ServedEngine):
    kind = "external"

    def __init__(self, name: str, engine: Engine, variant_name: str, variant: Variant | None, *,
                 spec_dir: Path, log_dir: Path, emit: Emit) -> None:
        super().__init__(name, engine, variant_name, variant, spec_dir=spec_dir, log_dir=log_dir, emit=emit)
        assert isinstance(engine, ExternalEngine)
        self._url = engine.base_url.rstrip("/")
        if self._url.endswith("/v1"):
            self._url = self._url[:-3]
        self.metrics_dialect = engine.metrics_dialect
        self._notes: list[str] = []

    @property
    def base_url(self) -> str:
        return self._url

    def command(self) -> list[str]:
        return []

    def start(self) -> None:
        self._stopping = False
        self._t0 = time.monotonic()
        self._notes.append(f"external engine at {self._url}: not started by bench-tui")
        self.emit(EngineStarting(engine=self.name, variant=self.variant_name, command=[], log_path=""))

    def stop(self, timeout: float = 20.0) -> int | None:
        self.emit(EngineStopped(engine=self.name, variant=self.variant_name, returncode=None,
                                reason="external engine: left running"))
        return None

    def is_alive(self) -> bool:
        try:
            http.request("GET", self.url(self.health_path), headers=self.headers, timeout=2.0)
        except http.HttpError:
            return True  # it answered
        except ConnectionRefusedError:
            return False
        except OSError:
            return True  # slow or busy is not dead
        return True

    def log_tail(self, n: int = 30) -> list[str]:
        return self._notes[-n:]

    def scrape_metrics(self) -> dict[str, float]:
        values = super().scrape_metrics()
        if self.metrics_dialect == "llamacpp":
            try:
                values.update(flatten_slots(http.get_json(self.url("/slots"), headers=self.headers,
                                                          timeout=5.0)))
            except (OSError, ValueError):
                pass
        return values

    def reset_prefix_cache(self) -> bool:
        path = {"vllm": "/reset_prefix_cache", "sglang": "/flush_cache"}.get(self.metrics_dialect)
        return self._post_ok(path) if path else False

    def tokenize(self, text: str) -> list[int] | None:
        body: dict[str, Any] = {"content": text} if self.metrics_dialect == "llamacpp" else \
            {"model": self.model_id, "prompt": text}
        try:
            data: Any = http.post_json(self.url("/tokenize"), body, headers=self.headers, timeout=30.0)
        except (OSError, ValueError):
            return None
        toks = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(toks, list):
            return None
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in toks]

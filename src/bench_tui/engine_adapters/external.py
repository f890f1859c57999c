"""An engine that is already running at ``base_url``: never started, never stopped, never killed.

Readiness is the same as for launched engines (health path + model list). ``is_alive`` is False only when
the server refuses connections (a busy server that answers slowly is alive).
"""

from __future__ import annotations

import time
from pathlib import Path

from bench_tui.engine_adapters import http
from bench_tui.engine_adapters.base import Emit
from bench_tui.engine_adapters.process import ServedEngine
from bench_tui.events import EngineStarting, EngineStopped
from bench_tui.spec.schema import Engine, ExternalEngine, Variant


class ExternalAdapter(ServedEngine):
    kind = "external"

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
        self.emit(
            EngineStopped(
                engine=self.name,
                variant=self.variant_name,
                returncode=None,
                reason="external engine: left running",
            )
        )
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

"""SGLang: ``python -m sglang.launch_server --model-path MODEL --host H --port P ...``.

Controls: ``POST /flush_cache`` (drops the radix prefix cache), version from ``/get_server_info`` (or
``/version``), ``POST /tokenize`` when the build has it.
"""

from __future__ import annotations

from typing import Any

from bench_tui.engine_adapters import http
from bench_tui.engine_adapters.process import ProcessEngine


class SglangAdapter(ProcessEngine):
    kind = "sglang"
    metrics_dialect = "sglang"
    reserved_args = frozenset(
        {"host", "port", "model-path", "model", "served-model-name", "api-key", "chat-template"}
    )

    def command(self) -> list[str]:
        model = self.model_arg("a hub id or a model folder")
        return self.serve_command(
            ["--model-path", model, "--host", self.engine.host, "--port", str(self.engine.port)]
        )

    def probe_version(self) -> str:
        try:
            data: Any = http.get_json(self.url("/get_server_info"), headers=self.headers, timeout=5.0)
            if isinstance(data, dict) and isinstance(data.get("version"), str):
                return str(data["version"])
        except (OSError, ValueError):
            pass
        return super().probe_version()

    def prefix_caching(self) -> str:
        """SGLang's radix cache is on unless --disable-radix-cache."""
        return "off" if self.flag_set("disable-radix-cache") else "on"

"""SGLang: ``python -m sglang.launch_server --model-path MODEL --host H --port P ...``.

Controls: ``POST /flush_cache`` (drops the radix prefix cache), version from ``/get_server_info`` (or
``/version``), ``POST /tokenize`` when the build has it.
"""

from __future__ import annotations

from typing import Any

from bench_tui.engine_adapters import http
from bench_tui.engine_adapters.process import EngineConfigError, ProcessEngine, resolve_model


class SglangAdapter(ProcessEngine):
    kind = "sglang"
    metrics_dialect = "sglang"
    reserved_args = frozenset({"host", "port", "model-path", "model", "served-model-name", "api-key",
                               "chat-template"})

    def command(self) -> list[str]:
        eng = self.engine
        if not eng.model:
            raise EngineConfigError(f"{self.label}: `model` is empty (a hub id or a model folder)")
        argv = self.launcher()
        argv += ["--model-path", resolve_model(eng.model, self.kind, self.spec_dir),
                 "--host", eng.host, "--port", str(eng.port)]
        if eng.served_model_name:
            argv += ["--served-model-name", eng.served_model_name]
        tmpl = self.chat_template()
        if tmpl:
            argv += ["--chat-template", tmpl]
        argv += self.flags()
        if self.api_key:
            argv += ["--api-key", self.api_key]
        return argv

    def probe_version(self) -> str:
        try:
            data: Any = http.get_json(self.url("/get_server_info"), headers=self.headers, timeout=5.0)
            if isinstance(data, dict) and isinstance(data.get("version"), str):
                return str(data["version"])
        except (OSError, ValueError):
            pass
        return super().probe_version()

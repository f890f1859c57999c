"""llama.cpp's server: ``llama-server -m MODEL --host H --port P ...`` or our xllamacpp launcher
(``["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]``, same flags).

``model: builtin:qwen2.5-coder-0.5b`` is the installed CPU test model (install.model_path()). Metrics are
``/metrics`` (``llamacpp:*``, needs ``--metrics``) plus ``/slots`` flattened to ``llamacpp_slots:*``
(total, processing, and sums of the busy slots' decoded / prompt / cached tokens). ``/tokenize`` takes
``{"content": text}``. The version is ``/props`` ``build_info``. There is no global prefix-cache reset: each
slot is erased (``POST /slots/N?action=erase``, which llama-server allows when ``--slot-save-path`` is set).
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from bench_tui.engine_adapters import http
from bench_tui.engine_adapters.process import ProcessEngine

XLLAMA_MODULE = "bench_tui.engine_adapters.xllama_server"


class LlamaCppAdapter(ProcessEngine):
    kind = "llamacpp"
    metrics_dialect = "llamacpp"
    reserved_args = frozenset({"host", "port", "m", "model", "a", "alias", "api-key", "chat-template-file"})
    api_key_env = "LLAMA_API_KEY"  # llama.cpp common/arg.cpp: --api-key ... set_env("LLAMA_API_KEY"); ours too

    def command(self) -> list[str]:
        model = self.model_arg("a GGUF path or builtin:qwen2.5-coder-0.5b")
        return self.serve_command(["-m", model, "--host", self.engine.host, "--port", str(self.engine.port)],
                                  name_flag="--alias", template_flag="--chat-template-file")

    @property
    def uses_xllama(self) -> bool:
        return XLLAMA_MODULE in getattr(self.engine, "launcher", [])

    def probe_version(self) -> str:
        build = ""
        try:
            props: Any = http.get_json(self.url("/props"), headers=self.headers, timeout=5.0)
            if isinstance(props, dict) and isinstance(props.get("build_info"), str):
                build = str(props["build_info"])
        except (OSError, ValueError):
            pass
        if self.uses_xllama:
            try:
                wheel = importlib.metadata.version("xllamacpp")
            except importlib.metadata.PackageNotFoundError:
                wheel = "?"
            return f"xllamacpp {wheel}" + (f" (llama.cpp {build})" if build else "")
        return f"llama.cpp {build}" if build else ""

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
from bench_tui.engine_adapters.process import EngineConfigError, ProcessEngine, resolve_model

XLLAMA_MODULE = "bench_tui.engine_adapters.xllama_server"


class LlamaCppAdapter(ProcessEngine):
    kind = "llamacpp"
    metrics_dialect = "llamacpp"
    reserved_args = frozenset({"host", "port", "m", "model", "a", "alias", "api-key", "chat-template-file"})

    def command(self) -> list[str]:
        eng = self.engine
        if not eng.model:
            raise EngineConfigError(f"{self.label}: `model` is empty (a GGUF path or builtin:qwen2.5-coder-0.5b)")
        argv = self.launcher()
        argv += ["-m", resolve_model(eng.model, self.kind, self.spec_dir), "--host", eng.host,
                 "--port", str(eng.port)]
        if eng.served_model_name:
            argv += ["--alias", eng.served_model_name]
        tmpl = self.chat_template()
        if tmpl:
            argv += ["--chat-template-file", tmpl]
        argv += self.flags()
        if self.api_key:
            argv += ["--api-key", self.api_key]
        return argv

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

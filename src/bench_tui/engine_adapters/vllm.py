"""vLLM: ``vllm serve MODEL`` (or a ``python -m vllm.entrypoints.openai.api_server --model MODEL`` launcher).

Flags come from the engine's ``args`` merged with the variant's (spec/flags.py); the adapter adds
``--host``/``--port`` and, from the engine fields, ``--served-model-name``, ``--chat-template`` (a path
relative to the spec file) and ``--api-key``. Controls: ``POST /reset_prefix_cache`` (vLLM serves it in dev
mode only, so ``VLLM_SERVER_DEV_MODE=1`` is set unless the spec sets it), ``POST /tokenize``, ``GET /version``.
"""

from __future__ import annotations

from bench_tui.engine_adapters.process import EngineConfigError, ProcessEngine, resolve_model


class VllmAdapter(ProcessEngine):
    kind = "vllm"
    metrics_dialect = "vllm"
    reserved_args = frozenset({"host", "port", "model", "served-model-name", "api-key", "chat-template"})

    def command(self) -> list[str]:
        eng = self.engine
        if not eng.model:
            raise EngineConfigError(f"{self.label}: `model` is empty (a hub id or a model folder)")
        model = resolve_model(eng.model, self.kind, self.spec_dir)
        argv = self.launcher()
        argv += [model] if argv and argv[-1] == "serve" else ["--model", model]
        argv += ["--host", eng.host, "--port", str(eng.port)]
        if eng.served_model_name:
            argv += ["--served-model-name", eng.served_model_name]
        tmpl = self.chat_template()
        if tmpl:
            argv += ["--chat-template", tmpl]
        argv += self.flags()
        if self.api_key:
            argv += ["--api-key", self.api_key]
        return argv

    def environment(self) -> dict[str, str]:
        env = {"VLLM_SERVER_DEV_MODE": "1"}
        env.update(super().environment())
        return env

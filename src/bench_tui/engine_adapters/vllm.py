"""vLLM: ``vllm serve MODEL`` (or a ``python -m vllm.entrypoints.openai.api_server --model MODEL`` launcher).

Flags come from the engine's ``args`` merged with the variant's (spec/flags.py); the adapter adds
``--host``/``--port`` and, from the engine fields, ``--served-model-name``, ``--chat-template`` (a path
relative to the spec file); the API key goes in ``VLLM_API_KEY``, never in argv. Controls: ``POST /reset_prefix_cache`` (vLLM serves it in dev
mode only, so ``VLLM_SERVER_DEV_MODE=1`` is set unless the spec sets it), ``POST /tokenize``, ``GET /version``.
"""

from __future__ import annotations

from bench_tui.engine_adapters.process import ProcessEngine


class VllmAdapter(ProcessEngine):
    kind = "vllm"
    metrics_dialect = "vllm"
    reserved_args = frozenset({"host", "port", "model", "served-model-name", "api-key", "chat-template"})
    api_key_env = "VLLM_API_KEY"  # vllm/entrypoints/serve/middleware: --api-key, else envs.VLLM_API_KEY

    def command(self) -> list[str]:
        model = self.model_arg("a hub id or a model folder")
        launcher = self.launcher()
        head = [model] if launcher and launcher[-1] == "serve" else ["--model", model]
        return self.serve_command([*head, "--host", self.engine.host, "--port", str(self.engine.port)])

    def environment(self) -> dict[str, str]:
        env = {"VLLM_SERVER_DEV_MODE": "1"}
        env.update(super().environment())
        return env

    def prefix_caching(self) -> str:
        """vLLM (V1) caches prefixes unless --no-enable-prefix-caching (a false value renders no flag)."""
        return "off" if self.flag_set("no-enable-prefix-caching") else "on"

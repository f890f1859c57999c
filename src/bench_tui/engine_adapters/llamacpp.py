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


def flatten_slots(slots: Any) -> dict[str, float]:
    """``/slots`` JSON -> a few numbers: slot count, busy slots, and sums over the busy ones."""
    out: dict[str, float] = {}
    if not isinstance(slots, list):
        return out
    busy = [s for s in slots if isinstance(s, dict) and s.get("is_processing")]
    out["llamacpp_slots:total"] = float(len(slots))
    out["llamacpp_slots:processing"] = float(len(busy))
    sums = {"n_decoded": 0.0, "n_prompt_tokens": 0.0, "n_prompt_tokens_processed": 0.0,
            "n_prompt_tokens_cache": 0.0}
    for s in busy:
        for key in ("n_prompt_tokens", "n_prompt_tokens_processed", "n_prompt_tokens_cache"):
            v = s.get(key)
            if isinstance(v, int | float) and not isinstance(v, bool):
                sums[key] += float(v)
        for nt in s.get("next_token") or []:
            v = nt.get("n_decoded") if isinstance(nt, dict) else None
            if isinstance(v, int | float) and not isinstance(v, bool):
                sums["n_decoded"] += float(v)
    for key, v in sums.items():
        out[f"llamacpp_slots:{key}"] = v
    ctx = [s["n_ctx"] for s in slots if isinstance(s, dict) and isinstance(s.get("n_ctx"), int)]
    if ctx:
        out["llamacpp_slots:n_ctx"] = float(ctx[0])
    return out


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

    def scrape_metrics(self) -> dict[str, float]:
        values = super().scrape_metrics()
        try:
            values.update(flatten_slots(http.get_json(self.url("/slots"), headers=self.headers, timeout=5.0)))
        except (OSError, ValueError):
            pass
        return values

    def _slot_ids(self) -> list[int]:
        try:
            slots = http.get_json(self.url("/slots"), headers=self.headers, timeout=5.0)
        except (OSError, ValueError):
            return []
        return [int(s["id"]) for s in slots if isinstance(s, dict) and isinstance(s.get("id"), int)] \
            if isinstance(slots, list) else []

    def reset_prefix_cache(self) -> bool:
        ids = self._slot_ids()
        return bool(ids) and all(self._post_ok(f"/slots/{i}?action=erase") for i in ids)

    def tokenize(self, text: str) -> list[int] | None:
        try:
            data: Any = http.post_json(self.url("/tokenize"), {"content": text}, headers=self.headers,
                                       timeout=30.0)
        except (OSError, ValueError):
            return None
        toks = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(toks, list):
            return None
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in toks]

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

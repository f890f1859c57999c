"""llama.cpp's server: ``llama-server -m MODEL --host H --port P ...`` or our xllamacpp launcher
(``["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]``, same flags).

``model: builtin:qwen2.5-coder-0.5b`` is the installed CPU test model (install.model_path()); a draft model
(``args: {model-draft: ...}`` or ``-md``) takes the same forms. With the xllamacpp launcher an argument it does
not support is an ``EngineConfigError`` listing the ones it does (before anything starts). Metrics are
``/metrics`` (``llamacpp:*``, needs ``--metrics``) plus ``/slots`` flattened to ``llamacpp_slots:*``
(total, processing, and sums of the busy slots' decoded / prompt / cached tokens). ``/tokenize`` takes
``{"content": text}``. The version is ``/props`` ``build_info``. There is no global prefix-cache reset: each
slot is erased (``POST /slots/N?action=erase``, which llama-server allows when ``--slot-save-path`` is set).
"""

from __future__ import annotations

import importlib.metadata
import os
from typing import Any

from bench_tui.engine_adapters import http
from bench_tui.engine_adapters.process import EngineConfigError, ProcessEngine, resolve_model
from bench_tui.envinfo.conditions import busy_cpus
from bench_tui.events import RunWarning
from bench_tui.spec.flags import flag_name, render_flags

XLLAMA_MODULE = "bench_tui.engine_adapters.xllama_server"
DRAFT_MODEL_FLAGS = ("--model-draft", "-md")
UNKNOWN_BUILDS = ("", "b0-unknown", "unknown")


def xllama_flags() -> list[str]:
    """Every option string the xllamacpp launcher accepts (long and short forms)."""
    from bench_tui.engine_adapters.xllama_server import build_parser

    return sorted(
        {s for a in build_parser()._actions for s in a.option_strings if s not in ("-h", "--help")},
        key=lambda s: s.lstrip("-"),
    )


class LlamaCppAdapter(ProcessEngine):
    kind = "llamacpp"
    metrics_dialect = "llamacpp"
    reserved_args = frozenset({"host", "port", "m", "model", "a", "alias", "api-key", "chat-template-file"})
    api_key_env = (
        "LLAMA_API_KEY"  # llama.cpp common/arg.cpp: --api-key ... set_env("LLAMA_API_KEY"); ours too
    )

    def command(self) -> list[str]:
        model = self.model_arg("a GGUF path or builtin:qwen2.5-coder-0.5b")
        if self.uses_xllama:
            self.check_xllama_args()
        return self.serve_command(
            ["-m", model, "--host", self.engine.host, "--port", str(self.engine.port)],
            name_flag="--alias",
            template_flag="--chat-template-file",
        )

    def flags(self) -> list[str]:
        """The rendered args, with a draft model resolved like ``model`` (builtin names, ./ paths, ~)."""
        args = dict(self.args())
        for key, value in args.items():
            if flag_name(key) in DRAFT_MODEL_FLAGS and isinstance(value, str) and value:
                args[key] = resolve_model(value, self.kind, self.spec_dir)
        return render_flags(args)

    def check_xllama_args(self) -> None:
        known = set(xllama_flags())
        bad = [k for k in self.args() if k != "_" and flag_name(k) not in known]
        if bad:
            raise EngineConfigError(
                f"{self.label}: the xllamacpp launcher does not support {', '.join(repr(b) for b in bad)} in `args`; "
                f"it supports: {' '.join(sorted(known, key=lambda s: s.lstrip('-')))} (or use a real llama-server "
                f"binary as `launcher`)"
            )

    @property
    def uses_xllama(self) -> bool:
        return XLLAMA_MODULE in getattr(self.engine, "launcher", [])

    def start(self) -> None:
        warning = threads_warning(self.threads(), free_cpus())
        if warning:
            self.emit(RunWarning(code="starved", message=f"{self.label}: {warning}"))
        super().start()

    def threads(self) -> int | None:
        """Generation threads as launched: the flag, else our launcher's default (None: llama-server decides)."""
        for name in ("threads", "t"):
            value = self.flag_set(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return min(4, os.cpu_count() or 1) if self.uses_xllama else None

    def prefix_caching(self) -> str:
        """llama-server reuses a slot's cached prompt unless --no-cache-prompt."""
        return "off" if self.flag_set("no-cache-prompt") else "on"

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
            return f"xllamacpp {wheel} ({wheel_llama_build(wheel, build)})"
        return f"llama.cpp {build}" if build else ""


def wheel_llama_build(wheel: str, build_info: str) -> str:
    """The llama.cpp build an xllamacpp wheel carries. The wheel is compiled without build info (its server says
    ``b0-unknown``); its version is ``YEAR.MONTH.BUILD`` with llama.cpp's build number last."""
    if build_info not in UNKNOWN_BUILDS:
        return f"llama.cpp {build_info}"
    last = wheel.rsplit(".", 1)[-1]
    if last.isdigit() and wheel.count(".") >= 2:
        return f"llama.cpp b{last}, from the wheel version; the server reports no build"
    return "llama.cpp build unknown: the wheel reports none"


def free_cpus() -> tuple[int, float]:
    """(CPUs this process may run on, CPUs busy just now: envinfo.conditions.busy_cpus over a quarter second,
    else the 1-minute load average)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    busy = busy_cpus()
    if busy is None:
        try:
            busy = os.getloadavg()[0]
        except OSError:
            busy = 0.0
    return cpus, busy


def threads_warning(threads: int | None, cpus_load: tuple[int, float]) -> str | None:
    """A warning when the engine's threads exceed the cores nothing else is using (before it starts). llama.cpp
    threads spin-wait on each other: one busy core can make every step wait (measured on 2 cores with another
    engine running: 0.5-0.8 tok/s with 2 threads, 12.9 with 1)."""
    cpus, load = cpus_load
    if threads is None or threads <= 1:
        return None  # one thread cannot spin-wait on another; a starved c1 figure is flagged per point
    free = max(0.0, cpus - load)
    if threads <= free + 0.5:
        return None
    return (
        f"threads {threads} but only about {free:.1f} of {cpus} CPUs are free ({load:.1f} busy just before "
        f"the start): decode may collapse; stop the other work or set threads to {max(1, int(free + 0.5))}"
    )

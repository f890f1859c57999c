"""A ``llama-server``-like launcher over the xllamacpp wheel (llama.cpp's C++ server, in-process).

    python -m bench_tui.engine_adapters.xllama_server -m MODEL --host 127.0.0.1 --port 8080 \\
        -c 4096 -np 2 -t 2 --metrics --slots --jinja [--chat-template-file F] [--api-key K]

The flags are spelled as llama-server spells them (short and long forms), so a spec written for the real
binary runs here unchanged for the supported subset. An unknown flag is an error that lists the supported
ones. SIGTERM / SIGINT stop the server and exit 0; a missing model file or a server that fails to start
exits non-zero with one clear line on stderr. Unlike llama-server, ``--slot-save-path`` has a default (a temp
directory) so that the adapter's prefix-cache reset (erasing each slot) works out of the box.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
from typing import Any, NoReturn

_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        flags = sorted({s for a in self._actions for s in a.option_strings if s not in ("-h", "--help")},
                       key=lambda s: s.lstrip("-"))
        sys.stderr.write(f"xllama_server: error: {message}\n  supported flags: {' '.join(flags)}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m bench_tui.engine_adapters.xllama_server", allow_abbrev=False,
                description="llama-server-like launcher over the xllamacpp wheel")
    a = p.add_argument
    a("-m", "--model", required=True, help="GGUF model file")
    a("--host", default="127.0.0.1")
    a("--port", type=int, default=8080)
    a("-c", "--ctx-size", type=int, default=4096, help="total context (shared by the slots)")
    a("-np", "--parallel", type=int, default=1, help="number of slots")
    a("-t", "--threads", type=int, default=None)
    a("-tb", "--threads-batch", type=int, default=None)
    a("--threads-http", type=int, default=None)
    a("-b", "--batch-size", type=int, default=None)
    a("-ub", "--ubatch-size", type=int, default=None)
    a("-n", "--n-predict", type=int, default=None)
    a("-ngl", "--n-gpu-layers", "--gpu-layers", type=int, default=None)
    a("-ctk", "--cache-type-k", choices=_TYPES, default=None)
    a("-ctv", "--cache-type-v", choices=_TYPES, default=None)
    a("-fa", "--flash-attn", choices=("on", "off", "auto"), default=None)
    a("--metrics", action="store_true", help="expose /metrics")
    a("--slots", dest="slots", action="store_true", default=True, help="expose /slots (default)")
    a("--no-slots", dest="slots", action="store_false")
    a("--props", action="store_true", help="allow POST /props")
    a("--jinja", dest="jinja", action="store_true", default=True, help="jinja chat templates (default)")
    a("--no-jinja", dest="jinja", action="store_false")
    a("--chat-template", default=None, help="a built-in template name or an inline template")
    a("--chat-template-file", default=None)
    a("--reasoning-format", choices=("none", "auto", "deepseek", "deepseek-legacy"), default=None)
    a("--api-key", default=os.environ.get("LLAMA_API_KEY") or None,
      help="comma-separated keys (env: LLAMA_API_KEY, as llama-server; the environment keeps it out of `ps`)")
    a("-a", "--alias", default=None, help="model name served in /v1/models")
    a("--cache-reuse", type=int, default=None)
    a("--no-cache-prompt", action="store_true")
    a("-cram", "--cache-ram", type=int, default=None, help="MiB of host RAM for the prompt cache (0 = off)")
    a("--slot-save-path", default=None,
      help="directory for slot save/restore; default: a temp dir, so that POST /slots/N?action=erase works")
    a("-kvu", "--kv-unified", action="store_true")
    a("--no-cont-batching", action="store_true")
    a("--no-warmup", action="store_true")
    a("--timeout", type=int, default=None, help="read/write timeout in seconds")
    a("-s", "--seed", type=int, default=None)
    a("-lv", "--verbosity", type=int, default=None)
    return p


def _die(message: str, code: int = 1) -> NoReturn:
    sys.stderr.write(f"xllama_server: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def make_params(ns: argparse.Namespace, xl: Any) -> Any:
    p = xl.CommonParams()
    p.model.path = ns.model
    p.hostnames = [ns.host]
    p.port = ns.port
    p.n_ctx = ns.ctx_size
    p.n_parallel = ns.parallel
    threads = ns.threads if ns.threads is not None else max(1, min(4, os.cpu_count() or 1))
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = ns.threads_batch if ns.threads_batch is not None else threads
    if ns.threads_http is not None:
        p.n_threads_http = ns.threads_http
    if ns.batch_size is not None:
        p.n_batch = ns.batch_size
    if ns.ubatch_size is not None:
        p.n_ubatch = ns.ubatch_size
    if ns.n_predict is not None:
        p.n_predict = ns.n_predict
    if ns.n_gpu_layers is not None:
        p.n_gpu_layers = ns.n_gpu_layers
    for field, value in (("cache_type_k", ns.cache_type_k), ("cache_type_v", ns.cache_type_v)):
        if value is not None:
            setattr(p, field, getattr(xl.ggml_type, "GGML_TYPE_" + value.upper()))
    if ns.flash_attn is not None:
        fa = {"on": "ENABLED", "off": "DISABLED", "auto": "AUTO"}[ns.flash_attn]
        p.flash_attn_type = getattr(xl.llama_flash_attn_type, "LLAMA_FLASH_ATTN_TYPE_" + fa)
    p.endpoint_metrics = bool(ns.metrics)
    p.endpoint_slots = bool(ns.slots)
    p.endpoint_props = bool(ns.props)
    p.use_jinja = bool(ns.jinja)
    if ns.chat_template_file:
        try:
            with open(ns.chat_template_file, encoding="utf-8") as fh:
                p.chat_template = fh.read()
        except OSError as exc:
            _die(f"cannot read the chat template file {ns.chat_template_file}: {exc.strerror or exc}")
    elif ns.chat_template:
        p.chat_template = ns.chat_template
    if ns.reasoning_format is not None:
        rf = ns.reasoning_format.upper().replace("-", "_")
        p.reasoning_format = getattr(xl.common_reasoning_format, "COMMON_REASONING_FORMAT_" + rf)
    if ns.api_key:
        p.api_keys = [k for k in ns.api_key.split(",") if k]
    if ns.alias:
        p.model_alias = {ns.alias}
    if ns.cache_reuse is not None:
        p.n_cache_reuse = ns.cache_reuse
    if ns.no_cache_prompt:
        p.cache_prompt = False
    if ns.cache_ram is not None:
        p.cache_ram_mib = ns.cache_ram
    # llama-server allows slot actions (erase = drop a slot's cached prefix) only with a save path; erase
    # writes nothing, save writes only on request
    if ns.slot_save_path:
        p.slot_save_path = ns.slot_save_path
    else:
        p.slot_save_path = os.path.join(tempfile.gettempdir(), "bench-tui-slots")
        os.makedirs(p.slot_save_path, exist_ok=True)
    if ns.kv_unified:
        p.kv_unified = True
    if ns.no_cont_batching:
        p.cont_batching = False
    if ns.no_warmup:
        p.warmup = False
    if ns.timeout is not None:
        p.timeout_read = ns.timeout
        p.timeout_write = ns.timeout
    if ns.seed is not None:
        p.sampling.seed = ns.seed
    if ns.verbosity is not None:
        p.verbosity = ns.verbosity
    return p


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    if not os.path.isfile(ns.model):
        _die(f"model file not found: {ns.model}", 2)
    if ns.parallel < 1 or ns.ctx_size < 0:
        _die("--parallel must be >= 1 and --ctx-size >= 0", 2)
    try:
        import xllamacpp as xl
    except ImportError:
        _die("the xllamacpp wheel is not installed: pip install 'bench-tui[cpu-engine]' "
             "(or python -m bench_tui.engine_adapters.install)", 3)

    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    params = make_params(ns, xl)
    try:
        server = xl.Server(params)
    except Exception as exc:  # noqa: BLE001 - the C++ side reports only "failed to init"; its log says why
        _die(f"the server did not start ({exc}); the lines above say why (bad model file? port taken?)")
    print(f"xllama_server: listening on {server.listening_address} model={ns.model} "
          f"slots={ns.parallel} ctx={ns.ctx_size}", flush=True)
    while not stop.wait(0.5):
        pass
    print("xllama_server: stopping", flush=True)
    del server
    sys.stdout.flush()
    # the C++ server's worker threads are not ours to join: leave without running interpreter teardown
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())

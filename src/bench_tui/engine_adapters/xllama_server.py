"""A ``llama-server``-like launcher over the xllamacpp wheel (llama.cpp's C++ server, in-process).

    python -m bench_tui.engine_adapters.xllama_server -m MODEL --host 127.0.0.1 --port 8080 \\
        -c 4096 -np 2 -t 2 --metrics --slots --jinja [--chat-template-file F] [--api-key K] \\
        [--model-draft DRAFT.gguf --draft-max 4 --draft-min 0 --draft-p-min 0.75] [--spec-type ngram-simple]

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
        flags = sorted(
            {s for a in self._actions for s in a.option_strings if s not in ("-h", "--help")},
            key=lambda s: s.lstrip("-"),
        )
        sys.stderr.write(f"xllama_server: error: {message}\n  supported flags: {' '.join(flags)}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m bench_tui.engine_adapters.xllama_server",
        allow_abbrev=False,
        description="llama-server-like launcher over the xllamacpp wheel",
    )
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
    a(
        "--api-key",
        default=os.environ.get("LLAMA_API_KEY") or None,
        help="comma-separated keys (env: LLAMA_API_KEY, as llama-server; the environment keeps it out of `ps`)",
    )
    a("-a", "--alias", default=None, help="model name served in /v1/models")
    a("--cache-reuse", type=int, default=None)
    a("--no-cache-prompt", action="store_true")
    a("-cram", "--cache-ram", type=int, default=None, help="MiB of host RAM for the prompt cache (0 = off)")
    a(
        "--slot-save-path",
        default=None,
        help="directory for slot save/restore; default: a temp dir, so that POST /slots/N?action=erase works",
    )
    a("-kvu", "--kv-unified", action="store_true")
    a("--no-cont-batching", action="store_true")
    a("--no-warmup", action="store_true")
    a("--timeout", type=int, default=None, help="read/write timeout in seconds")
    a("-s", "--seed", type=int, default=None)
    a("-lv", "--verbosity", type=int, default=None)
    # speculative decoding: what the wheel's params carry (``speculative.types``, ``speculative.draft``, the
    # n-gram maps); the newer llama-server spellings (--spec-draft-*) are accepted as aliases
    a("-md", "--model-draft", default=None, help="draft model GGUF (enables draft-simple unless --spec-type)")
    a(
        "--spec-type",
        type=_spec_types,
        default=None,
        help=f"comma-separated speculative decoding types: {', '.join(spec_type_names())}",
    )
    a(
        "--draft-max",
        "--draft",
        "--draft-n",
        "--spec-draft-n-max",
        dest="draft_max",
        type=int,
        default=None,
        help="most draft tokens per step",
    )
    a(
        "--draft-min",
        "--draft-n-min",
        "--spec-draft-n-min",
        dest="draft_min",
        type=int,
        default=None,
        help="fewest draft tokens per step",
    )
    a(
        "--draft-p-min",
        "--spec-draft-p-min",
        dest="draft_p_min",
        type=float,
        default=None,
        help="smallest draft-token probability kept (greedy drafting)",
    )
    a("-td", "--threads-draft", type=int, default=None)
    a("-tbd", "--threads-batch-draft", type=int, default=None)
    a("-ctkd", "--cache-type-k-draft", choices=_TYPES, default=None)
    a("-ctvd", "--cache-type-v-draft", choices=_TYPES, default=None)
    a(
        "--spec-ngram-size-n",
        type=int,
        default=None,
        help="n-gram lookup length (ngram-simple / map-k / map-k4v)",
    )
    a(
        "--spec-ngram-size-m",
        type=int,
        default=None,
        help="n-gram draft length (ngram-simple / map-k / map-k4v)",
    )
    a("--spec-ngram-min-hits", type=int, default=None, help="n-gram hits before drafting (map-k / map-k4v)")
    return p


# llama-server's spelling of the wheel's COMMON_SPECULATIVE_TYPE_* names: NGRAM_MAP_K4V -> ngram-map-k4v
_SPEC_PREFIX = "COMMON_SPECULATIVE_TYPE_"
_FALLBACK_SPEC_TYPES = (
    "none",
    "draft-simple",
    "ngram-simple",
    "ngram-map-k",
    "ngram-map-k4v",
    "ngram-mod",
    "ngram-cache",
)


def spec_type_names() -> list[str]:
    """The speculative decoding types the installed wheel knows (llama-server's names)."""
    try:
        import xllamacpp as xl
    except ImportError:
        return list(_FALLBACK_SPEC_TYPES)
    return [
        n[len(_SPEC_PREFIX) :].lower().replace("_", "-")
        for n in xl.common_speculative_type.__members__
        if n.startswith(_SPEC_PREFIX) and not n.endswith("_COUNT")
    ]


def _spec_types(value: str) -> list[str]:
    known = spec_type_names()
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown speculative decoding type {', '.join(bad) or repr(value)}; "
            f"this wheel knows: {', '.join(known)}"
        )
    return names


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
    speculative(ns, p, xl)
    return p


def speculative(ns: argparse.Namespace, p: Any, xl: Any) -> None:
    """Draft-model and n-gram speculation as llama-server sets it up: ``--model-draft`` alone means
    draft-simple (the wheel needs the type spelled out: a draft path with type none drafts nothing)."""
    spec = p.speculative
    draft = spec.draft
    types = list(ns.spec_type or [])
    if ns.model_draft:
        draft.mparams.path = ns.model_draft
        if not types:
            types = ["draft-simple"]
    if any(t.startswith("draft-") for t in types) and not ns.model_draft and "draft-mtp" not in types:
        _die(f"--spec-type {','.join(types)} needs a draft model (--model-draft)", 2)
    if types:
        spec.types = [
            getattr(xl.common_speculative_type, _SPEC_PREFIX + t.upper().replace("-", "_")) for t in types
        ]
    if ns.draft_max is not None:
        draft.n_max = ns.draft_max
        spec.ngram_mod.n_max = ns.draft_max
    if ns.draft_min is not None:
        draft.n_min = ns.draft_min
        spec.ngram_mod.n_min = ns.draft_min
    if ns.draft_p_min is not None:
        draft.p_min = ns.draft_p_min
    threads = p.cpuparams.n_threads
    draft.cpuparams.n_threads = ns.threads_draft if ns.threads_draft is not None else threads
    draft.cpuparams_batch.n_threads = (
        ns.threads_batch_draft if ns.threads_batch_draft is not None else draft.cpuparams.n_threads
    )
    for field, value in (("cache_type_k", ns.cache_type_k_draft), ("cache_type_v", ns.cache_type_v_draft)):
        if value is not None:
            setattr(draft, field, getattr(xl.ggml_type, "GGML_TYPE_" + value.upper()))
    for attr, value in (
        ("size_n", ns.spec_ngram_size_n),
        ("size_m", ns.spec_ngram_size_m),
        ("min_hits", ns.spec_ngram_min_hits),
    ):
        if value is not None:
            for table in (spec.ngram_simple, spec.ngram_map_k, spec.ngram_map_k4v):
                setattr(table, attr, value)


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    if not os.path.isfile(ns.model):
        _die(f"model file not found: {ns.model}", 2)
    if ns.model_draft and not os.path.isfile(ns.model_draft):
        _die(f"draft model file not found: {ns.model_draft}", 2)
    if ns.parallel < 1 or ns.ctx_size < 0:
        _die("--parallel must be >= 1 and --ctx-size >= 0", 2)
    try:
        import xllamacpp as xl
    except ImportError:
        _die(
            "the xllamacpp wheel is not installed: pip install 'bench-tui[cpu-engine]' "
            "(or python -m bench_tui.engine_adapters.install)",
            3,
        )

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
    print(
        f"xllama_server: listening on {server.listening_address} model={ns.model} "
        f"slots={ns.parallel} ctx={ns.ctx_size}",
        flush=True,
    )
    while not stop.wait(0.5):
        pass
    print("xllama_server: stopping", flush=True)
    del server
    sys.stdout.flush()
    # the C++ server's worker threads are not ours to join: leave without running interpreter teardown
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())

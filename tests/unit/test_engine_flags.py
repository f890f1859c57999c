"""Engine adapters render the exact argv a person would type: the seed study's vLLM and NInfer commands,
variants merged over the engine's args, JSON-valued flags compact, paths resolved, secrets never recorded."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench_tui.engine_adapters import EngineConfigError, make_adapter
from bench_tui.engine_adapters.base import EngineAdapter
from bench_tui.engine_adapters.install import model_path
from bench_tui.events import EngineStarting, Event
from bench_tui.spec.loader import DATA_DIR, SpecError, load_spec, load_spec_text
from bench_tui.spec.schema import (
    CommandEngine,
    ExternalEngine,
    LlamaCppEngine,
    SglangEngine,
    Variant,
    VllmEngine,
)

SEED_FLAGS = (
    "--quantization modelopt --kv-cache-dtype fp8 --trust-remote-code --max-model-len -1 --max-num-seqs 16 "
    "--gpu-memory-utilization 0.97 --reasoning-parser qwen3 --enable-auto-tool-choice "
    "--tool-call-parser qwen3_xml"
)
QWEN38 = DATA_DIR / "specs" / "qwen38.yaml"


def _vllm_engine(**kw: Any) -> VllmEngine:
    args = {
        "quantization": "modelopt",
        "kv-cache-dtype": "fp8",
        "trust-remote-code": True,
        "max-model-len": -1,
        "max-num-seqs": 16,
        "gpu-memory-utilization": 0.97,
        "reasoning-parser": "qwen3",
        "enable-auto-tool-choice": True,
        "tool-call-parser": "qwen3_xml",
    }
    variants = {
        "cold": Variant(args={"no-enable-prefix-caching": True}),
        "warm": Variant(args={"enable-prefix-caching": True}),
        "mtp1": Variant(
            args={
                "enable-prefix-caching": True,
                "speculative-config": {"method": "mtp", "num_speculative_tokens": 1},
            }
        ),
        "mtp3": Variant(
            args={
                "enable-prefix-caching": True,
                "speculative-config": {"method": "mtp", "num_speculative_tokens": 3},
            }
        ),
    }
    base: dict[str, Any] = {
        "model": "org/Qwen3.8-27B-NVFP4",
        "served_model_name": "qwen38",
        "port": 8000,
        "chat_template": "templates/chat.jinja",
        "args": args,
        "variants": variants,
    }
    base.update(kw)
    return VllmEngine(**base)


def _adapter(engine: Any, variant: str, tmp_path: Path, events: list[Event] | None = None) -> EngineAdapter:
    v = engine.variants.get(variant) if engine.variants else None
    sink: list[Event] = events if events is not None else []
    return make_adapter(
        "eng", engine, variant, v, spec_dir=tmp_path, log_dir=tmp_path / "engines", emit=sink.append
    )


def _mtp(n: int) -> str:
    return '{"method":"mtp","num_speculative_tokens":' + str(n) + "}"


def _joined(argv: list[str]) -> str:
    return shlex.join(argv)


def test_vllm_seed_study_cold_warm_and_mtp(tmp_path: Path) -> None:
    eng = _vllm_engine()
    cold = _adapter(eng, "cold", tmp_path).command()
    tmpl = str((tmp_path / "templates" / "chat.jinja").resolve())
    assert cold[:3] == ["vllm", "serve", "org/Qwen3.8-27B-NVFP4"]
    assert (
        _joined(cold)
        == shlex.join(
            [
                "vllm",
                "serve",
                "org/Qwen3.8-27B-NVFP4",
                "--host",
                "127.0.0.1",
                "--port",
                "8000",
                "--served-model-name",
                "qwen38",
                "--chat-template",
                tmpl,
            ]
        )
        + " "
        + SEED_FLAGS
        + " --no-enable-prefix-caching"
    )
    warm = _adapter(eng, "warm", tmp_path).command()
    assert warm[-1] == "--enable-prefix-caching" and "--no-enable-prefix-caching" not in warm
    for n in (1, 3):
        argv = _adapter(eng, f"mtp{n}", tmp_path).command()
        i = argv.index("--speculative-config")
        assert argv[i + 1] == _mtp(n)
        assert json.loads(argv[i + 1]) == {"method": "mtp", "num_speculative_tokens": n}
        assert SEED_FLAGS in _joined(argv)
        assert f"'{_mtp(n)}'" in _joined(argv)  # one shell word


def test_vllm_python_launcher_puts_the_model_in_model_flag(tmp_path: Path) -> None:
    eng = VllmEngine(
        model="~/m/qwen",
        launcher=["{python}", "-m", "vllm.entrypoints.openai.api_server"],
        port=18301,
        args={"enforce-eager": True, "max-model-len": 2048, "swap-space": None},
    )
    argv = _adapter(eng, "default", tmp_path).command()
    import sys

    assert argv[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    assert argv[3:5] == ["--model", str(Path("~/m/qwen").expanduser())]
    assert argv[5:] == [
        "--host",
        "127.0.0.1",
        "--port",
        "18301",
        "--enforce-eager",
        "--max-model-len",
        "2048",
    ]


def test_variant_null_removes_an_inherited_flag(tmp_path: Path) -> None:
    eng = _vllm_engine(variants={"lean": Variant(args={"--trust-remote-code": None, "max-num-seqs": 4})})
    argv = _adapter(eng, "lean", tmp_path).command()
    assert "--trust-remote-code" not in argv
    assert argv[argv.index("--max-num-seqs") + 1] == "4" and argv.count("--max-num-seqs") == 1


def test_variant_chat_template_and_env_override(tmp_path: Path) -> None:
    eng = _vllm_engine(
        env={"A": "1", "B": "2"}, variants={"alt": Variant(chat_template="/abs/alt.jinja", env={"B": "3"})}
    )
    a = _adapter(eng, "alt", tmp_path)
    argv = a.command()
    assert argv[argv.index("--chat-template") + 1] == "/abs/alt.jinja"
    env = a.environment()
    assert env["A"] == "1" and env["B"] == "3"
    assert env["VLLM_SERVER_DEV_MODE"] == "1"  # so that POST /reset_prefix_cache exists


def test_ninfer_command_engine(tmp_path: Path) -> None:
    eng = CommandEngine(
        command=["ninfer-serve", "{model}"],
        model="/models/qwen38",
        port=8001,
        args={
            "max-context": 262144,
            "kv-dtype": "int8",
            "max-concurrency": 2,
            "spec": "mtp",
            "draft-tokens": 3,
        },
        variants={"cold": Variant(args={"no-prefix-reuse": True}), "warm": Variant()},
        metrics_dialect="vllm",
    )
    warm = _adapter(eng, "warm", tmp_path)
    assert _joined(warm.command()) == (
        "ninfer-serve /models/qwen38 --max-context 262144 --kv-dtype int8 "
        "--max-concurrency 2 --spec mtp --draft-tokens 3"
    )
    cold = _adapter(eng, "cold", tmp_path)
    assert _joined(cold.command()).endswith("--draft-tokens 3 --no-prefix-reuse")
    assert cold.metrics_dialect == "vllm"


def test_placeholders_in_command(tmp_path: Path) -> None:
    import sys

    eng = CommandEngine(
        command=["{python}", "srv.py", "--listen", "{host}:{port}", "--weights={model}"],
        model="./w.bin",
        host="127.0.0.1",
        port=18333,
    )
    argv = _adapter(eng, "default", tmp_path).command()
    assert argv == [
        sys.executable,
        "srv.py",
        "--listen",
        "127.0.0.1:18333",
        f"--weights={(tmp_path / 'w.bin')}",
    ]


def test_api_key_never_in_the_recorded_command(tmp_path: Path) -> None:
    key = "sk-very-secret-0042"
    events: list[Event] = []
    eng = _vllm_engine(api_key=key, port=18399)
    a = _adapter(eng, "warm", tmp_path, events)
    argv = a.command()
    # the engine gets it through its environment variable: argv is readable by any local user with `ps`
    assert key not in argv and "--api-key" not in argv
    assert a.environment()["VLLM_API_KEY"] == key
    assert a.headers == {"Authorization": f"Bearer {key}"}
    info = a.env_info()
    assert key not in json.dumps(info)
    # a command engine that passes it through {api_key}
    ce = CommandEngine(command=["ninfer-serve", "{model}", "--token", "{api_key}"], model="/m", api_key=key)
    rec = _adapter(ce, "default", tmp_path).env_info()["command"]
    assert key not in " ".join(rec) and rec[-1] == "***"
    # start() fails (no such binary) before anything is recorded with the key in it
    with pytest.raises(Exception) as ei:
        a.start()
    assert key not in str(ei.value)
    assert not any(isinstance(e, EngineStarting) and key in " ".join(e.command) for e in events)


def test_reserved_flags_in_args_are_a_clear_error(tmp_path: Path) -> None:
    eng = VllmEngine(model="m", args={"port": 9000})
    with pytest.raises(EngineConfigError, match="port in `args`"):
        _adapter(eng, "default", tmp_path)


def test_llamacpp_builtin_model_and_xllama_launcher(tmp_path: Path) -> None:
    import sys

    eng = LlamaCppEngine(
        model="builtin:qwen2.5-coder-0.5b",
        port=18300,
        served_model_name="qwen",
        chat_template="t.jinja",
        launcher=["{python}", "-m", "bench_tui.engine_adapters.xllama_server"],
        args={"ctx-size": 4096, "parallel": 2, "threads": 2, "metrics": True, "jinja": True},
    )
    a = _adapter(eng, "default", tmp_path)
    assert a.command() == [
        sys.executable,
        "-m",
        "bench_tui.engine_adapters.xllama_server",
        "-m",
        str(model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        "18300",
        "--alias",
        "qwen",
        "--chat-template-file",
        str(tmp_path / "t.jinja"),
        "--ctx-size",
        "4096",
        "--parallel",
        "2",
        "--threads",
        "2",
        "--metrics",
        "--jinja",
    ]
    assert a.metrics_dialect == "llamacpp"
    with pytest.raises(EngineConfigError, match="unknown builtin model"):
        _adapter(LlamaCppEngine(model="builtin:nope"), "default", tmp_path).command()


def test_sglang_and_external(tmp_path: Path) -> None:
    eng = SglangEngine(model="Qwen/Qwen3-8B", port=30000, args={"tp": 2, "mem-fraction-static": 0.8})
    a = _adapter(eng, "default", tmp_path)
    argv = a.command()
    assert argv[1:] == [
        "-m",
        "sglang.launch_server",
        "--model-path",
        "Qwen/Qwen3-8B",
        "--host",
        "127.0.0.1",
        "--port",
        "30000",
        "--tp",
        "2",
        "--mem-fraction-static",
        "0.8",
    ]
    assert a.metrics_dialect == "sglang"
    ext = _adapter(
        ExternalEngine(base_url="http://127.0.0.1:18398/v1/", metrics_dialect="llamacpp"), "default", tmp_path
    )
    assert ext.base_url == "http://127.0.0.1:18398" and ext.command() == []
    assert ext.metrics_dialect == "llamacpp"


# ------------------------------------------------------------------------ from the seed study's spec file


def _load_qwen38(env: dict[str, str]) -> Any:
    """The seed spec through the real loader. If the only problem is a scenario pack that is not installed
    (not this test's subject), the scenario workloads are dropped and the rest loaded from the same path."""
    try:
        return load_spec(QWEN38, env=env)
    except SpecError as exc:
        assert all("pack" in p for p in exc.problems), exc.problems
    tree = yaml.safe_load(QWEN38.read_text())
    packs = [w for w, body in tree["workloads"].items() if body.get("kind") == "scenarios"]
    for w in packs:
        del tree["workloads"][w]
    tree.pop("grading", None)  # its override names a scenario
    if tree.get("matrix", {}).get("workloads"):
        tree["matrix"]["workloads"] = [w for w in tree["matrix"]["workloads"] if w not in packs]
    return load_spec_text(yaml.safe_dump(tree, sort_keys=False), QWEN38, env=env)


def test_qwen38_spec_file_renders_the_seed_commands(tmp_path: Path) -> None:
    key = "ninfer-secret-7788"
    loaded = _load_qwen38(env={"NINFER_API_KEY": key})
    spec = loaded.spec
    seen: dict[str, list[str]] = {}
    for ename, eng in spec.engines.items():
        for vname, v in eng.variants.items():
            a = make_adapter(ename, eng, vname, v, spec_dir=loaded.dir, log_dir=tmp_path, emit=lambda e: None)
            seen[f"{ename}.{vname}"] = a.command()
            assert key not in json.dumps(a.env_info())
    assert set(seen) == {
        "vllm.cold",
        "vllm.warm",
        "vllm.mtp1",
        "vllm.mtp3",
        "vllm.stock-template",
        "vllm.custom-template",
        "ninfer.cold",
        "ninfer.warm",
        "ninfer.nvfp4",
    }
    # the tool-suite pair: the model's own template (a variant's "" drops the engine's) vs the study's
    assert "--chat-template" not in seen["vllm.stock-template"]
    assert "--chat-template" in seen["vllm.custom-template"]
    assert _joined(seen["vllm.stock-template"]).endswith(SEED_FLAGS + " --enable-prefix-caching")
    # NInfer's NVFP4 artifact: a variant that replaces the model
    assert seen["ninfer.nvfp4"][:2] == ["ninfer-serve", "gittensor-model-hub/Qwen3.8-27B-NVFP4-RTX5090"]
    cold = _joined(seen["vllm.cold"])
    assert cold.startswith(
        "vllm serve gittensor-model-hub/Qwen3.8-27B-NVFP4-RTX5090 --host 127.0.0.1 --port 8000 "
        "--served-model-name qwen38 --chat-template "
    )
    tmpl = seen["vllm.cold"][seen["vllm.cold"].index("--chat-template") + 1]
    assert Path(tmpl).is_file() and Path(tmpl).name == "qwen38-chat.jinja"
    assert SEED_FLAGS in cold and cold.endswith(" --no-enable-prefix-caching")
    assert _joined(seen["vllm.warm"]).endswith(SEED_FLAGS + " --enable-prefix-caching")
    for n in (1, 3):
        assert _joined(seen[f"vllm.mtp{n}"]).endswith(
            SEED_FLAGS + " --enable-prefix-caching --speculative-config " + shlex.quote(_mtp(n))
        )
    ninfer = (
        "ninfer-serve /models/qwen38 --host 127.0.0.1 --port 8001 --max-context 262144 --kv-dtype int8 "
        "--max-concurrency 2 --spec mtp --draft-tokens 3"
    )
    assert _joined(seen["ninfer.warm"]) == ninfer
    assert _joined(seen["ninfer.cold"]) == ninfer + " --no-prefix-reuse"
    eng = spec.engines["ninfer"]
    a = make_adapter(
        "ninfer",
        eng,
        "warm",
        eng.variants["warm"],
        spec_dir=loaded.dir,
        log_dir=tmp_path,
        emit=lambda e: None,
    )
    assert a.headers == {"Authorization": f"Bearer {key}"}  # the key reaches the engine only as a header
    assert a.metrics_dialect == "vllm"


def test_api_key_goes_through_the_engines_variable_not_argv(tmp_path: Path) -> None:
    from bench_tui.spec.schema import LlamaCppEngine, SglangEngine

    key = "sk-env-not-argv-5150"
    llama = _adapter(LlamaCppEngine(model="/m.gguf", api_key=key, port=18398), "default", tmp_path)
    assert key not in llama.command() and llama.environment()["LLAMA_API_KEY"] == key
    # SGLang has no such variable: the flag stays (and is redacted wherever it is recorded)
    sg = _adapter(SglangEngine(model="/m", api_key=key, port=18397), "default", tmp_path)
    argv = sg.command()
    assert argv[argv.index("--api-key") + 1] == key
    assert key not in json.dumps(sg.env_info())
    # no key: no variable
    assert (
        "LLAMA_API_KEY"
        not in _adapter(LlamaCppEngine(model="/m.gguf", port=18396), "default", tmp_path).environment()
    )


def test_xllama_launcher_reads_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_tui.engine_adapters import xllama_server

    monkeypatch.setenv("LLAMA_API_KEY", "k-from-env-77")
    ns = xllama_server.build_parser().parse_args(["-m", "/m.gguf"])
    assert ns.api_key == "k-from-env-77"

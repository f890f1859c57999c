"""Speculative decoding flags on the llama.cpp launcher, variants that override `model` / `launcher`, and the
context-overflow warnings of `validate` / `plan` (issue 13)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli import main
from bench_tui.engine_adapters import EngineConfigError, make_adapter
from bench_tui.engine_adapters.install import model_path
from bench_tui.engine_adapters.xllama_server import build_parser, make_params, spec_type_names
from bench_tui.spec.loader import SpecError, load_spec_text
from bench_tui.spec.schema import LlamaCppEngine, Variant

XLLAMA = ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]


def _params(*flags: str) -> object:
    """The wheel's params for these launcher flags: only the tests that call this need xllamacpp (the others
    check flags, specs and argv, and run wherever the package does)."""
    xl = pytest.importorskip("xllamacpp")
    ns = build_parser().parse_args(["-m", "/x.gguf", *flags])
    return make_params(ns, xl)


def test_draft_model_flags_reach_the_wheel_params() -> None:
    p = _params(
        "--model-draft", "/d.gguf", "--draft-max", "4", "--draft-min", "1", "--draft-p-min", "0.6", "-td", "1"
    )
    spec = p.speculative  # type: ignore[attr-defined]
    assert spec.draft.mparams.path == "/d.gguf"
    assert (spec.draft.n_max, spec.draft.n_min) == (4, 1)
    assert spec.draft.p_min == pytest.approx(0.6)
    assert spec.draft.cpuparams.n_threads == 1
    # a draft model alone means draft-simple: the wheel drafts nothing with the type left at none
    assert [t.name for t in spec.types] == ["COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE"]
    # the newer llama-server spellings are aliases
    q = _params("-md", "/d.gguf", "--spec-draft-n-max", "6")
    assert q.speculative.draft.n_max == 6  # type: ignore[attr-defined]


def test_spec_type_takes_the_wheels_names_and_ngram_sizes() -> None:
    names = spec_type_names()
    assert "ngram-simple" in names and "draft-simple" in names and "ngram-map-k4v" in names
    p = _params("--spec-type", "ngram-simple,ngram-mod", "--spec-ngram-size-n", "3", "--draft-max", "8")
    spec = p.speculative  # type: ignore[attr-defined]
    assert [t.name for t in spec.types] == [
        "COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE",
        "COMMON_SPECULATIVE_TYPE_NGRAM_MOD",
    ]
    assert spec.ngram_simple.size_n == 3 and spec.ngram_mod.n_max == 8


def test_bad_speculative_flags_are_clear_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["-m", "/x.gguf", "--spec-type", "eagle9"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown speculative decoding type eagle9" in err and "ngram-simple" in err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["-m", "/x.gguf", "--draft-banana", "3"])
    err = capsys.readouterr().err
    assert "supported flags:" in err and "--model-draft" in err and "--draft-max" in err
    with pytest.raises(SystemExit) as exc:
        _params("--spec-type", "draft-simple")  # a draft type without a draft model
    assert "needs a draft model" in capsys.readouterr().err


def _adapter(engine: LlamaCppEngine, variant: str | None, tmp_path: Path):  # type: ignore[no-untyped-def]
    v = engine.variants.get(variant) if variant else None
    return make_adapter(
        "llama", engine, variant or "default", v, spec_dir=tmp_path, log_dir=tmp_path, emit=lambda e: None
    )


def test_model_draft_accepts_the_same_forms_as_model(tmp_path: Path) -> None:
    eng = LlamaCppEngine(
        launcher=XLLAMA,
        model="builtin:qwen2.5-coder-0.5b",
        port=18999,
        args={"parallel": 2},
        variants={
            "draft": Variant(args={"model-draft": "builtin:qwen2.5-coder-0.5b", "draft-max": 4}),
            "local": Variant(args={"-md": "./d.gguf"}),
        },
    )
    argv = _adapter(eng, "draft", tmp_path).command()
    i = argv.index("--model-draft")
    assert argv[i + 1] == str(model_path()) and argv[argv.index("--draft-max") + 1] == "4"
    local = _adapter(eng, "local", tmp_path).command()
    assert local[local.index("-md") + 1] == str((tmp_path / "d.gguf").resolve())


def test_an_unsupported_arg_on_the_xllama_launcher_lists_the_supported(tmp_path: Path) -> None:
    eng = LlamaCppEngine(launcher=XLLAMA, model="builtin:qwen2.5-coder-0.5b", args={"lookahead": 4})
    with pytest.raises(EngineConfigError) as exc:
        _adapter(eng, None, tmp_path).command()
    msg = str(exc.value)
    assert "'lookahead'" in msg and "--spec-type" in msg and "--model-draft" in msg
    # a real llama-server gets whatever the spec says
    real = LlamaCppEngine(launcher=["llama-server"], model="/m.gguf", args={"lookahead": 4})
    assert "--lookahead" in _adapter(real, None, tmp_path).command()


def test_variants_override_model_and_launcher(tmp_path: Path) -> None:
    eng = LlamaCppEngine(
        launcher=["llama-server"],
        model="/base.gguf",
        variants={
            "nvfp4": Variant(model="/nvfp4.gguf"),
            "wheel": Variant(launcher=XLLAMA, model="builtin:qwen2.5-coder-0.5b"),
        },
    )
    assert _adapter(eng, "nvfp4", tmp_path).command()[:3] == ["llama-server", "-m", "/nvfp4.gguf"]
    wheel = _adapter(eng, "wheel", tmp_path)
    assert wheel.command()[:5] == [
        sys.executable,
        "-m",
        "bench_tui.engine_adapters.xllama_server",
        "-m",
        str(model_path()),
    ]
    assert wheel.env_info()["model"] == "builtin:qwen2.5-coder-0.5b"


def test_variant_launcher_on_a_command_engine_is_a_spec_error() -> None:
    text = """version: 1
name: t
engines:
  n:
    kind: command
    command: [srv, "{port}"]
    variants:
      x: {launcher: [other]}
workloads:
  s: {kind: throughput}
"""
    with pytest.raises(SpecError) as exc:
        load_spec_text(text, "t.yaml")
    assert any("t.yaml:8:" in p and "no launcher to replace" in p for p in exc.value.problems)


SPEC = """version: 1
name: ctx
engines:
  llama:
    kind: llamacpp
    launcher: ["{{python}}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    args: {{ctx-size: 16384, parallel: 4}}
workloads:
  sweep: {{kind: throughput, pp: [2048], tg: [256], depths: [{depth}]}}
"""


def test_validate_and_plan_warn_when_the_largest_prompt_does_not_fit(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.format(depth="0, 2048"))
    r = CliRunner().invoke(main, ["validate", str(bad)])
    assert r.exit_code == 0, r.output
    assert f"{bad}:10:" in r.stderr and "does not fit the per-slot context of 4096" in r.stderr
    assert "ctx-size 16384 / parallel 4" in r.stderr and "pp 2048 + depth 2048" in r.stderr
    r = CliRunner().invoke(main, ["plan", str(bad)])
    assert r.exit_code == 0 and "per-slot context of 4096" in r.stderr
    tight = tmp_path / "tight.yaml"
    tight.write_text(SPEC.format(depth="1900"))
    r = CliRunner().invoke(main, ["validate", str(tight)])
    assert "+ 256 output = 4204 tokens exceeds the per-slot context of 4096" in r.stderr
    ok = tmp_path / "ok.yaml"
    ok.write_text(SPEC.format(depth="0"))
    r = CliRunner().invoke(main, ["validate", str(ok)])
    assert r.exit_code == 0 and "warning" not in r.stderr

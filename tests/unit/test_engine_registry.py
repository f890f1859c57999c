"""Engine kinds and metrics dialects come from one registry, open to entry points."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import pytest

from bench_tui.engine_adapters import make_adapter, registry
from bench_tui.engine_adapters.external import ExternalAdapter
from bench_tui.engine_adapters.process import engine_kind
from bench_tui.engine_adapters.vllm import VllmAdapter
from bench_tui.events import ServerSide
from bench_tui.runner.orchestration.planner import load_spec_text
from bench_tui.runner.workloads.sweep import payload, server_side
from bench_tui.spec.jsonschema import build_schema
from bench_tui.spec.loader import SpecError, load_stored_spec
from bench_tui.spec.schema import EngineBase, ExternalEngine

TGI = registry.Dialect(
    "tgi",
    server_side=lambda before, after: ServerSide(
        source="tgi /metrics", generation_tokens=after.get("tgi_tokens", 0) - before.get("tgi_tokens", 0)
    ),
    engine_stats=lambda values: {"running": values.get("tgi_queue"), "waiting": None, "kv_usage": None},
    exact_tg=False,
    min_tokens=True,
    reset_path="/flush",
)


class TgiEngine(EngineBase, tag="tgi", kw_only=True):
    """A plugin kind's typed options."""

    base_url: str
    sharded: bool = False
    # described, so msgspec.inspect wraps it in Metadata: the loader checked no such field before
    max_batch_prefill_tokens: (
        Annotated[int, msgspec.Meta(ge=1, description="Tokens per prefill batch.")] | None
    ) = None


class TgiAdapter(ExternalAdapter):
    kind = "tgi"
    options = TgiEngine


class _EP:
    def __init__(self, name: str, obj: object) -> None:
        self.name, self._obj = name, obj
        self.value = f"my_pkg.tgi:{getattr(obj, '__name__', 'X')}"

    def load(self) -> object:
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def _install(monkeypatch: pytest.MonkeyPatch, engines: list[_EP]) -> None:
    groups = {registry.DIALECTS_GROUP: [_EP("tgi", TGI)], registry.ENGINES_GROUP: engines}
    monkeypatch.setattr(registry, "entry_points", lambda group: groups.get(group, []))


@pytest.fixture
def tgi_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if a package declared ``tgi`` in the bench_tui.dialects and bench_tui.engines entry point groups."""
    _install(monkeypatch, [_EP("tgi", TgiAdapter)])


def test_builtin_kinds_and_dialects() -> None:
    assert registry.adapter_class("vllm") is VllmAdapter
    assert set(registry.engine_kinds()) >= {"vllm", "sglang", "llamacpp", "command", "external"}
    assert registry.dialect("llamacpp").slots and not registry.dialect("llamacpp").prompt_counts_cached
    assert registry.dialect("vllm").reset_path == "/reset_prefix_cache"
    with pytest.raises(
        registry.UnknownName, match="unknown metrics dialect 'vlm'; known: llamacpp, none, sglang"
    ):
        registry.dialect("vlm")
    with pytest.raises(registry.UnknownName, match="unknown engine kind 'tgi'"):
        registry.adapter_class("tgi")


def test_a_plugin_dialect_is_used_everywhere_a_dialect_is(tgi_installed: None) -> None:
    assert registry.dialect("tgi") is TGI and "tgi" in registry.dialect_names()
    assert registry.adapter_class("tgi").kind == "tgi"
    body = payload("hi", endpoint="completions", model_id="m", max_tokens=8, dialect="tgi", sampling=None)
    assert body["min_tokens"] == 8 and "ignore_eos" not in body
    assert server_side("tgi", {"tgi_tokens": 10}, {"tgi_tokens": 42}).generation_tokens == 32
    eng = ExternalEngine(base_url="http://127.0.0.1:9", metrics_dialect="tgi")
    adapter = make_adapter(
        "t", eng, "default", None, spec_dir=Path("."), log_dir=Path("."), emit=lambda e: None
    )
    assert adapter.dialect is TGI  # type: ignore[attr-defined]


SPEC = """\
version: 1
name: d
engines:
  e:
    kind: external
    base_url: http://127.0.0.1:9
    metrics_dialect: {dialect}
workloads:
  w: {{kind: throughput}}
"""


def test_a_spec_names_only_known_dialects(tmp_path: Path, tgi_installed: None) -> None:
    with pytest.raises(SpecError) as err:
        load_spec_text(SPEC.format(dialect="llama"), tmp_path / "s.yaml", env={})
    assert str(err.value).splitlines() == [
        f"{tmp_path / 's.yaml'}:7:22: engines.e.metrics_dialect: unknown dialect 'llama'; did you mean 'llamacpp'?"
    ]
    assert load_spec_text(SPEC.format(dialect="tgi"), tmp_path / "s.yaml", env={}).spec.engines["e"]


TGI_SPEC = """\
version: 1
name: p
engines:
  t:
    kind: tgi
    base_url: http://127.0.0.1:9
    max_batch_prefill_tokens: {tokens}
    variants: {{a: {{}}, b: {{}}}}
workloads:
  w: {{kind: throughput}}
"""


def test_a_plugin_kind_loads_with_its_typed_options(tmp_path: Path, tgi_installed: None) -> None:
    assert registry.plugin_engines() == (TgiEngine,)
    eng = load_spec_text(TGI_SPEC.format(tokens=4096), tmp_path / "s.yaml", env={}).spec.engines["t"]
    assert (
        isinstance(eng, TgiEngine)
        and eng.max_batch_prefill_tokens == 4096
        and list(eng.variants) == ["a", "b"]
    )
    with pytest.raises(SpecError) as err:
        load_spec_text(TGI_SPEC.format(tokens=0), tmp_path / "s.yaml", env={})
    assert (
        str(err.value)
        == f"{tmp_path / 's.yaml'}:7:31: engines.t.max_batch_prefill_tokens: must be >= 1, got 0"
    )
    with pytest.raises(SpecError) as err:
        load_spec_text(
            TGI_SPEC.format(tokens=1).replace("kind: tgi", "kind: tg"), tmp_path / "s.yaml", env={}
        )
    assert (
        str(err.value)
        == f"{tmp_path / 's.yaml'}:5:11: engines.t.kind: unknown kind 'tg'; did you mean 'tgi'?"
    )
    schema = build_schema(registry.plugin_engines())
    assert schema["definitions"]["TgiEngine"]["properties"]["sharded"] == {
        "default": False,
        "type": "boolean",
    }
    assert "tgi" in schema["properties"]["engines"]["additionalProperties"]["properties"]["kind"]["enum"]


def test_without_the_plugin_the_kind_is_refused_and_a_stored_run_still_reads(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(TGI_SPEC.format(tokens=64))
    with pytest.raises(SpecError) as err:
        load_spec_text(spec.read_text(), spec, env={})
    assert str(err.value) == (
        f"{spec}:5:11: engines.t.kind: unknown kind 'tgi'; allowed values: vllm, sglang, llamacpp, command, "
        "external (another kind comes from a package that declares it in the bench_tui.engines entry points)"
    )
    # a finished run's spec is read without the plugin: the kind and what every engine has are kept
    stored = load_stored_spec(spec).engines["t"]
    assert engine_kind(stored) == "tgi" and list(stored.variants) == ["a", "b"]


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (
            _EP("tgi", ImportError("No module named 'text_generation'")),
            "does not load: ImportError: No module",
        ),
        (_EP("tgi", type("TgiAdapter", (ExternalAdapter,), {"kind": "tgi"})), "TgiAdapter.options must be"),
        (
            _EP("tgi", type("TgiAdapter", (ExternalAdapter,), {"kind": "tgj", "options": TgiEngine})),
            "kind is 'tgj'",
        ),
        (_EP("vllm", TgiAdapter), "'vllm' is a built-in kind"),
        (_EP("tgi", TGI), "is not an EngineAdapter subclass"),
    ],
)
def test_a_broken_plugin_is_said_out_loud(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: _EP, says: str
) -> None:
    _install(monkeypatch, [entry])
    with pytest.raises(SpecError) as err:
        load_spec_text(SPEC.format(dialect="vllm"), tmp_path / "s.yaml", env={})
    (line,) = str(err.value).splitlines()
    assert line.startswith(f"{tmp_path / 's.yaml'}:1:1: the bench_tui.engines entry point {entry.name} = ")
    assert says in line and line.endswith("fix or uninstall that package")

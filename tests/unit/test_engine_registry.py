"""Engine kinds and metrics dialects come from one registry, open to entry points."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tui.engine_adapters import make_adapter, registry
from bench_tui.engine_adapters.external import ExternalAdapter
from bench_tui.engine_adapters.vllm import VllmAdapter
from bench_tui.events import ServerSide
from bench_tui.runner.orchestration.planner import load_spec_text
from bench_tui.runner.workloads.sweep import payload, server_side
from bench_tui.spec.loader import SpecError
from bench_tui.spec.schema import ExternalEngine

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


class _EP:
    def __init__(self, name: str, obj: object) -> None:
        self.name, self._obj = name, obj

    def load(self) -> object:
        return self._obj


@pytest.fixture
def tgi_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if a package declared ``tgi`` in the bench_tui.dialects and bench_tui.engines entry point groups."""

    class TgiAdapter(ExternalAdapter):
        kind = "tgi"

    groups = {registry.DIALECTS_GROUP: [_EP("tgi", TGI)], registry.ENGINES_GROUP: [_EP("tgi", TgiAdapter)]}
    monkeypatch.setattr(registry, "entry_points", lambda group: groups.get(group, []))


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

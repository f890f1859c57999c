"""spec/edit.py: overrides added and removed in the text, every other byte (comments too) kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from bench_tui.spec.edit import (
    EditError,
    add_override,
    add_override_text,
    remove_override,
    remove_override_text,
)
from bench_tui.spec.schema import Override

PACK = Path(__file__).parent / "data" / "grader_mini_pack.yaml"

BASE = """\
# a study spec (top comment)
version: 1
name: demo   # trailing comment
engines:
  llama:
    kind: llamacpp
    model: builtin:qwen2.5-coder-0.5b
workloads:
  sweep: {kind: throughput, pp: [16], tg: [8]}
"""

WITH_GRADING = (
    BASE
    + """\
grading:
  alpha: 0.6   # keep quality weight
  # overrides reviewed by mk
  overrides:
    - scenario: TC-01
      verdict: pass
      reason: "the unit is implied"   # why
    # second one is scoped
    - scenario: TC-02
      engine: llama
      verdict: fail
      reason: leaked a secret
report:
  title: Demo  # report comment
"""
)


def _ov(**kw: object) -> Override:
    base = {"scenario": "TC-09", "verdict": "pass", "reason": "ok: with colon # and hash"}
    base.update(kw)
    return Override(**base)  # type: ignore[arg-type]


def _overrides(text: str) -> list[dict]:
    return yaml.safe_load(text)["grading"]["overrides"]


def test_add_creates_section_and_keeps_everything_else() -> None:
    new = add_override_text(BASE, _ov(engine="llama", variant="default"))
    assert new.startswith(BASE.rstrip("\n"))
    ovs = _overrides(new)
    assert ovs == [
        {
            "scenario": "TC-09",
            "engine": "llama",
            "variant": "default",
            "verdict": "pass",
            "reason": "ok: with colon # and hash",
        }
    ]


def test_add_appends_after_last_item_and_preserves_comments() -> None:
    new = add_override_text(WITH_GRADING, _ov(reason="yes"))
    for line in WITH_GRADING.splitlines():
        assert line in new.splitlines()  # nothing removed or rewritten
    assert len(new.splitlines()) == len(WITH_GRADING.splitlines()) + 3
    ovs = _overrides(new)
    assert [o["scenario"] for o in ovs] == ["TC-01", "TC-02", "TC-09"]
    assert ovs[2]["reason"] == "yes"  # a YAML keyword-ish word stays a string
    doc = yaml.safe_load(new)
    assert doc["grading"]["alpha"] == 0.6 and doc["report"]["title"] == "Demo"
    # the new item is inside grading, before `report:`
    assert new.index("TC-09") < new.index("report:")


def test_add_to_empty_flow_list_and_missing_key() -> None:
    t1 = BASE + "grading:\n  overrides: []  # none yet\n"
    assert [o["scenario"] for o in _overrides(add_override_text(t1, _ov()))] == ["TC-09"]
    t2 = BASE + "grading:\n  alpha: 0.5\n# trailing comment\n"
    new = add_override_text(t2, _ov())
    assert "# trailing comment" in new
    assert yaml.safe_load(new)["grading"] == {
        "alpha": 0.5,
        "overrides": [{"scenario": "TC-09", "verdict": "pass", "reason": "ok: with colon # and hash"}],
    }


def test_add_inline_grading_and_indentless_items() -> None:
    t = BASE + "grading: {alpha: 0.4}\n"
    doc = yaml.safe_load(add_override_text(t, _ov()))
    assert doc["grading"]["alpha"] == 0.4 and doc["grading"]["overrides"][0]["scenario"] == "TC-09"
    t2 = BASE + "grading:\n  overrides:\n  - scenario: A\n    verdict: fail\n    reason: r\n"
    assert [o["scenario"] for o in _overrides(add_override_text(t2, _ov()))] == ["A", "TC-09"]


def test_remove_by_scope_keeps_others_and_comments() -> None:
    new, n = remove_override_text(WITH_GRADING, "TC-02", engine="llama")
    assert n == 1
    assert [o["scenario"] for o in _overrides(new)] == ["TC-01"]
    assert "# second one is scoped" in new and "# overrides reviewed by mk" in new
    assert "report:\n  title: Demo  # report comment" in new
    # scope must match exactly: the unscoped TC-01 is not removed by an engine-scoped request
    same, n0 = remove_override_text(WITH_GRADING, "TC-01", engine="llama")
    assert n0 == 0 and same == WITH_GRADING


def test_remove_last_leaves_valid_empty_list() -> None:
    t, _ = remove_override_text(WITH_GRADING, "TC-02", engine="llama")
    t, n = remove_override_text(t, "TC-01")
    assert n == 1 and _overrides(t) == []
    assert yaml.safe_load(t)["grading"]["alpha"] == 0.6


def test_round_trip_through_loader_and_files(tmp_path: Path) -> None:
    shutil.copyfile(PACK, tmp_path / "mini.yaml")
    spec = WITH_GRADING.replace(
        "  sweep: {kind: throughput, pp: [16], tg: [8]}", "  tools: {kind: scenarios, pack: mini.yaml}"
    )
    p = tmp_path / "s.yaml"
    p.write_text(spec, encoding="utf-8")
    add_override(p, _ov(scenario="TC-03", engine="llama", variant="default", author="me", date="2026-12-02"))
    text = p.read_text(encoding="utf-8")
    from bench_tui.spec.loader import load_spec_text

    loaded = load_spec_text(text, p)
    assert [o.scenario for o in loaded.spec.grading.overrides] == ["TC-01", "TC-02", "TC-03"]
    assert loaded.spec.grading.overrides[2].date == "2026-12-02"
    assert remove_override(p, "TC-03", "llama", "default") == 1
    assert p.read_text(encoding="utf-8") == spec


def test_flow_list_with_items_is_refused() -> None:
    t = BASE + "grading:\n  overrides: [{scenario: A, verdict: pass, reason: r}]\n"
    with pytest.raises(EditError, match="flow list"):
        add_override_text(t, _ov())

"""The committed JSON Schema: in sync with the Structs, draft-07, accepts the example specs, rejects bad ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
import yaml

from bench_tui.spec import schema as S
from bench_tui.spec.jsonschema import REGENERATE, SCHEMA_PATH, build_schema, render_schema
from bench_tui.spec.loader import default_spec_path, load_spec

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "src" / "bench_tui" / "data" / "schema" / "bench-tui.schema.json"
EXAMPLES = sorted((REPO / "src" / "bench_tui" / "data" / "specs").glob("*.yaml"))
SCHEMA_LINE = "# yaml-language-server: $schema=../schema/bench-tui.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads(COMMITTED.read_text(encoding="utf-8")))


def _errors(validator: jsonschema.Draft7Validator, doc: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


# --------------------------------------------------------------------------------------------- drift


def test_committed_schema_matches_the_structs() -> None:
    assert SCHEMA_PATH == COMMITTED
    assert COMMITTED.is_file(), f"no committed schema; generate it: {REGENERATE}"
    assert COMMITTED.read_text(encoding="utf-8") == render_schema(), (
        f"{COMMITTED.relative_to(REPO)} is out of date with bench_tui/spec/schema.py; regenerate it: {REGENERATE}"
    )


def test_output_is_deterministic_and_sorted() -> None:
    text = render_schema()
    assert text == render_schema()
    assert text.endswith("}\n")
    assert json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n" == text


# --------------------------------------------------------------------------------------------- draft-07


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_schema_is_draft_07() -> None:
    schema = build_schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft7Validator
    text = json.dumps(schema)
    assert "$defs" not in text and "discriminator" not in text
    refs = [n["$ref"] for n in _walk(schema) if "$ref" in n]
    assert refs, "the schema uses definitions"
    for ref in refs:
        assert ref.startswith("#/definitions/"), ref
        assert ref.removeprefix("#/definitions/") in schema["definitions"], ref
    for node in _walk(schema):
        if "$ref" in node:  # draft-07 ignores a $ref's siblings: there must be none
            assert set(node) == {"$ref"}, node


def test_root_is_the_spec_object() -> None:
    schema = build_schema()
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["version", "name", "engines", "workloads"]
    assert "Spec" not in schema["definitions"]


STRUCTS = [
    S.VllmEngine,
    S.SglangEngine,
    S.LlamaCppEngine,
    S.CommandEngine,
    S.ExternalEngine,
    S.Variant,
    S.ThroughputWorkload,
    S.ScenarioWorkload,
    S.SpecAcceptanceWorkload,
    S.Matrix,
    S.MatrixRule,
    S.Override,
    S.Grading,
    S.Sampling,
    S.Report,
]


@pytest.mark.parametrize("struct", STRUCTS, ids=lambda s: s.__name__)
def test_every_struct_field_is_in_its_definition(struct: type[msgspec.Struct]) -> None:
    d = build_schema()["definitions"][struct.__name__]
    assert d["additionalProperties"] is False
    names = {f.encode_name for f in msgspec.structs.fields(struct)}
    tag = struct.__struct_config__.tag
    if tag is not None:
        names.add("kind")
        assert d["properties"]["kind"]["const"] == tag
        assert "kind" in d["required"]
    assert set(d["properties"]) == names


@pytest.mark.parametrize(("field", "tags"), [("engines", S.ENGINE_KINDS), ("workloads", S.WORKLOAD_KINDS)])
def test_tagged_unions_offer_kind_values(field: str, tags: tuple[str, ...]) -> None:
    union = build_schema()["properties"][field]["additionalProperties"]
    assert union["required"] == ["kind"]
    assert union["properties"]["kind"]["enum"] == list(tags)
    members = [m["$ref"].rsplit("/", 1)[-1] for m in union["anyOf"]]
    consts = [build_schema()["definitions"][m]["properties"]["kind"]["const"] for m in members]
    assert consts == list(tags)


def test_descriptions_for_non_obvious_fields() -> None:
    d = build_schema()["definitions"]
    assert "--kv-cache-dtype" in d["VllmEngine"]["properties"]["args"]["description"]
    assert "${VAR}" in d["ExternalEngine"]["properties"]["api_key"]["description"]
    assert "Context tokens" in d["ThroughputWorkload"]["properties"]["depths"]["description"]
    assert "engine.variant" in d["Report"]["properties"]["baseline"]["description"]


# --------------------------------------------------------------------------------------------- example specs


def test_there_are_example_specs() -> None:
    assert len(EXAMPLES) >= 2, EXAMPLES
    assert default_spec_path() in [p.resolve() for p in EXAMPLES]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_spec_starts_with_the_schema_line(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == SCHEMA_LINE
    target = (path.parent / first.split("$schema=", 1)[1]).resolve()
    assert target == COMMITTED.resolve()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_spec_validates_against_the_schema(path: Path, validator: jsonschema.Draft7Validator) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert _errors(validator, doc) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_spec_loads(path: Path) -> None:
    loaded = load_spec(path, env={})
    assert loaded.spec.engines and loaded.spec.workloads


# --------------------------------------------------------------------------------------------- documents

VALID: dict[str, Any] = {
    "version": 1,
    "name": "all-kinds",
    "engines": {
        "v": {
            "kind": "vllm",
            "model": "m",
            "args": {
                "kv-cache-dtype": "fp8",
                "enforce-eager": True,
                "speculative-config": {"method": "mtp"},
                "x": [1, "a"],
                "drop": None,
            },
            "variants": {"mtp3": {"args": {"x": None}}, "warm-1": {}},
        },
        "s": {"kind": "sglang", "port": 30000},
        "l": {"kind": "llamacpp", "launcher": ["{python}", "-m", "srv"], "api_key": "${KEY}"},
        "c": {"kind": "command", "command": ["srv", "{port}"], "metrics_dialect": "vllm"},
        "e": {"kind": "external", "base_url": "http://127.0.0.1:8000"},
    },
    "workloads": {
        "t": {
            "kind": "throughput",
            "pp": [64],
            "tg": [8],
            "depths": [0, 1024],
            "concurrency": [1, 2],
            "cache": "warm",
            "endpoint": "chat",
        },
        "sc": {"kind": "scenarios", "pack": "standard", "subset": "short", "mode": "strict"},
        "a": {"kind": "spec_acceptance", "content": ["code", "json"], "depths": [0]},
    },
    "matrix": {
        "engines": ["v.mtp3", "l"],
        "workloads": ["t"],
        "include": [{"engine": "e", "workload": "a"}],
        "exclude": [{"variant": "mtp3"}],
    },
    "sampling": {"temperature": 0.2, "seed": None, "max_tokens": 64},
    "grading": {
        "alpha": 0.5,
        "overrides": [{"scenario": "TC-01", "verdict": "pass", "reason": "ok", "date": "2026-01-01"}],
    },
    "report": {"formats": ["md"], "baseline": "v.mtp3"},
    "runs_dir": "runs",
}


def test_a_document_using_every_kind_is_valid(validator: jsonschema.Draft7Validator) -> None:
    assert _errors(validator, VALID) == []


def _with(path: str, value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(VALID))
    *parents, last = path.split("/")
    node = doc
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("samplng", {}),  # unknown top-level key
        ("version", 2),
        ("name", _DELETE),  # missing required
        ("engines/v/kind", "vlm"),  # unknown kind
        ("engines/v/modle", "m"),  # unknown engine field
        ("engines/e/base_url", _DELETE),  # external without base_url
        ("engines/s/port", 70000),
        ("engines/s/port", "8000"),
        ("engines/c/command", "srv --port 1"),  # a string for a list
        ("engines/v/variants/mtp3/modle", "m"),  # unknown variant field
        ("engines/a/b", {"kind": "external", "base_url": "http://x"}),  # '/' in an engine name
        ("engines/a.b", {"kind": "external", "base_url": "http://x"}),  # '.' in an engine name
        ("engines/v/variants/v.1", {}),  # '.' in a variant name
        ("workloads/t/pp", 512),  # an int for a list
        ("workloads/t/concurrency", [0]),
        ("workloads/t/depths", [-1]),
        ("workloads/t/cache", "colt"),
        ("workloads/t/kind", _DELETE),  # no kind
        ("workloads/sc/pack", _DELETE),
        ("workloads/a/content", ["code", "jsn"]),
        ("matrix/include/0/workloads", "t"),  # unknown rule key
        ("grading/alpha", 1.5),
        ("grading/overrides/0/verdict", "passed"),
        ("report/formats", ["pdf"]),
    ],
)
def test_invalid_documents_are_rejected(validator: jsonschema.Draft7Validator, path: str, value: Any) -> None:
    if path.startswith("engines/a"):
        doc = json.loads(json.dumps(VALID))
        doc["engines"][path.removeprefix("engines/")] = value
    else:
        doc = _with(path, value)
    assert _errors(validator, doc), f"the schema accepted {path} = {value!r}"

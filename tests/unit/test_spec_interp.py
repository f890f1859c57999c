"""``${VAR}`` interpolation (Compose-like) and secrets: expanded in memory, never in raw text or outputs."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from bench_tui.spec.interp import InterpError, expand_str, interpolate_tree
from bench_tui.spec.loader import SpecError, load_spec, load_spec_text
from bench_tui.spec.schema import ExternalEngine
from bench_tui.spec.secrets import REDACTED, is_secret_key, known_secrets, redact

# values unlikely to show up anywhere else (the secret registry is process-wide)
TOKEN = "bt-interp-test-7f3a9c2e"
HF = "hf_bt_interp_5d41402abc"


# --------------------------------------------------------------------------------------------- expand_str


@pytest.mark.parametrize(
    ("text", "env", "want"),
    [
        ("${A}", {"A": "x"}, "x"),
        ("pre-${A}-post", {"A": "x"}, "pre-x-post"),
        ("${A}${B}", {"A": "1", "B": "2"}, "12"),
        ("${A:-dflt}", {}, "dflt"),
        ("${A:-dflt}", {"A": ""}, "dflt"),  # :- also replaces an empty value
        ("${A:-dflt}", {"A": "set"}, "set"),
        ("${A-dflt}", {}, "dflt"),
        ("${A-dflt}", {"A": ""}, ""),  # - only replaces an unset one
        ("${A:-}", {}, ""),
        ("${A:-http://h:8000/v1}", {}, "http://h:8000/v1"),  # a default may hold ':' and '-'
        ("$$", {}, "$"),
        ("$${A}", {"A": "x"}, "${A}"),  # an escaped reference stays literal
        ("cost: 5$ or $5", {}, "cost: 5$ or $5"),  # a lone $ is kept
        ("no refs", {}, "no refs"),
    ],
)
def test_expand_str(text: str, env: dict[str, str], want: str) -> None:
    assert expand_str(text, env) == want


@pytest.mark.parametrize(
    ("text", "offset", "fragment"),
    [
        ("${MISSING}", 0, "environment variable MISSING is not set; set it or write ${MISSING:-default}"),
        ("abc ${MISSING}", 4, "MISSING is not set"),
        ("${OK} ${1X}", 6, "bad variable reference '${1X}'; use ${NAME} or ${NAME:-default}"),
        ("${}", 0, "bad variable reference '${}'"),
        ("${A B}", 0, "bad variable reference '${A B}'"),
        ("x ${OPEN", 2, "unclosed '${'"),
    ],
)
def test_expand_str_errors_carry_the_offset(text: str, offset: int, fragment: str) -> None:
    with pytest.raises(InterpError) as info:
        expand_str(text, {"OK": "1"})
    assert info.value.offset == offset
    assert fragment in str(info.value)


def test_interpolate_tree_only_touches_string_values() -> None:
    tree = {
        "a": "${A}",
        "${KEY}": "v",
        "n": 3,
        "flag": True,
        "lst": ["${A}", 1, {"deep": "${A:-z}"}],
        "none": None,
    }
    out, errors, secrets = interpolate_tree(tree, {"A": "x"})
    assert errors == []
    assert out == {
        "a": "x",
        "${KEY}": "v",
        "n": 3,
        "flag": True,
        "lst": ["x", 1, {"deep": "x"}],
        "none": None,
    }
    assert secrets == set()
    assert tree["a"] == "${A}"  # the input is not modified


def test_interpolate_tree_reports_every_error_with_its_key_path() -> None:
    tree = {"engines": {"e": {"model": "${M}", "args": {"x": ["ok", "${N}"]}}}}
    _, errors, _ = interpolate_tree(tree, {})
    assert [(path, off) for path, _, off in errors] == [
        (("engines", "e", "model"), 0),
        (("engines", "e", "args", "x", 1), 0),
    ]


# --------------------------------------------------------------------------------------------- through the loader

SPEC = """\
version: 1
name: interp
engines:
  remote:
    kind: external
    base_url: ${BASE_URL:-http://127.0.0.1:9999}
    model: ${MODEL}
    api_key: ${TOKEN}
    env:
      HF_TOKEN: ${HF}
      PRICE: $$5
workloads:
  sweep: {kind: throughput}
"""


def test_loader_expands_values_from_the_given_env() -> None:
    ld = load_spec_text(SPEC, "s.yaml", env={"MODEL": "qwen", "TOKEN": TOKEN, "HF": HF})
    eng = ld.spec.engines["remote"]
    assert isinstance(eng, ExternalEngine)
    assert eng.base_url == "http://127.0.0.1:9999"
    assert eng.model == "qwen"
    assert eng.env == {"HF_TOKEN": HF, "PRICE": "$5"}


def test_loader_reads_the_process_environment_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODEL", "from-env")
    monkeypatch.setenv("TOKEN", TOKEN)
    monkeypatch.setenv("HF", HF)
    monkeypatch.setenv("BASE_URL", "http://127.0.0.1:7777")
    path = tmp_path / "s.yaml"
    path.write_text(SPEC, encoding="utf-8")
    eng = load_spec(path).spec.engines["remote"]
    assert isinstance(eng, ExternalEngine)
    assert (eng.model, eng.base_url) == ("from-env", "http://127.0.0.1:7777")


def test_unset_without_default_is_an_error_at_the_reference(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SPEC, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path, env={"TOKEN": TOKEN, "HF": HF})
    assert info.value.problems == [
        f"{path}:7:12: engines.remote.model: environment variable MODEL is not set; set it or write "
        "${MODEL:-default}"
    ]


def test_every_unset_variable_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SPEC, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path, env={})
    where = [p.split(": ")[0].removeprefix(f"{path}:") for p in info.value.problems]
    assert where == ["7:12", "8:14", "10:17"]
    assert "TOKEN is not set" in info.value.problems[1] and "HF is not set" in info.value.problems[2]


def test_reference_inside_a_flow_list_points_at_the_item(tmp_path: Path) -> None:
    text = SPEC.replace("    model: ${MODEL}\n", "    model: m\n    args: {_: [a, 'x ${NOPE}']}\n")
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path, env={"TOKEN": TOKEN, "HF": HF})
    # line 8: `    args: {_: [a, 'x ${NOPE}']}`; the quote opens at col 19, `${` is at col 22
    assert info.value.problems == [
        f"{path}:8:22: engines.remote.args._[1]: environment variable NOPE is not set; set it or write "
        "${NOPE:-default}"
    ]


# --------------------------------------------------------------------------------------------- secrets


def test_secrets_are_expanded_in_memory_but_not_in_raw_text() -> None:
    ld = load_spec_text(SPEC, "s.yaml", env={"MODEL": "qwen", "TOKEN": TOKEN, "HF": HF})
    assert ld.spec.engines["remote"].api_key == TOKEN
    assert ld.secrets == {TOKEN, HF}
    assert "${TOKEN}" in ld.raw_text and "${HF}" in ld.raw_text
    assert TOKEN not in ld.raw_text and HF not in ld.raw_text
    assert {TOKEN, HF} <= known_secrets()


def test_non_secret_fields_are_not_treated_as_secrets() -> None:
    ld = load_spec_text(SPEC, "s.yaml", env={"MODEL": "qwen-model-name", "TOKEN": TOKEN, "HF": HF})
    assert "qwen-model-name" not in ld.secrets
    assert "http://127.0.0.1:9999" not in ld.secrets


def test_empty_secret_default_is_fine_and_not_registered() -> None:
    text = SPEC.replace("${TOKEN}", "${TOKEN:-}")
    ld = load_spec_text(text, "s.yaml", env={"MODEL": "m", "HF": HF})
    assert ld.spec.engines["remote"].api_key == ""
    assert ld.secrets == {HF}


def test_redaction_keeps_expanded_secrets_out_of_outputs() -> None:
    ld = load_spec_text(SPEC, "s.yaml", env={"MODEL": "qwen", "TOKEN": TOKEN, "HF": HF})
    plain = redact(ld.spec)  # a Struct comes back as builtins
    dumped = json.dumps(plain)
    assert TOKEN not in dumped and HF not in dumped
    assert plain["engines"]["remote"]["api_key"] == REDACTED
    assert plain["engines"]["remote"]["env"]["HF_TOKEN"] == REDACTED
    assert plain["engines"]["remote"]["model"] == "qwen"  # everything else untouched
    # a secret echoed inside any string (a log line, a URL) is scrubbed too
    assert redact({"line": f"curl -H 'Authorization: Bearer {TOKEN}'"}) == {
        "line": f"curl -H 'Authorization: Bearer {REDACTED}'"
    }
    # `--api-key VALUE` in an argv list
    assert redact(["server", "--api-key", "literal-value", "--port", "1"]) == [
        "server",
        "--api-key",
        REDACTED,
        "--port",
        "1",
    ]
    # the extra= set covers values the registry does not know
    assert redact("x other-secret-value y", {"other-secret-value"}) == f"x {REDACTED} y"
    # a Struct round trip of the unredacted spec still has the real value (used to talk to the engine)
    assert TOKEN in msgspec.json.encode(ld.spec).decode()


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("api-key", True),
        ("HF_TOKEN", True),
        ("password", True),
        ("openai_key", True),
        ("client_secret", True),
        ("model", False),
        ("keyword", False),
        ("base_url", False),
        ("monkey", False),
    ],
)
def test_secret_key_names(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


TYPED = """\
version: 1
name: typed
engines:
  e:
    kind: external
    base_url: http://127.0.0.1:1
    port: ${PORT:-8123}
    model: "${MODEL_NAME:-7}"
    api_key: ${KEY:-12345}
workloads:
  s:
    kind: throughput
    depths:
      - ${DEPTH:-0}
      - 1024
"""


def test_unquoted_references_are_typed_after_expansion_quoted_ones_stay_strings() -> None:
    ld = load_spec_text(TYPED, "typed.yaml", env={"DEPTH": "512"})
    eng = ld.spec.engines["e"]
    assert isinstance(eng, ExternalEngine)
    assert eng.port == 8123 and isinstance(eng.port, int)
    assert eng.model == "7"  # quoted: a string
    assert eng.api_key == "12345"  # a secret is never re-typed
    assert ld.spec.workloads["s"].depths == [512, 1024]  # type: ignore[union-attr]


def test_a_typed_reference_that_is_not_a_number_is_a_positioned_error() -> None:
    with pytest.raises(SpecError) as err:
        load_spec_text(TYPED, "typed.yaml", env={"PORT": "http"})
    assert str(err.value).startswith(
        "typed.yaml:7:11: engines.e.port: expected an integer, got a string ('http')"
    )

"""Golden error messages of the spec loader: for each malformed spec, the exact `file:line:col: message` line,
hint included. Every case goes through the real loader (`load_spec` on a file on disk)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench_tui.runner.orchestration.planner import load_spec
from bench_tui.spec.loader import SpecError

MINI_PACK = Path(__file__).parent / "data" / "grader_mini_pack.yaml"

# Most cases start from this valid spec; its lines are numbered in the comments.
HEAD = (
    "version: 1\n"  # 1
    "name: t\n"  # 2
    "engines:\n"  # 3
    "  llama:\n"  # 4
    "    kind: llamacpp\n"  # 5
    "    model: m.gguf\n"  # 6
)
WORK = (
    "workloads:\n"  # 7
    "  sweep:\n"  # 8
    "    kind: throughput\n"  # 9
)
BASE = HEAD + WORK
PACK_WL = (
    "  tools:\n"  # 10
    "    kind: scenarios\n"  # 11
    "    pack: pack.yaml\n"  # 12
)

NAME_HINT = (
    "(names are used in point ids like engine.variant/workload/point); use letters, digits, '-' or '_'"
)

# (id, spec text, expected problems as "line:col: message"; {dir} = the spec's folder)
CASES: list[tuple[str, str, list[str]]] = [
    # ---------------------------------------------------------------- keys and kinds
    (
        "top_level_key_typo",
        BASE + "samplng: {seed: 1}\n",
        ["10:1: unknown key 'samplng' in the spec; did you mean 'sampling'?"],
    ),
    (
        "engine_field_typo",
        BASE.replace("    model:", "    modle:"),
        ["6:5: unknown key 'modle' in engines.llama; did you mean 'model'?"],
    ),
    (
        "workload_field_typo",
        BASE + "    depth: [0]\n",
        ["10:5: unknown key 'depth' in workloads.sweep; did you mean 'depths'?"],
    ),
    (
        "engine_kind_typo",
        BASE.replace("kind: llamacpp", "kind: llamacp"),
        ["5:11: engines.llama.kind: unknown kind 'llamacp'; did you mean 'llamacpp'?"],
    ),
    (
        "workload_kind_unknown",
        BASE.replace("kind: throughput", "kind: bench"),
        [
            "9:11: workloads.sweep.kind: unknown kind 'bench'; allowed values: throughput, scenarios, spec_acceptance, sessions"
        ],
    ),
    (
        "workload_without_kind",
        HEAD + "workloads:\n  sweep:\n    pp: [1]\n",
        [
            "9:5: workloads.sweep: missing 'kind'; add 'kind:' with one of throughput, scenarios, spec_acceptance, sessions"
        ],
    ),
    (
        "engine_null",
        "version: 1\nname: t\nengines:\n  llama:\n" + WORK,
        [
            "4:9: engines.llama: expected a mapping with 'kind: ...' (one of vllm, sglang, llamacpp, command, "
            "external), got null"
        ],
    ),
    (
        "missing_name",
        BASE.replace("name: t\n", ""),
        ["1:1: the spec: missing required key 'name' (a string); add 'name: ...'"],
    ),
    (
        "missing_base_url",
        "version: 1\nname: t\nengines:\n  ext:\n    kind: external\n" + WORK,
        ["5:5: engines.ext: missing required key 'base_url' (a string); add 'base_url: ...'"],
    ),
    (
        "matrix_rule_key_typo",
        BASE + "matrix:\n  include:\n    - {engine: llama, workloads: sweep}\n",
        ["12:23: unknown key 'workloads' in matrix.include[0]; did you mean 'workload'?"],
    ),
    (
        "two_problems_sorted",
        BASE.replace("    model:", "    modle:") + "samplng: {}\n",
        [
            "6:5: unknown key 'modle' in engines.llama; did you mean 'model'?",
            "10:1: unknown key 'samplng' in the spec; did you mean 'sampling'?",
        ],
    ),
    # ---------------------------------------------------------------- types, ranges, literals
    (
        "string_for_int",
        BASE + '    repetitions: "3"\n',
        [
            "10:18: workloads.sweep.repetitions: expected an integer, got a string ('3'); write it without quotes"
        ],
    ),
    (
        "bool_for_int",
        BASE + "    repetitions: true\n",
        ["10:18: workloads.sweep.repetitions: expected an integer, got a boolean (true)"],
    ),
    (
        "int_for_list",
        BASE + "    pp: 512\n",
        ["10:9: workloads.sweep.pp: expected a list of integers, got an integer (512); write [512]"],
    ),
    (
        "int_for_string",
        HEAD + "    env: {A: 1}\n" + WORK,
        ['7:14: engines.llama.env.A: expected a string, got an integer (1); quote it ("1")'],
    ),
    (
        "string_for_number",
        BASE + "sampling:\n  temperature: hot\n",
        ["11:16: sampling.temperature: expected a number, got a string ('hot')"],
    ),
    (
        "list_for_mapping",
        "version: 1\nname: t\nengines: []\n" + WORK,
        [
            "3:10: engines: expected a mapping, got a list; e.g. 'engines: {llama: {kind: llamacpp, model: ...}}' "
            "(a name, then the engine)"
        ],
    ),
    (
        "args_list",
        HEAD + "    args: [--ctx-size, 4096]\n" + WORK,
        [
            "7:11: engines.llama.args: expected a mapping, got a list; e.g. 'args: {ctx-size: 4096, jinja: true}' "
            "(flag names without '--', then values)"
        ],
    ),
    (
        "variant_args_string",
        HEAD + "    variants:\n      warm: {args: --enable-prefix-caching}\n" + WORK,
        [
            "8:20: engines.llama.variants.warm.args: expected a mapping, got a string ('--enable-prefix-caching'); "
            "e.g. 'args: {ctx-size: 4096, jinja: true}' (flag names without '--', then values)"
        ],
    ),
    (
        "negative_depth",
        BASE + "    depths: [0, -1]\n",
        [
            "10:17: workloads.sweep.depths[1]: must be >= 0, got -1 (a depth is a token count of context already in "
            "the prompt (0 = none))"
        ],
    ),
    (
        "concurrency_zero",
        BASE + "    concurrency: [0]\n",
        [
            "10:19: workloads.sweep.concurrency[0]: must be >= 1, got 0 (concurrency is the number of requests in "
            "flight (1 = one at a time))"
        ],
    ),
    (
        "port_out_of_range",
        HEAD + "    port: 70000\n" + WORK,
        ["7:11: engines.llama.port: must be <= 65535, got 70000 (a TCP port is 1..65535)"],
    ),
    (
        "startup_timeout_zero",
        HEAD + "    startup_timeout: 0\n" + WORK,
        [
            "7:22: engines.llama.startup_timeout: must be > 0, got 0 (seconds an engine may take to become ready)"
        ],
    ),
    ("alpha_above_one", BASE + "grading:\n  alpha: 1.5\n", ["11:10: grading.alpha: must be <= 1, got 1.5"]),
    (
        "judge_key_instead_of_its_name",
        BASE
        + "grading:\n  judge:\n    base_url: http://127.0.0.1:9/v1\n    model: j\n    api_key_env: sk-abc-1\n",
        [
            "14:18: grading.judge.api_key_env: give the NAME of the environment variable that holds the key "
            "(e.g. JUDGE_API_KEY), never the key itself"
        ],
    ),
    (
        "judge_url_not_http",
        BASE + "grading:\n  judge: {base_url: 127.0.0.1:9, model: j}\n",
        [
            "11:21: grading.judge.base_url: '127.0.0.1:9' is not an http(s) URL; e.g. "
            "'http://127.0.0.1:8000/v1' (any OpenAI-compatible endpoint)"
        ],
    ),
    (
        "judge_without_model",
        BASE + "grading:\n  judge: {base_url: 'http://h:1'}\n",
        ["11:10: grading.judge: missing required key 'model' (a string); add 'model: ...'"],
    ),
    (
        "cache_literal_typo",
        BASE + "    cache: colt\n",
        [
            "10:12: workloads.sweep.cache: 'colt' is not allowed; did you mean 'cold'? allowed values: 'cold', 'warm'"
        ],
    ),
    (
        "content_literal_typo",
        HEAD + "workloads:\n  acc:\n    kind: spec_acceptance\n    content: [code, jsn]\n",
        [
            "10:21: workloads.acc.content[1]: 'jsn' is not allowed; did you mean 'json'? allowed values: 'code', "
            "'json', 'prose'"
        ],
    ),
    (
        "version_2",
        BASE.replace("version: 1", "version: 2"),
        ["1:10: version: 2 is not allowed; allowed values: 1"],
    ),
    # ---------------------------------------------------------------- YAML itself
    (
        "duplicate_key",
        HEAD + "    model: other\n" + WORK,
        ["7:5: duplicate key 'model' in engines.llama; first defined at line 6: keep one of them"],
    ),
    (
        "tab_indent",
        HEAD + "\tport: 1\n" + WORK,
        [
            "7:1: invalid YAML: found character '\\t' that cannot start any token; indent with spaces, not tabs"
        ],
    ),
    (
        "unclosed_quote",
        BASE + '    description: "unclosed\n',
        ["10:18: invalid YAML: a quoted string starting here is not closed; add the closing quote"],
    ),
    (
        "two_documents",
        BASE + "---\nversion: 1\n",
        [
            "10:1: invalid YAML: more than one YAML document ('---'); a spec is one document; remove the '---' line "
            "and what follows it, or put each spec in its own file"
        ],
    ),
    (
        "bad_indentation",
        BASE + "   pp: [1]\n",
        [
            "10:4: invalid YAML: expected <block end>, but found '<block mapping start>'; check the indentation of "
            "this line against the lines above"
        ],
    ),
    (
        "unquoted_colon",
        HEAD + "    description: a: b\n" + WORK,
        [
            "7:19: invalid YAML: mapping values are not allowed here; a value containing ': ' needs quotes, or a key "
            "is indented wrongly"
        ],
    ),
    (
        "undefined_alias",
        BASE + "    pp: *x\n",
        ["10:9: invalid YAML: found undefined alias 'x'; define the &anchor before using *alias"],
    ),
    (
        "non_scalar_key",
        BASE + "? [a]\n: 1\n",
        ["10:3: spec: a key must be a plain scalar, not a mapping or list; write `name: value`"],
    ),
    (
        "control_character",
        HEAD.replace("name: t", "name: a\x00b") + WORK,
        ["2:8: invalid YAML: control character U+0000 is not allowed; remove it (is this a text file?)"],
    ),
    (
        "unknown_tag_on_value",
        HEAD.replace("name: t", "name: !env NAME") + WORK,
        [
            "2:7: invalid YAML value: could not determine a constructor for the tag '!env'; a spec uses plain YAML: "
            "remove the '!' tag (or quote the text if the '!' is meant)"
        ],
    ),
    (
        "unknown_tag_on_key",
        BASE + "!x report: {}\n",
        [
            "10:1: invalid YAML key: could not determine a constructor for the tag '!x'; a spec uses plain YAML: "
            "remove the '!' tag (or quote the text if the '!' is meant)"
        ],
    ),
    (
        "empty_file",
        "",
        [
            "1:1: a spec is a mapping (version, name, engines, workloads, ...), got nothing (the file is empty or "
            "only comments)"
        ],
    ),
    (
        "only_comments",
        "# a spec\n# to be written\n",
        [
            "1:1: a spec is a mapping (version, name, engines, workloads, ...), got nothing (the file is empty or "
            "only comments)"
        ],
    ),
    (
        "list_root",
        "- version: 1\n- name: t\n",
        ["1:1: a spec is a mapping (version, name, engines, workloads, ...), got a list"],
    ),
    (
        "scalar_root",
        "hello\n",
        ["1:1: a spec is a mapping (version, name, engines, workloads, ...), got a string ('hello')"],
    ),
    # ---------------------------------------------------------------- ${VAR} interpolation
    (
        "bad_variable_name",
        BASE.replace("m.gguf", "${1BAD}"),
        ["6:12: engines.llama.model: bad variable reference '${1BAD}'; use ${NAME} or ${NAME:-default}"],
    ),
    (
        "unclosed_variable",
        BASE.replace("m.gguf", "models/${MODEL"),
        [
            "6:19: engines.llama.model: unclosed '${': a variable reference is ${NAME} or ${NAME:-default}; add the "
            "'}' (or write '$$' for a literal '$')"
        ],
    ),
    (
        "unset_variable",
        BASE.replace("m.gguf", "models/${BT_TEST_UNSET}.gguf"),
        [
            "6:19: engines.llama.model: environment variable BT_TEST_UNSET is not set; set it or write "
            "${BT_TEST_UNSET:-default}"
        ],
    ),
    (
        "unset_variable_quoted",
        BASE.replace("m.gguf", '"a ${BT_TEST_UNSET}"'),
        [
            "6:15: engines.llama.model: environment variable BT_TEST_UNSET is not set; set it or write "
            "${BT_TEST_UNSET:-default}"
        ],
    ),
    # ---------------------------------------------------------------- matrix
    (
        "matrix_unknown_engine",
        BASE + "matrix:\n  engines: [lama]\n",
        [
            "11:13: matrix.engines[0]: unknown engine or variant 'lama' (write 'engine' or 'engine.variant'); did you "
            "mean 'llama'?"
        ],
    ),
    (
        "matrix_unknown_variant",
        BASE + "matrix:\n  engines: [llama, llama.fast]\n",
        [
            "11:20: matrix.engines[1]: unknown engine or variant 'llama.fast' (write 'engine' or 'engine.variant'); "
            "did you mean 'llama.default'?"
        ],
    ),
    (
        "matrix_unknown_workload",
        BASE + "matrix:\n  workloads: [swep]\n",
        ["11:15: matrix.workloads[0]: unknown workload 'swep'; did you mean 'sweep'?"],
    ),
    (
        "include_unknown_workload",
        BASE + "matrix:\n  include:\n    - {engine: llama, workload: acept}\n",
        ["12:33: matrix.include[0].workload: unknown workload 'acept'; workloads: sweep"],
    ),
    (
        "include_unknown_variant",
        BASE + "matrix:\n  include:\n    - {engine: llama, variant: mtp3}\n",
        ["12:32: matrix.include[0].variant: engine 'llama' has no variant 'mtp3'; its variants: default"],
    ),
    (
        "include_dotted_unknown_variant",
        BASE + "matrix:\n  include:\n    - {engine: llama.mtp3, workload: sweep}\n",
        ["12:16: matrix.include[0].engine: engine 'llama' has no variant 'mtp3'; its variants: default"],
    ),
    (
        "exclude_unknown_engine",
        BASE + "matrix:\n  exclude:\n    - engine: vlm\n",
        ["12:15: matrix.exclude[0].engine: unknown engine 'vlm' in matrix.exclude; engines: llama"],
    ),
    (
        "exclude_variant_of_no_engine",
        BASE + "matrix:\n  exclude:\n    - variant: mtp3\n",
        ["12:16: matrix.exclude[0].variant: no engine has a variant 'mtp3'; variants: default"],
    ),
    (
        "empty_rule",
        BASE + "matrix:\n  include:\n    - {}\n",
        ["12:7: matrix.include[0]: an empty rule; give at least one of engine, variant, workload"],
    ),
    (
        "matrix_selects_nothing",
        BASE + "matrix:\n  exclude:\n    - workload: sweep\n",
        [
            "11:3: matrix: selects no engine variant x workload cell; check matrix.engines, matrix.workloads and "
            "matrix.exclude"
        ],
    ),
    (
        "no_engines",
        "version: 1\nname: t\nengines: {}\n" + WORK,
        ["3:10: engines: at least one engine is needed; e.g. 'llama: {kind: llamacpp, model: ...}'"],
    ),
    # ---------------------------------------------------------------- report and grading
    (
        "baseline_unknown",
        BASE + "report:\n  baseline: llama.fast\n",
        [
            "11:13: report.baseline: unknown engine variant 'llama.fast' (write 'engine.variant'); did you mean "
            "'llama.default'?"
        ],
    ),
    (
        "override_unknown_scenario",
        BASE + PACK_WL + "grading:\n  overrides:\n    - {scenario: TC-010, verdict: pass, reason: r}\n",
        [
            "15:18: grading.overrides[0].scenario: no scenario 'TC-010' in the packs this spec runs; did you mean "
            "'TC-01'?"
        ],
    ),
    (
        "override_unknown_scenario_no_close_match",
        BASE + PACK_WL + "grading:\n  overrides:\n    - {scenario: weather, verdict: pass, reason: r}\n",
        [
            "15:18: grading.overrides[0].scenario: no scenario 'weather' in the packs this spec runs; scenario ids: "
            "TC-01, TC-02, TC-03, TC-04, TC-05, TC-06"
        ],
    ),
    (
        "override_scope_unknown_engine",
        BASE
        + PACK_WL
        + "grading:\n  overrides:\n    - {scenario: TC-01, verdict: pass, reason: r, engine: vlm}\n",
        ["15:59: grading.overrides[0].engine: unknown engine 'vlm' in an override's scope; engines: llama"],
    ),
    (
        "override_without_scenarios_workload",
        BASE + "grading:\n  overrides:\n    - {scenario: TC-01, verdict: pass, reason: r}\n",
        [
            "12:18: grading.overrides[0].scenario: override for 'TC-01' but no workload of kind 'scenarios' runs a "
            "pack; add one or remove the override"
        ],
    ),
    (
        "override_verdict_typo",
        BASE + PACK_WL + "grading:\n  overrides:\n    - {scenario: TC-01, verdict: passed, reason: r}\n",
        [
            "15:34: grading.overrides[0].verdict: 'passed' is not allowed; did you mean 'pass'? allowed values: "
            "'fail', 'partial', 'pass'"
        ],
    ),
    (
        "override_missing_reason",
        BASE + PACK_WL + "grading:\n  overrides:\n    - {scenario: TC-01, verdict: pass}\n",
        ["15:7: grading.overrides[0]: missing required key 'reason' (a string); add 'reason: ...'"],
    ),
    (
        "scenario_subset_typo",
        BASE + PACK_WL + "    subset: shrt\n",
        ["13:13: workloads.tools.subset: pack 'mini' has no subset 'shrt'; did you mean 'short'?"],
    ),
    (
        "scenario_id_typo",
        BASE + PACK_WL + "    scenarios: [TC-01, TC-1]\n",
        ["13:24: workloads.tools.scenarios[1]: pack 'mini' has no scenario 'TC-1'; did you mean 'TC-01'?"],
    ),
    (
        "pack_file_missing",
        BASE + "  tools:\n    kind: scenarios\n    pack: nope.yaml\n",
        [
            "12:11: workloads.tools.pack: cannot load pack 'nope.yaml': {dir}/nope.yaml: pack 'nope.yaml' not found"
        ],
    ),
    # ---------------------------------------------------------------- names and engine semantics
    (
        "engine_name_slash",
        BASE.replace("  llama:", "  a/b:"),
        [f"4:3: engines: name 'a/b' may not contain '/' {NAME_HINT}"],
    ),
    (
        "engine_name_dot",
        BASE.replace("  llama:", "  a.b:"),
        [f"4:3: engines: name 'a.b' may not contain '.' {NAME_HINT}"],
    ),
    (
        "workload_name_slash",
        BASE.replace("  sweep:", "  sw/eep:"),
        [f"8:3: workloads: name 'sw/eep' may not contain '/' {NAME_HINT}"],
    ),
    (
        "variant_name_dot",
        HEAD + "    variants:\n      v.1: {}\n" + WORK,
        [
            "8:7: engines.llama.variants: name 'v.1' may not contain '/', '.' or spaces; use letters, digits, '-' "
            "or '_'"
        ],
    ),
    (
        "external_base_url_not_http",
        "version: 1\nname: t\nengines:\n  ext:\n    kind: external\n    base_url: 127.0.0.1:8000\n" + WORK,
        ["6:15: engines.ext.base_url: '127.0.0.1:8000' is not an http(s) URL; e.g. 'http://127.0.0.1:8000'"],
    ),
    (
        "empty_command",
        "version: 1\nname: t\nengines:\n  c:\n    kind: command\n    command: []\n" + WORK,
        ["6:14: engines.c.command: empty; give the argv, e.g. ['my-server', '{model}', '--port', '{port}']"],
    ),
    (
        "missing_chat_template",
        HEAD + "    chat_template: missing.jinja\n" + WORK,
        [
            "7:20: engines.llama.chat_template: file not found: {dir}/missing.jinja (a relative path is relative to "
            "the spec's folder {dir})"
        ],
    ),
    (
        "missing_variant_chat_template",
        HEAD + "    variants:\n      tpl:\n        chat_template: t/x.jinja\n" + WORK,
        [
            "9:24: engines.llama.variants.tpl.chat_template: file not found: {dir}/t/x.jinja (a relative path is "
            "relative to the spec's folder {dir})"
        ],
    ),
    (
        "load_bad_ray_address",
        BASE + "load:\n  backend: ray\n  ray_address: 'head:10001'\n",
        [
            "12:16: load.ray_address: 'head:10001' is not a Ray address; write 'local' (a private Ray instance for "
            "this run), 'auto' (the cluster this machine joined with 'ray start') or 'ray://HOST:PORT' (Ray Client, "
            "port 10001 by default)"
        ],
    ),
    (
        "load_backend_typo",
        BASE + "load:\n  backend: rey\n",
        [
            "11:12: load.backend: 'rey' is not allowed; did you mean 'ray'? allowed values: 'local', 'processes', 'ray'"
        ],
    ),
    (
        "load_workers_zero",
        BASE + "load:\n  backend: processes\n  workers: 0\n",
        ["12:12: load.workers: must be >= 1, got 0"],
    ),
    (
        "load_local_workers",
        BASE + "load:\n  workers: 4\n",
        [
            "11:12: load.workers: the local backend is one process, got 4; use 'backend: processes' (this machine) "
            "or 'backend: ray' for more workers"
        ],
    ),
    (
        "load_address_without_ray",
        BASE + "load:\n  backend: processes\n  workers: 2\n  ray_address: auto\n",
        [
            "13:16: load.ray_address: only used with 'backend: ray' (backend is 'processes'); remove it or set "
            "backend: ray"
        ],
    ),
]


def _spec_dir(tmp_path: Path) -> Path:
    d = tmp_path / "specs"
    d.mkdir()
    shutil.copy(MINI_PACK, d / "pack.yaml")
    return d


def test_enough_golden_cases() -> None:
    assert len(CASES) >= 30
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_golden_error(tmp_path: Path, text: str, expected: list[str]) -> None:
    d = _spec_dir(tmp_path)
    path = d / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path, env={})
    want = [f"{path}:" + e.replace("{dir}", str(d.resolve())) for e in expected]
    assert info.value.problems == want
    assert str(info.value) == "\n".join(want)


def test_base_spec_is_valid(tmp_path: Path) -> None:
    """The cases above fail because of their one change, not because the base is broken."""
    d = _spec_dir(tmp_path)
    for text in (BASE, BASE + PACK_WL):
        path = d / "ok.yaml"
        path.write_text(text, encoding="utf-8")
        loaded = load_spec(path, env={})
        assert list(loaded.spec.engines) == ["llama"]


# --------------------------------------------------------------------------------------------- files


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(BASE.encode() + "    description: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(SpecError) as info:
        load_spec(path, env={})
    assert info.value.problems == [f"{path}:10:21: not UTF-8 text (byte 0xe9); save the file as UTF-8"]


def test_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path, env={})
    assert info.value.problems == [
        f"{tmp_path}:1:1: is a directory, not a spec file; give the path of a .yaml file"
    ]


def test_file_not_found(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecError) as info:
        load_spec(path, env={})
    assert info.value.problems == [f"{path}:1:1: spec file not found (looked for {path.resolve()})"]


def test_relative_path_keeps_the_name_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.yaml").write_text(BASE.replace("    model:", "    modle:"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as info:
        load_spec("s.yaml", env={})
    assert info.value.problems == ["s.yaml:6:5: unknown key 'modle' in engines.llama; did you mean 'model'?"]

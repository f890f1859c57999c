"""`bench-tui validate | plan | schema` through click's CliRunner, and once as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli import main
from bench_tui.runner.orchestration.planner import estimate_requests, plan_points
from bench_tui.spec.jsonschema import REGENERATE, render_schema
from bench_tui.spec.loader import load_spec

SECRET = "bt-commands-secret-91b2"

GOOD = """\
version: 1
name: cmd-test
engines:
  llama:
    kind: external
    base_url: http://127.0.0.1:1
    api_key: ${BT_CMD_TOKEN:-bt-commands-secret-91b2}
    variants:
      a: {}
      b: {}
  ext:
    kind: external
    base_url: http://127.0.0.1:2
workloads:
  sweep: {kind: throughput, pp: [64, 128], tg: [8], concurrency: [1, 2], repetitions: 3}
  acc: {kind: spec_acceptance, content: [code, json, prose], runs: 2}
matrix:
  exclude:
    - {engine: ext, workload: acc}
"""
# cells: llama.a x {sweep, acc}, llama.b x {sweep, acc}, ext.default x {sweep} = 5
# sweep points: 2 pp x 2 concurrency = 4, requests 3 x (1 + 1 + 2 + 2) = 18 per cell
# acc points: 3 contents, requests 3 x 2 = 6 per cell
CELLS = 5
POINTS = 3 * 4 + 2 * 3
REQUESTS = 3 * 18 + 2 * 6

BAD = GOOD.replace("    base_url: http://127.0.0.1:2\n", "    base_url: http://127.0.0.1:2\n    modle: x\n")


@pytest.fixture()
def good(tmp_path: Path) -> Path:
    p = tmp_path / "good.yaml"
    p.write_text(GOOD, encoding="utf-8")
    return p


@pytest.fixture()
def bad(tmp_path: Path) -> Path:
    p = tmp_path / "bad.yaml"
    p.write_text(BAD, encoding="utf-8")
    return p


def invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exc_info
    return res.exit_code, res.stdout, res.stderr


# --------------------------------------------------------------------------------------------- validate


def test_validate_ok_prints_a_summary(good: Path) -> None:
    code, out, err = invoke("validate", str(good))
    assert code == 0, err
    assert out == (
        f"ok: {good}: 'cmd-test': 2 engines, 3 variants, 2 workloads; {CELLS} cells, {POINTS} points, "
        f"~{REQUESTS} requests\n"
    )
    assert err == ""
    ld = load_spec(good)
    assert len(plan_points(ld)) == POINTS and estimate_requests(plan_points(ld)) == REQUESTS


def test_validate_error_is_file_line_col_with_hint_on_stderr(bad: Path) -> None:
    code, out, err = invoke("validate", str(bad))
    assert code == 2
    assert out == ""
    assert err == f"{bad}:14:5: unknown key 'modle' in engines.ext; did you mean 'model'?\n"
    assert "Traceback" not in err


def test_validate_reports_every_problem(tmp_path: Path) -> None:
    p = tmp_path / "two.yaml"
    p.write_text(BAD.replace("concurrency: [1, 2]", "concurrency: [0, 2]"), encoding="utf-8")
    code, _, err = invoke("validate", str(p))
    assert code == 2
    lines = err.splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"{p}:14:5", f"{p}:16:67"]
    assert "must be >= 1, got 0" in lines[1]


def test_validate_several_files(good: Path, bad: Path) -> None:
    code, out, err = invoke("validate", str(good), str(bad))
    assert code == 2
    assert out.startswith(f"ok: {good}:") and str(bad) not in out
    assert err.startswith(f"{bad}:14:5:")


def test_validate_quiet(good: Path, bad: Path) -> None:
    assert invoke("validate", "-q", str(good)) == (0, "", "")
    code, out, err = invoke("validate", "--quiet", str(bad))
    assert (code, out) == (2, "") and "modle" in err


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_validate_bad_paths(tmp_path: Path, what: str) -> None:
    target = tmp_path / "nope.yaml" if what == "missing" else tmp_path
    code, out, err = invoke("validate", str(target))
    assert code == 2 and out == ""
    assert err.startswith(f"{target}:1:1: ")
    assert ("not found" in err) if what == "missing" else ("is a directory" in err)


def test_validate_needs_a_spec() -> None:
    code, _, err = invoke("validate")
    assert code == 2 and "Missing argument" in err


def test_an_internal_error_is_one_line_not_a_traceback(good: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bench_tui.spec.loader as loader

    def broken(path: object, **kw: object) -> object:
        raise KeyError("boom")

    monkeypatch.setattr(loader, "load_spec", broken)
    for cmd in ("validate", "plan"):
        code, out, err = invoke(cmd, str(good))
        assert code == 1, (cmd, err)
        assert err == (
            f"{good}:1:1: internal error while reading the spec: KeyError: 'boom' "
            "(this is a bench-tui bug; please report it with the spec)\n"
        )
        assert "Traceback" not in out + err


# --------------------------------------------------------------------------------------------- plan


def test_plan_table(good: Path) -> None:
    code, out, err = invoke("plan", str(good))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"plan: {good} ('cmd-test')"
    assert lines[2].split() == ["engine.variant", "workload", "kind", "points", "requests"]
    rows = [line.split() for line in lines[4 : 4 + CELLS]]
    assert rows == [
        ["llama.a", "sweep", "throughput", "4", "18"],
        ["acc", "spec_acceptance", "3", "6"],  # same engine.variant as the row above: left blank
        ["llama.b", "sweep", "throughput", "4", "18"],
        ["acc", "spec_acceptance", "3", "6"],
        ["ext.default", "sweep", "throughput", "4", "18"],
    ]
    assert (
        lines[-2]
        == f"total: {CELLS} cells, {POINTS} points, ~{REQUESTS} requests (estimate; warm-up requests excluded)"
    )
    assert (
        lines[-1].startswith("time: ~") and "0 engine start(s)" in lines[-1]
    )  # external engines never start
    # the numbers in the columns line up under their headers
    assert lines[4].index("4") + 1 == lines[2].index("points") + len("points")


def test_plan_points_tree(good: Path) -> None:
    code, out, _ = invoke("plan", "--points", str(good))
    assert code == 0
    lines = out.splitlines()
    start = lines.index("llama.a")
    assert lines[start + 1] == "  sweep (throughput): 4 points, 18 requests"
    assert lines[start + 2].split() == ["pp64-tg8-d0-c1", "3", "requests"]
    assert lines[start + 5].split() == ["pp128-tg8-d0-c2", "6", "requests"]
    assert lines[start + 6] == "  acc (spec_acceptance): 3 points, 6 requests"
    assert "ext.default" in lines and "llama.b" in lines
    point_lines = [line for line in lines if line.startswith("    ")]
    assert len(point_lines) == POINTS


def test_plan_json(good: Path) -> None:
    code, out, err = invoke("plan", "--json", str(good))
    assert code == 0, err
    data = json.loads(out)
    ld = load_spec(good)
    points = plan_points(ld)
    assert data["name"] == "cmd-test"
    assert data["total_cells"] == CELLS
    assert data["total_points"] == len(points) == POINTS
    assert data["estimated_requests"] == estimate_requests(points) == REQUESTS
    assert [(c["engine"], c["variant"], c["workload"]) for c in data["cells"]] == [
        ("llama", "a", "sweep"),
        ("llama", "a", "acc"),
        ("llama", "b", "sweep"),
        ("llama", "b", "acc"),
        ("ext", "default", "sweep"),
    ]
    assert [pid for c in data["cells"] for pid in c["point_ids"]] == [p.point_id for p in points]
    assert sum(c["points"] for c in data["cells"]) == POINTS
    assert sum(c["requests"] for c in data["cells"]) == REQUESTS
    assert "point_details" not in data["cells"][0]
    assert SECRET not in out
    detailed = json.loads(invoke("plan", "--json", "--points", str(good))[1])
    assert detailed["cells"][0]["point_details"][0]["params"]["pp"] == 64


def test_plan_bad_spec(bad: Path) -> None:
    code, out, err = invoke("plan", "--json", str(bad))
    assert (code, out) == (2, "")
    assert err.startswith(f"{bad}:14:5: unknown key 'modle'")


# --------------------------------------------------------------------------------------------- schema


def test_schema_prints_the_generated_schema() -> None:
    code, out, _ = invoke("schema")
    assert code == 0
    assert out == render_schema()
    assert json.loads(out)["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_schema_write_and_check(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "s.json"
    code, out, _ = invoke("schema", "--write", str(target))
    assert (code, out) == (0, f"wrote {target}\n")
    assert target.read_text(encoding="utf-8") == render_schema()
    assert invoke("schema", "--check", str(target)) == (0, f"up to date: {target}\n", "")
    target.write_text(render_schema().replace("draft-07", "draft-06"), encoding="utf-8")
    code, out, err = invoke("schema", "--check", str(target))
    assert (code, out) == (1, "")
    assert err == f"{target}: out of date with the spec Structs; regenerate it: {REGENERATE}\n"


def test_schema_write_into_a_directory_is_an_error(tmp_path: Path) -> None:
    code, _, err = invoke("schema", "--write", str(tmp_path))
    assert code == 2 and "directory" in err.lower()


# --------------------------------------------------------------------------------------------- a real process


def test_as_a_process(good: Path, bad: Path) -> None:
    run = [sys.executable, "-m", "bench_tui.cli"]
    proc = subprocess.run([*run, "validate", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"{bad}:14:5: unknown key 'modle' in engines.ext; did you mean 'model'?\n"
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    proc = subprocess.run([*run, "plan", "--json", str(good)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total_points"] == POINTS


def test_plan_time_estimate_counts_requests_and_engine_starts(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text("""\
version: 1
name: t
engines:
  ext: {kind: external, base_url: "http://127.0.0.1:9"}
  llama: {kind: llamacpp, model: m.gguf, variants: {a: {}, b: {}}}
workloads:
  sweep: {kind: throughput, pp: [100], tg: [50], depths: [0], concurrency: [1], repetitions: 2, warmup: 0}
""")
    code, out, err = invoke("plan", "--json", "--prefill-tps", "100", "--decode-tps", "10", str(spec))
    assert code == 0, err
    est = json.loads(out)["estimate"]
    # per request 100/100 + 50/10 = 6 s, 2 repetitions, 3 engine variants; starts: 2 llamacpp (15 s), external none
    assert est["requests_s"] == pytest.approx(3 * 2 * 6.0)
    assert est["engine_starts"] == 2 and est["starts_s"] == pytest.approx(30.0)
    assert est["total_s"] == pytest.approx(66.0)
    code, out, _ = invoke("plan", "--start-s", "100", str(spec))
    assert code == 0 and "time: ~4m = requests ~14s + 2 engine start(s) ~3m" in out and "assumes" in out

"""An engine kind from an installed package: validated, in the JSON Schema, and run like a built-in kind.

The package is tests/plugins/bench_tui_scripted_plugin (kind ``scripted``: tests/scripted_server.py launched as
an engine, with its timing as typed options). It is installed for real, ``pip install --no-deps
--no-build-isolation -t DIR``, and only the child processes see it (``DIR`` on their ``PYTHONPATH``), so the
entry point is found the way a user's installed plugin is: through ``importlib.metadata``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_tui.events import EngineStarting, PointFinished, RunFinished, read_events
from cpu_engine import port_was_taken
from scripted_server import free_port

TESTS = Path(__file__).resolve().parents[1]
PLUGIN = TESTS / "plugins" / "bench_tui_scripted_plugin"
SERVER = TESTS / "scripted_server.py"

SPEC = """\
version: 1
name: plugin-kind
engines:
  s:
    kind: {kind}
    server: {server}
    port: {port}
    prefill_ms: {prefill_ms}
    itl_ms: 4
    startup_timeout: 60
workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [8]
    concurrency: [1]
    repetitions: 3
    warmup: 1
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["-t", str(site), str(PLUGIN)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert (site / "bench_tui_scripted_plugin").is_dir()
    return str(site)


def _cli(args: list[str], site: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    paths = [site] if site else []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*paths, *sys.path[1:]]))
    return subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


def _spec(tmp_path: Path, *, kind: str = "scripted", prefill_ms: object = 30, port: int = 8000) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(kind=kind, server=SERVER, port=port, prefill_ms=prefill_ms))
    return path


def test_the_plugin_kind_validates_with_its_typed_options(plugin_path: str, tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    ok = _cli(["validate", str(spec)], plugin_path, tmp_path)
    assert ok.returncode == 0, ok.stderr

    # without the package the kind is unknown, and the error says where kinds come from
    missing = _cli(["validate", str(spec)], None, tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[0] == (
        f"{spec}:5:11: engines.s.kind: unknown kind 'scripted'; allowed values: vllm, sglang, llamacpp, "
        "command, external (another kind comes from a package that declares it in the bench_tui.engines "
        "entry points)"
    )

    # the plugin's own options are checked like a built-in kind's: type, range, unknown keys
    typo = _cli(["validate", str(_spec(tmp_path, kind="scriptd"))], plugin_path, tmp_path)
    assert typo.returncode == 2
    assert typo.stderr.splitlines() == [
        f"{spec}:5:11: engines.s.kind: unknown kind 'scriptd'; did you mean 'scripted'?"
    ]
    neg = _cli(["validate", str(_spec(tmp_path, prefill_ms=-5))], plugin_path, tmp_path)
    assert neg.stderr.splitlines() == [f"{spec}:8:17: engines.s.prefill_ms: must be >= 0, got -5"]
    text = _spec(tmp_path).read_text().replace("itl_ms: 4", "itl_msec: 4")
    spec.write_text(text)
    unknown = _cli(["validate", str(spec)], plugin_path, tmp_path)
    assert unknown.stderr.splitlines() == [
        f"{spec}:9:5: unknown key 'itl_msec' in engines.s; did you mean 'itl_ms'?"
    ]


def test_the_plugin_kind_is_in_the_json_schema(plugin_path: str, tmp_path: Path) -> None:
    out = _cli(["schema"], plugin_path, tmp_path)
    assert out.returncode == 0, out.stderr
    schema = json.loads(out.stdout)
    kinds = schema["properties"]["engines"]["additionalProperties"]["properties"]["kind"]["enum"]
    assert kinds == ["vllm", "sglang", "llamacpp", "command", "external", "scripted"]
    d = schema["definitions"]["ScriptedEngine"]
    assert d["properties"]["kind"]["const"] == "scripted" and d["required"] == ["kind", "server"]
    assert d["properties"]["prefill_ms"] == {
        "default": 0.0,
        "description": "Silence before the first token, in ms.",
        "maximum": 60000,
        "minimum": 0,
        "type": "number",
    }
    assert d["properties"]["port"]["description"].startswith("TCP port")  # what every engine has, described
    assert d["properties"]["variants"]["propertyNames"] == {"pattern": "^[^./\\s]+$"}
    builtin = _cli(["schema", "--builtin"], plugin_path, tmp_path)
    assert "ScriptedEngine" not in json.loads(builtin.stdout)["definitions"]


def _run(plugin_path: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp_path.mkdir()
    spec = _spec(tmp_path, port=free_port())
    runs = tmp_path / "runs"
    return _cli(["run", str(spec), "--no-tui", "--runs-dir", str(runs)], plugin_path, tmp_path), runs


def test_a_sweep_runs_on_the_plugin_kind_end_to_end(plugin_path: str, tmp_path: Path) -> None:
    proc, runs = _run(plugin_path, tmp_path / "a")
    if proc.returncode != 0 and port_was_taken(proc.stdout + proc.stderr):
        proc, runs = _run(plugin_path, tmp_path / "b")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    events = list(read_events(run_dir / "events.jsonl"))

    # the adapter rendered the typed options into the engine's argv
    (started,) = [e for e in events if isinstance(e, EngineStarting)]
    argv = started.command
    assert argv[1] == str(SERVER) and argv[argv.index("--prefill-ms") + 1] == "30.0"
    assert argv[argv.index("--itl-ms") + 1] == "4.0"
    assert json.loads((run_dir / "env.json").read_text())["engines"]["s.default"]["kind"] == "scripted"

    # and the point was measured; the server stays silent for prefill_ms, so no TTFT can be shorter
    (point,) = [e for e in events if isinstance(e, PointFinished)]
    s = point.summary
    assert point.status in ("ok", "degraded") and s.ok == 3, (point.status, point.flags)
    assert s.output_tokens.median == 8
    assert s.ttft_ms.min is not None and s.ttft_ms.min >= 30.0
    # decode measured for each request (ITL gaps: at most 7 a request; tokens read together share one gap)
    assert s.decode_tps.n == 3 and 0 < s.itl_ms.n <= 3 * 7
    assert s.server.source.startswith("vllm")  # the plugin's dialect read the server's counters
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    assert "s.default" in (run_dir / "report.md").read_text()

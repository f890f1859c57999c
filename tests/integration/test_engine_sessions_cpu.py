"""Engine sessions on the real CPU engine (issue 19): each variant started once per session, interleaved.

One spec, two identical llama.cpp variants, ``matrix.sessions: 2``: the run starts the engine four times in
the order a, b, b, a (each a new process), every point of a session runs on its own engine, and compare
judges the cells with two sessions a side (``n = [2, 2]``, the between-session noise from the sessions).
``bench-tui calibrate --from`` stores the run's floors for this host, and a later compare of one session a
side names them. Assertions are about the plan, the processes and the verdicts' bookkeeping, not speed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.calibrate import calibrate
from bench_tui.events import EngineReady, EngineStarting, EngineStopped, PointFinished, read_events
from bench_tui.reports.compare import compare_runs
from bench_tui.reports.history import load_floors
from bench_tui.reports.model import load_run
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from cpu_engine import port_was_taken
from scripted_server import free_port

pytestmark = pytest.mark.engine

SPEC = """\
version: 1
name: cpu-sessions
engines:
  llama:
    kind: llamacpp
    launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: %(port)d
    startup_timeout: 180
    args: {ctx-size: 2048, parallel: 2, threads: 2, metrics: true}
    variants: {a: {}, b: {}}
workloads:
  sweep:
    kind: throughput
    pp: [32]
    tg: [8]
    concurrency: [1, 2]
    repetitions: 2
    warmup: 0
matrix: {sessions: 2}
"""


def _run(tmp: Path) -> tuple[Path, int, str]:
    tmp.mkdir(parents=True)
    spec = tmp / "spec.yaml"
    spec.write_text(SPEC % {"port": free_port()})
    handle = start_run(spec, runs_dir=tmp / "runs")
    out = io.StringIO()
    return Path(handle.run_dir), run_headless(handle, out=out), out.getvalue()


def test_sessions_interleave_on_the_real_engine(tmp_path: Path) -> None:
    run, rc, out = _run(tmp_path / "a")
    if rc != 0 and port_was_taken(out):
        run, rc, out = _run(tmp_path / "b")
    assert rc == 0, out[-3000:]
    events = read_events(run / "events.jsonl")
    assert [e.variant for e in events if isinstance(e, EngineStarting)] == ["a", "b", "b", "a"]
    pids = [e.pid for e in events if isinstance(e, EngineStarting)]
    assert len(set(pids)) == 4 and None not in pids  # four engine processes: four sessions
    assert (
        sum(isinstance(e, EngineReady) for e in events)
        == sum(isinstance(e, EngineStopped) for e in events)
        == 4
    )
    done = [e.point_id for e in events if isinstance(e, PointFinished)]
    assert done == [
        f"llama.{v}/sweep/pp32-tg8-d0-c{c}@s{s}"
        for v, s in (("a", 1), ("b", 1), ("b", 2), ("a", 2))
        for c in (1, 2)
    ]
    data = json.loads(compare_runs([run], "json", baseline="llama.a"))
    judged = [c for c in data["cells"] if c["verdict"] != "not claimed"]
    assert judged and all(c["n"] == [2, 2] for c in judged)
    assert all("2 vs 2 sessions" in c["text"] or "within noise" in c["text"] for c in judged)
    # the run's A/A sessions are this host's floors: calibrate stores them, compare then finds them
    r = CliRunner().invoke(calibrate, ["--from", str(run)])
    assert r.exit_code == 0, r.output
    assert "floor(s)" in r.output and "two single sessions differ by up to" in r.output
    floors = load_floors([load_run(run)])
    assert floors and ("llamacpp", "pp32 tg8 d0 c1", "decode_tps") in floors

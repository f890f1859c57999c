"""The processes load backend through a real run: workers started once, every point measured by them.

One headless run of three throughput points against the scripted server with ``load: {backend: processes,
workers: 2}``: the run completes, every record names ``proc-0`` or ``proc-1``, env.json lists the two worker
processes (their own pids), the same two processes serve every point (their pids seen alive at each point's
start), and none is left once the run is over.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted_engine import factory, loaded_from_text, plan  # noqa: E402

from bench_tui.events import PointFinished, PointStarted, RunFinished  # noqa: E402
from bench_tui.runner.orchestration.headless import run_headless  # noqa: E402
from bench_tui.runner.orchestration.session import new_run  # noqa: E402
from bench_tui.runner.orchestration.store import load_events  # noqa: E402
from bench_tui.runner.view import RunView  # noqa: E402
from scripted_server import Schedule, ScriptedServerProcess  # noqa: E402

SPEC = """\
version: 1
name: processes-load
engines:
  s:
    kind: external
    base_url: http://127.0.0.1:{port}
workloads:
  sweep:
    kind: throughput
    pp: [24]
    tg: [4]
    depths: [0, 10, 20]
    concurrency: [4]
    repetitions: 2
    warmup: 0
load:
  backend: processes
  workers: 2
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_processes_workers_serve_every_point_of_a_run(tmp_path: Path) -> None:
    seen: list[list[int]] = []
    box: dict[str, Path] = {}

    def on_event(ev: object) -> None:
        if isinstance(ev, PointStarted):
            env = json.loads((box["dir"] / "env.json").read_text())
            pids = [w["pid"] for w in env["load"]["workers"]]
            seen.append([p for p in pids if alive(p)])

    with ScriptedServerProcess(Schedule(prefill_s=0.05, itl_s=0.005), port=0) as srv:
        text = SPEC.format(port=srv.port)
        path = tmp_path / "spec.yaml"
        path.write_text(text)
        loaded = loaded_from_text(text, path)
        handle = new_run(
            loaded, plan(loaded), runs_dir=tmp_path / "runs", adapter_factory=factory, engine_warmup=False
        )
        box["dir"] = handle.run_dir
        handle.subscribe(on_event)
        out = io.StringIO()
        run_headless(handle, json_lines=False, out=out)
    events = load_events(handle.run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed", out.getvalue()
    env = json.loads((handle.run_dir / "env.json").read_text())
    workers = env["load"]["workers"]
    assert env["load"]["backend"] == "processes" and [w["name"] for w in workers] == ["proc-0", "proc-1"]
    pids = [w["pid"] for w in workers]
    assert len(set(pids)) == 2 and os.getpid() not in pids
    assert seen == [pids, pids, pids]  # the same two processes, alive at every point's start
    finished = [e for e in events if isinstance(e, PointFinished)]
    assert len(finished) == 3 and all(f.status == "ok" for f in finished)
    recs = RunView.from_events(events, keep_records=True).records()
    for f in finished:
        assert {r.worker for r in recs[f.point_id]} == {"proc-0", "proc-1"}
        assert all(r.ok for r in recs[f.point_id])
    assert not any(alive(p) for p in pids)  # stopped with the run

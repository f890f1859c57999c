"""compare names, and never claims, a cell whose two sides ran under materially different machine conditions.

Two real headless runs against the scripted server (B 2.5 times slower per token: its rate cells are claimed
when nothing else differs). Their recorded conditions are then set to known values in events.jsonl (this
shared machine's own load is not a known truth): the same quiet host on both sides, then a build taking half
the host's CPU while B ran. Only the second names the conditions in every cell and claims nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import compare
from bench_tui.events import Conditions, PointFinished, Reading, decode, encode
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from scripted_server import Schedule, ScriptedServerProcess

SPEC = """\
version: 1
name: conditions-ab
engines:
  s:
    kind: external
    base_url: {url}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [6]
    depths: [0]
    concurrency: [1, 2]
    repetitions: 4
report:
  noise_threshold_pct: 5
"""


def _run(tmp: Path, name: str, speed: float) -> Path:
    with ScriptedServerProcess(Schedule(prefill_s=0.05, itl_s=0.06, speed=speed), port=0) as srv:
        spec = tmp / f"{name}.yaml"
        spec.write_text(SPEC.format(url=srv.base_url))
        handle = start_run(spec, runs_dir=tmp / "runs", engine_warmup=False)
        assert run_headless(handle, out=io.StringIO()) == 0
    return Path(handle.run_dir)


def _set_conditions(run: Path, other: float, load1: float) -> None:
    """Every point's recorded conditions replaced by one host state (the rest of the log kept byte for byte)."""
    r = Reading(cpus=2, load1=load1, busy=min(1.0, 0.5 + other), own=0.5, other=other, steal=0.0)
    c = Conditions(before=r, after=r, during_min=r, during_median=r, during_max=r, samples=5, interval_s=1.0)
    path = run / "events.jsonl"
    out = []
    for line in path.read_bytes().splitlines():
        ev = decode(line) if line.startswith(b'{"type":"point_finished"') else None
        out.append(
            encode(msgspec.structs.replace(ev, conditions=c)) if isinstance(ev, PointFinished) else line
        )
    path.write_bytes(b"\n".join(out) + b"\n")


def _cells(a: Path, b: Path) -> list[dict]:
    r = CliRunner().invoke(compare, [str(a), str(b), "--json"])
    assert r.exit_code == 0, r.output
    return [
        c for c in json.loads(r.output)["cells"] if c["metric"] in ("eff_tg_tps", "decode_tps", "agg_tg_tps")
    ]


def test_a_side_that_ran_beside_a_build_is_named_and_not_claimed(tmp_path: Path) -> None:
    a, b = _run(tmp_path, "a", 1.0), _run(tmp_path, "b", 2.5)
    for run in (a, b):  # the executor recorded conditions on every point
        finished = [
            decode(x) for x in (run / "events.jsonl").read_bytes().splitlines() if b"point_finished" in x
        ]
        assert finished and all(isinstance(e, PointFinished) and e.conditions for e in finished)

    _set_conditions(a, other=0.02, load1=1.0)
    _set_conditions(b, other=0.02, load1=1.1)
    same = _cells(a, b)
    assert same and not any("conditions differ" in c["text"] for c in same)
    if not any(c["claim"] for c in same):
        pytest.skip("the loaded machine left no rate cell claimed even with equal conditions")

    _set_conditions(b, other=0.5, load1=3.0)  # a build took half the host while B ran
    loaded = _cells(a, b)
    assert len(loaded) == len(same)
    for c in loaded:
        assert not c["claim"], c["text"]
        assert "conditions differ: host load per CPU 0.50 vs 1.50" in c["text"], c["text"]
        assert "other processes used 2 % vs 50 % of the host's CPU" in c["text"], c["text"]

"""`bench-tui SPEC --no-tui` end to end against the real CPU engine (llama.cpp via xllamacpp).

The whole product path: spec loader -> plan -> engine adapter launch -> throughput sweep and a scenario
point over the streaming client -> events.jsonl -> reports. Assertions are about the pipeline and the
honesty of the records, never about speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_tui.events import PointFinished, RequestFinished, RunFinished, ScenarioGraded, read_events
from cpu_engine import port_was_taken
from scripted_server import free_port

pytestmark = pytest.mark.engine

SPEC = """\
# yaml-language-server: $schema=../schema/bench-tui.schema.json
version: 1
name: e2e-cli
engines:
  llama:
    kind: llamacpp
    launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: %(port)d
    startup_timeout: 120
    args: {ctx-size: 4096, parallel: 2, threads: 2, metrics: true, slots: true, jinja: true}
workloads:
  sweep:
    kind: throughput
    pp: [64]
    tg: [8]
    depths: [0, 128]
    concurrency: [1, 2]
    repetitions: 1
    warmup: 1
  tools:
    kind: scenarios
    pack: standard
    scenarios: [TC-35]
    max_tokens: 128
grading:
  overrides:
    - scenario: TC-35
      verdict: pass
      reason: "e2e: an override is applied and reported beside the raw verdict"
      author: ci
      date: "2026-12-02"
"""


def _run(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, str]:
    text = SPEC % {"port": free_port()}
    tmp_path.mkdir(parents=True)
    spec = tmp_path / "e2e.yaml"
    spec.write_text(text)
    runs = tmp_path / "runs"
    env = dict(os.environ, SECRET_E2E_TOKEN="sk-should-never-appear")
    proc = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", "run", str(spec), "--no-tui", "--runs-dir", str(runs)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    return proc, runs, text


def test_headless_run_writes_a_complete_run_dir(tmp_path: Path) -> None:
    proc, runs, text = _run(tmp_path / "a")
    if proc.returncode != 0 and port_was_taken(
        proc.stdout + proc.stderr
    ):  # the free port was taken meanwhile
        proc, runs, text = _run(tmp_path / "b")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dirs = [p for p in runs.iterdir() if p.is_dir()]
    assert len(run_dirs) == 1
    run_dir = run_dirs[0]
    for name in ("spec.yaml", "resolved.json", "events.jsonl", "env.json", "report.md"):
        assert (run_dir / name).is_file(), f"{name} missing in {sorted(p.name for p in run_dir.iterdir())}"
    assert (run_dir / "spec.yaml").read_text() == text

    events = list(read_events(run_dir / "events.jsonl"))
    finished = [e for e in events if isinstance(e, PointFinished)]
    ids = [e.point_id for e in finished]
    assert len(ids) == len(set(ids)) == 5, ids  # 2 depths x 2 concurrencies + 1 scenario point
    sweep = [e for e in finished if "/sweep/" in e.point_id]
    for pf in sweep:
        assert pf.status in ("ok", "degraded"), (pf.point_id, pf.flags)
        s = pf.summary
        assert s.ok >= 1 and s.output_tokens.median == 8, (pf.point_id, s.output_tokens)
        # TTFT is the first token, which comes after the role-only first SSE event
        assert s.ttft_ms.median is not None and s.ttfb_ms.median is not None
        assert s.ttft_ms.median >= s.ttfb_ms.median
    reqs = [e for e in events if isinstance(e, RequestFinished) and not e.warmup]
    assert all(r.record.token_source in ("usage", "timings") for r in reqs if r.record.ok)
    graded = [e for e in events if isinstance(e, ScenarioGraded)]
    assert [g.scenario_id for g in graded] == ["TC-35"]
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"

    report = (run_dir / "report.md").read_text()
    assert "TC-35" in report and "raw" in report.lower() and "adjusted" in report.lower()
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert "sk-should-never-appear" not in path.read_text(errors="replace"), path
    env_json = json.loads((run_dir / "env.json").read_text())
    assert "engines" in env_json

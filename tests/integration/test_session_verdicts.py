"""Verdicts across engine sessions (issue 19), read from ``compare --json`` on one real headless run.

The scripted server runs as a ``command`` engine, so each engine session is a new process with its own speed
exp(N(0, 2 %)), drawn from a seed and the session's number (reproducible) (the per-session noise a real engine shows) and per-request jitter N(1, 5 %). One spec holds
``a`` and ``a2`` (identical: an A/A) and ``b`` (30 % slower per token: an A/B), three engine sessions each,
interleaved A B B A, three repetitions per point, through the real loader, planner, executor and adapter.

- A/A: at most 5 % of the cells claimed;
- A/B: called worse (lower) in >= 90 % of the decode and generation-rate cells, c1 included;
- the cells keep ``metric``, ``claim``, ``delta_pct``, ``higher_is_better``, ``text``, and the summary lists
  no claim the multiple-comparison correction removed.

A run takes about a minute and a half; the bench script (bench/session_verdicts.py) repeats it with other
session counts and with a calibrated floor.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from bench_tui.events import EngineStarting, read_events
from bench_tui.reports.compare import compare_runs
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from scripted_server import free_port

pytestmark = pytest.mark.timing  # statistics on timings: never beside the engine tests (tests/conftest.py)

SERVER = Path(__file__).resolve().parents[1] / "scripted_server.py"
SCHEDULE = '{"prefill_s": 0.05, "prefill_per_token_s": 0.001, "itl_s": 0.05, "jitter": 0.05}'
SPEC = """\
version: 1
name: sessions-aa-ab
engines:
  s:
    kind: command
    command: ["{{python}}", "{server}", "--port", "{{port}}", "--schedule-json", '{schedule}',
              "--session-drift", "0.02", "--session-seed", "19", "--session-counter", "{counter}"]
    port: {port}
    startup_timeout: 30
    metrics_dialect: vllm
    variants:
      a: {{}}
      a2: {{}}
      b: {{args: {{speed: 1.3}}}}
workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [6]
    depths: [0, 32]
    concurrency: [1, 2]
    repetitions: 3
    warmup: 1
matrix: {{sessions: 3}}
report: {{noise_threshold_pct: 5}}
"""
RATE_METRICS = ("decode_tps", "eff_tg_tps", "agg_tg_tps")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sessions")
    spec = tmp / "spec.yaml"
    spec.write_text(SPEC.format(server=SERVER, schedule=SCHEDULE, port=free_port(), counter=tmp / "sessions"))
    os.environ.setdefault("BENCH_TUI_DATA_DIR", str(tmp / "data"))
    handle = start_run(spec, runs_dir=tmp / "runs", engine_warmup=False)
    assert run_headless(handle, out=io.StringIO()) == 0
    return Path(handle.run_dir)


def _cells(run: Path, candidate: str) -> tuple[list[dict], dict]:
    # the statistics under test, not the host: sessions that ran under different machine conditions (another
    # test worker's load) are never claimed by design (tests/integration/test_compare_conditions.py)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("bench_tui.reports.compare._conditions_note", lambda bps, cps: "")
        data = json.loads(compare_runs([run], "json", baseline="s.a"))
    return [c for c in data["cells"] if c["candidate"] == candidate], data


def test_sessions_are_interleaved_abba(run: Path) -> None:
    starts = [f"{e.variant}" for e in read_events(run / "events.jsonl") if isinstance(e, EngineStarting)]
    assert starts == ["a", "a2", "b", "b", "a2", "a", "a", "a2", "b"]


def test_aa_claims_at_most_five_percent(run: Path) -> None:
    cells, data = _cells(run, "s.a2")
    assert len(cells) >= 20
    for c in cells:
        assert {"metric", "claim", "delta_pct", "higher_is_better", "text", "verdict", "test"} <= set(c)
        assert c["n"] == [3, 3] or c["verdict"] in ("not claimed", "missing")
    claimed = [c for c in cells if c["claim"]]
    print(f"\nA/A over 3 sessions a side: claimed {len(claimed)}/{len(cells)}")
    assert len(claimed) <= 0.05 * len(cells), [(c["metric"], c["point"], c["text"]) for c in claimed]
    assert data["correction"]["method"] == "Benjamini-Hochberg"


def test_ab_slower_server_is_called_slower_c1_included(run: Path) -> None:
    cells, data = _cells(run, "s.b")
    rate = [c for c in cells if c["metric"] in RATE_METRICS]
    judged = [c for c in rate if c["verdict"] != "not claimed"]  # client-limited on a loaded machine
    assert len(judged) >= 0.75 * len(rate), [c["text"] for c in rate]
    worse = [c for c in judged if c["verdict"] == "worse" and c["delta_pct"] < 0 and "lower" in c["text"]]
    print(f"\nA/B: called worse in {len(worse)}/{len(judged)} decode and generation-rate cells")
    assert len(worse) >= 0.9 * len(judged), [(c["metric"], c["point"], c["text"]) for c in judged]
    assert any(c["point"].endswith("c1") for c in worse)
    claims = {c["text"] for c in data["cells"] if c["claim"]}
    removed = [c for c in data["cells"] if "Benjamini-Hochberg correction" in c["text"]]
    summary = " ".join(data["summary"])
    assert "worse: " in summary
    for c in removed:  # a claim the correction removed is never listed as a finding
        assert (
            c["text"] not in claims and f"[{c['table']} · {c['point']}]" not in summary.split("worse: ")[-1]
        )

"""Verdicts that hold on repeats (issue 16), read from ``compare --json``.

The statistics are judged on scripted runs whose truth is known and which no machine load can change: each
run directory is written from the scripted server's own timing model (``Schedule.timing_factor``: every
request's delays multiplied by a seeded per-request factor N(1, 5 %) and a per-run factor N(1, 2 %)), its
request records summarized by the runner's ``metrics.summarize``:

- A/A: the same spec run twice compares as "no claim" in >= 95 % of its cells;
- A/B: a server 30 % slower per token is called worse (lower) in >= 90 % of its decode and generation-rate
  cells.

Real headless runs against the scripted server (the loader, planner, executor and ``external`` adapter,
``start_run``) are compared too, for what does not depend on the machine: every cell is complete, and a point
the shared machine made client-limited is "not claimed" and says why. Their numbers are not judged: on a busy
2-core machine most of their cells can be client-limited, and a test that skipped then would hide its signal.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import compare
from bench_tui.events import (
    Chunk,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointStarted,
    RequestFinished,
    RequestRecord,
    RunFinished,
    RunStarted,
    ServerSide,
    ThroughputParams,
)
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from bench_tui.runner.workloads.metrics import summarize
from fixtures_runs import write_events
from scripted_server import Schedule, ScriptedServerProcess

SPEC = """\
version: 1
name: aa-ab
engines:
  s:
    kind: external
    base_url: {url}
    metrics_dialect: vllm
workloads:
  sweep:
    kind: throughput
    pp: [16]
    tg: [5]
    depths: {depths}
    concurrency: [1, 2]
    repetitions: {reps}
    warmup: 1
report:
  noise_threshold_pct: 5
"""

JITTER = 0.05
DRIFT = 0.02
RATE_METRICS = ("eff_tg_tps", "agg_tg_tps", "decode_tps", "srv_decode_tps")
PP, TG, DEPTHS, CONCURRENCY, REPS = 16, 5, (0, 32), (1, 2), 6


def scripted_run(root: Path, name: str, *, speed: float, seed: int) -> Path:
    """A run directory as a headless run of SPEC against ``Schedule(prefill_s=0.08, prefill_per_token_s=0.001,
    itl_s=0.1, speed, jitter, jitter_seed=seed)`` writes it, with the client measuring exactly what the
    server sent (the truth), in the runner's point order and request ids."""
    sched = Schedule(
        prefill_s=0.08, prefill_per_token_s=0.001, itl_s=0.1, speed=speed, jitter=JITTER, jitter_seed=seed
    )
    run = root / name
    run.mkdir(parents=True)
    (run / "spec.yaml").write_text(SPEC.format(url="http://127.0.0.1:9", depths=list(DEPTHS), reps=REPS))
    points = [
        PlanPoint(
            point_id=f"s.default/sweep/pp{PP}-tg{TG}-d{d}-c{c}",
            engine="s",
            variant="default",
            workload="sweep",
            kind="throughput",
            params=ThroughputParams(pp=PP, tg=TG, depth=d, concurrency=c, repetitions=REPS),
            requests=REPS * c,
        )
        for d in DEPTHS
        for c in CONCURRENCY
    ]
    events: list = [
        RunStarted(ts=0.0, run_id=name, spec_name="aa-ab", spec_path="spec.yaml", run_dir=str(run)),
        PlanReady(ts=0.0, points=points),
    ]
    served, t = 0, 1_000_000_000
    for i, pt in enumerate(points):
        depth, conc = pt.params.depth, pt.params.concurrency  # type: ignore[union-attr]
        events.append(PointStarted(ts=0.0, point_id=pt.point_id, index=i, total=len(points)))
        served += conc  # the warm-up requests: the server counts them, the point does not
        records, reps, t0 = [], [], t
        for rep in range(REPS):
            ends, start = [], t
            for slot in range(conc):
                served += 1
                f = sched.timing_factor(served)
                first = t + int((0.08 + 0.001 * (PP + depth)) * f * 1e9)
                times = [first + int(k * 0.1 * f * 1e9) for k in range(TG)]
                records.append(
                    RequestRecord(
                        request_id=f"{pt.point_id}@1:r{rep}.{slot}",
                        point_id=pt.point_id,
                        endpoint="completions",
                        ok=True,
                        t_send_ns=t,
                        t_first_byte_ns=t + 1_000_000,
                        t_first_token_ns=first,
                        t_last_token_ns=times[-1],
                        t_done_ns=times[-1] + 500_000,
                        chunks=[Chunk(x, 1, "text") for x in times],
                        prompt_tokens=PP + depth,
                        output_tokens=TG,
                        client_output_tokens=TG,
                        token_source="usage",
                        clock="kernel",
                    )
                )
                ends.append(times[-1] + 500_000)
            wall = (max(ends) - start) / 1e9
            reps.append({"rep": rep, "wall_s": wall, "ok": conc, "failed": 0, "agg_tg_tps": TG * conc / wall})
            t = max(ends) + 1_000_000
        summary = summarize(records, wall_s=(t - t0) / 1e9, cache="cold")
        summary.extra["reps"] = reps  # as the sweep records each repetition
        summary.server = ServerSide(source="vllm /metrics", generation_tokens=float(TG * len(records)))
        events += [RequestFinished(ts=0.0, record=r) for r in records]
        events.append(PointFinished(ts=0.0, point_id=pt.point_id, status="ok", summary=summary))
    events.append(RunFinished(ts=0.0, status="completed", points_done=len(points), points_total=len(points)))
    write_events(run / "events.jsonl", events)
    return run


def real_run(tmp_path: Path, name: str, *, seed: int) -> Path:
    sched = Schedule(prefill_s=0.08, prefill_per_token_s=0.001, itl_s=0.1, jitter=JITTER, jitter_seed=seed)
    with ScriptedServerProcess(sched, port=0) as srv:
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(SPEC.format(url=srv.base_url, depths=[0], reps=3))
        handle = start_run(spec, runs_dir=tmp_path / "runs", engine_warmup=False)
        rc = run_headless(handle, out=io.StringIO())
    assert rc == 0
    return Path(handle.run_dir)


def compare_json(*runs: Path) -> dict:
    r = CliRunner().invoke(compare, [*map(str, runs), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    limited = [c for c in data["cells"] if c["verdict"] == "not claimed"]
    assert all("client-limited" in c["text"] for c in limited)  # never claimed, and says why
    return data


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("aa_ab")
    drift = random.Random(16)  # run-to-run drift, seeded: the test is reproducible
    return {
        "a1": scripted_run(tmp, "a1", speed=drift.gauss(1.0, DRIFT), seed=1),
        "a2": scripted_run(tmp, "a2", speed=drift.gauss(1.0, DRIFT), seed=2),
        "b": scripted_run(tmp, "b", speed=1.3 * drift.gauss(1.0, DRIFT), seed=3),
    }


def test_real_runs_compare_and_never_claim_a_client_limited_cell(tmp_path: Path) -> None:
    data = compare_json(real_run(tmp_path, "a1", seed=1), real_run(tmp_path, "a2", seed=2))
    cells = data["cells"]
    assert len(cells) >= 10 and all(c["baseline"] == "A:s.default" for c in cells)
    for c in cells:
        if c["verdict"] == "not claimed":
            assert not c["claim"] and "client-limited" in c["text"]
    print(
        f"\nreal A/A: {sum(c['verdict'] == 'not claimed' for c in cells)}/{len(cells)} cells client-limited"
    )


def test_aa_same_spec_twice_is_within_noise(runs: dict[str, Path]) -> None:
    data = compare_json(runs["a1"], runs["a2"])
    assert data["baseline"]["pairing"].startswith("by engine.variant")
    cells = [
        c
        for c in data["cells"]
        if c["table"] not in ("prefix caching on vs off", "speculative vs plain decoding")
    ]
    assert len(cells) >= 20
    for c in cells:
        assert {
            "table",
            "metric",
            "point",
            "baseline",
            "candidate",
            "baseline_value",
            "candidate_value",
            "delta_pct",
            "verdict",
            "test",
        } <= set(c)
        assert c["baseline"] == "A:s.default" and c["candidate"] == "B:s.default"
    tested = [c for c in cells if c["verdict"] not in ("inconclusive", "missing", "not claimed")]
    # 6 repetitions: enough for a real test; a point the loaded machine made client-limited is never claimed
    # (and does not count as tested), the ITL is long enough (100 ms) for that to be rare
    assert len(tested) >= len(cells) // 2, [c["text"] for c in cells]
    no_claim = [c for c in cells if not c["claim"]]
    print(
        f"\nA/A: no claim in {len(no_claim)}/{len(cells)} cells; {len(tested)} tested: "
        + ", ".join(
            f"{k} {sum(c['verdict'] == k for c in cells)}" for k in sorted({c["verdict"] for c in cells})
        )
    )
    assert len(no_claim) / len(cells) >= 0.95, [
        (c["metric"], c["point"], c["text"]) for c in cells if c["claim"]
    ]
    assert all("bootstrap" in c["test"] and "5 %" in c["test"] for c in tested)
    summary = " ".join(data["summary"])
    assert "no difference beyond the 5 % threshold is supported" in summary


def test_ab_slower_server_is_called_slower(runs: dict[str, Path]) -> None:
    data = compare_json(runs["a1"], runs["b"])
    cells = [
        c
        for c in data["cells"]
        if c["metric"] in RATE_METRICS and c["table"] != "speculative vs plain decoding"
    ]
    excluded = [c for c in cells if c["verdict"] == "not claimed"]  # client-limited on the loaded machine
    assert all("lower" in c["text"] and "client-limited" in c["text"] for c in excluded)
    cells = [c for c in cells if c not in excluded]
    assert len(cells) >= 8, [c["text"] for c in excluded]
    worse = [c for c in cells if c["verdict"] == "worse" and c["delta_pct"] < 0 and "lower" in c["text"]]
    print(
        f"\nA/B: called worse (lower) in {len(worse)}/{len(cells)} decode/generation-rate cells; "
        f"{len(excluded)} more not claimed (client-limited)"
    )
    assert len(worse) / len(cells) >= 0.90, [(c["metric"], c["point"], c["text"]) for c in cells]
    ttft = [c for c in data["cells"] if c["metric"] == "ttft_ms" and c["verdict"] == "worse"]
    assert ttft and all(c["delta_pct"] > 0 and "TTFT" in c["text"] and "higher" in c["text"] for c in ttft)
    summary = " ".join(data["summary"])
    assert "worse: " in summary and "[" in summary  # a claim cites its cell


def test_explicit_baseline_and_errors(runs: dict[str, Path]) -> None:
    data = compare_json(runs["a1"])  # one run, one variant: nothing to compare, no error
    assert data["cells"] == []
    r = CliRunner().invoke(compare, [str(runs["a1"]), str(runs["b"]), "--baseline", "nope.x"])
    assert (
        r.exit_code == 2 and "baseline 'nope.x' is not a column" in r.output and "Traceback" not in r.output
    )
    r = CliRunner().invoke(compare, [str(runs["a1"]), str(runs["b"]), "--baseline", "s.default", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["baseline"]["pairing"] == "against the baseline"
    assert {c["candidate"] for c in data["cells"]} == {"B:s.default"}

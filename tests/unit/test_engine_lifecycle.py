"""Adapter lifecycle without a model: a `command` engine launching the scripted server (logs to file and events,
ready, metrics, tokenize, stop of the whole group) and an `external` engine that is never started or killed;
env.json capture. Ports are picked free (scripted_server.free_port)."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest

from bench_tui.engine_adapters import EngineConfigError, make_adapter
from bench_tui.engine_adapters.base import EngineStartError
from bench_tui.engine_adapters.process import ProcessEngine
from bench_tui.envinfo import capture_env
from bench_tui.events import EngineLog, EngineReady, EngineStarting, EngineStopped, Event
from bench_tui.spec.schema import CommandEngine, ExternalEngine, Variant
from proc_helpers import alive
from scripted_server import ScriptedServerProcess, free_port

SERVER = str(Path(__file__).resolve().parents[1] / "scripted_server.py")


def test_command_engine_lifecycle(tmp_path: Path) -> None:
    events: list[Event] = []
    port = free_port()
    eng = CommandEngine(
        command=["{python}", SERVER, "--host", "{host}", "--port", "{port}", "--tokens", "3"],
        port=port,
        startup_timeout=20,
        metrics_dialect="vllm",
        api_key="scripted-secret-99",
        version_command=["{python}", "-c", "print('scripted 1.2.3')"],
        variants={"v": Variant(env={"EXTRA": "1"})},
    )
    a = make_adapter(
        "srv",
        eng,
        "v",
        eng.variants["v"],
        spec_dir=tmp_path,
        log_dir=tmp_path / "engines",
        emit=events.append,
    )
    assert isinstance(a, ProcessEngine)
    try:
        a.start()
        info = a.wait_ready(timeout=20)
        assert info.model_id and info.base_url == f"http://127.0.0.1:{port}" and a.is_alive()
        assert info.version == "scripted 1.2.3"  # from version_command
        assert a.headers["Authorization"] == "Bearer scripted-secret-99"
        m = a.scrape_metrics()
        assert any(k.startswith("vllm:") for k in m)
        toks = a.tokenize("one two three")
        assert toks is not None and len(toks) == 3
        assert a.metrics_dialect == "vllm"
        env = capture_env([a])
        assert env["engines"]["srv.v"]["kind"] == "command"
        assert env["engines"]["srv.v"]["command"][1] == SERVER and env["engines"]["srv.v"]["env"] == {
            "EXTRA": "1"
        }
        assert env["host"]["python"] and env["cpu"]["logical_cores"] >= 1 and env["memory"]["total_mb"] > 0
        assert ("gpus" in env) == (importlib.util.find_spec("pynvml") is not None and "gpus" in env)
        pid = info.pid
        assert pid is not None
    finally:
        rc = a.stop(timeout=10)
    assert rc is not None and not a.is_alive() and not alive(pid)
    kinds = [type(e) for e in events]
    assert kinds[0] is EngineStarting and EngineReady in kinds and kinds[-1] is EngineStopped
    assert any(isinstance(e, EngineLog) and f"READY {port}" in e.line for e in events)
    log = (tmp_path / "engines" / "srv.v.log").read_text()
    assert f"READY {port}" in log and "start 1 of srv.v" in log
    assert a.stop() == rc and sum(isinstance(e, EngineStopped) for e in events) == 1  # idempotent


def test_external_engine_is_never_started_or_killed(tmp_path: Path) -> None:
    events: list[Event] = []
    with ScriptedServerProcess(port=0) as srv:
        eng = ExternalEngine(base_url=srv.base_url + "/v1", metrics_dialect="vllm", served_model_name=None)
        a = make_adapter("ext", eng, "default", None, spec_dir=tmp_path, log_dir=tmp_path, emit=events.append)
        a.start()
        info = a.wait_ready(timeout=10)
        assert info.base_url == srv.base_url and info.model_id and info.pid is None
        assert a.is_alive() and any(k.startswith("vllm:") for k in a.scrape_metrics())
        assert a.stop() is None
        assert srv.proc is not None and srv.proc.poll() is None  # still running
        assert a.is_alive() and a.env_info()["command"] == []
    deadline = time.monotonic() + 5
    while a.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not a.is_alive()  # refused connections = gone
    assert [type(e) for e in events] == [EngineStarting, EngineReady, EngineStopped]


def test_external_not_reachable_times_out_clearly(tmp_path: Path, free_tcp_port: int) -> None:
    port = free_tcp_port  # nothing listens there
    eng = ExternalEngine(base_url=f"http://127.0.0.1:{port}", startup_timeout=1.0)
    a = make_adapter("ext", eng, "default", None, spec_dir=tmp_path, log_dir=tmp_path, emit=lambda e: None)
    a.start()
    with pytest.raises(EngineStartError, match=rf"not ready after 1 s at http://127.0.0.1:{port}/v1/models"):
        a.wait_ready()


def test_unknown_kind_and_empty_model(tmp_path: Path) -> None:
    from bench_tui.spec.schema import VllmEngine

    with pytest.raises(EngineConfigError, match="`model` is empty"):
        make_adapter(
            "v", VllmEngine(), "default", None, spec_dir=tmp_path, log_dir=tmp_path, emit=lambda e: None
        ).command()
    with pytest.raises(EngineConfigError, match="unknown engine kind"):
        make_adapter(
            "x",
            object(),
            "default",
            None,
            spec_dir=tmp_path,
            log_dir=tmp_path,  # type: ignore[arg-type,unused-ignore]
            emit=lambda e: None,
        )


def test_capture_env_never_raises() -> None:
    class Broken:
        name, variant_name, kind = "b", "v", "broken"

        def env_info(self) -> dict[str, str]:
            raise RuntimeError("boom")

    env = capture_env([Broken()])
    assert "boom" in env["engines"]["b.v"]["error"] and env["engines"]["b.v"]["kind"] == "broken"
    json.dumps(env)  # serializable

"""Test helpers: an engine adapter for tests/scripted_server.py, and a run driver.

The adapter speaks to the scripted server the way the real adapters speak to engines: `external` specs
point at a server the test started; `command` specs launch ``python tests/scripted_server.py --port P``
(so a crash is a real process death and a restart a real new process). ``loaded_from_text`` and ``plan``
are the real loader and planner.

As a script it drives a run headless (used by the resume-after-SIGKILL test):

    python tests/integration/scripted_engine.py SPEC_FILE RUNS_DIR
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench_tui.engine_adapters.base import EngineAdapter, EngineInfo, EngineStartError
from bench_tui.events import EngineReady, EngineStarting, EngineStopped, PlanPoint
from bench_tui.runner.orchestration.planner import load_spec_text, plan_points
from bench_tui.spec.schema import ExternalEngine

SERVER = Path(__file__).resolve().parents[1] / "scripted_server.py"


def loaded_from_text(text: str, path: Path) -> Any:
    """The real loader (every check) on a spec written as text."""
    return load_spec_text(text, path, env={})


def plan(loaded: Any) -> list[PlanPoint]:
    return plan_points(loaded)


def _get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()  # type: ignore[no-any-return]


def _post(url: str, obj: Any, timeout: float = 5.0) -> bytes:
    req = urllib.request.Request(
        url, data=json.dumps(obj).encode(), method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()  # type: ignore[no-any-return]


def parse_metrics(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, val = line.rpartition(" ")
        try:
            out[key] = float(val)
        except ValueError:
            continue
    return out


class ScriptedEngine(EngineAdapter):
    kind = "scripted"
    metrics_dialect = "vllm"

    def __init__(
        self,
        name: str,
        engine: Any,
        variant_name: str,
        variant: Any,
        *,
        spec_dir: Path,
        log_dir: Path,
        emit: Any,
    ) -> None:
        super().__init__(name, engine, variant_name, variant, spec_dir=spec_dir, log_dir=log_dir, emit=emit)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        if isinstance(engine, ExternalEngine):
            self._url = engine.base_url.rstrip("/")
        else:
            self._url = f"http://{engine.host}:{engine.port}"

    def command(self) -> list[str]:
        if isinstance(self.engine, ExternalEngine):
            return []
        return [
            sys.executable if a == "{python}" else a.replace("{port}", str(self.engine.port))
            for a in self.engine.command
        ]

    def environment(self) -> dict[str, str]:
        return {}

    @property
    def base_url(self) -> str:
        return self._url

    def start(self) -> None:
        self.starts += 1
        cmd = self.command()
        log = self.log_dir / f"{self.name}.log"
        if cmd:
            with open(log, "ab") as fh:
                self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        self.emit(
            EngineStarting(
                engine=self.name,
                variant=self.variant_name,
                command=cmd,
                log_path=str(log),
                pid=self.proc.pid if self.proc else None,
            )
        )
        self._t0 = time.monotonic()

    def wait_ready(self, timeout: float | None = None) -> EngineInfo:
        deadline = time.monotonic() + (timeout or 20.0)
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise EngineStartError(f"{self.name} exited with {self.proc.returncode}")
            try:
                models = json.loads(_get(self._url + "/v1/models", 2.0))
                mid = models["data"][0]["id"]
                break
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        else:
            raise EngineStartError(f"{self.name} not ready at {self._url}")
        info = EngineInfo(
            base_url=self._url,
            model_id=mid,
            startup_s=time.monotonic() - self._t0,
            command=self.command(),
            pid=self.proc.pid if self.proc else None,
        )
        self.emit(
            EngineReady(
                engine=self.name,
                variant=self.variant_name,
                base_url=self._url,
                model_id=mid,
                startup_s=info.startup_s,
            )
        )
        return info

    def stop(self, timeout: float = 20.0) -> int | None:
        rc = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5)
            rc = self.proc.returncode
        self.emit(EngineStopped(engine=self.name, variant=self.variant_name, returncode=rc))
        return rc

    def is_alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None

    def log_tail(self, n: int = 30) -> list[str]:
        log = self.log_dir / f"{self.name}.log"
        if not log.is_file():
            return []
        return log.read_text(errors="replace").splitlines()[-n:] or [
            f"(exit code {self.proc and self.proc.poll()})"
        ]

    def scrape_metrics(self) -> dict[str, float]:
        return parse_metrics(_get(self._url + "/metrics").decode())

    def tokenize(self, text: str) -> list[int] | None:
        return list(json.loads(_post(self._url + "/tokenize", {"content": text}))["tokens"])

    def env_info(self) -> dict[str, Any]:
        return {"kind": "scripted", "command": self.command()}


def factory(name: str, engine: Any, variant_name: str, variant: Any, **kw: Any) -> ScriptedEngine:
    return ScriptedEngine(name, engine, variant_name, variant, **kw)


def set_schedule(base_url: str, **fields: Any) -> None:
    _post(base_url + "/_schedule", fields)


def _drive(spec_file: str, runs_dir: str) -> int:
    from bench_tui.runner.orchestration.headless import run_headless
    from bench_tui.runner.orchestration.session import new_run

    path = Path(spec_file)
    loaded = loaded_from_text(path.read_text(), path)
    handle = new_run(loaded, plan(loaded), runs_dir=runs_dir, adapter_factory=factory, engine_warmup=False)
    return run_headless(handle)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(_drive(sys.argv[1], sys.argv[2]))

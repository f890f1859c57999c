"""An engine kind from outside bench-tui: ``kind: scripted`` launches tests/scripted_server.py.

It is what a third-party package does to add an engine (CONTRIBUTING.md, recipe 1): a spec Struct with the
kind's typed options (here the server's timing, validated by the spec loader at file:line:col), and an adapter
that turns them into the engine's argv, registered in the ``bench_tui.engines`` entry point group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec

from bench_tui.engine_adapters.process import EngineConfigError, ProcessEngine
from bench_tui.spec.schema import EngineBase

Millis = Annotated[float, msgspec.Meta(ge=0, le=60_000)]


class ScriptedEngine(EngineBase, tag="scripted", kw_only=True):
    """tests/scripted_server.py launched as an engine: replies on a known schedule."""

    server: Annotated[str, msgspec.Meta(description="Path of scripted_server.py, relative to the spec file.")]
    prefill_ms: Annotated[Millis, msgspec.Meta(description="Silence before the first token, in ms.")] = 0.0
    itl_ms: Annotated[Millis, msgspec.Meta(description="Delay before each later token, in ms.")] = 0.0


class ScriptedAdapter(ProcessEngine):
    kind = "scripted"
    options = ScriptedEngine
    metrics_dialect = "vllm"  # the scripted server exports vLLM's counter names
    reserved_args = frozenset({"host", "port", "prefill-ms", "itl-ms"})

    def command(self) -> list[str]:
        eng = self.engine
        assert isinstance(eng, ScriptedEngine)
        server = Path(eng.server)
        server = server if server.is_absolute() else self.spec_dir / server
        if not server.is_file():
            raise EngineConfigError(f"{self.label}: server {str(server)!r} is not a file")
        return [
            self.placeholders()["python"],
            str(server),
            "--host",
            eng.host,
            "--port",
            str(eng.port),
            "--prefill-ms",
            str(eng.prefill_ms),
            "--itl-ms",
            str(eng.itl_ms),
            *self.flags(),
        ]

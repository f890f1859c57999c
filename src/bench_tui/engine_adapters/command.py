"""Any engine binary (NInfer-style): ``command`` with ``{model} {port} {host} {python}`` (and ``{api_key}``, the
expanded ``api_key``: redacted in every recorded command) substituted, then the ``args`` flags appended. The
metrics dialect comes from the spec; the version from ``version_command`` (run
once, first output line) when given, else ``GET /version``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench_tui.engine_adapters.base import Emit
from bench_tui.engine_adapters.process import EngineConfigError, ProcessEngine, find_binary, substitute
from bench_tui.spec.schema import CommandEngine, Engine, Variant


class CommandAdapter(ProcessEngine):
    kind = "command"
    reserved_args = frozenset()

    def __init__(
        self,
        name: str,
        engine: Engine,
        variant_name: str,
        variant: Variant | None,
        *,
        spec_dir: Path,
        log_dir: Path,
        emit: Emit,
    ) -> None:
        super().__init__(name, engine, variant_name, variant, spec_dir=spec_dir, log_dir=log_dir, emit=emit)
        assert isinstance(engine, CommandEngine)
        self.metrics_dialect = engine.metrics_dialect

    def command(self) -> list[str]:
        assert isinstance(self.engine, CommandEngine)
        if not self.engine.command:
            raise EngineConfigError(f"{self.label}: `command` is empty")
        values = self.placeholders()
        values["api_key"] = self.api_key or ""
        return [substitute(a, values) for a in self.engine.command] + self.flags()

    def probe_version(self) -> str:
        assert isinstance(self.engine, CommandEngine)
        vc = self.engine.version_command
        if not vc:
            return super().probe_version()
        values = self.placeholders()
        argv = [substitute(a, values) for a in vc]
        exe = find_binary(argv[0], self.spec_dir) if argv else None
        if exe is None:
            return ""
        try:
            res = subprocess.run(
                [exe, *argv[1:]],
                capture_output=True,
                text=True,
                timeout=15,
                cwd=str(self.spec_dir),
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        lines = (res.stdout or res.stderr).strip().splitlines()
        return str(self.scrub(lines[0].strip()))[:200] if lines else ""

"""What running a spec would do on this machine, said before it happens: the exact commands it starts, the
environment it gives them, the Python modules its grader hooks import and the servers it talks to.

A spec that came from someone else (``rerun BUNDLE``, a bundle's spec run from ``watch``) names programs in
``command:``/``launcher:``/``version_command:``, environment variables such as ``LD_PRELOAD``, hooks and
URLs; none of them may start without the user reading this list and saying yes (``approve``).
Secrets stay scrubbed here as everywhere else.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bench_tui.engine_adapters import make_adapter
from bench_tui.events import PlanPoint
from bench_tui.graders.pack import PackError, load_pack
from bench_tui.spec.schema import CommandEngine, ExternalEngine, ScenarioWorkload
from bench_tui.spec.secrets import redact, scrub_text


@dataclass
class Launches:
    commands: list[str] = field(default_factory=list)  # one shell-quoted line per process
    hooks: list[str] = field(default_factory=list)  # "module:function" grader hooks (imported when grading)
    urls: list[str] = field(default_factory=list)  # already-running servers the run sends requests to

    @property
    def empty(self) -> bool:
        return not (self.commands or self.hooks or self.urls)

    def lines(self) -> list[str]:
        out = [f"run: {c}" for c in self.commands]
        out += [f"import (grader hook): {h}" for h in self.hooks]
        out += [f"send requests to: {u}" for u in self.urls]
        return out


def _quote(argv: list[str]) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv)


def describe_launches(loaded: Any, points: list[PlanPoint]) -> Launches:
    """Every process, hook and server ``points`` of ``loaded`` (a LoadedSpec) would use, secrets scrubbed."""
    spec = loaded.spec
    out = Launches()
    seen: set[tuple[str, str]] = set()
    with tempfile.TemporaryDirectory(prefix="bench-tui-describe-") as logs:
        for p in points:
            if (p.engine, p.variant) in seen:
                continue
            seen.add((p.engine, p.variant))
            eng = spec.engines.get(p.engine)
            if eng is None:
                continue
            if isinstance(eng, ExternalEngine):
                out.urls.append(scrub_text(eng.base_url))
                continue
            variant = (eng.variants or {}).get(p.variant)
            try:
                adapter = make_adapter(
                    p.engine,
                    eng,
                    p.variant,
                    variant,
                    spec_dir=Path(loaded.dir),
                    log_dir=logs,
                    emit=lambda ev: None,
                )
                argv = list(adapter.command())
                env = dict(adapter.environment()) if hasattr(adapter, "environment") else {}
            except Exception as exc:  # noqa: BLE001 - the command cannot even be built: say what is named
                raw = list(getattr(eng, "command", None) or getattr(eng, "launcher", None) or [])
                argv = [*raw, f"(cannot be resolved here: {str(exc).splitlines()[0] if str(exc) else exc})"]
                env = {**eng.env, **(variant.env if variant else {})}
            envs = [f"{k}={v}" for k, v in sorted(redact(env).items())]
            line = _quote([*envs, *redact(argv)]) if envs else _quote(redact(argv))
            out.commands.append(scrub_text(line))
            if isinstance(eng, CommandEngine) and eng.version_command:
                out.commands.append(scrub_text(_quote(redact(list(eng.version_command)))))
    out.hooks = _hooks(loaded, points)
    return out


def _hooks(loaded: Any, points: list[PlanPoint]) -> list[str]:
    names: list[str] = []
    for wname in sorted({p.workload for p in points if p.kind == "scenarios"}):
        wl = loaded.spec.workloads.get(wname)
        if not isinstance(wl, ScenarioWorkload):
            continue
        try:
            pack = load_pack(wl.pack, loaded.dir)
        except (PackError, OSError):
            continue
        for sc in pack.scenarios:
            hook = sc.expect.hook if sc.expect is not None else None
            if hook and ":" in hook and hook not in names:
                names.append(hook)  # entry points and builtins are installed code, not the bundle's
    return names


def approve(
    launches: Launches, *, yes: bool, stdin: TextIO | None = None, out: Callable[[str], None], what: str
) -> tuple[bool, str]:
    """Show ``launches`` and ask. (approved, message when not). ``--yes`` approves; a stdin that is not a
    terminal, or that is closed, means no: nothing a bundle names runs unattended."""
    if launches.empty:
        return True, ""
    out(f"{what} would, on this machine:")
    for line in launches.lines():
        out(f"  {line}")
    if yes:
        out("approved with --yes")
        return True, ""
    stdin = sys.stdin if stdin is None else stdin
    try:
        interactive = stdin is not None and not stdin.closed and stdin.isatty()
    except (ValueError, OSError):
        interactive = False
    if not interactive:
        return False, (
            "not started: these commands come from a spec you did not write, and stdin is not a "
            "terminal to ask you; read them above and pass --yes to run them"
        )
    out("Run them? [y/N] ")
    try:
        answer = stdin.readline()
    except (OSError, ValueError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True, ""
    return False, "not started: you did not answer yes"

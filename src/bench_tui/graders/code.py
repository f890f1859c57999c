"""A model's Python function: ``extract_code`` finds it in an answer, ``run_function`` runs it against test
cases in an isolated subprocess (``python -I``, empty temp dir and environment, rlimits, no sockets); SQL is
``graders/sql.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

_CODE_BLOCK = re.compile(r"```(?:python|py|python3)?[^\n]*\n(.*?)```", re.S | re.I)


_RUNNER = r"""
import json, socket, sys
def _no_net(*a, **k):
    raise OSError("network disabled in the grader sandbox")
socket.socket = _no_net  # type: ignore
socket.create_connection = _no_net  # type: ignore
spec = json.loads(sys.stdin.read())
ns = {"__name__": "model_code"}
try:
    exec(compile(spec["code"], "model_code.py", "exec"), ns)
except BaseException as exc:
    print(json.dumps({"error": f"the code does not load: {type(exc).__name__}: {exc}"})); sys.exit(0)
fn = ns.get(spec["function"])
if not callable(fn):
    print(json.dumps({"error": f"no function {spec['function']}() defined"})); sys.exit(0)
results = []
for case in spec["tests"]:
    try:
        got = fn(*case.get("args", []), **case.get("kwargs", {}))
        results.append({"ok": True, "value": got if isinstance(got, (int, float, str, bool, type(None), list, dict)) else repr(got)})
    except BaseException as exc:
        results.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
print(json.dumps({"results": results}))
"""


def extract_code(text: str, function: str | None = None) -> str:
    """The Python code in ``text``: the fenced blocks that define ``function`` (others are usually examples or
    REPL sessions), else all fenced blocks, else the text itself."""
    blocks = [b for b in _CODE_BLOCK.findall(text) if not re.match(r"\s*>>>", b)]
    if function:
        defining = [b for b in blocks if re.search(rf"\bdef\s+{re.escape(function)}\s*\(", b)]
        imports = [
            b for b in blocks if b not in defining and re.fullmatch(r"(\s*(import|from)\s[^\n]*\n?)+\s*", b)
        ]
        if defining:
            return "\n\n".join(imports + defining)
    return "\n\n".join(blocks) if blocks else text


def _limits() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (512 * 2**20, 512 * 2**20))
    resource.setrlimit(resource.RLIMIT_CPU, (5, 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))
    resource.setrlimit(resource.RLIMIT_NPROC, (64, 64))


def run_function(
    code: str, function: str, tests: list[dict[str, Any]], timeout: float = 10.0
) -> tuple[bool, list[str]]:
    """Run ``function`` from ``code`` on each test ``{args, kwargs, expect}`` in a subprocess: ``python -I``
    (isolated: no site, no env paths), an empty temp dir as cwd, an empty environment, rlimits on memory, CPU
    time, file size and processes, and the socket module disabled. Returns (all passed, reasons)."""
    spec = json.dumps({"code": code, "function": function, "tests": tests})
    with tempfile.TemporaryDirectory(prefix="bench-tui-code-") as tmp:
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", _RUNNER],
                input=spec,
                capture_output=True,
                text=True,
                cwd=tmp,
                env={"PATH": os.defpath, "HOME": tmp, "TMPDIR": tmp},
                timeout=timeout,
                preexec_fn=_limits if os.name == "posix" else None,  # noqa: PLW1509 - rlimits need it
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False, [f"{function}() did not finish within {timeout:g} s"]
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return False, [f"the code crashed the runner: {proc.stderr.strip()[-200:]}"]
    if "error" in out:
        return False, [out["error"]]
    reasons, ok = [], True
    for case, res in zip(tests, out["results"], strict=True):
        call = f"{function}({', '.join(json.dumps(a) for a in case.get('args', []))})"
        if not res["ok"]:
            if case.get("raises"):
                continue
            ok = False
            reasons.append(f"{call} raised {res['error']}")
        elif case.get("raises"):
            ok = False
            reasons.append(f"{call} returned {res['value']!r}, expected it to raise")
        elif not _same(res["value"], case.get("expect")):
            ok = False
            reasons.append(
                f"{call} returned {json.dumps(res['value'])}, expected {json.dumps(case.get('expect'))}"
            )
    if ok:
        reasons.append(f"{function}() passes {len(tests)} test input(s)")
    return ok, reasons


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(b))
    return bool(a == b)

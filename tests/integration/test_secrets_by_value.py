"""Secrets by value, end to end: a real headless run on the scripted server started as a `command` engine,
with secrets in its command line (`--api-key=${TOKEN}`), its environment (`https://user:${PW}@host`), its
`api_key`, and a value from a variable whose name says nothing (`${RUN_TAG}`). The engine echoes all of
them into its log. Afterwards no byte of the run directory, the bundle, the console, `--json`, the report
or `history --json` holds any of the values."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "scripted_server.py"
SRC = str(Path(__file__).resolve().parents[2] / "src")

SECRETS = {
    "TOKEN": "tok-3f9a1c77e2d84b05",
    "PW": "pw-b8e1d2c3a4f5",
    "MY_KEY": "key-91c2d3e4f5a6b7c8",
    "RUN_TAG": "tag-5e6f7a8b9c0d",
}

SPEC = f"""\
version: 1
name: secret-by-value
engines:
  srv:
    kind: command
    command:
      - sh
      - -c
      - 'echo "engine args: $*" >&2; echo "upstream: $UPSTREAM_URL" >&2; exec "$0" "$1" --port "$2" --itl-ms 2 --tokens 6'
      - "{{python}}"
      - "{SERVER}"
      - "{{port}}"
      - "--api-key=${{TOKEN}}"
      - "--key={{api_key}}"
      - "tag=${{RUN_TAG}}"
    port: {{port}}
    api_key: ${{MY_KEY}}
    startup_timeout: 60
    env:
      UPSTREAM_URL: "https://user:${{PW}}@proxy.invalid:3128/v1"
workloads:
  sweep: {{kind: throughput, pp: [8], tg: [4], concurrency: [1], repetitions: 1, warmup: 0}}
"""


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _leaks(blob: bytes, where: str) -> list[str]:
    return [f"{name} in {where}" for name, value in SECRETS.items() if value.encode() in blob]


def test_no_secret_value_anywhere_after_a_real_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(SERVER.parent))
    from scripted_server import free_port

    port = free_port(18490, 18509)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("{port}", str(port)))
    env = {**os.environ, **SECRETS, "PYTHONPATH": SRC, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    runs = tmp_path / "runs"
    consoles: list[tuple[str, str]] = []

    r = _cli([str(spec), "--no-tui", "--json", "--runs-dir", str(runs)], tmp_path, env)
    consoles.append(("run --json", r.stdout + r.stderr))
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    events = (run_dir / "events.jsonl").read_text()
    assert '"point_finished"' in events and '"status":"ok"' in events, r.stdout[-2000:] + r.stderr[-2000:]
    log = next((run_dir / "engines").glob("*.log")).read_text()
    # the engine really printed them (so this test can fail): now scrubbed
    assert "engine args:" in log and "--api-key=***" in log and "upstream: https://user:***@proxy" in log

    r = _cli([str(spec), "--no-tui", "--runs-dir", str(runs)], tmp_path, env)  # the human console too
    consoles.append(("run (progress lines)", r.stdout + r.stderr))
    r = _cli(["bundle", str(run_dir), "-o", str(tmp_path / "b.tar.gz")], tmp_path, env)
    assert r.returncode == 0, r.stderr
    consoles.append(("bundle", r.stdout + r.stderr))
    r = _cli(["report", str(run_dir), "--format", "md"], tmp_path, env)
    consoles.append(("report", r.stdout + r.stderr))
    r = _cli(["history", "--json"], tmp_path, env)
    assert run_dir.name in r.stdout, r.stderr
    consoles.append(("history --json", r.stdout + r.stderr))
    r = _cli(["validate", str(spec)], tmp_path, env)
    consoles.append(("validate", r.stdout + r.stderr))

    leaks: list[str] = []
    for where, text in consoles:
        leaks += _leaks(text.encode(), where)
    for f in tmp_path.rglob("*"):
        if f.is_file() and f != spec:
            leaks += _leaks(f.read_bytes(), str(f.relative_to(tmp_path)))
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        for m in tar:
            if m.isfile():
                leaks += _leaks(tar.extractfile(m).read(), f"bundle:{m.name}")  # type: ignore[union-attr]
    data = Path(os.environ["BENCH_TUI_DATA_DIR"])
    for f in data.rglob("*"):
        if f.is_file():
            leaks += _leaks(f.read_bytes(), f"history:{f.name}")
    assert leaks == []

"""Hostile specs: alias bombs, huge documents, deep nesting and absurd numbers are refused quickly, each as a
`file:line:col: message` line with a hint, never a traceback or a runaway."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_tui.spec.loader import SpecError, load_spec, load_stored_spec
from bench_tui.spec.yamlguard import MAX_DOC_BYTES

HEAD = """\
version: 1
name: t
engines:
  llama:
    kind: llamacpp
    model: m.gguf
"""
WORK = """\
workloads:
  sweep:
    kind: throughput
"""

# nine levels of nine aliases: 9**9 = 387 million strings from a few hundred bytes
BOMB = (
    HEAD.replace("    model: m.gguf\n", "    model: m.gguf\n    args: {x: *i}\n").replace(
        "engines:\n",
        """\
l0: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]
l1: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
l2: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
l3: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
l4: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
l5: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
l6: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
l7: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
l8: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
engines:
""",
    )
    + WORK
)


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_alias_bomb_refused_fast_with_bounded_memory(tmp_path: Path) -> None:
    path = _write(tmp_path, BOMB)
    assert path.stat().st_size < 1000
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    with pytest.raises(SpecError) as info:
        load_spec(path)
    took = time.monotonic() - t0
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    (msg,) = info.value.problems
    # line 16 `    args: {x: *i}`: the alias that expands the most, at its column
    assert msg.startswith(f"{path}:16:15: YAML aliases expand this document to more than 100000 values")
    assert "'billion laughs'" in msg and "write the values out" in msg
    assert took < 5 and grew_mb < 50  # generous: the box is shared; unbounded it was 1.1 GB and 8 s
    print(
        f"alias bomb ({path.stat().st_size} B): refused in {took * 1000:.1f} ms, peak RSS +{grew_mb:.1f} MB"
    )


def test_alias_bomb_through_the_cli_is_one_line_and_rc_2(tmp_path: Path) -> None:
    path = _write(tmp_path, BOMB)
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - t0
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    assert f"{path}:16:15: YAML aliases expand" in r.stdout + r.stderr
    print(f"`bench-tui validate` of the bomb: rc {r.returncode} in {took:.2f} s (process start included)")


def test_stored_spec_fallback_is_bounded_too(tmp_path: Path) -> None:
    # reading a bundle's spec (report, compare) must not fall back to an unbounded yaml.safe_load
    path = _write(tmp_path, BOMB)
    t0 = time.monotonic()
    with pytest.raises(SpecError):
        load_stored_spec(path)
    assert time.monotonic() - t0 < 5


def test_small_shared_aliases_still_work(tmp_path: Path) -> None:
    text = (
        HEAD.replace(
            "    model: m.gguf\n",
            "    model: m.gguf\n    args: &c {ctx-size: 4096, jinja: true}\n"
            "  other: {kind: llamacpp, model: m.gguf, port: 8001, args: *c}\n",
        )
        + WORK
    )
    ld = load_spec(_write(tmp_path, text))
    assert ld.spec.engines["other"].args == ld.spec.engines["llama"].args == {"ctx-size": 4096, "jinja": True}


def test_oversized_and_deeply_nested_documents(tmp_path: Path) -> None:
    big = HEAD + WORK + "description: '" + "x" * (MAX_DOC_BYTES + 10) + "'\n"
    with pytest.raises(SpecError) as info:
        load_spec(_write(tmp_path, big))
    assert info.value.problems[0].endswith(
        f"1:1: the file is over {MAX_DOC_BYTES} bytes; a spec is limited to that "
        "(real ones are a few KB): is this the right file?"
    )
    deep = HEAD + WORK + "x: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(SpecError) as info:
        load_spec(_write(tmp_path, deep))
    (msg,) = info.value.problems
    assert ":10:203: " in msg and "nested more than 200 levels deep" in msg


@pytest.mark.parametrize(
    ("fragment", "env", "expected"),
    [
        (
            "    concurrency: [1000000000]\n",
            {},
            "10:19: workloads.sweep.concurrency[0]: must be <= 4096, got 1000000000 (concurrency is the number of requests "
            "in flight (1 = one at a time))",
        ),
        (
            "    pp: [100000000000000000000000000]\n",
            {},
            "10:10: workloads.sweep.pp[0]: must be <= 4194304, got 100000000000000000000000000 (pp is the prompt length "
            "in tokens)",
        ),
        (
            "    pp: [1e26]\n",
            {},
            "10:10: workloads.sweep.pp[0]: expected an integer, got a string ('1e26'); YAML reads this exponent form as "
            "text: write the whole number (at most 4194304)",
        ),
        (
            "    tg:\n      - ${TG}\n",
            {"TG": "1000000000"},
            "11:9: workloads.sweep.tg[0]: must be <= 4194304, got 1000000000 (tg is the number of tokens to generate)",
        ),
        (
            "    repetitions: 1e13\n",
            {},
            "10:18: workloads.sweep.repetitions: expected an integer, got a string ('1e13'); YAML reads this exponent "
            "form as text: write the whole number (at most 10000)",
        ),
        (
            "    repetitions: 10000000000000\n",
            {},
            "10:18: workloads.sweep.repetitions: must be <= 10000, got 10000000000000 (repetitions is how often each "
            "point is measured)",
        ),
        (
            "    request_timeout: .inf\n",
            {},
            "10:22: workloads.sweep.request_timeout: must be a finite number, got inf; give a bound > 0 and <= 604800 "
            "(seconds one request may take)",
        ),
        (
            "    request_timeout: .nan\n",
            {},
            "10:22: workloads.sweep.request_timeout: must be a finite number, got nan; give a bound > 0 and <= 604800 "
            "(seconds one request may take)",
        ),
        (
            "    depths: [0, 99999999999]\n",
            {},
            "10:17: workloads.sweep.depths[1]: must be <= 4194304, got 99999999999 (a depth is a token count of context "
            "already in the prompt (0 = none))",
        ),
        (
            "    concurrency: [" + ", ".join(["1"] * 300) + "]\n",
            {},
            "10:18: workloads.sweep.concurrency: 300 values; at most 256 are allowed in one list (each value multiplies "
            "the plan): split the sweep into several workloads",
        ),
        (
            "    pp: ["
            + ", ".join(str(i + 1) for i in range(200))
            + "]\n    tg: ["
            + ", ".join(str(i + 1) for i in range(100))
            + "]\n",
            {},
            "9:5: workloads.sweep: pp x tg x depths x concurrency is 20000 points; at most 10000 per workload: shorten "
            "the lists or split the sweep",
        ),
    ],
)
def test_huge_numbers_are_refused(tmp_path: Path, fragment: str, env: dict[str, str], expected: str) -> None:
    path = _write(tmp_path, HEAD + WORK + fragment)
    with pytest.raises(SpecError) as info:
        load_spec(path, env=env)
    assert info.value.problems == [f"{path}:{expected}"]


def test_engine_timeouts_and_sampling_are_bounded(tmp_path: Path) -> None:
    text = HEAD + "    startup_timeout: .inf\n" + WORK + "sampling: {temperature: -.inf, top_p: 7}\n"
    path = _write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.problems == [
        f"{path}:7:22: engines.llama.startup_timeout: must be a finite number, got inf; give a bound > 0 and "
        "<= 604800 (seconds an engine may take to become ready)",
        f"{path}:11:25: sampling.temperature: must be a finite number, got -inf; give a bound >= 0 and <= 100",
        f"{path}:11:39: sampling.top_p: must be <= 1, got 7",
    ]


def test_huge_concurrency_is_refused_before_anything_runs(tmp_path: Path) -> None:
    path = _write(tmp_path, HEAD + WORK + "    concurrency: [1000000000]\n")
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "bench_tui.cli", str(path), "--no-tui", "--runs-dir", str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "must be <= 4096" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()
    assert time.monotonic() - t0 < 30

"""graders.code: a model's Python function run in the sandbox."""

from __future__ import annotations

from bench_tui.graders.code import extract_code, run_function


def test_run_function_passes_and_fails_on_behaviour():
    good = "def average(xs):\n    if not xs:\n        return 0.0\n    return sum(xs) / len(xs)\n"
    bad = "def average(xs):\n    r = sum(xs) / len(xs)\n    if not xs:\n        return 0.0\n    return r\n"
    tests = [{"args": [[]], "expect": 0.0}, {"args": [[1, 2]], "expect": 1.5}]
    assert run_function(good, "average", tests)[0]
    ok, why = run_function(bad, "average", tests)
    assert not ok and "ZeroDivisionError" in why[0]
    ok, why = run_function("def average(xs):\nreturn 0\n", "average", tests)
    assert not ok and "does not load" in why[0]


def test_run_function_is_isolated():
    net = "def f():\n    import socket\n    socket.create_connection(('127.0.0.1', 9))\n"
    ok, why = run_function(net, "f", [{"args": [], "expect": None}])
    assert not ok and "network disabled" in why[0]
    ok, why = run_function(
        "def f():\n    while True:\n        pass\n", "f", [{"args": [], "expect": 1}], timeout=2
    )
    assert not ok
    hog = "def f():\n    return len(bytearray(2 * 1024 ** 3))\n"
    ok, why = run_function(hog, "f", [{"args": [], "expect": 0}])
    assert not ok and "MemoryError" in why[0]
    env = "def f():\n    import os, sys\n    return sorted(set(os.environ) - {'LC_CTYPE'}) + [sys.flags.isolated]\n"
    ok, why = run_function(env, "f", [{"args": [], "expect": ["HOME", "PATH", "TMPDIR", 1]}])
    assert ok, why  # an empty environment (no parent secrets), python -I


def test_extract_code_skips_examples_and_repl_sessions():
    text = "```python\ndef f(x):\n    return x\n```\n\n```python\n>>> f(1)\n1\n```"
    assert extract_code(text, "f").strip() == "def f(x):\n    return x"

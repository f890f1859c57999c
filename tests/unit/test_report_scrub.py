"""Secret scrubbing used by reports and bundles: what is caught and what is left alone."""

from __future__ import annotations

from bench_tui.reports.scrub import REDACTED, collect_secrets, find_secrets, scrub

SPEC = """\
engines:
  a: {kind: vllm, api_key: "${SERVICE_KEY}"}
  b:
    kind: external
    api_key: literal-key-value-42
    token: ${HF_TOKEN:-none}
  c: {kind: vllm, port: 8000, model: /models/x}
"""


def test_collect_from_env_and_spec():
    env = {
        "SERVICE_KEY": "svc-value-123456",
        "HF_TOKEN": "hf-value-abcdef",
        "HOME": "/root",
        "MY_PASSWORD": "pw-value-999999",
        "SHORT_TOKEN": "abc",
    }
    got = collect_secrets([SPEC], env)
    assert {"svc-value-123456", "hf-value-abcdef", "literal-key-value-42", "pw-value-999999"} <= got
    assert "/root" not in got and "abc" not in got and "/models/x" not in got


def test_scrub_values_and_shapes_but_not_metrics():
    secrets = {"svc-value-123456"}
    text = (
        "launch --api-key svc-value-123456 --port 8000\n"
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc\n"
        "key sk-abcdefghijklmnop1234 and hf_abcdefghijklmnopqrstuv\n"
        '{"api_key": "opaque-value-77", "token_source": "usage", "max_tokens": 12345678}\n'
        "password=hunter2hunter2\n"
        "api_key: ${SERVICE_KEY}\n"
        "prompt_tokens_total 123456789 and a token disagreement\n"
    )
    out, n = scrub(text, secrets)
    for leaked in (
        "svc-value-123456",
        "eyJhbGciOiJIUzI1NiJ9",
        "sk-abcdefghijklmnop1234",
        "hf_abcdefghijklmnopqrstuv",
        "opaque-value-77",
        "hunter2hunter2",
    ):
        assert leaked not in out, leaked
    assert n >= 6 and out.count(REDACTED) >= 6
    for kept in (
        '"token_source": "usage"',
        '"max_tokens": 12345678',
        "api_key: ${SERVICE_KEY}",
        "prompt_tokens_total 123456789 and a token disagreement",
        "--port 8000",
    ):
        assert kept in out, kept
    assert scrub(out, secrets)[1] == 0  # idempotent
    assert find_secrets(text, secrets) and not find_secrets(out, secrets)

"""Secrets by value: which interpolated values are registered, the one scrubber at the event log (file and
front ends), JSON-safe scrubbing, and names like `author` that are not secrets."""

from __future__ import annotations

import json
from pathlib import Path

from bench_tui.events import EngineStarting, read_events
from bench_tui.reports.scrub import collect_secrets, scrub
from bench_tui.runner.orchestration.eventlog import EventLog
from bench_tui.spec.loader import SpecError, load_spec_text
from bench_tui.spec.secrets import redact, register_secret, scrub_json_line, scrub_text

SPEC = """\
version: 1
name: s
engines:
  srv:
    kind: command
    command: [srv, "--api-key=${TOKEN}", "--upstream", "https://bob:${PW}@up.invalid/x", "--tag", "${RUN_TAG}",
              "--short", "${SHORT}"]
    model: ${MODEL_DIR}/m.gguf
    port: ${PORT}
    env: {PROXY: "http://alice:literal-pw-0042@proxy.invalid:3128"}
workloads:
  sweep: {kind: throughput}
"""
ENV = {
    "TOKEN": "tok-aa11bb22cc33",
    "PW": "pw-dd44ee55",
    "RUN_TAG": "tag-ff66gg77",
    "SHORT": "abc",
    "MODEL_DIR": "/models/here",
    "PORT": "18777",
}


def test_every_env_value_is_a_secret_except_numbers_short_and_descriptive() -> None:
    ld = load_spec_text(SPEC, "s.yaml", env=ENV)
    assert {"tok-aa11bb22cc33", "pw-dd44ee55", "tag-ff66gg77", "literal-pw-0042"} <= ld.secrets
    assert not {"abc", "/models/here", "18777"} & ld.secrets
    assert ld.spec.engines["srv"].port == 18777  # still typed after expansion
    # the recorded command: every secret gone, the rest intact
    recorded = " ".join(redact(ld.spec.engines["srv"].command))
    assert recorded == "srv --api-key=*** --upstream https://bob:***@up.invalid/x --tag *** --short abc"


def test_spec_errors_never_quote_an_interpolated_secret(tmp_path: Path) -> None:
    text = SPEC.replace("    port: ${PORT}\n", "    port: ${PORT}\n    startup_timeout: ${TOKEN}\n")
    try:
        load_spec_text(text, "s.yaml", env=ENV)
    except SpecError as exc:
        assert "tok-aa11bb22cc33" not in str(exc) and "startup_timeout" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a string timeout must be refused")


def test_event_log_scrubs_file_and_front_ends(tmp_path: Path) -> None:
    register_secret("evt-secret-9f8e7d")
    seen: list[object] = []
    with EventLog(tmp_path / "events.jsonl") as log:
        log.subscribe(seen.append)
        log.emit(
            EngineStarting(
                engine="e",
                variant="v",
                log_path="x.log",
                pid=1,
                command=["srv", "--api-key=evt-secret-9f8e7d", "https://u:hunter22@h/"],
            )
        )
    raw = (tmp_path / "events.jsonl").read_text()
    assert "evt-secret-9f8e7d" not in raw and "hunter22" not in raw
    (ev,) = read_events(str(tmp_path / "events.jsonl"))
    assert isinstance(ev, EngineStarting) and ev.command == ["srv", "--api-key=***", "https://u:***@h/"]
    assert seen == [ev]  # the console / --json / TUI get the scrubbed event, not the original


def test_json_scrubbing_never_touches_numbers_and_handles_escapes() -> None:
    register_secret("424242")
    register_secret('q"uo\\te-secret')
    line = json.dumps({"t_ns": 9424242001, "text": "id 424242 here", "k": 'q"uo\\te-secret'}).encode()
    out = json.loads(scrub_json_line(line))
    assert out == {"t_ns": 9424242001, "text": "id *** here", "k": "***"}
    clean = b'{"a":1,"b":"nothing to see"}'
    assert scrub_json_line(clean) is clean


def test_author_and_authority_are_not_secret_names() -> None:
    spec = (
        "grading:\n  overrides:\n    - {scenario: TC-01, verdict: pass, reason: r, author: Jane Q Reviewer}\n"
        "authority: registry.example.org\nauth: s3cr3t-auth-value\n"
    )
    got = collect_secrets([spec], {})
    assert "Jane Q Reviewer" not in got and "registry.example.org" not in got
    assert "s3cr3t-auth-value" in got
    text, n = scrub("override by Jane Q Reviewer", got)
    assert n == 0 and text == "override by Jane Q Reviewer"
    assert redact({"author": "Jane Q Reviewer"}) == {"author": "Jane Q Reviewer"}


def test_url_passwords_scrubbed_in_free_text() -> None:
    assert (
        scrub_text("GET https://user:pa55word@host/x and ssh://git@host")
        == "GET https://user:***@host/x and ssh://git@host"
    )
    assert scrub("proxy=http://a:bcdefgh@p:1/", set())[0] == "proxy=http://a:***REDACTED***@p:1/"

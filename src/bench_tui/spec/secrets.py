"""Secrets: expanded for use, scrubbed by value from every output.

The loader registers here every value a ``${VAR}`` brought in from the environment (``spec.interp.
secret_values``: wherever it sits in the spec, e.g. ``"--api-key=${TOKEN}"`` in a command) and every URL
password (``scheme://user:PASSWORD@host``). ``redact(obj)`` replaces the values of secret-like keys
(``SECRET_KEY_RE``: ``api_key``, ``token``, ``HF_TOKEN``, ``password`` ...) with ``"***"`` and every
registered value and URL password inside any string; ``scrub_text`` does the same to free text and
``scrub_json_line`` to an encoded event (inside strings only). The event log, the engine log writer, the run
store and the CLI's error printer use them; reports and bundles use ``reports.scrub`` on top.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import msgspec

REDACTED = "***"

# searched (re.search) in a key name
SECRET_KEY_RE = re.compile(
    r"(?i)(api[_-]?key|apikey|access[_-]?key|private[_-]?key|(^|[_-])key$|token(?!s|izer)|secret|passw(or)?d|passphrase"
    r"|credential|authorization)"
)

_MIN_SECRET_LEN = 4
_lock = threading.Lock()
_known: set[str] = set()


def is_secret_key(key: object) -> bool:
    return isinstance(key, str) and SECRET_KEY_RE.search(key) is not None


def register_secret(value: str) -> bool:
    """Remember an expanded secret value so ``redact`` and ``scrub_text`` replace it wherever it shows up.
    False when the value is too short to scrub safely (it would garble ordinary text)."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET_LEN and value != REDACTED:
        with _lock:
            _known.add(value)
        return True
    return False


def known_secrets() -> frozenset[str]:
    with _lock:
        return frozenset(_known)


# `scheme://user:password@`: the password is replaced whatever it is (written here, not from a library:
# urllib.parse only splits one URL at a time and we scan free text)
USERINFO_RE = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^/@\s:\"']*:)(?P<pw>[^/@\s\"']+)@")


def _scrub_str(text: str, secrets: frozenset[str]) -> str:
    for s in sorted(secrets, key=len, reverse=True):
        if s in text:
            text = text.replace(s, REDACTED)
    if "://" in text and "@" in text:
        text = USERINFO_RE.sub(lambda m: m.group("head") + REDACTED + "@", text)
    return text


def scrub_text(text: str, extra: set[str] | frozenset[str] | None = None) -> str:
    """``text`` with every registered secret value (and ``extra``) and URL passwords replaced by ``***``:
    the one scrubber for free text that is about to be written (event log, console, errors)."""
    secrets = known_secrets() | frozenset(s for s in (extra or ()) if len(s) >= _MIN_SECRET_LEN)
    return _scrub_str(text, secrets)


def scrub_json_line(line: bytes) -> bytes:
    """One encoded JSON document with every registered secret and URL password replaced inside its strings
    (never inside a number: a numeric secret must not corrupt a timestamp). Returns ``line`` itself (the same
    object) when there is nothing to replace, which is the cheap common case."""
    secrets = known_secrets()
    needles = [n for s in secrets for n in (s.encode(), msgspec.json.encode(s)[1:-1])]
    if not any(n in line for n in needles) and not (b"://" in line and b"@" in line):
        return line
    try:
        doc = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return _scrub_str(line.decode("utf-8", "replace"), secrets).encode()
    clean = _scrub_strings(doc, secrets)
    out = msgspec.json.encode(clean)
    return line if clean == doc else out


def _scrub_strings(obj: Any, secrets: frozenset[str]) -> Any:
    if isinstance(obj, str):
        return _scrub_str(obj, secrets)
    if isinstance(obj, dict):
        return {_scrub_strings(k, secrets): _scrub_strings(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub_strings(v, secrets) for v in obj]
    return obj


def redact(obj: Any, extra: set[str] | frozenset[str] | None = None) -> Any:
    """A copy of ``obj`` (dicts, lists, tuples, strings, msgspec Structs) with secrets replaced by ``***``.

    Structs come back as plain builtins (``msgspec.to_builtins``)."""
    secrets = known_secrets() | frozenset(s for s in (extra or ()) if len(s) >= _MIN_SECRET_LEN)
    return _redact(obj, secrets)


def _redact(obj: Any, secrets: frozenset[str]) -> Any:
    if isinstance(obj, msgspec.Struct):
        obj = msgspec.to_builtins(obj)
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if is_secret_key(k) and isinstance(v, str | int | float) and not isinstance(v, bool) and v != "":
                out[k] = REDACTED
            else:
                out[k] = _redact(v, secrets)
        return out
    if isinstance(obj, list | tuple):
        items = [_redact(v, secrets) for v in obj]
        # `--api-key VALUE` in an argv list
        for i in range(len(items) - 1):
            if (
                isinstance(items[i], str)
                and items[i].startswith("-")
                and is_secret_key(items[i].lstrip("-"))
                and isinstance(items[i + 1], str)
                and not items[i + 1].startswith("-")
            ):
                items[i + 1] = REDACTED
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, str) and secrets:
        return _scrub_str(obj, secrets)
    return obj

"""Secret-like spec fields: expanded for use, redacted for every output.

A field is secret-like when its key matches ``SECRET_KEY_RE`` (``api_key``, ``token``, ``HF_TOKEN``,
``password``, ``openai_key``, ``api-key`` ...). The loader expands ``${VAR}`` in such fields so the runner
can use the value, and registers each expanded value here; ``redact(obj)`` then replaces secret-keyed
values with ``"***"`` and every occurrence of a registered value anywhere in strings.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import msgspec

REDACTED = "***"

# searched (re.search) in a key name
SECRET_KEY_RE = re.compile(
    r"(?i)(api[_-]?key|apikey|access[_-]?key|private[_-]?key|(^|[_-])key$|token|secret|passw(or)?d|passphrase"
    r"|credential|authorization)"
)

_MIN_SECRET_LEN = 4
_lock = threading.Lock()
_known: set[str] = set()


def is_secret_key(key: object) -> bool:
    return isinstance(key, str) and SECRET_KEY_RE.search(key) is not None


def register_secret(value: str) -> None:
    """Remember an expanded secret value so ``redact`` scrubs it wherever it shows up."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET_LEN:
        with _lock:
            _known.add(value)


def known_secrets() -> frozenset[str]:
    with _lock:
        return frozenset(_known)


def _scrub_str(text: str, secrets: frozenset[str]) -> str:
    for s in sorted(secrets, key=len, reverse=True):
        if s in text:
            text = text.replace(s, REDACTED)
    return text


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
            if isinstance(items[i], str) and items[i].startswith("-") and is_secret_key(items[i].lstrip("-")) \
                    and isinstance(items[i + 1], str) and not items[i + 1].startswith("-"):
                items[i + 1] = REDACTED
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, str) and secrets:
        return _scrub_str(obj, secrets)
    return obj

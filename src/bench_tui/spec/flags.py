"""Engine ``args`` mappings -> command-line flags.

Rules (also in schema.py's docstring): a key is a flag name as the engine spells it, without dashes
(``kv-cache-dtype``) or with them (``-ngl``, ``--model``: kept as written). ``true`` renders a bare flag,
``false``/``null`` drops it, a list repeats the flag once per item, a mapping renders as compact JSON.
The key ``_`` holds positional arguments (a string or a list), placed first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

POSITIONAL = "_"


def flag_name(key: str) -> str:
    return key if key.startswith("-") else f"--{key}"


def _scalar(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def render_flags(args: Mapping[str, Any]) -> list[str]:
    """Render an args mapping to argv items, in mapping order (positional ``_`` first)."""
    out: list[str] = []
    pos = args.get(POSITIONAL)
    if pos is not None:
        out.extend(_scalar(p) for p in (pos if isinstance(pos, list) else [pos]))
    for key, value in args.items():
        if key == POSITIONAL or value is None or value is False:
            continue
        name = flag_name(key)
        if value is True:
            out.append(name)
        elif isinstance(value, list):
            for item in value:
                out.extend([name, _scalar(item)])
        elif isinstance(value, dict):
            out.extend([name, json.dumps(value, separators=(",", ":"), sort_keys=False)])
        else:
            out.extend([name, _scalar(value)])
    return out


def _norm(key: str) -> str:
    return key.lstrip("-")


def merge_args(base: Mapping[str, Any], override: Mapping[str, Any] | None) -> dict[str, Any]:
    """Variant args over engine args. A key matches with or without dashes; ``null`` in the override
    removes the inherited flag (it is dropped from the result). Order: base order, then new keys."""
    merged: dict[str, Any] = dict(base)
    if not override:
        return merged
    by_norm = {_norm(k): k for k in merged}
    for key, value in override.items():
        existing = by_norm.get(_norm(key))
        if existing is not None:
            if value is None:
                del merged[existing]
                del by_norm[_norm(key)]
            else:
                merged[existing] = value
        elif value is not None:
            merged[key] = value
            by_norm[_norm(key)] = key
    return merged

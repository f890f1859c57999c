"""Secret scrubbing for everything reports and bundles write.

The runner already redacts what it records; this is the second line of defence: before any report, bundle
member or log copy is written, the text is scanned for
- the values of secret-like environment variables of this process (``*_API_KEY``, ``*TOKEN*``, ...),
- the values of ``${VAR}`` references in the spec that sit in an api_key/token/secret/password-like field,
- literal values of such fields in the spec,
- well-known key shapes (``sk-...``, ``hf_...``, ``ghp_...``, ``Bearer ...``),
and each hit is replaced by ``***REDACTED***``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from bench_tui.spec.interp import InterpError, expand_str, secret_values, userinfo_passwords
from bench_tui.spec.secrets import USERINFO_RE, is_secret_key, known_secrets
from bench_tui.spec.yamlguard import safe_load_bounded

REDACTED = "***REDACTED***"
_MIN_LEN = 6

# "auth" only as a word of its own (AUTH, x-auth-token, auth_header): "author" and "authority" are not secrets
SECRET_NAME_RE = re.compile(
    r"(?i)(api[_-]?key|apikey|token|secret|passw(or)?d|credential|authorization"
    r"|(^|[_-])auth($|[_-])|private[_-]?key)"
)
_SHAPES = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxox[abpr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._\-+/=]{8,}"),
]
# `--api-key VALUE`, `api_key=VALUE`, `"api_key": "VALUE"`, `token: VALUE` (exact secret-ish key names only)
_NAMES = (
    r"(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|hf[_-]?token|token|secret|client[_-]?secret|"
    r"password|passwd)"
)
_KEYED = re.compile(
    rf"""(?i)(?P<pre>--{_NAMES}(?:\s+|=)["']?|\b{_NAMES}["']?\s*[:=]\s*["']?)"""
    r"""(?P<val>(?!\$\{)(?!\*\*\*)[A-Za-z0-9._~+/=\-]{8,})"""
)
_SPEC_FIELD_RE = re.compile(
    r"""(?im)(?:^|[\s{,])["']?(?P<key>[A-Za-z0-9_\-]+)["']?\s*:\s*["']?(?P<val>\$\{[^}]*\}|[^"'\s#,}]+)["']?"""
)
_VAR_RE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}")


def _is_secret_name(name: str) -> bool:
    return is_secret_key(name) or bool(SECRET_NAME_RE.search(name))


def _yaml_pairs(text: str) -> list[tuple[str, str]] | None:
    """(key, string value) for every mapping entry of a YAML document; None when it does not parse."""
    try:
        doc = safe_load_bounded(text)  # a bundle's spec may be an alias bomb
    except Exception:  # noqa: BLE001 - any parse problem: the regex fallback
        return None
    out: list[tuple[str, str]] = []
    stack: list[object] = [doc]
    seen: set[int] = set()
    while stack and len(out) < 100000:
        node = stack.pop()
        if id(node) in seen:  # an alias: the same object again
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, str | int | float) and not isinstance(v, bool):
                    out.append((str(k), str(v)))
                else:
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
    return out


def collect_secrets(spec_texts: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> set[str]:
    """Values that must never appear in an output."""
    env = os.environ if environ is None else environ
    out: set[str] = set()
    for k, v in env.items():
        if v and len(v) >= _MIN_LEN and _is_secret_name(k):
            out.add(v)
    for text in spec_texts:
        pairs = _yaml_pairs(text or "")
        if pairs is None:
            pairs = [(m.group("key"), m.group("val")) for m in _SPEC_FIELD_RE.finditer(text or "")]
        for key, val in pairs:
            if not _is_secret_name(key):
                continue
            for ref in _VAR_RE.finditer(val):
                real = env.get(ref.group("name"))
                if real and len(real) >= _MIN_LEN:
                    out.add(real)
            if not _VAR_RE.search(val) and len(val) >= _MIN_LEN and val not in ("null", "None", "***"):
                out.add(val)
        for ref in _VAR_RE.finditer(text or ""):
            if _is_secret_name(ref.group("name")):
                real = env.get(ref.group("name"))
                if real and len(real) >= _MIN_LEN:
                    out.add(real)
        out |= _interpolated(text or "", env)
    out |= known_secrets()  # what the loader of this process registered
    out.discard(REDACTED)
    return out


def _interpolated(text: str, env: Mapping[str, str]) -> set[str]:
    """The loader's rule (spec.interp.secret_values) applied to a spec text: every value of this environment
    that a ``${VAR}`` of the spec would bring in, and URL passwords."""
    try:
        doc = safe_load_bounded(text)
    except Exception:  # noqa: BLE001 - not YAML (or a bomb): the regexes above did what they could
        return userinfo_passwords(text)
    out: set[str] = set()
    stack: list[tuple[tuple[object, ...], object]] = [((), doc)]
    seen: set[int] = set()
    while stack:
        kp, node = stack.pop()
        if isinstance(node, dict | list):
            if id(node) in seen:
                continue
            seen.add(id(node))
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend(((*kp, k), v) for k, v in items)
        elif isinstance(node, str):
            used: list[tuple[str, str]] = []
            try:
                expanded = expand_str(node, env, used) if "$" in node else node
            except InterpError:
                continue
            out |= {v for v in secret_values(kp, used, expanded) if len(v) >= 4}
    return out


def scrub(text: str, secrets: Iterable[str] = ()) -> tuple[str, int]:
    """(scrubbed text, number of replacements)."""
    n = 0
    for s in sorted(set(secrets), key=len, reverse=True):
        if s and s in text:
            n += text.count(s)
            text = text.replace(s, REDACTED)
    for rx in _SHAPES:
        text, k = rx.subn(REDACTED, text)
        n += k
    hits = [0]

    def userinfo(m: re.Match[str]) -> str:  # scheme://user:PASSWORD@
        if m.group("pw") in (REDACTED, "***"):
            return m.group(0)
        hits[0] += 1
        return m.group("head") + REDACTED + "@"

    text = USERINFO_RE.sub(userinfo, text)
    n += hits[0]
    text, k = _KEYED.subn(lambda m: m.group("pre") + REDACTED, text)
    return text, n + k


def find_secrets(text: str, secrets: Iterable[str] = ()) -> list[str]:
    """What ``scrub`` would replace (for refusing instead of scrubbing)."""
    hits = [s for s in set(secrets) if s and s in text]
    for rx in _SHAPES:
        hits.extend(m.group(0) for m in rx.finditer(text))
    hits.extend(m.group("pw") for m in USERINFO_RE.finditer(text) if m.group("pw") not in (REDACTED, "***"))
    hits.extend(m.group("val") for m in _KEYED.finditer(text))
    return hits

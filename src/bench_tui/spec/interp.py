"""``${VAR}`` interpolation (Compose-like) on the parsed YAML tree.

- ``${VAR}``: the variable's value; an error if it is not set.
- ``${VAR:-default}``: the default when VAR is unset or empty; ``${VAR-default}``: only when unset.
- ``$$``: a literal ``$``. A ``$`` not followed by ``{`` or ``$`` is kept as is.

Only string scalars (values, not keys) are interpolated. Every value brought in from the environment is
registered with ``bench_tui.spec.secrets`` (``secret_values`` says which), as are URL passwords, so that
every output scrubs them by value. An unquoted scalar is typed after expansion as
YAML would type it (``port: ${PORT:-8000}`` is the integer 8000); a quoted one stays a string.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from bench_tui.spec.secrets import USERINFO_RE, is_secret_key, register_secret

_VAR_RE = re.compile(r"\$\$|\$\{([^}]*)\}|\$\{")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class InterpError(Exception):
    def __init__(self, message: str, offset: int = 0) -> None:
        self.offset = offset
        super().__init__(message)


def expand_str(
    text: str, env: Mapping[str, str] | None = None, used: list[tuple[str, str]] | None = None
) -> str:
    """Expand one string. Raises InterpError (with the offset of the bad ``${``). ``used`` collects
    (variable name, value) for every substitution that came from the environment (not from a default)."""
    env = os.environ if env is None else env

    def from_env(name: str, value: str) -> str:
        if used is not None and value:
            used.append((name, value))
        return value

    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        body = m.group(1)
        if body is None:  # `${` without its `}`
            raise InterpError(
                "unclosed '${': a variable reference is ${NAME} or ${NAME:-default}; add the '}' "
                "(or write '$$' for a literal '$')",
                m.start(),
            )
        name, op, default = body, "", ""
        for sep in (":-", "-"):
            if sep in body:
                name, default = body.split(sep, 1)
                op = sep
                break
        if not _NAME_RE.match(name):
            raise InterpError(
                f"bad variable reference '${{{body}}}'; use ${{NAME}} or ${{NAME:-default}}", m.start()
            )
        value = env.get(name)
        if op == ":-":
            return from_env(name, value) if value else default
        if op == "-":
            return from_env(name, value) if value is not None else default
        if value is None:
            raise InterpError(
                f"environment variable {name} is not set; set it or write ${{{name}:-default}}", m.start()
            )
        return from_env(name, value)

    return _VAR_RE.sub(repl, text)


def _retyped(text: str) -> Any:
    """A plain scalar's value as YAML types it (int, float, bool, null), else the text itself."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, bool | int | float) else text


# Fields whose interpolated value is descriptive, shown in every report and needed there (a model path, a
# host): a value from ${VAR} there is not scrubbed unless the variable's name is secret-like.
_DESCRIPTIVE_KEYS = frozenset(
    {
        "model",
        "served_model_name",
        "host",
        "port",
        "base_url",
        "runs_dir",
        "chat_template",
        "pack",
        "subset",
        "name",
        "title",
        "health_path",
        "kind",
    }
)
_MIN_VALUE_LEN = (
    6  # shorter values of non-secret-named variables ("fast", "/root") would scrub ordinary words
)


def _is_plain_value(value: str) -> bool:
    """A number or boolean (``8000``, ``true``): never worth scrubbing, and scrubbing it would garble data."""
    return _retyped(value) is not value if value.strip() else True


def secret_values(key_path: tuple[Any, ...], used: list[tuple[str, str]], expanded: str) -> set[str]:
    """The values of one interpolated string that outputs must never show: every value that came from the
    environment (the variable's name does not matter: ``"--api-key=${T}"`` in a command is as secret as an
    ``api_key``), except short or numeric ones and descriptive fields (model, host, ...) of variables whose
    names are not secret-like; plus the password of any ``scheme://user:password@`` in the result."""
    key = next((k for k in reversed(key_path) if isinstance(k, str)), "")
    out: set[str] = set()
    for name, value in used:
        if is_secret_key(name) or is_secret_key(key):
            out.add(value)
        elif len(value) >= _MIN_VALUE_LEN and not _is_plain_value(value) and key not in _DESCRIPTIVE_KEYS:
            out.add(value)
    out.update(userinfo_passwords(expanded))
    return out


def userinfo_passwords(text: str) -> set[str]:
    """Passwords in ``scheme://user:password@host`` URLs of ``text``."""
    return {m.group("pw") for m in USERINFO_RE.finditer(text) if "${" not in m.group("pw")}


def interpolate_tree(
    tree: Any,
    env: Mapping[str, str] | None = None,
    path: tuple[Any, ...] = (),
    plain: Callable[[tuple[Any, ...]], bool] | None = None,
) -> tuple[Any, list[tuple[tuple[Any, ...], str, int]], set[str]]:
    """Expand every string value of a parsed YAML tree. ``plain(path)`` says whether the scalar at a path was
    unquoted in the YAML: those are re-typed after expansion (secret-like fields never are).

    Returns (new tree, errors as (key path, message, offset), expanded secret values)."""
    errors: list[tuple[tuple[Any, ...], str, int]] = []
    secrets: set[str] = set()

    def walk(node: Any, p: tuple[Any, ...], secret: bool) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*p, k), secret or is_secret_key(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, (*p, i), secret) for i, v in enumerate(node)]
        if isinstance(node, str) and "$" in node:
            used: list[tuple[str, str]] = []
            try:
                out = expand_str(node, env, used)
            except InterpError as exc:
                errors.append((p, str(exc), exc.offset))
                return node
            found = secret_values(p, used, out)
            if secret and out and out != node:
                found.add(out)
            for value in found:
                if register_secret(value):
                    secrets.add(value)
            if not secret and "${" in node and plain is not None and plain(p):
                return _retyped(out)
            return out
        if isinstance(node, str) and "://" in node:
            for value in userinfo_passwords(node):
                if register_secret(value):
                    secrets.add(value)
        return node

    return walk(tree, path, False), errors, secrets

"""Comment-preserving edits of a spec file: add or remove items under ``grading.overrides``.

The spec is a hand-edited YAML file, so a round trip through a YAML library (which drops comments and
reorders keys) is not acceptable. These functions edit the text line by line: only the lines of the
override item being added or removed change; everything else (comments, blank lines, key order, quoting)
is kept byte for byte. The result is parsed again before it is written; a file is never left half-edited.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml

from bench_tui.spec.schema import Override

_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")
_ITEM = re.compile(r"^(\s*)-(\s+|$)")
_FIELD_ORDER = (
    "scenario",
    "engine",
    "variant",
    "verdict",
    "raw_verdict",
    "reason",
    "author",
    "date",
    "transcript_sha256",
)


class EditError(ValueError):
    """The spec could not be edited (message meant for the user)."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _strip_comment(value: str) -> str:
    # a trailing " # comment" after a plain value (good enough for `key:` / `key: []` / `key: {}` lines)
    m = re.search(r"\s#", value)
    return (value[: m.start()] if m else value).strip()


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        if re.fullmatch(r"[A-Za-z0-9_.\-/]+", v) and v.lower() not in (
            "yes",
            "no",
            "true",
            "false",
            "null",
            "on",
            "off",
            "~",
        ):
            try:
                if isinstance(yaml.safe_load(v), str):
                    return v
            except yaml.YAMLError:
                pass
        return json.dumps(v, ensure_ascii=False)
    if v is None:
        return "null"
    return json.dumps(v)


def _render_item(override: Override | dict[str, Any], indent: int) -> list[str]:
    data = override if isinstance(override, dict) else _override_dict(override)
    keys = [k for k in _FIELD_ORDER if data.get(k) not in (None, "")] + [
        k for k in data if k not in _FIELD_ORDER and data[k] not in (None, "")
    ]
    pad = " " * indent
    lines = []
    for i, k in enumerate(keys):
        lead = f"{pad}- " if i == 0 else f"{pad}  "
        lines.append(f"{lead}{k}: {_scalar(data[k])}\n")
    return lines


def _override_dict(o: Override) -> dict[str, Any]:
    return {f: getattr(o, f) for f in o.__struct_fields__}


def _block_end(lines: list[str], start: int, parent_indent: int) -> int:
    """Index after the last content line of the block that starts below ``start``."""
    last = start
    for i in range(start + 1, len(lines)):
        ln = lines[i]
        if not _is_content(ln):
            continue
        if _indent(ln) <= parent_indent:
            break
        last = i
    end = last + 1
    return end


def _find_grading(lines: list[str]) -> int | None:
    for i, ln in enumerate(lines):
        m = _TOP_KEY.match(ln)
        if m and m.group(1) == "grading":
            return i
    return None


def _child_key(lines: list[str], start: int, end: int, key: str) -> tuple[int | None, int]:
    """(line of `key:` among the direct children of the block lines[start+1:end], child indent)."""
    child_indent = -1
    for i in range(start + 1, end):
        ln = lines[i]
        if not _is_content(ln):
            continue
        ind = _indent(ln)
        if child_indent < 0:
            child_indent = ind
        if ind != child_indent:
            continue
        m = re.match(r"^\s*([A-Za-z_][\w-]*)\s*:(.*)$", ln)
        if m and m.group(1) == key:
            return i, child_indent
    return None, (child_indent if child_indent > 0 else 2)


def _items(lines: list[str], key_line: int, end: int) -> list[tuple[int, int]]:
    """(start, end) line ranges of the list items under the `overrides:` key."""
    key_indent = _indent(lines[key_line])
    stop = block_end_for_items(lines, key_line, key_indent)
    # YAML allows the `- ` at the key's own indent ("indentless" sequences)
    starts = []
    item_indent: int | None = None
    for i in range(key_line + 1, stop):
        ln = lines[i]
        if not _is_content(ln):
            continue
        m = _ITEM.match(ln)
        if m and (item_indent is None or len(m.group(1)) == item_indent):
            if item_indent is None:
                item_indent = len(m.group(1))
            starts.append(i)
    out = []
    for n, s in enumerate(starts):
        e = starts[n + 1] if n + 1 < len(starts) else stop
        # do not swallow trailing comments / blank lines that precede the next item or the block end
        while e - 1 > s and not _is_content(lines[e - 1]):
            e -= 1
        out.append((s, e))
    return out


def block_end_for_items(lines: list[str], key_line: int, key_indent: int) -> int:
    last = key_line
    for i in range(key_line + 1, len(lines)):
        ln = lines[i]
        if not _is_content(ln):
            continue
        ind = _indent(ln)
        if ind < key_indent or (ind == key_indent and not _ITEM.match(ln)):
            break
        last = i
    return last + 1


def _load_overrides(text: str, path: Path) -> list[dict[str, Any]]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise EditError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(doc, dict):
        raise EditError(f"{path}: the spec is not a mapping")
    grading = doc.get("grading") or {}
    if not isinstance(grading, dict):
        raise EditError(f"{path}: grading is not a mapping")
    ovs = grading.get("overrides") or []
    if not isinstance(ovs, list):
        raise EditError(f"{path}: grading.overrides is not a list")
    return ovs


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def add_override_text(text: str, override: Override | dict[str, Any], *, path: Path | str = "<spec>") -> str:
    """The spec text with ``override`` appended to grading.overrides (section created when missing)."""
    path = Path(path)
    before = _load_overrides(text, path)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    g = _find_grading(lines)
    if g is None:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["\n", "grading:\n", "  overrides:\n", *_render_item(override, 4)]
    else:
        inline = _strip_comment(_TOP_KEY.match(lines[g]).group(2))  # type: ignore[union-attr]
        if inline:
            lines = _rewrite_inline_grading(lines, g, inline, override, path)
        else:
            g_end = _block_end(lines, g, 0)
            k, child = _child_key(lines, g, g_end, "overrides")
            if k is None:
                lines[g_end:g_end] = [f"{' ' * child}overrides:\n", *_render_item(override, child + 2)]
            else:
                m = re.match(r"^(\s*overrides\s*:)(.*?)(\n?)$", lines[k])
                assert m is not None
                value = _strip_comment(m.group(2))
                if value in ("[]", "~", "null"):
                    lines[k] = m.group(1) + "\n"
                    lines[k + 1 : k + 1] = _render_item(override, child + 2)
                elif value.startswith("["):
                    raise EditError(
                        f"{path}:{k + 1}: grading.overrides is a flow list; write it as a block "
                        "list (one `- scenario: ...` item per override) to edit it here"
                    )
                else:
                    items = _items(lines, k, g_end)
                    indent = _indent(lines[items[0][0]]) if items else child + 2
                    at = items[-1][1] if items else k + 1
                    lines[at:at] = _render_item(override, indent)
    new = "".join(lines)
    after = _load_overrides(new, path)
    if len(after) != len(before) + 1:
        raise EditError(f"{path}: could not add the override without changing other entries")
    return new


def _rewrite_inline_grading(
    lines: list[str], g: int, inline: str, override: Override | dict[str, Any], path: Path
) -> list[str]:
    # `grading: {alpha: 0.5}` style: re-emit only this one line as a block (nothing else moves)
    try:
        val = yaml.safe_load(inline)
    except yaml.YAMLError as exc:
        raise EditError(f"{path}:{g + 1}: cannot parse grading: {exc}") from exc
    if val is None:
        val = {}
    if not isinstance(val, dict):
        raise EditError(f"{path}:{g + 1}: grading is not a mapping")
    ovs = list(val.pop("overrides", None) or [])
    out = ["grading:\n"]
    for k, v in val.items():
        out.append(f"  {k}: {json.dumps(v)}\n")
    out.append("  overrides:\n")
    for o in ovs:
        out += _render_item(o, 4)
    out += _render_item(override, 4)
    return lines[:g] + out + lines[g + 1 :]


def _matches(item: Any, scenario: str, engine: str | None, variant: str | None) -> bool:
    return (
        isinstance(item, dict)
        and item.get("scenario") == scenario
        and item.get("engine") == engine
        and item.get("variant") == variant
    )


def remove_override_text(
    text: str,
    scenario: str,
    engine: str | None = None,
    variant: str | None = None,
    *,
    path: Path | str = "<spec>",
) -> tuple[str, int]:
    """(new text, number removed): drop the overrides of ``scenario`` with exactly this engine/variant scope."""
    path = Path(path)
    before = _load_overrides(text, path)
    want = sum(1 for o in before if _matches(o, scenario, engine, variant))
    if want == 0:
        return text, 0
    lines = text.splitlines(keepends=True)
    g = _find_grading(lines)
    if g is None or _strip_comment(_TOP_KEY.match(lines[g]).group(2)):  # type: ignore[union-attr]
        raise EditError(f"{path}: grading is written inline; write it as a block to edit overrides here")
    g_end = _block_end(lines, g, 0)
    k, _child = _child_key(lines, g, g_end, "overrides")
    if k is None:
        raise EditError(f"{path}: grading.overrides not found")
    items = _items(lines, k, g_end)
    drop: list[tuple[int, int]] = []
    for s, e in items:
        block = "".join(lines[s:e])
        ind = _indent(lines[s])
        dedented = "".join(
            ln[ind:] if len(ln) >= ind and not ln[:ind].strip() else ln.lstrip()
            for ln in block.splitlines(keepends=True)
        )
        try:
            parsed = yaml.safe_load(dedented)
        except yaml.YAMLError:
            continue
        if isinstance(parsed, list) and parsed and _matches(parsed[0], scenario, engine, variant):
            drop.append((s, e))
    for s, e in reversed(drop):
        del lines[s:e]
    if len(drop) == len(items):  # list now empty: keep the key valid
        lines[k] = re.sub(r"overrides\s*:.*?(\n?)$", r"overrides: []\1", lines[k])
    new = "".join(lines)
    after = _load_overrides(new, path)
    if len(after) != len(before) - want or len(drop) != want:
        raise EditError(f"{path}: could not remove the override without touching other entries")
    return new, want


def add_override(path: Path | str, override: Override | dict[str, Any]) -> None:
    """Append ``override`` under grading.overrides of the spec file at ``path`` (comments kept)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    _write(p, add_override_text(text, override, path=p))


def remove_override(
    path: Path | str, scenario: str, engine: str | None = None, variant: str | None = None
) -> int:
    """Remove the overrides of ``scenario`` scoped to exactly ``engine``/``variant``; returns how many."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    new, n = remove_override_text(text, scenario, engine, variant, path=p)
    if n:
        _write(p, new)
    return n


def is_embedded(path: Path | str) -> bool:
    """Whether ``path`` is one of the specs shipped inside the installed package (never written to)."""
    from bench_tui.spec.loader import DATA_DIR

    try:
        return Path(path).resolve().is_relative_to(DATA_DIR.resolve())
    except OSError:
        return False


def save_target(path: Path | str, cwd: Path | str | None = None) -> Path:
    """Where an edited spec is saved: the file itself, or for an embedded spec a copy of the same name in
    the working directory (the installed package is never written)."""
    p = Path(path)
    if not is_embedded(p):
        return p
    return Path(cwd if cwd is not None else Path.cwd()) / p.name

"""Load a spec file: YAML with positions -> ``${VAR}`` interpolation -> validation -> ``Spec``.

Every problem a user can cause becomes one ``file:line:col: message`` line of a ``SpecError`` (never a
traceback), each with a hint: the closest known key for a typo, the expected type, the allowed values,
the valid range, the path that was looked for.

How positions survive: the YAML is composed into nodes (which carry marks), turned into a plain tree
while recording ``key path -> (line, col)`` for every key and value, and validated against the Structs'
type information (``msgspec.inspect``) walking that tree, so each error knows its key path and hence its
position. Only then is the tree converted with ``msgspec.convert``.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import msgspec
import yaml
from msgspec import inspect as mi

from bench_tui.spec.interp import interpolate_tree
from bench_tui.spec.schema import (
    ENGINE_KINDS,
    CommandEngine,
    EngineBase,
    ExternalEngine,
    SessionsWorkload,
    Spec,
    ThroughputWorkload,
    engine_tag,
    spec_type,
)
from bench_tui.spec.secrets import scrub_text
from bench_tui.spec.yamlguard import (
    MAX_DOC_BYTES,
    TrackingLoader,
    YamlLimitError,
    check_expansion,
    check_size,
    safe_load_bounded,
)

KeyPath = tuple[Any, ...]
Pos = tuple[int, int]

MAX_SWEEP_POINTS = 10_000  # points of one throughput workload (each is repetitions x concurrency requests)

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


Check = Callable[["LoadedSpec", "Problems"], None]
Plugins = Sequence[type[EngineBase]]  # plugin engine kinds' Structs, handed down by the composing layer


class SpecError(Exception):
    """A spec that cannot be used. ``str(err)``: one ``file:line:col: message`` line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass
class LoadedSpec:
    spec: Spec
    path: Path
    dir: Path
    raw_text: str  # as given: ${VAR} references (and so secrets) unexpanded
    source_map: dict[KeyPath, Pos] = field(default_factory=dict)  # key path -> (line, col) of the value
    key_map: dict[KeyPath, Pos] = field(default_factory=dict)  # key path -> (line, col) of the key
    secrets: set[str] = field(default_factory=set)  # expanded values of secret-like fields
    tree: Any = None  # the interpolated plain tree the spec was converted from

    def pos(self, path: KeyPath, *, key: bool = False) -> Pos:
        """(line, col), 1-based, of the value (or key) at ``path``, else of its nearest ancestor."""
        return _lookup(self.source_map, self.key_map, tuple(path), key)

    def where(self, path: KeyPath, *, key: bool = False) -> str:
        line, col = self.pos(path, key=key)
        return f"{self.path}:{line}:{col}"


def default_spec_path() -> Path:
    """The embedded default spec (runs on a laptop CPU)."""
    return DATA_DIR / "specs" / "local-cpu.yaml"


def load_spec(
    path: Path | str,
    *,
    env: Mapping[str, str] | None = None,
    checks: Sequence[Check] = (),
    engines: Plugins = (),
) -> LoadedSpec:
    """Load and check a spec file. ``checks`` run after the spec's own checks, with the same problems
    collector (so their errors carry ``file:line:col`` too): the layers above add what needs more than the
    spec (e.g. ``bench_tui.graders.speccheck.check_packs``; ``bench_tui.runner.orchestration.planner.load_spec`` passes it).
    ``engines``: the plugin engine kinds accepted beside the built-in ones (``schema.spec_type``)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_DOC_BYTES + 1)  # never more: a spec path may name a huge file or /dev/zero
    except FileNotFoundError:
        raise SpecError([f"{p}:1:1: spec file not found (looked for {p.resolve()})"]) from None
    except IsADirectoryError:
        raise SpecError(
            [f"{p}:1:1: is a directory, not a spec file; give the path of a .yaml file"]
        ) from None
    except OSError as exc:
        raise SpecError([f"{p}:1:1: cannot read the spec: {exc.strerror or exc}"]) from None
    if len(data) > MAX_DOC_BYTES:
        raise SpecError(
            [
                f"{p}:1:1: the file is over {MAX_DOC_BYTES} bytes; a spec is limited to that (real ones "
                "are a few KB): is this the right file?"
            ]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            [f"{p}:{line}:{col}: not UTF-8 text (byte {data[exc.start]:#04x}); save the file as UTF-8"]
        ) from None
    return load_spec_text(text, p, env=env, checks=checks, engines=engines)


def load_stored_spec(path: Path | str, *, engines: Plugins = ()) -> Spec:
    """The spec a run directory (or bundle) stored. Loaded strictly when it can be; else converted as written,
    because a stored spec may name packs and templates beside the original spec, ``${VAR}``s that are not
    set on this machine and plugin engine kinds that are not installed here, and reading a finished run needs
    none of them (an engine of a kind unknown here keeps its kind and the fields every engine has). Raises
    the strict ``SpecError`` when the text does not convert at all."""
    try:
        return load_spec(path, engines=engines).spec
    except SpecError as exc:
        try:
            tree = safe_load_bounded(Path(path).read_text(encoding="utf-8"))
            return msgspec.convert(tree, spec_type((*engines, *_stand_ins(tree, engines))))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, YamlLimitError, msgspec.ValidationError):
            raise exc from None


def _stand_ins(tree: Any, engines: Plugins) -> tuple[type[EngineBase], ...]:
    """For each engine kind in ``tree`` that is neither built in nor in ``engines``: a stand-in Struct."""
    known = {*ENGINE_KINDS, *(engine_tag(c) for c in engines)}
    found = tree.get("engines") if isinstance(tree, dict) else None
    kinds = (
        {e.get("kind") for e in found.values() if isinstance(e, dict)} if isinstance(found, dict) else set()
    )
    return tuple(_stand_in(k) for k in sorted(k for k in kinds if isinstance(k, str) and k not in known))


@functools.cache
def _stand_in(kind: str) -> type[EngineBase]:
    """An ``EngineBase`` Struct tagged ``kind`` that ignores the fields it does not know (one per kind)."""
    return cast(
        type[EngineBase],
        msgspec.defstruct(f"Unknown_{kind}", [], bases=(EngineBase,), tag=kind, forbid_unknown_fields=False),
    )


def load_spec_text(
    text: str,
    path: Path | str = "<spec>",
    *,
    env: Mapping[str, str] | None = None,
    checks: Sequence[Check] = (),
    engines: Plugins = (),
) -> LoadedSpec:
    p = Path(path)
    spec_cls = spec_type(tuple(engines))
    name = str(path)
    problems = Problems(name)
    tree, smap, kmap, styles = _compose(text, problems)
    problems.maps = (smap, kmap)
    problems.raise_if_any()

    if not isinstance(tree, dict):
        got = "nothing (the file is empty or only comments)" if tree is None else _kind(tree)
        problems.add((), f"a spec is a mapping (version, name, engines, workloads, ...), got {got}")
        problems.raise_if_any()

    tree, ierrs, secrets = interpolate_tree(
        tree, os.environ if env is None else env, plain=lambda kp: styles.get(kp, ("", False))[0] is None
    )
    problems.secrets = secrets
    for kp, msg, offset in ierrs:
        line, col = _lookup(smap, kmap, kp, False)
        style, oneline = styles.get(kp, (None, False))
        if oneline:
            col += offset + (1 if style in ("'", '"') else 0)
        problems.add_at(line, col, f"{_dotted(kp)}: {msg}")
    problems.raise_if_any()

    _check(tree, _spec_info(spec_cls), (), problems)
    problems.raise_if_any()

    try:
        spec = msgspec.convert(tree, spec_cls)
    except msgspec.ValidationError as exc:  # something the walker above did not foresee
        msg, kp = _split_msgspec_error(str(exc))
        problems.add(kp, f"{_dotted(kp) or 'spec'}: {msg}")
        problems.raise_if_any()
        raise  # pragma: no cover - add() always records

    loaded = LoadedSpec(
        spec=spec,
        path=p,
        dir=(p.parent if str(p.parent) else Path(".")).resolve(),
        raw_text=text,
        source_map=smap,
        key_map=kmap,
        secrets=secrets,
        tree=tree,
    )
    _semantic_checks(loaded, problems)
    for check in checks:
        check(loaded, problems)
    problems.raise_if_any()
    return loaded


# --------------------------------------------------------------------------------------------- problems


class Problems:
    """Collects problems as `file:line:col: message` lines (positions from the spec's source map)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[tuple[int, int, str]] = []
        self.maps: tuple[dict[KeyPath, Pos], dict[KeyPath, Pos]] = ({}, {})
        self.secrets: set[str] = set()  # interpolated values: an error message quoting one must not show it

    def add_at(self, line: int, col: int, msg: str) -> None:
        self.items.append((line, col, msg))

    def add(self, kp: KeyPath, msg: str, *, key: bool = False) -> None:
        line, col = _lookup(self.maps[0], self.maps[1], kp, key)
        self.add_at(line, col, msg)

    def raise_if_any(self) -> None:
        if self.items:
            seen: set[str] = set()
            lines = []
            for line, col, msg in sorted(self.items, key=lambda t: (t[0], t[1])):
                s = (
                    scrub_text(f"{self.name}:{line}:{col}: {msg}", self.secrets)
                    if self.secrets
                    else f"{self.name}:{line}:{col}: {msg}"
                )
                if s not in seen:
                    seen.add(s)
                    lines.append(s)
            raise SpecError(lines)


def _lookup(smap: dict[KeyPath, Pos], kmap: dict[KeyPath, Pos], kp: KeyPath, key: bool) -> Pos:
    first = kmap if key else smap
    for m in (first, smap):
        p = kp
        while True:
            if p in m:
                return m[p]
            if not p:
                break
            p = p[:-1]
            m = smap
    return (1, 1)


def _dotted(kp: KeyPath) -> str:
    out = ""
    for k in kp:
        if isinstance(k, int):
            out += f"[{k}]"
        else:
            out += ("." if out else "") + str(k)
    return out


def hint_names(word: str, choices: list[str], what: str = "allowed") -> str:
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    if not choices:
        return f"there are none ({what})"
    return f"{what}: {', '.join(choices)}"


# --------------------------------------------------------------------------------------------- YAML


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


def _mark(node: yaml.Node) -> Pos:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _compose(
    text: str, problems: Problems
) -> tuple[Any, dict[KeyPath, Pos], dict[KeyPath, Pos], dict[KeyPath, tuple[str | None, bool]]]:
    smap: dict[KeyPath, Pos] = {}
    kmap: dict[KeyPath, Pos] = {}
    styles: dict[KeyPath, tuple[str | None, bool]] = {}
    try:
        check_size(text)
    except YamlLimitError as exc:
        problems.add_at(exc.line, exc.col, exc.message)
        return None, smap, kmap, styles
    try:
        loader = TrackingLoader(text)  # checks for unprintable characters first
    except yaml.reader.ReaderError as exc:
        before = text[: exc.position]
        line, col = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        problems.add_at(
            line,
            col,
            f"invalid YAML: control character U+{int(exc.character):04X} is not allowed; "
            "remove it (is this a text file?)",
        )
        return None, smap, kmap, styles
    try:
        try:
            root = loader.get_single_node()
            check_expansion(root, loader)  # billion laughs: refused before anything walks the aliases
        except YamlLimitError as exc:
            problems.add_at(exc.line, exc.col, exc.message)
            return None, smap, kmap, styles
        except RecursionError:
            problems.add_at(1, 1, "invalid YAML: nested too deeply to read; flatten the document")
            return None, smap, kmap, styles
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or str(exc)
            context = exc.context or ""
            hint = _yaml_hint(problem)
            if "expected a single document" in context:
                problem = "more than one YAML document ('---'); a spec is one document"
                hint = "remove the '---' line and what follows it, or put each spec in its own file"
            elif "quoted scalar" in context and exc.context_mark is not None:
                mark = exc.context_mark  # where the string opened, not the end of the file
                problem = "a quoted string starting here is not closed"
                hint = "add the closing quote"
            line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            problems.add_at(line, col, f"invalid YAML: {problem}" + (f"; {hint}" if hint else ""))
            return None, smap, kmap, styles
        except yaml.YAMLError as exc:
            problems.add_at(1, 1, f"invalid YAML: {exc}")
            return None, smap, kmap, styles
        if root is None:
            return None, smap, kmap, styles

        def build(node: yaml.Node, kp: KeyPath) -> Any:
            smap.setdefault(kp, _mark(node))
            if isinstance(node, yaml.MappingNode):
                try:
                    loader.flatten_mapping(node)  # `<<: *anchor` merge keys
                except yaml.MarkedYAMLError as exc:
                    m = exc.problem_mark
                    problems.add_at(
                        m.line + 1 if m else 1, m.column + 1 if m else 1, f"invalid YAML merge: {exc.problem}"
                    )
                    return {}
                out: dict[Any, Any] = {}
                first: dict[Any, Pos] = {}
                for knode, vnode in node.value:
                    if not isinstance(knode, yaml.ScalarNode):
                        problems.add_at(
                            *_mark(knode),
                            f"{_dotted(kp) or 'spec'}: a key must be a plain "
                            "scalar, not a mapping or list; write `name: value`",
                        )
                        continue
                    try:
                        key = loader.construct_object(knode)
                    except yaml.MarkedYAMLError as exc:
                        problems.add_at(*_mark(knode), f"invalid YAML key: {exc.problem}{_tag_hint(exc)}")
                        continue
                    if key in first:
                        line, _ = first[key]
                        problems.add_at(
                            *_mark(knode),
                            f"duplicate key {key!r} in {_dotted(kp) or 'the spec'}; "
                            f"first defined at line {line}: keep one of them",
                        )
                        continue
                    first[key] = _mark(knode)
                    ckp = (*kp, key)
                    kmap[ckp] = _mark(knode)
                    smap[ckp] = _mark(vnode)
                    out[key] = build(vnode, ckp)
                return out
            if isinstance(node, yaml.SequenceNode):
                items = []
                for i, item in enumerate(node.value):
                    smap[(*kp, i)] = _mark(item)
                    items.append(build(item, (*kp, i)))
                return items
            assert isinstance(node, yaml.ScalarNode)
            styles[kp] = (node.style, node.start_mark.line == node.end_mark.line)
            if node.tag == _TIMESTAMP_TAG:  # dates stay strings (`date: 2026-12-02`)
                return node.value
            try:
                return loader.construct_object(node)
            except yaml.MarkedYAMLError as exc:
                problems.add_at(*_mark(node), f"invalid YAML value: {exc.problem}{_tag_hint(exc)}")
                return None

        return build(root, ()), smap, kmap, styles
    finally:
        loader.dispose()


def _tag_hint(exc: yaml.MarkedYAMLError) -> str:
    if "constructor for the tag" in (exc.problem or ""):
        return "; a spec uses plain YAML: remove the '!' tag (or quote the text if the '!' is meant)"
    return ""


def _yaml_hint(problem: str) -> str:
    p = problem.lower()
    if "tab" in p or "\\t" in p or "\t" in p:
        return "indent with spaces, not tabs"
    if "mapping values are not allowed" in p:
        return "a value containing ': ' needs quotes, or a key is indented wrongly"
    if "could not find expected ':'" in p:
        return "a key is missing its ':' or a quoted string is not closed"
    if "found undefined alias" in p:
        return "define the &anchor before using *alias"
    if "expected <block end>" in p:
        return "check the indentation of this line against the lines above"
    if "found unexpected end of stream" in p:
        return "a quote or bracket is not closed"
    return "check quoting and indentation here"


# --------------------------------------------------------------------------------------------- walking types


@functools.cache
def _spec_info(spec_cls: type[Spec]) -> mi.Type:
    return mi.type_info(spec_cls)


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"a boolean ({str(v).lower()})"
    if isinstance(v, int):
        return f"an integer ({v})"
    if isinstance(v, float):
        return f"a number ({v})"
    if isinstance(v, str):
        s = v if len(v) <= 40 else v[:37] + "..."
        return f"a string ({s!r})"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    return type(v).__name__


def _describe(info: mi.Type) -> str:
    if isinstance(info, mi.Metadata):
        return _describe(info.type)
    if isinstance(info, mi.IntType):
        return "an integer"
    if isinstance(info, mi.FloatType):
        return "a number"
    if isinstance(info, mi.StrType):
        return "a string"
    if isinstance(info, mi.BoolType):
        return "true or false"
    if isinstance(info, mi.NoneType):
        return "null"
    if isinstance(info, mi.LiteralType):
        return "one of " + ", ".join(repr(v) for v in info.values)
    if isinstance(info, mi.DictType | mi.StructType):
        return "a mapping"
    if isinstance(info, mi.ListType):
        return "a list"
    if isinstance(info, mi.UnionType):
        if all(isinstance(t, mi.StructType) for t in info.types):
            return "a mapping"
        parts = [_describe(t) for t in info.types if not isinstance(t, mi.NoneType)]
        seen: list[str] = []
        for x in parts:
            if x not in seen:
                seen.append(x)
        s = " or ".join(seen)
        return s + (" (or null)" if any(isinstance(t, mi.NoneType) for t in info.types) else "")
    return "a value"


def _range_problem(v: int | float, info: mi.IntType | mi.FloatType) -> str | None:
    if info.ge is not None and v < info.ge:
        return f">= {info.ge}"
    if info.gt is not None and v <= info.gt:
        return f"> {info.gt}"
    if info.le is not None and v > info.le:
        return f"<= {info.le}"
    if info.lt is not None and v >= info.lt:
        return f"< {info.lt}"
    return None


def _range_text(info: mi.IntType | mi.FloatType) -> str:
    lo = f">= {info.ge}" if info.ge is not None else f"> {info.gt}" if info.gt is not None else ""
    hi = f"<= {info.le}" if info.le is not None else f"< {info.lt}" if info.lt is not None else ""
    return " and ".join(x for x in (lo, hi) if x)


def _accepts(v: Any, info: mi.Type) -> bool:
    probe = Problems("")
    _check(v, info, (), probe)
    return not probe.items


def _check(v: Any, info: mi.Type, kp: KeyPath, out: Problems) -> None:
    where = _dotted(kp) or "spec"
    if isinstance(info, mi.Metadata):  # a type with a description (plugin kinds' options have them)
        info = info.type
    if isinstance(info, mi.AnyType):
        return
    if isinstance(info, mi.UnionType):
        types = [t.type if isinstance(t, mi.Metadata) else t for t in info.types]  # described members
        structs = [t for t in types if isinstance(t, mi.StructType)]
        if structs and all(t.tag_field for t in structs):
            if v is None and any(isinstance(t, mi.NoneType) for t in types):
                return
            _check_tagged(v, structs, kp, out)
            return
        if any(_accepts(v, t) for t in types):
            return
        # descend into the one container member that matches the value's shape, for precise errors
        for t in types:
            if (isinstance(v, dict) and isinstance(t, mi.DictType | mi.StructType)) or (
                isinstance(v, list) and isinstance(t, mi.ListType)
            ):
                _check(v, t, kp, out)
                return
        for t in types:  # a number out of range in `int | None`
            if (
                isinstance(t, mi.IntType | mi.FloatType)
                and isinstance(v, int | float)
                and not isinstance(v, bool)
            ):
                _check(v, t, kp, out)
                return
        out.add(kp, f"{where}: expected {_describe(info)}, got {_kind(v)}")
        return
    if isinstance(info, mi.StructType):
        if not isinstance(v, dict):
            out.add(kp, f"{where}: expected a mapping, got {_kind(v)}")
            return
        _check_struct(v, info, kp, out)
        return
    if isinstance(info, mi.DictType):
        if not isinstance(v, dict):
            example = _MAPPING_EXAMPLES.get(kp[-1]) if kp and isinstance(kp[-1], str) else None
            if example:
                out.add(kp, f"{where}: expected a mapping, got {_kind(v)}; e.g. {example}")
            else:
                out.add(
                    kp,
                    f"{where}: expected a mapping of names to {_describe(info.value_type)}, got {_kind(v)}",
                )
            return
        for k, item in v.items():
            if not isinstance(k, str):
                out.add((*kp, k), f'{where}: key {k!r} must be a string; quote it ("{k}")', key=True)
                continue
            _check(item, info.value_type, (*kp, k), out)
        return
    if isinstance(info, mi.ListType):
        if not isinstance(v, list):
            hint = f"; write [{v}]" if isinstance(v, int | float | str) and not isinstance(v, bool) else ""
            out.add(
                kp,
                f"{where}: expected a list of {_describe(info.item_type).replace('an ', '').replace('a ', '')}"
                f"s, got {_kind(v)}{hint}",
            )
            return
        if info.max_length is not None and len(v) > info.max_length:
            out.add(
                kp,
                f"{where}: {len(v)} values; at most {info.max_length} are allowed in one list (each "
                "value multiplies the plan): split the sweep into several workloads",
            )
            return
        for i, item in enumerate(v):
            _check(item, info.item_type, (*kp, i), out)
        return
    if isinstance(info, mi.LiteralType):
        if not any(v == x and type(v) is type(x) for x in info.values):
            allowed = [str(x) for x in info.values]
            close = difflib.get_close_matches(str(v), allowed, n=1, cutoff=0.6) if isinstance(v, str) else []
            hint = f"did you mean {close[0]!r}? " if close else ""
            out.add(
                kp,
                f"{where}: {v!r} is not allowed; {hint}allowed values: "
                + ", ".join(repr(x) for x in info.values),
            )
        return
    if isinstance(info, mi.IntType):
        if not isinstance(v, int) or isinstance(v, bool):
            extra = (
                "; write it without quotes" if isinstance(v, str) and v.strip().lstrip("-").isdigit() else ""
            )
            if isinstance(v, str) and re.fullmatch(r"\s*[-+]?\d+(\.\d*)?[eE][-+]?\d+\s*", v):
                extra = "; YAML reads this exponent form as text: write the whole number"
                extra += f" (at most {info.le})" if info.le is not None else ""
            out.add(kp, f"{where}: expected an integer, got {_kind(v)}{extra}")
            return
        rng = _range_problem(v, info)
        if rng:
            out.add(kp, f"{where}: must be {rng}, got {v}" + _range_hint(kp))
        return
    if isinstance(info, mi.FloatType):
        if not isinstance(v, int | float) or isinstance(v, bool):
            out.add(kp, f"{where}: expected a number, got {_kind(v)}")
            return
        if not math.isfinite(v):
            out.add(
                kp,
                f"{where}: must be a finite number, got {v}"
                + (f"; give a bound {_range_text(info)}" if _range_text(info) else "")
                + _range_hint(kp),
            )
            return
        rng = _range_problem(v, info)
        if rng:
            out.add(kp, f"{where}: must be {rng}, got {v}" + _range_hint(kp))
        return
    if isinstance(info, mi.StrType):
        if not isinstance(v, str):
            out.add(
                kp,
                f'{where}: expected a string, got {_kind(v)}; quote it ("{v}")'
                if isinstance(v, int | float | bool)
                else f"{where}: expected a string, got {_kind(v)}",
            )
        return
    if isinstance(info, mi.BoolType):
        if not isinstance(v, bool):
            out.add(kp, f"{where}: expected true or false, got {_kind(v)}")
        return
    if isinstance(info, mi.NoneType):
        if v is not None:
            out.add(kp, f"{where}: expected null, got {_kind(v)}")
        return
    try:  # anything else: let msgspec decide
        msgspec.convert(v, info.cls if hasattr(info, "cls") else object)
    except (msgspec.ValidationError, TypeError) as exc:
        out.add(kp, f"{where}: {exc}")


_MAPPING_EXAMPLES = {
    "engines": "'engines: {llama: {kind: llamacpp, model: ...}}' (a name, then the engine)",
    "workloads": "'workloads: {sweep: {kind: throughput}}' (a name, then the workload)",
    "variants": "'variants: {warm: {args: {enable-prefix-caching: true}}}' (a name, then its overrides)",
    "args": "'args: {ctx-size: 4096, jinja: true}' (flag names without '--', then values)",
    "env": "'env: {HF_HOME: /data/hf}' (variable names, then string values)",
}

_RANGE_HINTS = {
    "depths": "a depth is a token count of context already in the prompt (0 = none)",
    "concurrency": "concurrency is the number of requests in flight (1 = one at a time)",
    "port": "a TCP port is 1..65535",
    "pp": "pp is the prompt length in tokens",
    "tg": "tg is the number of tokens to generate",
    "max_tokens": "max_tokens is a token count",
    "repetitions": "repetitions is how often each point is measured",
    "warmup": "warmup is the number of unmeasured requests before a point",
    "trials": "trials is how often each scenario runs",
    "runs": "runs is how often each prompt runs",
    "parallel": "parallel is the number of scenarios in flight",
    "request_timeout": "seconds one request may take",
    "startup_timeout": "seconds an engine may take to become ready",
    "responsiveness_target_ms": "milliseconds",
    "timeout_s": "seconds the judge may take per request",
}


def _range_hint(kp: KeyPath) -> str:
    for k in reversed(kp):
        if isinstance(k, str):
            h = _RANGE_HINTS.get(k)
            return f" ({h})" if h else ""
    return ""


def _check_tagged(v: Any, structs: list[mi.StructType], kp: KeyPath, out: Problems) -> None:
    where = _dotted(kp) or "spec"
    tag_field = structs[0].tag_field or "kind"
    tags = [str(t.tag) for t in structs]
    if not isinstance(v, dict):
        out.add(
            kp,
            f"{where}: expected a mapping with '{tag_field}: ...' (one of {', '.join(tags)}), got {_kind(v)}",
        )
        return
    if tag_field not in v:
        out.add(kp, f"{where}: missing '{tag_field}'; add '{tag_field}:' with one of {', '.join(tags)}")
        return
    tag = v[tag_field]
    match = [t for t in structs if t.tag == tag]
    if not match:
        hint = hint_names(str(tag), tags, "allowed values")
        if issubclass(structs[0].cls, EngineBase) and not hint.startswith("did you mean"):
            hint += (
                " (another kind comes from a package that declares it in the bench_tui.engines entry points)"
            )
        out.add((*kp, tag_field), f"{where}.{tag_field}: unknown {tag_field} {tag!r}; {hint}")
        return
    _check_struct(v, match[0], kp, out)


def _check_struct(v: dict[Any, Any], info: mi.StructType, kp: KeyPath, out: Problems) -> None:
    where = _dotted(kp) or "the spec"
    fields = {f.encode_name: f for f in info.fields}
    allowed = list(fields)
    if info.tag_field:
        allowed = [info.tag_field, *allowed]
    for k, item in v.items():
        if info.tag_field and k == info.tag_field:
            continue
        f = fields.get(k) if isinstance(k, str) else None
        if f is None:
            close = difflib.get_close_matches(str(k), allowed, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)}"
            extra = ""
            if not close and info.cls.__name__.endswith("Workload"):
                extra = f" (for a {v.get('kind')} workload)"
            elif not close and issubclass(info.cls, EngineBase):
                extra = f" (for a {v.get('kind')} engine)"
            out.add((*kp, k), f"unknown key {k!r} in {where}{extra}; {hint}", key=True)
            continue
        _check(item, f.type, (*kp, k), out)
    for f in info.fields:
        if f.required and f.encode_name not in v:
            kind = f" ({_describe(f.type)})"
            out.add(kp, f"{where}: missing required key '{f.encode_name}'{kind}; add '{f.encode_name}: ...'")


_MSGSPEC_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)


def _split_msgspec_error(text: str) -> tuple[str, KeyPath]:
    m = _MSGSPEC_AT.match(text)
    msg = m.group("msg") if m else text
    raw = (m.group("path") if m else None) or "$"
    kp: list[Any] = []
    for part in re.findall(r"\.([A-Za-z0-9_\-]+)|\[(\d+)\]|\[\.\.\.\]", raw[1:]):
        if part[0]:
            kp.append(part[0])
        elif part[1]:
            kp.append(int(part[1]))
        else:
            break  # an unknown mapping key: point at the mapping
    return msg, tuple(kp)


# --------------------------------------------------------------------------------------------- semantics


def _split_engine_ref(ref: str, spec: Spec) -> tuple[str, str | None]:
    if ref in spec.engines:
        return ref, None
    if "." in ref:
        e, v = ref.split(".", 1)
        return e, v
    return ref, None


def variant_names(engine: Any) -> list[str]:
    return list(engine.variants) or ["default"]


def _semantic_checks(ld: LoadedSpec, out: Problems) -> None:
    spec = ld.spec
    engines = list(spec.engines)
    workloads = list(spec.workloads)
    if not engines:
        out.add(
            ("engines",), "engines: at least one engine is needed; e.g. 'llama: {kind: llamacpp, model: ...}'"
        )
    if not workloads:
        out.add(
            ("workloads",), "workloads: at least one workload is needed; e.g. 'sweep: {kind: throughput}'"
        )
    for kind, names in (("engine", engines), ("workload", workloads)):
        for n in names:
            bad = next((c for c in n if c in "/ \t"), None) or (
                "." if kind == "engine" and "." in n else None
            )
            if bad is not None or not n:
                out.add(
                    (f"{kind}s", n),
                    f"{kind}s: name {n!r} may not contain {bad!r} (names are used in point ids "
                    f"like engine.variant/workload/point); use letters, digits, '-' or '_'",
                    key=True,
                )

    for ename, eng in spec.engines.items():
        for vname in eng.variants:
            if any(c in vname for c in "/. \t"):
                out.add(
                    ("engines", ename, "variants", vname),
                    f"engines.{ename}.variants: name {vname!r} may not "
                    "contain '/', '.' or spaces; use letters, digits, '-' or '_'",
                    key=True,
                )
        if isinstance(eng, CommandEngine) and not eng.command:
            out.add(
                ("engines", ename, "command"),
                f"engines.{ename}.command: empty; give the argv, e.g. "
                "['my-server', '{model}', '--port', '{port}']",
            )
        if isinstance(eng, ExternalEngine) and not re.match(r"https?://", eng.base_url):
            out.add(
                ("engines", ename, "base_url"),
                f"engines.{ename}.base_url: {eng.base_url!r} is not an http(s) "
                "URL; e.g. 'http://127.0.0.1:8000'",
            )
        for vname, var in eng.variants.items():
            if var.launcher is not None and not hasattr(eng, "launcher"):
                out.add(
                    ("engines", ename, "variants", vname, "launcher"),
                    f"engines.{ename}.variants.{vname}.launcher: a {type(eng).__struct_config__.tag} engine has no "
                    "launcher to replace; `launcher` in a variant works for vllm, sglang and llamacpp engines",
                    key=True,
                )
            if var.launcher is not None and not var.launcher:
                out.add(
                    ("engines", ename, "variants", vname, "launcher"),
                    f"engines.{ename}.variants.{vname}.launcher: empty; give the argv prefix, e.g. "
                    "['{python}', '-m', 'bench_tui.engine_adapters.xllama_server']",
                )
        templates: list[tuple[KeyPath, str]] = []
        if eng.chat_template:
            templates.append((("engines", ename, "chat_template"), eng.chat_template))
        for vname, var in eng.variants.items():
            if var.chat_template:
                templates.append((("engines", ename, "variants", vname, "chat_template"), var.chat_template))
        for kp, tpl in templates:
            tp = Path(tpl).expanduser()
            full = tp if tp.is_absolute() else ld.dir / tp
            if not full.is_file():
                out.add(
                    kp,
                    f"{_dotted(kp)}: file not found: {full} (a relative path is relative to the spec's "
                    f"folder {ld.dir})",
                )

    for wname, wl in spec.workloads.items():
        if isinstance(wl, ThroughputWorkload):
            npts = len(wl.pp) * len(wl.tg) * len(wl.depths) * len(wl.concurrency)
            if npts > MAX_SWEEP_POINTS:
                out.add(
                    ("workloads", wname),
                    f"workloads.{wname}: pp x tg x depths x concurrency is {npts} points; at "
                    f"most {MAX_SWEEP_POINTS} per workload: shorten the lists or split the sweep",
                )
        elif isinstance(wl, SessionsWorkload):
            _check_sessions(ld, wname, wl, out)

    _check_matrix(ld, out)
    _check_report(ld, out)
    _check_load(ld, out)
    _check_override_scopes(ld, out)
    _check_judge(ld, out)


def _check_judge(ld: LoadedSpec, out: Problems) -> None:
    judge = ld.spec.grading.judge
    if judge is None:
        return
    kp: KeyPath = ("grading", "judge")
    if not re.match(r"https?://[^/\s]+", judge.base_url):
        out.add(
            (*kp, "base_url"),
            f"grading.judge.base_url: {judge.base_url!r} is not an http(s) URL; e.g. "
            "'http://127.0.0.1:8000/v1' (any OpenAI-compatible endpoint)",
        )
    if not judge.model.strip():
        out.add((*kp, "model"), "grading.judge.model: empty; give the model name the endpoint serves")
    env = judge.api_key_env
    if env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
        out.add(
            (*kp, "api_key_env"),
            "grading.judge.api_key_env: give the NAME of the environment variable that holds the key "
            "(e.g. JUDGE_API_KEY), never the key itself",
        )


def _variant_refs(spec: Spec) -> list[str]:
    refs = []
    for e, eng in spec.engines.items():
        refs.append(e)
        refs.extend(f"{e}.{v}" for v in variant_names(eng))
    return refs


def check_engine_variant(
    spec: Spec,
    engine: str | None,
    variant: str | None,
    kp: KeyPath,
    out: Problems,
    *,
    what: str,
    variant_at: str = "variant",
) -> None:
    engines = list(spec.engines)
    if engine is not None:
        if engine not in spec.engines:
            out.add(
                (*kp, "engine"),
                f"{_dotted((*kp, 'engine'))}: unknown engine {engine!r} in {what}; "
                + hint_names(engine, engines, "engines"),
            )
            return
        if variant is not None and variant not in variant_names(spec.engines[engine]):
            names = variant_names(spec.engines[engine])
            out.add(
                (*kp, variant_at),
                f"{_dotted((*kp, variant_at))}: engine {engine!r} has no variant {variant!r}; "
                + hint_names(variant, names, "its variants"),
            )
    elif variant is not None:
        allv = sorted({v for eng in spec.engines.values() for v in variant_names(eng)})
        if variant not in allv:
            out.add(
                (*kp, "variant"),
                f"{_dotted((*kp, 'variant'))}: no engine has a variant {variant!r}; "
                + hint_names(variant, allv, "variants"),
            )


def _check_matrix(ld: LoadedSpec, out: Problems) -> None:
    spec = ld.spec
    m = spec.matrix
    refs = _variant_refs(spec)
    for i, ref in enumerate(m.engines or []):
        e, v = _split_engine_ref(ref, spec)
        if e not in spec.engines or (v is not None and v not in variant_names(spec.engines[e])):
            out.add(
                ("matrix", "engines", i),
                f"matrix.engines[{i}]: unknown engine or variant {ref!r} "
                f"(write 'engine' or 'engine.variant'); " + hint_names(ref, refs, "known"),
            )
    for i, w in enumerate(m.workloads or []):
        if w not in spec.workloads:
            out.add(
                ("matrix", "workloads", i),
                f"matrix.workloads[{i}]: unknown workload {w!r}; "
                + hint_names(w, list(spec.workloads), "workloads"),
            )
    for section in ("include", "exclude"):
        for i, rule in enumerate(getattr(m, section)):
            kp = ("matrix", section, i)
            if rule.engine is None and rule.variant is None and rule.workload is None:
                out.add(
                    kp,
                    f"matrix.{section}[{i}]: an empty rule; give at least one of engine, variant, workload",
                )
                continue
            eng, var = rule.engine, rule.variant
            variant_at = "variant"
            if eng is not None and eng not in spec.engines and "." in eng and var is None:
                eng, var = eng.split(".", 1)
                variant_at = "engine"  # `engine: name.variant`: point at what was written
            check_engine_variant(spec, eng, var, kp, out, what=f"matrix.{section}", variant_at=variant_at)
            if rule.workload is not None and rule.workload not in spec.workloads:
                out.add(
                    (*kp, "workload"),
                    f"matrix.{section}[{i}].workload: unknown workload {rule.workload!r}; "
                    + hint_names(rule.workload, list(spec.workloads), "workloads"),
                )
    if not out.items:
        from bench_tui.spec.matrix import expand

        if spec.engines and spec.workloads and not expand(spec):
            out.add(
                ("matrix",),
                "matrix: selects no engine variant x workload cell; check matrix.engines, "
                "matrix.workloads and matrix.exclude",
            )


RAY_ADDRESS = re.compile(r"^(local|auto|ray://[A-Za-z0-9._\-]+:[0-9]{1,5})$")


def _check_load(ld: LoadedSpec, out: Problems) -> None:
    load = ld.spec.load
    if not RAY_ADDRESS.match(load.ray_address):
        out.add(
            ("load", "ray_address"),
            f"load.ray_address: {load.ray_address!r} is not a Ray address; write "
            "'local' (a private Ray instance for this run), 'auto' (the cluster this machine joined with "
            "'ray start') or 'ray://HOST:PORT' (Ray Client, port 10001 by default)",
        )
    elif load.backend != "ray" and load.ray_address != "local":
        out.add(
            ("load", "ray_address"),
            f"load.ray_address: only used with 'backend: ray' (backend is "
            f"{load.backend!r}); remove it or set backend: ray",
        )
    if load.backend == "local" and load.workers != 1:
        out.add(
            ("load", "workers"),
            f"load.workers: the local backend is one process, got {load.workers}; "
            "use 'backend: processes' (this machine) or 'backend: ray' for more workers",
        )


SLO_PERCENTILE = re.compile(r"p(\d{1,2}(\.\d+)?|100)$")


def _check_sessions(ld: LoadedSpec, wname: str, wl: SessionsWorkload, out: Problems) -> None:
    """What the types cannot say about a ``sessions`` workload (files are read by the planner's checks)."""
    kp: KeyPath = ("workloads", wname)
    src = wl.source
    given = [k for k in ("synthetic", "pack", "trace", "conversations") if getattr(src, k) is not None]
    if len(given) != 1:
        got = "none" if not given else " and ".join(given)
        out.add(
            (*kp, "source"),
            f"workloads.{wname}.source: give exactly one of synthetic, pack, trace or conversations (got "
            f"{got}); e.g. 'source: {{synthetic: {{turns: 4}}}}' or 'source: {{pack: standard, subset: short}}'",
        )
    if src.subset is not None and src.pack is None:
        out.add(
            (*kp, "source", "subset"),
            f"workloads.{wname}.source.subset: a subset selects scenarios of a pack; add 'pack: NAME' or "
            "remove it",
            key=True,
        )
    arr = wl.arrival
    search = wl.search.max_rate
    if arr.rate is not None and arr.concurrency is not None:
        out.add(
            (*kp, "arrival"),
            f"workloads.{wname}.arrival: give rate (open loop: sessions started per second) or concurrency "
            "(closed loop: sessions active at once), not both",
        )
    elif arr.rate is None and arr.concurrency is None and search is None:
        out.add(
            (*kp, "arrival"),
            f"workloads.{wname}.arrival: no load given; e.g. 'arrival: {{rate: [2, 4], process: poisson}}', "
            "'arrival: {concurrency: [4]}' or a 'search: {max_rate: {low: 1, high: 64}}'",
        )
    if arr.concurrency is not None and search is not None:
        out.add(
            (*kp, "search", "max_rate"),
            f"workloads.{wname}.search.max_rate: searches over open-loop rates; it cannot run with "
            "arrival.concurrency (closed loop)",
        )
    if arr.burstiness != 1.0 and arr.process != "gamma":
        out.add(
            (*kp, "arrival", "burstiness"),
            f"workloads.{wname}.arrival.burstiness: only used with 'process: gamma' (process is "
            f"{arr.process!r})",
        )
    for metric in ("ttft_ms", "itl_ms", "e2e_s"):
        targets: dict[str, float] = getattr(wl.slo, metric)
        for pct in targets:
            if not SLO_PERCENTILE.match(pct) or float(pct[1:]) <= 0:
                out.add(
                    (*kp, "slo", metric, pct),
                    f"workloads.{wname}.slo.{metric}: {pct!r} is not a percentile; write pNN with 0 < NN <= "
                    "100, e.g. 'p90: 1500'",
                    key=True,
                )
    if search is not None and search.low >= search.high:
        out.add(
            (*kp, "search", "max_rate"),
            f"workloads.{wname}.search.max_rate: low ({search.low:g}) must be below high ({search.high:g})",
        )
    if search is not None and not any(getattr(wl.slo, m) for m in ("ttft_ms", "itl_ms", "e2e_s")):
        out.add(
            (*kp, "search", "max_rate"),
            f"workloads.{wname}.search.max_rate: the search looks for the highest rate meeting the SLO, and "
            "no slo is given; e.g. 'slo: {ttft_ms: {p90: 1500}}'",
        )


def _check_report(ld: LoadedSpec, out: Problems) -> None:
    spec = ld.spec
    b = spec.report.baseline
    if b is None:
        return
    e, v = _split_engine_ref(b, spec)
    if e not in spec.engines or (v is not None and v not in variant_names(spec.engines[e])):
        out.add(
            ("report", "baseline"),
            f"report.baseline: unknown engine variant {b!r} (write 'engine.variant'); "
            + hint_names(b, _variant_refs(spec), "known"),
        )


def _check_override_scopes(ld: LoadedSpec, out: Problems) -> None:
    for i, ov in enumerate(ld.spec.grading.overrides):
        check_engine_variant(
            ld.spec, ov.engine, ov.variant, ("grading", "overrides", i), out, what="an override's scope"
        )

"""The docs cannot drift from the code: every name they put in backticks exists, and the counts they state hold.

Read: README.md, docs/ARCHITECTURE.md, CONTRIBUTING.md, docs/GRADING.md. Each backticked name (and each
``bench-tui ...`` line of a fenced block) is classified by its shape and looked up where such names live:

- ``bench-tui CMD [SUB] --opt``: the subcommands through the click group, and every ``--option`` on the command;
- ``python -m MOD``: an importable module;
- a path (has ``/`` or a file extension): a file under the repository, ``src/bench_tui`` or ``src``; a bare file
  name may be anywhere in the repository or a name the code writes (a string in ``src``, e.g. ``env.json``);
- ``key:`` / ``key: value``: a field of some msgspec Struct of the package (spec, pack and event keys);
- a dotted name: a module, attribute or Struct field path (``bench_tui.x.y``, ``graders.speccheck.check_packs``,
  ``registry.Dialect``, ``RunView.points``, ``report.noise_threshold_pct``), or a string in ``src``
  (entry point groups such as ``bench_tui.engines``);
- ``Name``, ``name()``, ``CONSTANT``, ``snake_name``: defined at module level in the package, or a word of
  ``src`` / ``tests``;
- anything with a placeholder (``<pack>``, ``{model}``, ``${VAR}``, ``~``), a URL path, a flag or prose: not a name.

The names of the docs' worked examples that are meant not to exist (recipe 1's ``tgi`` adapter) are listed in
EXAMPLES with the reason. A failure lists every ``file:line: name not found`` at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import keyword
import os
import pkgutil
import re
import typing
from functools import cache
from pathlib import Path
from typing import Any

import click
import msgspec

import bench_tui
from bench_tui.cli import main as cli_main
from bench_tui.graders.pack import load_pack

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "bench_tui"
DOCS = ["README.md", "docs/ARCHITECTURE.md", "CONTRIBUTING.md", "docs/GRADING.md"]

# names a doc uses as a worked example of something to create, not as something that exists
EXAMPLES = {
    "src/bench_tui/engine_adapters/tgi.py": "CONTRIBUTING recipe 1: the adapter module a contributor writes",
    "my_pkg.tgi": "CONTRIBUTING recipe 1: a plugin package",
    "TgiEngine": "CONTRIBUTING recipe 1: the plugin kind's options Struct",
}
FILE_EXT = re.compile(r"\.(py|md|ya?ml|json|jsonl|toml|j2|txt|log|lock|sqlite|html|gguf|cfg)$")
NUMBERS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}


# --------------------------------------------------------------------------------------------- the code


@cache
def modules() -> dict[str, Any]:
    out = {"bench_tui": bench_tui}
    for info in pkgutil.walk_packages(bench_tui.__path__, "bench_tui."):
        if info.name.endswith("__main__"):
            continue
        out[info.name] = importlib.import_module(info.name)
    return out


@cache
def top_level() -> dict[str, list[Any]]:
    """Every module-level name of the package -> the objects it names."""
    out: dict[str, list[Any]] = {}
    for mod in modules().values():
        for name, obj in vars(mod).items():
            out.setdefault(name, []).append(obj)
    return out


@cache
def _src_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))


@cache
def _tests_text() -> str:
    here = Path(__file__).resolve()
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py") if p != here)


@cache
def _repo_file_names() -> set[str]:
    names: set[str] = set()
    for _dir, subdirs, files in os.walk(ROOT):
        subdirs[:] = [d for d in subdirs if d not in (".git", ".venv", "node_modules", "__pycache__")]
        names.update(files)
        names.update(subdirs)
    return names


@cache
def structs() -> list[type[msgspec.Struct]]:
    seen: dict[int, type[msgspec.Struct]] = {}
    for objs in top_level().values():
        for o in objs:
            if isinstance(o, type) and issubclass(o, msgspec.Struct) and o.__module__.startswith("bench_tui"):
                seen[id(o)] = o
    return list(seen.values())


def _struct_types(tp: Any) -> list[type[msgspec.Struct]]:
    """The Structs an annotation can hold (through unions, lists, dicts, Annotated)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return [tp, *[s for s in structs() if issubclass(s, tp) and s is not tp]]
    return [s for a in typing.get_args(tp) for s in _struct_types(a)]


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # noqa: BLE001 - a forward reference to a TYPE_CHECKING name: the plain annotations
        out: dict[str, Any] = {}
        for c in reversed(cls.__mro__):
            out.update(getattr(c, "__annotations__", {}))
        return out


def field_path_exists(parts: list[str]) -> bool:
    """``a.b.c`` as Struct fields: some Struct has field ``a``, whose type holds a Struct with ``b``, ..."""
    level = [s for s in structs() if parts[0] in s.__struct_fields__]
    for part in parts[1:]:
        nxt: list[type[msgspec.Struct]] = []
        for s in level:
            for sub in _struct_types(_hints(s).get(parts[parts.index(part) - 1])):
                if part in sub.__struct_fields__:
                    nxt.append(sub)
        level = nxt
    return bool(level)


_MISSING = object()


def _attr(obj: Any, attr: str) -> Any:
    """``obj.attr``, or a placeholder object when it is only declared (an annotation, ``self.attr = ...``)."""
    value = getattr(obj, attr, _MISSING)
    if value is not _MISSING:
        return value
    if isinstance(obj, type):
        if any(attr in getattr(c, "__annotations__", {}) for c in obj.__mro__):
            return object()
        try:
            if re.search(rf"\bself\.{re.escape(attr)}\b\s*[:=]", inspect.getsource(obj)):
                return object()
        except (OSError, TypeError):
            pass
    return _MISSING


def _attr_chain(obj: Any, attrs: list[str]) -> bool:
    for a in attrs:
        obj = _attr(obj, a)
        if obj is _MISSING:
            return False
    return True


def dotted_exists(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        for mod_name in (f"bench_tui.{head}", head):
            try:
                found = importlib.util.find_spec(mod_name) is not None
            except (ImportError, ValueError):
                found = False
            if found and _attr_chain(importlib.import_module(mod_name), parts[i:]):
                return True
        # a module named by its tail (`registry.Dialect`, `view.RunView`)
        for full, mod in modules().items():
            if full.endswith("." + head) and _attr_chain(mod, parts[i:]):
                return True
    if any(_attr_chain(o, parts[1:]) for o in top_level().get(parts[0], [])):
        return True
    return field_path_exists(parts) or f'"{name}"' in _src_text()


def command_problem(words: list[str]) -> str | None:
    ctx = click.Context(cli_main)
    cmd: click.Command = cli_main
    chain: list[click.Command] = [cmd]
    for w in words:
        sub = cmd.get_command(ctx, w) if isinstance(cmd, click.Group) else None
        if sub is not None:
            cmd = sub
            chain.append(cmd)
        elif w.startswith("--"):
            opt = w.split("=", 1)[0]
            if not any(opt in p.opts or opt in p.secondary_opts for c in chain for p in c.params):
                return f"option {opt} of '{' '.join(c.name or '' for c in chain)}'"
        elif isinstance(cmd, click.Group) and cmd is not cli_main and re.fullmatch(r"[a-z]+", w):
            return f"subcommand {w!r} of '{cmd.name}'"
        elif cmd is cli_main:  # `bench-tui SPEC ...` is `bench-tui run SPEC ...`
            run = cli_main.get_command(ctx, "run")
            assert run is not None
            cmd = run
            chain.append(cmd)
    return None


# --------------------------------------------------------------------------------------------- the docs


def _backticked(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            cmd = re.match(r"\s*(?:\$\s+)?(bench-tui(?:\s.*)?)$", line)
            if cmd:
                out.append((n, re.sub(r"\s{2,}.*$|\s+#.*$", "", cmd.group(1))))
            continue
        out += [(n, m.group(1)) for m in re.finditer(r"``?([^`]+?)``?(?!`)", line)]
    return out


def problem(token: str) -> str | None:
    """Why ``token`` names nothing that exists (None when it does, or is not a name)."""
    t = token.strip()
    if t in EXAMPLES or not t:
        return None
    if t.startswith("bench-tui"):
        words = [w for w in re.split(r"[\s\[\]|]+", t[len("bench-tui") :]) if w]
        return command_problem(words)
    if m := re.fullmatch(
        r"python -m (bench_tui[\w.]*).*", t
    ):  # another project's modules are not ours to check
        return None if importlib.util.find_spec(m.group(1)) else f"module {m.group(1)}"
    if m := re.fullmatch(r"([A-Za-z_]\w*)\(.*\)", t):  # a call: a function of the package (or of the tests)
        name = m.group(1)
        if name in EXAMPLES:
            return None
        defined = re.compile(rf"^\s*(?:async\s+)?def {re.escape(name)}\(", re.M)
        found = name in top_level() or defined.search(_src_text()) or defined.search(_tests_text())
        return None if found else f"function {name}"
    if re.search(r"[<>{}$~*]|://", t) or t.startswith(("/", "-", "./", "..")) or re.match(r"[A-Z_]+/", t):
        return None  # placeholders, URLs and their paths, flags, RUN_DIR/... forms
    if t.startswith(".") and "/" not in t:
        return None  # .venv and the like: made by set-up, not in the repository
    if (m := re.fullmatch(r"([a-z_][a-z0-9_]*):(\s.*)?", t)) and not keyword.iskeyword(m.group(1)):
        key = m.group(1)
        return None if any(key in s.__struct_fields__ for s in structs()) else f"key {key!r} in any Struct"
    if " " in t:
        return None
    if "/" in t or FILE_EXT.search(t):
        return _path_problem(t)
    if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(\(.*\))?", t):
        name = t.split("(", 1)[0]
        return None if dotted_exists(name) else f"dotted name {name}"
    if re.fullmatch(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*", t):  # a class or other CamelCase name
        return None if t in top_level() else f"name {t} at module level in bench_tui"
    if re.fullmatch(r"_?[a-z][a-z0-9]*(_[a-z0-9]+)+|[A-Z][A-Z0-9]*(_[A-Z0-9]+)+", t):
        word = re.compile(rf"(?<![\w]){re.escape(t)}(?![\w])")
        return None if word.search(_src_text()) or word.search(_tests_text()) else f"{t} in src or tests"
    return None


def _path_problem(t: str) -> str | None:
    p = t.rstrip("/").split(":", 1)[0]
    if p in EXAMPLES or any((base / p).exists() for base in (ROOT, SRC, ROOT / "src")):
        return None
    if "/" not in p and (p in _repo_file_names() or f'"{p}"' in _src_text()):
        return None
    return f"path {p}"


def _docs() -> list[tuple[str, str]]:
    return [(d, (ROOT / d).read_text(encoding="utf-8")) for d in DOCS]


def test_every_name_the_docs_give_exists() -> None:
    missing = []
    for doc, text in _docs():
        for line, token in _backticked(text):
            why = problem(token)
            if why is not None:
                missing.append(f"{doc}:{line}: {token} not found ({why})")
    assert not missing, "names in the docs that the code does not have:\n" + "\n".join(missing)


def test_the_rules_find_what_they_should() -> None:
    """The lookup is not vacuous: each kind of name fails when it names nothing."""
    assert problem("bench-tui validate") is None and problem("bench-tui schema --builtin --write X") is None
    assert problem("bench-tui valdate") is None  # the top command takes a SPEC path: any word may be one
    assert problem("bench-tui pack tset") == "subcommand 'tset' of 'pack'"
    assert problem("bench-tui compare --basline") is not None
    assert (
        problem("graders.speccheck.check_packs") is None and problem("runner.planner.load_spec") is not None
    )
    assert problem("RunView") is None and problem("Answer") is not None
    assert problem("report.noise_threshold_pct") is None and problem("report.noise_pct") is not None
    assert problem("bench_tui.engines") is None  # an entry point group: a string the code uses
    assert problem("metrics_dialect:") is None and problem("metric_dialect: x") is not None
    assert problem("src/bench_tui/graders/pack.py") is None and problem("graders/packs.py") is not None
    assert problem("events.jsonl") is None and problem("evnts.jsonl") is not None
    assert problem("eff_tg_tps") is None and problem("eff_tg_tpz") is not None
    assert problem("dates(text)") is None and problem("datez(text)") == "function datez"
    assert problem("server_side(before, after)") is None and problem(".ci/run") is None
    assert problem("time.monotonic_ns()") is None and problem("python -m bench_tui.cli.child") is None


# --------------------------------------------------------------------------------------------- counts


def _count(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word.lower()]


def stated_counts() -> list[tuple[str, int, str, int, int, str]]:
    """(doc, line, claim, stated, true, what was counted) for every count the docs state that can be checked."""
    out = []
    for doc, text in _docs():
        for n, line in enumerate(text.splitlines(), 1):
            para = "\n".join(text.splitlines()[n - 1 : n + 3])  # a claim may wrap onto the next lines
            if m := re.search(r"`pack: ([\w-]+)`[^.]*?\b(\d+) scenarios", line):
                pack = load_pack(m.group(1))
                out.append((doc, n, m.group(0), int(m.group(2)), len(pack.scenarios), "the pack has"))
                if c := re.search(r"in (\d+) categories", para):
                    cats = len({s.category for s in pack.scenarios})
                    out.append((doc, n, c.group(0), int(c.group(1)), cats, "the pack's scenarios are in"))
                if s := re.search(r"(\d+)-scenario `(\w+)` subset", para):
                    out.append(
                        (doc, n, s.group(0), int(s.group(1)), len(pack.select(s.group(2))), "the subset has")
                    )
            if m := re.search(r"\b(\w+) checks run on every answer", line, re.I):
                # the list that follows has one bullet per check, each naming its function (which the name
                # test finds in the code): the stated number is the list's length
                items = re.findall(r"^- .*?`(\w+)`", text[text.index(m.group(0)) :].split("\n\n", 2)[1], re.M)
                out.append((doc, n, m.group(0), _count(m.group(1)), len(items), "the list below names"))
    return out


def test_the_counts_the_docs_state_hold() -> None:
    counts = stated_counts()
    assert len(counts) >= 5, counts  # the claims are still found: README's packs, GRADING's checks
    wrong = [
        f"{doc}:{n}: '{claim}' but {what} {true}"
        for doc, n, claim, stated, true, what in counts
        if stated != true
    ]
    assert not wrong, "counts in the docs that the code contradicts:\n" + "\n".join(wrong)

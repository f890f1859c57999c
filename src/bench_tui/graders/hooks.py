"""Python grader hooks for what the YAML cannot say.

A hook is registered as an entry point in the group ``bench_tui.graders`` (``name = "module:function"``)
or named directly as ``"module:function"`` in ``expect.hook``. It is called as ``hook(ctx)`` with a
``HookContext`` and returns ``None`` (no opinion), a verdict string, or ``(verdict, [reasons])``. The scenario's
final verdict is the worse of the declarative verdict and the hook's. An exception in a hook is caught and
reported as outcome ``grader_error`` (never scored as a model failure).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

GROUP = "bench_tui.graders"


class HookNotFound(Exception):
    pass


@dataclass
class HookContext:
    scenario: Any  # pack.Scenario
    pack: Any  # pack.Pack
    transcript: list[dict[str, Any]]
    answer: str  # final assistant text
    calls: list[Any]  # grade.Call list (name, args, source)
    mode: str  # strict | lenient
    args: dict[str, Any] = field(default_factory=dict)  # expect.hook_args


HookResult = str | tuple[str, list[str]] | None
Hook = Callable[[HookContext], HookResult]


def check_hook(name: str) -> None:
    """Raise ``HookNotFound`` when ``name`` cannot name a hook, without importing anything: validating a pack
    (one from a shared bundle, say) must never run a module's code; ``resolve_hook`` imports at grading time."""
    if ":" in name:
        mod, _, attr = name.partition(":")
        top = mod.split(".")[0]
        if not mod or not attr or not all(part.isidentifier() for part in [*mod.split("."), attr]):
            raise HookNotFound(f"grader hook {name!r}: write it as 'package.module:function'")
        try:
            found = importlib.util.find_spec(top) is not None  # looks on sys.path, runs nothing
        except (ImportError, ValueError):
            found = False
        if not found:
            raise HookNotFound(f"grader hook {name!r} cannot be imported: no module named {top!r}")
        return
    if name in BUILTIN or any(ep.name == name for ep in entry_points(group=GROUP)):
        return
    names = sorted({ep.name for ep in entry_points(group=GROUP)} | set(BUILTIN))
    raise HookNotFound(
        f"unknown grader hook {name!r} (entry points in {GROUP}: {', '.join(names) or 'none'})"
    )


def resolve_hook(name: str) -> Hook:
    if ":" in name:
        mod, _, attr = name.partition(":")
        try:
            fn: Hook = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            raise HookNotFound(f"grader hook {name!r} cannot be imported: {exc}") from None
        return fn
    for ep in entry_points(group=GROUP):
        if ep.name == name:
            loaded: Hook = ep.load()
            return loaded
    if name in BUILTIN:
        return BUILTIN[name]
    names = sorted({ep.name for ep in entry_points(group=GROUP)} | set(BUILTIN))
    raise HookNotFound(
        f"unknown grader hook {name!r} (entry points in {GROUP}: {', '.join(names) or 'none'})"
    )


def json_answer(ctx: HookContext) -> HookResult:
    """The final answer must be JSON (a single fenced block is accepted), valid against
    ``expect.answer.json_schema`` when given; ``hook_args.required_keys`` lists keys the top-level object needs
    and ``hook_args.values`` maps keys to argument matchers."""
    from bench_tui.graders.matchers import match_args, parse_json_answer, schema_errors

    ok, value, note = parse_json_answer(ctx.answer)
    if not ok:
        return "fail", [note]
    reasons = [note] if note else []
    a = ctx.scenario.expect.answer
    if a is not None and a.json_schema is not None:
        errs = schema_errors(value, a.json_schema)
        if errs:
            return "fail", [*reasons, *("json_schema: " + e for e in errs[:5])]
    keys = ctx.args.get("required_keys") or []
    if keys:
        if not isinstance(value, dict):
            return "fail", [*reasons, "answer JSON is not an object"]
        missing = [k for k in keys if k not in value]
        if missing:
            return "fail", [*reasons, f"answer JSON lacks keys {missing}"]
    if ctx.args.get("values"):
        good, why = match_args(ctx.args["values"], value)
        if not good:
            return "fail", [*reasons, *why]
    return "pass", [*reasons, "answer is valid JSON"]


BUILTIN: dict[str, Hook] = {"builtin_json_answer": json_answer}

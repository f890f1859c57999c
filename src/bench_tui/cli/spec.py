"""`bench-tui validate | plan | schema`: the spec language on the command line.

Errors a user can cause (a bad spec, a missing file) print ``file:line:col: message`` lines on stderr and exit
with status 2; nothing here prints a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import msgspec

# a CLI-level import (these commands move to bench_tui/cli/ with the others): the context check reads packs
from bench_tui.runner.orchestration.context import context_warnings

EXIT_SPEC_ERROR = 2
EXIT_INTERNAL = 1

T = TypeVar("T")


def _fail(lines: list[str], code: int = EXIT_SPEC_ERROR) -> NoReturn:
    for line in lines:
        click.echo(line, err=True)
    sys.exit(code)


def _load(path: Path) -> Any:
    """load_spec, with every failure turned into stderr lines and an exit status."""
    return _guard(path, lambda: _load_spec(path))


def _load_spec(path: Path) -> Any:
    from bench_tui.runner.orchestration.planner import load_spec

    return load_spec(path)


def _guard(path: Path, fn: Callable[[], T]) -> T:
    from bench_tui.spec.loader import SpecError

    try:
        return fn()
    except SpecError as err:
        _fail(err.problems or [str(err)])
    except Exception as exc:  # noqa: BLE001 - a loader bug must still not print a traceback
        _fail([_internal(path, exc)], EXIT_INTERNAL)


def _internal(path: Path, exc: Exception) -> str:
    return (
        f"{path}:1:1: internal error while reading the spec: {type(exc).__name__}: {exc} "
        "(this is a bench-tui bug; please report it with the spec)"
    )


def summarize(loaded: Any) -> dict[str, Any]:
    """Counts for the `validate` line and the `plan` footer."""
    from bench_tui.runner.orchestration.planner import estimate_requests, plan_points
    from bench_tui.spec.matrix import expand, variants_of

    spec = loaded.spec
    cells = expand(spec)
    points = plan_points(loaded)
    return {
        "name": spec.name,
        "engines": len(spec.engines),
        "variants": sum(len(variants_of(spec, e)) for e in spec.engines),
        "workloads": len(spec.workloads),
        "cells": len(cells),
        "points": len(points),
        "requests": estimate_requests(points),
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --------------------------------------------------------------------------------------------- validate


@click.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-q", "--quiet", is_flag=True, help="Print nothing when the spec is valid.")
def validate(specs: tuple[Path, ...], quiet: bool) -> None:
    """Check SPEC files; errors as file:line:col with hints (exit status 2)."""
    from bench_tui.runner.orchestration.planner import load_spec
    from bench_tui.spec.loader import SpecError

    failed = False
    for path in specs:
        try:
            loaded = load_spec(path)
            s = summarize(loaded)
        except SpecError as err:
            failed = True
            for line in err.problems or [str(err)]:
                click.echo(line, err=True)
            continue
        except Exception as exc:  # noqa: BLE001 - never a traceback
            _fail([_internal(path, exc)], EXIT_INTERNAL)
        for line in _warnings(path, loaded):
            click.echo(line, err=True)
        if not quiet:
            click.echo(
                f"ok: {path}: {s['name']!r}: {_plural(s['engines'], 'engine')}, {_plural(s['variants'], 'variant')}, "
                f"{_plural(s['workloads'], 'workload')}; {_plural(s['cells'], 'cell')}, "
                f"{_plural(s['points'], 'point')}, ~{s['requests']} requests"
            )
    if failed:
        sys.exit(EXIT_SPEC_ERROR)


def _warnings(path: Path, loaded: Any) -> list[str]:
    """Problems that do not stop a run but spoil it (a workload that does not fit the context); never fatal."""
    try:
        return context_warnings(loaded)
    except Exception as exc:  # noqa: BLE001 - a check's bug must not hide a valid spec
        return [f"{path}:1:1: warning: the context check failed ({type(exc).__name__}: {exc})"]


# --------------------------------------------------------------------------------------------- plan


def _kind_of(obj: Any) -> str:
    return str(type(obj).__struct_config__.tag)


def plan_data(loaded: Any, rates: Any = None) -> dict[str, Any]:
    """The expanded plan as plain data (what `plan --json` prints), with a time estimate under ``rates``
    (``spec.matrix.Rates``; defaults when None)."""
    from bench_tui.runner.orchestration.planner import (
        Rates,
        estimate_seconds,
        interleave_sessions,
        points_for_cell,
        session_order,
    )
    from bench_tui.spec.matrix import expand
    from bench_tui.spec.secrets import redact

    spec = loaded.spec
    n_sess = spec.matrix.sessions
    cache: dict[str, Any] = {}
    cells = []
    total_points = 0
    total_requests = 0
    every: list[Any] = []
    for cell in expand(spec):
        wl = spec.workloads[cell.workload]
        points = points_for_cell(cell, wl, spec_dir=loaded.dir, pack_cache=cache)
        every += points
        requests = sum(p.requests for p in points) * n_sess
        total_points += len(points) * n_sess
        total_requests += requests
        cells.append(
            {
                "engine": cell.engine,
                "variant": cell.variant,
                "workload": cell.workload,
                "kind": _kind_of(wl),
                "points": len(points) * n_sess,
                "requests": requests,
                "point_ids": [p.point_id for p in points],
                "point_details": [
                    {"point_id": p.point_id, "params": msgspec.to_builtins(p.params), "requests": p.requests}
                    for p in points
                ],
            }
        )
    data = {
        "spec": str(loaded.path),
        "name": spec.name,
        "engines": len(spec.engines),
        "workloads": len(spec.workloads),
        "cells": cells,
        "total_cells": len(cells),
        "total_points": total_points,
        "estimated_requests": total_requests,
        "sessions": n_sess,
    }
    if n_sess > 1:
        blocks = list(dict.fromkeys(f"{c['engine']}.{c['variant']}" for c in cells))
        data["session_order"] = [
            f"{b}#{k}" for b, k in session_order(blocks, n_sess, spec.matrix.order, spec.matrix.seed)
        ]
    every = interleave_sessions(every, n_sess, spec.matrix.order, spec.matrix.seed)
    r = rates or Rates()
    est = estimate_seconds(spec, every, r)
    data["estimate"] = {
        **{k: round(v, 1) for k, v in est.items()},
        "assumes": {
            "prefill_tps": r.prefill_tps,
            "decode_tps": r.decode_tps,
            "engine_start_s": r.start_s if r.start_s is not None else "by kind",
        },
    }
    redacted: dict[str, Any] = redact(data, loaded.secrets)
    return redacted


def render_plan(data: dict[str, Any], *, show_points: bool = False) -> str:
    """A readable table: one row per engine.variant x workload cell with its point and request counts; with
    ``show_points`` a tree instead: engine.variant > workload > each point."""
    lines = [f"plan: {data['spec']} ({data['name']!r})", ""]
    if show_points:
        previous = None
        for cell in data["cells"]:
            ref = f"{cell['engine']}.{cell['variant']}"
            if ref != previous:
                lines.append(ref)
                previous = ref
            lines.append(
                f"  {cell['workload']} ({cell['kind']}): {_plural(cell['points'], 'point')}, "
                f"{_plural(cell['requests'], 'request')}"
            )
            details = cell["point_details"]
            width = max((len(p["point_id"].rsplit("/", 1)[-1]) for p in details), default=0)
            for p in details:
                label = p["point_id"].rsplit("/", 1)[-1]
                lines.append(f"    {label.ljust(width)}  {_plural(p['requests'], 'request')}")
    else:
        header = ("engine.variant", "workload", "kind", "points", "requests")
        rows = [
            (f"{c['engine']}.{c['variant']}", c["workload"], c["kind"], str(c["points"]), str(c["requests"]))
            for c in data["cells"]
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

        def fmt(r: tuple[str, ...]) -> str:
            left = "  ".join(r[i].ljust(widths[i]) for i in range(3))
            right = "  ".join(r[i].rjust(widths[i]) for i in range(3, 5))
            return f"{left}  {right}".rstrip()

        lines += [fmt(header), fmt(tuple("-" * w for w in widths))]
        previous = None
        for row in rows:
            lines.append(fmt(row if row[0] != previous else ("", *row[1:])))
            previous = row[0]
    lines.append("")
    lines.append(
        f"total: {_plural(data['total_cells'], 'cell')}, {_plural(data['total_points'], 'point')}, "
        f"~{data['estimated_requests']} requests (estimate; warm-up requests excluded)"
    )
    if data.get("session_order"):
        lines.append(
            f"engine sessions: {data['sessions']} per variant (each started {data['sessions']} times), in this "
            f"order: {' '.join(data['session_order'])}"
        )
    est = data.get("estimate")
    if est:
        from bench_tui.runner.orchestration.planner import duration_text

        a = est["assumes"]
        start = "by kind" if a["engine_start_s"] == "by kind" else f"{a['engine_start_s']:g} s each"
        lines.append(
            f"time: ~{duration_text(est['total_s'])} = requests ~{duration_text(est['requests_s'])} + "
            f"{est['engine_starts']:.0f} engine start(s) ~{duration_text(est['starts_s'])} (a rough guess: "
            f"assumes {a['prefill_tps']:g} t/s prefill, {a['decode_tps']:g} t/s decode per stream, engine "
            f"starts {start}; set --prefill-tps/--decode-tps/--start-s from a measured run)"
        )
    return "\n".join(lines)


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("-p", "--points", "show_points", is_flag=True, help="List every point under its cell.")
@click.option(
    "--prefill-tps",
    type=click.FloatRange(min=0.001),
    default=300.0,
    show_default=True,
    help="Prefill rate the time estimate assumes (prompt tokens/s).",
)
@click.option(
    "--decode-tps",
    type=click.FloatRange(min=0.001),
    default=25.0,
    show_default=True,
    help="Decode rate per stream the time estimate assumes (tokens/s).",
)
@click.option(
    "--start-s",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds per engine start (default by kind: llamacpp 15, vllm/sglang 90, command 60, external 0).",
)
def plan(
    spec: Path, as_json: bool, show_points: bool, prefill_tps: float, decode_tps: float, start_s: float | None
) -> None:
    """Print the expanded matrix of SPEC: engine/variant x workload x point, with counts and a time estimate
    (request time at assumed rates plus one start per engine variant)."""
    from bench_tui.runner.orchestration.planner import Rates

    loaded = _load(spec)
    rates = Rates(prefill_tps=prefill_tps, decode_tps=decode_tps, start_s=start_s)
    data = _guard(spec, lambda: plan_data(loaded, rates))
    data["warnings"] = _warnings(spec, loaded)
    for line in data["warnings"]:
        click.echo(line, err=True)
    if as_json:
        for cell in data["cells"]:
            if not show_points:
                cell.pop("point_details")
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(render_plan(data, show_points=show_points))


# --------------------------------------------------------------------------------------------- schema


@click.command()
@click.option(
    "--write",
    "write_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the schema to PATH instead of printing it.",
)
@click.option(
    "--check",
    "check_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Exit 1 if the schema at PATH differs from the generated one.",
)
@click.option(
    "--builtin",
    is_flag=True,
    help="Only the built-in engine kinds (the copy this repository commits), not installed plugin kinds.",
)
def schema(write_path: Path | None, check_path: Path | None, builtin: bool) -> None:
    """Print (or --write) the spec's JSON Schema (draft-07), installed plugin engine kinds included."""
    from bench_tui.engine_adapters.registry import PluginError, plugin_engines
    from bench_tui.spec.jsonschema import REGENERATE, render_schema

    try:
        text = render_schema(() if builtin else plugin_engines())
    except PluginError as exc:
        _fail([str(exc)], EXIT_INTERNAL)
    if check_path is not None:
        try:
            current = check_path.read_text(encoding="utf-8")
        except OSError as exc:
            _fail([f"{check_path}: cannot read: {exc.strerror or exc}"], EXIT_INTERNAL)
        if current != text:
            _fail(
                [f"{check_path}: out of date with the spec Structs; regenerate it: {REGENERATE}"],
                EXIT_INTERNAL,
            )
        click.echo(f"up to date: {check_path}")
        return
    if write_path is None:
        click.echo(text, nl=False)
        return
    try:
        write_path.parent.mkdir(parents=True, exist_ok=True)
        write_path.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail([f"{write_path}: cannot write: {exc.strerror or exc}"], EXIT_INTERNAL)
    click.echo(f"wrote {write_path}")

"""The run matrix: engine variants x workloads (minus exclude, plus include). The points of each cell are
planned in ``bench_tui.runner.orchestration.planner`` (a scenario point needs its pack)."""

from __future__ import annotations

from typing import Any

import msgspec

from bench_tui.spec.schema import (
    MatrixRule,
    Spec,
)

DEFAULT_VARIANT = "default"


class Cell(msgspec.Struct, frozen=True, kw_only=True):
    engine: str
    variant: str
    workload: str

    @property
    def prefix(self) -> str:
        return f"{self.engine}.{self.variant}/{self.workload}"


def variants_of(spec: Spec, engine: str) -> list[str]:
    return list(spec.engines[engine].variants) or [DEFAULT_VARIANT]


def _universe(spec: Spec) -> list[Cell]:
    return [
        Cell(engine=e, variant=v, workload=w)
        for e in spec.engines
        for v in variants_of(spec, e)
        for w in spec.workloads
    ]


def _order_key(spec: Spec) -> Any:
    eng = {e: i for i, e in enumerate(spec.engines)}
    var = {(e, v): i for e in spec.engines for i, v in enumerate(variants_of(spec, e))}
    wl = {w: i for i, w in enumerate(spec.workloads)}
    return lambda c: (
        eng.get(c.engine, 1 << 30),
        var.get((c.engine, c.variant), 1 << 30),
        wl.get(c.workload, 1 << 30),
    )


def _rule_parts(rule: MatrixRule, spec: Spec) -> tuple[str | None, str | None, str | None]:
    eng, var = rule.engine, rule.variant
    if eng is not None and eng not in spec.engines and "." in eng and var is None:
        eng, var = eng.split(".", 1)
    return eng, var, rule.workload


def _matches(cell: Cell, parts: tuple[str | None, str | None, str | None]) -> bool:
    eng, var, wl = parts
    return (
        (eng is None or cell.engine == eng)
        and (var is None or cell.variant == var)
        and (wl is None or cell.workload == wl)
    )


def _selected_variants(spec: Spec) -> list[tuple[str, str]]:
    refs = spec.matrix.engines
    if refs is None:
        return [(e, v) for e in spec.engines for v in variants_of(spec, e)]
    out: list[tuple[str, str]] = []
    for ref in refs:
        if ref in spec.engines:
            pairs = [(ref, v) for v in variants_of(spec, ref)]
        elif "." in ref:
            e, v = ref.split(".", 1)
            pairs = [(e, v)] if e in spec.engines and v in variants_of(spec, e) else []
        else:
            pairs = []
        out.extend(p for p in pairs if p not in out)
    return out


def expand(spec: Spec) -> list[Cell]:
    """Cells to run, in spec order (engines, then their variants, then workloads).

    ``matrix.engines`` x ``matrix.workloads`` (default: all), minus every cell matching an ``exclude`` rule,
    plus every cell of the full universe matching an ``include`` rule (include wins over exclude, as in
    GitHub Actions). A rule's missing fields match anything. A matrix that names only ``include`` rules
    (neither ``engines`` nor ``workloads``) runs just the included cells, as GitHub Actions does when a
    matrix has nothing to cross."""
    m = spec.matrix
    wls = m.workloads if m.workloads is not None else list(spec.workloads)
    wls = [w for w in dict.fromkeys(wls) if w in spec.workloads]
    only_include = bool(m.include) and m.engines is None and m.workloads is None
    cells = (
        []
        if only_include
        else [Cell(engine=e, variant=v, workload=w) for (e, v) in _selected_variants(spec) for w in wls]
    )
    for rule in spec.matrix.exclude:
        parts = _rule_parts(rule, spec)
        cells = [c for c in cells if not _matches(c, parts)]
    have = set(cells)
    for rule in spec.matrix.include:
        parts = _rule_parts(rule, spec)
        for c in _universe(spec):
            if c not in have and _matches(c, parts):
                cells.append(c)
                have.add(c)
    return sorted(cells, key=_order_key(spec))

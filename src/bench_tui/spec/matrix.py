"""The run matrix: engine variants x workloads (minus exclude, plus include), and the points of each cell.

Point ids are stable (they key resume and comparisons): ``<engine>.<variant>/<workload>/<point>`` with
``<point>`` = ``pp{pp}-tg{tg}-d{depth}-c{concurrency}`` (throughput), ``pack`` (scenarios),
``{content}-d{depth}`` (spec_acceptance).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.events import PlanPoint
from bench_tui.spec.schema import (
    MatrixRule,
    ScenarioWorkload,
    Spec,
    SpecAcceptanceWorkload,
    ThroughputWorkload,
)

DEFAULT_VARIANT = "default"
TURNS_PER_SCENARIO = 3  # rough: a tool call, its result, the answer


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
    return [Cell(engine=e, variant=v, workload=w)
            for e in spec.engines for v in variants_of(spec, e) for w in spec.workloads]


def _order_key(spec: Spec) -> Any:
    eng = {e: i for i, e in enumerate(spec.engines)}
    var = {(e, v): i for e in spec.engines for i, v in enumerate(variants_of(spec, e))}
    wl = {w: i for i, w in enumerate(spec.workloads)}
    return lambda c: (eng.get(c.engine, 1 << 30), var.get((c.engine, c.variant), 1 << 30), wl.get(c.workload, 1 << 30))


def _rule_parts(rule: MatrixRule, spec: Spec) -> tuple[str | None, str | None, str | None]:
    eng, var = rule.engine, rule.variant
    if eng is not None and eng not in spec.engines and "." in eng and var is None:
        eng, var = eng.split(".", 1)
    return eng, var, rule.workload


def _matches(cell: Cell, parts: tuple[str | None, str | None, str | None]) -> bool:
    eng, var, wl = parts
    return ((eng is None or cell.engine == eng) and (var is None or cell.variant == var)
            and (wl is None or cell.workload == wl))


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
    GitHub Actions). A rule's missing fields match anything."""
    wls = spec.matrix.workloads if spec.matrix.workloads is not None else list(spec.workloads)
    wls = [w for w in dict.fromkeys(wls) if w in spec.workloads]
    cells = [Cell(engine=e, variant=v, workload=w) for (e, v) in _selected_variants(spec) for w in wls]
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


def _scenario_count(wl: ScenarioWorkload, spec_dir: Path | None, cache: dict[str, Any]) -> int | None:
    if wl.scenarios:
        return len(wl.scenarios)
    try:
        from bench_tui.graders.pack import load_pack

        if wl.pack not in cache:
            cache[wl.pack] = load_pack(wl.pack, spec_dir)
        pack = cache[wl.pack]
        return len(pack.select(wl.subset, None))
    except Exception:  # noqa: BLE001 - an estimate only; the loader reports broken packs
        return None


def points_for_cell(cell: Cell, wl: Any, *, spec_dir: Path | None = None,
                    pack_cache: dict[str, Any] | None = None) -> list[PlanPoint]:
    pre = cell.prefix
    common = {"engine": cell.engine, "variant": cell.variant, "workload": cell.workload}
    out: list[PlanPoint] = []
    if isinstance(wl, ThroughputWorkload):
        for d, c, pp, tg in itertools.product(wl.depths, wl.concurrency, wl.pp, wl.tg):
            out.append(PlanPoint(
                point_id=f"{pre}/pp{pp}-tg{tg}-d{d}-c{c}", kind="throughput", **common,
                params={"pp": pp, "tg": tg, "depth": d, "concurrency": c, "repetitions": wl.repetitions,
                        "warmup": wl.warmup, "cache": wl.cache, "endpoint": wl.endpoint,
                        "request_timeout": wl.request_timeout},
                requests=wl.repetitions * c))
    elif isinstance(wl, ScenarioWorkload):
        n = _scenario_count(wl, spec_dir, {} if pack_cache is None else pack_cache)
        out.append(PlanPoint(
            point_id=f"{pre}/pack", kind="scenarios", **common,
            params={"pack": wl.pack, "subset": wl.subset, "scenarios": list(wl.scenarios), "trials": wl.trials,
                    "parallel": wl.parallel, "mode": wl.mode, "max_tokens": wl.max_tokens,
                    "request_timeout": wl.request_timeout},
            requests=(n * wl.trials * TURNS_PER_SCENARIO) if n is not None else 0))
    elif isinstance(wl, SpecAcceptanceWorkload):
        for content, d in itertools.product(wl.content, wl.depths):
            out.append(PlanPoint(
                point_id=f"{pre}/{content}-d{d}", kind="spec_acceptance", **common,
                params={"content": content, "depth": d, "runs": wl.runs, "tg": wl.tg},
                requests=wl.runs))
    return out


def plan_points(loaded: Any) -> list[PlanPoint]:
    """Every point of every matrix cell, in run order. ``loaded``: a LoadedSpec (or anything with ``.spec``
    and ``.dir``) or a bare Spec."""
    spec: Spec = loaded if isinstance(loaded, Spec) else loaded.spec
    spec_dir = None if isinstance(loaded, Spec) else getattr(loaded, "dir", None)
    cache: dict[str, Any] = {}
    out: list[PlanPoint] = []
    for cell in expand(spec):
        out.extend(points_for_cell(cell, spec.workloads[cell.workload], spec_dir=spec_dir, pack_cache=cache))
    return out


def estimate_requests(points: list[PlanPoint]) -> int:
    return sum(p.requests for p in points)


# ------------------------------------------------------------------------------------------ time estimate

# assumed engine start per kind (s); an external engine is never started
START_S_BY_KIND = {"external": 0.0, "llamacpp": 15.0, "vllm": 90.0, "sglang": 90.0, "command": 60.0}
SCENARIO_TURN_TOKENS = (1500, 150)  # assumed prompt / output tokens of one scenario turn
ACCEPT_PROMPT_TOKENS = 200  # assumed prompt of a spec-acceptance request (before its depth)


@dataclass(frozen=True)
class Rates:
    """What the time estimate assumes (``plan`` states it; measure to know)."""

    prefill_tps: float = 300.0  # per engine: prompt tokens per second
    decode_tps: float = 25.0  # per stream: concurrent streams decode side by side
    start_s: float | None = None  # every engine start; None: by kind (START_S_BY_KIND)


def estimate_seconds(spec: Spec, points: list[PlanPoint], rates: Rates | None = None) -> dict[str, float]:
    """A rough duration for ``points``: request time from assumed rates plus one start per engine variant."""
    r = rates or Rates()
    req_s = 0.0
    for p in points:
        prm = p.params
        if p.kind == "throughput":
            c = int(prm.get("concurrency") or 1)
            prompt = int(prm.get("depth") or 0) + int(prm.get("pp") or 0)
            one = c * prompt / r.prefill_tps + int(prm.get("tg") or 0) / r.decode_tps
            req_s += (int(prm.get("repetitions") or 1) + int(prm.get("warmup") or 0)) * one
        elif p.kind == "scenarios":
            pin, pout = SCENARIO_TURN_TOKENS
            par = max(1, int(prm.get("parallel") or 1))
            req_s += p.requests * (pin / r.prefill_tps + pout / r.decode_tps) / par
        else:
            prompt = int(prm.get("depth") or 0) + ACCEPT_PROMPT_TOKENS
            req_s += p.requests * (prompt / r.prefill_tps + int(prm.get("tg") or 0) / r.decode_tps)
    variants = list(dict.fromkeys((p.engine, p.variant) for p in points))
    start_s = 0.0
    for eng, _ in variants:
        default = START_S_BY_KIND.get(_kind(spec, eng), 60.0)
        start_s += default if r.start_s is None or default == 0.0 else r.start_s
    return {"requests_s": req_s, "engine_starts": float(sum(1 for e, _ in variants
                                                        if START_S_BY_KIND.get(_kind(spec, e), 60.0) > 0)),
            "starts_s": start_s, "total_s": req_s + start_s}


def _kind(spec: Spec, engine: str) -> str:
    eng = spec.engines.get(engine)
    return str(type(eng).__struct_config__.tag) if eng is not None else ""


def duration_text(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"

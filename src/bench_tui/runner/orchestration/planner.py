"""The planner: every point of every matrix cell, and the spec loader with every check (packs included).

Point ids are stable (they key resume and comparisons): ``<engine>.<variant>/<workload>/<point>`` with
``<point>`` = ``pp{pp}-tg{tg}-d{depth}-c{concurrency}`` (throughput), ``pack`` (scenarios),
``{content}-d{depth}`` (spec_acceptance), ``r{rate}`` / ``c{concurrency}`` / ``max-rate`` (sessions: one point
per open-loop rate or closed-loop concurrency; the max-rate search is one point whose rates are decided at run
time and reported with it).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.engine_adapters import registry
from bench_tui.events import AcceptanceParams, PlanPoint, ScenarioParams, SessionsParams, ThroughputParams
from bench_tui.graders.pack import load_pack
from bench_tui.graders.speccheck import check_packs
from bench_tui.runner.workloads.sessions_source import check_session_sources, session_turns
from bench_tui.spec import loader
from bench_tui.spec.loader import LoadedSpec, Problems, SpecError, hint_names
from bench_tui.spec.matrix import Cell, expand
from bench_tui.spec.schema import (
    EngineBase,
    ScenarioWorkload,
    SessionsWorkload,
    Spec,
    SpecAcceptanceWorkload,
    ThinkTime,
    ThroughputWorkload,
)

TURNS_PER_SCENARIO = 3  # rough: a tool call, its result, the answer


def check_dialects(ld: LoadedSpec, out: Problems) -> None:
    """Every ``metrics_dialect`` names a built-in or installed dialect (engine_adapters.registry)."""
    names = registry.dialect_names()
    for ename, eng in ld.spec.engines.items():
        name = getattr(eng, "metrics_dialect", None)
        if isinstance(name, str) and name not in names:
            out.add(
                ("engines", ename, "metrics_dialect"),
                f"engines.{ename}.metrics_dialect: unknown dialect "
                f"{name!r}; " + hint_names(name, names, "known dialects"),
            )


CHECKS = (check_packs, check_dialects, check_session_sources)  # what the spec layer cannot check by itself


def plugin_engines(path: Path | str) -> tuple[type[EngineBase], ...]:
    """The installed plugin engine kinds (engine_adapters.registry), a broken plugin as a spec error."""
    try:
        return registry.plugin_engines()
    except registry.PluginError as exc:
        raise SpecError([f"{path}:1:1: {exc}; fix or uninstall that package"]) from None


def load_spec(path: Path | str, *, env: Mapping[str, str] | None = None) -> LoadedSpec:
    """``spec.loader.load_spec`` with the checks that need packs and the engine registry, and the installed
    plugin engine kinds: what `validate`, `plan` and a run use."""
    return loader.load_spec(path, env=env, checks=CHECKS, engines=plugin_engines(path))


def load_spec_text(
    text: str, path: Path | str = "<spec>", *, env: Mapping[str, str] | None = None
) -> LoadedSpec:
    return loader.load_spec_text(text, path, env=env, checks=CHECKS, engines=plugin_engines(path))


def _scenario_count(wl: ScenarioWorkload, spec_dir: Path | None, cache: dict[str, Any]) -> int | None:
    if wl.scenarios:
        return len(wl.scenarios)
    try:
        if wl.pack not in cache:
            cache[wl.pack] = load_pack(wl.pack, spec_dir)
        pack = cache[wl.pack]
        return len(pack.select(wl.subset, None))
    except Exception:  # noqa: BLE001 - an estimate only; the loader reports broken packs
        return None


def points_for_cell(
    cell: Cell, wl: Any, *, spec_dir: Path | None = None, pack_cache: dict[str, Any] | None = None
) -> list[PlanPoint]:
    pre = cell.prefix
    common: dict[str, Any] = {"engine": cell.engine, "variant": cell.variant, "workload": cell.workload}
    out: list[PlanPoint] = []
    if isinstance(wl, ThroughputWorkload):
        for d, c, pp, tg in itertools.product(wl.depths, wl.concurrency, wl.pp, wl.tg):
            out.append(
                PlanPoint(
                    point_id=f"{pre}/pp{pp}-tg{tg}-d{d}-c{c}",
                    kind="throughput",
                    **common,
                    params=ThroughputParams(
                        pp=pp,
                        tg=tg,
                        depth=d,
                        concurrency=c,
                        repetitions=wl.repetitions,
                        warmup=wl.warmup,
                        cache=wl.cache,
                        endpoint=wl.endpoint,
                        request_timeout=wl.request_timeout,
                        idle_timeout=wl.idle_timeout,
                    ),
                    requests=wl.repetitions * c,
                )
            )
    elif isinstance(wl, ScenarioWorkload):
        n = _scenario_count(wl, spec_dir, {} if pack_cache is None else pack_cache)
        out.append(
            PlanPoint(
                point_id=f"{pre}/pack",
                kind="scenarios",
                **common,
                params=ScenarioParams(
                    pack=wl.pack,
                    subset=wl.subset,
                    scenarios=tuple(wl.scenarios),
                    trials=wl.trials,
                    parallel=wl.parallel,
                    mode=wl.mode,
                    max_tokens=wl.max_tokens,
                    request_timeout=wl.request_timeout,
                    idle_timeout=wl.idle_timeout,
                ),
                requests=(n * wl.trials * TURNS_PER_SCENARIO) if n is not None else 0,
            )
        )
    elif isinstance(wl, SessionsWorkload):
        out.extend(_session_points(pre, common, wl, spec_dir))
    elif isinstance(wl, SpecAcceptanceWorkload):
        for content, d in itertools.product(wl.content, wl.depths):
            out.append(
                PlanPoint(
                    point_id=f"{pre}/{content}-d{d}",
                    kind="spec_acceptance",
                    **common,
                    params=AcceptanceParams(
                        content=content, depth=d, runs=wl.runs, tg=wl.tg, idle_timeout=wl.idle_timeout
                    ),
                    requests=wl.runs,
                )
            )
    return out


MAX_OPEN_CONNECTIONS = 4096  # the connection bound of an open-loop point (the schema's concurrency limit)


def _session_points(
    pre: str, common: dict[str, Any], wl: SessionsWorkload, spec_dir: Path | None
) -> list[PlanPoint]:
    src = wl.source
    kind = next(k for k in ("synthetic", "pack", "trace", "conversations") if getattr(src, k) is not None)
    syn = src.synthetic
    think = wl.think_time_s
    base = SessionsParams(
        source=kind,  # type: ignore[arg-type]
        source_ref=str(getattr(src, kind)) if kind != "synthetic" else "",
        subset=src.subset,
        shared_prefix_tokens=syn.shared_prefix_tokens if syn else 0,
        turns=syn.turns if syn else 1,
        input_tokens=syn.input_tokens if syn else 0,
        output_tokens=syn.output_tokens if syn else 0,
        think_dist=think.dist if isinstance(think, ThinkTime) else "constant",
        think_mean_s=think.mean if isinstance(think, ThinkTime) else float(think),
        process=wl.arrival.process,
        burstiness=wl.arrival.burstiness,
        seed=wl.arrival.seed,
        sessions=wl.sessions,
        concurrency=min(MAX_OPEN_CONNECTIONS, wl.sessions),
        slo={m: dict(getattr(wl.slo, m)) for m in ("ttft_ms", "itl_ms", "e2e_s") if getattr(wl.slo, m)},
    )
    turns = session_turns(base, spec_dir)
    out: list[PlanPoint] = []
    for rate in wl.arrival.rate or []:
        out.append(
            PlanPoint(
                point_id=f"{pre}/r{rate:g}",
                kind="sessions",
                **common,
                params=msgspec.structs.replace(base, rate=rate),
                requests=wl.sessions * turns,
            )
        )
    for conc in wl.arrival.concurrency or []:
        out.append(
            PlanPoint(
                point_id=f"{pre}/c{conc}",
                kind="sessions",
                **common,
                params=msgspec.structs.replace(base, closed_loop=True, concurrency=conc),
                requests=wl.sessions * turns,
            )
        )
    mr = wl.search.max_rate
    if mr is not None:
        out.append(
            PlanPoint(
                point_id=f"{pre}/max-rate",
                kind="sessions",
                **common,
                params=msgspec.structs.replace(base, search=(mr.low, mr.high, mr.resolution_pct)),
                requests=wl.sessions * turns * search_trials(mr.low, mr.high, mr.resolution_pct),
            )
        )
    return out


def search_trials(low: float, high: float, resolution_pct: float) -> int:
    """Rates a max-rate search tries at most: both ends, then bisection until the bracket is within
    ``resolution_pct`` of its lower end."""
    n, lo, hi = 2, low, high
    while (hi - lo) / lo * 100.0 > resolution_pct:
        hi = (lo + hi) / 2.0  # the bracket kept at the low end narrows slowest in relative terms
        n += 1
        if n > 64:
            break
    return n


def plan_points(loaded: Any) -> list[PlanPoint]:
    """Every point of every matrix cell, in run order. ``loaded``: a LoadedSpec (or anything with ``.spec``
    and ``.dir``) or a bare Spec."""
    spec: Spec = loaded if isinstance(loaded, Spec) else loaded.spec
    spec_dir = None if isinstance(loaded, Spec) else getattr(loaded, "dir", None)
    cache: dict[str, Any] = {}
    out: list[PlanPoint] = []
    for cell in expand(spec):
        out.extend(points_for_cell(cell, spec.workloads[cell.workload], spec_dir=spec_dir, pack_cache=cache))
    return interleave_sessions(out, spec.matrix.sessions, spec.matrix.order, spec.matrix.seed)


def session_order(variants: list[Any], sessions: int, order: str, seed: int) -> list[tuple[Any, int]]:
    """(variant, session) blocks in run order: ``abba`` reverses every other round (A B, B A, A B ...) so a
    drift over the run hits every variant alike; ``shuffle`` shuffles each round with ``seed``."""
    rng = random.Random(seed)
    out: list[tuple[Any, int]] = []
    for k in range(1, sessions + 1):
        round_ = list(variants)
        if order == "shuffle":
            rng.shuffle(round_)
        elif k % 2 == 0:
            round_.reverse()
        out += [(v, k) for v in round_]
    return out


def interleave_sessions(points: list[PlanPoint], sessions: int, order: str, seed: int) -> list[PlanPoint]:
    """Every engine variant's points once per engine session, the sessions interleaved across variants.

    One session: the plan as it is. N >= 2: each (engine, variant) block repeats N times as session 1..N,
    point ids ending ``@s<k>``, in ``session_order``."""
    if sessions <= 1:
        return points
    blocks: dict[tuple[str, str], list[PlanPoint]] = {}
    for p in points:
        blocks.setdefault((p.engine, p.variant), []).append(p)
    out: list[PlanPoint] = []
    for key, k in session_order(list(blocks), sessions, order, seed):
        out += [msgspec.structs.replace(p, point_id=f"{p.point_id}@s{k}", session=k) for p in blocks[key]]
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
        if isinstance(prm, ThroughputParams):
            one = prm.concurrency * (prm.depth + prm.pp) / r.prefill_tps + prm.tg / r.decode_tps
            req_s += (prm.repetitions + prm.warmup) * one
        elif isinstance(prm, ScenarioParams):
            pin, pout = SCENARIO_TURN_TOKENS
            req_s += p.requests * (pin / r.prefill_tps + pout / r.decode_tps) / prm.parallel
        elif isinstance(prm, SessionsParams):  # open loop: the schedule's length, else as scenarios
            pin, pout = SCENARIO_TURN_TOKENS
            one = pin / r.prefill_tps + pout / r.decode_tps
            per_session = prm.turns * (one + prm.think_mean_s)
            if prm.rate is not None:
                req_s += prm.sessions / prm.rate + per_session
            elif prm.search is not None:  # every rate tried: assume the middle of the range (log scale)
                mid = (prm.search[0] * prm.search[1]) ** 0.5
                trials = search_trials(*prm.search)
                req_s += trials * (prm.sessions / mid + per_session)
            else:
                req_s += p.requests * one / max(1, prm.concurrency)
        else:
            req_s += p.requests * ((prm.depth + ACCEPT_PROMPT_TOKENS) / r.prefill_tps + prm.tg / r.decode_tps)
    variants = list(dict.fromkeys((p.engine, p.variant, p.session) for p in points))  # one start each
    start_s = 0.0
    for eng, _, _ in variants:
        default = START_S_BY_KIND.get(_kind(spec, eng), 60.0)
        start_s += default if r.start_s is None or default == 0.0 else r.start_s
    return {
        "requests_s": req_s,
        "engine_starts": float(
            sum(1 for e, _, _ in variants if START_S_BY_KIND.get(_kind(spec, e), 60.0) > 0)
        ),
        "starts_s": start_s,
        "total_s": req_s + start_s,
    }


def _kind(spec: Spec, engine: str) -> str:
    eng = spec.engines.get(engine)
    return str(type(eng).__struct_config__.tag) if eng is not None else ""


def duration_text(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"

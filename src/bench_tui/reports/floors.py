"""This host's session-to-session noise: measured from runs with >= 2 engine sessions, used by compare.

Every run whose matrix asked for ``sessions: N >= 2`` holds N engine sessions of each variant: A/A
replicates of that variant. For each point shape (pp, tg, depth, concurrency; or content and depth) and each
compared metric, the sessions' estimates (``verdict.session_estimate``: the log of the session's median, or
points for rates) give the standard deviation between sessions, once the sessions' own within-session
variance is taken out. Floors of every variant of one engine kind at one shape are pooled (their degrees of
freedom add up). ``bench-tui calibrate SPEC`` runs a spec that way; ``history`` stores the floors of every
indexed run with the host's identity, and ``compare`` looks up the newest floor for the host, engine kind,
shape and metric of a cell whose sides have one session each.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bench_tui.reports import verdict as V
from bench_tui.runner.view import RunView


def host_identity(env: dict[str, Any]) -> str:
    """What makes two runs' hosts the same machine for noise purposes: its name, CPU and GPUs."""
    host: dict[str, Any] = env["host"] if isinstance(env.get("host"), dict) else {}
    cpu: dict[str, Any] = env["cpu"] if isinstance(env.get("cpu"), dict) else {}
    gpus: list[Any] = env["gpus"] if isinstance(env.get("gpus"), list) else []
    parts = [
        str(host.get("hostname") or "?"),
        str(cpu.get("model") or cpu.get("model_name") or "?"),
        f"{cpu.get('usable_cores') or cpu.get('logical_cores') or '?'} cores",
    ]
    names = [str(g.get("name")) for g in gpus if isinstance(g, dict) and g.get("name")]
    if names:
        parts.append(" + ".join(names))
    return " · ".join(parts)


def shape_key(p: Any) -> str:
    """A point's shape without its workload's name (floors carry over between specs)."""
    if p.kind == "spec_acceptance":
        return f"accept {p.params.content} d{p.depth}"
    return f"pp{p.pp} tg{p.tg} d{p.depth} c{p.concurrency}"


def load_samples(model: Any) -> dict[str, dict[str, V.Samples]]:
    """Test units per point id and metric, from the run's request records (``events.jsonl``)."""
    records = RunView.from_run_dir(model.run_dir, keep_records=True).records()
    out: dict[str, dict[str, V.Samples]] = {}
    for p in model.points:
        if p.summary is None or p.kind not in ("throughput", "spec_acceptance"):
            continue
        out[p.point_id] = V.point_samples(
            records.get(p.point_id, []),
            p.summary,
            degraded=p.degraded,
            client_limited=p.client_limited,
        )
    return out


@dataclass(frozen=True)
class FloorRow:
    engine_kind: str
    shape: str
    metric: str
    sigma: float
    within: float
    df: int
    sessions: int

    def floor(self, date: str = "", host: str = "") -> V.Floor:
        return V.Floor(self.sigma, self.within, self.df, self.sessions, date, host)


def engine_kind(model: Any, key: str) -> str:
    eng = getattr(getattr(model, "spec", None), "engines", {}).get(key.partition(".")[0])
    return str(type(eng).__struct_config__.tag) if eng is not None else ""


def floors_of(model: Any, samples: dict[str, dict[str, V.Samples]]) -> list[FloorRow]:
    """The floors a run's multi-session variants measure (empty when every variant ran one session)."""
    by: dict[tuple[str, str, str], list[Any]] = {}
    for p in model.points:
        if p.point.session > 0 and p.point_id in samples and p.summary is not None:
            by.setdefault((engine_kind(model, p.key), p.key, shape_key(p)), []).append(p)
    pooled: dict[tuple[str, str, str], tuple[float, float, int, int]] = {}  # ss, within sum, df, sessions
    for (kind, key, shape), pts in by.items():
        if len(pts) < 2:
            continue
        for metric in V.METRICS:
            sides = [samples[p.point_id].get(metric.key) for p in pts]
            got = [s for s in sides if s is not None and s.units and not s.excluded]
            if len(got) < 2:
                continue
            log = not metric.rate and all(x > 0 for s in got for x in s.units)
            rng = random.Random(V.seed_of(f"floor|{key}|{shape}|{metric.key}"))
            est = [V.session_estimate(s.sessions[0], log=log, rng=rng) for s in got]
            mu = math.fsum(y for y, _ in est) / len(est)
            ss = math.fsum((y - mu) ** 2 for y, _ in est)
            wsum = math.fsum(w for _, w in est)
            k = (kind, shape, metric.key)
            a = pooled.get(k, (0.0, 0.0, 0, 0))
            pooled[k] = (a[0] + ss, a[1] + wsum, a[2] + len(est) - 1, a[3] + len(est))
    out: list[FloorRow] = []
    for (kind, shape, key), (ss, wsum, df, n) in sorted(pooled.items()):
        within = wsum / n
        sigma = math.sqrt(max(0.0, ss / df - within)) if df > 0 else 0.0
        out.append(FloorRow(kind, shape, key, sigma, within, df, n))
    return out


def as_lookup(rows: Iterable[tuple[FloorRow, str]], host: str) -> dict[tuple[str, str, str], V.Floor]:
    """(engine kind, shape, metric) -> Floor, the newest (by date) of ``rows`` ((row, date) pairs)."""
    out: dict[tuple[str, str, str], V.Floor] = {}
    for row, date in sorted(rows, key=lambda r: r[1]):
        out[(row.engine_kind, row.shape, row.metric)] = row.floor(date, host)
    return out


def has_sessions(model: Any) -> bool:
    return any(p.point.session > 0 for p in model.points)

"""The report's appendix table "Machine conditions per point": the host (and GPUs) around each point, from
the ``conditions`` its ``point_finished`` carries (``envinfo.conditions``). A point whose conditions changed
while it ran (the load rose, other work started, the GPU throttled) says so in its notes column."""

from __future__ import annotations

from bench_tui.envinfo.conditions import conditions_notes
from bench_tui.events import Conditions, GpuReading, Reading
from bench_tui.reports.model import RunModel
from bench_tui.reports.sections import Section, Table

TITLE = "Machine conditions per point"
DASH = "—"


def _n(x: float | None, digits: int = 0) -> str:
    return DASH if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return DASH if x is None else f"{100 * x:.0f}%"


def _path(*cells: str) -> str:
    """before → max → after, or a dash when none was read."""
    return DASH if all(c == DASH for c in cells) else " → ".join(cells)


def _of(r: Reading | None, name: str) -> float | None:
    if r is None:
        return None
    return r.load_per_core if name == "load_per_core" else getattr(r, name)


def _gpus(c: Conditions) -> str:
    mid, hi = c.during_median or c.after, c.during_max or c.after
    if mid is None or not mid.gpus:
        return DASH
    top: dict[int, GpuReading] = {g.index: g for g in (hi.gpus if hi is not None else [])}
    parts = []
    for g in mid.gpus:
        h = top.get(g.index, g)
        part = f"{g.index}: {_n(g.sm_mhz)} MHz, {_n(h.temp_c)} °C, {_n(g.power_w)} W, {_n(h.mem_used_mb)} MB"
        parts.append(part)
    return "; ".join(parts)


def _row(point_id: str, c: Conditions) -> list[str]:
    b, a, mid, lo, hi = c.before, c.after, c.during_median, c.during_min, c.during_max
    return [
        point_id,
        str(c.samples),
        _path(*(_n(_of(r, "load_per_core"), 2) for r in (b, hi, a))),
        _pct(_of(mid or a, "busy")),
        _path(*(_pct(_of(r, "other")) for r in (b, hi))),
        _pct(_of(hi or a, "steal")),
        _n(_of(mid or a, "freq_mhz")),
        _n(_of(lo or a, "mem_available_mb")),
        f"{_n(_of(hi or a, 'cpu_psi'))} / {_n(_of(hi or a, 'mem_psi'))}",
        _gpus(c),
        "; ".join(conditions_notes(c)) or DASH,
    ]


HEADERS = [
    "point",
    "readings",
    "load per CPU before → max → after",
    "CPU busy (median)",
    "other processes' CPU before → max",
    "steal (max)",
    "CPU MHz (median)",
    "MemAvailable MB (min)",
    "PSI cpu / memory (max)",
    "GPU: SM clock, temperature (max), power, memory (max)",
    "notes",
]


def conditions_section(m: RunModel) -> Section:
    """The appendix section; empty (left out) when no point recorded its conditions."""
    sec = Section("conditions", TITLE, appendix=True)
    rows = [_row(p.point_id, p.conditions) for p in m.points if p.conditions is not None]
    if not rows:
        sec.empty = True
        return sec
    keep = [
        i for i in range(len(HEADERS)) if i in (0, 1, 10) or any(r[i] not in (DASH, "— / —") for r in rows)
    ]
    sec.tables.append(
        Table(
            TITLE,
            [HEADERS[i] for i in keep],
            [[r[i] for i in keep] for r in rows],
            caption="the host while each point ran: a reading as it started, one as it ended, and one about "
            "every second in between (min / median / max of those); CPU shares are of all the host's CPUs; "
            "other processes = everything outside bench-tui and the engines it launched (an external engine "
            "counts here); PSI = pressure stall avg10, % of time a task waited",
            notes=[
                "What counts as materially different conditions between two sides of a comparison, and why: "
                "docs/DEFINITIONS.md, Machine conditions. Columns nothing was read for are left out."
            ],
        )
    )
    return sec

"""The report's "Machine conditions per point" table: each cell from the point's recorded conditions, the
notes of a point whose load rose while it ran, columns nothing was read for left out, no section without
conditions."""

from __future__ import annotations

from pathlib import Path

from bench_tui.events import Conditions, GpuReading, PlanPoint, Reading, ThroughputParams
from bench_tui.reports.conditions import conditions_section
from bench_tui.reports.model import RunModel
from bench_tui.runner.view import PointView


def _point(pid: str, c: Conditions | None) -> PointView:
    p = PlanPoint(
        point_id=pid,
        engine="e",
        variant="a",
        workload="w",
        kind="throughput",
        params=ThroughputParams(pp=8, tg=4),
    )
    return PointView(p, status="ok", conditions=c)


def _r(**kw: object) -> Reading:
    return Reading(**{"cpus": 2, "mem_available_mb": 4000.0, **kw})  # type: ignore[arg-type]


def test_cells_come_from_the_conditions_and_a_rise_is_noted(tmp_path: Path) -> None:
    quiet = Conditions(
        before=_r(load1=0.4, busy=0.5, other=0.02),
        after=_r(load1=0.5, busy=0.5, other=0.03),
        during_min=_r(load1=0.4, busy=0.4, other=0.01, steal=0.0),
        during_median=_r(load1=0.45, busy=0.5, other=0.02, steal=0.0),
        during_max=_r(load1=0.5, busy=0.6, other=0.04, steal=0.01),
        samples=12,
        interval_s=1.0,
    )
    rising = Conditions(
        before=_r(load1=0.4, busy=0.5, other=0.03),
        after=_r(load1=2.8, busy=1.0, other=0.5),
        during_min=_r(load1=0.5, busy=0.6, other=0.05, mem_available_mb=3500.0),
        during_median=_r(load1=1.6, busy=1.0, other=0.45),
        during_max=_r(load1=3.0, busy=1.0, other=0.55),
        samples=20,
        interval_s=1.0,
    )
    m = RunModel(run_dir=tmp_path, points=[_point("p1", quiet), _point("p2", rising), _point("p3", None)])
    sec = conditions_section(m)
    assert not sec.empty and sec.id == "conditions"
    (t,) = sec.tables
    assert t.headers == [
        "point",
        "readings",
        "load per CPU before → max → after",
        "CPU busy (median)",
        "other processes' CPU before → max",
        "steal (max)",
        "MemAvailable MB (min)",
        "notes",
    ]  # no cpufreq, PSI or GPU figures were read: those columns are left out
    assert t.rows == [
        ["p1", "12", "0.20 → 0.25 → 0.25", "50%", "2% → 4%", "1%", "4000", "—"],
        [
            "p2",
            "20",
            "0.20 → 1.50 → 1.40",
            "100%",
            "3% → 55%",
            "—",
            "3500",
            "load per CPU rose 0.20 → 1.50; other processes rose 3 % → 55 % of the CPU",
        ],
    ]  # p3 recorded no conditions (a run from before they were recorded): no row


def test_gpu_and_pressure_columns_appear_when_read(tmp_path: Path) -> None:
    gpu_mid = GpuReading(index=0, sm_mhz=1800.0, temp_c=70.0, power_w=300.0, mem_used_mb=20000.0)
    gpu_hi = GpuReading(
        index=0, sm_mhz=1900.0, temp_c=84.0, power_w=350.0, mem_used_mb=21000.0, reasons=["sw_thermal"]
    )
    c = Conditions(
        before=_r(load1=1.0),
        after=_r(load1=1.0),
        during_median=_r(load1=1.0, cpu_psi=3.0, mem_psi=0.0, gpus=[gpu_mid]),
        during_max=_r(load1=1.0, cpu_psi=7.0, mem_psi=1.0, gpus=[gpu_hi]),
        during_min=_r(load1=1.0, gpus=[gpu_mid]),
        samples=3,
    )
    (t,) = conditions_section(RunModel(run_dir=tmp_path, points=[_point("g", c)])).tables
    row = dict(zip(t.headers, t.rows[0], strict=True))
    assert row["PSI cpu / memory (max)"] == "7 / 1"
    assert (
        row["GPU: SM clock, temperature (max), power, memory (max)"] == "0: 1800 MHz, 84 °C, 300 W, 21000 MB"
    )
    assert row["notes"] == "GPU 0 throttled (sw_thermal)"


def test_no_conditions_no_section(tmp_path: Path) -> None:
    assert conditions_section(RunModel(run_dir=tmp_path, points=[_point("p", None)])).empty

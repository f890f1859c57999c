"""Machine conditions: the /proc readers against fixture trees, the per-point summary, the sampler (its
thread reading a fixture tree that changes under it), the judgement between two sides and within one point,
the event round trip and the RunView fold."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from bench_tui.envinfo.conditions import (
    ConditionsSampler,
    conditions_differ,
    conditions_notes,
    host_reading,
    own_processes,
    pooled,
    read_cpu_times,
    read_freq_mhz,
    read_load1,
    read_mem_available_mb,
    read_psi_some_avg10,
    summarise,
)
from bench_tui.events import (
    Conditions,
    GpuReading,
    PlanPoint,
    PlanReady,
    PointFinished,
    PointStarted,
    Reading,
    ThroughputParams,
    decode,
    encode,
)
from bench_tui.runner.view import RunView


def write_root(
    root: Path,
    *,
    user: int = 1000,
    idle: int = 9000,
    steal: int = 0,
    cpus: int = 2,
    running: int = 3,
    load1: float = 0.5,
    mem_kb: int = 8 * 1024 * 1024,
    psi: tuple[float, float] | None = (1.5, 0.0),  # cpu, memory "some avg10"
    freqs_khz: tuple[int, ...] = (3_000_000, 2_000_000, 2_400_000),
    procs: dict[int, tuple[int, int, str]] | None = None,  # pid -> (ppid, utime + stime, comm)
) -> Path:
    """A /proc and /sys tree with the files the readers read, in the kernel's formats."""
    proc = root / "proc"
    proc.mkdir(parents=True, exist_ok=True)
    lines = [f"cpu  {user} 0 0 {idle} 0 0 0 {steal} 0 0"]
    lines += [f"cpu{i} 1 0 0 1 0 0 0 0 0 0" for i in range(cpus)]
    lines += ["intr 1 2 3", "ctxt 99", f"procs_running {running}", "procs_blocked 0"]
    (proc / "stat").write_text("\n".join(lines) + "\n")
    (proc / "loadavg").write_text(f"{load1:.2f} 0.40 0.30 2/105 4242\n")
    (proc / "meminfo").write_text(
        f"MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:   {mem_kb} kB\n"
    )
    if psi is not None:
        (proc / "pressure").mkdir(exist_ok=True)
        for name, v in zip(("cpu", "memory"), psi, strict=True):
            (proc / "pressure" / name).write_text(
                f"some avg10={v:.2f} avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
            )
    for i, f in enumerate(freqs_khz):
        d = root / "sys/devices/system/cpu" / f"cpu{i}" / "cpufreq"
        d.mkdir(parents=True, exist_ok=True)
        (d / "scaling_cur_freq").write_text(f"{f}\n")
    (root / "sys/devices/system/cpu/cpufreq").mkdir(parents=True, exist_ok=True)  # not a cpuN directory
    for pid, (ppid, ticks, comm) in (procs or {}).items():
        (proc / str(pid)).mkdir(exist_ok=True)
        fields = ["S", str(ppid)] + ["0"] * 9 + [str(ticks - ticks // 3), str(ticks // 3)] + ["0"] * 30
        (proc / str(pid) / "stat").write_text(f"{pid} ({comm}) " + " ".join(fields) + "\n")
    return root


PROCS = {
    100: (1, 500, "bench-tui"),
    101: (100, 300, "llama-server (x) y"),  # the engine we launched: a name with spaces and parentheses
    102: (101, 50, "worker"),  # its child
    200: (1, 9000, "cc1plus"),  # someone's build: not ours
}


def test_readers_take_the_kernel_formats(tmp_path: Path) -> None:
    root = write_root(tmp_path, load1=1.25, mem_kb=2048 * 1024, psi=(12.5, 3.25), procs=PROCS)
    assert read_load1(root) == 1.25
    assert read_mem_available_mb(root) == 2048.0
    assert read_psi_some_avg10(root, "cpu") == 12.5 and read_psi_some_avg10(root, "memory") == 3.25
    assert read_freq_mhz(root) == 2400.0  # the median of 3000, 2000, 2400 MHz
    assert own_processes(root, (100,)) == {100, 101, 102}
    t = read_cpu_times(root, {100, 101, 102})
    assert t is not None and (t.total, t.idle, t.steal, t.cpus, t.runnable) == (10_000, 9_000, 0, 2, 3)
    assert t.own == 850


def test_what_a_vm_without_psi_or_cpufreq_gives_is_none(tmp_path: Path) -> None:
    root = write_root(tmp_path, psi=None, freqs_khz=())
    r = host_reading(root, read_cpu_times(root, set()), None)
    assert r.cpu_psi is None and r.mem_psi is None and r.freq_mhz is None
    assert r.busy is None and r.steal is None  # no earlier reading: no fractions
    assert r.load_per_core == 0.25 and r.cpus == 2
    nothing = host_reading(tmp_path / "nothing-here", read_cpu_times(tmp_path / "nothing-here", set()), None)
    assert msgspec.structs.replace(nothing, t=0.0) == Reading()  # no /proc at all: an empty reading, no error


def test_fractions_come_from_the_change_between_two_readings(tmp_path: Path) -> None:
    root = write_root(tmp_path, user=1000, idle=9000, steal=0, procs=PROCS)
    ours = own_processes(root, (100,))
    a = read_cpu_times(root, ours)
    # 200 ticks pass: 120 busy (40 of them ours), 60 idle, 20 stolen by the hypervisor
    procs = {**PROCS, 101: (100, 340, "llama-server (x) y")}
    write_root(tmp_path, user=1120, idle=9060, steal=20, procs=procs)
    b = read_cpu_times(root, ours)
    r = host_reading(root, b, a)
    assert (r.busy, r.own, r.other, r.steal) == (0.6, 0.2, 0.4, 0.1)


def _r(**kw: float | list[GpuReading]) -> Reading:
    return Reading(cpus=2, **kw)  # type: ignore[arg-type]


def test_summary_keeps_min_median_max_and_gpu_reasons_by_share_of_readings() -> None:
    during = [
        _r(t=1, load1=0.4, other=0.05, gpus=[GpuReading(index=0, sm_mhz=1900, reasons=["sw_thermal"])]),
        _r(t=2, load1=1.0, other=0.10, gpus=[GpuReading(index=0, sm_mhz=1500, reasons=["sw_thermal"])]),
        _r(t=3, load1=3.0, other=0.90, gpus=[GpuReading(index=0, sm_mhz=1700, reasons=["hw_slowdown"])]),
    ]
    c = summarise(_r(load1=0.3), during, _r(load1=2.5), 1.0)
    assert c.samples == 3 and c.interval_s == 1.0
    assert c.during_min is not None and c.during_median is not None and c.during_max is not None
    assert (c.during_min.load1, c.during_median.load1, c.during_max.load1) == (0.4, 1.0, 3.0)
    assert (c.during_min.other, c.during_median.other, c.during_max.other) == (0.05, 0.1, 0.9)
    assert c.during_max.load_per_core == 1.5
    g_lo, g_mid, g_hi = (r.gpus[0] for r in (c.during_min, c.during_median, c.during_max))
    assert (g_lo.sm_mhz, g_mid.sm_mhz, g_hi.sm_mhz) == (1500, 1700, 1900)
    assert g_lo.reasons == [] and g_mid.reasons == ["sw_thermal"]
    assert g_hi.reasons == ["hw_slowdown", "sw_thermal"]
    assert summarise(None, [], _r(load1=1), 1.0).typical == _r(load1=1)  # shorter than one interval


def test_a_load_that_rises_during_a_point_shows_in_its_conditions(tmp_path: Path) -> None:
    """Quiet before the point, then another job takes the CPUs: the point's maximum against its before
    reading makes it visible. The fixture tree changes between readings taken one by one (the thread's
    interval is longer than the test), so every reading sees a known change."""
    root = write_root(tmp_path, user=1000, idle=9000, load1=0.2, procs=PROCS)
    sampler = ConditionsSampler(interval_s=600.0, root=root, own_roots=(100,), gpus=False)
    with sampler:
        write_root(tmp_path, user=1010, idle=9190, load1=0.2, procs=PROCS)  # quiet: 5 % busy, none ours
        sampler.begin()
        for step in range(1, 6):  # the build: all CPU time busy, none of it ours; the load climbs
            write_root(tmp_path, user=1010 + 200 * step, idle=9190, load1=0.2 + 0.6 * step, procs=PROCS)
            sampler.sample()
        c = sampler.end()
    assert c.before is not None and c.before.other == 0.05 and c.before.load_per_core == 0.1
    assert c.samples == 5 and c.during_max is not None and c.during_max.other == 1.0
    assert c.during_max.load_per_core == 1.6
    assert conditions_notes(c) == [
        "load per CPU rose 0.10 → 1.60",
        "other processes rose 5 % → 100 % of the CPU",
    ]


def _cond(**kw: object) -> Conditions:
    mid = Reading(cpus=2, **kw)  # type: ignore[arg-type]
    return Conditions(before=mid, after=mid, during_min=mid, during_median=mid, during_max=mid, samples=5)


QUIET = dict(load1=0.8, other=0.03, steal=0.0, freq_mhz=3000.0, mem_psi=0.0, cpu_psi=5.0)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"load1": 2.4}, "host load per CPU 0.40 vs 1.20"),
        ({"other": 0.45}, "other processes used 3 % vs 45 % of the host's CPU"),
        ({"steal": 0.08}, "CPU steal 0 % vs 8 %"),
        ({"freq_mhz": 2600.0}, "CPU clock 3000 vs 2600 MHz"),
        ({"mem_psi": 15.0}, "memory pressure 0 vs 15"),
        ({"cpu_psi": 40.0}, "CPU pressure 5 vs 40"),
    ],
)
def test_each_host_condition_that_differs_is_named(change: dict[str, float], reason: str) -> None:
    a, b = _cond(**QUIET), _cond(**{**QUIET, **change})
    got = conditions_differ(a, b)
    assert len(got) == 1 and got[0].startswith(reason), got
    assert conditions_differ(b, a)  # either order


@pytest.mark.parametrize(
    "change",
    [
        {"load1": 1.3},  # 0.40 vs 0.65 per CPU: under both thresholds
        {"load1": 1.7},  # 0.85 per CPU: high, but only 0.45 apart
        {"other": 0.2},  # 17 points apart, under a quarter of the host
        {"steal": 0.04},  # under 5 %
        {"freq_mhz": 2800.0},  # 6.7 % lower
        {"mem_psi": 8.0},  # under 10
        {"cpu_psi": 22.0},  # under 25
    ],
)
def test_small_differences_are_not_named(change: dict[str, float]) -> None:
    assert conditions_differ(_cond(**QUIET), _cond(**{**QUIET, **change})) == []


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"cpu_psi": 49.0}, {"cpu_psi": 73.0}),  # an A/A on this shared box at load 2.5-3 per CPU
        ({"mem_psi": 12.0}, {"mem_psi": 30.0}),
    ],
)
def test_pressure_on_both_sides_is_not_a_difference(a: dict[str, float], b: dict[str, float]) -> None:
    assert conditions_differ(_cond(**{**QUIET, **a}), _cond(**{**QUIET, **b})) == []


def test_steal_on_both_sides_alike_is_not_a_difference() -> None:
    assert conditions_differ(_cond(**{**QUIET, "steal": 0.09}), _cond(**{**QUIET, "steal": 0.10})) == []


def test_unknown_figures_and_missing_conditions_claim_nothing() -> None:
    assert conditions_differ(_cond(**QUIET), _cond()) == []
    assert conditions_differ(Conditions(), _cond(**QUIET)) == []


def _gpu(**kw: object) -> GpuReading:
    return GpuReading(**{"index": 0, "sm_mhz": 1980.0, "temp_c": 65.0, "util_pct": 95.0, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"reasons": ["sw_thermal"]}, "GPU 0 throttled: no vs sw_thermal"),
        ({"sm_mhz": 1500.0}, "GPU 0 SM clock 1980 vs 1500 MHz"),
        ({"temp_c": 80.0}, "GPU 0 temperature 65 vs 80 °C"),
    ],
)
def test_gpu_conditions_that_differ_are_named(change: dict[str, object], reason: str) -> None:
    got = conditions_differ(_cond(gpus=[_gpu()]), _cond(gpus=[_gpu(**change)]))
    assert got == [reason]


def test_idle_gpus_and_non_throttling_reasons_are_not_differences() -> None:
    idle_a = _gpu(util_pct=0.0, sm_mhz=210.0, reasons=["idle"])
    idle_b = _gpu(util_pct=2.0, sm_mhz=1400.0, reasons=[])
    assert conditions_differ(_cond(gpus=[idle_a]), _cond(gpus=[idle_b])) == []
    assert conditions_differ(_cond(gpus=[_gpu(reasons=["app_clocks"])]), _cond(gpus=[_gpu()])) == []


def test_one_points_notes_name_steal_pressure_and_throttling() -> None:
    c = _cond(steal=0.12, mem_psi=22.0, gpus=[_gpu(reasons=["idle", "hw_slowdown"])])
    assert conditions_notes(c) == [
        "steal up to 12 %",
        "memory pressure up to 22 (PSI)",
        "GPU 0 throttled (hw_slowdown)",
    ]
    assert conditions_notes(_cond(**QUIET)) == [] and conditions_notes(Conditions()) == []


def test_conditions_ride_on_point_finished_and_the_view_folds_them() -> None:
    c = summarise(_r(load1=0.5), [_r(load1=0.6, gpus=[_gpu()])], _r(load1=0.7), 1.0)
    pid = "s.default/sweep/pp8-tg4-d0-c1"
    ev = PointFinished(point_id=pid, status="ok", conditions=c)
    back = decode(encode(ev))
    assert isinstance(back, PointFinished) and back.conditions == c
    old = msgspec.json.decode(encode(PointFinished(point_id=pid, status="ok")))
    assert "conditions" not in old  # absent when not recorded (readers of older runs see None)
    point = PlanPoint(
        point_id=pid,
        engine="s",
        variant="default",
        workload="sweep",
        kind="throughput",
        params=ThroughputParams(pp=8, tg=4),
    )
    view = RunView.from_events([PlanReady(points=[point]), PointStarted(point_id=pid), back])
    assert view.points[pid].conditions == c


def test_a_side_of_several_sessions_is_judged_by_the_median_of_their_medians() -> None:
    quiet, loaded = _cond(**QUIET), _cond(**{**QUIET, "other": 0.5})
    side = pooled([quiet, loaded, _cond(**{**QUIET, "other": 0.45}), None])
    assert side is not None and side.samples == 3 and side.typical is not None
    assert side.typical.other == 0.45
    assert conditions_differ(pooled([quiet, quiet]), side)[0].startswith(  # type: ignore[arg-type]
        "other processes used 3 % vs 45 %"
    )
    assert pooled([None, Conditions()]) is None

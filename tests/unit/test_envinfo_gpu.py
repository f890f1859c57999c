"""GPU readings through NVML, with a stand-in ``pynvml`` module (this machine has no GPU): the readings
are mapped and combined as documented, a missing NVML gives nothing, and a failing device never raises."""

from __future__ import annotations

import sys
import types

import pytest

from bench_tui.envinfo import capture_env
from bench_tui.envinfo.conditions import ConditionsSampler
from bench_tui.envinfo.gpu import gpu_totals, nvml, read_gpus
from bench_tui.events import GpuReading


def _fake_nvml(
    devices: list[dict[str, float]], *, fail_at: int | None = None, old_names: bool = False
) -> types.ModuleType:
    """A pynvml with NVML's function names and constants; ``old_names``: only the deprecated
    ``...ClocksThrottleReasons`` (bindings before the rename)."""
    m = types.ModuleType("pynvml")
    m.calls = {"init": 0, "shutdown": 0}  # type: ignore[attr-defined]

    def init() -> None:
        m.calls["init"] += 1  # type: ignore[attr-defined]

    def shutdown() -> None:
        m.calls["shutdown"] += 1  # type: ignore[attr-defined]

    m.nvmlInit, m.nvmlShutdown = init, shutdown  # type: ignore[attr-defined]
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 1, 2, 0  # type: ignore[attr-defined]
    m.nvmlDeviceGetCount = lambda: len(devices)  # type: ignore[attr-defined]

    def handle(i: int) -> int:
        if fail_at is not None and i == fail_at:
            raise RuntimeError("GPU is lost")
        return i

    def clock(h: int, kind: int) -> int:
        return int(devices[h]["sm_mhz" if kind == 1 else "mem_mhz"])

    def temperature(h: int, sensor: int) -> int:
        assert sensor == 0
        return int(devices[h]["temp_c"])

    m.nvmlDeviceGetHandleByIndex = handle  # type: ignore[attr-defined]
    m.nvmlDeviceGetClockInfo = clock  # type: ignore[attr-defined]
    m.nvmlDeviceGetTemperature = temperature  # type: ignore[attr-defined]
    m.nvmlDeviceGetPowerUsage = lambda h: devices[h]["power_mw"]  # type: ignore[attr-defined]
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(  # type: ignore[attr-defined]
        used=int(devices[h]["used_mb"]) << 20, total=32 << 30
    )
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=devices[h]["util"])  # type: ignore[attr-defined]
    reasons = lambda h: int(devices[h]["reasons"])  # noqa: E731
    if old_names:
        m.nvmlDeviceGetCurrentClocksThrottleReasons = reasons  # type: ignore[attr-defined]
    else:
        m.nvmlDeviceGetCurrentClocksEventReasons = reasons  # type: ignore[attr-defined]
    m.nvmlDeviceGetName = lambda h: "Fake RTX"  # type: ignore[attr-defined]
    m.nvmlSystemGetDriverVersion = lambda: "999.1"  # type: ignore[attr-defined]
    return m


HOT = {
    "power_mw": 350_500,
    "used_mb": 30_000,
    "util": 90,
    "sm_mhz": 1410,
    "mem_mhz": 9501,
    "temp_c": 86,
    "reasons": 0x20 | 0x4,  # sw thermal slowdown + sw power cap
}
IDLE = {
    "power_mw": 100_000,
    "used_mb": 2_000,
    "util": 10,
    "sm_mhz": 210,
    "mem_mhz": 405,
    "temp_c": 35,
    "reasons": 0x1,  # idle
}


def test_every_figure_is_read_per_device_and_reasons_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_nvml([HOT, IDLE])
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    with nvml() as nv:
        gpus = read_gpus(nv)
    assert gpus == [
        GpuReading(
            index=0,
            sm_mhz=1410.0,
            mem_mhz=9501.0,
            power_w=350.5,
            temp_c=86.0,
            mem_used_mb=30_000.0,
            util_pct=90.0,
            reasons=["sw_power_cap", "sw_thermal"],
        ),
        GpuReading(
            index=1,
            sm_mhz=210.0,
            mem_mhz=405.0,
            power_w=100.0,
            temp_c=35.0,
            mem_used_mb=2_000.0,
            util_pct=10.0,
            reasons=["idle"],
        ),
    ]
    assert fake.calls == {"init": 1, "shutdown": 1}  # type: ignore[attr-defined]
    assert gpu_totals(gpus) == {"power_w": 450.5, "mem_used_mb": 32_000.0, "util_pct": 50.0}
    env_gpus = capture_env([])["gpus"]
    assert [g["name"] for g in env_gpus] == ["Fake RTX", "Fake RTX"] and env_gpus[0]["driver"] == "999.1"


def test_bindings_before_the_rename_still_give_throttle_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([{**HOT, "reasons": 0x8 | 0x40}], old_names=True))
    with nvml() as nv:
        assert read_gpus(nv)[0].reasons == ["hw_slowdown", "hw_thermal"]


def test_a_failing_device_keeps_what_was_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([HOT, IDLE], fail_at=1))
    with nvml() as nv:
        gpus = read_gpus(nv)
    assert [g.index for g in gpus] == [0]
    assert gpu_totals(gpus) == {"power_w": 350.5, "mem_used_mb": 30_000.0, "util_pct": 90.0}


def test_a_figure_the_driver_refuses_stays_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_nvml([HOT])

    def refuse(h: int, sensor: int) -> int:
        raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")

    fake.nvmlDeviceGetTemperature = refuse  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    with nvml() as nv:
        g = read_gpus(nv)[0]
    assert g.temp_c is None and g.sm_mhz == 1410.0 and g.reasons == ["sw_power_cap", "sw_thermal"]


def test_without_nvml_there_is_no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    with nvml() as nv:
        assert nv is None and read_gpus(nv) == []
    assert gpu_totals([]) == {}
    assert "gpus" not in capture_env([])


def test_the_sampler_holds_one_nvml_session_and_records_gpus_per_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _fake_nvml([HOT, IDLE])
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    sampler = ConditionsSampler(interval_s=600.0)  # readings taken one by one below
    with sampler:
        sampler.begin()
        sampler.sample()
        sampler.sample()
        c = sampler.end()
        assert sampler.gpu_totals() == {"power_w": 450.5, "mem_used_mb": 32_000.0, "util_pct": 50.0}
    assert fake.calls == {"init": 1, "shutdown": 1}  # type: ignore[attr-defined]
    assert c.samples == 2 and c.before is not None and c.after is not None
    assert c.during_max is not None and [g.reasons for g in c.during_max.gpus] == [
        ["sw_power_cap", "sw_thermal"],
        ["idle"],
    ]
    assert c.during_median is not None and c.during_median.gpus[0].sm_mhz == 1410.0

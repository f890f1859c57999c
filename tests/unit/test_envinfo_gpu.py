"""GPU sampling through NVML, with a stand-in ``pynvml`` module (this machine has no GPU): the readings
are mapped and combined as documented, a missing NVML gives nothing, and a failing device never raises."""

from __future__ import annotations

import sys
import types

import pytest

from bench_tui.envinfo import capture_env, gpu_sample


def _fake_nvml(devices: list[dict[str, float]], *, fail_at: int | None = None) -> types.ModuleType:
    m = types.ModuleType("pynvml")
    m.nvmlInit = lambda: None  # type: ignore[attr-defined]
    m.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    m.nvmlDeviceGetCount = lambda: len(devices)  # type: ignore[attr-defined]

    def handle(i: int) -> int:
        if fail_at is not None and i == fail_at:
            raise RuntimeError("GPU is lost")
        return i

    m.nvmlDeviceGetHandleByIndex = handle  # type: ignore[attr-defined]
    m.nvmlDeviceGetPowerUsage = lambda h: devices[h]["power_mw"]  # type: ignore[attr-defined]
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(  # type: ignore[attr-defined]
        used=int(devices[h]["used_mb"]) << 20, total=32 << 30
    )
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=devices[h]["util"])  # type: ignore[attr-defined]
    m.nvmlDeviceGetName = lambda h: "Fake RTX"  # type: ignore[attr-defined]
    m.nvmlSystemGetDriverVersion = lambda: "999.1"  # type: ignore[attr-defined]
    return m


def test_two_gpus_sum_power_and_memory_and_average_utilisation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules,
        "pynvml",
        _fake_nvml(
            [
                {"power_mw": 350_500, "used_mb": 30_000, "util": 90},
                {"power_mw": 100_000, "used_mb": 2_000, "util": 10},
            ]
        ),
    )
    assert gpu_sample() == {"power_w": 450.5, "mem_used_mb": 32_000.0, "util_pct": 50.0}
    gpus = capture_env([])["gpus"]
    assert [g["name"] for g in gpus] == ["Fake RTX", "Fake RTX"] and gpus[0]["driver"] == "999.1"


def test_a_failing_device_keeps_what_was_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules,
        "pynvml",
        _fake_nvml(
            [
                {"power_mw": 200_000, "used_mb": 1_024, "util": 40},
                {"power_mw": 1, "used_mb": 1, "util": 1},
            ],
            fail_at=1,
        ),
    )
    assert gpu_sample() == {"power_w": 200.0, "mem_used_mb": 1024.0, "util_pct": 40.0}


def test_without_nvml_there_is_no_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert gpu_sample() == {}
    assert "gpus" not in capture_env([])

"""NVIDIA GPUs through NVML (``pynvml``, from the ``nvidia-ml-py`` package, extra ``[gpu]``).

``nvml()`` opens an NVML session (None without the package or a driver); ``read_gpus(nv)`` reads every
device's clocks, power, temperature, memory in use, utilisation and active clocks-event (throttle) reasons,
each figure best effort; ``gpu_totals`` sums them for the engine panel. Nothing here raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from bench_tui.events import GpuReading

# NVML's clocks-event reason bits (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*): the name we record
REASONS: dict[int, str] = {
    0x1: "idle",
    0x2: "app_clocks",  # applications clocks set below the maximum
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clocks",
}
# the reasons that mean the GPU is held below the clocks it would otherwise run at, by power or heat
THROTTLING = frozenset({"sw_power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"})


def reason_names(mask: int) -> list[str]:
    return [name for bit, name in REASONS.items() if mask & bit]


@contextlib.contextmanager
def nvml() -> Iterator[Any]:
    """An initialised ``pynvml`` module for the block, or None (no package, no driver). NVML counts its
    initialisations, so nested and concurrent sessions are fine."""
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - absent, broken or no driver: no GPU figures
        yield None
        return
    try:
        yield pynvml
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def _try(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - a figure this GPU or driver does not give
        return None


def read_gpu(nv: Any, index: int) -> GpuReading:
    """One device's figures now; the ones NVML refuses stay None."""
    g = GpuReading(index=index)
    h = _try(nv.nvmlDeviceGetHandleByIndex, index)
    if h is None:
        return g
    sm = _try(nv.nvmlDeviceGetClockInfo, h, getattr(nv, "NVML_CLOCK_SM", 1))
    mem_clock = _try(nv.nvmlDeviceGetClockInfo, h, getattr(nv, "NVML_CLOCK_MEM", 2))
    power = _try(nv.nvmlDeviceGetPowerUsage, h)  # mW
    temp = _try(nv.nvmlDeviceGetTemperature, h, getattr(nv, "NVML_TEMPERATURE_GPU", 0))
    mem = _try(nv.nvmlDeviceGetMemoryInfo, h)
    util = _try(nv.nvmlDeviceGetUtilizationRates, h)
    # the newer name first (drivers >= 535), the deprecated one for older bindings
    get_reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    mask = _try(get_reasons, h) if get_reasons is not None else None
    g.sm_mhz = float(sm) if sm is not None else None
    g.mem_mhz = float(mem_clock) if mem_clock is not None else None
    g.power_w = round(power / 1000.0, 1) if power is not None else None
    g.temp_c = float(temp) if temp is not None else None
    g.mem_used_mb = round(int(mem.used) / (1 << 20), 1) if mem is not None else None
    g.util_pct = float(util.gpu) if util is not None else None
    g.reasons = reason_names(int(mask)) if mask is not None else []
    return g


def read_gpus(nv: Any) -> list[GpuReading]:
    """Every device's figures (empty without a session); a device that does not answer is left out."""
    if nv is None:
        return []
    count = _try(nv.nvmlDeviceGetCount)
    out = []
    for i in range(int(count or 0)):
        g = read_gpu(nv, i)
        if g != GpuReading(index=i):
            out.append(g)
    return out


def gpu_totals(gpus: list[GpuReading]) -> dict[str, float]:
    """Power and memory in use summed, utilisation averaged over the GPUs: the engine panel's figures."""
    if not gpus:
        return {}
    out: dict[str, float] = {}
    power = [g.power_w for g in gpus if g.power_w is not None]
    mem = [g.mem_used_mb for g in gpus if g.mem_used_mb is not None]
    util = [g.util_pct for g in gpus if g.util_pct is not None]
    if power:
        out["power_w"] = round(sum(power), 1)
    if mem:
        out["mem_used_mb"] = round(sum(mem), 1)
    if util:
        out["util_pct"] = round(sum(util) / len(util), 1)
    return out

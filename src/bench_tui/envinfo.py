"""``env.json`` of a run: the host, its CPU, memory and GPUs, and each engine's version and exact command.

``capture_env(adapters)`` never raises: every probe is best effort and a failed one leaves its field out.
GPUs come from NVML when ``pynvml`` (the ``nvidia-ml-py`` package, extra ``[gpu]``) is importable and a
driver answers; otherwise the ``gpus`` key is absent. Engines are keyed ``name.variant``; their commands are
already redacted by the adapters (and the run store redacts the whole file again on write).
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from collections.abc import Iterable
from typing import Any


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _cpu() -> dict[str, Any]:
    out: dict[str, Any] = {"logical_cores": os.cpu_count()}
    try:
        out["usable_cores"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    info = _read("/proc/cpuinfo")
    physical: set[tuple[str, str]] = set()
    phys_id = ""
    for line in info.splitlines():
        key, _, val = line.partition(":")
        key, val = key.strip(), val.strip()
        if key == "model name" and "model" not in out:
            out["model"] = val
        elif key == "physical id":
            phys_id = val
        elif key == "core id":
            physical.add((phys_id, val))
    if physical:
        out["physical_cores"] = len(physical)
    if "model" not in out:
        out["model"] = platform.processor() or platform.machine()
    out["arch"] = platform.machine()
    return out


def _memory() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in _read("/proc/meminfo").splitlines():
        key, _, val = line.partition(":")
        parts = val.split()
        if key in ("MemTotal", "MemAvailable") and parts and parts[0].isdigit():
            out["total_mb" if key == "MemTotal" else "available_mb"] = int(parts[0]) // 1024
    if not out:
        try:
            out["total_mb"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
        except (ValueError, OSError, AttributeError):
            pass
    return out


def _text(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _gpus() -> list[dict[str, Any]] | None:
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]
    except Exception:  # noqa: BLE001 - absent or broken: no GPU section
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver
        return None
    gpus: list[dict[str, Any]] = []
    try:
        driver = ""
        try:
            driver = _text(pynvml.nvmlSystemGetDriverVersion())
        except Exception:  # noqa: BLE001
            pass
        cuda = None
        try:
            v = int(pynvml.nvmlSystemGetCudaDriverVersion())
            cuda = f"{v // 1000}.{(v % 1000) // 10}"
        except Exception:  # noqa: BLE001
            pass
        for i in range(int(pynvml.nvmlDeviceGetCount())):
            g: dict[str, Any] = {"index": i, "driver": driver}
            if cuda:
                g["cuda_driver"] = cuda
            try:
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                g["name"] = _text(pynvml.nvmlDeviceGetName(h))
                mem = pynvml.nvmlDeviceGetMemoryInfo(h)
                g["memory_total_mb"] = int(mem.total) // (1 << 20)
                g["memory_used_mb"] = int(mem.used) // (1 << 20)
                try:
                    g["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0
                except Exception:  # noqa: BLE001
                    pass
                try:
                    g["uuid"] = _text(pynvml.nvmlDeviceGetUUID(h))
                except Exception:  # noqa: BLE001
                    pass
            except Exception as exc:  # noqa: BLE001
                g["error"] = str(exc)
            gpus.append(g)
    except Exception:  # noqa: BLE001
        return gpus or None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return gpus


def _engine(adapter: Any) -> dict[str, Any]:
    try:
        info = adapter.env_info()
        out = dict(info) if isinstance(info, dict) else {}
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose env.json
        out = {"error": f"env_info failed: {type(exc).__name__}: {exc}"}
    out.setdefault("kind", getattr(adapter, "kind", ""))
    return out


def capture_env(adapters: Iterable[Any] = ()) -> dict[str, Any]:
    env: dict[str, Any] = {"captured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        env["host"] = {
            "hostname": socket.gethostname(),
            "os": platform.platform(),
            "kernel": platform.release(),
            "python": platform.python_version(),
            "python_executable": sys.executable,
        }
    except Exception:  # noqa: BLE001
        env["host"] = {}
    try:
        from importlib.metadata import version

        env["host"]["bench_tui"] = version("bench-tui")
    except Exception:  # noqa: BLE001
        pass
    for key, probe in (("cpu", _cpu), ("memory", _memory)):
        try:
            env[key] = probe()
        except Exception:  # noqa: BLE001
            pass
    try:
        gpus = _gpus()
        if gpus is not None:
            env["gpus"] = gpus
    except Exception:  # noqa: BLE001
        pass
    engines: dict[str, Any] = {}
    try:
        for a in adapters:
            key = f"{getattr(a, 'name', '?')}.{getattr(a, 'variant_name', '?')}"
            engines[key] = _engine(a)
    except Exception:  # noqa: BLE001
        pass
    env["engines"] = engines
    return env


def gpu_sample() -> dict[str, float]:
    """Power, memory in use and utilisation summed (power, memory) or averaged (utilisation) over the GPUs,
    for the engine panel and the point records while a point runs. Empty without NVML; never raises."""
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no NVML or no driver: nothing to sample
        return {}
    power = mem = util = 0.0
    n = 0
    try:
        for i in range(int(pynvml.nvmlDeviceGetCount())):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            power += pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0  # mW
            mem += int(pynvml.nvmlDeviceGetMemoryInfo(h).used) / (1 << 20)
            util += float(pynvml.nvmlDeviceGetUtilizationRates(h).gpu)
            n += 1
    except Exception:  # noqa: BLE001 - a GPU that does not answer: report what was read
        pass
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    if not n:
        return {}
    return {"power_w": round(power, 1), "mem_used_mb": round(mem, 1), "util_pct": round(util / n, 1)}

"""``env.json`` of a run: the host, its CPU, memory and GPUs, and each engine's version and exact command.

``capture_env(adapters)`` never raises: every probe is best effort and a failed one leaves its field out.
GPUs come from NVML (``envinfo.gpu``) when ``pynvml`` (the ``nvidia-ml-py`` package, extra ``[gpu]``) is
importable and a driver answers; otherwise the ``gpus`` key is absent. The machine's conditions around each
point (load, steal, clocks, pressure, GPU clocks and throttling) are sampled by ``envinfo.conditions``.
Engines are keyed ``name.variant``; their commands are already redacted by the adapters (and the run store
redacts the whole file again on write).
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import sys
import time
from collections.abc import Iterable
from typing import Any

from bench_tui.envinfo.gpu import nvml


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
    with nvml() as nv:
        if nv is None:
            return None
        driver = ""
        with contextlib.suppress(Exception):
            driver = _text(nv.nvmlSystemGetDriverVersion())
        cuda = None
        with contextlib.suppress(Exception):
            v = int(nv.nvmlSystemGetCudaDriverVersion())
            cuda = f"{v // 1000}.{(v % 1000) // 10}"
        gpus: list[dict[str, Any]] = []
        try:
            count = int(nv.nvmlDeviceGetCount())
        except Exception:  # noqa: BLE001
            return None
        for i in range(count):
            g: dict[str, Any] = {"index": i, "driver": driver}
            if cuda:
                g["cuda_driver"] = cuda
            try:
                h = nv.nvmlDeviceGetHandleByIndex(i)
                g["name"] = _text(nv.nvmlDeviceGetName(h))
                mem = nv.nvmlDeviceGetMemoryInfo(h)
                g["memory_total_mb"] = int(mem.total) // (1 << 20)
                g["memory_used_mb"] = int(mem.used) // (1 << 20)
                with contextlib.suppress(Exception):
                    g["power_limit_w"] = nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0
                with contextlib.suppress(Exception):
                    g["uuid"] = _text(nv.nvmlDeviceGetUUID(h))
            except Exception as exc:  # noqa: BLE001
                g["error"] = str(exc)
            gpus.append(g)
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

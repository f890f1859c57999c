"""The machine's conditions around each point: host load, CPU steal and frequency, memory and CPU pressure,
and NVIDIA GPU clocks, power, temperature, memory and throttle reasons.

A comparison must not call two variants different when one of them ran while something else loaded the
host. So every point records (``events.Conditions`` on its ``point_finished``) a reading as it starts, one as
it ends, and the minimum / median / maximum of the readings a background thread takes about once a second
while it runs. ``conditions_differ`` says, in words, when two sides of a comparison ran under materially
different conditions; ``conditions_notes`` when one point's conditions changed while it ran. The thresholds
and their reasons are in docs/DEFINITIONS.md ("Machine conditions").

Readers (each takes the filesystem root, so tests read fixture trees):
- ``/proc/stat``: CPU time split (busy, idle, steal) and ``procs_running``; fractions come from the change
  between two readings, of the whole host. ``own`` is the CPU time of this process and its descendants (the
  engines it launched, load workers), from their ``/proc/<pid>/stat``; ``other`` = busy - own is everyone
  else. An external engine is not our descendant: it counts as other (so does the TUI's drawing process, the
  measuring child's parent). A descendant that exits takes its last interval's ticks with it.
- ``/proc/loadavg`` (1-minute load), ``/proc/meminfo`` (MemAvailable), ``/proc/pressure/{cpu,memory}`` (PSI
  "some" avg10, absent on kernels without PSI), ``/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq``
  (absent in most VMs).
- GPUs through ``envinfo.gpu`` (NVML), one session for the sampler's life.

The sampler runs in its own thread, never in the measuring event loop. A reading reads a few /proc files and
the benchmark's own processes' stat files; the whole process table is scanned only at each point's start and
every ``TREE_S`` seconds to find those processes (bench/conditions_cost.py measures both).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_tui.envinfo.gpu import REASONS, THROTTLING, gpu_totals, nvml, read_gpus
from bench_tui.events import Conditions, GpuReading, Reading

INTERVAL_S = 1.0  # between readings while the run goes on
TREE_S = 10.0  # how often the benchmark's process tree is found again (and at every point's start)
MIN_RATE = 0.5  # before/after CPU fractions span at least this many intervals (once the sampler ran)


# ------------------------------------------------------------------------------------------------ readers


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU ticks (USER_HZ) at one moment: the host's from /proc/stat, ours from /proc/<pid>/stat."""

    t: float  # monotonic s
    total: int  # user + nice + system + idle + iowait + irq + softirq + steal
    idle: int  # idle + iowait
    steal: int
    own: int  # utime + stime of the benchmark's processes
    cpus: int
    runnable: int | None


def read_cpu_times(root: Path, own: set[int]) -> CpuTimes | None:
    total = idle = steal = cpus = 0
    runnable: int | None = None
    found = False
    for line in _text(root / "proc/stat").splitlines():
        key, _, rest = line.partition(" ")
        if key == "cpu":
            v = [int(x) for x in rest.split()[:8]]
            v += [0] * (8 - len(v))
            user, nice, system, idl, iowait, irq, softirq, st = v
            total = user + nice + system + idl + iowait + irq + softirq + st
            idle, steal, found = idl + iowait, st, True
        elif key.startswith("cpu"):
            cpus += 1
        elif key == "procs_running":
            with contextlib.suppress(ValueError):
                runnable = int(rest)
    if not found:
        return None
    own_ticks = sum(t for _, t in _proc_stats(root, own).values())
    return CpuTimes(time.monotonic(), total, idle, steal, own_ticks, cpus, runnable)


def busy_cpus(window_s: float = 0.25, root: Path = Path("/")) -> float | None:
    """How many CPUs' worth of work the host does right now: the busy share of /proc/stat's ticks over a short
    window times the CPU count (None without /proc/stat). Unlike the 1-minute load average it does not still
    count an engine that stopped a few seconds ago (the previous engine session's)."""
    a = read_cpu_times(root, set())
    if a is None:
        return None
    time.sleep(window_s)
    b = read_cpu_times(root, set())
    if b is None or b.total <= a.total:
        return None
    busy = ((b.total - b.idle) - (a.total - a.idle)) / (b.total - a.total)
    return max(0.0, busy) * b.cpus


def _proc_stats(root: Path, pids: Iterable[str | int] | None = None) -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, utime + stime) from /proc/<pid>/stat, for ``pids`` or every process. Plain os
    calls: this runs every second."""
    proc = os.path.join(root, "proc")
    if pids is None:
        try:
            pids = [n for n in os.listdir(proc) if n.isdigit()]
        except OSError:
            return {}
    out: dict[int, tuple[int, int]] = {}
    for pid in pids:
        try:
            with open(os.path.join(proc, str(pid), "stat"), "rb") as fh:
                raw = fh.read()
        except OSError:
            continue  # exited meanwhile (its last ticks go with it: a short undercount of ``own``)
        f = raw[raw.rfind(b")") + 1 :].split()  # the command name may hold spaces and parentheses
        with contextlib.suppress(ValueError, IndexError):
            out[int(pid)] = (int(f[1]), int(f[11]) + int(f[12]))  # fields 4, 14, 15: ppid, utime, stime
    return out


def own_processes(root: Path, roots: tuple[int, ...]) -> set[int]:
    """The ``roots`` processes and all their descendants (one scan of every process)."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in _proc_stats(root).items():
        children.setdefault(ppid, []).append(pid)
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(children.get(pid, ()))
    return seen


def read_load1(root: Path) -> float | None:
    parts = _text(root / "proc/loadavg").split()
    try:
        return float(parts[0])
    except (IndexError, ValueError):
        return None


def read_mem_available_mb(root: Path) -> float | None:
    for line in _text(root / "proc/meminfo").splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            with contextlib.suppress(IndexError, ValueError):
                return round(int(parts[1]) / 1024, 1)  # kB
    return None


def read_psi_some_avg10(root: Path, resource: str) -> float | None:
    """PSI's "some avg10" for ``cpu`` or ``memory``: the share (%) of the last 10 s in which at least one
    task waited for that resource. None without PSI (kernel < 4.20 or psi=0)."""
    for line in _text(root / "proc/pressure" / resource).splitlines():
        if line.startswith("some "):
            for field in line.split()[1:]:
                key, _, val = field.partition("=")
                if key == "avg10":
                    with contextlib.suppress(ValueError):
                        return float(val)
    return None


def read_freq_mhz(root: Path) -> float | None:
    """Median current frequency over the CPUs that expose cpufreq (most VMs do not)."""
    base = root / "sys/devices/system/cpu"
    khz: list[int] = []
    try:
        names = sorted(p.name for p in base.iterdir() if p.name[3:].isdigit() and p.name.startswith("cpu"))
    except OSError:
        return None
    for name in names:
        raw = _text(base / name / "cpufreq/scaling_cur_freq").strip()
        if raw.isdigit():
            khz.append(int(raw))
    return round(statistics.median(khz) / 1000.0, 1) if khz else None


def host_reading(root: Path, now: CpuTimes | None, base: CpuTimes | None) -> Reading:
    """One reading of the host; its CPU fractions cover ``base`` → ``now`` (None without a base)."""
    r = Reading(
        t=time.time(),
        load1=read_load1(root),
        freq_mhz=read_freq_mhz(root),
        mem_available_mb=read_mem_available_mb(root),
        mem_psi=read_psi_some_avg10(root, "memory"),
        cpu_psi=read_psi_some_avg10(root, "cpu"),
    )
    if now is None:
        return r
    r.cpus, r.runnable = now.cpus or None, now.runnable
    dt = now.total - base.total if base is not None else 0
    if base is not None and dt > 0:
        busy = max(
            0.0, min(1.0, ((now.total - now.idle - now.steal) - (base.total - base.idle - base.steal)) / dt)
        )
        own = max(0.0, min(busy, (now.own - base.own) / dt))
        r.busy, r.own, r.other = round(busy, 4), round(own, 4), round(busy - own, 4)
        r.steal = round(max(0.0, (now.steal - base.steal) / dt), 4)
    return r


# ------------------------------------------------------------------------------------------------ summary


_HOST_FIELDS = tuple(
    f for f in msgspec.structs.fields(Reading) if f.name not in ("cpus", "gpus")
)  # t, load1, runnable, busy, ... : numbers that vary
_GPU_FIELDS = tuple(f for f in msgspec.structs.fields(GpuReading) if f.name not in ("index", "reasons"))


def _spread(values: list[float]) -> tuple[float, float, float]:
    return min(values), round(float(statistics.median(values)), 4), max(values)


def _fill(targets: tuple[Any, Any, Any], items: list[Any], fields: tuple[Any, ...]) -> None:
    for f in fields:
        vals = [v for v in (getattr(x, f.name) for x in items) if v is not None]
        if vals:
            for target, value in zip(targets, _spread(vals), strict=True):
                setattr(target, f.name, value)


def summarise(
    before: Reading | None, during: list[Reading], after: Reading | None, interval_s: float
) -> Conditions:
    """A point's conditions from its first and last reading and those taken while it ran."""
    c = Conditions(before=before, after=after, samples=len(during), interval_s=interval_s)
    if not during:
        return c
    lo, mid, hi = Reading(), Reading(), Reading()
    _fill((lo, mid, hi), during, _HOST_FIELDS)
    cpus = [r.cpus for r in during if r.cpus]
    lo.cpus = mid.cpus = hi.cpus = max(cpus) if cpus else None
    by_index: dict[int, list[GpuReading]] = {}
    for r in during:
        for g in r.gpus:
            by_index.setdefault(g.index, []).append(g)
    for index, gs in sorted(by_index.items()):
        glo, gmid, ghi = GpuReading(index=index), GpuReading(index=index), GpuReading(index=index)
        _fill((glo, gmid, ghi), gs, _GPU_FIELDS)
        counts = {name: sum(name in g.reasons for g in gs) for name in REASONS.values()}
        glo.reasons = [n for n, k in counts.items() if k == len(gs)]
        gmid.reasons = [n for n, k in counts.items() if 2 * k >= len(gs) and k]
        ghi.reasons = [n for n, k in counts.items() if k]
        lo.gpus.append(glo)
        mid.gpus.append(gmid)
        hi.gpus.append(ghi)
    c.during_min, c.during_median, c.during_max = lo, mid, hi
    return c


def pooled(conditions: Iterable[Conditions | None]) -> Conditions | None:
    """One side of a comparison that ran as several points (engine sessions) as one: the min / median / max
    over each point's typical reading (its median). None when no point recorded its conditions."""
    typical = [r for c in conditions if c is not None and (r := c.typical) is not None]
    if not typical:
        return None
    return summarise(None, typical, None, 0.0)


# ------------------------------------------------------------------------------------------------ sampler


class ConditionsSampler:
    """Readings about once a second in a daemon thread for the whole run; ``begin()`` / ``end()`` around each
    point give its :class:`Conditions`. Thread-safe; nothing here raises into the caller's loop."""

    def __init__(
        self,
        *,
        interval_s: float = INTERVAL_S,
        root: str | os.PathLike[str] = "/",
        own_roots: tuple[int, ...] | None = None,
        gpus: bool = True,
    ) -> None:
        self.interval_s = interval_s
        self.root = Path(root)
        self.own_roots = own_roots if own_roots is not None else (os.getpid(),)
        self._own: set[int] = set()
        self._own_at = -TREE_S
        self._gpus = gpus
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nvml: contextlib.ExitStack | None = None
        self._nv: Any = None
        self._snaps: deque[CpuTimes] = deque(maxlen=3)  # the latest ticks' counters: bases for rates
        self._window: list[Reading] | None = None
        self._before: Reading | None = None
        self._latest: Reading | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        if self._gpus:
            self._nvml = contextlib.ExitStack()
            self._nv = self._nvml.enter_context(nvml())
        self.sample()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="bench-tui-conditions", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        if self._nvml is not None:
            self._nvml.close()
            self._nvml, self._nv = None, None

    def __enter__(self) -> ConditionsSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        """Take one reading, as the thread does every interval (collected when a point is running)."""
        try:
            now = read_cpu_times(self.root, self._own_tree())
            with self._lock:
                base = self._snaps[-1] if self._snaps else None
                if now is not None:
                    self._snaps.append(now)
            r = host_reading(self.root, now, base)
            r.gpus = read_gpus(self._nv)
        except Exception:  # noqa: BLE001 - a reading that fails is a reading missed, never a failed run
            return
        with self._lock:
            self._latest = r
            if self._window is not None:
                self._window.append(r)

    def _own_tree(self, *, fresh: bool = False) -> set[int]:
        """The benchmark's processes, found again every ``TREE_S`` seconds (or when ``fresh``)."""
        if fresh or time.monotonic() - self._own_at >= TREE_S:
            tree = own_processes(self.root, self.own_roots)
            with self._lock:
                self._own, self._own_at = tree, time.monotonic()
        with self._lock:
            return set(self._own)

    def read_now(self) -> Reading:
        """A reading now, its CPU fractions over the last 0.5-1.5 intervals (from the sampler's recent ticks)."""
        now = read_cpu_times(self.root, self._own_tree())
        with self._lock:
            snaps = list(self._snaps)
        base = None
        if now is not None:
            moved = [s for s in snaps if s.total != now.total]  # a base the CPU counters moved since
            old = [s for s in moved if now.t - s.t >= MIN_RATE * self.interval_s]
            base = old[-1] if old else (moved[0] if moved else None)
        r = host_reading(self.root, now, base)
        r.gpus = read_gpus(self._nv)
        return r

    def begin(self) -> None:
        """A point starts: the reading before it, and collect the readings during it."""
        with contextlib.suppress(Exception):
            self._own_tree(fresh=True)  # an engine started since the last look is ours
        before = self._safe_read()
        with self._lock:
            self._before, self._window = before, []

    def end(self) -> Conditions:
        """The point ended: its conditions (the readings are no longer collected)."""
        after = self._safe_read()
        with self._lock:
            during, before = self._window or [], self._before
            self._window, self._before = None, None
        return summarise(before, during, after, self.interval_s)

    def _safe_read(self) -> Reading | None:
        try:
            return self.read_now()
        except Exception:  # noqa: BLE001
            return None

    def gpu_totals(self) -> dict[str, float]:
        """The latest reading's GPU power, memory and utilisation (the engine panel's figures)."""
        with self._lock:
            latest = self._latest
        return gpu_totals(latest.gpus) if latest is not None else {}


# ------------------------------------------------------------------------------------------------ judging

# Thresholds (docs/DEFINITIONS.md, "Machine conditions", gives the reason for each).
LOAD_DIFF = 0.5  # 1-min load per CPU differs by more than this...
LOAD_HIGH = 0.7  # ...while one side is above this
OTHER_DIFF = 0.20  # other processes' share of the host's CPU differs by at least this...
OTHER_HIGH = 0.25  # ...while one side is at least this
STEAL_HIGH = 0.05  # steal above this on one side...
STEAL_DIFF = 0.03  # ...and differing by more than this
FREQ_DIFF = 0.10  # median CPU or GPU SM clock differs by more than this (relative to the higher)
MEM_PSI_HIGH = 10.0  # memory PSI some avg10 above this on one side and not on the other...
MEM_PSI_DIFF = 5.0  # ...and differing by more than this
CPU_PSI_HIGH = 25.0  # CPU PSI some avg10 above this on one side and not on the other...
CPU_PSI_DIFF = 20.0  # ...and differing by more than this (PSI saturates: two contended sides wander a lot)
TEMP_DIFF_C = 10.0  # median GPU temperature differs by more than this many degrees
GPU_ACTIVE_PCT = 10.0  # a GPU is compared only when its median utilisation reaches this on one side


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _both(a: float | None, b: float | None) -> tuple[float, float] | None:
    return (a, b) if a is not None and b is not None else None


def _rel(a: float, b: float) -> float:
    hi = max(a, b)
    return abs(a - b) / hi if hi > 0 else 0.0


def conditions_differ(a: Conditions, b: Conditions) -> list[str]:
    """Why the two sides ran under materially different conditions (empty: comparable, or not known), each
    reason naming both sides' figure: what each point mostly ran under (the median of its readings). A side
    of several points (engine sessions) is judged by :func:`pooled`."""
    ra, rb = a.typical, b.typical
    if ra is None or rb is None:
        return []
    out: list[str] = []
    v = _both(ra.load_per_core, rb.load_per_core)
    if v and abs(v[0] - v[1]) > LOAD_DIFF and max(v) > LOAD_HIGH:
        out.append(f"host load per CPU {v[0]:.2f} vs {v[1]:.2f} (1-min load average / CPUs)")
    v = _both(ra.other, rb.other)
    if v and abs(v[0] - v[1]) >= OTHER_DIFF and max(v) >= OTHER_HIGH:
        out.append(f"other processes used {_pct(v[0])} vs {_pct(v[1])} of the host's CPU")
    v = _both(ra.steal, rb.steal)
    if v and max(v) > STEAL_HIGH and abs(v[0] - v[1]) > STEAL_DIFF:
        out.append(f"CPU steal {_pct(v[0])} vs {_pct(v[1])} (the hypervisor ran someone else)")
    v = _both(ra.freq_mhz, rb.freq_mhz)
    if v and _rel(*v) > FREQ_DIFF:
        out.append(f"CPU clock {v[0]:.0f} vs {v[1]:.0f} MHz")
    v = _both(ra.mem_psi, rb.mem_psi)
    if v and min(v) <= MEM_PSI_HIGH < max(v) and abs(v[0] - v[1]) > MEM_PSI_DIFF:
        out.append(f"memory pressure {v[0]:.0f} vs {v[1]:.0f} (PSI some avg10, % of time stalled)")
    v = _both(ra.cpu_psi, rb.cpu_psi)
    if v and min(v) <= CPU_PSI_HIGH < max(v) and abs(v[0] - v[1]) > CPU_PSI_DIFF:
        out.append(f"CPU pressure {v[0]:.0f} vs {v[1]:.0f} (PSI some avg10, % of time waiting for a CPU)")
    gb = {g.index: g for g in rb.gpus}
    for ga in ra.gpus:
        g2 = gb.get(ga.index)
        if g2 is None:
            continue
        utils = [u for u in (ga.util_pct, g2.util_pct) if u is not None]
        if utils and max(utils) < GPU_ACTIVE_PCT:
            continue  # idle on both sides: its clocks say nothing about the engine
        ta, tb = sorted(THROTTLING & set(ga.reasons)), sorted(THROTTLING & set(g2.reasons))
        if ta != tb:
            out.append(f"GPU {ga.index} throttled: {', '.join(ta) or 'no'} vs {', '.join(tb) or 'no'}")
        v = _both(ga.sm_mhz, g2.sm_mhz)
        if v and _rel(*v) > FREQ_DIFF:
            out.append(f"GPU {ga.index} SM clock {v[0]:.0f} vs {v[1]:.0f} MHz")
        v = _both(ga.temp_c, g2.temp_c)
        if v and abs(v[0] - v[1]) > TEMP_DIFF_C:
            out.append(f"GPU {ga.index} temperature {v[0]:.0f} vs {v[1]:.0f} °C")
    return out


def conditions_notes(c: Conditions) -> list[str]:
    """What changed on the machine while one point ran (the highest reading against the one before it), and
    conditions that hold a measurement back on their own (steal, memory pressure, GPU throttling)."""
    out: list[str] = []
    before, hi, lo = c.before, c.during_max, c.during_min
    if hi is None:
        hi = lo = c.after
    if hi is None:
        return out
    if before is not None:
        v = _both(before.load_per_core, hi.load_per_core)
        if v and v[1] - v[0] > LOAD_DIFF and v[1] > LOAD_HIGH:
            out.append(f"load per CPU rose {v[0]:.2f} → {v[1]:.2f}")
        v = _both(before.other, hi.other)
        if v and v[1] - v[0] >= OTHER_DIFF and v[1] >= OTHER_HIGH:
            out.append(f"other processes rose {_pct(v[0])} → {_pct(v[1])} of the CPU")
        v = _both(before.freq_mhz, lo.freq_mhz if lo is not None else None)
        if v and v[1] < v[0] * (1 - FREQ_DIFF):
            out.append(f"CPU clock fell {v[0]:.0f} → {v[1]:.0f} MHz")
    if hi.steal is not None and hi.steal > STEAL_HIGH:
        out.append(f"steal up to {_pct(hi.steal)}")
    if hi.mem_psi is not None and hi.mem_psi > MEM_PSI_HIGH:
        out.append(f"memory pressure up to {hi.mem_psi:.0f} (PSI)")
    for g in hi.gpus:
        t = [r for r in g.reasons if r in THROTTLING]
        if t:
            out.append(f"GPU {g.index} throttled ({', '.join(t)})")
    return out

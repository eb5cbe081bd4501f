"""Who else ran: this machine's processes, read at a low rate beside the main source, and its disk
and network throughput.

Each reading takes one ``/proc/<pid>/stat`` per process (world-readable: without root, other users'
processes are seen as far as ``/proc`` shows them; a process that ends or hides mid-read is left
out). That file is what psutil's ``Process.cpu_times``, ``memory_info`` and ``name`` read too; read
straight, a process costs about 20 µs of CPU instead of psutil's 80 µs per ``Process`` object
(measured on the project's 2-core VM: ``benchmarks/overhead.py --part processes``), which is what
keeps a reading of a few hundred processes every ``PROCESS_PERIOD_S`` under 0.1 % of a core.

``cpu_pct`` is % of one core, as psutil's ``Process.cpu_percent``: CPU time (user + system) since
the previous reading over the wall time between them; for a process started since then, over its
life. The first reading only primes (no CPU figures). A reading keeps the processes that matter:
every one at or above ``FLOOR_PCT`` of a core, the ``TOP_RSS`` largest by memory, every one with
GPU memory (NVML, where the host source has it) and the benchmark's tree, at most ``MAX_ROWS``.

The benchmark's tree is every descendant of a root registered in ``BENCHMARK``: the workload that
``run`` started (``runtime.child``) and the process whose hook reported (``runtime.control``, from
the socket's peer credentials).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import psutil

from jtop_roof.model.records import IoRates, ProcessReading, ProcessRow

#: Seconds between readings, from their measured cost (see the module doc): 5 s keeps a reading
#: of 300 processes (a busy Jetson) under 0.1 % of a core.
PROCESS_PERIOD_S = 5.0
#: A process below this (% of one core) is left out of a reading unless it matters otherwise.
FLOOR_PCT = 1.0
TOP_RSS = 5
MAX_ROWS = 48
#: Bytes read of one stat file: a real one is under 400; a longer one is cut (its fields unread).
STAT_BYTES = 1024
_MIB = 1024 * 1024


class BenchmarkRoots:
    """Process ids whose trees are the benchmark's; thread-safe, bounded."""

    LIMIT = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: dict[int, None] = {}

    def add(self, pid: int) -> None:
        with self._lock:
            if pid in self._pids:
                return
            if len(self._pids) >= self.LIMIT:
                del self._pids[next(iter(self._pids))]
            self._pids[pid] = None

    def pids(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._pids)


#: The process's one registry: ``run``'s workload and hooks that reported add themselves here.
BENCHMARK = BenchmarkRoots()


@dataclass(frozen=True, slots=True)
class _Stat:
    """What one ``/proc/<pid>/stat`` says: name, parent, CPU ticks (user + system), start tick, RSS pages."""

    name: str
    ppid: int
    ticks: int
    start: int
    rss_pages: int


def read_stat(data: bytes) -> _Stat | None:
    """The fields of a stat line; None for anything else. The name is between the first ``(`` and
    the last ``)``: it may hold spaces and parentheses."""
    open_at, close_at = data.find(b"("), data.rfind(b")")
    if open_at < 0 or close_at < open_at:
        return None
    fields = data[close_at + 2:].split()
    if len(fields) < 22:
        return None
    try:
        return _Stat(data[open_at + 1:close_at].decode("utf-8", "replace"), int(fields[1]),
                     int(fields[11]) + int(fields[12]), int(fields[19]), int(fields[21]))
    except ValueError:
        return None


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)  # a FIFO planted in a tree never waits
    except OSError:
        return None
    try:
        return os.read(fd, STAT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def _boottime() -> float:
    """Seconds since boot, the clock a process's start tick counts on."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


class ProcessSampler:
    """Reads the processes every ``period_s`` on a schedule that does not drift (``due_in`` and
    ``take``, as the power sampler). ``gpu_memory``: MB of GPU memory by pid (NVML), or None."""

    def __init__(self, *, proc: str = "/proc", period_s: float = PROCESS_PERIOD_S,
                 roots: BenchmarkRoots = BENCHMARK, gpu_memory: Callable[[], dict[int, float]] | None = None,
                 clock: Callable[[], float] = time.time, mono: Callable[[], float] = time.monotonic,
                 boottime: Callable[[], float] = _boottime) -> None:
        self.period_s = period_s
        self._proc, self._roots, self._gpu_memory = proc, roots, gpu_memory
        self._clock, self._mono, self._boottime = clock, mono, boottime
        self._tick_s = 1.0 / os.sysconf("SC_CLK_TCK")
        self._page_mb = os.sysconf("SC_PAGE_SIZE") / _MIB
        self._last: dict[int, tuple[int, int]] = {}  # pid -> (start tick, CPU ticks)
        self._last_boottime: float | None = None
        self._due = mono()
        self.source = "/proc + NVML" if gpu_memory is not None else "/proc"

    def due_in(self) -> float:
        return self._due - self._mono()

    def take(self) -> list[ProcessReading]:
        reading = self.read_once()
        now = self._mono()
        self._due += self.period_s
        if self._due < now:
            self._due = now + self.period_s
        return [reading]

    def read_once(self) -> ProcessReading:
        """Every process now, the ones that matter kept."""
        now = self._boottime()
        stats: dict[int, _Stat] = {}
        try:
            names = os.listdir(self._proc)
        except OSError:
            names = []
        for name in names:
            if name.isdigit():
                data = _read(f"{self._proc}/{name}/stat")
                found = None if data is None else read_stat(data)
                if found is not None:
                    stats[int(name)] = found
        since = None if self._last_boottime is None else now - self._last_boottime
        last, self._last = self._last, {pid: (s.start, s.ticks) for pid, s in stats.items()}
        self._last_boottime = now
        gpu = self._gpu_memory() if self._gpu_memory is not None else {}
        tree = benchmark_tree(stats, self._roots.pids())
        rows = []
        for pid, stat in stats.items():
            cpu = None
            if since is not None and since > 0:
                before = last.get(pid)
                if before is not None and before[0] == stat.start:
                    cpu = (stat.ticks - before[1]) * self._tick_s / since * 100
                else:  # started since the last reading (or its pid was reused): over its life
                    life = min(since, now - stat.start * self._tick_s)
                    cpu = stat.ticks * self._tick_s / life * 100 if life > 0 else None
            rows.append(ProcessRow(pid, stat.name, None if cpu is None else round(max(cpu, 0.0), 1),
                                   round(stat.rss_pages * self._page_mb, 1), gpu.get(pid), pid in tree))
        return ProcessReading(self._clock(), self._mono(), kept(rows), self.source, self.period_s,
                              priming=since is None, floor_pct=FLOOR_PCT)


def kept(rows: list[ProcessRow]) -> list[ProcessRow]:
    """The rows that matter (see the module doc), busiest first, at most ``MAX_ROWS``."""
    by_rss = sorted(rows, key=lambda row: row.rss_mb or 0.0, reverse=True)[:TOP_RSS]
    chosen = {row.pid: row for row in rows
              if (row.cpu_pct or 0.0) >= FLOOR_PCT or row.gpu_mem_mb is not None or row.benchmark}
    chosen.update((row.pid, row) for row in by_rss)
    ordered = sorted(chosen.values(), key=lambda row: (row.cpu_pct or 0.0, row.rss_mb or 0.0), reverse=True)
    return ordered[:MAX_ROWS]


def benchmark_tree(stats: dict[int, _Stat], roots: Iterable[int]) -> set[int]:
    """The roots that are alive and all their descendants."""
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(stat.ppid, []).append(pid)
    found: set[int] = set()
    todo = [pid for pid in roots if pid in stats]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


class IoMeter:
    """Disk and network throughput between two calls, from the system-wide counters (every
    disk, every interface but loopback; ``ProcIoCounters``, else psutil's). The first call only
    primes (None)."""

    def __init__(self, *, counters: Callable[[], tuple[float | None, ...]] | None = None,
                 mono: Callable[[], float] = time.monotonic) -> None:
        self._counters = counters if counters is not None else system_io_counters()
        self._mono = mono
        self._last: tuple[float, tuple[float | None, ...]] | None = None

    def read(self) -> IoRates | None:
        now, values = self._mono(), self._counters()
        last, self._last = self._last, (now, values)
        if last is None or now <= last[0] or all(v is None for v in values):
            return None
        span = now - last[0]
        rates = [None if new is None or old is None or new < old else round((new - old) / span / _MIB, 3)
                 for new, old in zip(values, last[1], strict=True)]
        return IoRates(*rates)


#: How long the list of whole disks (/sys/block) is kept before it is read again (a disk plugged in).
DISKS_TTL_S = 60.0
#: The unit of /proc/diskstats' sector counts, whatever the disk's own sector size.
DISKSTATS_SECTOR_BYTES = 512


class ProcIoCounters:
    """``io_counters(psutil)``'s figures read from /proc/diskstats and /proc/net/dev directly:
    psutil looks up every disk's /sys/block entry on each call, which made it a third of a live
    sample's cost. The whole disks are the names /sys/block lists, read every ``DISKS_TTL_S``."""

    def __init__(self, proc: str = "/proc", sys_block: str = "/sys/block",
                 mono: Callable[[], float] = time.monotonic) -> None:
        self._diskstats, self._net_dev = f"{proc}/diskstats", f"{proc}/net/dev"
        self._sys_block = sys_block
        self._mono = mono
        self._disks: frozenset[bytes] = frozenset()
        self._disks_at: float | None = None

    def readable(self) -> bool:
        """Both files are there (Linux): else psutil's counters serve."""
        return os.access(self._diskstats, os.R_OK) and os.access(self._net_dev, os.R_OK)

    def __call__(self) -> tuple[float | None, ...]:
        """(disk read, disk write, net received, net sent) bytes since boot; None where unreadable."""
        disk_read, disk_written = self._disk()
        received, sent = self._net()
        return disk_read, disk_written, received, sent

    def _disk(self) -> tuple[float | None, float | None]:
        now = self._mono()
        if self._disks_at is None or now - self._disks_at >= DISKS_TTL_S:
            try:
                self._disks = frozenset(os.fsencode(name) for name in os.listdir(self._sys_block))
            except OSError:
                self._disks = frozenset()
            self._disks_at = now
        read_sectors = written_sectors = 0
        found = False
        try:
            with open(self._diskstats, "rb") as stream:
                for line in stream.read().splitlines():
                    fields = line.split()
                    # major minor name reads merged sectors_read ms writes merged sectors_written ...
                    if len(fields) >= 10 and fields[2].replace(b"/", b"!") in self._disks:
                        read_sectors += int(fields[5])
                        written_sectors += int(fields[9])
                        found = True
        except (OSError, ValueError):
            return None, None
        if not found:
            return None, None
        return float(read_sectors * DISKSTATS_SECTOR_BYTES), float(written_sectors * DISKSTATS_SECTOR_BYTES)

    def _net(self) -> tuple[float | None, float | None]:
        received = sent = 0
        found = False
        try:
            with open(self._net_dev, "rb") as stream:
                for line in stream.read().splitlines()[2:]:  # two header lines
                    name, _, counts = line.partition(b":")
                    values = counts.split()
                    if name.strip() != b"lo" and len(values) >= 9:
                        received += int(values[0])
                        sent += int(values[8])
                        found = True
        except (OSError, ValueError):
            return None, None
        return (float(received), float(sent)) if found else (None, None)


def system_io_counters() -> Callable[[], tuple[float | None, ...]]:
    """This machine's counters: ``ProcIoCounters`` where /proc has them, else psutil's."""
    proc = ProcIoCounters()
    if proc.readable():
        return proc
    return lambda: io_counters(psutil)


def io_counters(module: Any) -> tuple[float | None, ...]:
    """(disk read, disk write, net received, net sent) bytes since boot from a psutil-like
    ``module``; None where unreadable (or where the platform has no such counter)."""
    try:
        disk = module.disk_io_counters()
    except (AttributeError, OSError, RuntimeError):
        disk = None
    try:
        nics = module.net_io_counters(pernic=True) or {}
    except (AttributeError, OSError, RuntimeError):
        nics = {}
    outside = [nic for name, nic in nics.items() if name != "lo"]
    rx = float(sum(nic.bytes_recv for nic in outside)) if outside else None
    tx = float(sum(nic.bytes_sent for nic in outside)) if outside else None
    if disk is None:
        return None, None, rx, tx
    return float(disk.read_bytes), float(disk.write_bytes), rx, tx

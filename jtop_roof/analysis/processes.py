"""Who else ran in a span: the processes of its process readings, summed as they come (the ledger
keeps one tally per span), so that ``report``, ``compare`` and the monitor read one answer.

A process's ``cpu_percent_mean`` is its CPU (% of one core) averaged over every reading of the span
that measured CPU (the first reading only primes); a reading that left it out counts it as below
the reading's floor, i.e. 0. ``rss_mb_max`` and ``gpu_mem_mb_max`` are the largest seen.

Nothing here imports Textual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jtop_roof.model.metrics import FOREIGN_PROCESS_PCT
from jtop_roof.model.records import ProcessReading

#: The busiest processes a span always lists; any other at or above FOREIGN_PROCESS_PCT is listed too.
TOP_FEW = 5
#: Processes one span keeps a tally of (a build spawning thousands stays bounded): past it, the
#: least busy is forgotten.
MAX_TRACKED = 512


@dataclass(frozen=True, slots=True)
class ProcessStats:
    """One process over a span, as ``report`` lists it."""

    name: str
    pid: int
    cpu_percent_mean: float | None  # None: no reading of the span measured CPU
    rss_mb_max: float | None
    gpu_mem_mb_max: float | None
    benchmark: bool

    def as_json(self) -> dict[str, object]:
        """``report``'s object of it."""
        return {"name": self.name, "pid": self.pid, "cpu_percent_mean": self.cpu_percent_mean,
                "rss_mb_max": self.rss_mb_max, "gpu_mem_mb_max": self.gpu_mem_mb_max,
                "benchmark": self.benchmark}

    @property
    def foreign_and_busy(self) -> bool:
        """Not the benchmark's, and at or above the threshold of a core."""
        return not self.benchmark and (self.cpu_percent_mean or 0.0) >= FOREIGN_PROCESS_PCT


@dataclass(slots=True)
class _Seen:
    name: str
    cpu_sum: float = 0.0
    rss_max: float | None = None
    gpu_max: float | None = None
    benchmark: bool = False


@dataclass(slots=True)
class ProcessTally:
    """A span's processes, read by read."""

    readings: int = 0  # readings that measured CPU
    seen: dict[int, _Seen] = field(default_factory=dict)

    def add(self, reading: ProcessReading) -> None:
        if not reading.priming:
            self.readings += 1
        for row in reading.processes:
            seen = self.seen.get(row.pid)
            if seen is None:
                if len(self.seen) >= MAX_TRACKED:
                    del self.seen[min(self.seen, key=lambda pid: self.seen[pid].cpu_sum)]
                seen = self.seen[row.pid] = _Seen(row.name)
            if row.cpu_pct is not None and not reading.priming:
                seen.cpu_sum += row.cpu_pct
            seen.rss_max = _larger(seen.rss_max, row.rss_mb)
            seen.gpu_max = _larger(seen.gpu_max, row.gpu_mem_mb)
            seen.benchmark = seen.benchmark or row.benchmark

    def summary(self) -> tuple[ProcessStats, ...]:
        """The processes that matter, busiest first: the top few and any other at or above the
        threshold."""
        readings = self.readings
        stats = [ProcessStats(seen.name, pid, round(seen.cpu_sum / readings, 1) if readings else None,
                              seen.rss_max, seen.gpu_max, seen.benchmark) for pid, seen in self.seen.items()]
        stats.sort(key=lambda one: (one.cpu_percent_mean or 0.0, one.rss_mb_max or 0.0), reverse=True)
        return tuple(one for rank, one in enumerate(stats)
                     if rank < TOP_FEW or (one.cpu_percent_mean or 0.0) >= FOREIGN_PROCESS_PCT)


def _larger(kept: float | None, value: float | None) -> float | None:
    if value is None:
        return kept
    return value if kept is None or value > kept else kept

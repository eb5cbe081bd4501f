"""What a pair of runs of the same work in two power modes says about what bounds it.

A run that slows with the GPU clock while the memory clock holds is not memory-bound, whatever its
intensity says (the bytes behind an intensity are most often an estimate): the GPU bounds it. Two runs
show that where the EMC clock differs by at most ``EMC_HELD`` between them, the GPU clock by at least
``GPU_MOVED``, and the throughput falls by at least ``FOLLOWS`` of the GPU clock's fall. Each run
such a pair shows is named with the basis in words; ``compare`` asks this one query, nothing else
judges pairs. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: EMC clocks within this relative difference are the same memory clock.
EMC_HELD = 0.05
#: GPU clocks this far apart (relative to the lower) are a different GPU clock.
GPU_MOVED = 0.10
#: The share of the GPU clock's relative change the throughput must follow.
FOLLOWS = 0.5


@dataclass(frozen=True, slots=True)
class RunClocks:
    """One run's throughput and mean clocks (None where unknown), and who it is in words."""

    who: str
    device: str | None
    throughput_per_s: float | None
    gpu_mhz: float | None
    emc_mhz: float | None


def _known(run: RunClocks) -> bool:
    return all(value is not None and value > 0 for value in (run.throughput_per_s, run.gpu_mhz, run.emc_mhz))


def gpu_clock_bound(runs: Sequence[RunClocks]) -> dict[int, str]:
    """Index -> basis, for each run that some pair shows slowing with the GPU clock while the EMC
    clock holds (see the module docstring). Runs of different devices are never paired."""
    found: dict[int, str] = {}
    for i, a in enumerate(runs):
        for j in range(i + 1, len(runs)):
            b = runs[j]
            if not (_known(a) and _known(b)) or a.device is None or a.device != b.device:
                continue
            slow, fast = (a, b) if (a.gpu_mhz or 0) < (b.gpu_mhz or 0) else (b, a)
            assert slow.gpu_mhz and fast.gpu_mhz and slow.emc_mhz and fast.emc_mhz
            assert slow.throughput_per_s and fast.throughput_per_s
            clock = fast.gpu_mhz / slow.gpu_mhz - 1
            emc = abs(fast.emc_mhz / slow.emc_mhz - 1)
            speed = fast.throughput_per_s / slow.throughput_per_s - 1
            if emc > EMC_HELD or clock < GPU_MOVED or speed < FOLLOWS * clock:
                continue
            basis = (f"clocks: {slow.who} is {1 - 1 / (1 + speed):.0%} slower than {fast.who} at a "
                     f"{1 - slow.gpu_mhz / fast.gpu_mhz:.0%} lower GPU clock ({slow.gpu_mhz:.0f} against "
                     f"{fast.gpu_mhz:.0f} MHz) while the EMC clock holds ({slow.emc_mhz:.0f} MHz): the GPU "
                     "bounds it, not memory")
            for index in (i, j):
                found.setdefault(index, basis)
    return found

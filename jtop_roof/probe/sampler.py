"""The monitor's own source in a background thread while the probe measures (tegrastats on a
Jetson, else the host source: NVML, psutil), and what its samples say about a timed run: the GPU,
EMC (NVML's memory clock on a dGPU) and CPU clocks, and the power."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from jtop_roof.analysis.pump import pump
from jtop_roof.model.records import DEVICE_ONLY_RAIL_PREFIX, Record, Sample, total_power
from jtop_roof.sources.base import Source

#: How long the probe waits for the source's first sample before it measures (tegrastats' default
#: interval is 1 s).
FIRST_SAMPLE_WAIT_S = 3.0


class SourceSampler:
    """Runs a source in a thread through the one pump; keeps each sample with its arrival time
    (``time.monotonic``). It is not a ``Runtime``: the probe is a layer below the runtime, and has
    no pipeline to feed, no recording and no signals of its own (the command's Ctrl-C ends it)."""

    def __init__(self, source: Source, mono: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self._mono = mono
        self._lock = threading.Lock()
        self._samples: list[tuple[float, Sample]] = []
        self.info_header: dict[str, Any] = {}
        self.error: str | None = None
        self._described = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jroof-probe-source", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            self.info_header = dict(self.source.describe().header)
        except Exception as exc:  # a source that cannot describe itself still samples
            self.error = f"describe failed: {type(exc).__name__}: {exc}"
        finally:
            self._described.set()
        try:
            pump(self.source.records(), None, self._take)  # the one pump; nothing is recorded
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def _take(self, record: Record) -> None:
        if isinstance(record, Sample) and record.is_sample:
            with self._lock:
                self._samples.append((self._mono(), record))

    def wait_described(self, timeout: float) -> bool:
        return self._described.wait(timeout)

    def wait_first_sample(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.count() == 0 and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)

    def between(self, t0: float, t1: float) -> list[Sample]:
        with self._lock:
            return [s for t, s in self._samples if t0 <= t <= t1]

    def count(self) -> int:
        with self._lock:
            return len(self._samples)

    def stop(self, timeout: float = 5.0) -> None:
        self.source.stop()
        self._thread.join(timeout)


# ---------------------------------------------------------------------------------------------
# statistics of samples


def _stat(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def _gpu_mhz(sample: Sample) -> float | None:
    return None if sample.gpu is None or sample.gpu.mhz is None else float(sample.gpu.mhz)


def _emc_mhz(sample: Sample) -> float | None:
    return None if sample.emc is None or sample.emc.mhz is None else float(sample.emc.mhz)


def _cpu_mhz(sample: Sample) -> float | None:
    clocks = [c.mhz for c in sample.cpus or () if c is not None and c.mhz]
    return statistics.fmean(clocks) if clocks else None


def power_reading(sample: Sample) -> tuple[float, str] | None:
    """The board's input power where a rail measures it, else the GPU's own (NVML) power."""
    total = total_power(sample.rails)
    if total is not None:
        return total.mw / 1000.0, total.source
    rail = sample.rails.get(f"{DEVICE_ONLY_RAIL_PREFIX}GPU")
    return None if rail is None else (rail.now_mw / 1000.0, f"{DEVICE_ONLY_RAIL_PREFIX}GPU")


_CLOCKS: dict[str, Callable[[Sample], float | None]] = {"gpu_mhz": _gpu_mhz, "emc_mhz": _emc_mhz,
                                                        "cpu_mhz": _cpu_mhz}


def clock_stats(samples: list[Sample]) -> dict[str, dict[str, float] | None]:
    """Mean, minimum and maximum of each clock the samples show (None where none does)."""
    out = {}
    for key, read in _CLOCKS.items():
        out[key] = _stat([v for v in (read(s) for s in samples) if v is not None])
    return out


def power_stats(samples: list[Sample]) -> dict[str, Any] | None:
    """Mean and maximum watts, and the rail they were read from (the last sample's)."""
    seen = [p for p in (power_reading(s) for s in samples) if p is not None]
    if not seen:
        return None
    values = [w for w, _ in seen]
    return {"mean": statistics.fmean(values), "max": max(values), "rail": seen[-1][1]}

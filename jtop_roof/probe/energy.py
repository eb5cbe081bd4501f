"""The energy terms the probe measures (Pagoda's E = ε_op·W + ε_byte·Q + π0·T, per mode).

Before the kernels the device sits idle for a few seconds: π0 is the power then (from an energy
counter where the machine has one, NVML's total energy on a dGPU; else the mean of the source's
sampled power), and each rail's idle power is the mean of its samples. Over each entry's timed runs,
E is the counter's difference (else the mean sampled power × T), and ε = (E − π0·T) / work: work is
the FLOPs done (compute) or the bytes moved (bandwidth). A figure that cannot be measured (no power
reading that sees the device, too few samples in the span) is None with a note why, never a default.
"""

from __future__ import annotations

import importlib
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from jtop_roof.model.records import DEVICE_ONLY_RAIL_PREFIX, Sample
from jtop_roof.probe.sampler import power_reading

#: Fewer sampled readings than this in a span say too little of its power.
MIN_SAMPLES = 3
MEASURED = "measured"


class EnergyCounter(Protocol):
    """A cumulative energy counter (mJ) of one rail, read between runs."""

    name: str

    def read_mj(self) -> float | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Span:
    """What the power readings say of one span: its length, the samples that fell in it, and the
    counter's readings at its edges (None without a counter)."""

    seconds: float
    samples: Sequence[Sample]
    counter_mj: tuple[float | None, float | None] | None = None
    #: The time between the counter's two reads (each taken at its read's midpoint).
    counter_s: float | None = None


@dataclass(frozen=True, slots=True)
class Energy:
    """A span's energy (J) and power (W) on one rail, or None and why."""

    joules: float | None
    watts: float | None
    rail: str | None
    basis: str
    #: The span's length the joules are over (the counter's reads' where it counted).
    seconds: float = 0.0


def _figure(value: float | None, note: str) -> dict[str, Any]:
    return {"value": value, "source": MEASURED if value is not None else None, "note": note}


def span_energy(span: Span, counter: EnergyCounter | None, device_kind: str) -> Energy:
    """E over ``span``: the counter's difference where it counts the rail the samples read (or the
    samples read none), else the mean of the sampled power × T."""
    readings = [r for r in (power_reading(s) for s in span.samples) if r is not None]
    rail = readings[-1][1] if readings else None
    seen = rail or (counter.name if counter else "")
    if device_kind == "cpu" and seen.startswith(DEVICE_ONLY_RAIL_PREFIX):
        return Energy(None, None, rail, f"the power source reads {rail or 'the GPU'} alone, not the CPU the "
                      "probe ran on")
    if counter is not None and span.counter_mj is not None and (rail is None or rail == counter.name):
        before, after = span.counter_mj
        seconds = span.counter_s if span.counter_s is not None else span.seconds
        if before is not None and after is not None and after >= before and seconds > 0:
            joules = (after - before) / 1000.0
            return Energy(joules, joules / seconds, counter.name,
                          f"{counter.name} energy counter over {seconds:.2f} s", seconds)
    if rail is None:
        return Energy(None, None, None, "no power reading sees the device here (no NVML, no rails)")
    if len(readings) < MIN_SAMPLES:
        return Energy(None, None, rail, f"{len(readings)} power sample(s) of {rail} fell in "
                      f"{span.seconds:.2f} s (at least {MIN_SAMPLES} needed)")
    watts = statistics.fmean(w for w, _ in readings)
    return Energy(watts * span.seconds, watts, rail,
                  f"mean of {len(readings)} sampled {rail} readings x {span.seconds:.2f} s", span.seconds)


def idle_terms(span: Span, counter: EnergyCounter | None, device_kind: str) -> dict[str, Any]:
    """The result's ``idle`` block: π0 (``pi0_w``, a figure), each rail's idle power (``idle_w``,
    figures) and what they rest on."""
    energy = span_energy(span, counter, device_kind)
    rails: dict[str, list[float]] = {}
    for sample in span.samples:
        for name, rail in sample.rails.items():
            rails.setdefault(name, []).append(rail.now_mw / 1000.0)
    idle_w = {name: _figure(statistics.fmean(values), f"mean of {len(values)} samples, device idle "
                                                      f"{span.seconds:.1f} s before the kernels")
              for name, values in sorted(rails.items()) if len(values) >= MIN_SAMPLES}
    clocks = _clock_words(span.samples)
    if energy.watts is None:
        pi0 = _figure(None, f"not measured: {energy.basis}")
    else:
        pi0 = _figure(energy.watts, f"idle {energy.rail}: {energy.basis}, {len(span.samples)} samples in all"
                      + (f"; {clocks}" if clocks else ""))
    return {"seconds": span.seconds, "samples": len(span.samples), "rail": energy.rail,
            "energy_from": _from(energy), "pi0_w": pi0, "idle_w": idle_w}


def _from(energy: Energy) -> str | None:
    if energy.joules is None:
        return None
    return "counter" if "counter" in energy.basis else "samples"


def entry_terms(kind: str, span: Span, work: float, idle: Mapping[str, Any],
                counter: EnergyCounter | None, device_kind: str,
                clocks: Mapping[str, Mapping[str, float] | None]) -> dict[str, Any]:
    """An entry's ``energy`` block and its ε (``eps_flop_j`` for compute, ``eps_byte_j`` for
    bandwidth): (E − π0·T) / work."""
    key, unit = ("eps_byte_j", "byte") if kind == "bandwidth" else ("eps_flop_j", "FLOP")
    energy = span_energy(span, counter, device_kind)
    block = {"joules": energy.joules, "seconds": energy.seconds or span.seconds, "work": work,
             "rail": energy.rail, "energy_from": _from(energy), "samples": len(span.samples),
             "basis": energy.basis}
    pi0 = idle.get("pi0_w") or {}
    pi0_w = pi0.get("value")
    if energy.joules is None:
        return {"energy": block, key: _figure(None, f"not measured: {energy.basis}")}
    if pi0_w is None:
        return {"energy": block, key: _figure(None, f"not measured: no idle power (π0): {pi0.get('note')}")}
    if idle.get("rail") != energy.rail:
        return {"energy": block, key: _figure(None, f"not measured: idle read {idle.get('rail')}, the runs "
                                                    f"{energy.rail}")}
    above = energy.joules - pi0_w * energy.seconds
    if not above > 0 or not work > 0:
        return {"energy": block, key: _figure(None, f"not measured: E {energy.joules:.1f} J is not above "
                                                    f"π0·T {pi0_w * energy.seconds:.1f} J")}
    words = [f"(E - π0·T) / {unit}s: E {energy.joules:.1f} J ({energy.basis}), π0 {pi0_w:.1f} W,",
             f"{work:.4g} {unit}s, {len(span.samples)} samples"]
    shown = ", ".join(f"{k.removesuffix('_mhz').upper()} {v['mean']:.0f} MHz" for k, v in clocks.items() if v)
    if shown:
        words.append(f"at {shown}")
    if kind == "compute":
        words.append("(the product's own DRAM traffic included)")
    return {"energy": block, key: _figure(above / work, " ".join(words))}


def read_counter(counter: EnergyCounter | None, perf: Callable[[], float]
                 ) -> tuple[float | None, float] | None:
    """The counter's reading (mJ) and when it was read (the midpoint of the read on ``perf``'s
    clock: a read of NVML's counter takes milliseconds); None without a counter."""
    if counter is None:
        return None
    t0 = perf()
    value = counter.read_mj()
    return value, (t0 + perf()) / 2


def _clock_words(samples: Sequence[Sample]) -> str:
    gpu = [float(s.gpu.mhz) for s in samples if s.gpu is not None and s.gpu.mhz is not None]
    emc = [float(s.emc.mhz) for s in samples if s.emc is not None and s.emc.mhz is not None]
    parts = [f"{name} {statistics.fmean(v):.0f} MHz" for name, v in (("GPU", gpu), ("EMC", emc)) if v]
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# NVML's energy counter


class NvmlCounter:
    """GPU 0's total-energy counter (``nvmlDeviceGetTotalEnergyConsumption``, mJ since the driver
    loaded), named as the host source names that GPU's rail."""

    name = f"{DEVICE_ONLY_RAIL_PREFIX}GPU"

    def __init__(self, nvml: Any, handle: Any) -> None:
        self._nvml = nvml
        self._handle = handle

    def read_mj(self) -> float | None:
        try:
            value = self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except Exception:
            return None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def close(self) -> None:
        try:
            self._nvml.nvmlShutdown()
        except Exception:
            pass


def nvml_counter(import_module: Callable[[str], Any] = importlib.import_module) -> EnergyCounter | None:
    """GPU 0's energy counter where nvidia-ml-py is installed and the GPU has one, else None."""
    try:
        nvml = import_module("pynvml")
        nvml.nvmlInit()
    except Exception:
        return None
    try:
        counter = NvmlCounter(nvml, nvml.nvmlDeviceGetHandleByIndex(0))
    except Exception:
        counter = None
    if counter is None or counter.read_mj() is None:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass
        return None
    return counter

"""Predict a run's throughput and energy per iteration in the board's other power modes.

The run's time per iteration T = 1 / throughput is split in three (``TimeSplit``):

* GPU time: trtexec's mean GPU compute time per query (measured), else the GPU load × T
  (inferred). Of it, a **memory** share scales with the EMC clock and the rest, **compute**, with
  active SMs × GPU clock. The memory share is unknown between 0 (all traffic hidden under compute)
  and u, the EMC load (or the workload's own bytes ÷ the bandwidth), as a share of the GPU time
  (memory-bound stretches taken to run the EMC at its full rate): the point is u/2, the range
  [0, u]; without either figure [0, 1], ``assumed``. Where a mode gates TPCs, compute time scales
  as (SMs / SMs')^x with x unknown between 0 and 1: the point is the geometric middle x = 1/2.
* Host time: T − GPU time, scaled with the CPU clock (each mode's cap, ``assumed``), with the
  enqueue time trtexec prints as a floor: T' = max(GPU', enqueue') + host'. Where the launch comes
  near the GPU time (enqueue' ≥ half of it), the range also takes them serialised.
* Power: the target mode's idle input power (its calibration) plus the run's dynamic power (run −
  its own mode's idle), per rail: a GPU rail by active SMs × clock × the GPU's busy share (V
  constant: the point; the range also takes V² ∝ f and power ∝ work done), the other rails and
  the rest of the input (SoC, DRAM, conversion) by throughput (traffic per iteration kept).
  J/iteration = power / throughput.

The ranges are the extremes over every corner of these unknowns; nothing is fitted to any run. It
says "can't predict" (``reason``, figures None) for an unknown device or mode, a throttled run, or
a run without throughput, clocks or GPU time; J/iteration alone is None where a mode has no idle
power calibrated. Nothing here imports Textual.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jtop_roof.analysis.prediction_input import PredictInputError, RunFacts
from jtop_roof.model.records import power_plan
from jtop_roof.roofline.ceilings import active_sms, max_clocks
from jtop_roof.roofline.devices import Device, PowerMode

#: Launch time at or above this share of the GPU time: the run may turn launch-bound.
LAUNCH_NEAR = 0.5
#: Host time at or above this share of an iteration: fewer cores online may slow it.
HOST_HEAVY = 0.1
Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class TimeSplit:
    """The run's time per iteration (s) in parts; ``memory_share`` (lo, point, hi) is of ``gpu_s``."""

    iteration_s: float
    gpu_s: float
    gpu_source: str
    memory_share: tuple[float, float, float]
    memory_source: str
    host_s: float
    enqueue_s: float | None

    def as_json(self) -> dict[str, object]:
        return {"iteration_s": self.iteration_s, "gpu_s": self.gpu_s, "gpu_source": self.gpu_source,
                "memory_share": self.memory_share[1], "memory_share_range": list(self.memory_share[::2]),
                "memory_source": self.memory_source, "host_s": self.host_s, "enqueue_s": self.enqueue_s}


@dataclass(frozen=True, slots=True)
class Prediction:
    """One mode's prediction; ``reason`` says why there is none (figures None)."""

    power_mode: str
    iters_per_s: float | None = None
    iters_per_s_range: Range | None = None
    j_per_iter: float | None = None
    j_per_iter_range: Range | None = None
    power_w: float | None = None
    power_w_range: Range | None = None
    basis: str | None = None
    reason: str | None = None
    j_per_iter_note: str | None = None


@dataclass(frozen=True, slots=True)
class Predictions:
    device: str | None
    from_mode: str | None
    split: TimeSplit | None
    predictions: tuple[Prediction, ...]
    #: Why there is no mode to predict at all (a device without power modes, an unknown one).
    note: str | None = None


def _mode(device: Device, name: str | None) -> PowerMode | None:
    for mode in device.power_modes:
        if name is not None and mode.name.upper() == name.upper():
            return mode
    return None


def _why_not(facts: RunFacts, device: Device | None, source: PowerMode | None) -> str | None:
    if device is None:
        return (f"device {facts.device!r} is not in the device database" if facts.device
                else "the report names no device (make it with --device)")
    if source is None:
        return (f"the run's power mode {facts.power_mode!r} is not one of {device.id}'s" if facts.power_mode
                else "the report names no power mode (make it with --power-mode)")
    if facts.throttled_s:
        return f"the run throttled for {facts.throttled_s:.1f} s: its clocks are not its mode's"
    if not facts.throughput_per_s or facts.throughput_per_s <= 0:
        return "the report has no throughput for its workload"
    if not facts.gpu_mhz or not facts.emc_mhz:
        return "the report has no GPU and EMC clocks for the run (tegrastats prints them as root)"
    if facts.gpu_compute_s is None and facts.gpu_load_pct is None:
        return "no GPU time: neither trtexec's GPU compute time nor the GPU load is in the report"
    return None


def time_split(facts: RunFacts) -> TimeSplit:
    """The run's iteration split (see the module docstring); the caller checked ``_why_not``."""
    assert facts.throughput_per_s is not None
    period = 1.0 / facts.throughput_per_s
    if facts.gpu_compute_s is not None:
        gpu, gpu_source = min(facts.gpu_compute_s, period), "measured"
    else:
        assert facts.gpu_load_pct is not None
        gpu, gpu_source = period * min(max(facts.gpu_load_pct, 0.0), 100.0) / 100.0, "inferred"
    load, memory_source = None, "assumed"
    if facts.achieved_bytes_per_s is not None and facts.bandwidth_bytes_per_s:
        load, memory_source = facts.achieved_bytes_per_s / facts.bandwidth_bytes_per_s, "inferred"
    elif facts.emc_load_pct is not None:
        load, memory_source = facts.emc_load_pct / 100.0, "measured"
    top = 1.0 if load is None or gpu <= 0 else min(1.0, max(load, 0.0) * period / gpu)
    return TimeSplit(period, gpu, gpu_source, (0.0, top / 2, top), memory_source, period - gpu,
                     facts.enqueue_s)


@dataclass(frozen=True, slots=True)
class _Scale:
    """The clocks and units of the run's mode and of the target."""

    gpu: float
    gpu_to: float
    emc: float
    emc_to: float
    sms: int
    sms_to: int
    cpu: float
    cpu_to: float
    cores: int
    cores_to: int


def _period(split: TimeSplit, k: _Scale, memory: float, exponent: float, serial: bool,
            cores: bool) -> tuple[float, float]:
    """(T', GPU time') at one corner of the unknowns."""
    sm_factor = (k.sms / k.sms_to) ** exponent
    compute = split.gpu_s * (1.0 - memory) * (k.gpu / k.gpu_to) * sm_factor
    gpu = compute + split.gpu_s * memory * (k.emc / k.emc_to)
    host = split.host_s * (k.cpu / k.cpu_to) * (max(1.0, k.cores / k.cores_to) if cores else 1.0)
    launch = 0.0 if split.enqueue_s is None else split.enqueue_s * (k.cpu / k.cpu_to)
    return (gpu + launch if serial else max(gpu, launch)) + host, gpu


def _idle(mode: PowerMode, rail: str) -> float | None:
    calibration = mode.calibration
    figure = None if calibration is None else calibration.idle_w.get(rail)
    return None if figure is None else figure.value


@dataclass(frozen=True, slots=True)
class _Power:
    """The run's dynamic power split: GPU rails, other rails, and the rest of the input."""

    idle_to: float
    gpu: float
    other: float


def _power_parts(facts: RunFacts, source: PowerMode, target: PowerMode) -> _Power | str:
    if facts.power_w is None:
        return "the report measured no input power"
    plan = power_plan(tuple(facts.rails_w)) if facts.rails_w else None
    total = plan.source if plan is not None and not plan.summed else "VDD_IN"
    idle_from, idle_to = _idle(source, total), _idle(target, total)
    for mode, idle in ((source, idle_from), (target, idle_to)):
        if idle is None:
            return f"no idle {total} power is calibrated for {mode.name}"
    assert idle_from is not None and idle_to is not None
    dynamic, gpu = max(0.0, facts.power_w - idle_from), 0.0
    for rail, watts in facts.rails_w.items():
        rail_idle = _idle(source, rail)
        if rail != total and "GPU" in rail.upper() and rail_idle is not None:
            gpu += max(0.0, watts - rail_idle)
    gpu = min(gpu, dynamic)
    return _Power(idle_to, gpu, dynamic - gpu)


def _scale(facts: RunFacts, device: Device, source: PowerMode,
           target: PowerMode) -> tuple[_Scale, list[str]]:
    assert facts.gpu_mhz is not None and facts.emc_mhz is not None
    said: list[str] = []
    gpu_to, emc_to = max_clocks(device, target)
    cpu, cpu_to = source.max_cpu_mhz, target.max_cpu_mhz
    if cpu is None or cpu_to is None:
        said.append("CPU clock cap unknown: host time kept")
        cpu = cpu_to = 1.0
    cores = source.cpu_cores_online or device.cpu_cores or 1
    cores_to = target.cpu_cores_online or device.cpu_cores or 1
    return _Scale(facts.gpu_mhz, gpu_to or facts.gpu_mhz, facts.emc_mhz, emc_to or facts.emc_mhz,
                  active_sms(device, source), active_sms(device, target), cpu, cpu_to, cores,
                  cores_to), said


def predict_mode(facts: RunFacts, device: Device, source: PowerMode, target: PowerMode,
                 split: TimeSplit) -> Prediction:
    """One target mode (see the module docstring)."""
    k, said = _scale(facts, device, source, target)
    assert facts.throughput_per_s is not None
    point_t, point_gpu = _period(split, k, split.memory_share[1], 0.5, False, False)
    launch_to = None if split.enqueue_s is None else split.enqueue_s * k.cpu / k.cpu_to
    serials = (False, True) if launch_to is not None and launch_to >= LAUNCH_NEAR * point_gpu else (False,)
    heavy = split.host_s >= HOST_HEAVY * split.iteration_s and k.cores_to < k.cores
    exponents = (0.0, 0.5, 1.0) if k.sms != k.sms_to else (0.5,)
    parts = _power_parts(facts, source, target)
    busy = split.gpu_s / split.iteration_s
    volts = (1.0, k.gpu_to / k.gpu)
    rates: list[float] = []
    joules: list[float] = []
    watts: list[float] = []
    point_rate: float = 1.0 / point_t
    point_power: float | None = None
    for memory, exponent, serial, cores in itertools.product(
            split.memory_share, exponents, serials, (False, True) if heavy else (False,)):
        period, gpu = _period(split, k, memory, exponent, serial, cores)
        rate = 1.0 / period
        rates.append(rate)
        if isinstance(parts, str):
            continue
        work = rate / facts.throughput_per_s
        units = (k.sms_to * k.gpu_to) / (k.sms * k.gpu) * ((gpu / period) / busy if busy > 0 else 1.0)
        for volt, activity in itertools.product(volts, (units, work)):
            power = parts.idle_to + parts.gpu * activity * volt + parts.other * work
            watts.append(power)
            joules.append(power / rate)
            is_point = (memory == split.memory_share[1] and exponent == 0.5 and not serial and not cores
                        and volt == 1.0 and activity == units)
            if is_point:
                point_rate, point_power = rate, power
    basis = _basis(split, k, source, target, serials, heavy, said)
    if isinstance(parts, str) or point_power is None:
        return Prediction(target.name, point_rate, (min(rates), max(rates)), basis=basis,
                          j_per_iter_note=parts if isinstance(parts, str) else None)
    return Prediction(target.name, point_rate, (min(rates), max(rates)), point_power / point_rate,
                      (min(joules), max(joules)), point_power, (min(watts), max(watts)), basis)


def _basis(split: TimeSplit, k: _Scale, source: PowerMode, target: PowerMode,
           serials: tuple[bool, ...], heavy: bool, said: list[str]) -> str:
    lo, mid, hi = split.memory_share
    words = [
        f"{split.iteration_s * 1e3:.3f} ms/iteration = GPU {split.gpu_s * 1e3:.3f} ({split.gpu_source})"
        f" + host {split.host_s * 1e3:.3f}",
        f"memory share of GPU time {mid:.0%} ({lo:.0%}-{hi:.0%}, from the {split.memory_source} EMC load)"
        if split.memory_source != "assumed" else f"memory share of GPU time {mid:.0%} (0-100%, assumed)",
        f"GPU {k.gpu:.0f} -> {k.gpu_to:.0f} MHz (mode cap), EMC {k.emc:.0f} -> {k.emc_to:.0f} MHz",
    ]
    if k.sms != k.sms_to:
        words.append(f"SMs {k.sms} -> {k.sms_to}: compute time x (SMs ratio)^x, x 0-1 assumed, point 0.5")
    words.append(f"CPU {k.cpu:.0f} -> {k.cpu_to:.0f} MHz (caps, assumed)" if not said else said[0])
    if len(serials) > 1:
        words.append("launch near the GPU time: range takes them serialised")
    if heavy:
        words.append(f"host-heavy with {k.cores} -> {k.cores_to} cores: range takes them all busy")
    words.append(f"power: {target.name} idle (calibration) + {source.name} run's dynamic power, GPU rail x "
                 "SMs x f x busy (V constant; range V^2 ~ f and power ~ work), other rails x throughput")
    return "; ".join(words)


def predict(facts: RunFacts, devices: Mapping[str, Device],
            modes: Sequence[str] | None = None) -> Predictions:
    """Every mode named (all the device's others when none is): a prediction, or why there is none.
    A mode the device does not have is a ``PredictInputError`` (one line)."""
    device = None if facts.device is None else devices.get(facts.device)
    source = None if device is None else _mode(device, facts.power_mode)
    if device is not None and modes:
        known = [m.name for m in device.power_modes]
        for name in modes:
            if _mode(device, name) is None:
                raise PredictInputError(f"no power mode {name!r} on {device.id} (modes: {', '.join(known)})")
    targets = list(modes) if modes else [m.name for m in (device.power_modes if device else ())
                                         if source is None or m.name != source.name]
    reason = _why_not(facts, device, source)
    from_mode = source.name if source is not None else facts.power_mode
    if not targets:
        why = reason if device is None else f"{device.id} has no other power mode in the device database"
        return Predictions(facts.device, from_mode, None, (), note=f"nothing to predict: {why}")
    if reason is not None:
        return Predictions(facts.device, from_mode, None,
                           tuple(Prediction(_canonical(device, t), reason=reason) for t in targets))
    assert device is not None and source is not None
    split = time_split(facts)
    out = []
    for name in targets:
        target = _mode(device, name)
        assert target is not None
        out.append(predict_mode(facts, device, source, target, split))
    return Predictions(device.id, source.name, split, tuple(out))


def _canonical(device: Device | None, name: str) -> str:
    mode = None if device is None else _mode(device, name)
    return name if mode is None else mode.name


def relative_error(predicted: float | None, measured: float | None) -> float | None:
    """predicted ÷ measured − 1, None where either is missing or the measured is zero."""
    if predicted is None or measured is None or measured == 0 or not math.isfinite(predicted):
        return None
    return predicted / measured - 1.0

"""The energy roofline: joules per operation against operational intensity, one line per power mode.

For a mode with calibrated figures (``calibration.ModeCalibration``), at an intensity I (FLOP or OP
per DRAM byte)::

    E/op(I) = ε_op + ε_byte / I + π0 / attainable(I),   attainable(I) = min(peak, I × bandwidth)

with the peak and bandwidth of the mode's roof at its top clocks and active SMs
(``ceilings.max_ceilings``): the FLOP's own energy, its share of a byte's, and its share of the power
the board draws while running for the time one operation takes at best. A mode whose figures are
missing has no line, and says why (never a line from a guessed figure). Which mode is cheapest at an
intensity is read off the lines here, never in a consumer. Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from jtop_roof.roofline.calibration import Figure, ModeCalibration
from jtop_roof.roofline.ceilings import max_ceilings
from jtop_roof.roofline.devices import Device, PowerMode, find_mode, rate_word
from jtop_roof.roofline.measured import Probe, probe_calibration

#: Where a line's J/op comes from: worked out from the mode's calibrated figures.
LINE_SOURCE = "inferred"
#: The name of the mode a probe ran in on a device whose database entry has no power modes (a dGPU).
PROBED_MODE = "as probed"
#: What a line whose figures a probe file gave says after its sources.
BY_PROBE = "by jroof-tui probe"


@dataclass(frozen=True, slots=True)
class EnergyLine:
    """One mode's energy roof for one precision: its three figures and the roof they divide by."""

    power_mode: str
    precision: str
    eps_op_j: float
    eps_byte_j: float
    pi0_w: float
    peak_ops_per_s: float
    bandwidth_bytes_per_s: float
    #: The figures' sources in words ("ε per OP measured, ε per byte measured, π0 inferred").
    basis: str

    def j_per_op(self, intensity: float) -> float:
        """E/op at ``intensity`` (see the module docstring); ValueError for an intensity that is not
        a finite positive number (at I = 0 every operation waits on infinitely many bytes). Very
        small intensities may give ``inf`` (a float's overflow): callers say so, never plot it."""
        if not (isinstance(intensity, (int, float)) and math.isfinite(intensity) and intensity > 0):
            raise ValueError(f"intensity must be a positive number of operations per byte, got {intensity!r}")
        attainable = min(self.peak_ops_per_s, self.bandwidth_bytes_per_s * intensity)
        if attainable <= 0:
            return math.inf
        return self.eps_op_j + self.eps_byte_j / intensity + self.pi0_w / attainable

    @property
    def floor_j_per_op(self) -> float:
        """E/op as the intensity grows without bound: ε_op + π0 / peak."""
        return self.eps_op_j + self.pi0_w / self.peak_ops_per_s


@dataclass(frozen=True, slots=True)
class ModeEnergy:
    """A mode's line, or None and why not (``note``)."""

    power_mode: str
    line: EnergyLine | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class EnergyRoof:
    """Every mode's line for one precision, and which mode the stream is in; ``reason`` says why no
    mode has a line (no device, no calibrated mode)."""

    precision: str | None
    modes: tuple[ModeEnergy, ...]
    current_mode: str | None
    reason: str | None = None

    @property
    def lines(self) -> tuple[EnergyLine, ...]:
        return tuple(mode.line for mode in self.modes if mode.line is not None)


@dataclass(frozen=True, slots=True)
class Cheapest:
    """The mode with the lowest J/op at an intensity (None: no line, or the intensity is not one),
    and the sentence that says so."""

    power_mode: str | None
    j_per_op: float | None
    text: str


def _short_precision(precision: str) -> str:
    return precision.removesuffix("_tensor")


def _eps_op(calibration: ModeCalibration, precision: str) -> Figure | None:
    """ε per operation of ``precision``: under its database key (``int8_tensor``) or its short name
    (``int8``), whichever the calibration uses."""
    figures = calibration.eps_flop_j
    return figures.get(precision) or figures.get(_short_precision(precision))


def _usable(figure: Figure | None) -> bool:
    value = None if figure is None else figure.value
    return value is not None and math.isfinite(value) and value >= 0


def probed_modes(device: Device, probe: Probe | None) -> tuple[tuple[PowerMode, ...], str | None]:
    """The device's modes with the probe's measured calibration in place of the database's for the
    mode it ran in (a device without modes gets one, ``PROBED_MODE`` or the probe's mode name, at its
    top clocks), and the name of that mode; the database's modes alone where the probe is another
    device's, measured no π0, or ran in a mode the database does not know."""
    calibration = None if probe is None or probe.device != device.id else probe_calibration(probe)
    if probe is None or calibration is None:
        return device.power_modes, None
    if not device.power_modes:
        name = probe.power_mode or PROBED_MODE
        made = PowerMode(name=name, source="the mode jroof-tui probe ran in", calibration=calibration)
        return (made,), name
    mode = None if probe.power_mode is None else find_mode(device, probe.power_mode)
    if mode is None:
        return device.power_modes, None
    modes = tuple(replace(m, calibration=calibration) if m is mode else m for m in device.power_modes)
    return modes, mode.name


def mode_energy(device: Device, mode: PowerMode, precision: str, by: str | None = None) -> ModeEnergy:
    """The energy line of ``mode`` at ``precision``, or why there is none; ``by`` says who measured
    the figures where not the database (``BY_PROBE``)."""
    calibration = mode.calibration
    if calibration is None:
        return ModeEnergy(mode.name, None, "no calibration for this mode in the device database")
    word = rate_word(precision)
    eps_op = _eps_op(calibration, precision)
    missing = [name for name, figure in ((f"ε per {word} ({_short_precision(precision)})", eps_op),
                                         ("ε per byte", calibration.eps_byte_j), ("π0", calibration.pi0_w))
               if not _usable(figure)]
    if missing:
        return ModeEnergy(mode.name, None, "not calibrated: " + ", ".join(missing))
    roof = max_ceilings(device, mode)
    if roof is None or precision not in roof.peak_flops_per_s:
        why = "no roof at the mode's top clocks" if roof is None else f"{device.id} has no {precision} rate"
        return ModeEnergy(mode.name, None, why)
    assert eps_op is not None and eps_op.value is not None
    assert calibration.eps_byte_j.value is not None and calibration.pi0_w.value is not None
    basis = (f"ε per {word} {eps_op.source}, ε per byte {calibration.eps_byte_j.source}, "
             f"π0 {calibration.pi0_w.source}" + (f" {by}" if by else ""))
    return ModeEnergy(mode.name, EnergyLine(
        power_mode=mode.name, precision=precision, eps_op_j=eps_op.value,
        eps_byte_j=calibration.eps_byte_j.value, pi0_w=calibration.pi0_w.value,
        peak_ops_per_s=roof.peak_flops_per_s[precision], bandwidth_bytes_per_s=roof.bandwidth_bytes_per_s,
        basis=basis))


def energy_roof(device: Device | None, current: PowerMode | None, precision: str | None,
                probe: Probe | None = None) -> EnergyRoof:
    """Every mode of ``device`` at ``precision``: a line each where the figures allow; ``probe``
    (``--probe``): its measured figures for the mode it ran in (``probed_modes``)."""
    name = None if current is None else current.name
    if device is None or precision is None:
        return EnergyRoof(precision, (), name, "device unknown" if device is None else "no precision")
    power_modes, probed = probed_modes(device, probe)
    if not power_modes:
        return EnergyRoof(precision, (), name, f"{device.id} has no power modes in the device database")
    if probed is not None and not device.power_modes:
        name = probed  # a device without modes runs in the one the probe measured
    modes = tuple(mode_energy(device, mode, precision, BY_PROBE if mode.name == probed else None)
                  for mode in power_modes)
    reason = None
    if not any(mode.line is not None for mode in modes):
        reason = f"no power mode of {device.id} is calibrated for energy at {_short_precision(precision)}"
    return EnergyRoof(precision, modes, name, reason)


def _finite_positive(value: float | None) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def cheapest_at(roof: EnergyRoof, intensity: float | None) -> Cheapest:
    """The mode whose line is lowest at ``intensity``; ties go to the mode listed first."""
    lines = roof.lines
    if not lines:
        return Cheapest(None, None, "cheapest mode: unknown (" + (roof.reason or "no calibrated mode") + ")")
    if not _finite_positive(intensity):
        return Cheapest(None, None, "cheapest mode: unknown (the workload reported no intensity)")
    assert intensity is not None
    costs = [(line.j_per_op(intensity), line.power_mode) for line in lines]
    finite = [(cost, name) for cost, name in costs if math.isfinite(cost)]
    if not finite:
        return Cheapest(None, None, "cheapest mode: unknown (no finite energy at this intensity)")
    best_cost, best = min(finite, key=lambda pair: pair[0])
    unpriced = [mode.power_mode for mode in roof.modes if mode.line is None]
    left = f" ({', '.join(unpriced)} not calibrated)" if unpriced else ""
    return Cheapest(best, best_cost, f"cheapest mode at this intensity: {best}{left}")


def ceilings_at(roof: EnergyRoof, intensity: float | None) -> list[dict[str, Any]]:
    """Each mode's J/op at ``intensity``, for a report: ``power_mode``, ``j_per_op`` (null where the
    mode has no line or the intensity is unknown), ``j_per_op_source``, ``j_per_op_note``."""
    out: list[dict[str, Any]] = []
    for mode in roof.modes:
        value: float | None = None
        note = mode.note
        if mode.line is not None:
            if not _finite_positive(intensity):
                note = "the workload reported no intensity"
            else:
                assert intensity is not None
                cost = mode.line.j_per_op(intensity)
                value = cost if math.isfinite(cost) else None
                note = mode.line.basis if value is not None else "beyond a float at this intensity"
        out.append({"power_mode": mode.power_mode, "j_per_op": value,
                    "j_per_op_source": LINE_SOURCE if value is not None else None, "j_per_op_note": note})
    return out


def sample_intensities(low: float, high: float, count: int) -> Sequence[float]:
    """``count`` intensities spaced evenly in log10 from ``low`` to ``high`` (both > 0): where a
    plot evaluates the lines."""
    if not (_finite_positive(low) and _finite_positive(high)) or count < 2:
        raise ValueError("intensities need two positive ends and at least two points")
    a, b = math.log10(low), math.log10(high)
    return [10 ** (a + (b - a) * k / (count - 1)) for k in range(count)]


def energy_json(device: Device | None, current: PowerMode | None, precision: str | None,
                intensity: float | None, probe: Probe | None = None) -> dict[str, Any]:
    """A phase's energy roofline for a report: ``energy_ceilings`` (``ceilings_at`` each mode),
    ``energy_ceilings_note`` (why no mode has a line, else null) and ``energy_cheapest_mode`` (the
    cheapest mode at the phase's intensity, or null)."""
    roof = energy_roof(device, current, precision, probe)
    return {"energy_ceilings": ceilings_at(roof, intensity), "energy_ceilings_note": roof.reason,
            "energy_cheapest_mode": cheapest_at(roof, intensity).power_mode}


_SMALL_PREFIXES = ((1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"))


def joules_text(joules: float, unit: str = "J") -> str:
    """Three significant digits with a small SI prefix: ``2.02 pJ``, ``150 nJ``, ``1.5 J``."""
    for scale, prefix in _SMALL_PREFIXES:
        if abs(joules) >= scale:
            return f"{joules / scale:.3g} {prefix}{unit}"
    return f"{joules:.3g} {unit}"

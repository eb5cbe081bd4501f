"""Roofline ceilings that follow the clocks: pure arithmetic over a ``Device`` and the clocks of a sample.

compute peak = active SMs x FLOP per clock per SM x GPU clock; bandwidth = bus bytes x data-rate factor x
EMC clock (NVML's memory clock on dGPUs). A clock that is missing gives no ceilings and a reason, never a
roof drawn at a guessed clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from jtop_roof.roofline.devices import PRECISIONS, Device, PowerMode


@dataclass(frozen=True, slots=True)
class Ceilings:
    """The roof at one pair of clocks. Precisions the device lacks are absent from both mappings."""

    gpu_mhz: float
    emc_mhz: float
    sms: int
    bandwidth_bytes_per_s: float
    peak_flops_per_s: Mapping[str, float]
    ridge_flop_per_byte: Mapping[str, float]


def active_sms(device: Device, mode: PowerMode | None = None) -> int:
    """SMs left running: the mode may power-gate TPCs (Orin Nano Super at 7 W runs 4 of 8 SMs)."""
    if mode is not None and mode.active_sms is not None:
        return mode.active_sms
    return device.sms


def _clock_missing(label: str, mhz: float | None) -> str | None:
    if mhz is None or not math.isfinite(mhz):
        return f"no {label} clock in the samples (tegrastats prints clocks only when run as root)"
    if mhz <= 0:
        return f"the {label} clock reads {mhz:g} MHz (clock gated while idle): no roof at zero"
    return None


def missing_reason(device: Device, gpu_mhz: float | None, emc_mhz: float | None) -> str | None:
    """Why no roof can be drawn at these clocks for this device, or None when it can."""
    if device.bus_width_bits is None or device.emc_data_rate_factor is None:
        return f"{device.id} has no memory bus width or data-rate factor in the device database"
    return _clock_missing("GPU", gpu_mhz) or _clock_missing("EMC", emc_mhz)


def ceilings(
    device: Device, gpu_mhz: float | None, emc_mhz: float | None, mode: PowerMode | None = None
) -> Ceilings | None:
    """The ceilings at these clocks, or None where ``missing_reason`` says why there are none."""
    if missing_reason(device, gpu_mhz, emc_mhz) is not None:
        return None
    assert gpu_mhz is not None and emc_mhz is not None
    assert device.bus_width_bits is not None and device.emc_data_rate_factor is not None
    sms = active_sms(device, mode)
    bandwidth = device.bus_width_bits / 8 * device.emc_data_rate_factor * emc_mhz * 1e6
    peaks = {p: sms * device.flop_per_clk_per_sm[p] * gpu_mhz * 1e6 for p in PRECISIONS
             if p in device.flop_per_clk_per_sm}
    return Ceilings(
        gpu_mhz=gpu_mhz,
        emc_mhz=emc_mhz,
        sms=sms,
        bandwidth_bytes_per_s=bandwidth,
        peak_flops_per_s=MappingProxyType(peaks),
        ridge_flop_per_byte=MappingProxyType({p: peak / bandwidth for p, peak in peaks.items()}),
    )


def max_clocks(device: Device, mode: PowerMode | None = None) -> tuple[float | None, float | None]:
    """(GPU MHz, EMC MHz) at the top of the mode: its caps, else the device's maximum."""
    gpu = mode.max_gpu_mhz if mode is not None and mode.max_gpu_mhz is not None else device.max_gpu_mhz
    emc = mode.max_emc_mhz if mode is not None and mode.max_emc_mhz is not None else device.max_emc_mhz
    return gpu, emc


def max_ceilings(device: Device, mode: PowerMode | None = None) -> Ceilings | None:
    """The roof at the mode's maximum clocks (the device's where the mode caps nothing)."""
    gpu, emc = max_clocks(device, mode)
    return ceilings(device, gpu, emc, mode)


def roof_fraction(
    current: Ceilings, maximum: Ceilings, precision: str, intensity: float | None = None
) -> float | None:
    """What fraction of the maximum roof the current clocks give ("clocks now give 71% of the mode's roof").

    At an intensity (FLOP/byte) it is the ratio of the attainable rates there; without one it is the worst
    ratio anywhere on the roof, the lower of the compute and bandwidth ratios (every intensity lies between
    the two). None when the device lacks the precision.
    """
    if intensity is not None:
        now, top = attainable(current, precision, intensity), attainable(maximum, precision, intensity)
        return None if now is None or top is None else now / top
    if precision not in current.peak_flops_per_s or precision not in maximum.peak_flops_per_s:
        return None
    compute = current.peak_flops_per_s[precision] / maximum.peak_flops_per_s[precision]
    return min(compute, current.bandwidth_bytes_per_s / maximum.bandwidth_bytes_per_s)


def attainable(ceilings: Ceilings, precision: str, intensity: float) -> float | None:
    """min(peak, bandwidth x intensity) in FLOP/s; None when the device lacks the precision."""
    if not math.isfinite(intensity) or intensity <= 0:
        raise ValueError(f"intensity must be a positive number of FLOP per byte, got {intensity!r}")
    peak = ceilings.peak_flops_per_s.get(precision)
    return None if peak is None else min(peak, ceilings.bandwidth_bytes_per_s * intensity)


def to_json(ceilings: Ceilings, device: Device, power_mode: PowerMode | None) -> dict[str, Any]:
    """The ``roof --json`` object: the ceilings at the given clocks only, absent precisions left out."""
    return {
        "device": device.id,
        "power_mode": None if power_mode is None else power_mode.name,
        "gpu_mhz": ceilings.gpu_mhz,
        "emc_mhz": ceilings.emc_mhz,
        "sms": ceilings.sms,
        "bandwidth_bytes_per_s": ceilings.bandwidth_bytes_per_s,
        "peak_flops_per_s": dict(ceilings.peak_flops_per_s),
        "ridge_flop_per_byte": dict(ceilings.ridge_flop_per_byte),
    }

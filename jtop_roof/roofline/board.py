"""Which device and power mode a stream comes from, and the roofline at its clocks.

The device comes from ``--device`` (config ``device``), else the recording header's ``device``,
else its ``model`` (device tree) or NVML name matched against the device database; the power mode
from ``--power-mode``, else the header's (``nvpmodel``). Nothing is guessed: an unknown device or
mode is said plainly, with how to add it, and then no roof is drawn (an unknown mode on a known
device uses the device's maximum clocks, and says so).

``roof_state`` gives what the Roofline pane draws, for one sample and one precision. Nothing here
imports Textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Sample
from jtop_roof.roofline.ceilings import Ceilings, ceilings, max_ceilings, missing_reason, roof_fraction
from jtop_roof.roofline.devices import PRECISIONS, Device, PowerMode, find_mode, match_devices
from jtop_roof.roofline.measured import Probe

HOW_TO_ADD = ("pass --device ID (`jroof-tui devices` lists them) or add the board under `devices:` in "
              "the config")
DEFAULT_PRECISION = "fp16_tensor"
#: Engines whose work is not on the GPU roof.
ACCELERATOR_PREFIXES = ("NVDLA", "DLA", "PVA")


@dataclass(frozen=True, slots=True)
class Board:
    """The device and mode of a stream; ``problem`` says why there is no device (then no roof),
    ``mode_note`` why the mode's caps are not known (the device's maxima are used)."""

    device: Device | None
    mode: PowerMode | None
    problem: str | None = None
    mode_note: str | None = None

    @property
    def mode_name(self) -> str | None:
        """The nvpmodel name, as every JSON output gives ``power_mode`` (or None)."""
        return None if self.mode is None else self.mode.name


def resolve_board(
    info: SourceInfo,
    db: Mapping[str, Device],
    *,
    device_id: str | None = None,
    power_mode: str | None = None,
    ram_total_mb: float | None = None,
) -> Board:
    """See the module docstring. ``ram_total_mb`` (a sample's) tells 32 from 64 GB where the model
    string does not."""
    header_device = info.header.get("device")
    chosen = device_id or (header_device if isinstance(header_device, str) else None)
    if chosen is not None:
        device = db.get(chosen)
        if device is None:
            return Board(None, None, f"unknown device {chosen[:40]!r}: {HOW_TO_ADD}")
    else:
        names = [text for text in (_text(info.header.get("gpu")), info.model) if text]
        if not names:
            return Board(None, None, f"the source does not name its device: {HOW_TO_ADD}")
        found: tuple[Device, ...] = ()
        for name in names:
            found = match_devices(db, name, ram_total_mb)
            if found:
                break
        if len(found) != 1:
            what = f"{names[-1][:60]!r}"
            if found:
                ids = ", ".join(d.id for d in found)
                return Board(None, None, f"{what} could be {ids}: pass --device ID")
            return Board(None, None, f"{what} is not in the device database: {HOW_TO_ADD}")
        device = found[0]
    return _with_mode(device, power_mode, info)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _with_mode(device: Device, power_mode: str | None, info: SourceInfo) -> Board:
    if not device.power_modes:
        return Board(device, None)  # a dGPU: no nvpmodel modes, its maximum clocks are the roof
    wanted: str | int | None = power_mode or info.power_mode
    if wanted is None and info.power_mode_id is not None:
        wanted = info.power_mode_id
    if wanted is None:
        return Board(device, None, mode_note="power mode unknown: roofs at the device's maximum clocks "
                     "(--power-mode NAME gives the mode's caps)")
    mode = find_mode(device, wanted)
    if mode is None:
        known = " ".join(m.name for m in device.power_modes)
        return Board(device, None, mode_note=f"power mode {str(wanted)[:30]!r} is not known for {device.id} "
                     f"(known: {known}); roofs at the device's maximum clocks; add it under `devices:`")
    return Board(device, mode)


@dataclass(frozen=True, slots=True)
class RoofState:
    """What the Roofline pane shows for one sample: the roofs at the current clocks and at the
    mode's maximum, for ``precision``; or why there is no roof."""

    precision: str | None
    current: Ceilings | None
    maximum: Ceilings | None
    #: Of the mode's roof, what the current clocks give (the lower of compute and bandwidth).
    fraction: float | None
    #: Why nothing (or only the maximum roof) is drawn; None when both roofs are there.
    reason: str | None
    #: Busy accelerators (DLA, PVA): their work is not on the GPU roof.
    accelerators: tuple[str, ...] = ()
    #: The roof ``jroof-tui probe`` measured on this machine (``--probe``), labelled: drawn beside
    #: the datasheet's, never used for verdicts.
    measured: Ceilings | None = None
    measured_label: str | None = None


def precisions_of(board: Board) -> tuple[str, ...]:
    """The precisions the device has, in the database's order (the key cycles them)."""
    if board.device is None:
        return ()
    return tuple(p for p in PRECISIONS if p in board.device.flop_per_clk_per_sm)


def _default_precision(available: tuple[str, ...]) -> str | None:
    """What inference mostly runs in: FP16 on the tensor cores where the device has them."""
    if DEFAULT_PRECISION in available:
        return DEFAULT_PRECISION
    return available[0] if available else None


def measured_roof(probe: Probe | None) -> Ceilings | None:
    """A probe's best bandwidth and per-precision peaks as a roof (at the clocks it ran at)."""
    if probe is None or probe.bandwidth_bytes_per_s is None or not probe.compute:
        return None
    bandwidth = probe.bandwidth_bytes_per_s
    peaks = {name: ceiling.value for name, ceiling in probe.compute.items()}
    return Ceilings(gpu_mhz=0.0, emc_mhz=0.0, sms=0, bandwidth_bytes_per_s=bandwidth,
                    peak_flops_per_s=MappingProxyType(peaks),
                    ridge_flop_per_byte=MappingProxyType({p: v / bandwidth for p, v in peaks.items()}))


def roof_state(board: Board, sample: Sample | None, precision: str | None,
               probe: Probe | None = None) -> RoofState:
    device = board.device
    if device is None:
        return RoofState(None, None, None, None, board.problem or "device unknown")
    available = precisions_of(board)
    chosen = precision if precision in available else _default_precision(available)
    maximum = max_ceilings(device, board.mode)
    gpu = None if sample is None or sample.gpu is None else sample.gpu.mhz
    emc = None if sample is None or sample.emc is None else sample.emc.mhz
    busy = () if sample is None else tuple(
        name for name, engine in sample.engines.items()
        if name.startswith(ACCELERATOR_PREFIXES) and not engine.off
        and ((engine.load_pct or 0) > 0 or (engine.load_pct is None and engine.mhz))
    )
    current = ceilings(device, gpu, emc, board.mode)
    reason = None
    if sample is None:
        reason = "no sample yet"
    elif current is None:
        reason = missing_reason(device, gpu, emc)
    fraction = None
    if current is not None and maximum is not None and chosen is not None:
        fraction = roof_fraction(current, maximum, chosen)
    measured = measured_roof(probe)
    if measured is not None and chosen not in measured.peak_flops_per_s:
        measured = None
    return RoofState(chosen, current, maximum, fraction, reason, busy, measured,
                     None if probe is None else probe.summary())

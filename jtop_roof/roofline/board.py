"""Which device and power mode a stream comes from, and the roofline at its clocks.

The device comes from ``--device`` (config ``device``), else the recording header's ``device``,
else its ``model`` (device tree) or NVML name matched against the device database; the power mode
from ``--power-mode``, else the header's (``nvpmodel``). Where neither says (a plain log), the
board and mode are inferred from what the samples showed (``inference``), and said to be; an
ambiguous inference names its candidates and guesses nothing (``power_mode_note`` says which fit).
Each is labelled with where it came from (``device_source``, ``power_mode_source``): ``given`` (the
user's flag or config, also when a recording kept it), ``measured`` (read off the board: a model
string, nvpmodel's answer in a header) or ``inferred`` (from the samples). A given device or mode
the samples contradict is kept and said to be (``device_note``, ``power_mode_note``). A log whose
online cores change is cut there, each part with its own mode (``mode_spans``, ``mode_at``). The
board says how far clock throttles can be detected with what is known (``throttle_detection``):
the one place that decides it, for the report, the TUI and the detectors alike.

``roof_state`` gives what the Roofline pane draws, for one sample and one precision. Nothing here
imports Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from jtop_roof.model.info import GIVEN, INFERRED, MEASURED, SourceInfo
from jtop_roof.model.records import Sample
from jtop_roof.roofline.ceilings import Ceilings, ceilings, max_ceilings, missing_reason, roof_fraction
from jtop_roof.roofline.devices import PRECISIONS, Device, PowerMode, find_mode, match_devices
from jtop_roof.roofline.inference import (
    BoardObservation,
    Inference,
    InferredSpan,
    fits_said,
    infer,
    misfit,
    mode_fits,
    one_mode,
)
from jtop_roof.roofline.measured import Probe

HOW_TO_ADD = ("pass --device ID (`jroof-tui devices` lists them) or add the board under `devices:` in "
              "the config")
#: Engines whose work is not on the GPU roof.
ACCELERATOR_PREFIXES = ("NVDLA", "DLA", "PVA")
#: Where a device or a mode came from: the user's flag or config (kept by a recording header too),
#: the board itself (a model string, nvpmodel's answer), or the samples (``inference``).
#: Units whose clocks a mode caps and the detectors compare.
UNITS = ("gpu", "emc", "cpu")
#: How far throttles can be told: against the mode's caps (or the device's own reasons), only
#: against maximum clocks (a low clock is then information, ``mode_cap``), or not at all.
FULL, LIMITED, OFF = "full", "limited", "off"


@dataclass(frozen=True, slots=True)
class Board:
    """The device and mode of a stream; ``problem`` says why there is no device (then no roof),
    ``mode_note`` why the mode's caps are not known (the device's maxima are used). ``mode`` may
    be known without ``device`` where the inference left several modules with the same mode and
    caps (``candidates``)."""

    device: Device | None
    mode: PowerMode | None
    problem: str | None = None
    mode_note: str | None = None
    device_source: str | None = None
    power_mode_source: str | None = None
    #: Device ids the inference could not tell apart (empty when the device is known).
    candidates: tuple[str, ...] = ()
    #: ``FULL``, ``LIMITED`` or ``OFF``, and why, in words.
    throttle_detection: str = OFF
    throttle_detection_note: str = ""
    #: Why the mode is not named or is in doubt: the modes that fit, a mode change, a given mode the
    #: samples contradict (None where nothing is in doubt).
    power_mode_note: str | None = None
    #: A given device the samples contradict, in words.
    device_note: str | None = None
    #: Where the mode changed within the stream: its parts, from their first sample (``mode_at``).
    mode_spans: tuple[InferredSpan, ...] = ()
    #: Units the stream never showed a clock of (tegrastats without root: no GPU or EMC clock).
    unclocked: tuple[str, ...] = ()

    def span_at(self, t_mono: float | None) -> int:
        """The index of the ``mode_spans`` part ``t_mono`` lies in (0 without parts)."""
        index = 0
        for i, span in enumerate(self.mode_spans):
            if i and t_mono is not None and span.start_mono is not None and t_mono >= span.start_mono:
                index = i
        return index

    def mode_at(self, t_mono: float | None) -> PowerMode | None:
        """The mode a sample at ``t_mono`` is judged against: its part's where the mode changed."""
        if not self.mode_spans:
            return self.mode
        return self.mode_spans[self.span_at(t_mono)].mode

    @property
    def mode_name(self) -> str | None:
        """The nvpmodel name, as every JSON output gives ``power_mode`` (or None)."""
        return None if self.mode is None else self.mode.name

    @property
    def open_to_inference(self) -> bool:
        """Whether the flags and the description left the device, or a Jetson's mode, unnamed:
        then what the samples show may tell it (``resolve_board``'s ``observed``)."""
        if self.device is not None and not self.device.power_modes:
            return False
        return GIVEN in (self.power_mode_source, self.device_source) or self.power_mode_source is None


def resolve_board(
    info: SourceInfo,
    db: Mapping[str, Device],
    *,
    device_id: str | None = None,
    power_mode: str | None = None,
    ram_total_mb: float | None = None,
    observed: BoardObservation | None = None,
) -> Board:
    """See the module docstring. ``ram_total_mb`` (a sample's) tells 32 from 64 GB where the model
    string does not; ``observed``: what the stream's samples showed, for what nothing says."""
    board = _resolve(info, db, device_id, power_mode, ram_total_mb, observed)
    if observed is not None and observed.samples:
        board = _checked(board, observed, db)
    level, note = throttle_detection(board, info)
    return replace(board, throttle_detection=level, throttle_detection_note=note)


def _resolve(info: SourceInfo, db: Mapping[str, Device], device_id: str | None, power_mode: str | None,
             ram_total_mb: float | None, observed: BoardObservation | None) -> Board:
    header_device = info.header.get("device")
    chosen = device_id or (header_device if isinstance(header_device, str) else None)
    if chosen is not None:
        device = db.get(chosen)
        if device is None:
            return Board(None, None, f"unknown device {chosen[:40]!r}: {HOW_TO_ADD}")
        return _with_mode(device, GIVEN, power_mode, info, observed)  # a header's is the user's
    names = [text for text in (_text(info.header.get("gpu")), info.model) if text]
    found: tuple[Device, ...] = ()
    for name in names:
        found = match_devices(db, name, ram_total_mb)
        if found:
            break
    if len(found) == 1:
        return _with_mode(found[0], MEASURED, power_mode, info, observed)
    if names and not found:
        return Board(None, None, f"{names[-1][:60]!r} is not in the device database: {HOW_TO_ADD}")
    if observed is not None and observed.samples:
        inference = infer(observed, found or db.values())
        return _inferred_device(inference, [db[i] for i in inference.devices if i in db], power_mode, info,
                                observed)
    if found:
        ids = ", ".join(d.id for d in found)
        return Board(None, None, f"{names[-1][:60]!r} could be {ids}: pass --device ID",
                     candidates=_ids(found))
    return Board(None, None, f"the source does not name its device: {HOW_TO_ADD}")


def _inferred_device(inference: Inference, candidates: Iterable[Device], power_mode: str | None,
                     info: SourceInfo, observed: BoardObservation) -> Board:
    """The board the samples point to; a mode inferred (or given) for several modules at once is
    kept. ``candidates``: the devices the inference kept (``inference.devices``)."""
    if inference.device is not None:
        return _with_mode(inference.device, INFERRED, power_mode, info, observed)
    why = f"inferred from the log: {inference.note}"
    if not inference.devices:
        return Board(None, None, f"{why}; {HOW_TO_ADD}")
    problem = f"{why}; pass --device ID"
    if power_mode is not None:  # the user's mode, where it is one mode on every candidate
        found = [(device, find_mode(device, power_mode)) for device in candidates]
        pairs = [(device, mode) for device, mode in found if mode is not None]
        given = one_mode(pairs) if len(pairs) == len(found) else None
        return Board(None, given, problem, power_mode_source=None if given is None else GIVEN,
                     candidates=inference.devices)
    source = None if inference.mode is None else INFERRED
    note = None if inference.mode is not None else _ambiguous(inference)
    return Board(None, inference.mode, problem, power_mode_source=source, candidates=inference.devices,
                 power_mode_note=note)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _ids(devices: tuple[Device, ...]) -> tuple[str, ...]:
    return tuple(device.id for device in devices)


def _with_mode(device: Device, device_source: str, power_mode: str | None, info: SourceInfo,
               observed: BoardObservation | None) -> Board:
    if not device.power_modes:
        # a dGPU: no nvpmodel modes, its maximum clocks are the roof
        return Board(device, None, device_source=device_source)
    wanted: str | int | None = power_mode or info.power_mode
    if wanted is None and info.power_mode_id is not None:
        wanted = info.power_mode_id
    if wanted is None:
        return _inferred_mode(device, device_source, observed)
    mode = find_mode(device, wanted)
    if mode is None:
        known = " ".join(m.name for m in device.power_modes)
        return Board(device, None, mode_note=f"power mode {str(wanted)[:30]!r} is not known for {device.id} "
                     f"(known: {known}); roofs at the device's maximum clocks; add it under `devices:`",
                     device_source=device_source)
    return Board(device, mode, device_source=device_source,
                 power_mode_source=GIVEN if power_mode or _given_at_recording(info) else MEASURED)


def _inferred_mode(device: Device, device_source: str, observed: BoardObservation | None) -> Board:
    """The mode of a known device that nothing names, from the samples where they tell it."""
    unknown = _MODE_UNKNOWN
    if observed is None or not observed.samples:
        return Board(device, None, mode_note=unknown, device_source=device_source)
    inference = infer(observed, (device,))
    if inference.spans:
        return Board(device, None, device_source=device_source, power_mode_source=INFERRED,
                     power_mode_note=inference.note, mode_spans=inference.spans)
    if inference.mode is None:
        return Board(device, None, mode_note=f"{unknown}; inferred from the log: {inference.note}",
                     device_source=device_source, power_mode_note=_ambiguous(inference))
    return Board(device, inference.mode, device_source=device_source, power_mode_source=INFERRED)


#: Why a device's mode is not known: its maximum clocks are the roof.
_MODE_UNKNOWN = ("power mode unknown: roofs at the device's maximum clocks (--power-mode NAME gives the "
                 "mode's caps)")


def _ambiguous(inference: Inference) -> str | None:
    """The power-mode note of an inference that named no mode: which modes fit, or why none."""
    if inference.spans:
        return inference.note
    if inference.modes:
        return f"no mode named: {inference.note}"
    return None


def _given_at_recording(info: SourceInfo) -> bool:
    """Whether a recording's header mode was the user's ``--power-mode`` (its command line says
    so), not nvpmodel's answer."""
    command = info.header.get("command")
    return isinstance(command, list) and any(
        isinstance(arg, str) and arg.startswith("--power-mode") for arg in command)


def _checked(board: Board, observed: BoardObservation, db: Mapping[str, Device]) -> Board:
    """A given device or mode against what the samples show: contradicted, said so
    (``device_note``, ``power_mode_note``); and the units the samples never clocked."""
    unclocked = tuple(unit for unit in UNITS if unit not in observed.max_mhz)
    board = replace(board, unclocked=unclocked)
    device = board.device
    if device is None or not device.power_modes \
            or GIVEN not in (board.device_source, board.power_mode_source):
        return board
    inference = infer(observed, (device,))
    mode = board.mode
    device_wrong = board.device_source == GIVEN and not inference.modes and not inference.spans
    mode_wrong = (board.power_mode_source == GIVEN and mode is not None
                  and not mode_fits(device, mode, observed))
    if not device_wrong and not mode_wrong:
        return board
    # What the log shows without the flag: the candidates an inference over the database finds.
    fits = fits_said(infer(observed, db.values()))
    if device_wrong:
        # said once: the mode's own note (no mode of this device fits) is this note's reason
        board = replace(board, device_note=f"the log contradicts the given device {device.id}: "
                        f"{misfit(device, observed, db.values())}; {fits}",
                        mode_note=None if board.mode_note is None else _MODE_UNKNOWN)
    if mode_wrong and mode is not None:
        own = fits_said(inference) if inference.modes or inference.spans else fits
        board = replace(board, power_mode_note=f"the log contradicts the given mode {mode.name}: "
                        f"{misfit(device, observed, db.values(), mode)}; {own}")
    return board


def throttle_detection(board: Board, info: SourceInfo) -> tuple[str, str]:
    """(``FULL``/``LIMITED``/``OFF``, why): what a low clock can be compared with. The detectors
    use the same caps (``analysis.detectors``): a mode's, else the source's or device's maximum.
    Full only where every unit has a clock and a cap and the mode is known (given, measured, or
    inferred with one mode fitting, or one per part of a log whose mode changed)."""
    device = board.device
    if device is not None and not device.power_modes:
        return FULL, "the GPU's own throttle reasons (NVML) decide; it has no power modes"
    modes = [span.mode for span in board.mode_spans] if board.mode_spans else [board.mode]
    known = [mode for mode in modes if mode is not None]
    if known and len(known) == len(modes):
        gaps = _missing(board, known, info)
        named = " then ".join(mode.name for mode in known)
        said = f"clocks compared with the {named} mode's caps ({board.power_mode_source})"
        if board.mode_spans:
            said = (f"the power mode changed within the log: each part's clocks compared with its own "
                    f"mode's caps ({named}, {board.power_mode_source})")
        if gaps:
            return LIMITED, f"{said}; {gaps}"
        return FULL, said
    if device is not None or info.max_clocks:
        why = ("power mode unknown" if not board.power_mode_note
               else f"power mode not told apart ({board.power_mode_note})")
        return LIMITED, (f"{why}: a busy clock below the maximum is shown as mode_cap, a "
                         "throttle only with a reason (thermal trip, power budget, over-current); "
                         "--power-mode NAME gives full detection")
    return OFF, "device and power mode unknown: no clock cap to compare with (--device ID --power-mode NAME)"


def _missing(board: Board, modes: Iterable[PowerMode], info: SourceInfo) -> str:
    """What a throttle of some unit cannot be told without, in words ('' where nothing is missing):
    a clock the stream never showed, a cap neither the mode, the source nor the device gives."""
    said = []
    if board.unclocked:
        said.append("no " + "/".join(u.upper() for u in board.unclocked) + " clock in the log "
                    "(tegrastats run without root prints none): that unit's throttles are not seen")
    device = board.device
    for mode in modes:
        caps = {"gpu": mode.max_gpu_mhz, "emc": mode.max_emc_mhz, "cpu": mode.max_cpu_mhz}
        for unit in UNITS:
            device_cap = None if device is None else {"gpu": device.max_gpu_mhz, "emc": device.max_emc_mhz,
                                                      "cpu": None}[unit]
            if caps[unit] is None and info.max_clocks.get(f"{unit}_mhz") is None and device_cap is None \
                    and unit not in board.unclocked:
                said.append(f"no {unit.upper()} cap for {mode.name} in the device database or the source: "
                            "its throttles are not seen")
    return "; ".join(dict.fromkeys(said))


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


def pick_precision(board: Board, wishes: Iterable[str | None]) -> str | None:
    """The roofline's precision: the first of ``wishes`` (the p key's choice, then the
    workload's) the device has, else its fastest; None without a device."""
    available = precisions_of(board)
    chosen = next((wish for wish in wishes if wish in available), None)
    return chosen or _fastest(board, available)


def _fastest(board: Board, available: tuple[str, ...]) -> str | None:
    """The precision with the highest peak (operations per clock and SM: the clock and the SMs
    are the same for all); the first listed of equals."""
    if board.device is None or not available:
        return None
    rates = board.device.flop_per_clk_per_sm
    return max(available, key=lambda precision: (rates[precision], -available.index(precision)))


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
    chosen = precision if precision in available else _fastest(board, available)
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

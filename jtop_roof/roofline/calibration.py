"""A power mode's energy calibration: idle power per rail and Pagoda's terms (ε per FLOP, ε per byte, π0).

E = ε_flop·W + ε_byte·Q + π0·T (Choi and Vuduc's energy roofline, as Pagoda uses it per Jetson mode).
The figures are the board's, never one workload's: each carries where it came from (``source`` is one of
measured, given, assumed, inferred; ``note`` names the run, document or probe behind it), and a figure
nobody has measured is None with a note why, never a default. The values live beside each mode in
``data/devices.yaml`` (``calibration:``); a user's config may add or override them like any mode field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from jtop_roof.model.errors import UserError

#: The words a calibrated figure's source may take.
SOURCES = ("measured", "given", "assumed", "inferred")

_FIGURE_KEYS = frozenset({"value", "source", "note"})
_CALIBRATION_KEYS = frozenset({"idle_w", "pi0_w", "eps_flop_j", "eps_byte_j", "note"})
_NOT_CALIBRATED = "not calibrated for this mode: no run or probe of it is in the device database"


class CalibrationError(UserError):
    """A bad calibration entry; the message is one line naming the mode and the field."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One calibrated number with what backs it; ``value`` None means unknown, and ``note`` says why."""

    value: float | None
    source: str | None = None
    note: str | None = None


UNKNOWN = Figure(None, None, _NOT_CALIBRATED)


@dataclass(frozen=True, slots=True)
class ModeCalibration:
    """What a mode costs in energy: idle power per rail (W), π0 (W while running), ε per FLOP or OP
    by precision (J) and ε per DRAM byte (J)."""

    idle_w: Mapping[str, Figure] = field(default_factory=lambda: MappingProxyType({}))
    pi0_w: Figure = UNKNOWN
    eps_flop_j: Mapping[str, Figure] = field(default_factory=lambda: MappingProxyType({}))
    eps_byte_j: Figure = UNKNOWN
    note: str | None = None


def _figure(where: str, value: object) -> Figure:
    if not isinstance(value, Mapping):
        raise CalibrationError(f"{where}: must be a mapping of value, source and note")
    unknown = set(value) - _FIGURE_KEYS
    if unknown:
        raise CalibrationError(f"{where}: unknown key {sorted(map(str, unknown))[0]!r}")
    number = value.get("value")
    source = value.get("source")
    note = value.get("note")
    if number is not None and (isinstance(number, bool) or not isinstance(number, (int, float))
                               or not math.isfinite(number) or number < 0):
        raise CalibrationError(f"{where}: value must be a finite number >= 0 or null")
    if source is not None and source not in SOURCES:
        raise CalibrationError(f"{where}: source must be one of {', '.join(SOURCES)}")
    if number is not None and source is None:
        raise CalibrationError(f"{where}: a value needs its source")
    if note is not None and not isinstance(note, str):
        raise CalibrationError(f"{where}: note must be text")
    if number is None and not note:
        raise CalibrationError(f"{where}: a null value needs a note saying why")
    return Figure(None if number is None else float(number), source, note)


def parse_figure(where: str, value: object) -> Figure:
    """One ``{value, source, note}`` figure, checked (a probe file's energy terms use it too)."""
    return _figure(where, value)


def _figures(where: str, value: object) -> Mapping[str, Figure]:
    if not isinstance(value, Mapping):
        raise CalibrationError(f"{where}: must be a mapping")
    return MappingProxyType({str(k): _figure(f"{where}.{k}", v) for k, v in value.items()})


def parse_calibration(where: str, value: object) -> ModeCalibration:
    """A mode's ``calibration:`` entry, checked; one line naming the field when it is wrong."""
    if not isinstance(value, Mapping):
        raise CalibrationError(f"{where}: calibration must be a mapping")
    raw: Mapping[str, Any] = value
    unknown = set(raw) - _CALIBRATION_KEYS
    if unknown:
        raise CalibrationError(f"{where}: calibration has unknown key {sorted(map(str, unknown))[0]!r}")
    note = raw.get("note")
    if note is not None and not isinstance(note, str):
        raise CalibrationError(f"{where}: calibration note must be text")
    return ModeCalibration(
        idle_w=_figures(f"{where}: calibration.idle_w", raw.get("idle_w") or {}),
        pi0_w=_figure(f"{where}: calibration.pi0_w", raw["pi0_w"]) if "pi0_w" in raw else UNKNOWN,
        eps_flop_j=_figures(f"{where}: calibration.eps_flop_j", raw.get("eps_flop_j") or {}),
        eps_byte_j=_figure(f"{where}: calibration.eps_byte_j", raw["eps_byte_j"]) if "eps_byte_j" in raw
        else UNKNOWN,
        note=note,
    )

"""Temperatures against their limits: trip points from the board, placeholders, headroom.

Data layer (no Textual): the Temperatures pane colours by it, and the coming throttle detectors
judge "near a trip point" by the same rules (a PMIC placeholder is never "hot", an off sensor is
"off", headroom to the trip point wins over the configured fixed levels).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jtop_roof.model.settings import Thresholds

#: tegrastats prints these for PMIC on TX1/TX2/Nano/Xavier: a fixed value, not a measurement.
PMIC_PLACEHOLDERS_C = (100.0, 50.0)
#: tegrastats' "sensor unavailable" value, in case a reading reaches us unconverted.
SENSOR_OFF_C = -256.0
#: With a known trip point, colour by headroom: this close is critical, this close is a warning.
HEADROOM_CRIT_C = 5.0
HEADROOM_WARN_C = 15.0


@dataclass(frozen=True, slots=True)
class TempReading:
    """One zone as the Temperatures pane shows it.

    ``state`` is ``off`` (sensor unavailable), ``fixed`` (a placeholder such as PMIC@100C, never
    coloured hot), or ``ok``/``warn``/``crit``. ``headroom_c`` is to the trip point when known.
    """

    zone: str
    value_c: float | None
    state: str
    trip_c: float | None = None
    headroom_c: float | None = None


def is_placeholder(zone: str, value_c: float | None) -> bool:
    return value_c is not None and zone.upper().startswith("PMIC") and value_c in PMIC_PLACEHOLDERS_C


def _zone_key(name: str) -> str:
    key = name.strip().lower()
    for suffix in ("-thermal", "_thermal"):
        if key.endswith(suffix) and len(key) > len(suffix):
            key = key[: -len(suffix)]
    return key


_TRIP_PREFERENCE = ("passive", "hot", "critical")


def _trip_value(raw: Any) -> float | None:
    """A zone's throttling trip from what a header may hold: sysfs' list of
    ``{"type": ..., "temp_c": ...}`` (the lowest passive trip, else hot, else critical; fan-only
    ``active`` trips are not a limit), a plain number, or a list of numbers (the lowest)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        try:
            value = float(raw)
        except OverflowError:  # an integer of hundreds of digits is no temperature
            return None
        return value if math.isfinite(value) else None
    if isinstance(raw, Sequence) and not isinstance(raw, str):
        typed = [p for p in raw if isinstance(p, Mapping)]
        for kind in _TRIP_PREFERENCE:
            found = [_trip_value(p.get("temp_c")) for p in typed if p.get("type") == kind]
            values = [v for v in found if v is not None]
            if values:
                return min(values)
        values = [v for v in (_trip_value(p) for p in raw if not isinstance(p, Mapping)) if v is not None]
        return min(values) if values else None
    return None


def trip_points(raw: Any) -> dict[str, float]:
    """Normalise ``describe()["thermal_trips"]`` (or the recording header's) to {zone key: °C}.

    Zone names match tegrastats' case-insensitively, with sysfs' ``-thermal`` suffix dropped.
    Anything unreadable is left out (then the configured levels apply)."""
    if not isinstance(raw, Mapping):
        return {}
    trips: dict[str, float] = {}
    for name, value in raw.items():
        trip = _trip_value(value)
        if isinstance(name, str) and trip is not None:
            trips[_zone_key(name)] = trip
    return trips


def classify_temp(
    zone: str, value_c: float | None, trips: Mapping[str, float], thresholds: Thresholds
) -> TempReading:
    if value_c is None or math.isnan(value_c) or value_c <= SENSOR_OFF_C:
        return TempReading(zone, None, "off")
    if is_placeholder(zone, value_c):
        return TempReading(zone, value_c, "fixed")
    trip = trips.get(_zone_key(zone))
    if trip is not None:
        headroom = trip - value_c
        if headroom <= HEADROOM_CRIT_C:
            state = "crit"
        elif headroom <= HEADROOM_WARN_C:
            state = "warn"
        else:
            state = "ok"
        return TempReading(zone, value_c, state, trip, headroom)
    if value_c >= thresholds.temp_crit_c:
        state = "crit"
    elif value_c >= thresholds.temp_warn_c:
        state = "warn"
    else:
        state = "ok"
    return TempReading(zone, value_c, state)



"""How each number reads: formatting, colour levels (load, temperature headroom), bars,
sparklines and time-axis ticks.

Pure functions with no Textual import, so the rules (a PMIC placeholder is never "hot", an off
sensor is "off", headroom to the trip point wins over fixed levels) are unit-tested directly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from jtop_roof.config import Thresholds

#: tegrastats prints these for PMIC on TX1/TX2/Nano/Xavier: a fixed value, not a measurement.
PMIC_PLACEHOLDERS_C = (100.0, 50.0)
#: tegrastats' "sensor unavailable" value, in case a reading reaches us unconverted.
SENSOR_OFF_C = -256.0
#: With a known trip point, colour by headroom: this close is critical, this close is a warning.
HEADROOM_CRIT_C = 5.0
HEADROOM_WARN_C = 15.0

# ----------------------------------------------------------------------------------- formatting


def fmt_power(mw: float | None) -> str:
    if mw is None or math.isnan(mw):
        return "—"
    if abs(mw) < 1000:
        return f"{mw:.0f} mW"
    return f"{mw / 1000:.2f} W"


def fmt_mw(mw: float | None) -> str:
    """A rail's instantaneous power as tegrastats gives it: whole milliwatts (``12479 mW``)."""
    if mw is None or math.isnan(mw):
        return "— mW"
    return f"{mw:.0f} mW"


def fmt_energy(joules: float | None) -> str:
    if joules is None or math.isnan(joules):
        return "—"
    if abs(joules) < 100:
        return f"{joules:.1f} J"
    if abs(joules) < 1000:
        return f"{joules:.0f} J"
    if abs(joules) < 1e6:
        return f"{joules / 1e3:.2f} kJ"
    return f"{joules / 1e6:.2f} MJ"


def fmt_memory(used_mb: float, total_mb: float) -> str:
    """``6.2/7.4 GB``; ``512/952 MB`` on a board with less than 1 GB."""
    if total_mb >= 1024:
        return f"{used_mb / 1024:.1f}/{total_mb / 1024:.1f} GB"
    return f"{used_mb:.0f}/{total_mb:.0f} MB"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return "--:--:--"
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}d {clock}" if days else clock


def fmt_speed(speed: float) -> str:
    return f"×{speed:g}"


# ---------------------------------------------------------------------------------------- levels


def load_level(pct: float | None, thresholds: Thresholds) -> str:
    """``ok``, ``warn`` or ``crit`` for a utilisation percentage (``ok`` when unknown)."""
    if pct is None:
        return "ok"
    if pct >= thresholds.load_crit_pct:
        return "crit"
    if pct >= thresholds.load_warn_pct:
        return "warn"
    return "ok"


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
        return float(raw) if math.isfinite(raw) else None
    if isinstance(raw, Sequence) and not isinstance(raw, str):
        typed = [p for p in raw if isinstance(p, Mapping)]
        for kind in _TRIP_PREFERENCE:
            values = [_trip_value(p.get("temp_c")) for p in typed if p.get("type") == kind]
            values = [v for v in values if v is not None]
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


# ------------------------------------------------------------------------------- bars, sparkline

_EIGHTHS = " ▏▎▍▌▋▊▉"
_SPARKS = "▁▂▃▄▅▆▇█"


def bar_parts(pct: float | None, width: int) -> tuple[str, str]:
    """(filled, empty) text of a horizontal bar in 1/8 cells; empty is shaded ``░``."""
    width = max(0, width)
    if pct is None or math.isnan(pct):
        return "", "░" * width
    eighths = round(min(max(pct, 0.0), 100.0) / 100.0 * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (_EIGHTHS[part] if part else "")
    return filled, "░" * (width - len(filled))


def sparkline(
    values: Sequence[float],
    width: int,
    low: float | None = None,
    high: float | None = None,
    min_span: float = 0.0,
) -> str:
    """Block characters for the last ``width`` values; NaN is a blank. Scale: [low, high], or the
    values' own range. A range narrower than ``min_span`` is widened around the values' middle
    (kept above ``low``), so a steady reading draws as a flat line half-way up rather than as
    full blocks (without ``min_span`` a flat series sits on the bottom row)."""
    tail = [float(v) for v in values][-width:] if width > 0 else []
    finite = [v for v in tail if not math.isnan(v)]
    if not finite:
        return " " * len(tail)
    lo = min(finite) if low is None else low
    hi = max(finite) if high is None else high
    if high is None and max(finite) - min(finite) < min_span:
        middle = (max(finite) + min(finite)) / 2
        lo = middle - min_span / 2 if low is None else max(low, middle - min_span / 2)
        hi = lo + min_span
    span = hi - lo
    chars = []
    for v in tail:
        if math.isnan(v):
            chars.append(" ")
            continue
        level = 0 if span <= 0 else int((min(max(v, lo), hi) - lo) / span * (len(_SPARKS) - 1) + 0.5)
        chars.append(_SPARKS[level])
    return "".join(chars)


# ----------------------------------------------------------------------------------- time axis

_TICK_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
                 86400)


def tick_step(span_s: float, max_ticks: int) -> int:
    """The smallest round step (s) that puts at most ``max_ticks`` ticks on a span."""
    max_ticks = max(1, max_ticks)
    for step in _TICK_STEPS_S:
        if span_s / step <= max_ticks:
            return step
    return _TICK_STEPS_S[-1] * math.ceil(span_s / (_TICK_STEPS_S[-1] * max_ticks))


def ago_label(seconds_ago: float) -> str:
    """``now``, ``-45s``, ``-2m``, ``-1m30s``, ``-1h``, ``-1h30m``."""
    s = int(round(abs(seconds_ago)))
    if s == 0:
        return "now"
    if s < 60:
        return f"-{s}s"
    if s < 3600:
        minutes, secs = divmod(s, 60)
        return f"-{minutes}m" + (f"{secs:02d}s" if secs else "")
    hours, rest = divmod(s, 3600)
    minutes = rest // 60
    return f"-{hours}h" + (f"{minutes:02d}m" if minutes else "")


def ago_ticks(span_s: float, max_ticks: int) -> tuple[list[float], list[str]]:
    """Ticks for a live axis: x = seconds relative to now (0 at the right edge)."""
    step = tick_step(span_s, max_ticks)
    xs = [-k * step for k in range(int(span_s // step) + 1)][::-1]
    return [float(x) for x in xs], [ago_label(x) for x in xs]


def clock_ticks(
    span_s: float, max_ticks: int, wall_now: float, tz: tzinfo
) -> tuple[list[float], list[str]]:
    """Ticks for a replay axis at round wall-clock times; x is still seconds relative to the
    newest sample, whose wall time is ``wall_now``."""
    step = tick_step(span_s, max_ticks)
    first_wall = wall_now - span_s
    offset = datetime.fromtimestamp(first_wall, tz).utcoffset()
    shift = 0.0 if offset is None else offset.total_seconds()
    start = math.ceil((first_wall + shift) / step) * step - shift
    xs: list[float] = []
    labels: list[str] = []
    wall = start
    while wall <= wall_now + 1e-6:
        stamp = datetime.fromtimestamp(wall, tz)
        xs.append(wall - wall_now)
        labels.append(stamp.strftime("%H:%M" if step >= 60 and stamp.second == 0 else "%H:%M:%S"))
        wall += step
    return xs, labels


def printable(text: str, limit: int | None = None) -> str:
    """Text from a log, a recording or the user, made safe to draw: control characters (escape
    sequences included) become U+FFFD; optionally cut to ``limit`` characters with an ellipsis."""
    clean = "".join(c if c.isprintable() else "\ufffd" for c in text)
    if limit is not None and len(clean) > limit:
        return clean[: max(0, limit - 1)] + "…"
    return clean


def nice_ticks(low: float, high: float, max_ticks: int) -> tuple[list[float], list[str]]:
    """Round y ticks (1, 2, 2.5, 5 x 10^n) inside [low, high], labelled without needless decimals
    (``0 340 680 1020`` rather than ``0.0 340.0 ...``)."""
    span = high - low
    if not span > 0 or max_ticks < 2:
        return [low], [f"{low:g}"]
    raw = span / (max_ticks - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else (1 if step % 1 else 0)
    return ticks, [f"{t:.{decimals}f}" for t in ticks]

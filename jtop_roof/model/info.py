"""What a source says about the stream it gives: the typed form of ``Source.describe()``.

The same facts arrive from a live board (sysfs, nvpmodel, NVML), from a recording's header, or from
the demo; panes, reports and detectors read this one frozen object instead of probing a dict. The
``header`` mapping keeps everything as the source gave it (it is what a recording stores); the
typed fields hold only values that passed their checks, so a hostile header cannot put NaN, a
string or a million hints where a number or a short list belongs.

Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jtop_roof.model.thermal import trip_points

#: Hints kept from one description (a header may hold thousands), and characters kept of each.
MAX_HINTS = 20
MAX_HINT_CHARS = 400
#: The words a ``*_source`` takes: what a number rests on (docs/report.md: "What each number rests on").
MEASURED, GIVEN, ASSUMED, INFERRED = "measured", "given", "assumed", "inferred"
#: Keys of ``max_clocks`` the panes and the roofline read.
CLOCK_KEYS = ("gpu_mhz", "emc_mhz", "cpu_mhz")


def finite_number(value: Any) -> float | None:
    """A real, finite number (bools and strings are not), else None: an integer past a float's
    range (a hostile header's 400 digits) is a bad value, not an OverflowError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _positive(value: Any, limit: float = 1e12) -> float | None:
    number = finite_number(value)
    return number if number is not None and 0 < number <= limit else None


def _text(value: Any, limit: int = 200) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value[:limit]


@dataclass(frozen=True, slots=True)
class TpcGating:
    """The GPU's TPC power-gating mask (bit set = gated) and how many TPCs it gates; the active
    count needs the module's total, which comes from the device database."""

    mask: int
    gated: int


@dataclass(frozen=True, slots=True)
class TimeBasis:
    """How a stream's samples were timed, for the report's ``source``: the interval and what gave
    it (``measured``: the stamps; ``given``: ``--interval``; ``assumed``: tegrastats' default), the
    stamps' form (``timeline.stamp_form``; None: no stamps) and their zone (``measured``: written
    in the stamps; ``given``: ``--tz``; ``assumed``: this machine's)."""

    interval_s: float
    interval_source: str
    interval_note: str | None
    stamp_format: str | None = None
    zone: str | None = None
    zone_source: str | None = None
    stamps_note: str | None = None

    def as_json(self, clock_backwards: int = 0) -> dict[str, Any]:
        """The report's ``source`` keys: ``interval_s``, ``interval_source``, ``interval_note``,
        ``stamps`` {``format``, ``zone``, ``zone_source``, ``note``}, ``clock_backwards`` (stamps
        earlier than the line before them: each placed one interval on, never reordered) and,
        where there are any, ``clock_backwards_note``."""
        out: dict[str, Any] = {
            "interval_s": self.interval_s,
            "interval_source": self.interval_source,
            "interval_note": self.interval_note,
            "stamps": {"format": self.stamp_format, "zone": self.zone, "zone_source": self.zone_source,
                       "note": self.stamps_note},
            "clock_backwards": clock_backwards,
        }
        if clock_backwards:
            out["clock_backwards_note"] = (
                f"{clock_backwards} stamp(s) earlier than the line before: the clock was set back; "
                "each such line is placed one interval after the previous, in file order")
        return out


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Identity and limits of the stream: see the module docstring. Absent facts are None."""

    source: str
    model: str | None = None
    host: str | None = None
    power_mode: str | None = None
    power_mode_id: int | None = None
    #: Maximum clocks in MHz, only keys with a usable value (``gpu_mhz``, ``emc_mhz``, ``cpu_mhz``).
    max_clocks: Mapping[str, float] = field(default_factory=dict)
    tpc_gating: TpcGating | None = None
    #: Throttling trip point per zone key (lower case, ``-thermal`` dropped), °C.
    trips_c: Mapping[str, float] = field(default_factory=dict)
    power_limit_w: float | None = None
    #: The stream's real sampling interval, when the source knows it.
    interval_ms: float | None = None
    file: str | None = None
    hints: tuple[str, ...] = ()
    #: How the stream's samples were timed (a file's interval, stamps and zone, and what gave each);
    #: None where the source does not say (a live stream is timed by this machine's clock).
    timing: TimeBasis | None = None
    #: Everything as the source described it (the recording header's payload).
    header: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], *, source: str | None = None) -> SourceInfo:
        """Check and type a description (from ``describe()`` or a recording header): bad values
        are left out, never raised. ``source`` overrides the mapping's ``source`` key."""
        clocks_raw = raw.get("max_clocks")
        clocks: dict[str, float] = {}
        if isinstance(clocks_raw, Mapping):
            for key in CLOCK_KEYS:
                value = _positive(clocks_raw.get(key), 1e6)
                if value is not None:
                    clocks[key] = value
        tpcs = raw.get("gpu_tpcs")
        gating = None
        if isinstance(tpcs, Mapping):
            mask, gated = tpcs.get("tpc_pg_mask"), tpcs.get("gated_tpcs")
            if (isinstance(mask, int) and not isinstance(mask, bool) and 0 <= mask < 1 << 64
                    and isinstance(gated, int) and not isinstance(gated, bool) and 0 <= gated <= 64):
                gating = TpcGating(mask, gated)
        hints_raw = raw.get("hints")
        if isinstance(hints_raw, str):
            hints_raw = [hints_raw]
        hints: tuple[str, ...] = ()
        if isinstance(hints_raw, (list, tuple)):
            hints = tuple(str(h)[:MAX_HINT_CHARS] for h in hints_raw[:MAX_HINTS] if isinstance(h, str))
            if len(hints_raw) > MAX_HINTS:
                hints += (f"{len(hints_raw) - MAX_HINTS} more hints not shown",)
        mode_id = raw.get("power_mode_id")
        interval = _positive(raw.get("interval_ms"), 3.6e6)
        return cls(
            source=source or _text(raw.get("source")) or "unknown",
            model=_text(raw.get("model")),
            host=_text(raw.get("host")),
            power_mode=_text(raw.get("power_mode"), 64),
            power_mode_id=mode_id if isinstance(mode_id, int) and not isinstance(mode_id, bool) else None,
            max_clocks=clocks,
            tpc_gating=gating,
            trips_c=trip_points(raw.get("thermal_trips")),
            power_limit_w=_positive(raw.get("power_limit_w"), 1e6),
            interval_ms=interval,
            file=_text(raw.get("file"), 4096),
            hints=hints,
            header=dict(raw),
        )

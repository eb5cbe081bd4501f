"""The one registry of series: key, label, unit and which thresholds judge it.

History allocates its columns from it, panes label their plots from it, and the report and the
coming exporter name their fields from it, so a series is called the same everywhere. Keys ending
in ``:`` are families with one series per core, rail or zone (``rail:VDD_IN``).

Nothing here imports Textual.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Metric:
    """One series. ``levels``: which configured thresholds colour it (``load``: the load warn/crit
    percentages, ``temp``: the temperature levels or the zone's trip point), or None."""

    key: str
    label: str
    unit: str
    levels: str | None = None

    @property
    def family(self) -> bool:
        """True for a family key (``rail:``): one series per name after the colon."""
        return self.key.endswith(":")

    def legend(self) -> str:
        """``load %``, ``clock MHz``: how a plot names it."""
        return f"{self.label} {self.unit}"


SERIES: tuple[Metric, ...] = (
    Metric("cpu_avg_load", "avg load", "%", "load"),
    Metric("gpu_load", "load", "%", "load"),
    Metric("gpu_mhz", "clock", "MHz"),
    Metric("emc_load", "EMC load", "%", "load"),
    Metric("emc_mhz", "clock", "MHz"),
    Metric("ram_used_mb", "RAM used", "MB"),
    Metric("swap_used_mb", "swap used", "MB"),
    Metric("power_mw", "power", "mW"),
    Metric("cpu_load:", "core load", "%", "load"),
    Metric("cpu_mhz:", "core clock", "MHz"),
    Metric("rail:", "rail power", "mW"),
    Metric("zone:", "temperature", "°C", "temp"),
)

_BY_KEY = {metric.key: metric for metric in SERIES}

#: The fixed series: one history column each from the start.
SCALAR_KEYS: tuple[str, ...] = tuple(m.key for m in SERIES if not m.family)


def metric(key: str) -> Metric:
    """The metric of a series key (``rail:VDD_IN`` -> the ``rail:`` family); KeyError if unknown."""
    found = _BY_KEY.get(key)
    if found is not None:
        return found
    prefix, sep, _ = key.partition(":")
    if sep:
        return _BY_KEY[prefix + ":"]
    raise KeyError(key)

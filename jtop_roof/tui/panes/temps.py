"""The temperatures pane: every zone classified against its trip point or the thresholds, led by
the zone nearest its trip (or the hottest), the measured zones plotted."""

from __future__ import annotations

from typing import Any

from jtop_roof.model.metrics import printable
from jtop_roof.model.thermal import classify_temp
from jtop_roof.tui.palette import PLOT_COLOURS
from jtop_roof.tui.panes.base import LABEL_WIDTH, NAME_CHARS, Pane, flow, window_label
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.timeplot import Axis, Series


class TempPane(Pane):
    SHORT = "Temperatures"

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._classified: tuple[View | None, list[Any]] = (None, [])

    def _readings(self, view: View) -> list[Any]:
        """Every zone classified, once per view (readout, title and plot all ask)."""
        cached_view, readings = self._classified
        if cached_view is view:
            return readings
        sample = view.sample
        readings = [] if sample is None else [
            classify_temp(zone, value, view.trips, view.thresholds) for zone, value in sample.temps_c.items()]
        self._classified = (view, readings)
        return readings

    def _plotted(self, view: View) -> list[str]:
        """Measured zones, junction temperature first, at most six."""
        readings = [r for r in self._readings(view) if r.state not in ("off", "fixed")]
        zones = [r.zone for r in readings]
        zones.sort(key=lambda z: z.lower() != "tj")
        return zones[: len(PLOT_COLOURS)]

    def _items(self, view: View, plotted: list[str]) -> list[Line]:
        items: list[Line] = []
        for reading in self._readings(view):
            name = printable(reading.zone, NAME_CHARS)
            colour = f"plot-{plotted.index(reading.zone) + 1}" if reading.zone in plotted else "label"
            if reading.state == "off":
                items.append([(f"{name} ", "label"), ("off", "off")])
            elif reading.state == "fixed":
                items.append([(f"{name} ", "label"), (f"{reading.value_c:g} fixed", "fixed")])
            else:
                items.append([(f"{name} ", colour), (f"{reading.value_c:.1f}", reading.state)])
        return items

    def _hottest_line(self, view: View) -> Line | None:
        measured = [r for r in self._readings(view) if r.state not in ("off", "fixed")]
        if not measured:
            return None
        with_trip = [r for r in measured if r.headroom_c is not None]
        if with_trip:
            worst = min(with_trip, key=lambda r: r.headroom_c)
            return [(f"{printable(worst.zone, NAME_CHARS)} ", "label"),
                    (f"{worst.value_c:.1f}°C", worst.state),
                    ("  ", None), ("headroom ", "label"), (f"{worst.headroom_c:.1f}", worst.state),
                    (" ", None), (f"to trip {worst.trip_c:g}°C", "muted")]
        hottest = max(measured, key=lambda r: r.value_c)
        # Spaces in runs of their own (see MemoryPane._memory_line): "°C" ran into the zone name.
        return [("max ", "label"), (f"{hottest.value_c:.1f}°C", hottest.state),
                (" ", None), (printable(hottest.zone, NAME_CHARS), "muted"), ("  ", None),
                (f"levels {view.thresholds.temp_warn_c:g}/{view.thresholds.temp_crit_c:g}°C", "muted")]

    def lines(self, view: View, width: int) -> list[Line]:
        items = self._items(view, self._plotted(view))
        if not items:
            return [[("no temperatures reported", "muted")]]
        head = self._hottest_line(view)
        return ([head] if head else []) + flow(items, width) + fan_lines(view)

    def compact_lines(self, view: View, width: int) -> list[Line]:
        items = self._items(view, [])
        head: Line = [("TEMP".ljust(LABEL_WIDTH), "title")]
        if not items:
            return [head + [("no temperatures reported", "muted")]]
        return flow(items, width, indent=head)[:2]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        zones = self._plotted(view)
        return [Series(f"zone:{z}", PLOT_COLOURS[i]) for i, z in enumerate(zones)], Axis(), Axis()

    def subtitle(self, view: View) -> str | None:
        return f"°C · {window_label(view.window_s)}"


def fan_lines(view: View) -> list[Line]:
    """One line of the fans (duty %, rpm where a tachometer is read); none without a fan."""
    fans = None if view.sample is None else view.sample.fans
    if not fans:
        return []
    line: Line = [("fan ", "label")]
    for name, fan in fans.items():
        speed = "—" if fan.speed_pct is None else f"{fan.speed_pct:.0f}%"
        rpm = "" if fan.rpm is None else f" {fan.rpm:.0f} rpm"
        line += [(f"{printable(name, NAME_CHARS)} ", "muted"), (speed + rpm, None), ("  ", None)]
    return [line[:-1]]

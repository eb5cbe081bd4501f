"""RoofPlot: a log-log roofline drawn with plotext on axes we transform ourselves.

plotext's own log scale breaks on redraw, so x is log10(FLOP per byte) and y log10(FLOP/s), with
ticks at whole decades labelled in plain numbers. The roof at the mode's maximum clocks is dim, the
roof at the current clocks bright (its memory slope and compute flat in their own colours), each
ridge point marked. ``points`` is the place for workload points and their labels (drawn as given).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from textual_plotext import PlotextPlot

from jtop_roof.model.metrics import fmt_si
from jtop_roof.roofline.board import RoofState
from jtop_roof.roofline.ceilings import Ceilings
from jtop_roof.tui.widgets.timeplot import MARKER, _rgb

#: x span around the ridge points: this many decades below the lower and above the higher.
DECADES_BELOW = 2.0
DECADES_ABOVE = 1.0


@dataclass(frozen=True, slots=True)
class RoofPoint:
    """A workload on the roof: FLOP per byte, FLOP/s achieved, and its label."""

    intensity: float
    flops_per_s: float
    label: str


class RoofPlot(PlotextPlot):
    """The roofline of one precision; ``draw`` replaces its contents and repaints."""

    DEFAULT_CSS = """
    RoofPlot {
        height: 1fr;
        min-height: 5;
    }
    """

    def draw(self, state: RoofState, points: Sequence[RoofPoint] = ()) -> None:
        plt = self.plt
        plt.clear_figure()
        precision = state.precision
        roofs = [roof for roof in (state.maximum, state.current) if roof is not None]
        if precision is None or not roofs or any(precision not in r.peak_flops_per_s for r in roofs):
            self.refresh()
            return
        ridges = [r.ridge_flop_per_byte[precision] for r in roofs]
        x_lo = math.log10(min(ridges)) - DECADES_BELOW
        x_hi = math.log10(max(ridges)) + DECADES_ABOVE
        shown = [p for p in points if p.intensity > 0 and p.flops_per_s > 0]
        for point in shown:  # a point far off the ridge still lies inside the axes
            x_lo = min(x_lo, math.log10(point.intensity) - 0.3)
            x_hi = max(x_hi, math.log10(point.intensity) + 0.3)
        peak = max(r.peak_flops_per_s[precision] for r in roofs)
        floor = min(r.bandwidth_bytes_per_s for r in roofs) * 10**x_lo
        floor = min([floor, *(p.flops_per_s / 2 for p in shown)])
        y_lo, y_hi = math.log10(floor), math.log10(peak) + 0.3
        variables = self.app.theme_variables
        if state.maximum is not None:
            _roof(plt, state.maximum, precision, x_lo, x_hi, _rgb(variables.get("roof-max")), None)
        if state.measured is not None:  # labelled as measured, beside the datasheet's
            _roof(plt, state.measured, precision, x_lo, x_hi, _rgb(variables.get("plot-4")), None)
            plt.text("measured", x_hi, math.log10(state.measured.peak_flops_per_s[precision]),
                     color=_rgb(variables.get("plot-4")), alignment="right")
        if state.current is not None:
            _roof(plt, state.current, precision, x_lo, x_hi, _rgb(variables.get("roof-memory")),
                  _rgb(variables.get("roof-compute")))
        for point in shown:
            x, y = math.log10(point.intensity), math.log10(point.flops_per_s)
            plt.scatter([x], [y], marker="●", color=_rgb(variables.get("plot-3")))
            column = (x_hi - x_lo) / max(20, self.size.width)
            if x < x_lo + 0.6 * (x_hi - x_lo):  # the label beside the dot, on the side with room
                plt.text(point.label, x + column, y, color=_rgb(variables.get("plot-3")), alignment="left")
            else:
                plt.text(point.label, x - column, y, color=_rgb(variables.get("plot-3")), alignment="right")
        plt.xlim(x_lo, x_hi)
        plt.ylim(y_lo, y_hi)
        plt.xticks(*_decades(x_lo, x_hi, fmt_si))
        plt.yticks(*_decades(y_lo, y_hi, fmt_si))
        plt.xlabel("FLOP/byte")
        self.refresh()


def _roof(plt: Any, roof: Ceilings, precision: str, x_lo: float, x_hi: float,
          slope: tuple[int, int, int] | None, flat: tuple[int, int, int] | None) -> None:
    """One roof: the memory slope up to the ridge, then the compute flat, and the ridge marked."""
    bandwidth, peak = roof.bandwidth_bytes_per_s, roof.peak_flops_per_s[precision]
    ridge = math.log10(roof.ridge_flop_per_byte[precision])
    top = math.log10(peak)
    plt.plot([x_lo, ridge], [math.log10(bandwidth) + x_lo, top], marker=MARKER, color=slope)
    plt.plot([ridge, x_hi], [top, top], marker=MARKER, color=flat or slope)
    plt.scatter([ridge], [top], marker="◆", color=flat or slope)


def _decades(low: float, high: float, label: Callable[[float], str]) -> tuple[list[float], list[str]]:
    """Ticks at whole powers of ten inside [low, high], labelled 0.1 1 10 100 1k... or 1G 10G..."""
    first, last = math.ceil(low - 1e-9), math.floor(high + 1e-9)
    return [float(k) for k in range(first, last + 1)], [label(10.0**k) for k in range(first, last + 1)]

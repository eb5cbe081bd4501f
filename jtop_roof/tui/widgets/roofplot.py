"""RoofPlot: a log-log roofline drawn as a ``chart.Chart`` on axes we transform ourselves.

x is log10(FLOP per byte) and y log10(FLOP/s), with ticks at whole decades labelled in plain
numbers. The roof at the mode's maximum clocks is dim, the
roof at the current clocks bright (its memory slope and compute flat in their own colours), each
ridge point marked. ``points`` is the place for workload points and their labels; a point with no
finite positive place is left out, and one more than ``POINT_REACH`` decades off the axes' ridge
span is drawn at that reach (its label still names it), so valid but extreme work cannot stretch the
axes past what a float holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jtop_roof.model.metrics import fmt_si
from jtop_roof.roofline.board import RoofState
from jtop_roof.roofline.ceilings import Ceilings
from jtop_roof.roofline.devices import rate_word
from jtop_roof.tui.widgets.chart import Chart, Label, Line, Rgb
from jtop_roof.tui.widgets.chartview import ChartView
from jtop_roof.tui.widgets.timeplot import _rgb

#: x span around the ridge points: this many decades below the lower and above the higher.
DECADES_BELOW = 2.0
DECADES_ABOVE = 1.0
#: How far (decades) beyond the ridge span's axes a point may pull them.
POINT_REACH = 6.0


@dataclass(frozen=True, slots=True)
class RoofPoint:
    """A workload on the roof: FLOP per byte, FLOP/s achieved, and its label."""

    intensity: float
    flops_per_s: float
    label: str


class RoofPlot(ChartView):
    """The roofline of one precision; ``draw`` replaces its contents and repaints."""

    DEFAULT_CSS = """
    RoofPlot {
        height: 1fr;
        min-height: 5;
    }
    """

    def draw(self, state: RoofState, points: Sequence[RoofPoint] = ()) -> None:
        precision = state.precision
        roofs = [roof for roof in (state.maximum, state.current) if roof is not None]
        if precision is None or not roofs or any(precision not in r.peak_flops_per_s for r in roofs):
            self._show(None)
            return
        ridges = [r.ridge_flop_per_byte[precision] for r in roofs]
        x_lo = math.log10(min(ridges)) - DECADES_BELOW
        x_hi = math.log10(max(ridges)) + DECADES_ABOVE
        y_hi = math.log10(max(r.peak_flops_per_s[precision] for r in roofs)) + 0.3
        slope_lo = math.log10(min(r.bandwidth_bytes_per_s for r in roofs))  # the slope at x = 0
        shown = _placed(points, (x_lo, x_hi), (slope_lo + x_lo, y_hi))
        for x, _, _ in shown:  # a point far off the ridge still lies inside the axes
            x_lo, x_hi = min(x_lo, x - 0.3), max(x_hi, x + 0.3)
        y_lo = min([slope_lo + x_lo, *(y - math.log10(2) for _, y, _ in shown)])
        variables = self.app.theme_variables
        lines: list[Line] = []
        labels: list[Label] = []
        if state.maximum is not None:
            lines += _roof(state.maximum, precision, x_lo, x_hi, _rgb(variables.get("roof-max")), None)
        if state.measured is not None:  # labelled as measured, beside the datasheet's
            measured = _rgb(variables.get("plot-4"))
            lines += _roof(state.measured, precision, x_lo, x_hi, measured, None)
            labels.append(Label(x_hi, math.log10(state.measured.peak_flops_per_s[precision]), "measured",
                                measured, align="right"))
        if state.current is not None:
            lines += _roof(state.current, precision, x_lo, x_hi, _rgb(variables.get("roof-memory")),
                           _rgb(variables.get("roof-compute")))
        point_colour = _rgb(variables.get("plot-3"))
        left_ticks = _decades(y_lo, y_hi, fmt_si)
        # 1.2 of the plot area's cells (the frame and the y labels take the rest): the label
        # starts (or ends) one cell off its dot, never on it.
        area_cells = self.cells.width - max((len(text) for text in left_ticks[1]), default=0) - 3
        offset = 1.2 * (x_hi - x_lo) / max(1, area_cells)
        for x, y, label in shown:
            lines.append(Line([x], [y], point_colour, marker="●"))
            if x < x_lo + 0.6 * (x_hi - x_lo):  # the label beside the dot, on the side with room
                labels.append(Label(x + offset, y, label, point_colour))
            else:
                labels.append(Label(x - offset, y, label, point_colour, align="right"))
        word = rate_word(precision)
        self._show(Chart(
            x_range=(x_lo, x_hi),
            left_range=(y_lo, y_hi),
            left_ticks=left_ticks,
            x_ticks=_decades(x_lo, x_hi, fmt_si),
            lines=lines,
            labels=labels,
            x_label=f"x: {word}/byte   y: {word}/s",
            ink=_rgb(variables.get("foreground")),
            canvas=_rgb(variables.get("surface")),
        ))


def _placed(points: Sequence[RoofPoint], x_span: tuple[float, float],
            y_span: tuple[float, float]) -> list[tuple[float, float, str]]:
    """(log10 intensity, log10 FLOP/s, label) of the points with a finite positive place, each
    within ``POINT_REACH`` decades of the spans (see the module docstring)."""
    def reach(value: float, span: tuple[float, float]) -> float:
        return min(max(math.log10(value), span[0] - POINT_REACH), span[1] + POINT_REACH)

    return [(reach(p.intensity, x_span), reach(p.flops_per_s, y_span), p.label) for p in points
            if 0 < p.intensity < math.inf and 0 < p.flops_per_s < math.inf]


def _roof(roof: Ceilings, precision: str, x_lo: float, x_hi: float, slope: Rgb, flat: Rgb) -> list[Line]:
    """One roof: the memory slope up to the ridge, then the compute flat, and the ridge marked."""
    bandwidth, peak = roof.bandwidth_bytes_per_s, roof.peak_flops_per_s[precision]
    ridge = math.log10(roof.ridge_flop_per_byte[precision])
    top = math.log10(peak)
    return [Line([x_lo, ridge], [math.log10(bandwidth) + x_lo, top], slope),
            Line([ridge, x_hi], [top, top], flat or slope),
            Line([ridge], [top], flat or slope, marker="◆")]


def _decades(low: float, high: float, label: Callable[[float], str]) -> tuple[list[float], list[str]]:
    """Ticks at whole powers of ten inside [low, high], labelled 0.1 1 10 100 1k... or 1G 10G..."""
    first, last = math.ceil(low - 1e-9), math.floor(high + 1e-9)
    return [float(k) for k in range(first, last + 1)], [label(10.0**k) for k in range(first, last + 1)]

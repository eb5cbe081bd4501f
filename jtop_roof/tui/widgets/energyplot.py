"""EnergyPlot: the energy roofline, J per operation against operational intensity, log-log.

One line per calibrated power mode (``roofline.energy``), each evaluated on a log grid, each mode in
its own plot colour (``mode_style``: the pane's legend uses the same); the mode the stream is in is
drawn over the others and named at its right end; the shown phase's
measured J/op at its intensity a dot (``plot-3``). The x axis spans a decade either side of the
modes' ridges. Where no mode has a line nothing is drawn (the pane says why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jtop_roof.model.metrics import fmt_si, printable
from jtop_roof.roofline.devices import rate_word
from jtop_roof.roofline.energy import EnergyRoof, joules_text, sample_intensities
from jtop_roof.tui.widgets.chart import Chart, Label, Line
from jtop_roof.tui.widgets.chartview import ChartView
from jtop_roof.tui.widgets.roofplot import DECADES_ABOVE, POINT_REACH, _decades
from jtop_roof.tui.widgets.timeplot import _rgb

#: Points per line: a log grid fine enough that the bend at the ridge reads as a curve.
SAMPLES = 96
#: Decades of intensity shown below the lowest ridge (above the highest: ``DECADES_ABOVE``).
ENERGY_DECADES_BELOW = 1.0
#: The colours of the modes not current, by their place in the device's list (plot-3 is the point).
MODE_STYLES = ("plot-1", "plot-2", "plot-4", "plot-5", "plot-6")


def mode_style(index: int) -> str:
    """The theme variable (and readout style) of the ``index``-th mode of the device."""
    return MODE_STYLES[index % len(MODE_STYLES)]


@dataclass(frozen=True, slots=True)
class EnergyPoint:
    """The workload on the energy roof: its intensity, its measured J/op and its label."""

    intensity: float
    j_per_op: float
    label: str


class EnergyPlot(ChartView):
    """The energy roofline of one precision; ``draw`` replaces its contents and repaints."""

    DEFAULT_CSS = """
    EnergyPlot {
        height: 1fr;
        min-height: 5;
    }
    """

    def draw(self, roof: EnergyRoof, point: EnergyPoint | None = None) -> None:
        lines = roof.lines
        if not lines or roof.precision is None:
            self._show(None)
            return
        ridges = [line.peak_ops_per_s / line.bandwidth_bytes_per_s for line in lines]
        x_lo = math.log10(min(ridges)) - ENERGY_DECADES_BELOW
        x_hi = math.log10(max(ridges)) + DECADES_ABOVE
        placed = None
        if point is not None and 0 < point.intensity < math.inf and 0 < point.j_per_op < math.inf:
            x = min(max(math.log10(point.intensity), x_lo - POINT_REACH), x_hi + POINT_REACH)
            x_lo, x_hi = min(x_lo, x - 0.3), max(x_hi, x + 0.3)
            placed = (x, math.log10(point.j_per_op), point.label)
        grid = sample_intensities(10**x_lo, 10**x_hi, SAMPLES)
        variables = self.app.theme_variables
        curves: list[tuple[list[float], list[float], bool, str, str]] = []
        for index, mode in enumerate(roof.modes):
            line = mode.line
            if line is None:
                continue
            pairs = [(math.log10(i), math.log10(cost)) for i in grid
                     if 0 < (cost := line.j_per_op(i)) < math.inf]
            if pairs:
                curves.append(([x for x, _ in pairs], [y for _, y in pairs],
                               line.power_mode == roof.current_mode, line.power_mode, mode_style(index)))
        ys = [y for _, curve_ys, _, _, _ in curves for y in curve_ys] + ([placed[1]] if placed else [])
        if not ys:
            self._show(None)
            return
        y_lo, y_hi = min(ys) - 0.2, max(ys) + 0.3
        chart_lines: list[Line] = []
        labels: list[Label] = []
        for xs, curve_ys, current, name, style in sorted(curves, key=lambda c: c[2]):  # the current on top
            colour = _rgb(variables.get(style))
            chart_lines.append(Line(xs, curve_ys, colour))
            if current:
                labels.append(Label(x_hi, curve_ys[-1], printable(name, 16), colour, align="right"))
        if placed is not None:
            colour = _rgb(variables.get("plot-3"))
            chart_lines.append(Line([placed[0]], [placed[1]], colour, marker="●"))
            offset = 0.02 * (x_hi - x_lo)
            if placed[0] < x_lo + 0.6 * (x_hi - x_lo):
                labels.append(Label(placed[0] + offset, placed[1], placed[2], colour))
            else:
                labels.append(Label(placed[0] - offset, placed[1], placed[2], colour, align="right"))
        word = rate_word(roof.precision)
        self._show(Chart(
            x_range=(x_lo, x_hi),
            left_range=(y_lo, y_hi),
            left_ticks=_decades(y_lo, y_hi, lambda v: joules_text(v, "").replace(" ", "")),
            x_ticks=_decades(x_lo, x_hi, fmt_si),
            lines=chart_lines,
            labels=labels,
            x_label=f"x: {word}/byte   y: J/{word}",
            ink=_rgb(variables.get("foreground")),
            canvas=_rgb(variables.get("surface")),
        ))

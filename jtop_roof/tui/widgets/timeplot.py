"""TimePlot: a chart of history series against a labelled time axis (``chart.render_chart``).

x is seconds relative to the newest sample (0 = the right edge). The axis is labelled in seconds
ago (live) or in wall-clock time (replay, when the log has stamps). Data is averaged down to about
one point per column when the plot is drawn, so any window (30 s ... all of history) costs the same
to draw. Phase boundaries are vertical lines labelled with the phase name.

"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo

import numpy as np
from textual.color import Color, ColorParseError

from jtop_roof.analysis.history import History, PhaseMark
from jtop_roof.model.metrics import ago_ticks, clock_ticks, nice_ticks, printable
from jtop_roof.tui.widgets.chart import Chart, Label, Line, Rgb
from jtop_roof.tui.widgets.chartview import ChartView

#: Characters of a phase label drawn on a plot.
PHASE_LABEL_CHARS = 12
#: A step between points this many times the typical one is a hole in the data.
GAP_FACTOR = 3.0


@dataclass(frozen=True)
class Series:
    """One line: a history key, the theme variable of its colour, a scale (mW -> W), its y axis."""

    key: str
    colour: str
    scale: float = 1.0
    right: bool = False


@dataclass(frozen=True)
class Axis:
    """y limits; None = from the data (with a little room), but never below ``min_high`` (a clock
    that sits at 0 MHz still gets a 0-100 axis, not fractions of a MHz)."""

    low: float | None = None
    high: float | None = None
    min_high: float | None = None


class TimePlot(ChartView):
    """A time-series plot fed from ``History``; ``draw`` replaces its contents and repaints."""

    DEFAULT_CSS = """
    TimePlot {
        height: 1fr;
        min-height: 4;
    }
    """

    def draw(
        self,
        history: History,
        series: list[Series],
        *,
        window_s: float | None,
        tz: tzinfo,
        wall_axis: bool,
        left: Axis = Axis(),
        right: Axis = Axis(),
        bands: Sequence[tuple[float, float]] = (),
    ) -> None:
        """``bands``: (start, end) stream times of clock events, drawn as a bar along the top."""
        width = max(10, self.size.width)
        t_to = history.last_t_mono
        if t_to is None:
            self._show(None)
            return
        oldest = history.times(0, 1)
        span = window_s if window_s is not None else max(t_to - float(oldest[0]), 1.0)
        span = max(span, 1e-3)
        t_from = t_to - span
        buckets = max(8, width - 6)
        variables = self.app.theme_variables
        lines: list[Line] = []
        data: dict[bool, list[float]] = {False: [], True: []}
        for item in series:
            times, values = history.series(item.key, t_from, t_to, buckets)
            if not len(times):
                continue
            xs = times - t_to
            ys = values * item.scale
            colour = _rgb(variables.get(item.colour))
            for seg_x, seg_y in _segments(xs, ys):
                lines.append(Line(seg_x, seg_y, colour, right=item.right))
                data[item.right].extend(seg_y)
        max_y_ticks = max(2, min(5, self.size.height // 2))
        low, high = _limits(data[False], left)
        right_range = right_ticks = None
        if data[True]:
            right_range = _limits(data[True], right)
            right_ticks = nice_ticks(*right_range, max_y_ticks)
        max_ticks = max(2, width // 11)
        wall_now = history.last_t_wall if wall_axis else None
        if wall_now is not None:
            x_ticks = clock_ticks(span, max_ticks, wall_now, tz)
        else:
            x_ticks = ago_ticks(span, max_ticks)
        marks = history.markers_between(t_from, t_to)
        columns_per_s = max(1, width - 10) / span
        phase_colour = _rgb(variables.get("phase-marker"))
        phase_labels = _phase_labels(marks, t_to, columns_per_s)
        self._show(Chart(
            x_range=(-span, 0.0),
            left_range=(low, high),
            left_ticks=nice_ticks(low, high, max_y_ticks),
            x_ticks=x_ticks,
            lines=lines,
            right_range=right_range,
            right_ticks=right_ticks,
            bands=[(max(start, t_from) - t_to, min(end, t_to) - t_to) for start, end in bands
                   if end >= t_from and start <= t_to],
            band_colour=_rgb(variables.get("throttle-band")),
            vlines=[mark.t_mono - t_to for mark in marks],
            marker_colour=phase_colour,
            labels=[Label(x, high, text, phase_colour) for x, text in phase_labels],
            ink=_rgb(variables.get("foreground")),
            canvas=_rgb(variables.get("surface")),
        ))

def _phase_labels(marks: list[PhaseMark], t_to: float, columns_per_s: float) -> list[tuple[float, str]]:
    """Names of phase starts, each cut to the room before the next boundary (or the right edge),
    so close boundaries never print over each other; a name with no room is left out."""
    out = []
    for index, mark in enumerate(marks):
        if mark.kind != "phase_start":
            continue
        end = marks[index + 1].t_mono if index + 1 < len(marks) else t_to
        room = min(PHASE_LABEL_CHARS, int((end - mark.t_mono) * columns_per_s) - 1)
        if room >= 2:
            out.append((mark.t_mono - t_to, printable(mark.name or "phase", room)))
    return out


def _segments(xs: np.ndarray, ys: np.ndarray) -> list[tuple[list[float], list[float]]]:
    """Runs of points to join with lines. A missing reading (NaN) or a hole in time (a step more
    than GAP_FACTOR times the typical one: a gap, a restart) breaks the line instead of bridging it."""
    finite = np.isfinite(ys)
    breaks = ~finite
    if len(xs) > 2:
        steps = np.diff(xs)
        typical = float(np.median(steps))
        if typical > 0:
            breaks[1:] |= steps > GAP_FACTOR * typical
    out = []
    start = None
    for i in range(len(xs)):
        if start is not None and breaks[i]:
            out.append((xs[start:i].tolist(), ys[start:i].tolist()))
            start = None
        if start is None and finite[i]:
            start = i
    if start is not None:
        out.append((xs[start:].tolist(), ys[start:].tolist()))
    return out


def _limits(values: list[float], axis: Axis) -> tuple[float, float]:
    if values:
        lo_data, hi_data = min(values), max(values)
    else:
        lo_data, hi_data = 0.0, 1.0
    pad = max((hi_data - lo_data) * 0.1, 1.0)
    low = axis.low if axis.low is not None else math.floor(lo_data - pad)
    high = axis.high if axis.high is not None else math.ceil(hi_data + pad)
    if axis.min_high is not None:
        high = max(high, axis.min_high)
    if high <= low:
        high = low + 1.0
    return float(low), float(high)


def _rgb(value: str | None) -> Rgb:
    if value is None:
        return None
    try:
        return Color.parse(value).rgb
    except ColorParseError:
        return None

"""TimePlot: a chart of history series against a labelled time axis (``chart.render_chart``).

x is seconds relative to the newest sample (0 = the right edge). The axis is labelled in seconds
ago (live) or in wall-clock time (replay, when the log has stamps). Data is averaged down to about
one point per column when the plot is drawn, so any window (30 s ... all of history) costs the same
to draw. Phase boundaries are vertical lines labelled with the phase name.

"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
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

    def _sized(self, chart: Chart, height: int) -> Chart:
        """The y ticks for ``height`` rows: as many as fit two rows apart, at most five."""
        count = max(2, min(5, height // 2))
        right = None if chart.right_range is None else _scale_ticks(chart.right_range, count)
        return replace(chart, left_ticks=_scale_ticks(chart.left_range, count), right_ticks=right)

    def points(self) -> int:
        """How many points a drawing averages the window down to: about one per column of its
        plot area (so the window moving on by one point is the least that can change it)."""
        return max(8, max(10, self.cells.width) - 6)

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
        width = max(10, self.cells.width)
        t_to = history.last_t_mono
        if t_to is None:
            self._show(None)
            return
        oldest = history.times(0, 1)
        span = window_s if window_s is not None else max(t_to - float(oldest[0]), 1.0)
        span = max(span, 1e-3)
        t_from = t_to - span
        buckets = self.points()
        variables = self.app.theme_variables
        lines: list[Line] = []
        data: dict[bool, list[np.ndarray]] = {False: [], True: []}
        max_step: tuple[np.ndarray, float | None] | None = None  # the series share their times
        for item in series:
            times, values = history.series(item.key, t_from, t_to, buckets)
            if not len(times):
                continue
            xs = times - t_to
            ys = values * item.scale
            if max_step is None or not np.array_equal(max_step[0], xs):
                max_step = (xs, _max_step(xs))
            colour = _rgb(variables.get(item.colour))
            for seg_x, seg_y in _segments(xs, ys, max_step[1]):
                lines.append(Line(seg_x, seg_y, colour, right=item.right))
                data[item.right].append(seg_y)
        low, high = _limits(data[False], left)
        right_range = _limits(data[True], right) if data[True] else None
        max_ticks = max(2, width // 11)
        wall_now = history.last_t_wall if wall_axis else None
        if wall_now is not None:
            x_ticks = clock_ticks(span, max_ticks, wall_now, tz)
        else:
            x_ticks = ago_ticks(span, max_ticks)
        marks = history.markers_between(t_from, t_to)
        columns_per_s = max(1, width - 10) / span
        phase_colour = _rgb(variables.get("phase-marker"))
        phase_labels, phase_legend = _phase_labels(marks, t_to, columns_per_s, width)
        self._show(Chart(
            x_range=(-span, 0.0),
            left_range=(low, high),
            left_ticks=((), ()),  # at the height it is laid out at: ``_sized``
            x_ticks=x_ticks,
            lines=lines,
            right_range=right_range,
            bands=[(max(start, t_from) - t_to, min(end, t_to) - t_to) for start, end in bands
                   if end >= t_from and start <= t_to],
            band_colour=_rgb(variables.get("throttle-band")),
            vlines=[mark.t_mono - t_to for mark in marks],
            marker_colour=phase_colour,
            labels=[Label(x, high, text, phase_colour) for x, text in phase_labels],
            x_label=phase_legend,
            ink=_rgb(variables.get("foreground")),
            canvas=_rgb(variables.get("surface")),
        ))

def _phase_labels(marks: list[PhaseMark], t_to: float, columns_per_s: float,
                  width: int = 80) -> tuple[list[tuple[float, str]], str | None]:
    """Names of phase starts, each in the room before the next boundary (or the right edge), so
    close boundaries never print over each other. Where a name does not fit whole, the phases
    are numbered on the plot instead and named in a legend under it, ``width`` cells at most, each
    name cut to its share (returned, else None)."""
    starts = []
    for index, mark in enumerate(marks):
        if mark.kind != "phase_start":
            continue
        end = marks[index + 1].t_mono if index + 1 < len(marks) else t_to
        room = int((end - mark.t_mono) * columns_per_s) - 1
        starts.append((mark.t_mono - t_to, mark.name or "phase", room))
    if all(room >= len(printable(name, PHASE_LABEL_CHARS)) for _, name, room in starts):
        return [(x, printable(name, PHASE_LABEL_CHARS)) for x, name, _ in starts], None
    numbered = [(x, str(number)) for number, (x, _, _) in enumerate(starts, 1)]
    names = [printable(name) for _, name, _ in starts]
    room = width - len("phases:") - len(starts) * len(f"  {len(starts)} ")
    share = room // len(names)
    short = [len(name) for name in names if len(name) <= share]  # these leave their rest to others
    if len(short) < len(names):
        share = (room - sum(short)) // (len(names) - len(short))
    legend = "  ".join(f"{number} {_middle_cut(name, max(3, min(24, share)))}"
                       for number, name in enumerate(names, 1))
    return numbered, f"phases: {legend}"


def _middle_cut(name: str, cells: int) -> str:
    """``name`` in ``cells``, cut in the middle: names of a series differ at their ends
    (resnet50-int8, resnet50-fp16 -> "res…int8", "res…fp16")."""
    if len(name) <= cells:
        return name
    tail = (cells - 1) // 2
    return name[: cells - 1 - tail] + "…" + name[len(name) - tail:] if tail else name[: cells - 1] + "…"


def _segments(xs: np.ndarray, ys: np.ndarray, max_step: float | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Runs of points to join with lines. A missing reading (NaN) or a hole in time (a step
    longer than ``max_step``: a gap, a restart) breaks the line instead of bridging it."""
    finite = np.isfinite(ys)
    starts = finite.copy()  # a point that begins a run: after a missing reading or a hole
    ends = finite.copy()  # a point that ends one: before a missing reading or a hole
    if len(xs) > 1:
        broken = ~finite[:-1]
        if max_step is not None:
            broken |= np.diff(xs) > max_step
        starts[1:] &= broken
        ends[:-1] &= broken | ~finite[1:]
    firsts, lasts = np.flatnonzero(starts).tolist(), np.flatnonzero(ends).tolist()
    return [(xs[first:last + 1], ys[first:last + 1]) for first, last in zip(firsts, lasts, strict=True)]


def _max_step(xs: np.ndarray) -> float | None:
    """The longest step between points that is not a hole: GAP_FACTOR times the typical one."""
    if len(xs) <= 2:
        return None
    typical = float(np.median(np.diff(xs)))
    return GAP_FACTOR * typical if typical > 0 else None


def _limits(values: list[np.ndarray], axis: Axis) -> tuple[float, float]:
    if values:
        lo_data = min(float(v.min()) for v in values)
        hi_data = max(float(v.max()) for v in values)
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


def _scale_ticks(y_range: tuple[float, float], count: int) -> tuple[list[float], list[str]]:
    """Round ticks over ``y_range``; where fewer than two of them fall inside it (a short plot
    over a narrow range: 37-49 °C has only 40), its two ends, so that the axis always shows its
    scale."""
    low, high = y_range
    values, labels = nice_ticks(low, high, count)
    if sum(low <= value <= high for value in values) >= 2 or not high > low:
        return values, labels
    return [low, high], [f"{low:.3g}", f"{high:.3g}"]

"""TimePlot: a chart of history series against a labelled time axis (``chart.render_chart``).

x is seconds relative to the newest sample (0 = the right edge). The axis is labelled in seconds
ago (live) or in wall-clock time (replay, when the log has stamps). Data is averaged down to about
one point per column when the plot is drawn, so any window (30 s ... all of history) costs the same
to draw. Phase boundaries are vertical lines labelled with the phase name.

"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import tzinfo
from typing import TypeVar

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
#: A series' times or values: lists where a plot draws them, arrays where a test gives them.
SeriesT = TypeVar("SeriesT", list[float], np.ndarray)


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
        """The y ticks for ``height`` rows: as many as fit two rows apart, at most five (``chart``
        itself where ``draw`` gave it those)."""
        left, right = _y_ticks(chart.left_range, chart.right_range, height)
        if left is chart.left_ticks and right is chart.right_ticks:
            return chart
        return replace(chart, left_ticks=left, right_ticks=right)

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
        span = window_s if window_s is not None else max(t_to - float(history.times(0, 1)[0]), 1.0)
        span = max(span, 1e-3)
        t_from = t_to - span
        buckets = self.points()
        variables = self.app.theme_variables
        # one query for all the lines (they share their times), then Python lists: a plot's few
        # hundred points cost less so than numpy's cost per call, in a drawing that runs cold
        times, values = history.series_block([item.key for item in series], t_from, t_to, buckets)
        xs = (times - t_to).tolist()
        max_step = _max_step(xs)
        lines: list[Line] = []
        data: dict[bool, list[list[float]]] = {False: [], True: []}
        for item, row in zip(series, values.tolist(), strict=True):
            ys = row if item.scale == 1.0 else [value * item.scale for value in row]
            colour = _rgb(variables.get(item.colour))
            for seg_x, seg_y in _segments(xs, ys, max_step):
                lines.append(Line(seg_x, seg_y, colour, right=item.right))
                data[item.right].append(seg_y)
        low, high = _limits(data[False], left)
        right_range = _limits(data[True], right) if data[True] else None
        max_ticks = max(2, width // 11)
        wall_now = history.last_t_wall if wall_axis else None
        if wall_now is not None:
            x_ticks = clock_ticks(span, max_ticks, wall_now, tz)
        else:
            x_ticks = _ago_ticks(span, max_ticks)
        marks = history.markers_between(t_from, t_to)
        columns_per_s = max(1, width - 10) / span
        phase_colour = _rgb(variables.get("phase-marker"))
        phase_labels, phase_legend = _phase_labels(marks, t_to, columns_per_s, width)
        left_ticks, right_ticks = _y_ticks((low, high), right_range, self.cells.height)
        self._show(Chart(
            x_range=(-span, 0.0),
            left_range=(low, high),
            left_ticks=left_ticks,  # for this height; another one's: ``_sized``
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


def _segments(xs: SeriesT, ys: SeriesT, max_step: float | None) -> list[tuple[SeriesT, SeriesT]]:
    """Runs of points to join with lines. A missing reading (NaN) or a hole in time (a step
    longer than ``max_step``: a gap, a restart) breaks the line instead of bridging it."""
    runs = []
    first = -1  # where the run in progress began
    previous = math.nan
    index = -1
    for index, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if y - y != 0:  # NaN or infinite: no reading
            if first >= 0:
                runs.append((first, index - 1))
                first = -1
        elif first < 0:
            first = index
        elif max_step is not None and x - previous > max_step:
            runs.append((first, index - 1))
            first = index
        previous = x
    if first >= 0:
        runs.append((first, index))
    return [(xs[start:end + 1], ys[start:end + 1]) for start, end in runs]


def _max_step(xs: Sequence[float]) -> float | None:
    """The longest step between points that is not a hole: GAP_FACTOR times the typical one (the
    median step, worked out as np.median does)."""
    if len(xs) <= 2:
        return None
    steps = sorted(after - before for before, after in zip(xs, xs[1:], strict=False))
    if any(step != step for step in steps):
        return None  # a NaN step: np.median's NaN
    middle = len(steps) // 2
    typical = float(steps[middle] if len(steps) % 2 else (steps[middle - 1] + steps[middle]) / 2)
    return GAP_FACTOR * typical if typical > 0 else None


def _limits(values: list[list[float]], axis: Axis) -> tuple[float, float]:
    if values:
        lo_data = min(min(v) for v in values)
        hi_data = max(max(v) for v in values)
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


@functools.lru_cache(maxsize=64)
def _rgb(value: str | None) -> Rgb:
    if value is None:
        return None
    try:
        return Color.parse(value).rgb
    except ColorParseError:
        return None


def _y_ticks(left_range: tuple[float, float], right_range: tuple[float, float] | None,
             height: int) -> tuple[tuple[list[float], list[str]], tuple[list[float], list[str]] | None]:
    """The left and right axes' ticks for a plot ``height`` rows tall: as many as fit two rows
    apart, at most five."""
    count = max(2, min(5, height // 2))
    return (_scale_ticks(left_range, count),
            None if right_range is None else _scale_ticks(right_range, count))


#: Ticks of a live axis, kept: a plot asks for the same ones at every drawing (shared: not to be
#: changed).
_ago_ticks = functools.lru_cache(maxsize=32)(ago_ticks)


@functools.lru_cache(maxsize=64)
def _scale_ticks(y_range: tuple[float, float], count: int) -> tuple[list[float], list[str]]:
    """Round ticks over ``y_range``; where fewer than two of them fall inside it (a short plot
    over a narrow range: 37-49 °C has only 40), its two ends, so that the axis always shows its
    scale. Kept: most drawings ask for the ones the last asked for (shared: not to be changed)."""
    low, high = y_range
    values, labels = nice_ticks(low, high, count)
    if sum(low <= value <= high for value in values) >= 2 or not high > low:
        return values, labels
    return [low, high], [f"{low:.3g}", f"{high:.3g}"]

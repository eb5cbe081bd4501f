"""A time chart laid out as runs of text per screen row, without a plotting library.

The monitor redraws its plots about once a second; plotext built a full cell matrix (and a figure
object) per drawing, which cost more than everything else the monitor does. Here a chart is a
``Chart`` (what to draw, in data units) turned into rows of ``(text, colour)`` runs for a size:
lines become 2x2 quadrant-block dots (numpy does the per-point work, or Python for a small plot's
few points), and only the cells that hold something are visited, so a drawing costs about as much
as the points it shows. The look is plotext's: a frame with ticks, y labels left (and right, for a
second axis), time labels below, phase boundaries as vertical lines with their names along the top,
clock events as a bar.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

#: Lines of at most this many points, joined by at most this many dots, are drawn in Python
#: (``_Area.dots``), more by numpy: measured in a drawing every few seconds (which runs cold),
#: Python costs less up to ~60 points, numpy from ~120 (a 120x40 screen's temperatures).
PYTHON_POINTS, PYTHON_DOTS = 64, 600
#: Quadrant blocks by dot bits: 1 upper left, 2 upper right, 4 lower left, 8 lower right.
QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"
#: An RGB colour; None: the terminal's default.
Rgb = tuple[int, int, int] | None
#: One run of a row: its text, its foreground and its background.
Run = tuple[str, Rgb, Rgb]


@dataclass(frozen=True)
class Line:
    """(x, y) points in the chart's units: a polyline of quadrant dots, or with ``marker`` one
    character per point (a scatter)."""

    xs: Sequence[float] | npt.NDArray[np.float64]
    ys: Sequence[float] | npt.NDArray[np.float64]
    colour: Rgb
    right: bool = False
    marker: str | None = None


@dataclass(frozen=True)
class Label:
    """Text at (x, y) on the left axis's scale, starting there (``left``), ending there
    (``right``); cut at the plot area's edges."""

    x: float
    y: float
    text: str
    colour: Rgb
    align: str = "left"


@dataclass(frozen=True)
class Chart:
    """Everything a time chart shows, in data units (x: seconds relative to the newest sample)."""

    x_range: tuple[float, float]
    left_range: tuple[float, float]
    left_ticks: tuple[Sequence[float], Sequence[str]]
    x_ticks: tuple[Sequence[float], Sequence[str]]
    lines: Sequence[Line] = ()
    right_range: tuple[float, float] | None = None
    right_ticks: tuple[Sequence[float], Sequence[str]] | None = None
    #: (x from, x to) spans drawn as a bar along the top row.
    bands: Sequence[tuple[float, float]] = ()
    band_colour: Rgb = None
    #: x of vertical lines (phase boundaries), in ``marker_colour``, and text drawn over all.
    vlines: Sequence[float] = ()
    marker_colour: Rgb = None
    labels: Sequence[Label] = ()
    #: The x axis's name, centred under its tick labels.
    x_label: str | None = None
    #: Frame and tick labels, and the canvas behind everything.
    ink: Rgb = None
    canvas: Rgb = None


def render_chart(chart: Chart, width: int, height: int) -> list[list[Run]]:
    """The chart as ``height`` rows of runs, each row ``width`` cells wide (all characters are
    one cell). Too small for a frame: blank rows."""
    ink, canvas = chart.ink, chart.canvas
    left_labels = _labels(chart.left_ticks[1])
    right = chart.right_ticks is not None and chart.right_range is not None
    right_labels = _labels(chart.right_ticks[1]) if chart.right_ticks is not None and right else []
    left_w = max((len(t) for t in left_labels), default=0)
    right_w = max((len(t) for t in right_labels), default=0)
    plot_w = width - left_w - right_w - 2
    plot_h = height - 3 - (1 if chart.x_label else 0)
    if plot_w < 2 or plot_h < 1:
        return [[(" " * width, ink, canvas)] for _ in range(max(height, 0))]
    area = _Area(plot_w, plot_h)
    x_lo, x_hi = chart.x_range
    to_col = _scale(x_lo, x_hi, plot_w)
    vline_cols = sorted({c for c in (to_col(x) for x in chart.vlines) if 0 <= c < plot_w})
    for col in vline_cols:
        area.column(col, "│", chart.marker_colour)
    polylines: list[tuple[Line, tuple[float, float]]] = []
    for line in chart.lines:  # in order: a later line's dots or marks cover an earlier one's
        y_range = chart.right_range if line.right and chart.right_range is not None else chart.left_range
        if line.marker is None:
            polylines.append((line, y_range))
            continue
        area.dots(polylines, chart.x_range)
        polylines = []
        area.marks(line, to_col, _scale(*y_range, plot_h))
    area.dots(polylines, chart.x_range)
    band_row: dict[int, Rgb] = {}
    for start, end in chart.bands:
        first, last = max(to_col(start), 0), min(to_col(end), plot_w - 1)
        for col in range(first, last + 1):
            band_row[col] = chart.band_colour
    area.put_row(0, {col: ("█", colour) for col, colour in band_row.items()})
    to_row = _scale(*chart.left_range, plot_h)
    for note in chart.labels:
        col = to_col(note.x) - (len(note.text) - 1 if note.align == "right" else 0)
        row = plot_h - 1 - to_row(note.y)
        if 0 <= row < plot_h:
            area.put_row(row, {col + i: (ch, note.colour) for i, ch in enumerate(note.text)})
    left_rows = _tick_rows(tuple(chart.left_ticks[0]), tuple(left_labels), chart.left_range, plot_h)
    right_rows = (_tick_rows(tuple(chart.right_ticks[0]), tuple(right_labels), chart.right_range, plot_h)
                  if right and chart.right_ticks is not None and chart.right_range is not None else {})
    edges = (tuple(vline_cols), plot_w, left_w, right_w, ink, canvas)
    rows: list[list[Run]] = [_frame_row("┌", "┐", "┬", *edges)]
    for row in range(plot_h):
        label = left_rows.get(row)
        runs: list[Run] = [((label or "").rjust(left_w) + ("┤" if label is not None else "│"), ink, canvas)]
        runs += area.runs(row, ink, canvas)
        r_label = right_rows.get(row)
        r_edge = "├" if r_label is not None else "│"
        runs.append((r_edge + (r_label or "").ljust(right_w), ink, canvas))
        rows.append(runs)
    tick_cols = [to_col(x) for x in chart.x_ticks[0]]
    rows.append(_frame_row("└", "┘", "┴", *edges, ticks=tuple(c for c in tick_cols if 0 <= c < plot_w)))
    x_labels = _x_labels(tuple(tick_cols), tuple(chart.x_ticks[1]), plot_w, left_w + 1, width)
    rows.append([(x_labels, ink, canvas)])
    if chart.x_label:
        centre = left_w + 1 + plot_w // 2 - len(chart.x_label) // 2
        rows.append([((" " * max(centre, 0) + chart.x_label).ljust(width)[:width], ink, canvas)])
    return [_merge(row) for row in rows[:height]]


class _Area:
    """The plot area's cells that hold something, row by row (most cells are blank)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells: list[dict[int, tuple[str, Rgb]]] = [{} for _ in range(height)]

    def column(self, col: int, char: str, colour: Rgb) -> None:
        for cells in self.cells:
            cells[col] = (char, colour)

    def marks(self, line: Line, to_col: Callable[[float], int], to_row: Callable[[float], int]) -> None:
        """One ``line.marker`` per point, in the cell it falls in."""
        for x, y in zip(line.xs, line.ys, strict=True):
            if math.isfinite(x) and math.isfinite(y):
                col, row = to_col(x), self.height - 1 - to_row(y)
                if 0 <= col < self.width and 0 <= row < self.height:
                    self.cells[row][col] = (line.marker or "•", line.colour)

    def put_row(self, row: int, cells: dict[int, tuple[str, Rgb]]) -> None:
        self.cells[row].update({c: v for c, v in cells.items() if 0 <= c < self.width})

    def dots(self, lines: Sequence[tuple[Line, tuple[float, float]]], x_range: tuple[float, float]) -> None:
        """Each line's points (on its y range) joined by straight runs of dots; dots off the area
        are left out. A cell several lines touch shows all their dots, in the last one's colour."""
        if not lines:
            return
        found = self._dots_by_python(lines, x_range)
        if found is None:
            found = self._dots_by_numpy(lines, x_range)
        cells, width = self.cells, self.width
        colours = [line.colour for line, _ in lines]
        for cell, code, line_id in found:
            cells[cell // width][cell % width] = (QUADRANTS[code], colours[line_id])

    def _dots_by_python(self, lines: Sequence[tuple[Line, tuple[float, float]]],
                        x_range: tuple[float, float]) -> list[tuple[int, int, int]] | None:
        """``_dots_by_numpy``'s (cell, dot bits, last line there), the same arithmetic a point
        at a time: a small plot's dots cost less so than numpy's ~50 calls, in a drawing every few
        seconds, which runs cold. None (numpy's turn) past PYTHON_POINTS points or PYTHON_DOTS
        dots, or where a range is not finite."""
        if sum(len(line.xs) for line, _ in lines) > PYTHON_POINTS:
            return None
        x_scale = _span(*x_range)
        y_scales = [scale for _, y_range in lines if (scale := _span(*y_range)) is not None]
        if x_scale is None or len(y_scales) < len(lines):
            return None
        width = self.width
        sub_w, sub_h = 2 * width, 2 * self.height
        placed = [_dot_points(line, x_scale, y_scale, sub_w, sub_h)
                  for (line, _), y_scale in zip(lines, y_scales, strict=True)]
        dot_count = sum(max(x1 - x0, x0 - x1, y1 - y0, y0 - y1) + 1
                        for points in placed for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False))
        if dot_count > PYTHON_DOTS:
            return None
        floor, top = math.floor, sub_h - 1
        codes: dict[int, int] = {}
        owners: dict[int, int] = {}
        for line_id, points in enumerate(placed):
            dots = points[:1] if len(points) == 1 else []
            put = dots.append
            for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
                dx, dy = x1 - x0, y1 - y0
                steps = max(dx, -dx, dy, -dy)
                if steps <= 1:  # the ends are the dots
                    put((x0, y0))
                    put((x1, y1))
                    continue
                step_x, step_y = dx / steps, dy / steps
                for k in range(steps + 1):
                    put((floor(x0 + k * step_x), floor(y0 + k * step_y)))
            mine: dict[int, int] = {}
            for x, y in dots:
                if 0 <= x < sub_w and 0 <= y < sub_h:
                    y = top - y  # rows from the top
                    cell = (y >> 1) * width + (x >> 1)
                    mine[cell] = mine.get(cell, 0) | (1 << ((y & 1) * 2 + (x & 1)))
            for cell, code in mine.items():
                codes[cell] = codes.get(cell, 0) | code
                owners[cell] = line_id
        return [(cell, code, owners[cell]) for cell, code in codes.items()]

    def _dots_by_numpy(self, lines: Sequence[tuple[Line, tuple[float, float]]],
                       x_range: tuple[float, float]) -> list[tuple[int, int, int]]:
        """(cell, dot bits, last line there) of each cell the lines' dots fall in, all the lines
        at once: numpy's cost per call, not per point, is what a chart's many dots pay."""
        sizes = [min(len(line.xs), len(line.ys)) for line, _ in lines]
        xs = np.fromiter(chain.from_iterable(line.xs[:n] for (line, _), n in zip(lines, sizes, strict=True)),
                         np.float64, sum(sizes))
        ys = np.fromiter(chain.from_iterable(line.ys[:n] for (line, _), n in zip(lines, sizes, strict=True)),
                         np.float64, sum(sizes))
        ids = np.repeat(np.arange(len(lines)), sizes)
        keep = np.isfinite(xs) & np.isfinite(ys)
        if not keep.all():  # (a time plot's lines are all finite: no copies)
            xs, ys, ids = xs[keep], ys[keep], ids[keep]
        if not len(xs):
            return []
        sub_w, sub_h = 2 * self.width, 2 * self.height
        # dots counted from the bottom left, as plotext does (rounding half up, joining points
        # by truncating its steps), so that the lines look the same
        lows = np.array([y_range[0] for _, y_range in lines])[ids]
        highs = np.array([y_range[1] for _, y_range in lines])[ids]
        px = _place(xs, x_range[0], x_range[1], sub_w)
        py = _place(ys, lows, highs, sub_h)
        # each line's points joined to the next of the same line; a line of one point is that dot
        joined = ids[1:] == ids[:-1]
        alone = np.ones(len(ids), dtype=bool)
        alone[1:] &= ~joined
        alone[:-1] &= ~joined
        starts = np.flatnonzero(joined)
        dx, dy = px[starts + 1] - px[starts], py[starts + 1] - py[starts]
        steps = np.maximum(np.abs(dx), np.abs(dy)) + 1
        segment = np.repeat(np.arange(len(steps)), steps)
        k = np.arange(int(steps.sum())) - np.repeat(np.cumsum(steps) - steps, steps)
        last = np.maximum(steps - 1, 1)[segment]  # k * (d / last), not k * d / last: plotext's dots
        first = starts[segment]
        dot_x = np.concatenate([np.floor(px[first] + k * (dx[segment] / last)).astype(np.int64), px[alone]])
        dot_y = np.concatenate([np.floor(py[first] + k * (dy[segment] / last)).astype(np.int64), py[alone]])
        dot_id = np.concatenate([ids[first], ids[alone]])
        inside = (dot_x >= 0) & (dot_x < sub_w) & (dot_y >= 0) & (dot_y < sub_h)
        dot_x, dot_y, dot_id = dot_x[inside], (sub_h - 1) - dot_y[inside], dot_id[inside]  # rows from the top
        if not len(dot_x):
            return []
        # a shared cell shows every line's dots (none hides another's shape), in the last one's colour
        cells = (dot_y // 2) * self.width + dot_x // 2
        codes = np.zeros(self.height * self.width, dtype=np.uint8)
        np.bitwise_or.at(codes, cells, (1 << ((dot_y % 2) * 2 + (dot_x % 2))).astype(np.uint8))
        owners = np.zeros(self.height * self.width, dtype=np.int64)
        np.maximum.at(owners, cells, dot_id)
        cell_ids = np.flatnonzero(codes)
        return list(zip(cell_ids.tolist(), codes[cell_ids].tolist(), owners[cell_ids].tolist(), strict=True))

    def runs(self, row: int, ink: Rgb, canvas: Rgb) -> list[Run]:
        """The row's cells as runs of one colour each, blank cells in ``ink`` (so they join the
        frame's runs)."""
        cells = self.cells[row]
        if not cells:
            return [(" " * self.width, ink, canvas)]
        out: list[Run] = []
        text, colour, at = "", ink, 0
        for col in sorted(cells):
            if col > at:  # blank cells before this one
                if colour != ink:
                    out.append((text, colour, canvas))
                    text, colour = "", ink
                text += " " * (col - at)
            char, fg = cells[col]
            if fg != colour:
                if text:
                    out.append((text, colour, canvas))
                text, colour = "", fg
            text += char
            at = col + 1
        if at < self.width:
            if colour != ink:
                out.append((text, colour, canvas))
                text, colour = "", ink
            text += " " * (self.width - at)
        out.append((text, colour, canvas))
        return out


# The frame's edges, tick labels and time labels are kept by what they are made of: most drawings
# of a plot make the ones the last one made (shared: not to be changed).
@functools.lru_cache(maxsize=64)
def _frame_row(left: str, right: str, cross: str, vline_cols: tuple[int, ...], plot_w: int, left_w: int,
               right_w: int, ink: Rgb, canvas: Rgb, ticks: tuple[int, ...] = ()) -> list[Run]:
    """The frame's top or bottom edge: x ticks (bottom) and phase lines cross it."""
    edge = ["─"] * plot_w
    for col in ticks:
        edge[col] = "┬"
    for col in vline_cols:
        edge[col] = cross
    return [(" " * left_w + left + "".join(edge) + right + " " * right_w, ink, canvas)]


@functools.lru_cache(maxsize=64)
def _x_labels(cols: tuple[int, ...], labels: tuple[str, ...], plot_w: int, offset: int, width: int) -> str:
    """Time labels centred under their ticks, moved in from the row's ends; one that would touch
    a label already placed (or run off the row) is left out (plotext's "dynamic" alignment)."""
    row = [" "] * width
    for col, label in zip(cols, labels, strict=False):
        if not 0 <= col < plot_w or not label:
            continue
        size, coord = len(label), offset + col
        first, end = max(coord - size + 1, 0), min(coord + size, width - 1)
        free = [i for i in range(first, end) if row[i] == " "]
        low, high = min(free, default=coord - size + 1), max(free, default=coord + size)
        start = ((high - size + 1) + (low + size) - size) // 2
        if start < 0 or start + size > width:
            continue
        if any(row[i] != " " for i in range(max(start - 1, 0), min(start + size + 1, width))):
            continue
        row[start:start + size] = label
    return "".join(row)


@functools.lru_cache(maxsize=64)
def _tick_rows(values: tuple[float, ...], labels: tuple[str, ...], y_range: tuple[float, float],
               plot_h: int) -> dict[int, str]:
    """The area row of each y tick (top row: the range's high end) with its label."""
    to_row = _scale(*y_range, plot_h)
    out: dict[int, str] = {}
    for value, label in zip(values, labels, strict=False):
        row = plot_h - 1 - to_row(value)
        if 0 <= row < plot_h:
            out[row] = label
    return out


def _labels(labels: Sequence[str]) -> list[str]:
    return [str(label) for label in labels]


def _scale(low: float, high: float, cells: int) -> Callable[[float], int]:
    """A value in [low, high] to one of ``cells`` cells, counted from ``low`` (half rounds up);
    a value far outside lands a little beyond them, never at an unbounded index."""
    span = (high - low) or 1.0

    def to_cell(value: float) -> int:
        placed = 0.5 + (cells - 1) * (value - low) / span
        if not math.isfinite(placed):
            return -1 if not placed > 0 else cells  # NaN and -inf before the first cell, inf after
        return math.floor(round(min(max(placed, -cells), 2.0 * cells), 8))

    return to_cell


def _span(low: float, high: float) -> tuple[float, float] | None:
    """``low`` and what ``_place`` divides by, as it works them out; None where either is not
    finite (numpy's NaN arithmetic is not Python's)."""
    start, span = float(low), float(high - low)
    return (start, span or 1.0) if math.isfinite(start) and math.isfinite(span) else None


def _dot_points(line: Line, x_scale: tuple[float, float], y_scale: tuple[float, float],
                sub_w: int, sub_h: int) -> list[tuple[int, int]]:
    """The line's finite points as dots (``_place`` a point at a time: clipped, then rounded)."""
    (x_lo, x_span), (y_lo, y_span) = x_scale, y_scale
    x_cells, y_cells, to_dot = sub_w - 1, sub_h - 1, _floor_rounded
    points = []
    for x, y in zip(_floats(line.xs), _floats(line.ys), strict=False):  # as far as both go
        if x - x == 0 and y - y == 0:  # finite
            fx, fy = (x - x_lo) / x_span, (y - y_lo) / y_span
            points.append((to_dot(0.5 + x_cells * (fx if -1.0 <= fx <= 2.0 else -1.0 if fx < -1.0 else 2.0)),
                           to_dot(0.5 + y_cells * (fy if -1.0 <= fy <= 2.0 else -1.0 if fy < -1.0 else 2.0))))
    return points


def _floats(values: Sequence[float] | npt.NDArray[np.float64]) -> list[float]:
    """``values`` as the Python floats numpy would make of them (a list of them as it is)."""
    if type(values) is list and all(type(value) is float for value in values):
        return values
    floats: list[float] = np.asarray(values, dtype=np.float64).tolist()
    return floats


def _floor_rounded(placed: float) -> int:
    """``floor(np.round(placed, 8))`` (``_place``'s), cheaply where rounding cannot reach the next
    whole number: exact while |placed| * 1e8 < 2**53 (a chart 40 million cells wide)."""
    low = math.floor(placed)
    return low if placed - low < 0.999999 else math.floor(round(placed * 1e8) / 1e8)


def _place(values: np.ndarray, low: float | np.ndarray, high: float | np.ndarray, cells: int) -> np.ndarray:
    """``_scale`` for many values at once (each on its own range where ``low`` and ``high`` are
    arrays), clamped a little beyond the area (a far-off point would otherwise make a huge run of
    dots)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        span = np.where(high - low == 0, 1.0, high - low)
        fraction = (values - low) / span
        placed: np.ndarray = np.floor(np.round(0.5 + (cells - 1) * np.clip(fraction, -1.0, 2.0), 8))
    return placed.astype(np.int64)


def _merge(runs: list[Run]) -> list[Run]:
    """Neighbouring runs of the same colours as one."""
    out: list[Run] = []
    for text, fg, bg in runs:
        if not text:
            continue
        if out and out[-1][1] == fg and out[-1][2] == bg:
            out[-1] = (out[-1][0] + text, fg, bg)
        else:
            out.append((text, fg, bg))
    return out

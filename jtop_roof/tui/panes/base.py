"""The pane every monitor pane builds on, and the line helpers they share. A pane turns the newest
sample and the history into readout lines (wide or one-line compact) and, where it has one, a time
plot.

Text from the board (rail, zone and engine names) and from users (phase names) goes through
``printable`` and into plain chunks: it is never parsed as markup.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from jtop_roof.analysis.history import History
from jtop_roof.model.metrics import load_level, sparkline
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Chunk, Line, Readout
from jtop_roof.tui.widgets.timeplot import Axis, Series, TimePlot

#: Width of a compact line's label column ("CPU ", "TEMP ").
LABEL_WIDTH = 5
NAME_CHARS = 16  # rail/zone/engine names are cut to this many characters


def window_label(window_s: float | None) -> str:
    if window_s is None:
        return "all"
    if window_s < 120:
        return f"{window_s:g} s"
    if window_s < 3600:
        return f"{window_s / 60:g} min"
    return f"{window_s / 3600:g} h"


def flow(items: list[Line], width: int, gap: str = "  ", indent: Line | None = None,
         hang: int | None = None) -> list[Line]:
    """Lay chunks of items out left to right after ``indent``, wrapping at ``width``; wrapped lines
    start at column ``hang`` (default: under the first item)."""
    current: Line = list(indent or [])
    start = sum(len(t) for t, _ in current)
    hang = start if hang is None else hang
    lines: list[Line] = []
    used = start
    for item in items:
        size = sum(len(t) for t, _ in item)
        if used > start and used + len(gap) + size > width:
            lines.append(current)
            current = [(" " * hang, None)] if hang else []
            used = start = hang
        if used > start:
            current.append((gap, None))
            used += len(gap)
        current.extend(item)
        used += size
    if used > start or not lines:
        lines.append(current)
    return lines


_WORDS = re.compile(r"\S+\s*|\s+")


def wrap(line: Line, width: int, hang: int = 2) -> list[Line]:
    """``line`` broken between words into rows of at most ``width`` cells, each chunk keeping its
    style; the rows after the first start ``hang`` cells in. A word longer than a row is cut
    across rows, so nothing is lost and nothing runs past the edge. Panes wrap the same lines
    each second: the rows of a line wrapped before are kept (``_wrapped``)."""
    return [list(row) for row in _wrapped(tuple(line), width, hang)]


@functools.lru_cache(maxsize=256)
def _wrapped(line: tuple[Chunk, ...], width: int, hang: int) -> tuple[tuple[Chunk, ...], ...]:
    width = max(width, hang + 8)
    rows: list[Line] = [[]]
    used = 0
    for text, style in line:
        for word in _WORDS.findall(text):
            if used + len(word.rstrip()) > width and used > hang:
                rows.append([(" " * hang, None)])
                used = hang
                word = word.lstrip()
            while used + len(word.rstrip()) > width:  # one word longer than a whole row
                room = width - used
                rows[-1].append((word[:room], style))
                rows.append([(" " * hang, None)])
                used, word = hang, word[room:]
            if word:
                rows[-1].append((word, style))
                used += len(word)
    return tuple(tuple(_rstrip(row)) for row in rows)


def _rstrip(row: Line) -> Line:
    """The row without the spaces after its last word (they would count as text past the edge)."""
    while row and not row[-1][0].strip() and len(row) > 1:
        row = row[:-1]
    return row[:-1] + [(row[-1][0].rstrip(), row[-1][1])] if row else row


def legend(left: str, right: str | None) -> Line:
    """Swatches in the plot's line colours: the first series on the left axis, the second right
    (left out when the board does not report it)."""
    line: Line = [("━ ", "plot-1"), (left, "muted")]
    if right is not None:
        line += [("  ", None), ("━ ", "plot-2"), (right, "muted")]
    return line


def history_sparkline(history: History, key: str, width: int, window_s: float | None,
                      low: float | None = None, high: float | None = None, min_span: float = 0.0) -> str:
    """A one-line trend of ``key`` over the window, for the compact lines that have no plot."""
    t_to = history.last_t_mono
    if t_to is None or width <= 0:
        return ""
    t_from = None if window_s is None else t_to - window_s
    _, values = history.series(key, t_from, t_to, width)
    return sparkline(values.tolist(), width, low, high, min_span)


def clock_chunks(at: Chunk, mhz: int | float | None, load_pct: float | None, max_mhz: Any = None) -> Line:
    """``@ 1020/1300 MHz`` after the load (``at`` is the lead-in); a load without a clock is what
    tegrastats prints when it does not run as root, so say so rather than show nothing."""
    if mhz is None:
        return [("  clock ", "label"), ("— needs root" if load_pct is not None else "—", "muted")]
    top = f"/{max_mhz:g}" if isinstance(max_mhz, (int, float)) and not isinstance(max_mhz, bool) else ""
    return [at, (f"{mhz}{top}", None), (" MHz", "muted")]


def line_width(line: Line) -> int:
    return sum(len(text) for text, _ in line)


def pct_chunk(pct: float | None, view: View) -> tuple[str, str]:
    if pct is None:
        return "  —", "muted"
    return f"{pct:3.0f}%", load_level(pct, view.thresholds)


class Pane(Vertical):
    """A bordered pane with a readout and (optionally) a plot below it."""

    HAS_PLOT = True
    SHORT = ""
    #: The unit whose clock events (throttle, mode cap) the plot shows as bands.
    UNIT: str | None = None

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, classes="pane")
        self._titles: tuple[str, str | None] | None = None
        #: The pane's children, made once here (each redraw reaches them: no query per redraw).
        self.readout = Readout(classes="readout")
        self.plot: TimePlot | None = TimePlot(classes="plot") if self.HAS_PLOT else None

    def compose(self) -> ComposeResult:
        yield self.readout
        if self.plot is not None:
            yield self.plot

    @property
    def compact(self) -> bool:
        return self.screen.has_class("-compact") and not self.has_class("-focused")

    def update_readout(self, view: View) -> None:
        width = self.readout.cells.width or max(20, self.size.width - 2)
        if self.compact:
            lines = self.compact_lines(view, width)
        else:
            lines = self.lines(view, width)
        self.readout.set_lines(lines)
        if self.plot is not None:
            self.plot.set_class(not self.has_plot_data(view), "-empty")
        # Setting a border title repaints the whole pane: only when the text changes.
        title, subtitle = self.title(view), self.subtitle(view)
        if (title, subtitle) != self._titles:
            self._titles = (title, subtitle)
            self.border_title = Content(title)
            self.border_subtitle = None if subtitle is None else Content(subtitle)

    def title(self, view: View) -> str:
        return self.SHORT

    def subtitle(self, view: View) -> str | None:
        return window_label(view.window_s) if self.HAS_PLOT else None

    def lines(self, view: View, width: int) -> list[Line]:
        raise NotImplementedError

    def compact_lines(self, view: View, width: int) -> list[Line]:
        return self.lines(view, width)[:1]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return [], Axis(), Axis()

    def has_plot_data(self, view: View) -> bool:
        """False hides the plot: a host without a GPU, EMC, rails or sensors gets its text only,
        not an empty frame."""
        series, _, _ = self.series(view)
        return any(view.history.has(line.key) for line in series)

    def update_plot(self, view: View) -> None:
        plot = self.plot
        if plot is None:
            return
        lines, left, right = self.series(view)
        bands = [(e.start_mono, e.t_mono) for e in view.clock_events
                 if e.unit == self.UNIT and e.start_mono is not None and e.t_mono is not None]
        plot.draw(view.history, lines, window_s=view.window_s, tz=view.tz, wall_axis=view.wall_axis,
                  left=left, right=right, bands=bands)

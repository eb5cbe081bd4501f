"""ChartView: a widget showing a ``chart.Chart`` as screen lines it builds itself.

It keeps its lines until it is shown another chart or resized, and a new chart repaints only the
rows that changed (a line moving along the bottom leaves the empty rows above it alone).
"""

from __future__ import annotations

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.strip import Strip

from jtop_roof.tui.messages import PlotResized
from jtop_roof.tui.widgets.chart import Chart, Rgb, Run, render_chart
from jtop_roof.tui.widgets.rows import DirectRows


class ChartView(DirectRows):
    """Shows the chart last given to ``_show`` at whatever size the widget has."""

    ALLOW_SELECT = False  # a picture: nothing in it to copy
    RGB_ONLY = True  # its styles are ``_style``'s

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._chart: Chart | None = None
        #: What is on screen: the size it was laid out for, each row's runs and its strip.
        self._laid_out: tuple[int, int] = (0, 0)
        self._runs: list[list[Run]] = []
        self._strips: list[Strip] = []

    def _show(self, chart: Chart | None) -> None:
        """Lay ``chart`` out at the widget's size and repaint the rows that changed."""
        self._chart = chart
        refresh_all = self._laid_out != (self.cells.width, self.cells.height)
        changed = self._lay_out()
        if refresh_all:
            self.refresh()
        else:
            self.repaint_rows(changed)

    def on_resize(self, _event: events.Resize) -> None:
        if self._chart is not None:
            self.post_message(PlotResized())

    def _lay_out(self) -> list[int]:
        """Rows and strips for the current size; returns the rows that differ from before."""
        width, height = self.cells.width, self.cells.height
        if self._chart is None or not width or not height:
            runs: list[list[Run]] = [[(" " * width, None, None)] for _ in range(height)]
        else:
            runs = render_chart(self._sized(self._chart, height), width, height)
        same_size = self._laid_out == (width, height)
        self._laid_out = (width, height)
        changed = [y for y, row in enumerate(runs)
                   if not same_size or y >= len(self._runs) or self._runs[y] != row]
        strips = self._strips if same_size else [Strip.blank(width)] * height
        for y in changed:
            strips[y] = Strip([Segment(text, _style(fg, bg)) for text, fg, bg in runs[y]], width)
        self._runs, self._strips = runs, strips
        return changed

    def _sized(self, chart: Chart, height: int) -> Chart:
        """``chart`` as laid out at ``height`` rows: what depends on the size (a plot's y ticks)
        follows a resize, which lays the same chart out again."""
        return chart

    def render_line(self, y: int) -> Strip:
        size = self.cells
        if self._laid_out != (size.width, size.height):
            self._lay_out()  # resized since the last drawing: the same chart at the new size
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(size.width)

    @property
    def rows_text(self) -> list[str]:
        """The plot as shown, one string per row (tests)."""
        return ["".join(text for text, _, _ in row) for row in self._runs]


_STYLES: dict[tuple[Rgb, Rgb], Style] = {}


def _style(fg: Rgb, bg: Rgb) -> Style:
    """A run's Rich style (a few per theme, kept)."""
    style = _STYLES.get((fg, bg))
    if style is None:
        style = _STYLES[fg, bg] = Style.from_color(
            None if fg is None else RichColor.from_rgb(*fg), None if bg is None else RichColor.from_rgb(*bg))
    return style

"""A plotext plot that renders its matrix straight to the screen's strips, once per drawing.

``PlotextPlot.render`` builds the whole figure on every repaint, turns plotext's cell matrix into
one ANSI string, has Rich decode it into a ``Text``, and Textual turns that into ``Content`` and
then into strips, line by line, span by span. Here the matrix becomes the same strips directly:
one segment per run of equal colours, each with the style Textual gives that run on that widget
(worked out once per colour through Textual's own path, so what is shown is identical), kept
until ``changed`` says the plot was drawn again or the size or theme differ. ``render`` (the
``Text``, also built from the matrix) stays for anything that asks for it, and is the route taken
in the few cases the direct one does not cover (a text selection, a line whose characters are not
one cell each).
"""

from __future__ import annotations

from typing import Any

from plotext._utility import colors_to_ansi
from rich.ansi import AnsiDecoder
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import RenderResult
from textual.content import Content
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.widget import _RenderCache
from textual_plotext import PlotextPlot

#: Rich's style for each of plotext's colour escapes (a few per theme).
_STYLES: dict[str, Style | None] = {}


def _style(ansi: str) -> Style | None:
    if ansi not in _STYLES:
        spans = AnsiDecoder().decode_line(ansi + "x").spans
        style = spans[0].style if spans else None
        _STYLES[ansi] = style if isinstance(style, Style) else None
    return _STYLES[ansi]


def matrix_text(matrix: Any) -> Text:
    """What ``Text.from_ansi(matrix.set_canvas())`` gives, without the string in between."""
    lines: list[Text] = []
    cols = matrix.cols
    for row in range(matrix.rows - 1, -1, -1):
        markers, fgs, styles, bgs = (matrix.marker[row], matrix.fullground[row], matrix.style[row],
                                     matrix.background[row])
        line = Text()
        col = 0
        while col < cols:
            fg, st, bg = fgs[col], styles[col], bgs[col]
            end = col + 1
            while end < cols and fgs[end] == fg and styles[end] == st and bgs[end] == bg:
                end += 1
            line.append("".join(markers[col:end]), _style(colors_to_ansi(fg, st, bg)))
            col = end
        lines.append(line)
    lines.append(Text())  # the canvas ends with a newline: Rich's decoder yields an empty last line
    return Text("\n", end="\n", tab_size=8).join(lines)


class CanvasPlot(PlotextPlot):
    """``PlotextPlot`` that builds its figure once per drawing (call ``changed`` after one)."""

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None, disabled: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._generation = 0
        self._rendered: tuple[tuple[Any, ...], Text] | None = None
        self._strips: tuple[tuple[Any, ...], list[Strip]] | None = None
        self._styles_key: tuple[Any, ...] | None = None
        self._styles: dict[str, VisualStyle] = {}
        #: The Rich style of a run of a colour at a column and row (its offset is in the style).
        self._placed: dict[tuple[str, int, int], Style] = {}

    def _build(self, width: int, height: int, theme: str) -> Any:
        """Build the figure at this size (as ``PlotextPlot.render`` sets it up, see
        textual-plotext issue 5), without its ANSI canvas; the cell matrix."""
        plot: Any = self._plot
        plot.plotsize(width, height)
        plot._set_size(width, height)
        plot.theme(theme)
        plot._set_sizes()
        plot._build_matrix()
        return plot.monitor.matrix

    def _render_content(self) -> None:
        """Textual's hook for (re)rendering every line of a widget: the strips straight from the
        matrix, as ``render``'s text would have given them."""
        width, height = self.size
        base = self.visual_style
        theme = self._get_plotext_theme_name(self.app.theme)
        key = (self._generation, width, height, theme, base, id(self.app.ansi_theme))
        strips = self._strips[1] if self._strips is not None and self._strips[0] == key else None
        if strips is None and self.text_selection is None:
            strips = self._matrix_strips(self._build(width, height, theme), width, height, base)
            if strips is not None:
                self._strips = (key, strips)
        if strips is None:
            super()._render_content()
            return
        self._render_cache = _RenderCache(self.size, strips)
        self._dirty_regions.clear()

    def _matrix_strips(self, matrix: Any, width: int, height: int, base: VisualStyle) -> list[Strip] | None:
        """One strip per matrix row, top first; None where the text route must be taken."""
        if matrix.rows != height or matrix.cols != width or not width:
            return None
        run_style = self._run_styles(base)
        placed_styles = self._placed
        if len(placed_styles) > 8 * width * height:
            placed_styles.clear()
        strips: list[Strip] = []
        for y, row in enumerate(range(matrix.rows - 1, -1, -1)):
            markers, fgs, styles, bgs = (matrix.marker[row], matrix.fullground[row], matrix.style[row],
                                         matrix.background[row])
            segments: list[Segment] = []
            col = 0
            while col < width:
                fg, st, bg = fgs[col], styles[col], bgs[col]
                end = col + 1
                while end < width and fgs[end] == fg and styles[end] == st and bgs[end] == bg:
                    end += 1
                ansi = colors_to_ansi(fg, st, bg)
                placed = placed_styles.get((ansi, col, y))
                if placed is None:  # the same colour at the same place is the same style: most cells
                    placed = placed_styles[ansi, col, y] = run_style(ansi).rich_style_with_offset(col, y)
                segments.append(Segment("".join(markers[col:end]), placed))
                col = end
            if cell_len("".join(markers)) != width:
                return None  # a wide character: Textual would wrap the line
            strips.append(Strip(segments, width))
        return strips

    def _run_styles(self, base: VisualStyle) -> Any:
        """The style Textual gives a run of ``ansi`` colours on this widget: ``base`` and the run's
        style as Content renders them (memoised per base style and ANSI theme)."""
        key = (base, id(self.app.ansi_theme))
        if self._styles_key != key:
            self._styles_key = key
            self._styles = {}
            self._placed = {}
        memo = self._styles
        console = self.app.console
        get_style = self._get_style

        def run_style(ansi: str) -> VisualStyle:
            style = memo.get(ansi)
            if style is None:
                text = Text()
                text.append("x", _style(ansi))
                content = Content.from_rich_text(text, console=console)
                ((_, text_style),) = list(content.render(base, end="", parse_style=get_style))
                style = memo[ansi] = base + text_style
            return style

        return run_style

    def changed(self) -> None:
        """The figure was drawn again: build it on the next repaint."""
        self._generation += 1
        self.refresh()

    def render(self) -> RenderResult:
        width, height = self.size.width, self.size.height
        theme = self._get_plotext_theme_name(self.app.theme)
        key = (self._generation, width, height, theme)
        if self._rendered is not None and self._rendered[0] == key:
            return self._rendered[1].copy()
        text = matrix_text(self._build(width, height, theme))
        self._rendered = (key, text)
        return text.copy()

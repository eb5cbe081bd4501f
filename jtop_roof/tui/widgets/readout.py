"""Readout: lines of plain text chunks, each styled by a component class.

Every chunk is appended as literal text (never parsed as markup), so names from logs, recordings
or the user are shown exactly as they are. Colours come from the component classes, which the app's
TCSS maps to theme variables.

The monitor sets every readout about once a second, so a readout builds its screen lines itself,
one at a time and only the lines whose text changed, with the styles Textual's own route (``render``:
a Rich ``Text``, then ``Content``, then strips) gives them, worked out once per component class.
That route stays for a text selection and for a line with characters wider than one cell.

On the stock paint (tui/fastpaint.py) Textual's styles cache takes each row from here, unfiltered,
and a wide character's line is Textual's ``render_line``.

Its strips hold RGB colours only (``RGB_ONLY``): a style with a colour of the terminal's sixteen
(an ANSI theme) is turned to RGB once, where it is made, as the app's ANSI filter would turn it on
every row painted.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.content import Content
from textual.filter import ANSIToTruecolor
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.widget import Widget

from jtop_roof.tui import fastpaint
from jtop_roof.tui.widgets.rows import DirectRows, Route

#: One chunk: (text, component class suffix or None). Suffixes: see COMPONENT_CLASSES.
Chunk = tuple[str, "str | None"]
Line = list[Chunk]
#: At most this many placed styles are kept per readout (then they are made afresh).
PLACED_STYLES_KEPT = 4096


class Readout(DirectRows):
    """Styled lines of numbers; only repaints when the lines change.

    | Class | Description |
    | :- | :- |
    | `readout--label` | Names of values (rails, zones, fields). |
    | `readout--muted` | Secondary text, units, placeholders. |
    | `readout--ok` / `--warn` / `--crit` | Levels of a reading. |
    | `readout--off` | A sensor or core that is off. |
    | `readout--fixed` | A fixed placeholder reading (PMIC@100C). |
    | `readout--bar` / `--bar-empty` | Filled and empty parts of a bar. |
    | `readout--rec` / `--live` / `--paused` | Header badges. |
    | `readout--plot-1` ... `--plot-6` | Legend swatches, in plot line colours. |
    | `readout--phase` | Phase names, in the phase-marker colour. |
    """

    COMPONENT_CLASSES = {
        "readout--label", "readout--muted", "readout--ok", "readout--warn", "readout--crit",
        "readout--off", "readout--fixed", "readout--bar", "readout--bar-empty", "readout--rec",
        "readout--live", "readout--paused", "readout--phase", "readout--title",
        "readout--plot-1", "readout--plot-2", "readout--plot-3", "readout--plot-4", "readout--plot-5",
        "readout--plot-6",
    }

    RGB_ONLY = True  # the ANSI filter's work is done where a style is placed (``_placed_style``)

    DEFAULT_CSS = """
    Readout {
        height: auto;
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[Line] = []
        #: What the styles and strips below were made for: the route's key (the styles of the
        #: widget and its ancestors, its size), the ANSI theme and the theme.
        self._styles_key: tuple[Any, ...] | None = None
        #: A chunk's style by component class suffix, as Textual renders it on this widget.
        self._chunk_styles: dict[str | None, VisualStyle] = {}
        #: Its Rich style at a place (suffix, x, y), with the offset a text selection reads.
        self._placed_styles: dict[tuple[str | None, int, int], Style] = {}
        #: Each row's line and its strip, as last built.
        self._strips: dict[int, tuple[Line, Strip]] = {}
        #: The chunk styles and width of the direct paint under way (None: none is).
        self._pass: tuple[dict[str | None, VisualStyle], int] | None = None
        #: The app's ANSI filter, when on, and the background it blends dim text into.
        self._ansi: tuple[ANSIToTruecolor, Color] | None = None

    @property
    def lines(self) -> list[Line]:
        return self._lines

    @property
    def plain(self) -> str:
        """The text as shown, without styles (for tests and the tmux end-to-end check)."""
        return "\n".join("".join(text for text, _ in line) for line in self._lines)

    def set_lines(self, lines: list[Line]) -> None:
        """Show ``lines``; only the rows that changed are repainted (all of them, with a new
        layout, when the number of lines changes)."""
        if lines == self._lines:
            return
        old, self._lines = self._lines, lines
        if len(lines) != len(old):
            self.refresh(layout=True)
            return
        self.repaint_rows([y for y, line in enumerate(lines) if line != old[y]])

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return max((cell_len("".join(text for text, _ in line)) for line in self._lines), default=0)

    def paint_rows(self, route: Route, crop: Region) -> list[Strip]:
        """The rows in ``crop``, with the styles and width looked up once for them all (each
        lookup walks the DOM: it cost as much as building a row); a text selection goes
        Textual's way."""
        if self.text_selection is not None:
            return Widget.render_lines(self, crop)
        self._pass = (self._styles_for(self._route_key), route.content_width)
        try:
            return super().paint_rows(route, crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        # a direct paint asked ``text_selection`` once for all its rows (a DOM walk each)
        if self._pass is None and self.text_selection is not None:
            return super().render_line(y)
        if not 0 <= y < len(self._lines):  # below the lines: Textual's blank row, in RGB
            blank = super().render_line(y)
            return blank.apply_filter(*self._ansi) if self._pass is not None and self._ansi else blank
        line = self._lines[y]
        if self._pass is not None:
            styles, width = self._pass
        elif fastpaint.fast():
            styles, width = self._styles(), self.size.width
        else:  # the stock paint: Textual filters the rows; its own visual style is the base
            width = self.cells.width
            styles = self._styles_for(("stock", width, self.visual_style))
        kept = self._strips.get(y)
        if kept is not None and kept[0] == line:
            return kept[1]
        strip = self._line_strip(line, y, width, styles)
        if strip is None:  # a wide character: Textual's route for this line
            strip = fastpaint.textual_line(self, y) if fastpaint.fast() else super().render_line(y)
            if self._ansi is not None:
                strip = strip.apply_filter(*self._ansi)
        self._strips[y] = (line, strip)
        return strip

    def _styles(self) -> dict[str | None, VisualStyle]:
        self.direct_route()  # brings the key of the styles and size up to date
        return self._styles_for(self._route_key)

    def _styles_for(self, route_key: object) -> dict[str | None, VisualStyle]:
        """The chunk styles for the styles and size ``route_key`` stands for, the ANSI theme and
        the theme (forgetting the strips built with others, or at another width)."""
        app = self.app
        key = (route_key, id(app.ansi_theme), app.theme)
        if key != self._styles_key:
            self._styles_key = key
            self._chunk_styles = {}
            self._placed_styles = {}
            self._strips = {}
            route = self._route  # the one ``route_key`` stands for (``direct_route`` keeps them together)
            self._ansi = (route.to_rgb, route.background) if route is not None and route.to_rgb else None
        return self._chunk_styles

    def _chunk_style(self, suffix: str | None, styles: dict[str | None, VisualStyle]) -> VisualStyle:
        """What ``render``'s Text, turned into Content by Textual, gives a chunk of this class."""
        style = styles.get(suffix)
        if style is None:
            base = self.visual_style
            text = Text()
            text.append("x", self.get_component_rich_style(f"readout--{suffix}") if suffix else None)
            content = Content.from_rich_text(text, console=self.app.console)
            # the span's style is a Style, not a CSS reference: no ``parse_style`` is needed
            ((_, text_style),) = list(content.render(base, end=""))
            style = styles[suffix] = base + text_style
        return style

    def _line_strip(self, line: Line, y: int, width: int,
                    styles: dict[str | None, VisualStyle]) -> Strip | None:
        """One line as Textual would render it (cut to ``width`` with an ellipsis); None when it
        holds a character that is not one cell wide."""
        runs: list[tuple[str, str | None]] = []
        for text, suffix in line:
            if not text:
                continue
            styled = suffix is not None and bool(self._chunk_style(suffix, styles).rich_style)
            key = suffix if styled else None
            if runs and key is None and runs[-1][1] is None:
                runs[-1] = (runs[-1][0] + text, None)  # unstyled text is one span of Content
            else:
                runs.append((text, key))
        plain = "".join(text for text, _ in runs)
        if cell_len(plain) != len(plain):
            return None
        if len(plain) > width:
            runs = _cut(runs, width)
        segments: list[Segment] = []
        x = 0
        for text, suffix in runs:
            segments.append(Segment(text, self._placed_style(suffix, x, y, styles)))
            x += len(text)
        return Strip(segments, x)

    def _placed_style(self, suffix: str | None, x: int, y: int,
                      styles: dict[str | None, VisualStyle]) -> Style:
        """The chunk style with its offset (``rich_style_with_offset``), kept: a readout's values
        change each second, the places they start at seldom."""
        placed = self._placed_styles.get((suffix, x, y))
        if placed is None:
            if len(self._placed_styles) >= PLACED_STYLES_KEPT:
                self._placed_styles.clear()
            placed = self._chunk_style(suffix, styles).rich_style_with_offset(x, y)
            if self._ansi is not None:
                ansi_filter, background = self._ansi
                placed = ansi_filter.truecolor_style(placed, background.rich_color)
            self._placed_styles[suffix, x, y] = placed
        return placed

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="crop", end="")
        for index, line in enumerate(self._lines):
            if index:
                text.append("\n")
            for chunk, style in line:
                text.append(chunk, self.get_component_rich_style(f"readout--{style}") if style else None)
        return text


def _cut(runs: list[tuple[str, str | None]], width: int) -> list[tuple[str, str | None]]:
    """``runs`` cut to ``width`` cells, the last one an ellipsis in the style of the text it
    stands for (Textual's ``text-overflow: ellipsis``)."""
    if width <= 0:
        return []
    out: list[tuple[str, str | None]] = []
    room = width - 1
    for text, suffix in runs:
        if len(text) <= room:
            out.append((text, suffix))
            room -= len(text)
            continue
        out.append((text[:room] + "…", suffix))  # room 0: the ellipsis is the next run's
        break
    return out

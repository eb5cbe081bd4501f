"""DirectRows: a widget whose rows go to the screen as its ``render_line`` builds them.

Textual passes each row a widget paints through its styles cache (border, padding, outline, tint,
opacity, hatch, a hovered link) and builds a new strip for it, then filters that strip again
(ANSI colours to the theme's). For a widget that has none of those but padding, all that gives
back the row it started with (in its background, padded), at about 35 µs a row; the monitor's
plots and readouts repaint dozens of rows each second. Here such a widget's row is its own strip,
padded in its background and filtered through the strip's own caches, so a row that did not change
costs nothing twice; a widget whose rows hold RGB colours only (``RGB_ONLY``) skips the ANSI filter,
which would give them back unchanged. A widget with any of the others goes Textual's way.

What decides the route (the styles of the widget and every ancestor, its size, the app's line
filters) is worked out again only when one of them changes: looking it up walks the DOM several
times, which cost as much as painting the rows that changed.

Rows whose text changed are marked dirty and handed to the screen at once (``repaint_rows``):
Textual's ``refresh`` posts to the widget's own queue, whose idle handler then posts to the
screen's, two dispatches (each a walk of the class tree for its handlers) per widget per frame for
what is, at a size that stays, the same two steps.

All of this is the fast paint (tui/fastpaint.py holds the Textual internals it needs). On the stock
paint (``JROOF_PAINT=stock``) every row goes Textual's way and ``repaint_rows`` is ``refresh``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Region, Size, Spacing
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

from jtop_roof.tui import fastpaint


@dataclass(frozen=True)
class Route:
    """How a plain widget's rows reach the screen: its background (the fill of padding and of a
    row's end), the filters a row goes through, its size and padding, and the app's ANSI filter
    when an ``RGB_ONLY`` widget does its work itself (None: the filter is off, or in ``filters``)."""

    fill: RichStyle
    background: Color
    filters: tuple[LineFilter, ...]
    size: Size
    padding: Spacing
    to_rgb: ANSIToTruecolor | None = None

    @property
    def content_width(self) -> int:
        return max(self.size.width - self.padding.width, 0)


class DirectRows(Widget):
    """A widget painted straight from ``render_line`` when its styles add nothing (module doc)."""

    #: Its rows' colours are all RGB (or the terminal's default) and none is dim.
    RGB_ONLY: ClassVar[bool] = False

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        #: What the route was worked out for, and the route (None: Textual's way).
        self._route_key: tuple[object, ...] | None = None
        self._route: Route | None = None

    @property
    def cells(self) -> Size:
        """The content's size, as ``size`` gives it for a widget laid out on screen, without
        looking its region up (a walk of the DOM; the monitor asks dozens of times a frame). For a
        widget not on screen it is the size it was last laid out at (``size`` is 0 there): ask it
        of widgets that are shown."""
        width, height = self.outer_size
        gutter = self.styles.gutter
        return Size(max(width - gutter.width, 0), max(height - gutter.height, 0))

    def repaint_rows(self, rows: Iterable[int]) -> None:
        """Repaint these content rows (the widget keeps its size): marked dirty, and the screen
        told now, not on the widget's next idle (module doc); Textual's ``refresh`` on the stock
        paint or where the widget is not on the screen shown."""
        width = self.cells.width
        regions = [Region(0, y, width, 1) for y in rows]
        if regions and not fastpaint.repaint_now(self, regions):
            self.refresh(*regions)

    def direct_route(self) -> Route | None:
        """This widget's route now, None for Textual's way (see the module doc)."""
        if not fastpaint.fast():
            return None
        filters = tuple(self.get_line_filters())
        key = (fastpaint.styles_key(self), self.outer_size, tuple(map(id, filters)))
        if key != self._route_key:
            self._route_key = key
            self._route = self._make_route(filters)
        if self.auto_links and self.hover_style.link_id:
            return None  # a hovered link: not a style
        return self._route

    def _make_route(self, filters: tuple[LineFilter, ...]) -> Route | None:
        styles = self.styles
        if self.BLANK or any(edge for edge, _ in styles.border) or any(edge for edge, _ in styles.outline):
            return None
        if styles.tint.a or styles.text_opacity != 1.0 or self.opacity != 1.0:
            return None
        if styles.has_rule("hatch") and styles.hatch != "none":
            return None
        base_background, background = self.background_colors
        fill = Style(background=base_background + background).rich_style
        kept: list[LineFilter] = []
        to_rgb = None
        for line_filter in filters:
            if self.RGB_ONLY and isinstance(line_filter, ANSIToTruecolor):  # the rows are RGB: the fill too
                to_rgb = line_filter
                fill = line_filter.truecolor_style(fill, background.rich_color)
            else:
                kept.append(line_filter)
        return Route(fill, background, tuple(kept), self.outer_size, styles.padding, to_rgb)

    def render_lines(self, crop: Region) -> list[Strip]:
        route = self.direct_route()
        if route is None:
            return super().render_lines(crop)
        return self.paint_rows(route, crop)

    def paint_rows(self, route: Route, crop: Region) -> list[Strip]:
        """The rows in ``crop`` (widget coordinates), each ``render_line``'s strip padded."""
        fill, (width, height), (top, right, bottom, left) = route.fill, route.size, route.padding
        inner = route.content_width
        strips = []
        for y in crop.line_range:
            if top <= y < height - bottom:
                strip = self.render_line(y - top).adjust_cell_length(inner, fill)
                if left or right:
                    strip = Strip([*([Segment(" " * left, fill)] if left else []), *strip,
                                   *([Segment(" " * right, fill)] if right else [])], width)
            else:
                strip = Strip.blank(width, fill)
            for line_filter in route.filters:
                strip = strip.apply_filter(line_filter, route.background)
            strips.append(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

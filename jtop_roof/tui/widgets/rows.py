"""DirectRows: a widget whose rows go to the screen as its ``render_line`` builds them.

Textual passes each row a widget paints through its styles cache (border, padding, outline, tint,
opacity, hatch, a hovered link) and builds a new strip for it, then filters that strip again
(ANSI colours to the theme's). For a widget that has none of those, all that gives back the row
it started with, at about 35 µs a row; the monitor's plots and readouts repaint dozens of rows
each second. Here such a widget's row is its own strip, padded to the widget's width in its
background and filtered through the strip's own caches, so a row that did not change costs
nothing twice; a widget whose rows hold RGB colours only (``RGB_ONLY``) skips the ANSI filter, which
would give them back unchanged. A widget with any of those styles goes Textual's way.
"""

from __future__ import annotations

from typing import ClassVar

from textual.filter import ANSIToTruecolor
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


class DirectRows(Widget):
    """A widget painted straight from ``render_line`` when its styles add nothing (module doc)."""

    #: Its rows' colours are all RGB (or the terminal's default) and none is dim.
    RGB_ONLY: ClassVar[bool] = False

    def render_lines(self, crop: Region) -> list[Strip]:
        if not self._plain():
            return super().render_lines(crop)
        base_background, background = self.background_colors
        fill = Style(background=base_background + background).rich_style
        filters = [line_filter for line_filter in self.get_line_filters()
                   if not (self.RGB_ONLY and isinstance(line_filter, ANSIToTruecolor))]
        width = self.region.width
        strips = []
        for y in crop.line_range:
            strip = self.render_line(y).adjust_cell_length(width, fill)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def _plain(self) -> bool:
        """True when Textual's styles cache would give each row back unchanged (module doc)."""
        styles = self.styles
        if self.BLANK or any(styles.gutter) or any(edge for edge, _ in styles.outline):
            return False
        if styles.tint.a or styles.text_opacity != 1.0 or self.opacity != 1.0:
            return False
        if styles.has_rule("hatch") and styles.hatch != "none":
            return False
        return not (self.auto_links and self.hover_style._link_id)

"""The layout's two modes, as CSS classes on the main screen (``app.tcss`` does the rest): compact
below a size, where panes collapse to one-line summaries, and one pane full-screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.screen import Screen
from textual.widgets import Footer

from jtop_roof.tui.panes import Pane

#: Below this size the panes collapse to one-line summaries (roofline and events behind focus).
WIDE_MIN_COLUMNS = 100
WIDE_MIN_ROWS = 30


def set_compact(main: Screen[Any], compact: bool) -> None:
    """Compact panes and footer, or full ones."""
    if main.has_class("-compact") != compact:
        main.set_class(compact, "-compact")
    for footer in main.query(Footer):
        footer.compact = compact


def set_focus(main: Screen[Any], panes: Sequence[Pane], focus: str | None) -> None:
    """The pane of id ``focus`` full-screen (its column with it), or all panes (None)."""
    main.set_class(focus is not None, "-focus")
    for pane in panes:
        pane.set_class(pane.id == focus, "-focused")
    for column in main.query(".column"):
        column.set_class(focus is not None and bool(column.query(f"#{focus}")), "-has-focus")

"""The layout's two modes, as CSS classes on the main screen (``app.tcss`` does the rest): compact
below a size, where panes collapse to one-line summaries, and one pane full-screen; and each pane's
own rules, made from its ``PaneSpec`` (``pane_css``: the app's ``CSS``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from textual.screen import Screen
from textual.widgets import Footer

from jtop_roof.tui.panes import Pane, PaneSpec

#: Below this size the panes collapse to one-line summaries (roofline and events behind focus).
WIDE_MIN_COLUMNS = 100
WIDE_MIN_ROWS = 30


#: A pane shown as its one-line summary in the compact layout.
COMPACT_SUMMARY = "height: auto; border: none; padding: 0 1; background: $background;"
#: The focused pane, full-screen.
FOCUSED = "display: block; height: 1fr; max-height: 100%; border: round $primary; background: $surface;"


def pane_css(specs: Iterable[PaneSpec]) -> str:
    """Each pane's rules from its spec: its height in its column, and its place in the compact
    and focus rules (a pane's ``#id`` height outranks a ``.pane`` rule, so those name it too)."""
    specs = list(specs)
    rules = []
    for spec in specs:
        sizes = ([] if spec.height is None else [f"height: {spec.height};"]) + \
            ([] if spec.max_height is None else [f"max-height: {spec.max_height};"])
        if sizes:
            rules.append(f"#{spec.id} {{ {' '.join(sizes)} }}")
    summary = ["Screen.-compact .pane", *(f"Screen.-compact #{s.id}" for s in specs if s.summary)]
    rules.append(f"{', '.join(summary)} {{ {COMPACT_SUMMARY} }}")
    focused = ["Screen.-focus .pane.-focused", *(f"Screen.-focus #{s.id}.-focused" for s in specs
                                                  if s.in_focus_cycle)]
    rules.append(f"{', '.join(focused)} {{ {FOCUSED} }}")
    return "\n".join(rules) + "\n"


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

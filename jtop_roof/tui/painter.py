"""Repainting only what changed and is visible: readouts when the data changed, each plot once the
data moved on by a time column it can show (a plot redrawn more often looks the same and costs
the most)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from textual.widget import Widget

from jtop_roof.tui.panes import Pane
from jtop_roof.tui.view import View

#: What was drawn: the history's and the ledger's versions.
Version = tuple[int, int]
#: A plot whose data moved on by less than a time column is drawn anyway this long (s) after its
#: period, when no more data came (a paused replay, a stopped source).
CATCH_UP_S = 1.0


class Painter:
    """Remembers what each pane last drew, and when, to skip what would look the same."""

    def __init__(self, clock: Callable[[], float], redraw_hz: float) -> None:
        self._clock = clock
        self._min_period = 1.0 / redraw_hz
        self._forced = True
        self._drawn_version: Version = (-1, -1)
        #: Each plot's pane id: the version it drew and when (``clock``).
        self.plot_drawn: dict[str, tuple[Version, float]] = {}
        #: Each plot's pane id: the stream time of the newest sample it drew.
        self._plot_end: dict[str, float | None] = {}

    def force(self) -> None:
        """Draw everything visible on the next paint (a layout, theme or phase boundary changed)."""
        self._forced = True

    def forget_plots(self) -> None:
        """Other data is shown (another board): no plot's last drawing counts."""
        self.plot_drawn.clear()
        self._plot_end.clear()

    def settled(self, version: Version) -> bool:
        """True when ``paint`` at ``version`` would draw nothing: not forced, every readout and
        every plot drawn at that version (the timer's tick then skips building the view)."""
        return (not self._forced and version == self._drawn_version
                and all(drawn == version for drawn, _ in self.plot_drawn.values()))

    def paint(self, panes: Sequence[Pane], view: View, version: Version) -> float | None:
        """Update the visible panes from ``view``, the data at ``version``; returns when (``clock``)
        the first plot held back is due to catch up, None when none is."""
        force, self._forced = self._forced, False
        shown = [pane for pane in panes if _shown(pane)]
        if force or version != self._drawn_version:
            for pane in shown:
                pane.update_readout(view)
            self._drawn_version = version
        now = self._clock()
        held_until: float | None = None
        for pane in shown:
            plot = pane.plot
            if plot is None or not plot.display or not plot.cells.area:  # its pane is shown
                continue
            drawn_version, drawn_at = self.plot_drawn.get(pane.id or "", ((-1, -1), -1e9))
            if not force and drawn_version == version:
                continue
            period = self._plot_period(view, plot.points())
            if not force and not self._due(pane.id or "", view, period, now - drawn_at):
                held_until = min(drawn_at + period + CATCH_UP_S, held_until or math.inf)
                continue
            pane.update_plot(view)
            self.plot_drawn[pane.id or ""] = (version, now)
            self._plot_end[pane.id or ""] = view.history.last_t_mono
        return held_until

    def _due(self, pane_id: str, view: View, period: float, waited: float) -> bool:
        """The history's newest sample moved on by the plot's period (a time column) since the plot
        was drawn, or back (a seek); or ``waited`` (s since the drawing) is past the period and
        ``CATCH_UP_S``. A 1 Hz source thus redraws a plot on every n-th sample, not between."""
        drawn_end, end = self._plot_end.get(pane_id), view.history.last_t_mono
        if drawn_end is None or end is None:
            return drawn_end != end
        return not 0.0 <= end - drawn_end < period or waited >= period + CATCH_UP_S

    def _plot_period(self, view: View, points: int) -> float:
        """A plot changes visibly once the window moved on by one of its ``points`` (about a
        column; s of stream time): no need to redraw it more often."""
        span = view.window_s
        if span is None:
            first, last = view.history.first_t_mono, view.history.last_t_mono
            span = (last - first) if first is not None and last is not None else 0.0
        return max(self._min_period, span / max(points, 1))


def _shown(widget: Widget) -> bool:
    """True when the widget and all its ancestors are displayed."""
    node: Any = widget
    while node is not None and isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent
    return True

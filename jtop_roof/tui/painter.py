"""Repainting only what changed and is visible: readouts when the data changed, each plot at most
once per time column it can show (a plot redrawn more often looks the same and costs the most)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.widget import Widget

from jtop_roof.tui.panes import Pane
from jtop_roof.tui.view import View

#: What was drawn: the history's and the ledger's versions.
Version = tuple[int, int]


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

    def paint(self, panes: Sequence[Pane], view: View, version: Version) -> None:
        """Update the visible panes from ``view``, the data at ``version``."""
        force, self._forced = self._forced, False
        if force or version != self._drawn_version:
            for pane in panes:
                if _shown(pane):
                    pane.update_readout(view)
            self._drawn_version = version
        now = self._clock()
        for pane in panes:
            plot = pane.plot
            if plot is None or not _shown(plot) or not plot.size.area:
                continue
            drawn_version, drawn_at = self.plot_drawn.get(pane.id or "", ((-1, -1), -1e9))
            if not force and drawn_version == version:
                continue
            period = self._plot_period(view, plot.size.width)
            if not force and now - drawn_at < period and not self._jumped(pane.id or "", view, period):
                continue
            pane.update_plot(view)
            self.plot_drawn[pane.id or ""] = (version, now)
            self._plot_end[pane.id or ""] = view.history.last_t_mono

    def _jumped(self, pane_id: str, view: View, period: float) -> bool:
        """The history's newest sample moved back, or on by more than the plot's period, since the
        plot was drawn (a seek, a backfill): drawn on the next frame, not a period later."""
        drawn_end, end = self._plot_end.get(pane_id), view.history.last_t_mono
        if drawn_end is None or end is None:
            return drawn_end != end
        return not 0.0 <= end - drawn_end <= period

    def _plot_period(self, view: View, width: int) -> float:
        """A plot changes visibly once per time column: no need to redraw it more often."""
        span = view.window_s
        if span is None:
            first, last = view.history.first_t_mono, view.history.last_t_mono
            span = (last - first) if first is not None and last is not None else 0.0
        return max(self._min_period, span / max(width, 1))


def _shown(widget: Widget) -> bool:
    """True when the widget and all its ancestors are displayed."""
    node: Any = widget
    while node is not None and isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent
    return True

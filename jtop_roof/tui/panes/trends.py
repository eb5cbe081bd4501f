"""The trends pane, the plot the compact layout keeps."""

from __future__ import annotations

from jtop_roof.model.registry import metric
from jtop_roof.tui.panes.base import Pane, legend
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.timeplot import Axis, Series


class TrendsPane(Pane):
    """GPU load and total power over time: the plot a small terminal shows under its one-line
    summaries (the full panes, with their own plots, are behind the focus key)."""

    SHORT = "Trends"

    def lines(self, view: View, width: int) -> list[Line]:
        power = "power W (right)" if view.history.power_source is not None else None
        return [legend("GPU " + metric("gpu_load").legend(), power)]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return ([Series("gpu_load", "plot-1"), Series("power_mw", "plot-2", scale=1e-3, right=True)],
                Axis(0, 100), Axis(0, None))

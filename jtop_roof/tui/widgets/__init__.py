"""The generic widgets the panes and the app build on: the readout, the time and roofline plots,
the dialogs."""

from jtop_roof.tui.widgets.dialogs import HelpScreen, PhaseNameScreen
from jtop_roof.tui.widgets.readout import Readout
from jtop_roof.tui.widgets.timeplot import Axis, Series, TimePlot

__all__ = [
    "Axis",
    "HelpScreen",
    "PhaseNameScreen",
    "Readout",
    "Series",
    "TimePlot",
]

"""The monitor's widgets (Textual only below this package and app.py)."""

from jtop_roof.tui.widgets.dialogs import HelpScreen, PhaseNameScreen
from jtop_roof.tui.widgets.panes import (
    CpuPane,
    EnginesPane,
    EventsPane,
    GpuPane,
    MemoryPane,
    Pane,
    PowerPane,
    RooflinePane,
    TempPane,
    TrendsPane,
)
from jtop_roof.tui.widgets.readout import Readout
from jtop_roof.tui.widgets.timeplot import Axis, Series, TimePlot

__all__ = [
    "Axis",
    "CpuPane",
    "EnginesPane",
    "EventsPane",
    "GpuPane",
    "HelpScreen",
    "MemoryPane",
    "Pane",
    "PhaseNameScreen",
    "PowerPane",
    "Readout",
    "RooflinePane",
    "Series",
    "TempPane",
    "TrendsPane",
    "TimePlot",
]

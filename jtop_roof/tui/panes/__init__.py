"""The monitor's panes, one module each, and the registry the app lays them out from: a new pane
is one new module plus one ``PaneSpec`` line in ``PANES``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jtop_roof.tui.panes.base import Pane
from jtop_roof.tui.panes.cpu import CpuPane
from jtop_roof.tui.panes.engines import EnginesPane
from jtop_roof.tui.panes.events import EventsPane
from jtop_roof.tui.panes.gpu import GpuPane
from jtop_roof.tui.panes.memory import MemoryPane
from jtop_roof.tui.panes.power import PowerPane
from jtop_roof.tui.panes.processes import ProcessesPane
from jtop_roof.tui.panes.roofline import RooflinePane
from jtop_roof.tui.panes.temps import TempPane
from jtop_roof.tui.panes.trends import TrendsPane

Column = Literal["col-left", "col-mid", "col-right"]
#: The layout's columns (their widget ids), left to right.
COLUMNS: tuple[Column, ...] = ("col-left", "col-mid", "col-right")


@dataclass(frozen=True)
class PaneSpec:
    """Where a pane goes: its widget id (the CSS and the keys name it), its column, and whether
    the focus key visits it."""

    id: str
    column: Column
    pane_class: type[Pane]
    in_focus_cycle: bool = True


#: Every pane in the order the focus key visits them; each column stacks its own in this order.
PANES: tuple[PaneSpec, ...] = (
    PaneSpec("cpu", "col-left", CpuPane),
    PaneSpec("gpu", "col-mid", GpuPane),
    PaneSpec("memory", "col-left", MemoryPane),
    PaneSpec("power", "col-mid", PowerPane),
    PaneSpec("temps", "col-left", TempPane),
    PaneSpec("engines", "col-mid", EnginesPane),
    PaneSpec("processes", "col-mid", ProcessesPane),
    # The compact layout's plot: the full panes it stands for are what the focus key shows.
    PaneSpec("trends", "col-right", TrendsPane, in_focus_cycle=False),
    PaneSpec("roofline", "col-right", RooflinePane),
    PaneSpec("events", "col-right", EventsPane),
)

__all__ = [
    "COLUMNS",
    "PANES",
    "Column",
    "CpuPane",
    "EnginesPane",
    "EventsPane",
    "GpuPane",
    "MemoryPane",
    "Pane",
    "PaneSpec",
    "PowerPane",
    "ProcessesPane",
    "RooflinePane",
    "TempPane",
    "TrendsPane",
]

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
    """Where a pane goes and how tall it is: its widget id (the keys name it), its column, whether
    the focus key visits it (full-screen when focused), its ``height`` in its column (a CSS
    value: ``3fr``, ``auto``; None: the ``.pane`` rule's) and ``max_height`` (rows), and whether
    the compact layout shows it as a ``summary`` line (else its own rules in ``app.tcss`` say).
    ``tui.layout.pane_css`` makes its CSS from these: a new pane needs no stylesheet edit."""

    id: str
    column: Column
    pane_class: type[Pane]
    in_focus_cycle: bool = True
    height: str | None = "1fr"
    max_height: int | None = None
    summary: bool = True


#: Every pane in the order the focus key visits them; each column stacks its own in this order.
PANES: tuple[PaneSpec, ...] = (
    PaneSpec("cpu", "col-left", CpuPane, height="3fr"),
    PaneSpec("gpu", "col-mid", GpuPane, height="3fr"),
    PaneSpec("memory", "col-left", MemoryPane, height="2fr"),
    PaneSpec("power", "col-mid", PowerPane, height="3fr"),
    PaneSpec("temps", "col-left", TempPane, height="2fr"),
    PaneSpec("engines", "col-mid", EnginesPane, height="auto", max_height=7),
    PaneSpec("processes", "col-mid", ProcessesPane, height="2fr"),
    # The compact layout's plot: the full panes it stands for are what the focus key shows.
    PaneSpec("trends", "col-right", TrendsPane, in_focus_cycle=False, height=None, summary=False),
    PaneSpec("roofline", "col-right", RooflinePane, height="3fr"),
    PaneSpec("events", "col-right", EventsPane, height="2fr", summary=False),
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

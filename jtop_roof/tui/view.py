"""The view model: everything a pane needs to draw, as one object the app builds per redraw.
Panes read it and never the pipeline, so what they show is one query's answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import tzinfo

from jtop_roof.analysis.history import History
from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.analysis.verdict import Placement
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Sample
from jtop_roof.roofline.board import Board, RoofState
from jtop_roof.runtime.config import Thresholds


@dataclass
class View:
    """Everything a pane needs to draw, rebuilt by the app on each redraw."""

    history: History
    thresholds: Thresholds
    tz: tzinfo
    window_s: float | None
    wall_axis: bool = False
    info: SourceInfo = field(default_factory=lambda: SourceInfo("unknown"))
    #: Energy of the whole run (of the whole file, in a replay of one).
    whole: SpanStats | None = None
    #: The phase shown: the open one, or the one a replay's playhead is in.
    phase: SpanStats | None = None
    notes: list[str] = field(default_factory=list)
    #: The device and mode, and the roofs at the newest sample's clocks.
    board: Board | None = None
    roof: RoofState | None = None
    #: Detector events (throttle, mode cap): those closed in history and those in progress.
    clock_events: list[Event] = field(default_factory=list)
    #: Those of them still in progress.
    active_events: list[Event] = field(default_factory=list)
    #: The shown phase on the roof, where its workload reported work (label, placement).
    point: tuple[str, Placement] | None = None

    @property
    def sample(self) -> Sample | None:
        return self.history.latest

    @property
    def trips(self) -> Mapping[str, float]:
        return self.info.trips_c

    @property
    def max_clocks(self) -> Mapping[str, float]:
        return self.info.max_clocks

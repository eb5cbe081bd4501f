"""The view model: everything a pane needs to draw, as one object the app builds per redraw
(``build_view``). Panes read it and never the pipeline, so what they show is one query's answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import tzinfo

from jtop_roof.analysis.history import History
from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.analysis.verdict import Placement
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Sample
from jtop_roof.model.settings import Thresholds
from jtop_roof.roofline.board import Board, RoofState, pick_precision, roof_state
from jtop_roof.roofline.energy import Cheapest, EnergyRoof, cheapest_at, energy_roof
from jtop_roof.roofline.measured import Probe
from jtop_roof.roofline.workload import Workload


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
    #: Seconds throttled (any unit: the union, as report says it) of the whole run and of the
    #: shown phase, as far as the stream has been analysed.
    throttled_s: float = 0.0
    phase_throttled_s: float = 0.0
    #: The energy roofline (the j key's view; None: the time roofline is shown), and the mode it
    #: finds cheapest at the point's intensity.
    energy: EnergyRoof | None = None
    cheapest: Cheapest | None = None

    @property
    def sample(self) -> Sample | None:
        return self.history.latest

    @property
    def trips(self) -> Mapping[str, float]:
        return self.info.trips_c

    @property
    def max_clocks(self) -> Mapping[str, float]:
        return self.info.max_clocks


def build_view(
    pipeline: Pipeline,
    *,
    thresholds: Thresholds,
    tz: tzinfo,
    window_s: float | None,
    wall_axis: bool,
    notes: list[str],
    precision: str | None,
    probe: Probe | None = None,
    workload: Workload | None = None,
    energy: bool = False,
) -> View:
    """What the panes draw of ``pipeline`` now. ``precision``: the roofline's, as the p key chose
    it (None: ``shown_precision``'s); ``probe``: measured ceilings for the roof; ``workload``: FLOPs
    and bytes per iteration for the shown phase's work reported without them; ``energy``: the
    energy roofline is shown (the j key)."""
    ledger = pipeline.ledger
    phase = _shown_phase(pipeline)
    board = pipeline.board
    active = pipeline.active_events()
    clock_events = [e for e in pipeline.history.events if e.unit is not None] + active
    point = _roof_point(pipeline, phase, workload)
    precision = _precision(board, precision, point, workload)
    energy_view = energy_roof(board.device, board.mode, precision, probe) if energy else None
    intensity = None if point is None else point[1].intensity_flop_per_byte
    return View(
        history=pipeline.history,
        thresholds=thresholds,
        tz=tz,
        window_s=window_s,
        wall_axis=wall_axis,
        info=pipeline.info,
        whole=ledger.whole,
        phase=phase,
        notes=notes,
        board=board,
        roof=roof_state(board, pipeline.history.latest, precision, probe),
        clock_events=clock_events,
        active_events=active,
        point=point,
        throttled_s=pipeline.throttled_s(ledger.whole),
        phase_throttled_s=0.0 if phase is None else pipeline.throttled_s(phase),
        energy=energy_view,
        cheapest=None if energy_view is None else cheapest_at(energy_view, intensity),
    )


def shown_precision(pipeline: Pipeline, precision: str | None, workload: Workload | None) -> str | None:
    """The precision the roofline draws: ``precision`` (the p key's choice), else the one the
    shown phase's point is judged at, else the workload spec's, else the board's fastest."""
    return _precision(pipeline.board, precision, _roof_point(pipeline, _shown_phase(pipeline), workload),
                      workload)


def _precision(board: Board, precision: str | None, point: tuple[str, Placement] | None,
               workload: Workload | None) -> str | None:
    return pick_precision(board, (precision, None if point is None else point[1].precision,
                                  None if workload is None else workload.precision))


def _shown_phase(pipeline: Pipeline) -> SpanStats | None:
    """The open phase; in a replay with the whole file's ledger, the one the playhead is in,
    with all of its energy where the file ends it, else as far as the play head."""
    if pipeline.ledger_from_file:
        last = pipeline.history.last_t_mono
        phase = None if last is None else pipeline.ledger.phase_at(last)
        return None if phase is None else pipeline.at_play_head(phase)
    return pipeline.ledger.current


def _roof_point(pipeline: Pipeline, phase: SpanStats | None,
                workload: Workload | None) -> tuple[str, Placement] | None:
    """The shown phase on the roof, where its workload reported work; between phases, the last
    one that ended with work (by the play head, in a replay), labelled as ended: a benchmark's
    point stays on the roof once its phase is over, as at the end of a replay (after its idle
    tail), until the next phase starts."""
    if phase is not None:
        label = phase.name
    else:
        head = pipeline.history.last_t_mono
        if pipeline.ledger_from_file and head is None:
            return None
        phase = pipeline.ledger.last_worked(head if pipeline.ledger_from_file else None)
        if phase is None:
            return None
        label = f"{phase.name} (ended)"
    if not phase.iterations:
        return None
    return label, pipeline.placement(phase, workload)

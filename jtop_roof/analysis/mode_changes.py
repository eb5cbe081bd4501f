"""A change of power mode within a stream, as an event: ``mode_change``, at the first sample of the
part with the new mode, its reason naming the modes before and after.

The board decides where the mode changed (``Board.mode_spans``: a plain log whose online cores
changed, each part's mode inferred on its own); this detector only says so where the stream
passes it, so a report, the TUI and a recording show the change at the same sample. Pure, forward
only (a replay's seek back plays samples again; the change is said once per pass).

Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jtop_roof.analysis.detector_spec import DetectorSpec
from jtop_roof.analysis.pipeline import StreamContext
from jtop_roof.model.records import Event, Record, Sample

#: The event's kind, and its ``unit``: the board (a detector's event has one: replayed recordings
#: do not double it).
MODE_CHANGE, BOARD_UNIT = "mode_change", "board"


@dataclass(frozen=True)
class ModeChangeSettings:
    """None yet: the board decides where the mode changed."""


class ModeChangeDetector:
    """One ``mode_change`` event where a sample enters the next part of ``Board.mode_spans``."""

    def __init__(self, settings: ModeChangeSettings | None = None) -> None:
        self.settings = settings
        self._part: int | None = None
        self._last_mono: float | None = None

    def observe(self, record: Record, context: StreamContext) -> Sequence[Event]:
        board = context.board
        if not board.mode_spans or not isinstance(record, Sample) or not record.is_sample \
                or record.t_mono is None:
            return ()
        if self._last_mono is not None and record.t_mono <= self._last_mono:
            return ()
        self._last_mono = record.t_mono
        part, before = board.span_at(record.t_mono), self._part
        self._part = part
        if before is None or part == before:
            return ()
        old, new = board.mode_spans[before], board.mode_spans[part]
        was = "unknown" if old.mode is None else old.mode.name
        now = "unknown" if new.mode is None else new.mode.name
        detail = f"power mode changed from {was} to {now} ({old.note}, then {new.note})"
        return [Event(MODE_CHANGE, detail, record.t_wall, record.t_mono, unit=BOARD_UNIT,
                      start_wall=record.t_wall, start_mono=record.t_mono, reasons=(MODE_CHANGE,))]

    def active(self, context: StreamContext) -> Sequence[Event]:
        return ()

    def finish(self, context: StreamContext) -> Sequence[Event]:
        return ()


#: Its declaration (``analysis.detector_registry``).
DETECTOR = DetectorSpec("mode_change", ModeChangeSettings, ModeChangeDetector)

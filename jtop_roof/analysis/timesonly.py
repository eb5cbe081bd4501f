"""The history of a pipeline that shows nothing (``report`` of a day-long log spent most
of its analysis writing display columns nobody read, and a sixth of its start importing numpy).

``history_for`` gives a pipeline its history: a ``History`` (display columns, numpy) where there
is something to show, else a ``TimesOnlyHistory``. Nothing here imports numpy or Textual.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, cast

from jtop_roof.model.records import Event, Marker, Sample
from jtop_roof.model.timeline import stream_time

if TYPE_CHECKING:
    from jtop_roof.analysis.history import History

#: Stream events a history keeps for the event log (``history.EVENT_LOG_SIZE``, without numpy).
EVENT_LOG_SIZE = 500



class TimesOnlyHistory:
    """The history of a pipeline that shows nothing (``history_s`` 0: ``report``, ``record``,
    ``serve``, a replay's whole-file ledger): what the pipeline asks of its history, answered as
    ``History`` answers it (the newest sample and its stream time, a sample without one placed an
    interval after the last, ``current_phase``, the events), and none of the display columns:
    writing a day of them was most of ``report``'s analysis time, and numpy's import a sixth of
    its start. Only ``history_for`` makes one; a pipeline with display history has a ``History``."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self.latest: Sample | None = None
        self.first_t_mono: float | None = None
        self.last_t_mono: float | None = None
        self.last_t_wall: float | None = None
        self._count = 0
        self._bound: tuple[str, str | None] | None = None  # the last phase start or end: (kind, name)
        self.events: deque[Event] = deque(maxlen=EVENT_LOG_SIZE)
        self.version = 0
        self.log_version = 0

    def __len__(self) -> int:
        return min(self._count, 2)  # History's capacity for history_s 0

    def append(self, sample: Sample) -> None:
        if not sample.is_sample:
            return
        t_mono, restart = stream_time(sample.t_mono, self.last_t_mono, self.interval_s)
        if restart:
            self.clear()
        if self.first_t_mono is None or t_mono < self.first_t_mono:
            self.first_t_mono = t_mono
        self._count += 1
        self.last_t_mono = float(t_mono)
        wall = sample.t_wall
        self.last_t_wall = None if wall is None or math.isnan(wall) else float(wall)
        self.latest = sample
        self.version += 1

    def add_marker(self, marker: Marker) -> None:
        if marker.kind in ("phase_start", "phase_end"):
            self._bound = (marker.kind, marker.name)
        self.version += 1
        self.log_version += 1

    def add_event(self, event: Event) -> None:
        self.events.append(event)
        self.version += 1
        self.log_version += 1

    def clear(self) -> None:
        self._count = 0
        self.last_t_mono = self.last_t_wall = None
        self._bound = None
        self.events.clear()
        self.latest = None
        self.version += 1
        self.log_version += 1

    @property
    def current_phase(self) -> str | None:
        """As ``History.current_phase``: it reads only the last phase start or end."""
        if self._bound is None or self._bound[0] != "phase_start":
            return None
        return self._bound[1] or ""


def history_for(history_s: float, interval_s: float) -> History:
    """Display rows for ``history_s``; none (``TimesOnlyHistory``) where nothing is shown. Typed
    as ``History``: only the display (the TUI, which always keeps history) reads more of it than
    ``TimesOnlyHistory`` has."""
    if history_s <= 0:
        return cast("History", TimesOnlyHistory(interval_s))
    from jtop_roof.analysis.history import History  # numpy: only where there is something to show

    return History.for_duration(history_s, interval_s)

"""The events pane: stream events, detector findings, phase boundaries and session notes, the
newest that fit."""

from __future__ import annotations

import itertools
import textwrap
from datetime import datetime
from typing import Any

from jtop_roof.model.metrics import printable
from jtop_roof.tui.panes.base import Pane
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line


class EventsPane(Pane):
    """Stream events (gaps, restarts, seeks, source errors), phase boundaries and session notes."""

    SHORT = "Events"
    HAS_PLOT = False

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._built: tuple[Any, list[Line]] = (None, [])

    def lines(self, view: View, width: int) -> list[Line]:
        """The newest events and phase boundaries that fit, under as many whole notes as fit.
        Built again only when the log, the notes or the room changed, not on every sample."""
        rows = self.size.height or 8  # the content rows
        history = view.history
        key = (history, history.log_version, len(view.notes), history.first_t_mono, width, rows, view.tz,
               round(view.throttled_s), round(view.phase_throttled_s))
        built_key, built = self._built
        if built_key == key:
            return built
        built = self._build(view, width, rows)
        self._built = (key, built)
        return built

    def _build(self, view: View, width: int, rows: int) -> list[Line]:
        history = view.history
        # Only the newest `rows` of each kind can be among the newest `rows` overall.
        newest_events = list(itertools.islice(reversed(history.events), rows))
        entries: list[tuple[float, Line]] = []
        for event in newest_events:
            if event.unit is not None:  # a detector's: shown where it started, with how long
                at = event.start_mono if event.start_mono is not None else event.t_mono
                when = self._when(event.start_wall, at, view)
                span = (event.t_mono or 0.0) - (at or 0.0)
                kind = f"{event.kind} {printable(event.unit)} {span:.0f} s "
                detail = printable(event.detail, max(10, width - 9 - len(kind)))
                level = "crit" if event.kind == "throttle" else "warn"
                entries.append((at or 0.0, [(when, "muted"), (kind, "label"), (detail, level)]))
                continue
            when = self._when(event.t_wall, event.t_mono, view)
            detail = printable(event.detail, max(10, width - 18))
            if event.kind == "gap" and event.gap_s is not None:
                detail = f"no data for {event.gap_s:.1f} s"
            style = "crit" if event.kind in ("source_error", "gap") else None
            kind = "" if detail.startswith(event.kind) else f"{event.kind} "
            entries.append((event.t_mono or 0.0, [(when, "muted"), (kind, "label"), (detail, style)]))
        for mark in history.markers[-rows:]:
            when = self._when(history.wall_at(mark.t_mono), mark.t_mono, view)
            text = "phase end" if mark.kind == "phase_end" else f"phase {printable(mark.name or '', 40)}"
            entries.append((mark.t_mono, [(when, "muted"), (text, "phase")]))
        entries.sort(key=lambda item: item[0])
        throttled = self._throttled(view)
        room = max(0, rows - len(throttled))
        lines = throttled + [line for _, line in entries[max(0, len(entries) - room):]]
        notes: list[Line] = []
        for note in reversed(view.notes):  # whole notes only, the newest first, above the events
            wrapped = textwrap.wrap(printable(note), max(10, width - 5)) or [""]
            if len(notes) + len(wrapped) + len(lines) > rows:
                continue
            notes[:0] = [[("note " if index == 0 else "     ", "label"), (part, "muted")]
                         for index, part in enumerate(wrapped)]
        return notes + lines or [[("no events", "muted")]]

    @staticmethod
    def _throttled(view: View) -> list[Line]:
        """How long the clocks were held down: of the run, and of the phase shown (any unit, the
        union: a GPU and an EMC throttle over the same 10 s are 10 s)."""
        if view.throttled_s < 0.5:
            return []
        line: Line = [("throttled ", "label"), (f"{view.throttled_s:.0f} s", "crit"),
                      (" of the run", "muted")]
        if view.phase is not None and view.phase_throttled_s >= 0.5:
            line += [(f", {view.phase_throttled_s:.0f} s", "crit"),
                     (f" of {printable(view.phase.name or 'the phase', 24)}", "muted")]
        return [line]

    @staticmethod
    def _when(t_wall: float | None, t_mono: float | None, view: View) -> str:
        if t_wall is not None:
            return datetime.fromtimestamp(t_wall, view.tz).strftime("%H:%M:%S ")
        if t_mono is not None and view.history.first_t_mono is not None:
            return f"+{t_mono - view.history.first_t_mono:.1f}s".rjust(8) + " "
        return "         "

    def compact_lines(self, view: View, width: int) -> list[Line]:
        return self.lines(view, width)

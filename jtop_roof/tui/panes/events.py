"""The events pane: stream events, detector findings, phase boundaries and session notes, the
newest that fit."""

from __future__ import annotations

import itertools
import re
from datetime import datetime
from typing import Any

from jtop_roof.model.event_kinds import Severity, event_kind
from jtop_roof.model.metrics import printable
from jtop_roof.tui.panes.base import Pane, wrap
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line

#: Cells of an entry's time ("01:31:11 "): its wrapped rows start under its text.
WHEN_CELLS = 9
#: A stream event's text style by its kind's severity (``model.event_kinds``).
_STYLE: dict[Severity, str | None] = {"crit": "crit", "warn": "warn", "info": None}


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
                kind = f"{event.kind} {printable(event.unit)} {span:.0f} s: "
                level = "crit" if event_kind(event.kind).severity == "crit" else "warn"
                line: Line = [(when, "muted"), (kind, "label"), (printable(event.detail), level)]
                entries.append((at or 0.0, line))
                continue
            when = self._when(event.t_wall, event.t_mono, view)
            detail = printable(event.detail)
            if event.kind == "gap" and event.gap_s is not None:
                detail = f"no data for {event.gap_s:.1f} s"
            style = _STYLE[event_kind(event.kind).severity]
            kind = "" if detail.startswith(event.kind) else f"{event.kind} "
            entries.append((event.t_mono or 0.0, [(when, "muted"), (kind, "label"), (detail, style)]))
        for mark in history.markers[-rows:]:
            when = self._when(history.wall_at(mark.t_mono), mark.t_mono, view)
            entries.append((mark.t_mono, [(when, "muted"), (_mark_text(mark.kind, mark.name), "phase")]))
        entries.sort(key=lambda item: item[0])
        throttled = [row for line in self._throttled(view) for row in wrap(line, width)]
        room = max(0, rows - len(throttled))
        shown: list[Line] = []
        for _, line in reversed(entries):  # the newest whole entries that fit, each wrapped
            wrapped = wrap(line, width, hang=WHEN_CELLS)
            if len(shown) + len(wrapped) > room:
                if not shown and room:  # the newest alone is taller than the pane: its first rows
                    shown = _cut_short(wrapped[:room], width)
                break
            shown[:0] = wrapped
        lines = throttled + shown
        notes: list[Line] = []
        for note in reversed(view.notes):  # whole notes only, the newest first, above the events
            wrapped = wrap([("note ", "label"), (printable(note), "muted")], width, hang=5)
            if len(notes) + len(wrapped) + len(lines) > rows:
                continue
            notes[:0] = wrapped
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


def _mark_text(kind: str, name: str | None) -> str:
    """``phase resnet50``, ``phase 1`` (not "phase phase 1"), ``phase end``."""
    if kind == "phase_end":
        return "phase end"
    shown = printable(name or "", 40)
    return shown if re.match(r"phase\b", shown, re.IGNORECASE) else f"phase {shown}"


def _cut_short(rows: list[Line], width: int) -> list[Line]:
    """``rows`` with an ellipsis at the end of the last: the entry goes on past them."""
    *first, last = rows
    text = "".join(part for part, _ in last)
    style = last[-1][1] if last else None
    if len(text) >= width:
        last = _trimmed(last, width - 1)
    return [*first, [*last, ("…", style)]]


def _trimmed(line: Line, cells: int) -> Line:
    kept: Line = []
    for part, style in line:
        if cells <= 0:
            break
        kept.append((part[:cells], style))
        cells -= len(part[:cells])
    return kept

"""Placing a recording's sessions on one stream timeline, and saying where a clock broke.

A recording may hold several sessions (appended after a reboot, say), each with its own clocks; and
a clock may run back or jump (a hand-set or NTP-set clock, a board without RTC that logs 1970
first). ``SessionPlacer`` puts every record of a recording on one timeline that never runs back and
never counts a clock being set as time, with a ``gap`` event at each break; ``jump_gaps`` gives the
same events for a plain log's ``Timeline``. The replay's index and ``logfile``'s reader share both,
so a replay and ``report`` place every record alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jtop_roof.model.records import Event
from jtop_roof.model.timeline import MAX_GAP_S, Timeline


class SessionPlacer:
    """Places the sessions of one recording file on one stream timeline.

    A recording appended to (a second ``--record`` of the same file, after a reboot say) holds
    several sessions, each with its own header and monotonic clock. Session B's first record comes
    at A's last + max(B's first wall time - A's last wall time, one interval), with a ``gap`` event
    there, even when B's monotonic clock restarted lower. Within a session times are kept as
    recorded, but a clock that runs back (a sample before the last sample) or jumps more than
    ``MAX_GAP_S`` ahead splits the session there the same way, said by the gap's detail: samples
    are never dropped for coming "late", and no run lasts the decades of a clock being set. A wall
    step beyond ``MAX_GAP_S`` is no time either: the break is then one interval. ``place`` returns
    the stream time and, for a record after a break, the gap event to put before it."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self.sessions = 0
        self._new_session = False
        self._offset = 0.0
        self._last_mono: float | None = None
        self._last_sample: float | None = None
        self._last_wall: float | None = None

    @staticmethod
    def header_interval(header: Mapping[str, Any]) -> bool:
        """True when the header states a usable interval (``new_session`` takes it)."""
        interval_ms = header.get("interval_ms")
        return isinstance(interval_ms, (int, float)) and not isinstance(interval_ms, bool) \
            and 0 < interval_ms <= 3.6e6

    def new_session(self, header: Mapping[str, Any]) -> None:
        """A header line, one this program may read (``logfile.check_header``)."""
        self.sessions += 1
        self._new_session = True
        if self.header_interval(header):
            self.interval_s = header["interval_ms"] / 1000.0

    def place(self, mono: float, wall: float | None, *, sample: bool) -> tuple[float, Event | None]:
        """``sample``: the record is a sample (only a sample before the last one is a clock run back)."""
        gap: Event | None = None
        placed = mono + self._offset
        last = self._last_mono
        if last is None:
            self._offset, placed = 0.0, mono
        elif self._new_session or placed - last > MAX_GAP_S or (
                sample and self._last_sample is not None and placed < self._last_sample):
            step = self.interval_s
            walled = None if wall is None or self._last_wall is None else wall - self._last_wall
            if walled is not None and step < walled <= MAX_GAP_S:
                step = walled
            self._offset += last + step - placed
            gap = Event("gap", self._break_words(placed - last, walled, step), wall, last + step, gap_s=step)
            placed = last + step
        self._new_session = False
        if last is None or placed >= last:
            self._last_mono = placed
            self._last_wall = wall if wall is not None else self._last_wall
        if sample:
            self._last_sample = placed
        return placed, gap

    def _break_words(self, moved: float, walled: float | None, step: float) -> str:
        """What a gap says: a new session, or the clock that ran back or jumped."""
        placed = f"{step:.1f} s after the last"
        if self._new_session:
            if walled is not None and walled > MAX_GAP_S:
                return (f"recording session {self.sessions} starts after its wall clock jumped "
                        f"{elapsed_words(walled)} ahead: placed {placed}")
            return f"recording session {self.sessions} starts {placed}"
        if moved < 0:
            return f"the recording's clock ran back {elapsed_words(-moved)}: what follows is placed {placed}"
        return f"the recording's clock jumped {elapsed_words(moved)} ahead: what follows is placed {placed}"


def elapsed_words(seconds: float) -> str:
    """``12.0 s`` or, past a day, ``19875 days``: the size of a clock's step in a gap's detail."""
    return f"{seconds:.1f} s" if seconds < 86400 else f"{seconds / 86400:.0f} days"


def jump_gaps(timeline: Timeline) -> list[Event]:
    """The gaps of the clock jumps ``timeline`` made since last asked (``Timeline.jumps``)."""
    gaps = [Event("gap", f"the log's clock jumped {elapsed_words(jumped)} ahead: placed "
                  f"{timeline.interval_s:.1f} s after the last", wall, mono, gap_s=timeline.interval_s)
            for wall, mono, jumped in timeline.jumps]
    timeline.jumps.clear()
    return gaps

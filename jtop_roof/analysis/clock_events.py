"""The detectors' events kept as time intervals, and the one answer to "how long was it throttled".

A GPU and an EMC throttle over the same 10 s are 10 s of throttled time, not 20: a span's
throttled time is the union of the events' intervals over units, clipped to the span. Every
consumer (report, compare through the report, the Prometheus counters, the TUI, the verdict)
asks here instead of summing events itself.

A replay plays its events again after a seek back: an event is kept by (kind, unit, start), so
the second pass replaces the first instead of doubling it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jtop_roof.model.event_kinds import event_kind
from jtop_roof.model.records import Event

#: Closed events kept (a day of one-second throttles is 86,400): the oldest are forgotten first.
MAX_KEPT_EVENTS = 200_000

Interval = tuple[float, float]


def _interval(event: Event) -> Interval | None:
    if event.unit is None or event.start_mono is None or event.t_mono is None:
        return None
    return event.start_mono, max(event.start_mono, event.t_mono)


def union_s(intervals: Iterable[Interval], first: float, last: float) -> float:
    """Seconds of [first, last] covered by at least one interval."""
    clipped = sorted((max(a, first), min(b, last)) for a, b in intervals if b > first and a < last)
    total, reach = 0.0, first
    for start, end in clipped:
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


class ClockEvents:
    """The closed detector events of a stream whose kind is ``held`` (``model.event_kinds``:
    ``throttle``, ``mode_cap``, ``mode_check``), by unit."""

    def __init__(self) -> None:
        self._closed: dict[tuple[str, str, float], Event] = {}
        #: Seconds per (unit, kind) of the closed events: one unit's events never overlap (one
        #: detector per unit), so their sum is their union; kept as they come, for the counters.
        self._totals: dict[tuple[str, str], float] = {}

    def add(self, events: Iterable[Event]) -> None:
        for event in events:
            interval = _interval(event)
            if interval is None or not event_kind(event.kind).held:  # a mode_change is a moment
                continue
            assert event.unit is not None
            key = (event.kind, event.unit, interval[0])
            replaced = self._closed.pop(key, None)
            if replaced is not None:
                self._count(replaced, -1.0)
            if len(self._closed) >= MAX_KEPT_EVENTS:
                self._count(self._closed.pop(next(iter(self._closed))), -1.0)
            self._closed[key] = event
            self._count(event, 1.0)

    def _count(self, event: Event, sign: float) -> None:
        interval = _interval(event)
        if interval is not None and event.unit is not None:
            key = (event.unit, event.kind)
            self._totals[key] = self._totals.get(key, 0.0) + sign * (interval[1] - interval[0])

    def closed(self) -> list[Event]:
        """The closed events in stream order."""
        return sorted(self._closed.values(), key=lambda e: e.start_mono or 0.0)

    def seconds(self, first: float | None, last: float | None, active: Sequence[Event] = (), *,
                kind: str = "throttle", unit: str | None = None) -> float:
        """Seconds of [first, last] inside an event of ``kind`` (of ``unit``, else of any unit),
        closed or still ``active``: the union, never a sum over units."""
        if first is None or last is None or last <= first:
            return 0.0
        return union_s(self._intervals(active, kind, unit), first, last)

    def units_touching(self, first: float | None, last: float | None, active: Sequence[Event] = (), *,
                       kind: str = "throttle") -> frozenset[str]:
        """Units with an event of ``kind`` that touches [first, last] (ends included): what the
        verdict calls clock-bound."""
        if first is None or last is None:
            return frozenset()
        return frozenset(e.unit for e in self._events(active, kind) if e.unit is not None
                         and e.start_mono is not None and e.t_mono is not None
                         and e.start_mono <= last and e.t_mono >= first)

    def mode_check(self) -> Event | None:
        """The detectors' doubt about the stated power mode (``detectors.MODE_CHECK``: no unit
        reached the mode's caps before a hold no evidence explains), made once; else None."""
        return next((e for e in self.closed() if e.kind == "mode_check"), None)

    def totals(self, active: Sequence[Event] = ()) -> dict[tuple[str, str], float]:
        """All the time each (unit, kind) spent in its events so far, the open ones included
        (the Prometheus counters)."""
        totals = dict(self._totals)
        for event in active:
            interval = _interval(event)
            if interval is not None and event.unit is not None:
                key = (event.unit, event.kind)
                totals[key] = totals.get(key, 0.0) + interval[1] - interval[0]
        return totals

    def _events(self, active: Sequence[Event], kind: str) -> list[Event]:
        return [e for e in [*self._closed.values(), *active] if e.kind == kind]

    def _intervals(self, active: Sequence[Event], kind: str, unit: str | None) -> list[Interval]:
        found = (_interval(e) for e in self._events(active, kind) if unit is None or e.unit == unit)
        return [interval for interval in found if interval is not None]

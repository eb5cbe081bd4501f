"""The one registry of event kinds: what each ``Event.kind`` means and how each output shows it.

The TUI's header and events pane, the Prometheus metrics, the figure and the report read a kind's
own declaration here instead of lists of their own, so a new kind shows everywhere with one line
in ``EVENT_KINDS`` (``register`` for a plugin or a test). A kind no declaration names (a newer
version's recording) is shown by its name as a plain ``info`` event.

Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

#: How loud a kind is: the events pane's colour (``crit``, ``warn``; ``info``: the plain text).
Severity = Literal["crit", "warn", "info"]


@dataclass(frozen=True, slots=True)
class EventKind:
    """One kind of ``Event``.

    ``meaning``: what it says, in a few words (the report's legend of clock events, the metrics'
    help). ``held``: a detector's hold of one unit's clock over a span (``ClockEvents`` keeps it;
    the report's "Clock events" legend names it; its seconds are summed per unit). ``breaks``: a
    break in the stream (the energy ledger bridges nothing across it). ``header``: the word the
    TUI's header shows while one is in progress (``THROTTLED``), None: not flagged. ``metric``: the
    Prometheus stem, ``jroof_<metric>_seconds_total{unit}`` (held kinds), and, where
    ``active_help`` is given, the gauge ``jroof_<metric>_active{unit}`` (throttle's and mode_cap's
    gauges are by reason instead, ``serve``). ``plot``: how the figure draws its span (``solid``
    red, ``hatched`` orange), None: not drawn."""

    name: str
    meaning: str
    severity: Severity = "warn"
    held: bool = False
    breaks: bool = False
    header: str | None = None
    metric: str | None = None
    seconds_help: str = ""
    active_help: str | None = None
    plot: Literal["solid", "hatched"] | None = "hatched"


EVENT_KINDS: list[EventKind] = [
    # A detector's (``analysis.detectors``): a clock held down, per unit.
    EventKind("throttle", "held below the mode's cap while saturated", "crit", held=True, header="THROTTLED",
              metric="throttle", seconds_help="Seconds throttled: held below the mode's cap while busy.",
              plot="solid"),
    EventKind("mode_cap", "below the device's maximum with the mode unknown", held=True, metric="mode_cap",
              seconds_help="Seconds below the device's maximum while busy with the power mode unknown."),
    EventKind("mode_check", "the stated mode's caps never reached", held=True),
    # ``analysis.mode_changes``: a moment, the board's.
    EventKind("mode_change", "the power mode changed within the stream"),
    # The stream's own (sources, the reader of files).
    EventKind("gap", "no data for a while", "crit", breaks=True),
    EventKind("source_error", "the source failed", "crit", breaks=True),
    EventKind("source_restart", "the source was started again", "info", breaks=True),
    EventKind("seek", "a replay jumped", "info", breaks=True),
    EventKind("note", "a note of the reader or the source", "info"),
]


def event_kind(name: str) -> EventKind:
    """The declaration of ``name``; one made up (a plain ``info`` event) for a kind none declares."""
    for kind in EVENT_KINDS:
        if kind.name == name:
            return kind
    return EventKind(name, name, "info")


def kind_names(*, held: bool | None = None, breaks: bool | None = None) -> tuple[str, ...]:
    """The declared kinds' names, in order; only the held ones (or not) and the breaks (or not)."""
    return tuple(k.name for k in EVENT_KINDS
                 if (held is None or k.held == held) and (breaks is None or k.breaks == breaks))


def register(kind: EventKind) -> Callable[[], None]:
    """Declare ``kind`` (a plugin's, a test's); returns what takes it out again."""
    if any(k.name == kind.name for k in EVENT_KINDS):
        raise ValueError(f"event kind {kind.name!r} is declared already")
    EVENT_KINDS.append(kind)
    return lambda: EVENT_KINDS.remove(kind)

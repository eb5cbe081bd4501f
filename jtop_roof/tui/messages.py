"""Messages from the source worker thread to the app (``post_message`` is thread-safe; handlers run
on the event loop, so only they touch history and widgets), and the short form of a notice the
app shows for a moment (the whole of it stays in Events)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual.message import Message

from jtop_roof.model.records import Record
from jtop_roof.runtime.control import WorkReport
from jtop_roof.runtime.runtime import Described


@dataclass
class RecordsReceived(Message, bubble=False):
    """Records from the source, already written to the recording, in stream order: a sample, marker
    or event with the readings taken since the last one before it (power at 5 Hz, processes), so
    that the event loop wakes once a sample, not once a reading."""

    records: tuple[Record, ...]
    #: Which board's stream (``--ssh a --ssh b``): its index in the app's streams.
    stream: int = 0


class PlotResized(Message):
    """A plot was laid out at a new size: it is drawn again for it (its time ticks and labels, its
    points), not only its old drawing laid out again; a paused replay sends no record to do it."""


@dataclass
class SourceEnded(Message, bubble=False):
    """``records()`` returned (``error`` None) or raised (``error`` says what)."""

    error: str | None = None
    stream: int = 0


@dataclass
class RecordingFailed(Message, bubble=False):
    """Writing the recording failed in the worker (disk full, I/O error); recording stopped."""

    error: str
    stream: int = 0


@dataclass
class SourceDescribed(Message, bubble=False):
    """``Runtime.describe()``: the board, power mode, trip points and hints, and for a whole
    replayed file its ledger and trtexec's phases, all fetched in the worker (it may run commands
    such as ``nvpmodel -q`` and read the whole file)."""

    described: Described
    stream: int = 0


@dataclass
class MarkerRequested(Message, bubble=False):
    """A phase boundary asked for from outside the UI (``jroof-tui mark`` from a benchmark script)."""

    kind: str
    name: str | None
    origin: str = "script"


@dataclass
class WorkRequested(Message, bubble=False):
    """Work a benchmark reported through the hook (``jroof-tui mark --work``)."""

    report: WorkReport


#: Characters of a notice's toast: two lines of a narrow toast, so that the panes stay visible.
NOTICE_CHARS = 72
#: How long a notice's toast stays, in seconds.
NOTICE_SECONDS = 4.0


def short_notice(text: str) -> str:
    """A notice's first sentence, cut to ``NOTICE_CHARS``, pointing to Events where the whole
    text stays."""
    first = re.split(r"(?<=[.;])\s", text.strip(), maxsplit=1)[0].rstrip(".;")
    if first == text.strip().rstrip(".") and len(first) <= NOTICE_CHARS:
        return first
    room = NOTICE_CHARS - len(" … (in Events)")
    cut = first if len(first) <= room else first[:room].rsplit(" ", 1)[0]
    return f"{cut} … (in Events)"

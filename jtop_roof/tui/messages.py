"""Messages from the source worker thread to the app (``post_message`` is thread-safe; handlers run
on the event loop, so only they touch history and widgets)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual.message import Message

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Marker, Record, Work
from jtop_roof.runtime.control import WorkReport


@dataclass
class RecordReceived(Message, bubble=False):
    """One record (sample, marker or event) from the source, already written to the recording."""

    record: Record
    #: Which board's stream (``--ssh a --ssh b``): its index in the app's streams.
    stream: int = 0


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
    """``source.describe()`` (board, power mode, trip points, hints), fetched in the worker because
    it may run commands such as ``nvpmodel -q``; for a whole replayed file, also its ledger (read
    in the worker too) and how to build it again with this session's markers."""

    info: SourceInfo
    ledger_builder: Callable[[Sequence[Marker | Work]], EnergyLedger] | None = None
    ledger: EnergyLedger | None = None
    #: Phases and work from beside the stream (``--trtexec``), placed on its timeline.
    extras: list[Marker | Work] | None = None
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

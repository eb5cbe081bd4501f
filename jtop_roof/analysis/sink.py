"""The recording the pipeline's records go to: written ahead by the stream's worker, and by the
pipeline for what it made (markers, work, detector events); each record of a replay once.

Nothing here imports Textual.
"""

from __future__ import annotations

import threading

from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.records import Event, Marker, PowerReading, ProcessReading, Record, Sample, Work

#: Non-sample records a replay's sink remembers having written (markers and events of a replay
#: come again after a seek back; each is written once). Bounded: the oldest are forgotten.
WRITTEN_KEYS_LIMIT = 100_000


class RecordingSink:
    """The recording the worker and the UI both write to; swapped and closed under a lock.

    Stream records are written by the pump before they are analysed (write-ahead); as the
    pipeline's subscriber it writes what the pipeline made (markers, work, detector events).

    With ``forward_only`` (replays), a record read from the file is written only the first time the
    stream passes it: samples only when their stream time moves forward, markers and events once
    (a seek back plays them again). Markers made in this session are always written. Seek events
    are never written: they describe the viewer, not the board."""

    def __init__(self, recorder: Recorder | None = None, *, forward_only: bool = False) -> None:
        self._lock = threading.Lock()
        self._recorder = recorder
        self._forward_only = forward_only
        self._last_mono: float | None = None
        self._last_power: dict[str, float] = {}  # a power stream's newest reading written, by source
        self._written: dict[tuple[object, ...], None] = {}

    @property
    def path(self) -> str | None:
        with self._lock:
            return None if self._recorder is None else self._recorder.path

    def start(self, recorder: Recorder) -> None:
        with self._lock:
            previous, self._recorder = self._recorder, recorder
            self._last_mono = None
            self._last_power.clear()
            self._written.clear()
        if previous is not None:
            previous.close()

    def stop(self) -> None:
        with self._lock:
            recorder, self._recorder = self._recorder, None
        if recorder is not None:
            recorder.close()

    def write(self, record: Record, *, from_stream: bool = True) -> None:
        """Write one record; ``from_stream`` False for what this session made (a marker, a
        detector's event). Raises OSError when the file cannot be written (the caller stops
        recording)."""
        with self._lock:
            if self._recorder is None:
                return
            if isinstance(record, Event) and record.kind == "seek":
                return  # the viewer's, not the board's
            if isinstance(record, Event) and from_stream and record.unit is not None:
                return  # a detector's event read back: the detectors make it again
            if self._forward_only and from_stream and not self._first_pass(record):
                return
            self._recorder.write(record)

    def on_record(self, record: Record, *, made_here: bool) -> None:
        if made_here:
            self.write(record, from_stream=False)

    def on_finish(self) -> None:
        """Closing is the owner's: a replay's recording outlives the stream's end."""

    def _first_pass(self, record: Record) -> bool:
        if isinstance(record, Sample):
            if record.t_mono is None:
                return True
            if self._last_mono is not None and record.t_mono <= self._last_mono:
                return False
            self._last_mono = record.t_mono
            return True
        if isinstance(record, (PowerReading, ProcessReading)):  # a stream of its own, by its source
            last = self._last_power.get(record.source)
            if record.t_mono is None or (last is not None and record.t_mono <= last):
                return record.t_mono is None
            if last is not None or len(self._last_power) < WRITTEN_KEYS_LIMIT:
                self._last_power[record.source] = record.t_mono
            return True
        if isinstance(record, Marker):
            key: tuple[object, ...] = ("marker", record.kind, record.name, record.t_mono, record.origin)
        elif isinstance(record, Work):
            key = ("work", record.iterations, record.flops, record.bytes, record.t_mono)
        else:
            key = ("event", record.kind, record.detail, record.t_mono)
        if key in self._written:
            return False
        if len(self._written) >= WRITTEN_KEYS_LIMIT:
            del self._written[next(iter(self._written))]
        self._written[key] = None
        return True

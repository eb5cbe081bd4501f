"""The one analysis path under every consumer: TUI, headless ``record`` and ``report``.

Records (samples, markers, events) enter in stream order through ``Pipeline.ingest`` and the
pipeline owns what follows from them: the display history, the phases and their energy (the
ledger), the detector events (``ClockEvents``), and the derived numbers, each one query: the
throttled time of a span, a phase's roof placement, the "now" of a marker. Consumers listen
through ``Pipeline.subscribe`` (the recording, the Prometheus metrics) and ask the queries; none
recomputes a number, so they can never differ for the same samples. ``runtime`` builds every
pipeline and runs the one pump loop that feeds it.

Threads: a source runs in a worker thread that writes each stream record to the sink at once
(write-ahead: what was measured is on disk even if the screen stalls); the analysis (``ingest``)
and the subscribers run in whichever thread owns the pipeline: the TUI's event loop, or the
headless loop itself.

Replay: the ledger is the whole file's (``load_ledger``: ``analysis.replay_ledger`` owns it, and
the ledger of what played since the last seek, which shows an open phase as far as the play head).
Where no whole file exists (live, follow, the looping demo, ``serve``) the ledger takes the stream
forward only: a record played again after a seek back is not counted twice.

Nothing here imports Textual.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from jtop_roof.analysis.clock_events import ClockEvents
from jtop_roof.analysis.ledger import BREAK_EVENTS, RESUME_ORIGIN, EnergyLedger, SpanStats
from jtop_roof.analysis.replay_ledger import ReplayLedger, apply_extra, comes_before
from jtop_roof.analysis.sink import RecordingSink as RecordingSink  # re-exported for its users
from jtop_roof.analysis.timesonly import history_for
from jtop_roof.analysis.verdict import Placement, place
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import (
    MARKER_KINDS,
    Event,
    Marker,
    PowerReading,
    ProcessReading,
    Record,
    Sample,
    Work,
)
from jtop_roof.roofline.board import Board, resolve_board
from jtop_roof.roofline.devices import Device
from jtop_roof.roofline.inference import BoardObservation
from jtop_roof.roofline.workload import Workload


@dataclass(frozen=True, slots=True)
class StreamContext:
    """What detectors judge a sample against: the source's description, the stream interval, and
    the device and power mode (their caps)."""

    info: SourceInfo
    interval_s: float
    board: Board


class Detector(Protocol):
    """Turns the sample stream into events (throttling, DVFS caps...). Pure: the same samples in
    the same context give the same events, live or replayed. Called for every record in order."""

    def observe(self, record: Record, context: StreamContext) -> Sequence[Event]:
        """Events that closed with this record."""
        ...

    def active(self, context: StreamContext) -> Sequence[Event]:
        """Events in progress (not closed yet), as they stand."""
        ...

    def finish(self, context: StreamContext) -> Sequence[Event]:
        """The stream ended: close what is open."""
        ...


class Subscriber(Protocol):
    """Listens to what a pipeline analysed: the recording, the Prometheus metrics."""

    def on_record(self, record: Record, *, made_here: bool) -> None:
        """A record just analysed, in stream order: from the stream, or ``made_here`` (a detector's
        event, a marker or work of this session). May raise OSError (a file that cannot be
        written): the pipeline hands it to whoever made the record."""
        ...

    def on_finish(self) -> None:
        """The stream ended; the detectors' last events came before this."""
        ...


class Pipeline:
    """History, phases, energy, detectors and the recording of one stream (see the module doc)."""

    def __init__(
        self,
        *,
        history_s: float,
        interval_s: float,
        info: SourceInfo | None = None,
        sink: RecordingSink | None = None,
        detectors: Sequence[Detector] = (),
        devices: Mapping[str, Device] | None = None,
        device_id: str | None = None,
        power_mode: str | None = None,
        replayed: bool = False,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """``devices``: the device database (with the config's entries); ``device_id`` and
        ``power_mode``: what the user said (``--device``, ``--power-mode``) over what the source says.
        ``replayed``: the stream is a file played back (a marker made now sits at the newest
        sample); else it is live (a marker moves on from it by ``clock``'s time)."""
        self._history_s = history_s
        self.interval_s = interval_s
        self.history = history_for(history_s, interval_s)
        self.info = info if info is not None else SourceInfo("unknown")
        self._ledger = EnergyLedger(interval_s, _samples_source(self.info))
        self._replay: ReplayLedger | None = None  # a replayed whole file's ledgers (``load_ledger``)
        self.sink = sink if sink is not None else RecordingSink()
        self.detectors = list(detectors)
        self.clock_events = ClockEvents()
        self._subscribers: list[Subscriber] = [self.sink]
        self._replayed = replayed
        self._clock = clock
        self._wall_clock = wall_clock
        self._anchor: tuple[float | None, float, float] | None = None  # newest sample's times, our clock
        self._power_anchor: tuple[float | None, float, float] | None = None  # newest power reading's
        self._seeked = False  # a replay jumped: the stream may play records the ledger took
        self._ledger_version = 0  # ``ledger_version``
        self._session_markers: list[Marker | Work] = []  # made here (markers shown again after seeks)
        self._redisplay: list[Marker] = []  # after a seek: session markers not yet passed again
        self.processes_now: ProcessReading | None = None  # the newest process reading (Processes pane)
        self._ledger_markers: set[tuple[object, ...]] = set()  # stream markers the ledger took
        self._devices = devices if devices is not None else {}
        self._device_id = device_id
        self._power_mode = power_mode
        self._board: tuple[tuple[int, bool], Board] | None = None
        self._context: StreamContext | None = None
        self._info_version = 0
        self._observed: BoardObservation | None = None
        self._observed_later: Future[BoardObservation] | None = None

    # ------------------------------------------------------------------------------ setup

    def subscribe(self, subscriber: Subscriber) -> None:
        """``subscriber`` hears every record analysed from now on, and the stream's end."""
        self._subscribers.append(subscriber)

    def describe(self, info: SourceInfo) -> None:
        """The source described itself: keep it, and size history for the stream's own interval
        (a replayed 100 ms log, say) while nothing has been shown yet."""
        self.info = info
        self._info_version += 1
        interval_ms = info.interval_ms
        if interval_ms is not None and len(self.history) == 0 and self.history.version == 0:
            interval_s = interval_ms / 1000.0
            if interval_s != self.interval_s:
                self.interval_s = interval_s
                self.history = history_for(self._history_s, interval_s)
                if self._replay is None:
                    self._ledger = EnergyLedger(interval_s)
        if self._replay is None:
            self._ledger.samples_source = _samples_source(info)

    def observe_board(self, observed: BoardObservation,
                      later: Future[BoardObservation] | None = None) -> None:
        """What a file's samples show of a board nothing names (``roofline.inference``);
        ``later``: what the whole file shows, being read elsewhere (a replay's first samples
        are ``observed``), taken when it is there."""
        self._observed = observed
        self._observed_later = later
        self._info_version += 1

    @property
    def context(self) -> StreamContext:
        """Made again only when the description, the interval or the board changed (detectors ask
        it for every sample)."""
        board, made = self.board, self._context
        if made is None or made.board is not board or made.info is not self.info \
                or made.interval_s != self.interval_s:
            made = self._context = StreamContext(self.info, self.interval_s, board)
        return made

    @property
    def board(self) -> Board:
        """The device and power mode of the stream (``board.resolve_board``), resolved again when
        the source describes itself and once a sample tells the RAM size (32 or 64 GB)."""
        later = self._observed_later
        if later is not None and later.done():
            self._observed_later = None
            if later.exception() is None:
                self.observe_board(later.result())
        latest = self.history.latest
        ram_mb = None if latest is None or latest.ram is None else latest.ram.total_mb
        key = (self._info_version, ram_mb is not None)
        if self._board is None or self._board[0] != key:
            board = resolve_board(self.info, self._devices, device_id=self._device_id,
                                  power_mode=self._power_mode, ram_total_mb=ram_mb, observed=self._observed)
            self._board = (key, board)
        return self._board[1]

    @property
    def ledger_from_file(self) -> bool:
        """True when the ledger holds a whole replayed file (not just what has been played)."""
        return self._replay is not None

    def load_ledger(
        self, build: Callable[[Sequence[Marker | Work]], EnergyLedger],
        ledger: EnergyLedger | Future[EnergyLedger] | None = None,
    ) -> None:
        """Replay: the ledger comes from the whole file (``build`` reads it, with this session's
        markers merged in), not from what has been played. ``ledger``: already built (by the
        source's thread) for no session markers, or being built (a ``Future``: a long file is
        read while it plays; the ledger is empty until it is there, then it is taken, at the
        first ``ledger`` or ``ledger_version`` asked after, and waited for at ``finish``).
        Markers made here before it are placed by a read again in the background."""
        played = EnergyLedger(self.interval_s, _samples_source(self.info))
        self._replay = ReplayLedger(build, ledger, made=self._session_markers, played=played,
                                    unplayed=self._redisplay)
        self._ledger_version += 1
        self._take_ready()

    @property
    def ledger(self) -> EnergyLedger:
        """Phases and energy: the whole file's in a replay, else what the stream gave."""
        self._take_ready()
        return self._ledger

    @property
    def ledger_version(self) -> int:
        """Bumped when the ledger changes (a pane shows phases and energy from it)."""
        self._take_ready()
        return self._ledger_version

    @property
    def still_reading(self) -> bool:
        """True while the whole replayed file is still being read elsewhere for its ledger (a
        first read, or again with this session's markers) or its board: what is shown of them
        is not yet the whole file's."""
        later = self._observed_later
        return ((self._replay is not None and self._replay.still_reading)
                or (later is not None and not later.done()))

    def _take_ready(self) -> None:
        """Take the whole file's ledger where a read of it has finished."""
        taken = None if self._replay is None else self._replay.take_ready()
        if taken is not None:
            self._ledger = taken
            self._ledger_version += 1

    @property
    def next_auto_name(self) -> str:
        """What the next unnamed phase start is called: the ledger's next name, counting the
        phase starts made here that a ledger still being read again does not hold yet."""
        if self._replay is None:
            return self.ledger.next_auto_name
        return self._replay.next_auto_name(self.ledger, self._session_markers)

    # ----------------------------------------------------------------------------- records

    def ingest(self, record: Record) -> list[Event]:
        """One record from the stream, in order; returns the events detectors made of it (they
        are ingested, and heard by the subscribers, the recording among them, before the record).
        A detector's event read back from a recording is dropped: the detectors make it again
        from the samples."""
        if self.detectors and _made_by_detector(record):
            return []
        self._analyse(record)
        found: list[Event] = []
        if self.detectors:
            context = self.context
            found = [event for detector in self.detectors for event in detector.observe(record, context)]
            if found:
                self._keep(found)  # they end at an earlier sample: heard first
        self._publish(record, made_here=False)
        return found

    def finish(self) -> list[Event]:
        """The stream ended (stop, end of file): the detectors close what is open, and those
        events are kept and recorded like the others; then the subscribers hear the end (a whole
        file's ledger still being read is waited for first)."""
        taken = None if self._replay is None else self._replay.finish()
        if taken is not None:
            self._ledger = taken
            self._ledger_version += 1
        context = self.context
        found = [event for detector in self.detectors for event in detector.finish(context)]
        self._keep(found)
        for subscriber in self._subscribers:
            subscriber.on_finish()
        return found

    def active_events(self) -> list[Event]:
        """Detector events in progress (the header's THROTTLED flag)."""
        context = self.context
        return [event for detector in self.detectors for event in detector.active(context)]

    def _keep(self, events: list[Event]) -> None:
        self.clock_events.add(events)
        for event in events:
            self._analyse(event)
            # An error here: the next stream record meets the same one and stops the recording.
            self._publish(event, made_here=True)

    def _publish(self, record: Record, *, made_here: bool) -> OSError | None:
        """Tell every subscriber; the first write error is returned, the others still hear it."""
        error: OSError | None = None
        for subscriber in self._subscribers:
            try:
                subscriber.on_record(record, made_here=made_here)
            except OSError as exc:
                error = error or exc
        return error

    def mark(self, kind: str, name: str | None, origin: str, t_wall: float | None,
             t_mono: float | None) -> tuple[Marker, OSError | None]:
        """A phase boundary made in this session (a key, a script): named (``phase N`` when not
        given), ingested, and written. Returns the marker and the write error, if any (the
        marker is kept in the analysis either way)."""
        if kind not in MARKER_KINDS:
            raise ValueError(f"marker kind must be one of {', '.join(MARKER_KINDS)}, not {kind!r}")
        if kind == "phase_start" and not name:
            name = self.next_auto_name
        marker = Marker(kind, name if kind == "phase_start" else None, t_wall, t_mono, origin)
        self._analyse(marker, session=True)
        error = self._publish(marker, made_here=True)
        if marker.t_mono is not None:
            self._session_markers.append(marker)
            self._rebuild()
        return marker, error

    def work(self, iterations: float, flops: float | None, bytes_: float | None, precision: str | None,
             t_wall: float | None, t_mono: float | None) -> tuple[Work, OSError | None]:
        """Work a script reported (the reporting hook), stamped now: added to the running phase
        and the run, and written as a ``work`` record. Returns it and the write error, if any."""
        report = Work(iterations, flops, bytes_, precision, t_wall, t_mono)
        self._analyse(report, session=True)
        error = self._publish(report, made_here=True)
        if report.t_mono is not None:
            self._session_markers.append(report)
            self._rebuild()
        return report, error

    def add_extras(self, extras: Sequence[Marker | Work]) -> None:
        """Markers and work from beside the stream (a trtexec log of the same run, in a replay):
        into the ledger (rebuilt from the file with them) and shown as the stream passes them."""
        timed = [extra for extra in extras if extra.t_mono is not None]
        self._session_markers += timed
        self._redisplay = sorted([*self._redisplay, *(m for m in timed if isinstance(m, Marker))],
                                 key=lambda m: m.t_mono or 0.0)
        if self._replay is not None:
            self._replay.add_extras(timed)
        self._rebuild()

    def _rebuild(self) -> None:
        """A replay's file ledger is read again where it lacks a marker made here."""
        if self._replay is not None:
            self._replay.rebuild(self._session_markers)

    def resume_marker(self, t_wall: float | None, t_mono: float | None) -> Marker | None:
        """For a recording started mid-phase: the open phase's start, stamped now, origin
        ``resume`` (readers continue the phase rather than count a new one)."""
        phase = self.current_phase
        if phase is None:
            return None
        return Marker("phase_start", phase or None, t_wall, t_mono, RESUME_ORIGIN)

    @property
    def current_phase(self) -> str | None:
        """The phase open at the newest record shown ('' for an unnamed one), else None."""
        return self.history.current_phase

    # ---------------------------------------------------------------------- derived numbers

    def now(self) -> tuple[float | None, float | None]:
        """(t_wall, t_mono) of a marker made now: the newest sample's, moved on by the time since
        it was analysed when live (a replay's stays at its sample); our clock before any sample
        of a live stream, nothing of a replay's. Where a power stream runs beside the samples, the
        later of the two (its readings come more often: less of the time is guessed)."""
        anchors = [a for a in (self._anchor, self._power_anchor) if a is not None]
        if not anchors:
            return (None, None) if self._replayed else (self._wall_clock(), self._clock())
        if self._replayed:
            t_wall, t_mono, _ = max(anchors, key=lambda anchor: anchor[1])
            return t_wall, t_mono
        now = self._clock()
        return self._wall_clock(), max(t_mono + max(0.0, now - seen_at) for _, t_mono, seen_at in anchors)

    def throttled_s(self, span: SpanStats, unit: str | None = None) -> float:
        """Seconds of the span (edge to edge) inside a throttle of ``unit``, else of any
        unit: the union over units, closed and open events alike."""
        return self.clock_events.seconds(span.first_mono, span.last_mono, self.active_events(), unit=unit)

    def at_play_head(self, span: SpanStats) -> SpanStats:
        """A replay's open phase as far as the play head (``ReplayLedger.at_play_head``)."""
        replay = self._replay
        return span if replay is None else replay.at_play_head(span, self.history.last_t_mono)

    def placement(self, span: SpanStats, workload: Workload | None) -> Placement:
        """The span on the roof: achieved rates, intensity, efficiency and the verdict (clock-bound
        where the bounding unit throttled during it)."""
        throttled = self.clock_events.units_touching(span.first_mono, span.last_mono, self.active_events())
        return place(span, self.board, throttled, workload)

    # ---------------------------------------------------------------------------- internals

    def _analyse(self, record: Record, *, session: bool = False) -> None:
        replay = self._replay
        live_ledger = replay is None
        ledger = self._ledger if replay is None else replay.played  # a replay's: what played
        if replay is not None:
            replay.before(record)  # the session's markers stamped before it, as the file's ledger
        if isinstance(record, Sample):
            if not record.is_sample:
                return
            self.history.append(record)
            t_mono = self.history.last_t_mono
            assert t_mono is not None
            self._anchor = (record.t_wall, t_mono, self._clock())
            total = record.power_total
            ledger.add_sample(
                t_mono, record.t_wall, None if total is None else total.mw,
                {name: rail.now_mw for name, rail in record.rails.items()},
                gpu_mhz=None if record.gpu is None else record.gpu.mhz,
                emc_mhz=None if record.emc is None else record.emc.mhz,
                gpu_load=None if record.gpu is None else record.gpu.load_pct,
                emc_load=None if record.emc is None else record.emc.load_pct,
            )
            self._ledger_version += 1
            if replay is not None:
                replay.after_sample(t_mono)
            while self._redisplay and (self._redisplay[0].t_mono or 0.0) <= t_mono:
                self.history.add_marker(self._redisplay.pop(0))
        elif isinstance(record, Marker):
            if record.t_mono is None:
                record.t_mono = self.history.last_t_mono
            self.history.add_marker(record)
            if live_ledger and (session or self._first_time_for_ledger(record)):
                apply_extra(self._ledger, record)
                self._ledger_version += 1
            elif not live_ledger:  # what played (a replay's)
                apply_extra(ledger, record)
        elif isinstance(record, Work):
            if live_ledger and (session or self._first_work(record)):
                apply_extra(self._ledger, record)
                self._ledger_version += 1
            elif not live_ledger:
                apply_extra(ledger, record)
        elif isinstance(record, ProcessReading):
            self.processes_now = record
            ledger.add_processes(record)
            self._ledger_version += 1
        elif isinstance(record, PowerReading):
            anchor, t_mono = self._power_anchor, record.t_mono
            if t_mono is not None and (anchor is None or t_mono >= anchor[1]):
                self._power_anchor = (record.t_wall, t_mono, self._clock())
            ledger.add_power(record)
            self._ledger_version += 1
        else:
            if record.kind == "seek":
                # The replay refills history from the file; this session's markers come back as
                # the stream passes them. The ledger is not touched (it never counts twice).
                self.history.clear()
                self._anchor = self._power_anchor = None
                self._seeked = True
                if replay is not None:
                    played = EnergyLedger(self.interval_s, _samples_source(self.info))
                    replay.seek(self._session_markers, played)
                self._redisplay = sorted((m for m in self._session_markers if isinstance(m, Marker)),
                                         key=lambda m: m.t_mono or 0.0)
            elif record.kind in BREAK_EVENTS:
                ledger.add_break(record.kind, record.t_mono)
                self._ledger_version += 1
            self.history.add_event(record)

    def _first_work(self, work: Work) -> bool:
        """A work report from the stream counts once (not again after a replay's seek back)."""
        last = self._ledger.last_mono
        return not self._seeked or last is None or work.t_mono is None or work.t_mono >= last

    def _first_time_for_ledger(self, marker: Marker) -> bool:
        """A marker from the stream counts once: a replay plays it again after a seek back. (Without
        a seek, one stamped before a reading already taken is the ledger's to place.)"""
        last = self._ledger.last_mono
        if self._seeked and last is not None and marker.t_mono is not None and marker.t_mono < last:
            return False
        key = (marker.kind, marker.name, marker.t_mono, marker.origin)
        if key in self._ledger_markers:
            return False
        self._ledger_markers.add(key)
        return True


def _samples_source(info: SourceInfo) -> str:
    """What gave a stream's samples, for naming their energy: the recording's source, else the live
    one's; a plain log is tegrastats'."""
    recorded = info.header.get("source")
    if isinstance(recorded, str) and recorded:
        return recorded[:64]
    return "tegrastats" if info.source in ("replay", "unknown") else info.source


def _made_by_detector(record: Record) -> bool:
    """An event with a unit is a detector's (``model.Event``)."""
    return isinstance(record, Event) and record.unit is not None


def build_ledger(
    records: Iterable[Record], interval_s: float, extra_markers: Sequence[Marker | Work] = ()
) -> EnergyLedger:
    """A ledger from a whole stream (a file read by the reader), with ``extra_markers`` (made in
    this session) placed among the records by stream time: the same arithmetic as live. A marker
    made at a sample's time comes after that sample (it was made while the sample was shown)."""
    pipeline = Pipeline(history_s=0.0, interval_s=interval_s)
    pending = sorted((m for m in extra_markers if m.t_mono is not None), key=lambda m: m.t_mono or 0.0)
    for record in records:
        while pending and record.t_mono is not None and comes_before(pending[0], record):
            apply_extra(pipeline.ledger, pending.pop(0))
        pipeline.ingest(record)
    for extra in pending:
        apply_extra(pipeline.ledger, extra)
    return pipeline.ledger

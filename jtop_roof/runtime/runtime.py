"""One runtime under every command: source -> pipeline -> subscribers, built here, fed by one pump.

The monitor, ``record``, ``run``, ``serve``, ``report``, ``export``, ``compare`` and ``plot`` all get
their pipeline from ``build_pipeline`` (the device database with the config's entries, the user's
``--device`` and ``--power-mode``, fresh detectors) and feed it through ``pump``, so the numbers
they show can never differ for the same samples. A ``Runtime`` is one live or replayed source with
its pipeline: ``describe`` runs in the source's thread (it may run commands, and it starts reading a
whole replayed file's ledger, once, in a thread of its own: a long file plays while it is read),
``apply`` in the pipeline's, and ``pump`` in the source's
again. Consumers listen through ``Pipeline.subscribe``; nothing wraps ``ingest``. The pump loop
itself is ``analysis.pump`` (re-exported here), below the probe, whose sampler runs it too.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from itertools import chain, islice
from typing import TypeVar

from jtop_roof.analysis.detector_registry import make_detectors
from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.analysis.pipeline import Pipeline, RecordingSink, build_ledger
from jtop_roof.analysis.pump import NO_LOCK
from jtop_roof.analysis.pump import never as never  # re-exported for its users
from jtop_roof.analysis.pump import pump as pump
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.errors import UserError
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Marker, Record, Sample, Work
from jtop_roof.roofline.board import resolve_board
from jtop_roof.roofline.devices import load_devices
from jtop_roof.roofline.inference import BoardObservation, BoardObserver, observe
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.inputs import trtexec_extras
from jtop_roof.runtime.lifecycle import STOP_SIGNALS, Consumer, Drained, run_to_end
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.sources.replay import ReplaySource

T = TypeVar("T")
LedgerBuilder = Callable[[Sequence[Marker | Work]], EnergyLedger]
#: How long ``describe`` waits for a replayed file's whole ledger before it lets the file play
#: while the rest is read (a day-long log's takes seconds; a short one's is there at once).
LEDGER_WAIT_S = 0.25


def build_pipeline(
    config: Config, info: SourceInfo, *, interval_s: float | None = None, history_s: float = 0.0,
    recorder: Recorder | None = None, replayed: bool = False,
    clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time,
) -> Pipeline:
    """The one factory of pipelines. ``interval_s``: the stream's spacing (default: the source's,
    else the config's); ``history_s``: display history to keep (the TUI's; reports need none);
    ``replayed``: a file played back (its recording takes each record once, and markers made now
    sit at the newest sample)."""
    if interval_s is None:
        interval_s = (info.interval_ms or config.interval_ms) / 1000.0
    return Pipeline(
        history_s=history_s, interval_s=interval_s, info=info,
        sink=RecordingSink(recorder, forward_only=replayed),
        detectors=make_detectors(config.detectors), devices=load_devices(config.devices),
        device_id=config.device, power_mode=config.power_mode,
        replayed=replayed, clock=clock, wall_clock=wall_clock,
    )


#: Samples a plain log's board is first inferred from, before they play (``play_whole``); at
#: most ``FIRST_LOOK_RECORDS`` records are held for it (a power stream read at 50 Hz beside 1 Hz
#: samples: 400 samples), so a recording of mostly power readings is neither held whole nor
#: judged from its first few dozen samples.
FIRST_LOOK, FIRST_LOOK_RECORDS = 2000, 20_000
#: Records ``play_whole`` reads at a time: a batch is decoded, then observed, then played. Read and
#: played by turns, record by record, each step evicts the other's working set from the CPU's
#: caches, and the pipeline's cost per sample about doubles (a day-long log: 2.05 s against 1.55 s).
READ_AHEAD = 128
#: The collector's first threshold while a whole stream plays (``few_collections``). A batch of
#: ``READ_AHEAD`` records holds about 6 objects the collector tracks a sample (the Sample, its
#: lists and dicts), past the default 700: every batch set off a collection that freed nothing and
#: moved the batch on to older generations, whose full collections then walked the whole heap
#: (5-8 % of a recording's report here). Raised, a collection comes every few thousand records.
PLAY_GC_THRESHOLD = 10_000


def play_whole(make: Callable[[], Pipeline], records: Callable[[], Iterable[Record]]
               ) -> tuple[Pipeline, list[Event]]:
    """A whole stream (``records()``) through a pipeline (``make()``) and the pump to its end, with
    the events its detectors made. Where nothing names the board or its mode (a plain log), its
    first ``FIRST_LOOK`` samples (``first_look``) infer it before they play and the rest are
    observed as they play; only if the whole stream shows another board than its start is it
    played again, through a fresh pipeline that knows the whole's board from its first sample:
    every sample is judged against the board the whole file shows, while the stream is read once
    in the usual case."""
    with few_collections():
        return _play_whole(make, records)


def _play_whole(make: Callable[[], Pipeline], records: Callable[[], Iterable[Record]]
                ) -> tuple[Pipeline, list[Event]]:
    pipeline = make()
    if not pipeline.board.open_to_inference:
        return pipeline, _played(pipeline, read_ahead_of(records()))
    stream = iter(records())
    observer = BoardObserver()
    first = list(first_look(stream))
    for record in first:
        observer.add(record)
    pipeline.observe_board(observer.observation())
    events = _played(pipeline, chain(first, read_ahead_of(stream, observer)))
    guessed = pipeline.board
    pipeline.observe_board(whole := observer.observation())
    if pipeline.board == guessed:
        return pipeline, events
    fresh = make()
    fresh.observe_board(whole)
    return fresh, _played(fresh, read_ahead_of(records()))


_gc_lock = threading.Lock()
_gc_held: list[tuple[int, int, int]] = []  # the thresholds before the first of the plays now going


@contextmanager
def few_collections() -> Iterator[None]:
    """The collector's first threshold at least ``PLAY_GC_THRESHOLD`` while this holds, then as it
    was (plays in several threads at once: as before the first, once the last ends). Only when
    the collector runs changes, never what it frees: a cycle is freed a little later."""
    with _gc_lock:
        if not _gc_held:
            before = gc.get_threshold()
            _gc_held.append(before)
            if before[0]:  # 0: automatic collection is off, and stays off
                gc.set_threshold(max(before[0], PLAY_GC_THRESHOLD), *before[1:])
        else:
            _gc_held.append(_gc_held[0])
    try:
        yield
    finally:
        with _gc_lock:
            before = _gc_held.pop()
            if not _gc_held:
                gc.set_threshold(*before)


def read_ahead_of(records: Iterable[Record], observer: BoardObserver | None = None) -> Iterator[Record]:
    """``records`` in their order, read ``READ_AHEAD`` at a time, each batch shown to ``observer``
    before it is given; the stream is closed at the end (or when this is)."""
    stream = iter(records)
    try:
        while batch := list(islice(stream, READ_AHEAD)):
            if observer is not None:
                for record in batch:
                    observer.add(record)
            yield from batch
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def first_look(records: Iterator[Record]) -> Iterator[Record]:
    """The records of a stream's start its board is first inferred from: up to its ``FIRST_LOOK``-th
    sample, or ``FIRST_LOOK_RECORDS`` records (none read past the last given)."""
    samples = 0
    for taken, record in enumerate(records, 1):
        yield record
        samples += isinstance(record, Sample) and record.is_sample
        if samples >= FIRST_LOOK or taken >= FIRST_LOOK_RECORDS:
            return


def _played(pipeline: Pipeline, records: Iterable[Record]) -> list[Event]:
    found: list[Event] = []
    pump(records, pipeline.sink, lambda record: found.extend(pipeline.ingest(record)))
    return found + pipeline.finish()


def _observed(records: Iterator[Record], observer: BoardObserver) -> Iterator[Record]:
    for record in records:
        observer.add(record)
        yield record


@dataclass(frozen=True)
class Described:
    """What a source said of itself, with what was read for it off the pipeline's thread: a whole
    replayed file's ledger (or its reading, still going: ``Pipeline.load_ledger`` takes it when it
    is done), and trtexec's phases placed on its stream."""

    info: SourceInfo
    ledger_builder: LedgerBuilder | None = None
    ledger: EnergyLedger | Future[EnergyLedger] | None = None
    extras: tuple[Marker | Work, ...] = ()
    #: What a replayed file's first samples show of a board nothing names (``observe_board``),
    #: and what the whole file shows, once the ledger's read of it is done.
    observed: BoardObservation | None = None
    #: Inputs beside the stream used only in part, or not at all (trtexec's output), and why.
    notes: tuple[str, ...] = ()
    observed_later: Future[BoardObservation] | None = None


class Runtime:
    """One source and its pipeline (the monitor has one per board)."""

    def __init__(self, source: Source, config: Config, *, recorder: Recorder | None = None,
                 history_s: float = 0.0, whole_file: bool = True,
                 clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time
                 ) -> None:
        """``whole_file``: a replay's ledger comes from its whole file, so seeks never change a
        joule (``serve`` counts from its start instead)."""
        self.source = source
        self.config = config
        self.controls = source if isinstance(source, ReplayControls) else None
        self.pipeline = build_pipeline(config, SourceInfo(source.kind), history_s=history_s,
                                       recorder=recorder, replayed=self.controls is not None,
                                       clock=clock, wall_clock=wall_clock)
        self._whole_file = whole_file
        #: trtexec's records not yet written to the recording (``pump`` writes them in stream order).
        self._unwritten: list[Marker | Work] = []

    def describe(self) -> Described:
        """The source's description, a whole replayed file's ledger and trtexec's records (in the
        source's thread: it may run commands and read files). trtexec's output that cannot be read
        or placed is left out with a note (the commands refused the user's ``--trtexec`` before
        they started: ``inputs.trtexec_extras``)."""
        try:
            info = self.source.describe()
        except Exception as exc:  # noqa: BLE001 - a description is optional
            info = SourceInfo(self.source.kind, hints=(f"source description failed: {exc}",))
        build = self._ledger_builder() if self._whole_file else None
        extras, notes = self._trtexec_extras()
        observed, later = self._observed_board(info)
        ledger: EnergyLedger | Future[EnergyLedger] | None = None
        if build is not None:
            ledger = read_ahead(self._first_read(build, later))
        elif later is not None:  # energy counted forward (serve): the board is still the whole file's
            read_ahead(self._whole_read(later))
        return Described(info, build, ledger, extras, observed, notes, later)

    def apply(self, described: Described) -> None:
        """Give the pipeline what ``describe`` found (in the pipeline's thread)."""
        pipeline = self.pipeline
        pipeline.describe(described.info)
        if described.observed is not None:
            pipeline.observe_board(described.observed, described.observed_later)
        if described.ledger_builder is not None:
            pipeline.load_ledger(described.ledger_builder, described.ledger)
        if described.extras:
            pipeline.add_extras(described.extras)
            self._unwritten = sorted(described.extras, key=lambda extra: extra.t_mono or 0.0)
        _settle_start_up()

    def pump(self, deliver: Callable[[Record], object] | None = None, *,
             stopped: Callable[[], bool] = never,
             write_failed: Callable[[OSError], bool] = lambda _: False,
             lock: AbstractContextManager[object] = NO_LOCK) -> Record | None:
        """Run the source through ``pump`` into ``deliver`` (default: this pipeline's ``ingest``);
        trtexec's records, which the pipeline has already (``apply``), go into the recording too."""
        records = self.source.records()
        if self._unwritten:
            records = _writing(self._unwritten, records, self.pipeline.sink)
        return pump(records, self.pipeline.sink, deliver or self.pipeline.ingest,
                    stopped=stopped, write_failed=write_failed, lock=lock)

    def drain(self, deliver: Callable[[Record], object] | None = None, *,
              stopped: Callable[[], bool] = never,
              write_failed: Callable[[OSError], bool] = lambda _: False,
              lock: AbstractContextManager[object] = NO_LOCK) -> Drained:
        """``pump``, with a source that raises caught and said as one line (``Drained.error``):
        how every consumer's stream ends (the monitor's workers, ``run``)."""
        try:
            return Drained(self.pump(deliver, stopped=stopped, write_failed=write_failed, lock=lock))
        except Exception as exc:  # noqa: BLE001 - a failing source is said, never a traceback
            return Drained(None, f"{type(exc).__name__}: {exc}")

    def run(self, consumer: Consumer, *, stop: threading.Event | None = None,
            duration_s: float | None = None, signals: Sequence[int] = STOP_SIGNALS,
            second_interrupt_forces: bool = True, linger: bool = False,
            lock: AbstractContextManager[object] | None = None) -> int:
        """The one lifecycle (``record``, ``run --headless``, ``serve``): this source to its end
        into ``consumer``, with signals, the stop, the finish and the exit status
        (``lifecycle.run_to_end``). Call it after ``describe`` and ``apply`` (``start_runtime``)."""
        return run_to_end(self, consumer, stop=stop, duration_s=duration_s, signals=signals,
                          second_interrupt_forces=second_interrupt_forces, linger=linger, lock=lock)

    def _observed_board(self, info: SourceInfo
                        ) -> tuple[BoardObservation | None, Future[BoardObservation] | None]:
        """Where nothing names a replayed file's board: what its first ``FIRST_LOOK`` samples show
        (read now: the replay starts after), and the Future of what the whole file shows (the
        ledger's read of the whole file observes it too, else ``_whole_read``). Every consumer of
        a replay gets it, whether its energy is the whole file's (the monitor) or counted forward
        (``serve``): the board is the file's, as ``play_whole`` finds it for ``report``."""
        config = self.config
        board = resolve_board(info, load_devices(config.devices), device_id=config.device,
                              power_mode=config.power_mode)
        source = self.source
        if not (board.open_to_inference and isinstance(source, ReplaySource) and source.whole_file):
            return None, None
        return observe(first_look(source.index.scan())), Future()

    def _ledger_builder(self) -> LedgerBuilder | None:
        source = self.source
        if not (isinstance(source, ReplaySource) and source.whole_file):
            return None
        index, interval_s = source.index, source.interval_s
        return lambda markers: build_ledger(_offering(index.scan()), interval_s, markers)

    def _first_read(self, build: LedgerBuilder, observed: Future[BoardObservation] | None
                    ) -> Callable[[], EnergyLedger]:
        """The whole file's first read: its ledger, and what it shows of its board (``observed``)
        on the way, so that the file is read once for both."""
        source = self.source
        if observed is None or not isinstance(source, ReplaySource):
            return lambda: build(())
        index, interval_s = source.index, source.interval_s

        def read() -> EnergyLedger:
            observer = BoardObserver()
            ledger = build_ledger(_offering(_observed(index.scan(), observer)), interval_s, ())
            observed.set_result(observer.observation())
            return ledger

        return read

    def _whole_read(self, observed: Future[BoardObservation]) -> Callable[[], None]:
        """The whole file read for what it shows of its board alone (no ledger wanted)."""
        source = self.source
        assert isinstance(source, ReplaySource)
        index = source.index

        def read() -> None:
            try:
                observed.set_result(observe(_offering(index.scan())))
            except Exception as exc:  # noqa: BLE001 - e.g. the file vanished: the first look's stays
                observed.set_exception(exc)

        return read

    def _trtexec_extras(self) -> tuple[tuple[Marker | Work, ...], tuple[str, ...]]:
        """trtexec's records on the replayed file's stream and the note on them, or none and why
        (e.g. the output ``run`` kept stopped before its summary: the replay goes on without it)."""
        try:
            extras, note = trtexec_extras(self.source, self.config)
        except UserError as exc:
            return (), (f"trtexec's output is not used: {exc}",)
        return tuple(extras), () if note is None else (note,)


def open_runtime(source: Source, config: Config, *, recorder: Recorder | None = None,
                 history_s: float = 0.0, whole_file: bool = True,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> Runtime:
    """The one place a ``Runtime`` is built (the monitor, ``record``/``run --headless`` and
    ``serve``); the monitor describes it in its source's thread, the others call ``start_runtime``."""
    return Runtime(source, config, recorder=recorder, history_s=history_s, whole_file=whole_file,
                   clock=clock, wall_clock=wall_clock)


def start_runtime(source: Source, config: Config, *, recorder: Recorder | None = None,
                  whole_file: bool = True) -> tuple[Runtime, Described]:
    """A runtime built, described and applied in the caller's thread, with what ``describe``
    found (its notes are the caller's to say)."""
    runtime = open_runtime(source, config, recorder=recorder, whole_file=whole_file)
    described = runtime.describe()
    runtime.apply(described)
    return runtime, described


def _settle_start_up() -> None:
    """Start-up is over (the process's first ``apply``; in the monitor, its screen is built): what
    exists now (modules, the screen: about 100k objects) is moved out of the collector's sight
    (``gc.freeze``), so a full collection walks what came since: 10 ms, not 60-80 ms on this
    machine, enough to push a replay's seek past 100 ms when one landed in it. Frozen objects are
    still freed when nothing refers to them; only a cycle among them is kept."""
    if not gc.get_freeze_count():  # once per process
        gc.freeze()


def read_ahead(build: Callable[[], T], wait_s: float = LEDGER_WAIT_S) -> T | Future[T]:
    """A whole file's ledger (``build()``, or another whole read), read in a thread of its own:
    the result when it is done within ``wait_s`` (its error raised, as a read here would), else
    the Future of it, so the replay's first records do not wait for a day-long file to be read."""
    future: Future[T] = Future()

    def read() -> None:
        try:
            future.set_result(build())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever takes the result
            future.set_exception(exc)

    threading.Thread(target=read, name="jroof-ledger", daemon=True).start()
    try:
        return future.result(timeout=wait_s)
    except FutureTimeout:
        return future


def _offering(records: Iterator[Record], every: int = 32) -> Iterator[Record]:
    """``records``, the interpreter offered to other threads every ``every`` of them (about a
    millisecond): a whole file's ledger read beside a replay must not hold up its records and
    seeks for the interpreter's 5 ms switch interval at each of their reads."""
    for count, record in enumerate(records):
        if not count % every:
            time.sleep(0)
        yield record


def _writing(extras: list[Marker | Work], records: Iterator[Record], sink: RecordingSink) -> Iterator[Record]:
    """``records``, with ``extras`` (taken from the list as written) written to the recording in
    stream order, as ``trtexec.with_trtexec`` places them: a phase start before the first record at
    its time, the timed window's end and work after the records at theirs. A write that fails is
    left to the next record's write, which fails the same way and is said by ``pump``."""
    try:
        for record in records:
            while extras and record.t_mono is not None and _due(extras[0], record.t_mono):
                try:
                    sink.write(extras.pop(0), from_stream=False)
                except OSError:
                    pass
            yield record
        while extras:
            sink.write(extras.pop(0), from_stream=False)
    finally:
        close = getattr(records, "close", None)
        if close is not None:
            close()


def _due(extra: Marker | Work, t_mono: float) -> bool:
    at = extra.t_mono or 0.0
    return at <= t_mono if isinstance(extra, Marker) and extra.kind == "phase_start" else at < t_mono

"""One runtime under every command: source -> pipeline -> subscribers, built here, fed by one pump.

The monitor, ``record``, ``run``, ``serve``, ``report``, ``export``, ``compare`` and ``plot`` all get
their pipeline from ``build_pipeline`` (the device database with the config's entries, the user's
``--device`` and ``--power-mode``, fresh detectors) and feed it through ``pump``, so the numbers
they show can never differ for the same samples. A ``Runtime`` is one live or replayed source with
its pipeline: ``describe`` runs in the source's thread (it may run commands, and it starts reading a
whole replayed file's ledger, once, in a thread of its own: a long file plays while it is read),
``apply`` in the pipeline's, and ``pump`` in the source's
again. Consumers listen through ``Pipeline.subscribe``; nothing wraps ``ingest``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import tzinfo

from jtop_roof.analysis.detectors import ThrottleDetector
from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.analysis.pipeline import Detector, Pipeline, RecordingSink, build_ledger
from jtop_roof.formats.recorder import Recorder
from jtop_roof.formats.trtexec import TrtexecError, kept_output, read_trtexec, trtexec_records
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Marker, Record, Work
from jtop_roof.model.settings import DetectorSettings
from jtop_roof.model.timeline import parse_tz
from jtop_roof.roofline.devices import load_devices
from jtop_roof.runtime.config import Config
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.sources.replay import ReplaySource

LedgerBuilder = Callable[[Sequence[Marker | Work]], EnergyLedger]
#: The detectors every pipeline runs, each made fresh from the config's settings: a new detector
#: is a module under ``analysis/`` and one line here.
DETECTORS: tuple[Callable[[DetectorSettings], Detector], ...] = (ThrottleDetector,)
#: How long ``describe`` waits for a replayed file's whole ledger before it lets the file play
#: while the rest is read (a day-long log's takes seconds; a short one's is there at once).
LEDGER_WAIT_S = 0.25
#: The pump's lock where no other thread shares the pipeline.
_NO_LOCK: AbstractContextManager[object] = nullcontext()


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
        detectors=[make(config.detectors) for make in DETECTORS], devices=load_devices(config.devices),
        device_id=config.device, power_mode=config.power_mode,
        replayed=replayed, clock=clock, wall_clock=wall_clock,
    )


def pump(
    records: Iterable[Record], sink: RecordingSink, deliver: Callable[[Record], object], *,
    stopped: Callable[[], bool] = lambda: False, write_failed: Callable[[OSError], bool] = lambda _: False,
    lock: AbstractContextManager[object] = _NO_LOCK,
) -> Record | None:
    """The one pump loop: each record is written to the recording first (write-ahead, in this
    thread), then delivered to the pipeline's owner (``ingest`` here, or a message to the UI).
    ``stopped`` is asked before and after each record; ``write_failed`` decides whether to go on
    (the TUI shows the error and keeps monitoring; ``record`` stops). Returns the last record
    delivered (a ``source_error`` event says the source could not run). A source's generator is
    closed on the way out, so its child process and files are released. ``lock``: held around
    each record's write and delivery when another thread marks phases on the same pipeline (a
    marker's "now" then comes from the newest sample written)."""
    last: Record | None = None
    try:
        for record in records:
            if stopped():
                break
            with lock:
                try:
                    sink.write(record)
                except OSError as exc:
                    if not write_failed(exc):
                        break
                deliver(record)
            last = record
            if stopped():
                break
    finally:
        close = getattr(records, "close", None)
        if close is not None:
            close()
    return last


@dataclass(frozen=True)
class Described:
    """What a source said of itself, with what was read for it off the pipeline's thread: a whole
    replayed file's ledger (or its reading, still going: ``Pipeline.load_ledger`` takes it when it
    is done), and trtexec's phases placed on its stream."""

    info: SourceInfo
    ledger_builder: LedgerBuilder | None = None
    ledger: EnergyLedger | Future[EnergyLedger] | None = None
    extras: tuple[Marker | Work, ...] = ()


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

    def describe(self) -> Described:
        """The source's description, a whole replayed file's ledger and trtexec's records (in the
        source's thread: it may run commands and read files). A ``--trtexec`` that cannot be read
        raises TrtexecError; a kept one that cannot is left out (the run still counts)."""
        try:
            info = self.source.describe()
        except Exception as exc:  # noqa: BLE001 - a description is optional
            info = SourceInfo(self.source.kind, hints=(f"source description failed: {exc}",))
        build = self._ledger_builder() if self._whole_file else None
        return Described(info, build, None if build is None else read_ahead(build),
                         tuple(self._trtexec_extras()))

    def apply(self, described: Described) -> None:
        """Give the pipeline what ``describe`` found (in the pipeline's thread)."""
        pipeline = self.pipeline
        pipeline.describe(described.info)
        if described.ledger_builder is not None:
            pipeline.load_ledger(described.ledger_builder, described.ledger)
        if described.extras:
            pipeline.add_extras(described.extras)

    def pump(self, deliver: Callable[[Record], object] | None = None, *,
             stopped: Callable[[], bool] = lambda: False,
             write_failed: Callable[[OSError], bool] = lambda _: False,
             lock: AbstractContextManager[object] = _NO_LOCK) -> Record | None:
        """Run the source through ``pump`` into ``deliver`` (default: this pipeline's ``ingest``)."""
        return pump(self.source.records(), self.pipeline.sink, deliver or self.pipeline.ingest,
                    stopped=stopped, write_failed=write_failed, lock=lock)

    def _ledger_builder(self) -> LedgerBuilder | None:
        source = self.source
        if not (isinstance(source, ReplaySource) and source.whole_file):
            return None
        index, interval_s = source.index, source.interval_s
        return lambda markers: build_ledger(_offering(index.scan()), interval_s, markers)

    def _trtexec_extras(self) -> list[Marker | Work]:
        """``--trtexec`` (else the output ``run`` kept beside the file): its phases and iterations
        placed on the replayed file's stream."""
        source = self.source
        if not isinstance(source, ReplaySource):
            return []
        kept = None if self.config.trtexec is not None else kept_output(source.path)
        trtexec = self.config.trtexec or kept
        if trtexec is None or not len(source.index):
            return []
        index = source.index
        wall = index.wall_at(0, index.mono(0))
        if wall is None:
            return []  # a log without stamps: nothing to place trtexec's stamps against
        try:
            run = read_trtexec(trtexec, _tz(self.config), self.config.trtexec_offset)
        except TrtexecError:
            if kept is None:
                raise  # the user's --trtexec was checked before the screen started
            return []  # e.g. trtexec stopped before its summary: the replay goes on without it
        return trtexec_records(run, wall - index.mono(0))


def read_ahead(build: LedgerBuilder, wait_s: float = LEDGER_WAIT_S) -> EnergyLedger | Future[EnergyLedger]:
    """A whole file's ledger, read in a thread of its own: the ledger when it is done within
    ``wait_s`` (its error raised, as a read here would), else the Future of it, so the replay's
    first records do not wait for a day-long file to be read."""
    future: Future[EnergyLedger] = Future()

    def read() -> None:
        try:
            future.set_result(build(()))
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


def _tz(config: Config) -> tzinfo:
    return parse_tz(config.tz)

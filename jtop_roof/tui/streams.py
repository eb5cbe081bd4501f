"""The monitor's boards: each one's source and pipeline, and what the app's handlers do to them.

``Boards`` never touches a widget: its methods change the pipelines and return what the user
should be told; the App does the telling and the drawing.

The seam with the source threads is ``Boards.pump``: it runs one board's source through the
runtime's ``drain`` (the one pump; a failing source said in one line) in a worker thread and
reports only by posting the four source messages (``SourceDescribed``, ``RecordsReceived``,
``RecordingFailed``, ``SourceEnded``), which the App's handlers hand back to ``describe``,
``receive`` and ``end`` on the event loop. Textual owns the signals and the screen, so the
lifecycle of ``Runtime.run`` is not this one's; ``run``'s command phase is the same rule
(``lifecycle.CommandPhase``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual.message import Message

from jtop_roof.analysis.ledger import COMMAND_ORIGIN
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.metrics import printable
from jtop_roof.model.records import PowerReading, ProcessReading, Record
from jtop_roof.outputs.serve import MetricsServer, start_exporter
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import WorkReport
from jtop_roof.runtime.lifecycle import CommandPhase
from jtop_roof.runtime.runtime import Described, Runtime, open_runtime
from jtop_roof.runtime.session import auto_record_path, open_recording
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.tui.messages import RecordingFailed, RecordsReceived, SourceDescribed, SourceEnded

#: Readings between samples wait at most this long (seconds) for the next sample, then go alone
#: (a main source that stalls while the power sampler goes on).
READINGS_WAIT_S = 1.0


class Batcher:
    """Gathers a source's records for the event loop. Live (``hold_readings``), readings between
    samples (power at 5 Hz, processes) go with the next sample, marker or event, or with the
    first reading after the oldest has waited ``READINGS_WAIT_S`` (the power sampler reads on
    while a main source stalls). A replay's seek (its event and 1,200 records of backfill) goes as
    one. Each message wakes the event loop and costs a dispatch: at 1 Hz with power at 5 Hz, one
    message a second instead of six. A replay holds no reading back: paused, or at the end of a
    file, nothing would come to take it on."""

    def __init__(self, post: Callable[[tuple[Record, ...]], object], *, hold_readings: bool,
                 clock: Callable[[], float] = time.monotonic,
                 more_follow: Callable[[], bool] = lambda: False) -> None:
        """``more_follow``: whether more records follow the one just added at once (a seek's)."""
        self._post, self._hold_readings = post, hold_readings
        self._clock, self._more_follow = clock, more_follow
        self._pending: list[Record] = []
        self._oldest_at = 0.0

    def add(self, record: Record) -> None:
        if not self._pending:
            self._oldest_at = self._clock()
        self._pending.append(record)
        if self._more_follow():
            return
        if not (self._hold_readings and isinstance(record, (PowerReading, ProcessReading))) \
                or self._clock() - self._oldest_at >= READINGS_WAIT_S:
            self.flush()

    def flush(self) -> None:
        """Post what is gathered (the source ended or was stopped: nothing delivered is kept back)."""
        if self._pending:
            records, self._pending = tuple(self._pending), []
            self._post(records)


@dataclass(frozen=True)
class Notice:
    """What to tell the user; ``error``: that something failed."""

    text: str
    error: bool = False


@dataclass
class Stream:
    """One board: its runtime (source and pipeline) and how its source ended (None: running)."""

    runtime: Runtime
    ended: str | None = None

    @property
    def source(self) -> Source:
        return self.runtime.source

    @property
    def pipeline(self) -> Pipeline:
        return self.runtime.pipeline

    @property
    def controls(self) -> ReplayControls | None:
        """The transport of a replay (and of the demo, a looping one); None when live."""
        return self.runtime.controls

    def toggle_recording(self, config: Config) -> Notice:
        """The record key: stop recording, or start to a new file named after ``config``."""
        sink = self.pipeline.sink
        if sink.path is not None:
            path = sink.path
            sink.stop()
            return Notice(f"recording saved: {path}")
        path = auto_record_path(config)
        try:
            self.start_recording(open_recording(path, self.source, config))
        except OSError as exc:
            sink.stop()
            return Notice(f"cannot record to {path}: {exc.strerror or exc}", error=True)
        return Notice(f"recording to {path}")

    def start_recording(self, recorder: Recorder) -> None:
        """Record from now on; a phase already open is written as a start (origin ``resume``) at
        this moment, so the recording has the phase it is in. Raises OSError."""
        sink = self.pipeline.sink
        sink.start(recorder)
        resume = self.pipeline.resume_marker(*self.pipeline.now())
        if resume is not None:
            sink.write(resume, from_stream=False)


@dataclass(frozen=True)
class Marked:
    """A phase boundary was made: the plots draw it and the header shows the phase. ``failures``:
    why recordings stopped while writing it, for the user."""

    failures: tuple[str, ...] = ()


class Boards:
    """The boards the monitor shows (several with ``--ssh a --ssh b``), and ``run``'s command phase."""

    def __init__(
        self,
        config: Config,
        boards: Sequence[tuple[Source, Recorder | None]],
        *,
        mono: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        command_phase: str | None = None,
    ) -> None:
        """``boards``: each source with its recorder (None: not recording); ``mono``/``wall``:
        the clocks a live marker is stamped with; ``command_phase``: see ``receive``."""
        self.streams = [
            Stream(open_runtime(source, config, recorder=recorder, history_s=config.history_s,
                                clock=mono, wall_clock=wall))
            for source, recorder in boards
        ]
        self._command_phase = None if command_phase is None else CommandPhase(command_phase)
        self._exporter: MetricsServer | None = None

    def shown(self, index: int) -> Stream:
        """The board the panes show, of ``index`` (the app's board key)."""
        return self.streams[min(index, len(self.streams) - 1)]

    @property
    def replay(self) -> bool:
        """A replay (or the demo): the transport keys and a wall-clock axis."""
        return self.streams[0].controls is not None

    def board_name(self, index: int) -> str:
        """A board's short name: the ssh host's, else its model, else its number."""
        info = self.streams[index].pipeline.info
        host = info.header.get("ssh_host")
        if isinstance(host, str) and host:
            return printable(host.rsplit("@", 1)[-1].split(":", 1)[0], 24)
        return printable(info.model or f"board {index + 1}", 24)

    # ------------------------------------------------------------------ the source's thread

    def pump(self, index: int, post: Callable[[Message], object], cancelled: Callable[[], bool]) -> None:
        """Run one board's blocking source (in a thread worker of its own): describe it, then
        write each record to the recording and post it. Only posts; never touches the pipeline's
        analysis or a widget."""
        runtime = self.streams[index].runtime
        post(SourceDescribed(runtime.describe(), index))

        def recording_failed(exc: OSError) -> bool:
            runtime.pipeline.sink.stop()
            post(RecordingFailed(exc.strerror or str(exc), index))
            return True  # monitoring goes on without the recording

        controls = runtime.controls
        more_follow = (lambda: controls.backfilling) if controls is not None else (lambda: False)
        batcher = Batcher(lambda records: post(RecordsReceived(records, index)),
                          hold_readings=controls is None, more_follow=more_follow)
        # A failing source is shown to the user (one line); the app keeps its last data.
        drained = runtime.drain(batcher.add, stopped=cancelled, write_failed=recording_failed)
        batcher.flush()
        post(SourceEnded(drained.error, index))

    # ---------------------------------------------------------------------- the event loop

    def describe(self, index: int, described: Described) -> list[str]:
        """A board described itself: its pipeline takes it. Returns its hints for the user."""
        stream = self.streams[index]
        stream.runtime.apply(described)
        # A replayed recording's hints are about the board it was made on, not this machine.
        prefix = "recorded: " if stream.source.kind == "replay" else ""
        if len(self.streams) > 1:
            prefix = f"{self.board_name(index)}: {prefix}"
        return [prefix + printable(hint) for hint in described.info.hints]

    def receive(self, index: int, record: Record) -> Marked | None:
        """One record of a board's stream, into its pipeline. ``run``'s command phase starts at
        the first sample unless the command has marked a phase by then (and is given up for the
        command's own); returns the marking when it started here."""
        pipeline = self.streams[index].pipeline
        pipeline.ingest(record)
        phase = self._command_phase
        if phase is None or not phase.starts_at(record, pipeline):
            return None
        return self._mark_on(self.streams, "phase_start", phase.name, COMMAND_ORIGIN)

    def end(self, index: int, error: str | None) -> None:
        """A board's source ended (``error``: why it failed): what the detectors still hold open
        is an event now."""
        stream = self.streams[index]
        stream.pipeline.finish()
        stream.ended = error or "ended"

    def mark(self, kind: str, name: str | None, origin: str, shown: int) -> Marked:
        """A phase boundary made here (``name`` None: the pipeline names it ``phase N``): a key
        marks the board shown, a script every board (it cannot tell which it ran on)."""
        streams = [self.shown(shown)] if origin == "key" else self.streams
        return self._mark_on(streams, kind, name, origin)

    def end_command_phase(self, shown: int) -> Marked | None:
        """``run``'s command ended: so does its phase, when it is still the one open."""
        phase = self._command_phase
        if phase is None or not phase.ends(self.shown(shown).pipeline.current_phase):
            return None
        return self._mark_on(self.streams, "phase_end", None, COMMAND_ORIGIN)

    def work(self, report: WorkReport) -> list[str]:
        """Work a benchmark reported, on every board. Returns why recordings stopped, if any did."""
        failures = []
        for stream in self.streams:
            pipeline = stream.pipeline
            _, error = pipeline.work(report.iterations, report.flops, report.bytes, report.precision,
                                     *pipeline.now())
            if error is not None:
                pipeline.sink.stop()
                failures.append(f"recording stopped: {error.strerror or error}")
        return failures

    def _mark_on(self, streams: Sequence[Stream], kind: str, name: str | None, origin: str) -> Marked:
        failures = []
        for stream in streams:
            pipeline = stream.pipeline
            _, error = pipeline.mark(kind, name, origin, *pipeline.now())
            if error is not None:
                pipeline.sink.stop()
                failures.append(f"recording stopped: {error.strerror or error}")
        return Marked(tuple(failures))

    # ------------------------------------------------------------------------ lifecycle

    def serve_metrics(self, listen: str, say: Callable[[str], None]) -> None:
        """``--prometheus=ADDR``: serve the first board's pipeline. Raises ServeError or OSError."""
        first = self.streams[0]
        self._exporter = start_exporter(first.pipeline, first.source.kind, listen, say=say)

    def finish(self) -> None:
        """Quitting: stop every source; open detector events close and are recorded before the
        recordings are."""
        for stream in self.streams:
            stream.source.stop()
            stream.pipeline.finish()

    def shutdown(self) -> None:
        """Stop every source, close every recording and the metrics server; idempotent."""
        for stream in self.streams:
            stream.source.stop()
            stream.pipeline.sink.stop()
        exporter, self._exporter = self._exporter, None
        if exporter is not None:
            exporter.close()

"""Headless recording (``jroof-tui record FILE``): the source, the pipeline and the recording,
without a screen; for scripts, and SSH sessions that may drop. Nothing here imports Textual."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable

from jtop_roof.analysis.ledger import COMMAND_ORIGIN
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.metrics import for_terminal
from jtop_roof.model.records import Record
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import MarkerListener, WorkReport, start_listener, takes_script_markers
from jtop_roof.runtime.lifecycle import STOP_SIGNALS as STOP_SIGNALS  # re-exported for its users
from jtop_roof.runtime.lifecycle import CommandPhase, Consumer, Outcome
from jtop_roof.runtime.runtime import Runtime, start_runtime
from jtop_roof.sources.base import Source


def run_headless(
    source: Source,
    recorder: Recorder,
    duration_s: float | None,
    *,
    install_signal_handlers: bool = True,
    runtime: Runtime | None = None,
    config: Config | None = None,
    listen_for_markers: bool = False,
    stop_event: threading.Event | None = None,
    on_listening: Callable[[], None] | None = None,
    command_phase: str | None = None,
) -> int:
    """Record ``source`` until it ends, ``duration_s`` passes, or a stop signal comes; then close.

    Every record goes through ``runtime`` (made here from ``source`` and ``config`` when not
    given; ``record --prometheus`` gives one whose pipeline its metrics listen to) and its one
    pump, as in the TUI: written, then analysed, so phases and energy are the monitor's.
    ``listen_for_markers``: take ``jroof-tui mark`` from benchmark scripts (stamped on arrival,
    named ``phase N`` when unnamed), where the source is live (``takes_script_markers``).
    ``stop_event``: set by the caller to stop (``run``: the workload exited).
    ``on_listening``: called once markers and the stop signals are taken (``run`` starts the
    workload then, so that its first marker is not lost, nor a stop that comes as it starts).
    ``command_phase``: ``run``'s phase named after its command, started
    just before (origin ``run``: the command's own first phase replaces it).

    Returns 0 for every normal stop, signals included (a script that stops the recorder with
    SIGTERM or Ctrl-C has not failed); 1 when the source fails (or ends on a ``source_error``
    event) or the file cannot be written;
    130 when a second Ctrl-C forces the stop. SIGINT/SIGTERM/SIGHUP stop the source, write a
    closing ``note`` event and fsync. A signal that was ignored when we started (``nohup``, ``&``
    in a script) stays ignored. A second SIGINT acts as Ctrl-C normally does; repeated SIGTERM or
    SIGHUP (a hangup often comes twice) only repeat the stop. Must run in the main thread when it
    installs signal handlers.
    """
    if runtime is None:
        runtime, _ = start_runtime(source, config or Config(), recorder=recorder)
    lock = threading.Lock()  # the marker listener's thread and the pump share the pipeline
    stop = stop_event if stop_event is not None else threading.Event()
    recording = _Recording(runtime.pipeline, recorder, lock, stop, duration_s=duration_s,
                           workload_ends=stop_event is not None,
                           phase=None if command_phase is None else CommandPhase(command_phase))
    if listen_for_markers and takes_script_markers([source]):
        recording.listener = start_listener(recording.on_marker, recording.on_work)
    recording.start_command_phase()
    recording.on_started = on_listening
    return runtime.run(recording, stop=stop, duration_s=duration_s, lock=lock,
                       signals=STOP_SIGNALS if install_signal_handlers else ())


class _Recording(Consumer):
    """``record`` and ``run --headless``: each record written, then analysed; markers from scripts;
    ``run``'s command phase; a closing ``note`` that says why the recording ended."""

    def __init__(self, pipeline: Pipeline, recorder: Recorder, lock: threading.Lock, stop: threading.Event,
                 *, duration_s: float | None, workload_ends: bool, phase: CommandPhase | None) -> None:
        super().__init__(pipeline)
        self.recorder, self.lock, self.stop, self.duration_s = recorder, lock, stop, duration_s
        self.workload_ends, self.phase = workload_ends, phase
        self.listener: MarkerListener | None = None
        #: ``run``'s workload start: once the stop signals are ours, so that a SIGTERM that comes as
        #: the workload starts ends the recording cleanly, never jroof alone with its child running.
        self.on_started: Callable[[], None] | None = None
        self.status = 0

    def started(self) -> None:
        if self.on_started is not None and not self.stop.is_set():
            self.on_started()

    # A marker's or work report's time is taken as it comes, before the lock: a pump stalled on a
    # slow write holds the lock, and the marker must not take the time the stall ended.
    def on_marker(self, kind: str, name: str | None, origin: str = "script",
                  at: tuple[float | None, float | None] | None = None) -> None:
        stamp = at or self.pipeline.now()
        with self.lock:
            _, error = self.pipeline.mark(kind, name, origin, *stamp)
        self._said(error)

    def on_work(self, report: WorkReport) -> None:
        stamp = self.pipeline.now()
        with self.lock:
            _, error = self.pipeline.work(report.iterations, report.flops, report.bytes, report.precision,
                                          *stamp)
        self._said(error)

    def start_command_phase(self) -> None:
        """Before the workload starts, where the stream has a "now" (a replayed stream, or the
        demo's, has none before its first sample: the phase then starts at that sample)."""
        if self.phase is not None and self.phase.starts_now(self.pipeline):
            self.on_marker("phase_start", self.phase.name, COMMAND_ORIGIN)

    def deliver(self, record: Record) -> None:
        """Ingest (the pump holds the lock); the command's phase starts at the first sample while
        the command still runs, where it did not start before."""
        self.pipeline.ingest(record)
        phase = self.phase
        if phase is not None and not self.stop.is_set() and phase.starts_at(record, self.pipeline):
            _, error = self.pipeline.mark("phase_start", phase.name, COMMAND_ORIGIN, record.t_wall,
                                          record.t_mono)
            self._said(error)

    def write_failed(self, exc: OSError) -> bool:
        _say(f"jroof-tui: cannot write {self.recorder.path}: {exc.strerror or exc}; recording stopped")
        self.status = 1
        return False

    def source_failed(self, error: str) -> None:
        # a failing source must still leave a closed, valid recording
        _say(f"jroof-tui: source failed: {error}")
        _try_event(self.recorder, "source_error", error)

    def ending(self, stopped_at: tuple[float | None, float | None] | None) -> None:
        if self.phase is not None and self.phase.ends(self.pipeline.ledger.current_phase):
            # the command ended: so did its phase, then (not when the source has stopped)
            self.on_marker("phase_end", None, COMMAND_ORIGIN, stopped_at)

    def ended(self, outcome: Outcome) -> int:
        status = 130 if outcome.forced else 1 if outcome.drained.error is not None else self.status
        if outcome.finish_failed:
            status = 1
        recorder = self.recorder
        if status == 130:
            _try_event(recorder, "note", "forced stop by SIGINT")
        elif outcome.stopped_by is not None:
            _try_event(recorder, "note", f"stopped by {signal.Signals(outcome.stopped_by).name}")
        elif self.workload_ends:  # the run's stop is the workload's exit
            _try_event(recorder, "note", "stopped: the workload ended")
        elif status == 0 and outcome.timed_out:
            _try_event(recorder, "note", f"stopped after --duration {self.duration_s:g} s")
        elif status == 0 and outcome.drained.source_error is not None:
            _say(f"jroof-tui: {outcome.drained.source_error}")  # e.g. tegrastats cannot be started
            status = 1
        elif status == 0:
            _try_event(recorder, "note", "source ended")
        return status

    def close(self) -> bool:
        if self.listener is not None:
            self.listener.close()
        try:
            self.recorder.close()
        except OSError as exc:
            _say(f"jroof-tui: cannot finish {self.recorder.path}: {exc.strerror or exc}")
            return False
        return True

    def _said(self, error: OSError | None) -> None:
        if error is not None:
            _say(f"jroof-tui: cannot write {self.recorder.path}: {error.strerror or error}")


def _try_event(recorder: Recorder, kind: str, detail: str) -> None:
    try:
        recorder.write_event(kind, detail)
    except OSError:
        pass


def _say(message: str) -> None:
    """Report on stderr, which may be gone after an SSH hangup; a detail from the recording or a
    peer (a ``source_error``, an exception's text) is shown escaped (``for_terminal``)."""
    try:
        print(for_terminal(message), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


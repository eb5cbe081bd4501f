"""Headless recording (``jroof-tui record FILE``): the source, the pipeline and the recording,
without a screen; for scripts, and SSH sessions that may drop. Nothing here imports Textual."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from jtop_roof.analysis.ledger import COMMAND_ORIGIN
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.metrics import for_terminal
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import WorkReport, start_listener, takes_script_markers
from jtop_roof.runtime.runtime import Runtime, start_runtime
from jtop_roof.runtime.signals import give_back_signals, take_signals
from jtop_roof.sources.base import Source

#: Signals that end a headless recording cleanly: Ctrl-C, kill/systemd, and an SSH session dropping.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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
    ``on_listening``: called once markers are taken (``run`` starts the workload then, so that its
    first marker is not lost). ``command_phase``: ``run``'s phase named after its command, started
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
    pipeline = runtime.pipeline
    lock = threading.Lock()  # the marker listener's thread and this loop share the pipeline

    # A marker's or work report's time is taken as it comes, before the lock: a pump stalled on a
    # slow write holds the lock, and the marker must not take the time the stall ended.
    def on_marker(kind: str, name: str | None, origin: str = "script",
                  at: tuple[float | None, float | None] | None = None) -> None:
        stamp = at or pipeline.now()
        with lock:
            _, error = pipeline.mark(kind, name, origin, *stamp)
        if error is not None:
            _say(f"jroof-tui: cannot write {recorder.path}: {error.strerror or error}")

    def on_work(report: WorkReport) -> None:
        stamp = pipeline.now()
        with lock:
            _, error = pipeline.work(report.iterations, report.flops, report.bytes, report.precision,
                                     *stamp)
        if error is not None:
            _say(f"jroof-tui: cannot write {recorder.path}: {error.strerror or error}")

    live = listen_for_markers and takes_script_markers([source])
    listener = start_listener(on_marker, on_work) if live else None
    stop_requested = stop_event if stop_event is not None else threading.Event()
    # A replayed stream (or the demo's) has no "now" before its first sample: the command's phase
    # then starts at that sample, rather than be written without a time and lost.
    unstamped_start = command_phase is not None and pipeline.now() == (None, None)
    if command_phase is not None and not unstamped_start:
        on_marker("phase_start", command_phase, COMMAND_ORIGIN)
    if on_listening is not None:
        on_listening()
    stopped_by: list[int] = []
    previous: dict[int, Any] = {}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not stopped_by:
            stopped_by.append(signum)
        if signum == signal.SIGINT:
            signal.signal(signum, previous[signum])
        # The source is stopped from another thread: this handler may interrupt the source's own
        # code in the main thread, and its stop() may need a lock that code holds.
        stop_requested.set()

    stopped_at: list[tuple[float | None, float | None]] = []  # when the stop came (the workload's end)

    def stop_source_when_asked() -> None:
        # Event.wait overflows past threading.TIMEOUT_MAX: a huge duration is "no limit".
        limit = None if duration_s is None else min(duration_s, threading.TIMEOUT_MAX)
        stop_requested.wait(limit)
        with lock:
            stopped_at.append(pipeline.now())
        source.stop()

    if install_signal_handlers:
        previous.update(take_signals(STOP_SIGNALS, on_signal))
    stopper = threading.Thread(target=stop_source_when_asked, name="jroof-record-stop", daemon=True)
    deadline = None if duration_s is None else time.monotonic() + duration_s
    status = 0
    try:
        stopper.start()
        last: Record | None = None

        def stop_recording(exc: OSError) -> bool:
            nonlocal status
            _say(f"jroof-tui: cannot write {recorder.path}: {exc.strerror or exc}; recording stopped")
            status = 1
            return False

        def deliver(record: Record) -> None:
            """Ingest (the pump holds ``lock``); the command's phase starts at the first sample
            while the command still runs."""
            nonlocal unstamped_start
            pipeline.ingest(record)
            if unstamped_start and isinstance(record, Sample) and not stop_requested.is_set():
                unstamped_start = False
                _, error = pipeline.mark("phase_start", command_phase, COMMAND_ORIGIN, record.t_wall,
                                         record.t_mono)
                if error is not None:
                    _say(f"jroof-tui: cannot write {recorder.path}: {error.strerror or error}")

        try:
            last = runtime.pump(deliver, write_failed=stop_recording, lock=lock,
                                stopped=lambda: deadline is not None and time.monotonic() >= deadline)
        except KeyboardInterrupt:
            status = 130
        except Exception as exc:  # a failing source must still leave a closed, valid recording
            _say(f"jroof-tui: source failed: {type(exc).__name__}: {exc}")
            _try_event(recorder, "source_error", f"{type(exc).__name__}: {exc}")
            status = 1
        stop_requested.set()
        stopper.join()
        if command_phase is not None and pipeline.ledger.current_phase == command_phase:
            # the command ended: so did its phase, then (not when the source has stopped)
            on_marker("phase_end", None, COMMAND_ORIGIN, stopped_at[0] if stopped_at else None)
        try:
            with lock:
                pipeline.finish()  # detector events still open close at the last sample
        except OSError:
            status = 1
        if status == 130:
            _try_event(recorder, "note", "forced stop by SIGINT")
        elif stopped_by:
            _try_event(recorder, "note", f"stopped by {signal.Signals(stopped_by[0]).name}")
        elif stop_event is not None and stop_event.is_set():
            _try_event(recorder, "note", "stopped: the workload ended")
        elif status == 0 and deadline is not None and time.monotonic() >= deadline:
            _try_event(recorder, "note", f"stopped after --duration {duration_s:g} s")
        elif status == 0 and isinstance(last, Event) and last.kind == "source_error":
            _say(f"jroof-tui: {last.detail}")  # e.g. tegrastats cannot be started: not a success
            status = 1
        elif status == 0:
            _try_event(recorder, "note", "source ended")
    finally:
        stop_requested.set()
        if listener is not None:
            listener.close()
        try:
            recorder.close()
        except OSError as exc:
            _say(f"jroof-tui: cannot finish {recorder.path}: {exc.strerror or exc}")
            status = 1
        give_back_signals(previous)
    return status


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


"""One lifecycle for every command that runs a source to its end: ``Runtime.run(consumer)``.

``record``, ``run --headless`` and ``serve`` are consumers: what each does with the records, a
failed write, a failing source and the end is a ``Consumer``'s hooks; the order is here, once:
the stop signals are taken (a second Ctrl-C forces the stop; a signal ignored at the start, as
``nohup`` leaves it, stays ignored), a thread stops the source when asked (a signal, the caller's
``stop``, ``duration_s``), the pump runs in the caller's thread, a source that raises is said once,
the pipeline finishes (detector events still open close at the last sample), the consumer says how
it ended (its exit status), and the signals are given back.

The monitor's sources run in Textual's workers and end on its event loop, which owns the signals
and the screen: it shares ``drain`` (the pump, a failing source caught as one line) and
``CommandPhase``, not the rest. The probe's sampler is a layer below the runtime: it shares the
pump (``analysis.pump``). Nothing here imports Textual.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.runtime.signals import give_back_signals, take_signals
from jtop_roof.sources.base import Source

#: Signals that end a run cleanly: Ctrl-C, kill/systemd, and an SSH session dropping.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: How often a run that outlives its source (``linger``) looks at its ``stop``.
LINGER_POLL_S = 0.5


@dataclass(frozen=True)
class Drained:
    """How a source's stream ended: the last record delivered, and what the source raised
    (``Type: text``), if it did."""

    last: Record | None
    error: str | None = None

    @property
    def source_error(self) -> str | None:
        """The detail of a ``source_error`` event the stream ended on (the source could not run)."""
        last = self.last
        return last.detail if isinstance(last, Event) and last.kind == "source_error" else None


@dataclass(frozen=True)
class Outcome:
    """How a run ended, for its consumer's ``ended``."""

    drained: Drained
    #: The first stop signal, if one came.
    stopped_by: int | None
    #: A second Ctrl-C forced the stop.
    forced: bool
    #: ``stop`` was set when the stream ended (a signal, or the caller: a workload that exited).
    asked_to_stop: bool
    #: ``duration_s`` had passed.
    timed_out: bool
    #: The pipeline's last events could not be written.
    finish_failed: bool

    @property
    def failed(self) -> str | None:
        """Why the source failed: it raised, or it ended on a ``source_error`` it was not asked to
        stop at (a live source that cannot run); else None."""
        if self.drained.error is not None:
            return f"source failed: {self.drained.error}"
        return None if self.asked_to_stop else self.drained.source_error


class Running(Protocol):
    """What ``run_to_end`` runs: a ``Runtime`` (described and applied)."""

    @property
    def source(self) -> Source: ...

    @property
    def pipeline(self) -> Pipeline: ...

    def drain(self, deliver: Callable[[Record], object] | None = None, *,
              stopped: Callable[[], bool] = ..., write_failed: Callable[[OSError], bool] = ...,
              lock: AbstractContextManager[object] = ...) -> Drained: ...


class Consumer:
    """What a command does with its run; every hook has a default, so a consumer names only its
    own. Called in this order: ``started`` (the signals taken, before the first record),
    ``deliver`` for each record (holding the run's lock), ``write_failed``
    when the recording cannot be written (True: go on), ``source_failed`` as soon as the source
    raises, ``ending`` once the stream is over (with when the stop came), ``ended`` after the
    pipeline finished (the exit status), and ``close`` always, last (False: exit status 1)."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def started(self) -> None:
        """The run has begun: its signals are taken and its source is stopped when asked."""

    def deliver(self, record: Record) -> None:
        self.pipeline.ingest(record)

    def write_failed(self, exc: OSError) -> bool:
        return False

    def source_failed(self, error: str) -> None:
        """The source raised (``Type: text``): said at once, before the pipeline finishes."""

    def ending(self, stopped_at: tuple[float | None, float | None] | None) -> None:
        """The stream is over, before the pipeline finishes; ``stopped_at``: the pipeline's "now"
        when the stop came (None: the source ended by itself)."""

    def ended(self, outcome: Outcome) -> int:
        """The exit status: 0, or 1 where the source failed."""
        return 0 if outcome.failed is None else 1

    def close(self) -> bool:
        """Release what the consumer holds (its recording, its server); False: it failed to."""
        return True


def run_to_end(runtime: Running, consumer: Consumer, *, stop: threading.Event | None = None,
               duration_s: float | None = None, signals: Sequence[int] = STOP_SIGNALS,
               second_interrupt_forces: bool = True, linger: bool = False,
               lock: AbstractContextManager[object] | None = None) -> int:
    """``Runtime.run``: the runtime's source through the pump into ``consumer`` until it ends,
    ``stop`` is set, ``duration_s`` passes, or one of ``signals`` comes; returns ``consumer.ended``'s
    exit status (130 where a second Ctrl-C forced the stop and the consumer says so). ``linger``: a
    source that ends by itself leaves the consumer going until ``stop`` (``serve`` keeps the last
    values). ``lock``: the one the consumer's other threads hold to use the pipeline (markers).
    Must run in the main thread when it takes ``signals``."""
    pipeline, source = runtime.pipeline, runtime.source
    stop = stop if stop is not None else threading.Event()
    held: AbstractContextManager[object] = lock if lock is not None else threading.Lock()
    stopped_by: list[int] = []
    previous: dict[int, Any] = {}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not stopped_by:
            stopped_by.append(signum)
        if signum == signal.SIGINT and second_interrupt_forces:
            signal.signal(signum, previous[signum])
        # The source is stopped from another thread: this handler may interrupt the source's own
        # code in the main thread, and its stop() may need a lock that code holds.
        stop.set()

    stopped_at: list[tuple[float | None, float | None]] = []  # when the stop came (the workload's end)

    def stop_source_when_asked() -> None:
        # Event.wait overflows past threading.TIMEOUT_MAX: a huge duration is "no limit".
        limit = None if duration_s is None else min(duration_s, threading.TIMEOUT_MAX)
        stop.wait(limit)
        with held:
            stopped_at.append(pipeline.now())
        source.stop()

    previous.update(take_signals(signals, on_signal))
    stopper = threading.Thread(target=stop_source_when_asked, name="jroof-stop", daemon=True)
    deadline = None if duration_s is None else time.monotonic() + duration_s
    status = 1
    try:
        stopper.start()
        consumer.started()
        forced = False
        try:
            drained = runtime.drain(consumer.deliver, write_failed=consumer.write_failed, lock=held,
                                    stopped=lambda: deadline is not None and time.monotonic() >= deadline)
        except KeyboardInterrupt:
            drained, forced = Drained(None), True
        if drained.error is not None:
            consumer.source_failed(drained.error)
        asked = stop.is_set()
        lingers = linger and not forced and drained.error is None and (asked or drained.source_error is None)
        if not lingers:
            stop.set()
            stopper.join()
        consumer.ending(stopped_at[0] if stopped_at else None)
        finish_failed = False
        try:
            with held:
                pipeline.finish()
        except OSError:
            finish_failed = True
        if lingers:
            while not stop.wait(LINGER_POLL_S):
                pass
            stopper.join()
        status = consumer.ended(Outcome(
            drained, stopped_by[0] if stopped_by else None, forced, asked,
            deadline is not None and time.monotonic() >= deadline, finish_failed))
    finally:
        stop.set()
        if not consumer.close():
            status = 1
        give_back_signals(previous)
    return status


class CommandPhase:
    """``run``'s phase named after its command (origin ``run``), one rule for the monitor and
    ``run --headless``: it starts before the workload where the stream has a "now" already (a live
    source recorded headless), else at the stream's first sample while the command runs, unless
    the command marked a phase of its own by then; it ends when the command does, if it is still
    the phase open (the command's own first phase replaces it: ``EnergyLedger``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._waiting = True

    def starts_now(self, pipeline: Pipeline) -> bool:
        """Whether the phase starts now, before the workload (the stream has a "now")."""
        if self._waiting and pipeline.now() != (None, None):
            self._waiting = False
            return True
        return False

    def starts_at(self, record: Record, pipeline: Pipeline) -> bool:
        """Whether the phase starts at ``record``: the stream's first sample (asked once), where the
        command has marked no phase of its own."""
        if not self._waiting or not (isinstance(record, Sample) and record.is_sample):
            return False
        self._waiting = False
        return not pipeline.ledger.phases()

    def ends(self, current: str | None) -> bool:
        """Whether the command's end ends the phase open now (``current``, as the caller shows it)."""
        return current == self.name

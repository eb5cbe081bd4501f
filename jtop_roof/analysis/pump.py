"""The one pump loop: every stream of records goes through ``pump`` to whatever takes it, the
runtime's pipelines (the monitor, ``record``, ``run``, ``serve``, ``report``), a whole file's
ledger (``pipeline.build_ledger``) and the probe's sampler. It sits here, below the probe and the
runtime, so that each of them can use it. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext

from jtop_roof.analysis.sink import RecordingSink
from jtop_roof.model.records import Record

#: The pump's lock where no other thread shares what it feeds.
NO_LOCK: AbstractContextManager[object] = nullcontext()


def never() -> bool:
    """``pump``'s ``stopped`` where nothing stops it but the stream's end."""
    return False


def pump(
    records: Iterable[Record], sink: RecordingSink | None, deliver: Callable[[Record], object], *,
    stopped: Callable[[], bool] = never, write_failed: Callable[[OSError], bool] = lambda _: False,
    lock: AbstractContextManager[object] = NO_LOCK,
) -> Record | None:
    """The one pump loop: each record is written to the recording first (write-ahead, in this
    thread; ``sink`` None: nothing is recorded), then delivered to the pipeline's owner (``ingest``
    here, or a message to the UI). ``stopped`` is asked before and after each record;
    ``write_failed`` decides whether to go on (the TUI shows the error and keeps monitoring;
    ``record`` stops). Returns the last record delivered (a ``source_error`` event says the source
    could not run). A source's generator is closed on the way out, so its child process and files
    are released. ``lock``: held around each record's write and delivery when another thread marks
    phases on the same pipeline (a marker's "now" then comes from the newest sample written)."""
    last: Record | None = None
    try:
        if stopped is never and lock is NO_LOCK:  # none to ask, none to hold: the loop without them
            if sink is None:
                for record in records:
                    deliver(record)
                    last = record
                return last
            for record in records:
                try:
                    sink.write(record)
                except OSError as exc:
                    if not write_failed(exc):
                        break
                deliver(record)
                last = record
            return last
        for record in records:
            if stopped():
                break
            with lock:
                try:
                    if sink is not None:
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

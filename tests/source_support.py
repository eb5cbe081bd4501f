"""Shared by the live sources' tests: a source's records() run in a worker thread, as the TUI and
the recorder run it."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from jtop_roof.sources.base import Source

WAIT_S = 20  # generous bound for a busy 2-core machine; never a timing assertion


class Collector:
    """Runs records() in a worker thread, as the TUI and the recorder do."""

    END = object()

    def __init__(self, source: Source) -> None:
        self.source = source
        self.queue: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for record in self.source.records():
                self.queue.put(record)
        finally:
            self.queue.put(self.END)

    def take_until(self, predicate: Callable[[Any], bool]) -> list:
        """Records up to and including the first that matches."""
        taken = []
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            try:
                record = self.queue.get(timeout=0.5)
            except queue.Empty:
                continue
            if record is self.END:
                raise AssertionError(f"stream ended early after {taken!r}")
            taken.append(record)
            if predicate(record):
                return taken
        raise AssertionError(f"nothing matched; got {taken!r}")

    def stop(self) -> None:
        self.source.stop()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive(), "records() did not end after stop()"

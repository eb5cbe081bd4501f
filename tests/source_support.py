"""Work run in a worker thread under a deadline that only guards against hanging: a source's
records(), as the TUI and the recorder run them, and calls that must not block (a FIFO, a device)."""

from __future__ import annotations

import os
import queue
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from jtop_roof.sources.base import Source

WAIT_S = 20  # generous bound for a busy 2-core machine; never a timing assertion

T = TypeVar("T")


def finishes(call: Callable[[], T]) -> T:
    """``call()``'s result, or the exception it raised; fails the test instead of hanging when the
    call is still running after WAIT_S (blocked opening a FIFO, reading /dev/zero for ever)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the test's thread, which raises it
            outcome.append((False, exc))

    worker = threading.Thread(target=run, daemon=True)  # a hung call must not keep pytest alive
    worker.start()
    worker.join(WAIT_S)
    assert outcome, f"still running after {WAIT_S} s: it blocks"
    returned, value = outcome[0]
    if not returned:
        raise value
    return value


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
        taken: list[Any] = []
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


def alive(pid: int) -> bool:
    """True while the process runs; a zombie (dead, unreaped by a container's init) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def gone(pid: int) -> bool:
    deadline = time.monotonic() + WAIT_S
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def pids(path: Path, count: int = 1) -> list[int]:
    """The pids a fake wrote, waiting until ``count`` are there."""
    deadline = time.monotonic() + WAIT_S
    while True:
        found = [int(x) for x in path.read_text().split()] if path.exists() else []
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def reply_of(client: socket.socket) -> bytes:
    """Everything a server sent before it closed the connection (b"" when it cut it)."""
    chunks = []
    while True:
        try:
            chunk = client.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)

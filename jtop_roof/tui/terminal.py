"""Leaving cleanly when the terminal goes away: the monitor's watch over SSH drops and signals.

No Textual import: it only needs something it can stop and ask to exit (``Exitable``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from typing import Any, Protocol


class Exitable(Protocol):
    """What the watch stops: the app's source and recording, then the app itself."""

    loop: asyncio.AbstractEventLoop | None

    def shutdown_source(self) -> None: ...

    def exit(self, result: int) -> None: ...


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


class TerminalWatch:
    """Leaves cleanly when the terminal goes away (SSH drop, closed window) or on SIGHUP/SIGTERM.

    A hung-up terminal fails every write, which stops Textual's output thread; the event loop can
    then block for good on its full output queue, and a SIGHUP may never arrive at all (it goes to
    the session leader). So a small thread watches both the signals and ``isatty`` of the terminal,
    and on either: stops the source, closes the recording (fsync), asks the app to exit, and ends
    the process itself if the app cannot (the recording is already safe by then).
    """

    POLL_S = 2.0
    GRACE_S = 3.0

    def __init__(self, app: Exitable, fds: tuple[int, ...] = (0, 2)) -> None:
        self._app = app
        # Only descriptors that are terminals now (stderr may be redirected to a file).
        self._fds = [fd for fd in fds if _isatty(fd)]
        self._gone = threading.Event()
        self.finished = threading.Event()
        self.reason: str | None = None
        self._thread = threading.Thread(target=self._watch, name="jroof-terminal-watch", daemon=True)

    def start(self) -> None:
        for signum in (signal.SIGHUP, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        self._thread.start()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        # Only an Event.set here: the main thread may be interrupted while holding any other lock.
        self.reason = signal.Signals(signum).name
        self._gone.set()

    def _watch(self) -> None:
        while not self._gone.wait(self.POLL_S):
            if self.finished.is_set():
                return
            if not all(_isatty(fd) for fd in self._fds):
                self.reason = "terminal gone"
                break
        if self.finished.is_set():
            return
        self._app.shutdown_source()
        loop = self._app.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._app.exit, 0)
        if not self.finished.wait(self.GRACE_S):
            os._exit(0)

"""QuietDriver: Textual's Linux (and macOS) driver, whose input thread sleeps until a key comes.

Textual's input thread waits for the terminal with a 0.1 s timeout, so that it sees its exit flag
and so that a lone Escape is reported once the escape delay has run out. Idle, that is ten
wake-ups a second (0.15 % of a core here, a tenth of what the whole monitor may cost). This
thread waits without a timeout, except while the parser waits for the rest of an escape sequence
(then until that delay ends); setting the exit flag also writes to a pipe the thread waits on.

``run_input_thread`` is Textual's (the same in textual 7.5, 8.1.1 and 8.2.8, tests/constraints.txt)
but for the timeout and the pipe; it reads the parser's ``_timeout_time``, a private field.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder
from typing import TYPE_CHECKING, Any

from textual._loop import loop_last
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

if TYPE_CHECKING:
    from textual.app import App


class _WakingEvent(threading.Event):
    """An event whose ``set`` also writes a byte to a pipe, to wake a thread blocked in select."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self.wake_fd: int | None = wake_fd

    def set(self) -> None:
        super().set()
        if self.wake_fd is not None:
            try:
                os.write(self.wake_fd, b"\0")
            except BlockingIOError:  # the pipe is full: the thread has plenty to wake on
                pass


class QuietDriver(LinuxDriver):
    """``LinuxDriver`` whose input thread blocks until input, the end of an escape delay, or exit."""

    def __init__(self, app: App[Any], *, debug: bool = False, mouse: bool = True,
                 size: tuple[int, int] | None = None) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._wake_read, wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(wake_write, False)
        self._waking = _WakingEvent(wake_write)
        self.exit_event = self._waking

    def close(self) -> None:
        super().close()
        wake_write, self._waking.wake_fd = self._waking.wake_fd, None
        if wake_write is not None:
            os.close(wake_write)
            os.close(self._wake_read)

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop; see the module docstring)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_read, selectors.EVENT_READ)
        fileno, wake = self.fileno, self._wake_read
        parser = XTermParser(self._debug)
        feed, tick = parser.feed, parser.tick
        decode = getincrementaldecoder("utf-8")().decode

        def process_selector_events(selector_events: list[tuple[selectors.SelectorKey, int]],
                                    final: bool = False) -> None:
            for last, (selector_key, mask) in loop_last(selector_events):
                if selector_key.fd == wake:
                    _drain(wake)
                elif mask & selectors.EVENT_READ:
                    unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # stdin is a pipe that was closed
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        def timeout() -> float | None:
            """None (block) unless the parser waits for the rest of an escape sequence."""
            pending: float | None = parser._timeout_time
            return None if pending is None else max(0.0, pending - get_time())

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(timeout()))
            selector.unregister(self.fileno)
            selector.unregister(wake)
            process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass


def _drain(fd: int) -> None:
    """Read what the pipe holds (it is non-blocking)."""
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass

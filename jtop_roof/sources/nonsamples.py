"""How many lines that are not samples a live source passes on: a board spewing binary would
otherwise record every junk line (hundreds of MB a minute). At most ``PER_WINDOW`` such lines are
kept per ``WINDOW_S`` seconds, and ``MAX_KEPT`` in all; the rest are dropped and counted, and the
count is said once per window (a ``note`` event), so a recording says what it left out. A real
tegrastats prints such a line rarely (a warning, a ``date`` header): all are kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: The window lines that are not samples are counted in, in seconds.
WINDOW_S = 10.0
#: Lines that are not samples kept per window.
PER_WINDOW = 10
#: Lines that are not samples kept in all (by one source, across its restarts).
MAX_KEPT = 500


class NonSampleGate:
    """Decides which lines that are not samples a source keeps, and says what it dropped.

    ``keep()`` for each such line: True to pass it on. ``said()`` at each record (and at the end of
    the stream, ``final``): the note's text once a window with drops has ended, else None."""

    def __init__(self, name: str, *, window_s: float = WINDOW_S, per_window: int = PER_WINDOW,
                 max_kept: int = MAX_KEPT, clock: Callable[[], float] = time.monotonic) -> None:
        self._name = name
        self._window_s = window_s
        self._per_window = per_window
        self._max_kept = max_kept
        self._clock = clock
        self._window_start: float | None = None
        self._kept_in_window = 0
        self._dropped = 0  # in the window, not said yet
        self.kept = 0
        #: Dropped in all, said or not.
        self.dropped = 0

    def keep(self) -> bool:
        now = self._clock()
        if self._window_start is None or now - self._window_start >= self._window_s:
            self._window_start, self._kept_in_window = now, 0
        if self._kept_in_window < self._per_window and self.kept < self._max_kept:
            self._kept_in_window += 1
            self.kept += 1
            return True
        self._dropped += 1
        self.dropped += 1
        return False

    def said(self, *, final: bool = False) -> str | None:
        """The note for the lines dropped in a window that has ended (any window when ``final``)."""
        if not self._dropped:
            return None
        start = self._window_start
        if not final and start is not None and self._clock() - start < self._window_s:
            return None
        dropped, self._dropped = self._dropped, 0
        self._window_start = None
        lines = f"{dropped:,} line{'' if dropped == 1 else 's'}"
        return (f"dropped {lines} from {self._name} that {'is' if dropped == 1 else 'are'} not samples: "
                f"at most {self._per_window} are kept per {self._window_s:g} s, {self._max_kept} in all")

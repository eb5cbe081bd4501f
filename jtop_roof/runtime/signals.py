"""Taking the stop signals and giving them back: ``record``, ``run`` and ``serve`` stop cleanly on
Ctrl-C, kill and an SSH hangup, and leave alone a signal that was ignored when they started
(``nohup``, ``&`` in a script)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any


def take_signals(signals: Iterable[int], handler: Callable[[int, FrameType | None], None]) -> dict[int, Any]:
    """Install ``handler`` for each of ``signals`` that is not ignored (``nohup``'s SIG_IGN stays);
    returns the handlers it replaced, for ``give_back_signals``."""
    previous: dict[int, Any] = {}
    for signum in signals:
        current = signal.getsignal(signum)
        if current is not signal.SIG_IGN:
            previous[signum] = current
            signal.signal(signum, handler)
    return previous


def give_back_signals(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)

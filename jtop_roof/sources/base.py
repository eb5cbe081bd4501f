"""The source interface.

A source is a blocking iterator of records (samples, markers, events) meant to run in one worker
thread (Textual thread worker, or the headless recorder's main loop). ``stop()`` may be called from
any thread and makes ``records()`` return soon. Nothing here imports Textual.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from jtop_roof.model import Record


class Source(ABC):
    """Base class of every source (tegrastats, host, replay, demo)."""

    #: "tegrastats" | "host" | "replay" | "demo"
    kind: str = ""

    @abstractmethod
    def records(self) -> Iterator[Record]:
        """Yield records until the source ends or ``stop()`` is called. Never raises for bad data."""

    @abstractmethod
    def stop(self) -> None:
        """Ask ``records()`` to end soon; thread-safe and idempotent. Ends any child process."""

    def describe(self) -> dict[str, Any]:
        """Identity and context for the recording header and the UI header: board or host name,
        device model, power mode, maximum clocks, active GPU TPCs, thermal trip points, interval,
        command used, hints (e.g. which fields need root). Keys absent when unknown."""
        return {"source": self.kind}

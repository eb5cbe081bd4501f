"""The source interface.

A source is a blocking iterator of records (samples, markers, events) meant to run in one worker
thread (Textual thread worker, or the headless recorder's main loop). ``stop()`` may be called from
any thread and makes ``records()`` return soon. Nothing here imports Textual.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Record


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

    def describe(self) -> SourceInfo:
        """Identity and context for the recording header and the UI header: board or host name,
        device model, power mode, maximum clocks, active GPU TPCs, thermal trip points, interval,
        command used, hints (e.g. which fields need root). May run commands (``nvpmodel -q``):
        call it from the source's thread."""
        return SourceInfo(self.kind, header={"source": self.kind})


@runtime_checkable
class ReplayControls(Protocol):
    """Transport controls of a source that plays a file (replay, demo). Thread-safe: the UI
    calls them while ``records()`` runs in the worker. The App checks a source against this
    instead of its kind or attributes."""

    @property
    def paused(self) -> bool: ...

    @property
    def speed(self) -> float: ...

    @property
    def position_s(self) -> float: ...

    @property
    def duration_s(self) -> float: ...

    @property
    def indexing(self) -> bool:
        """True while the file is still being read for its length: ``duration_s`` is a lower bound."""
        ...

    @property
    def backfilling(self) -> bool:
        """True while the record just handed out is one of a seek's that more follow at once (its
        event and backfill): the pump may hand them on together. Read in the pump's thread."""
        ...

    @property
    def following(self) -> bool: ...

    @property
    def follow_enabled(self) -> bool: ...

    def toggle_pause(self) -> None: ...

    def resume(self) -> None: ...

    def step(self) -> None: ...

    def set_speed(self, speed: float) -> None: ...

    def seek(self, seconds: float, relative: bool = True) -> None: ...

    def seek_to(self, position: str) -> None: ...

    def set_follow(self, on: bool) -> None: ...

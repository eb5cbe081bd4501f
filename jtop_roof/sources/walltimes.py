"""The wall times of a file index's entries, stored compactly (``fileindex.FileIndex``)."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Iterator


class WallTimes:
    """The wall times of an index's entries (NaN: none), as runs of one offset from their
    ``t_mono`` while that gives each back exactly (a plain log's timeline is one run between
    clock jumps: 8 bytes a line less), else one float each (a recording's clocks drift apart).
    Appended before the entry's ``t_mono`` (``FileIndex._append``), read only for entries in."""

    def __init__(self, monos: array[float]) -> None:
        self._monos = monos
        self._starts = array("q")  # first entry of each run
        self._offsets = array("d")  # wall - mono of each run
        self._dense: array[float] | None = None
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> float:
        dense = self._dense
        if dense is not None:
            return dense[index]
        return self._monos[index] + self._offsets[bisect_right(self._starts, index) - 1]

    def __iter__(self) -> Iterator[float]:
        return (self[i] for i in range(self._count))

    def append(self, mono: float, wall: float) -> None:
        dense, offsets = self._dense, self._offsets
        if dense is None:
            if offsets and (mono + offsets[-1] == wall or (math.isnan(wall) and math.isnan(offsets[-1]))):
                self._count += 1
                return
            offset = wall - mono
            if (mono + offset == wall or math.isnan(wall)) and len(offsets) <= 16 + self._count // 4:
                self._starts.append(self._count)
                offsets.append(offset)
                self._count += 1
                return
            dense = array("d", self)  # runs no longer pay: one float each from here
            dense.append(wall)
            self._dense = dense
        else:
            dense.append(wall)
        self._count += 1

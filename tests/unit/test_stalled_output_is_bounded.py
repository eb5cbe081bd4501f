"""A recording whose output stalls (a reader of ``record -`` that stopped reading) holds a bounded
number of the source's records; what it could not hold is dropped, counted, and said in the
recording, never kept without bound."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

from power_tree import FakeIna3221
from source_support import WAIT_S

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.sources import power
from jtop_roof.sources.base import Source
from jtop_roof.sources.power import PoweredSource, board_meters

PRODUCED = 5000
#: The bound the module states (1024); a stream without one holds every record produced.
BOUND = getattr(power, "MAX_WAITING", 1024)


class Flood(Source):
    """A live source that reads far faster than the stalled pump takes its records."""

    kind = "tegrastats"

    def __init__(self) -> None:
        self.done = threading.Event()

    def records(self) -> Iterator[Record]:
        for n in range(PRODUCED):
            yield Sample(t_mono=float(n))
        self.done.set()

    def stop(self) -> None:
        pass

    def describe(self) -> SourceInfo:
        return SourceInfo.from_mapping({"source": self.kind})


def test_records_waiting_for_a_stalled_pump_are_bounded_and_the_drop_is_said(tmp_path: Path):
    FakeIna3221(tmp_path, {"VDD_IN": (5048, 1432)})
    inner = Flood()
    source = PoweredSource(inner, lambda: board_meters(tmp_path), 5.0, root=str(tmp_path), fallback="unused")
    stream = source.records()
    taken = [next(stream)]  # the pump takes one record, then its output stalls
    assert inner.done.wait(WAIT_S)
    waiting = source._queue.qsize()
    taken += list(stream)  # the reader comes back: the rest flows
    samples = [record for record in taken if isinstance(record, Sample)]
    notes = [record for record in taken if isinstance(record, Event) and record.kind == "note"]
    assert waiting <= BOUND + 2  # the records, a note and the end: never the whole flood
    assert len(notes) == 1
    found = re.match(r"(\d+) records of the source dropped", notes[0].detail)
    assert found is not None
    assert len(samples) + int(found.group(1)) == PRODUCED  # every record is either kept or counted
    times = [sample.t_mono for sample in samples]
    assert times == sorted(times)  # the kept ones in order, with their own times

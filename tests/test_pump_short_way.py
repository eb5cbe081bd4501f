"""``pump`` with nothing to ask (``stopped``) and no lock goes a loop without them: it writes and
delivers the same records, stops at the same write error and closes the stream, as the long way."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import pytest

from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.runtime.runtime import pump


class _Sink:
    """Writes into a list; fails on the records ``failing`` names (by t_mono)."""

    def __init__(self, failing: set[float]) -> None:
        self.written: list[Record] = []
        self.failing = failing

    def write(self, record: Record) -> None:
        if record.t_mono in self.failing:
            raise OSError("disk full")
        self.written.append(record)


def _records(closed: list[bool]) -> Iterator[Record]:
    try:
        for i in range(6):
            yield Sample(t_mono=float(i)) if i % 2 else Event("note", "", None, float(i))
    finally:
        closed.append(True)


def _run(failing: set[float], go_on: bool, *, long_way: bool) -> tuple[list, list, Record | None, list]:
    sink = _Sink(failing)
    delivered: list[Record] = []
    closed: list[bool] = []
    kwargs: dict[str, Any] = {"stopped": lambda: False, "lock": nullcontext()} if long_way else {}
    last = pump(_records(closed), sink, delivered.append,  # type: ignore[arg-type]  # a fake sink
                write_failed=lambda _: go_on, **kwargs)
    return sink.written, delivered, last, closed


@pytest.mark.parametrize(("failing", "go_on"),
                         [(set(), False), ({3.0}, False), ({3.0}, True), ({0.0}, False)])
def test_the_short_way_writes_delivers_stops_and_closes_as_the_long_way(failing, go_on):
    short, long = _run(failing, go_on, long_way=False), _run(failing, go_on, long_way=True)
    assert short == long
    assert short[3] == [True]

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


@pytest.mark.parametrize("long_way", [False, True])
def test_without_a_recording_every_record_is_delivered_and_the_stream_closed(long_way):
    """``sink`` None (a whole file's ledger, the probe's sampler): delivered as with a recording."""
    delivered: list[Record] = []
    closed: list[bool] = []
    kwargs: dict[str, Any] = {"stopped": lambda: False, "lock": nullcontext()} if long_way else {}
    last = pump(_records(closed), None, delivered.append, **kwargs)
    assert delivered == _run(set(), False, long_way=long_way)[1] and len(delivered) == 6
    assert last is delivered[-1] and closed == [True]


def test_the_probes_sampler_and_a_whole_files_ledger_go_through_the_pump(monkeypatch):
    """Both feed from the one pump: a pump that sees nothing starves them."""
    import jtop_roof.analysis.pipeline as pipeline_module
    import jtop_roof.probe.sampler as sampler_module

    seen: list[str] = []

    def counting(records, sink, deliver, **kwargs):
        seen.append("pump")
        return pump(records, sink, deliver, **kwargs)

    monkeypatch.setattr(pipeline_module, "pump", counting)
    monkeypatch.setattr(sampler_module, "pump", counting)
    ledger = pipeline_module.build_ledger([Sample(t_mono=0.0), Sample(t_mono=1.0)], 1.0)
    assert ledger is not None and seen == ["pump"]

    class _Two:
        kind = "test"

        def describe(self):
            from jtop_roof.model.info import SourceInfo

            return SourceInfo("test")

        def records(self):
            yield Sample(t_mono=0.0)
            yield Sample(t_mono=1.0)

        def stop(self):
            pass

    sampler = sampler_module.SourceSampler(_Two())  # type: ignore[arg-type]  # a fake source
    sampler.start()
    sampler.stop()
    assert sampler.count() == 2 and seen == ["pump", "pump"]

"""A marker made in a replay reads the whole file's ledger again off the pipeline's
thread (``analysis.rebuild``): the ledger shown stays until the new one is there, a newer read
supersedes an older one, automatic phase names never repeat meanwhile, ``finish`` waits for it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.analysis.pipeline import Pipeline, build_ledger
from jtop_roof.model.records import Gpu, Marker, Rail, Sample, Work

RECORDS = [Sample(t_mono=float(t), gpu=Gpu(99.0, (1980,)), rails={"NVML_GPU": Rail(1000.0)})
           for t in range(20)]
BOUND_S = 10.0  # a bound against hanging, never a timing check


class SlowBuilder:
    """Reads the "file" (RECORDS) only when let through, one read at a time, and says what it read."""

    def __init__(self, fail: bool = False) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.reads: list[int] = []  # how many session markers each read was given
        self.fail = fail

    def __call__(self, markers: Sequence[Marker | Work]) -> EnergyLedger:
        self.started.set()
        assert self.gate.wait(BOUND_S)
        self.reads.append(len(markers))
        if self.fail:
            raise OSError("the file vanished")
        return build_ledger(RECORDS, 1.0, markers)


def replaying(builder: SlowBuilder) -> Pipeline:
    pipeline = Pipeline(history_s=60, interval_s=1.0, replayed=True)
    pipeline.load_ledger(builder, build_ledger(RECORDS, 1.0))  # the first read, already done
    for record in RECORDS[:10]:
        pipeline.ingest(record)
    return pipeline


def test_a_mark_does_not_wait_for_the_files_ledger_and_finish_does():
    builder = SlowBuilder()
    pipeline = replaying(builder)
    version = pipeline.ledger_version
    first, _ = pipeline.mark("phase_start", None, "key", None, 4.5)
    assert builder.started.wait(BOUND_S)  # being read, and held there
    assert pipeline.ledger.phases() == [] and pipeline.ledger_version == version  # the old one stays
    assert pipeline.current_phase == first.name == "phase 1"  # the display has it at once
    assert pipeline.next_auto_name == "phase 2"  # not "phase 1" again while the read goes on
    second, _ = pipeline.mark("phase_start", None, "key", None, 7.5)
    assert second.name == "phase 2"
    builder.gate.set()
    pipeline.finish()
    assert [phase.name for phase in pipeline.ledger.phases()] == ["phase 1", "phase 2"]
    assert pipeline.ledger_version > version
    assert pipeline.next_auto_name == "phase 3"


def test_a_newer_read_supersedes_the_ones_waiting_and_the_newest_is_taken():
    builder = SlowBuilder()
    pipeline = replaying(builder)
    pipeline.mark("phase_start", "a", "key", None, 3.5)
    assert builder.started.wait(BOUND_S)  # the first read is under way: the next ones wait
    pipeline.mark("phase_start", "b", "key", None, 5.5)
    pipeline.work(4, 8e12, None, "fp32", None, 6.0)
    pipeline.mark("phase_end", None, "key", None, 8.5)
    builder.gate.set()
    pipeline.finish()
    assert builder.reads == [1, 4]  # the one under way, then only the newest of those waiting
    phases = pipeline.ledger.phases()
    assert [(p.name, p.iterations) for p in phases] == [("a", None), ("b", 4)]
    assert not phases[-1].is_open


def test_a_read_ready_is_taken_when_the_ledger_is_asked_for():
    builder = SlowBuilder()
    builder.gate.set()
    pipeline = replaying(builder)
    version = pipeline.ledger_version
    pipeline.mark("phase_start", "a", "key", None, 3.5)
    for _ in range(1000):  # the read finishes in its thread; the pipeline takes it when asked
        if pipeline.ledger_version != version:
            break
        threading.Event().wait(BOUND_S / 1000)
    assert [phase.name for phase in pipeline.ledger.phases()] == ["a"]


def test_a_read_that_fails_keeps_the_ledger_shown_and_finish_does_not_hang():
    builder = SlowBuilder(fail=True)
    builder.gate.set()
    pipeline = replaying(builder)
    whole = pipeline.ledger.whole
    pipeline.mark("phase_start", "a", "key", None, 3.5)
    pipeline.finish()
    assert pipeline.ledger.whole == whole and pipeline.ledger.phases() == []


@pytest.mark.parametrize("names", [["x", None], [None, None, None]])
def test_automatic_names_count_the_marks_a_read_does_not_hold_yet(names):
    builder = SlowBuilder()
    pipeline = replaying(builder)
    given = [pipeline.mark("phase_start", name, "key", None, 2.5 + i)[0].name for i, name in enumerate(names)]
    assert len(set(given)) == len(given)
    builder.gate.set()
    pipeline.finish()
    assert [phase.name for phase in pipeline.ledger.phases()] == given

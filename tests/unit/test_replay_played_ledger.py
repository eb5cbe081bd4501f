"""What a replay shows of its open phase comes from the ledger of what played, which must share
every edge with the whole file's ledger: markers beside the stream (trtexec's) go into both at
their own time, between samples and power readings alike. A phase the replay was sought into
shows nothing of the file's unplayed rest: its energy, clocks and work are None, and it says why."""

from __future__ import annotations

import pytest

from jtop_roof.analysis.pipeline import Pipeline, build_ledger
from jtop_roof.analysis.replay_ledger import SOUGHT_INTO_NOTE
from jtop_roof.model.records import Clocked, Event, Gpu, Marker, PowerReading, Rail, Record, Sample, Work

END_S = 20


def watts(t: float) -> float:
    """A ramp: a phase edge moved by a fraction of a second changes the phase's energy."""
    return 5000.0 + 100.0 * t


def samples(with_power: bool = False) -> list[Record]:
    """1 s samples (VDD_IN, GPU and EMC clocks); ``with_power``: a 4 Hz power stream between them."""
    records: list[Record] = []
    for t in range(END_S):
        records.append(Sample(t_mono=float(t), gpu=Gpu(99.0, (1000 + 10 * t,)), emc=Clocked(50.0, 2000),
                              rails={"VDD_IN": Rail(watts(t))}))
        if with_power:
            records += [PowerReading(None, t + q, {"VDD_IN": watts(t + q)}, {}, "INA3221 hwmon", 0.25)
                        for q in (0.25, 0.5, 0.75)]
    return records


#: trtexec's timed phase, opened between two samples (and between two power readings) and never
#: ended: the file ends inside it.
EXTRAS: tuple[Marker | Work, ...] = (Marker("phase_start", "timed", None, 4.6, "trtexec"),
                                     Work(100.0, None, None, "fp16", None, 6.6))


def replaying(records: list[Record]) -> Pipeline:
    """As the monitor sets up a replay: the whole file's ledger, then trtexec's records beside it."""
    pipeline = Pipeline(history_s=60, interval_s=1.0, replayed=True)
    pipeline.load_ledger(lambda extra: build_ledger(records, 1.0, extra), build_ledger(records, 1.0, EXTRAS))
    pipeline.add_extras(EXTRAS)
    return pipeline


def sought(records: list[Record], *, played: int, seek_s: float, again_from: int,
           until: int = 13) -> Pipeline:
    """A replay that played ``records[:played]``, was sought to ``seek_s`` and played again from
    ``records[again_from]`` (a seek backfills from before its target) to ``records[until]``."""
    pipeline = replaying(records)
    for record in records[:played]:
        pipeline.ingest(record)
    pipeline.ingest(Event("seek", f"seek to {seek_s} s", None, seek_s))
    for record in records[again_from:until]:
        pipeline.ingest(record)
    return pipeline


def shown(pipeline: Pipeline):
    head = pipeline.history.last_t_mono
    assert head is not None
    span = pipeline.ledger.phase_at(head)
    assert span is not None and span.is_open and span.name == "timed"
    return head, span, pipeline.at_play_head(span)


@pytest.mark.parametrize("with_power", [False, True], ids=["samples", "samples and power readings"])
def test_a_marker_beside_the_stream_opens_the_played_phase_where_the_file_ledger_does(with_power):
    records = samples(with_power)
    pipeline = replaying(records)
    played = [r for r in records if r.t_mono is not None and r.t_mono <= 12.0]
    for record in played:
        pipeline.ingest(record)
    head, _, phase = shown(pipeline)
    expected = build_ledger(played, 1.0, EXTRAS).phase_at(head)
    assert expected is not None and expected.first_mono == 4.6
    assert (phase.first_mono, phase.last_mono) == (4.6, expected.last_mono)
    assert phase.energy_j is not None and phase.energy_j == pytest.approx(expected.energy_j)
    assert phase.iterations == 100.0


def test_at_the_files_end_the_played_phase_is_the_file_ledgers():
    """trtexec's phase left open at the file's end: played through, both ledgers agree."""
    records = samples(with_power=True)
    pipeline = replaying(records)
    for record in records:
        pipeline.ingest(record)
    _, whole_file, phase = shown(pipeline)
    assert phase.energy_j == pytest.approx(whole_file.energy_j)
    assert (phase.first_mono, phase.last_mono, phase.iterations) == (
        whole_file.first_mono, whole_file.last_mono, whole_file.iterations)


def test_a_phase_sought_into_shows_nothing_of_the_files_unplayed_rest():
    """Sought to 10 s with 1 s played again before it: the phase began at 4.6 s, so its energy,
    mean clocks, work, energy source and processes from its start are not known here."""
    records = samples()
    head, whole_file, phase = shown(sought(records, played=4, seek_s=10.0, again_from=9))
    assert whole_file.mean_gpu_mhz is not None and whole_file.energy_total_source == "measured"
    assert (phase.name, phase.first_mono, phase.last_mono, phase.is_open) == ("timed", 4.6, head, True)
    assert phase.energy_j is None and phase.energy_note == SOUGHT_INTO_NOTE
    assert (phase.mean_gpu_mhz, phase.mean_emc_mhz, phase.iterations, phase.precision) == (None,) * 4
    assert (phase.energy_source, phase.energy_total_source, phase.power_period_s) == (None,) * 3
    assert phase.processes == () and phase.gaps == 0 and phase.samples == 0


def test_a_seek_back_before_the_phases_start_shows_it_from_its_start_again():
    """Sought to 3 s (played again from 2 s): trtexec's edge at 4.6 s is played again, so the
    phase's energy up to the head is known, as a live run would have counted it."""
    records = samples()
    head, _, phase = shown(sought(records, played=10, seek_s=3.0, again_from=2))
    expected = build_ledger(records[:13], 1.0, EXTRAS).phase_at(head)
    assert expected is not None and (phase.first_mono, phase.last_mono) == (4.6, head)
    assert phase.energy_j is not None and phase.energy_j == pytest.approx(expected.energy_j)
    assert phase.energy_note is None and phase.mean_gpu_mhz == pytest.approx(expected.mean_gpu_mhz)

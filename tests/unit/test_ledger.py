"""The ledger: phases and energy of the run and of every phase, integrated as the monitor does."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.model.records import Event, Marker, Rail, Sample, Work


def sample(t, rails, wall=None):
    return Sample(t_mono=t, t_wall=wall, rails={name: Rail(mw, 99_999.0) for name, mw in rails.items()})


def feed(pipeline, *records):
    for record in records:
        pipeline.ingest(record)


def test_energy_is_the_trapezoid_of_instantaneous_power_never_the_running_average():
    pipeline = Pipeline(history_s=60, interval_s=1.0)
    # 5 W then 7 W over 2 s: (5+7)/2 * 2 = 12 J. VDD_SOC 2 W constant: 4 J. The avg (99.999 W) is ignored.
    feed(pipeline, sample(0.0, {"VDD_IN": 5000.0, "VDD_SOC": 2000.0}),
         sample(2.0, {"VDD_IN": 7000.0, "VDD_SOC": 2000.0}))
    whole = pipeline.ledger.whole
    assert whole.energy_j == pytest.approx(12.0)
    assert whole.rails_j == {"VDD_IN": pytest.approx(12.0), "VDD_SOC": pytest.approx(4.0)}
    assert whole.peak_mw == 7000.0 and whole.rail_peak_mw["VDD_SOC"] == 2000.0
    assert whole.mean_mw == pytest.approx(6000.0) and whole.duration_s == 2.0


def test_a_gap_event_or_an_unobserved_step_is_counted_never_integrated():
    ledger_of_gap = Pipeline(history_s=60, interval_s=1.0)
    feed(ledger_of_gap, sample(0.0, {"VDD_IN": 1000.0}), sample(1.0, {"VDD_IN": 1000.0}),
         Event("gap", "no data", None, 4.0, gap_s=3.0), sample(4.0, {"VDD_IN": 1000.0}),
         sample(5.0, {"VDD_IN": 1000.0}))
    assert ledger_of_gap.ledger.whole.energy_j == pytest.approx(2.0)
    assert ledger_of_gap.ledger.whole.gaps == 1
    unobserved = EnergyLedger(interval_s=1.0)  # longest integrated step: max(5 s, 10 intervals)
    unobserved.add_sample(0.0, None, 1000.0, {})
    unobserved.add_sample(60.0, None, 1000.0, {})
    assert unobserved.whole.energy_j == 0.0 and unobserved.whole.gaps == 1


def test_every_finished_phase_is_kept_with_its_own_samples_only():
    pipeline = Pipeline(history_s=60, interval_s=1.0)
    feed(pipeline, sample(0.0, {"VDD_IN": 2000.0}), sample(1.0, {"VDD_IN": 2000.0}),
         Marker("phase_start", "warm", None, 1.5),
         sample(2.0, {"VDD_IN": 4000.0}), sample(3.0, {"VDD_IN": 6000.0}),
         Marker("phase_end", None, None, 3.0),
         sample(4.0, {"VDD_IN": 2000.0}),
         Marker("phase_start", None, None, 4.5), sample(5.0, {"VDD_IN": 2000.0}),
         sample(6.0, {"VDD_IN": 2000.0}))
    warm, second = pipeline.ledger.phases()
    # The phase runs marker to marker, 1.5 s to 3.0 s: 3 W interpolated at 1.5 s, then 4 W and 6 W.
    assert (warm.name, warm.samples, warm.duration_s, warm.is_open) == ("warm", 2, 1.5, False)
    assert warm.energy_j == pytest.approx((3 + 4) / 2 * 0.5 + (4 + 6) / 2)
    assert warm.mean_mw == pytest.approx(warm.energy_j / 1.5 * 1000)
    assert warm.peak_mw == 6000.0 and warm.start_mono == 1.5 and warm.first_mono == 1.5
    assert (second.first_mono, second.last_mono) == (4.5, 6.0)
    assert second.name == "phase 2" and second.is_open and second.energy_j == pytest.approx(3.0)
    assert pipeline.ledger.whole.energy_j == pytest.approx(2 + 3 + 5 + 4 + 2 + 2)
    assert pipeline.ledger.phase_at(2.5) == warm and pipeline.ledger.phase_at(4.0) is None


def test_the_last_worked_phase_by_a_time_is_the_latest_ended_one_that_reported_work():
    pipeline = Pipeline(history_s=60, interval_s=1.0)
    feed(pipeline, sample(0.0, {"VDD_IN": 2000.0}), Marker("phase_start", "a", None, 0.5),
         sample(1.0, {"VDD_IN": 2000.0}), Work(10, 1e9, 1e8, "fp16", None, 1.5),
         Marker("phase_end", None, None, 2.0), sample(3.0, {"VDD_IN": 2000.0}),
         Marker("phase_start", "b", None, 4.0), sample(5.0, {"VDD_IN": 2000.0}),
         Work(20, 2e9, 2e8, "fp16", None, 5.5), Marker("phase_end", None, None, 6.0),
         Marker("phase_start", "idle", None, 6.5), sample(7.0, {"VDD_IN": 2000.0}),
         Marker("phase_end", None, None, 7.5),
         Marker("phase_start", "c", None, 8.0), sample(9.0, {"VDD_IN": 2000.0}),
         Work(30, 3e9, 3e8, "fp16", None, 9.0))
    ledger = pipeline.ledger
    assert ledger.last_worked(1.9) is None
    assert ledger.last_worked(2.0).name == "a" and ledger.last_worked(5.9).name == "a"
    assert ledger.last_worked(6.0).iterations == 20 and not ledger.last_worked(6.0).is_open
    assert ledger.last_worked(7.5).name == "b"  # "idle" ended later, without work
    assert ledger.last_worked().name == "b"  # "c" reported work, but it is open: it has not ended


def test_a_resumed_phase_continues_and_auto_names_count_every_phase():
    ledger = EnergyLedger()
    assert ledger.start_phase(None, 0.0) == "phase 1"
    assert ledger.start_phase("a", 1.0) == "a"
    assert ledger.start_phase("a", 2.0, origin="resume") == "a"  # the same phase, not a new one
    assert [p.name for p in ledger.phases()] == ["phase 1", "a"]
    assert ledger.next_auto_name == "phase 3"
    assert ledger.start_phase("other", 3.0, origin="resume") == "other"  # nothing to resume: a start


def test_the_stream_played_again_after_a_seek_back_counts_once():
    """Live, follow and the demo have no whole file: the ledger takes the stream forward only."""
    records = [sample(float(t), {"VDD_IN": 1000.0}) for t in range(6)]
    once = Pipeline(history_s=60, interval_s=1.0)
    feed(once, *records)
    again = Pipeline(history_s=60, interval_s=1.0)
    feed(again, *records[:4], Marker("phase_start", "p", None, 3.0), *records[4:],
         Event("seek", "seek to 1.0 s", None, 1.0), *records[:4], Marker("phase_start", "p", None, 3.0),
         *records[4:])
    assert again.ledger.whole.energy_j == pytest.approx(once.ledger.whole.energy_j)
    assert again.ledger.whole.samples == 6 and len(again.ledger.phases()) == 1
    assert len(again.history) == 6  # the display history was refilled, not doubled


def test_work_and_a_marker_played_again_after_a_seek_back_count_once():
    """The forward-only ledger's count-once (``CountedOnce``): work has no key to know it by, so
    what the ledger took already is known by its time; a marker before that time is not new."""
    records = [sample(float(t), {"VDD_IN": 1000.0}) for t in range(6)]
    pipeline = Pipeline(history_s=60, interval_s=1.0)
    work = Work(10.0, 1e9, None, None, None, 3.0)
    feed(pipeline, *records[:4], work, *records[4:], Event("seek", "seek to 1.0 s", None, 1.0),
         *records[:4], Work(10.0, 1e9, None, None, None, 3.0), Marker("phase_start", "q", None, 2.0),
         *records[4:])
    assert pipeline.ledger.whole.iterations == 10.0 and pipeline.ledger.phases() == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=60000), min_size=2, max_size=40),
       st.floats(min_value=0.01, max_value=4.0))
def test_constant_step_energy_matches_numpy_trapezoid(powers, step):
    pipeline = Pipeline(history_s=600, interval_s=step)
    for i, mw in enumerate(powers):
        pipeline.ingest(sample(i * step, {"VDD_IN": mw}))
    expected = float(np.sum((np.array(powers[1:]) + np.array(powers[:-1])) / 2 * step)) / 1000
    assert pipeline.ledger.whole.energy_j == pytest.approx(expected, rel=1e-9, abs=1e-9)

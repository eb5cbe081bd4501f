"""History ring buffers, downsampling and phase markers (display only; energy: test_ledger)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jtop_roof.analysis.history import MAX_ROWS, History
from jtop_roof.model.records import Clocked, CpuCore, Event, Gpu, Marker, Memory, Rail, Sample


def make_sample(t, *, gpu=50.0, rails=None, temps=None, cpus=None, wall=None):
    rails = {"VDD_IN": 5000.0, "VDD_SOC": 2000.0} if rails is None else rails
    return Sample(
        t_wall=wall,
        t_mono=t,
        ram=Memory(1000, 7600),
        cpus=[CpuCore(10.0, 1728), CpuCore(30.0, 1728)] if cpus is None else cpus,
        gpu=Gpu(gpu, (1020,)),
        emc=Clocked(5.0, 3199),
        temps_c={"tj": 50.0} if temps is None else temps,
        rails={name: Rail(mw, mw) for name, mw in rails.items()},
    )


def test_ring_keeps_the_newest_rows_in_order():
    history = History(5)
    for t in range(12):
        history.append(make_sample(float(t), gpu=float(t)))
    assert len(history) == 5
    times, values = history.series("gpu_load", None, None, buckets=100)
    assert list(times) == [7.0, 8.0, 9.0, 10.0, 11.0]
    assert list(values) == [7.0, 8.0, 9.0, 10.0, 11.0]
    assert history.last_t_mono == 11.0


def test_window_selects_by_stream_time_across_the_wrap():
    history = History(8)
    for t in range(20):
        history.append(make_sample(float(t), gpu=float(t)))
    times, _ = history.series("gpu_load", 14.5, 17.0, buckets=100)
    assert list(times) == [15.0, 16.0, 17.0]


def test_downsampling_averages_buckets_and_skips_nan():
    history = History(100)
    for t in range(10):
        history.append(make_sample(float(t), gpu=float("nan") if t in (2, 3) else float(t)))
    times, values = history.series("gpu_load", None, None, buckets=5)
    assert len(times) == 5
    assert list(times) == [0.5, 2.5, 4.5, 6.5, 8.5]
    assert math.isnan(values[1])  # both readings of the bucket are missing
    assert list(values[[0, 2, 3, 4]]) == [0.5, 4.5, 6.5, 8.5]


def test_cpu_average_ignores_offline_cores_and_cores_appear_dynamically():
    history = History(10)
    history.append(make_sample(0.0, cpus=[CpuCore(20.0, 1000), None]))
    history.append(make_sample(1.0, cpus=[CpuCore(20.0, 1000), CpuCore(60.0, 1000), CpuCore(40.0, 900)]))
    assert history.cores == 3
    _, avg = history.series("cpu_avg_load", None, None, 10)
    assert list(avg) == [20.0, 40.0]
    _, core2 = history.series("cpu_load:2", None, None, 10)
    assert math.isnan(core2[0]) and core2[1] == 40.0
    _, core1 = history.series("cpu_load:1", None, None, 10)
    assert math.isnan(core1[0])  # offline is NaN, not 0


def test_new_rails_and_zones_get_nan_before_they_appear():
    history = History(10)
    history.append(make_sample(0.0, rails={"VDD_IN": 4000.0}, temps={"tj": 40.0, "gpu": None}))
    history.append(make_sample(1.0, rails={"VDD_IN": 4000.0, "VDD_GPU": 900.0}, temps={"tj": 41.0}))
    assert history.rails == ["VDD_IN", "VDD_GPU"]
    assert history.zones == ["tj", "gpu"]
    _, gpu_rail = history.series("rail:VDD_GPU", None, None, 10)
    assert math.isnan(gpu_rail[0]) and gpu_rail[1] == 900.0
    _, gpu_temp = history.series("zone:gpu", None, None, 10)
    assert all(math.isnan(v) for v in gpu_temp)


def test_non_samples_are_not_stored():
    history = History(10)
    history.append(Sample(is_sample=False, raw="Mon Jan 1"))
    assert len(history) == 0


def test_clock_going_back_starts_a_new_history():
    history = History(10)
    for t in (10.0, 11.0, 12.0):
        history.append(make_sample(t))
    history.append(make_sample(0.0))
    assert len(history) == 1 and history.last_t_mono == 0.0


def test_power_total_column_uses_the_model_definition():
    history = History(10)
    history.append(make_sample(0.0, rails={"VDD_IN": 6000.0, "VDD_SOC": 2000.0}))
    history.append(make_sample(1.0, rails={"VDD_GPU_SOC": 3000.0, "VDD_CPU_CV": 1000.0}))
    _, power = history.series("power_mw", None, None, 10)
    assert list(power) == [6000.0, 4000.0]
    assert history.power_source == "sum(VDD_GPU_SOC+VDD_CPU_CV)"


def test_memory_is_bounded_for_a_day_at_one_hertz():
    history = History.for_duration(86400, 1.0)
    assert history.capacity == 86401
    for t in range(3):
        history.append(make_sample(float(t), rails={f"R{i}": 100.0 for i in range(10)},
                                   temps={f"z{i}": 40.0 for i in range(12)},
                                   cpus=[CpuCore(1.0, 100)] * 14))
    assert history.memory_bytes() < 60 * 1024 * 1024


def test_rows_are_capped_for_tiny_intervals():
    assert History.for_duration(86400, 0.01).capacity == MAX_ROWS


# ------------------------------------------------------------------------------------ markers


def test_current_phase_follows_start_and_end_markers():
    history = History(10)
    history.append(make_sample(0.0))
    assert history.current_phase is None
    history.add_marker(Marker("phase_start", "warmup", None, 0.0))
    assert history.current_phase == "warmup"
    history.add_marker(Marker("phase_start", "bench", None, 1.0))
    assert history.current_phase == "bench"
    history.add_marker(Marker("phase_end", None, None, 2.0))
    assert history.current_phase is None
    assert [m.name for m in history.markers_between(0.5, 5.0)] == ["bench", None]


def test_marker_without_time_lands_on_the_newest_sample():
    history = History(10)
    history.append(make_sample(7.0))
    history.add_marker(Marker("phase_start", "x", None, None))
    assert history.markers[0].t_mono == 7.0


def test_a_seek_event_keeps_the_data_only_clear_forgets():
    """Whether a seek event answers our own seek is the pipeline's to know (an old recording can
    hold seeks of the replay it recorded): the event alone keeps the data."""
    history = History(10)
    for t in range(3):
        history.append(make_sample(float(t), rails={"VDD_IN": 1000.0}))
    history.add_marker(Marker("phase_start", "a", None, 1.0))
    history.add_event(Event("seek", "seek to 30.0 s", None, 30.0))
    assert len(history) == 3 and history.current_phase == "a"
    history.clear()
    assert len(history) == 0
    assert history.markers == [] and list(history.events) == []


def test_markers_older_than_the_ring_are_dropped_keeping_the_open_phase():
    history = History(5)
    history.append(make_sample(0.0))
    history.add_marker(Marker("phase_start", "old", None, 0.0))
    history.add_marker(Marker("phase_end", None, None, 0.5))
    history.add_marker(Marker("phase_start", "long", None, 1.0))
    for t in range(1, 40):
        history.append(make_sample(float(t)))
        history.add_marker(Marker("phase_start", "brief", None, t + 0.1))
        history.add_marker(Marker("phase_end", None, None, t + 0.2))
    history.add_marker(Marker("phase_start", "open", None, 39.5))
    for t in range(40, 60):
        history.append(make_sample(float(t)))
    oldest = float(history.times(0, 1)[0])
    assert oldest == 55.0
    assert [(m.kind, m.name) for m in history.markers] == [("phase_start", "open")]
    assert history.current_phase == "open"
    assert history.markers_between(oldest, None) == []
    for t in range(60, 70):
        history.append(make_sample(float(t)))
        history.add_marker(Marker("phase_end", None, None, t + 0.5))
    assert len(history.markers) <= 5
    assert all(m.t_mono >= float(history.times(0, 1)[0]) for m in history.markers)
    assert history.current_phase is None


def test_has_tells_which_series_hold_readings():
    history = History(4)
    assert not history.has("gpu_load")
    sample = make_sample(0.0, temps={})
    sample.gpu = None
    history.append(sample)
    assert not history.has("gpu_load") and not history.has("zone:tj") and history.has("rail:VDD_IN")
    history.append(make_sample(1.0))
    assert history.has("gpu_load") and history.has("zone:tj")
    history.clear()
    assert not history.has("gpu_load")


def test_the_log_version_moves_with_markers_and_events_not_samples():
    history = History(4)
    history.append(make_sample(0.0))
    before = history.log_version
    history.append(make_sample(1.0))
    assert history.log_version == before
    history.add_event(Event("note", "x", None, 1.0))
    history.add_marker(Marker("phase_start", "p", None, 1.0))
    assert history.log_version == before + 2


def test_wall_time_follows_the_nearest_sample():
    history = History(10)
    history.append(make_sample(0.0, wall=1000.0))
    history.append(make_sample(1.0, wall=1001.0))
    assert history.wall_at(0.5) == pytest.approx(1001.5 - 1.0)
    assert history.last_t_wall == 1001.0


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=2, max_value=600), st.data())
def test_buckets_split_the_rows_into_runs_of_equal_size_in_order(count, data):
    """Each point is the mean of one run of rows; the runs follow one another from the first row
    to the last, and their sizes differ by at most one (count/buckets rounded down or up). The
    readings are the row numbers, so each mean tells where its run ends."""
    buckets = data.draw(st.integers(min_value=1, max_value=count - 1))
    history = History(count)
    for row in range(count):
        history.append(make_sample(float(row), gpu=float(row)))
    times, values = history.series("gpu_load", None, None, buckets=buckets)
    assert len(values) == buckets and list(times) == list(values)
    start, share = 0, count / buckets
    for mean in values:
        stop = round(2 * mean - start + 1)  # the mean of rows start ... stop - 1
        assert (start + stop - 1) / 2 == mean
        assert math.floor(share) <= stop - start <= math.ceil(share)
        start = stop
    assert start == count


def test_a_clear_keeps_the_power_source_of_the_newest_row_not_yet_read():
    """The rows appended since the last read are dropped by a clear (a seek's, a restart's); what
    the newest of them with a total came from is still said."""
    history = History(10)
    history.append(make_sample(0.0, rails={"VDD_IN": 6000.0}))
    assert history.power_source == "VDD_IN"
    history.append(make_sample(1.0, rails={"VDD_IN": 6000.0}))
    history.append(make_sample(2.0, rails={"VDD_GPU_SOC": 3000.0, "VDD_CPU_CV": 1000.0}))
    history.append(make_sample(3.0, rails={}))  # no total: says nothing of the source
    history.clear()
    assert len(history) == 0
    assert history.power_source == "sum(VDD_GPU_SOC+VDD_CPU_CV)"
    history.append(make_sample(4.0, rails={"VDD_IN": 6000.0}))
    history.append(make_sample(0.5, rails={}))  # earlier than the last: the history starts over
    assert len(history) == 1 and history.power_source == "VDD_IN"

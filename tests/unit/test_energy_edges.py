"""Phase edges at their own times and energy from the finest power stream: the ledger against
integrals written here, independently (numpy's ``interp`` and the trapezoid), over the exact edges."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import REPO

from jtop_roof.analysis.ledger import MAX_CHANNELS, EnergyLedger
from jtop_roof.analysis.pipeline import Pipeline, RecordingSink
from jtop_roof.model.records import Event, Marker, PowerReading, Rail, Sample
from jtop_roof.outputs.report import to_markdown

ROOT = REPO


def sample(t: float, rails: dict[str, float], wall: float | None = None) -> Sample:
    return Sample(t_mono=t, t_wall=wall, rails={name: Rail(mw) for name, mw in rails.items()})


def reading(t: float, rails: dict[str, float], *, counters: dict[str, float] | None = None,
            source: str = "INA3221 hwmon", period: float = 0.02, wall: float | None = None) -> PowerReading:
    return PowerReading(wall, t, rails, counters or {}, source, period)


def exact_j(times: np.ndarray, mw: np.ndarray, start: float, end: float) -> float:
    """Independent: the trapezoid of the readings over exactly [start, end], the power interpolated
    linearly at both edges."""
    inside = times[(times > start) & (times < end)]
    t = np.concatenate(([start], inside, [end]))
    watts = np.interp(t, times, mw) / 1000
    return float(np.sum((watts[1:] + watts[:-1]) / 2 * np.diff(t)))


def fast_stream(seconds: float, hz: float = 50.0, start: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Readings at ``hz`` of a power that swings between 3 and 11 W (nothing a sample at 1 Hz sees)."""
    times = start + np.arange(0, seconds * hz + 1) / hz
    return times, 7000.0 + 4000.0 * np.sin(times * 2.7)


# -------------------------------------------------------------------------------- edges and sources


def test_a_phase_runs_marker_to_marker_and_its_energy_is_the_fast_streams_between_them():
    times, mw = fast_stream(10.0)
    pipeline = Pipeline(history_s=0, interval_s=1.0)
    marks = {"start": 2.345, "end": 7.891}
    for t, p in zip(times, mw, strict=True):
        if t >= marks["start"] > t - 0.02:
            pipeline.mark("phase_start", "p", "script", None, marks["start"])
        if t >= marks["end"] > t - 0.02:
            pipeline.mark("phase_end", None, "script", None, marks["end"])
        if float(t).is_integer():  # tegrastats' own VDD_IN once a second: the same chip, coarser
            pipeline.ingest(sample(float(t), {"VDD_IN": float(round(p))}))
        pipeline.ingest(reading(float(t), {"VDD_IN": float(p)}))
    (phase,) = pipeline.ledger.phases()
    assert (phase.first_mono, phase.last_mono) == (marks["start"], marks["end"])
    assert phase.energy_j == pytest.approx(exact_j(times, mw, marks["start"], marks["end"]), rel=1e-9)
    assert phase.rails_j["VDD_IN"] == phase.energy_j
    assert phase.mean_mw == pytest.approx(phase.energy_j / (marks["end"] - marks["start"]) * 1000)
    assert phase.energy_source == "INA3221 hwmon, 50 Hz" and phase.power_period_s == 0.02
    assert phase.samples == 5  # tegrastats' samples at 3..7 s are the phase's; its rails are not
    whole = pipeline.ledger.whole
    assert (whole.first_mono, whole.last_mono) == (0.0, 10.0)
    assert whole.energy_j == pytest.approx(exact_j(times, mw, 0.0, 10.0), rel=1e-9)


def test_without_a_faster_stream_the_samples_rails_give_energy_and_say_so():
    pipeline = Pipeline(history_s=0, interval_s=1.0)
    for t in range(5):
        pipeline.ingest(sample(float(t), {"VDD_IN": 1000.0 * (t + 1), "VDD_SOC": 500.0}))
    whole = pipeline.ledger.whole
    assert whole.energy_source == "tegrastats VDD_IN, 1000 ms" and whole.power_period_s == 1.0
    assert whole.energy_j == pytest.approx(sum((a + a + 1) / 2 for a in range(1, 5)))


def test_an_energy_counter_comes_first_and_is_interpolated_at_the_edges():
    """NVML's total-energy counter (mJ): a phase's energy is its difference between the edges,
    interpolated; the averaged power beside it, and the host's samples, are not integrated."""
    ledger = EnergyLedger(0.1, "host")
    counter = 0.0
    for i in range(101):  # 10 readings a second for 10 s; 100 W, then 300 W from 5 s on
        t = i * 0.1
        ledger.add_sample(t, None, None, {"NVML_GPU": 50.0})
        ledger.add_power(reading(t, {"NVML_GPU": 999.0}, counters={"NVML_GPU": counter},
                                 source="NVML, power averaged over about 1 s", period=0.1))
        counter += (100_000.0 if t < 5.0 else 300_000.0) * 0.1  # mJ over the next 0.1 s
        if i == 33:
            ledger.start_phase("a", 3.33)
        if i == 66:
            ledger.end_phase(6.66)
    (phase,) = ledger.phases()
    assert (phase.first_mono, phase.last_mono) == (3.33, 6.66)
    assert phase.rails_j["NVML_GPU"] == pytest.approx(100 * (5.0 - 3.33) + 300 * (6.66 - 5.0))
    assert phase.energy_j is None  # a device rail: no total input power
    assert phase.energy_source == "NVML energy counter"


def test_a_counter_that_goes_back_is_a_gap_never_negative_energy():
    ledger = EnergyLedger(0.1)
    for i, mj in enumerate([0.0, 100.0, 200.0, 5.0, 105.0]):
        ledger.add_power(reading(i * 0.1, {}, counters={"VDD_IN": mj}, source="X", period=0.1))
    whole = ledger.whole
    assert whole.energy_j == pytest.approx(0.3) and whole.gaps == 1
    assert whole.duration_s == pytest.approx(0.4)


def test_a_reading_that_comes_after_a_marker_but_is_earlier_belongs_before_it():
    """Streams interleave: a reading taken before a marker but delivered after it is shared by time."""
    ledger = EnergyLedger(1.0)
    ledger.add_power(reading(0.0, {"VDD_IN": 1000.0}))
    ledger.start_phase("p", 0.05)
    ledger.add_power(reading(0.04, {"VDD_IN": 1000.0}))  # before the edge: the run's alone
    ledger.add_power(reading(0.06, {"VDD_IN": 3000.0}))
    (phase,) = ledger.phases()
    assert (phase.first_mono, phase.last_mono) == (0.05, 0.06)
    assert phase.energy_j == pytest.approx((2000 + 3000) / 2 * 0.01 / 1000)
    assert ledger.whole.energy_j == pytest.approx(0.04 + (1000 + 3000) / 2 * 0.02 / 1000)


def test_a_marker_stamped_before_a_reading_already_taken_starts_at_that_reading():
    ledger = EnergyLedger(1.0)
    for t in (0.0, 0.02, 0.04):
        ledger.add_power(reading(t, {"VDD_IN": 1000.0}))
    ledger.start_phase("late", 0.01)
    ledger.add_power(reading(0.06, {"VDD_IN": 1000.0}))
    (phase,) = ledger.phases()
    assert (phase.start_mono, phase.first_mono, phase.last_mono) == (0.04, 0.04, 0.06)
    assert phase.energy_j == pytest.approx(0.02)


def test_a_break_stops_every_stream_and_a_long_step_is_a_gap():
    pipeline = Pipeline(history_s=0, interval_s=1.0)
    for t in (0.0, 0.5, 1.0):
        pipeline.ingest(reading(t, {"VDD_IN": 2000.0}, period=0.5))
    pipeline.ingest(Event("gap", "no data", None, 3.0, gap_s=2.0))
    for t in (3.0, 3.5, 10.0, 10.5):  # 3.5 -> 10: longer than max(5 s, 10 periods)
        pipeline.ingest(reading(t, {"VDD_IN": 2000.0}, period=0.5))
    whole = pipeline.ledger.whole
    assert whole.gaps == 2 and whole.energy_j == pytest.approx(2 * (1.0 + 0.5 + 0.5))
    assert whole.duration_s == 10.5  # bounds edge to edge; the gaps are counted, not integrated


def test_a_phase_that_begins_in_a_gap_is_observed_from_its_next_reading():
    ledger = EnergyLedger(1.0)
    ledger.add_sample(0.0, None, 1000.0, {})
    ledger.add_break()
    ledger.start_phase("p", 0.5)
    ledger.add_sample(1.0, None, 1000.0, {})
    ledger.add_sample(2.0, None, 1000.0, {})
    (phase,) = ledger.phases()
    assert (phase.first_mono, phase.last_mono, phase.gaps) == (1.0, 2.0, 0)
    assert phase.energy_j == pytest.approx(1.0)


def test_phases_that_tile_the_run_add_up_to_it():
    times, mw = fast_stream(6.0, hz=20.0)
    ledger = EnergyLedger(1.0)
    edges = [0.0, 0.013, 1.5, 2.999, 4.2, 6.0]
    for t, p in zip(times, mw, strict=True):
        while edges and edges[0] <= t:
            ledger.start_phase(None, edges.pop(0))
        ledger.add_power(reading(float(t), {"VDD_IN": float(p)}, period=0.05))
    ledger.end_phase(6.0)
    phases = ledger.phases()
    assert sum(p.energy_j or 0.0 for p in phases) == pytest.approx(ledger.whole.energy_j, rel=1e-12)
    assert sum(p.duration_s for p in phases) == pytest.approx(ledger.whole.duration_s, rel=1e-12)


# ------------------------------------------------------------------------------------ hostile input


def test_non_finite_and_hostile_readings_never_poison_the_sums():
    ledger = EnergyLedger(1.0)
    for i, mw in enumerate([1000.0, math.nan, math.inf, 1000.0, 1e300, 1e300]):
        ledger.add_power(reading(i * 0.1, {"VDD_IN": mw, "VDD_SOC": 500.0}, period=0.1))
    ledger.add_power(reading(math.nan, {"VDD_IN": 1.0}))
    ledger.add_power(reading(0.7, {"VDD_IN": 1.0}, period=math.nan))  # a bad period: the samples'
    whole = ledger.whole
    assert all(math.isfinite(j) for j in whole.rails_j.values())
    assert whole.rails_j["VDD_SOC"] == pytest.approx(0.5 * 0.5)  # 0..0.5 s: the reading at 0.7 has none
    # VDD_IN read 1e300 mW twice: refused, and with it the stream's total (nothing else measures it)
    assert "VDD_IN" not in whole.rails_j and whole.energy_j is None and whole.energy_total_source is None
    assert "VDD_IN read past 2 kW at 2 readings" in whole.energy_note
    assert "2 VDD_IN readings refused" in whole.energy_note
    for i in range(MAX_CHANNELS * 2):  # a recording naming a new stream every line stays bounded
        ledger.add_power(reading(1.0 + i, {"VDD_IN": 1.0}, source=f"S{i}"))
    assert len(ledger._channels) == MAX_CHANNELS


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e5), min_size=3, max_size=60),
       st.floats(min_value=0.001, max_value=2.0),
       st.lists(st.floats(min_value=-1.0, max_value=150.0), min_size=1, max_size=6))
def test_every_span_is_edge_to_edge_and_its_mean_is_energy_over_duration(powers, step, marks):
    ledger = EnergyLedger(step)
    marks = sorted(marks)
    times = np.arange(len(powers)) * step
    pending = list(marks)
    for t, p in zip(times, powers, strict=True):
        while pending and pending[0] <= t:
            ledger.start_phase(None, pending.pop(0))
        ledger.add_power(reading(float(t), {"VDD_IN": p}, period=step))
    for span in [ledger.whole, *ledger.phases()]:
        if span.first_mono is None or span.duration_s <= 0:
            continue
        assert span.mean_mw == pytest.approx(span.energy_j / span.duration_s * 1000)
        expected = exact_j(times, np.array(powers), span.first_mono, span.last_mono)
        assert span.energy_j == pytest.approx(expected, rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------- the pipeline and report


def test_the_recording_takes_each_power_reading_once_per_stream(tmp_path):
    written = []

    class Keep:
        path = "k"

        def write(self, record):
            written.append(record)

        def close(self):
            pass

    sink = RecordingSink(Keep(), forward_only=True)  # type: ignore[arg-type]
    for record in (reading(1.0, {"A": 1.0}), reading(1.0, {"A": 1.0}, source="NVML"),
                   reading(0.5, {"A": 1.0}), reading(2.0, {"A": 1.0})):
        sink.write(record)
    assert [(r.source, r.t_mono) for r in written] == [("INA3221 hwmon", 1.0), ("NVML", 1.0),
                                                       ("INA3221 hwmon", 2.0)]


def test_a_marker_made_now_moves_on_from_the_newest_reading():
    clock = [100.0]
    pipeline = Pipeline(history_s=0, interval_s=1.0, clock=lambda: clock[0], wall_clock=lambda: 5.0)
    pipeline.ingest(sample(10.0, {"VDD_IN": 1.0}))
    clock[0] = 100.5
    pipeline.ingest(reading(10.5, {"VDD_IN": 1.0}))
    clock[0] = 100.6
    pipeline.ingest(sample(10.3, {"VDD_IN": 1.0}))  # a slower stream's older sample
    clock[0] = 100.7
    assert pipeline.now() == (5.0, pytest.approx(10.7))


def test_report_names_the_energy_source_per_span_in_json_and_md(tmp_path):
    from jtop_roof.formats.recorder import Recorder
    from jtop_roof.outputs.compare import file_report
    from jtop_roof.runtime.config import Config

    path = tmp_path / "r.jsonl"
    with Recorder(path, {"source": "tegrastats", "interval_ms": 1000}) as recorder:
        for i in range(301):
            t = i * 0.02
            if i % 50 == 0:
                # tegrastats' own VDD_IN, within 20% of the sampler's: both believed, the finer taken
                recorder.write(Sample(t_wall=1000.0 + t, t_mono=t, rails={"VDD_IN": Rail(4600.0)}))
            if i == 101:
                recorder.write(Marker("phase_start", "p", 1000.0 + 2.01, 2.01, "script"))
            recorder.write(reading(t, {"VDD_IN": 5000.0}, wall=1000.0 + t))
    report = file_report(str(path), tz=__import__("datetime").timezone.utc, interval_s=None, config=Config())
    whole, (phase,) = report["whole"], report["phases"]
    assert whole["energy_source"] == phase["energy_source"] == "INA3221 hwmon, 50 Hz"
    assert phase["power_period_s"] == 0.02
    assert phase["start_s"] == pytest.approx(2.01) and phase["end_s"] == pytest.approx(6.0)
    assert phase["start"] == "1970-01-01T00:16:42.010+00:00"
    assert phase["energy_j"]["total"] == pytest.approx(5.0 * (6.0 - 2.01))
    assert whole["energy_total_source"] == phase["energy_total_source"] == "measured"
    assert whole["energy_note"] is None
    assert "Energy measured by INA3221 hwmon, 50 Hz." in to_markdown(report)
    json.dumps(report, allow_nan=False)


# ------------------------------------------------------------- trtexec's timed window, exactly (item 4)

SHARED = ROOT.parent / "shared"
PAIRS = sorted(p.name for p in (SHARED / "trtexec").glob("*_benchlab_*.log")
               if (SHARED / "tegrastats" / "logs" / p.name).is_file())


@pytest.mark.skipif(not PAIRS, reason="../shared trtexec and tegrastats pairs not beside the repo")
@pytest.mark.parametrize("name", PAIRS)
def test_joules_per_inference_is_the_exact_windows(name):
    """The timed window is [summary stamp - Total Host Walltime, summary stamp] (stamps read as the
    start of their second, in UTC as the pair was logged); its energy is integrated here over
    exactly that window from the parsed VDD_IN, interpolated at the edges."""
    import re
    from datetime import datetime, timezone

    from jtop_roof.formats.logfile import iter_records
    from jtop_roof.formats.trtexec import read_trtexec
    from jtop_roof.outputs.report import report_file
    from jtop_roof.runtime.config import Config

    log, trt = SHARED / "tegrastats" / "logs" / name, SHARED / "trtexec" / name
    text = trt.read_text()
    stamp = re.search(r"^\[([\d/:-]+)\] \[I\] === Performance summary ===", text, re.M)
    walltime = re.search(r"Total Host Walltime: ([\d.]+) s", text)
    queries = re.search(r"Timing trace has (\d+) queries", text)
    assert stamp and walltime and queries
    end = datetime.strptime(stamp.group(1), "%m/%d/%Y-%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    start, iterations = end - float(walltime.group(1)), int(queries.group(1))
    with open(log, encoding="utf-8") as f:
        samples = [s for s in iter_records(f, tz="UTC") if isinstance(s, Sample) and s.is_sample]
    walls = np.array([s.t_wall for s in samples])
    vdd_in = np.array([s.rails["VDD_IN"].now_mw for s in samples])
    expected = exact_j(walls, vdd_in, start, end) / iterations

    report = report_file(str(log), tz=timezone.utc, interval_s=None, config=Config(),
                         trtexec=read_trtexec(trt, timezone.utc))
    timed = next(p for p in report["phases"] if p["name"] == "timed")
    assert timed["duration_s"] == pytest.approx(end - start, abs=1e-6)
    assert timed["workload"]["j_per_iter"] == pytest.approx(expected, rel=0.01)  # the bound
    assert timed["workload"]["j_per_iter"] == pytest.approx(expected, rel=1e-6)  # and in fact


def test_markers_stamped_out_of_order_never_make_a_phase_end_before_it_starts():
    ledger = EnergyLedger(2.5)  # the 6 s step is no gap at this interval (3 intervals are)
    ledger.add_sample(0.0, None, 1000.0, {})
    ledger.start_phase("a", 5.0)
    ledger.start_phase("b", 3.0)  # stamped earlier than a's start: b starts where a did
    ledger.end_phase(2.0)
    ledger.add_sample(6.0, None, 1000.0, {})
    a, b = ledger.phases()
    assert (a.first_mono, a.last_mono, a.energy_j) == (5.0, 5.0, 0.0)  # an instant: no energy
    assert (b.first_mono, b.last_mono, b.energy_j) == (5.0, 5.0, 0.0)
    assert ledger.whole.energy_j == pytest.approx(6.0)


def test_report_gives_each_phase_the_nvml_counters_difference_between_its_edges(tmp_path):
    """The H200 case: NVML's power usage lags about 1 s behind, so a trapezoid over it
    puts a GEMM's tail into the idle phase after it; the counter, read at 10 Hz and interpolated at
    the markers, gives each phase what the GPU used in it."""
    from datetime import timezone

    from jtop_roof.formats.recorder import Recorder
    from jtop_roof.outputs.compare import file_report
    from jtop_roof.runtime.config import Config

    def watts(t: float) -> float:  # idle 100 W, a GEMM at 700 W from 3 s to 8 s, idle again
        return 700.0 if 3.0 <= t < 8.0 else 100.0

    edges = {3.0: "gemm", 8.0: "idle-after"}
    path = tmp_path / "h.jsonl"
    counter_mj = 5e9  # mJ since the driver loaded
    with Recorder(path, {"source": "host", "interval_ms": 100}) as recorder:
        for i in range(111):
            t = i * 0.1
            if i and round(t, 6) in edges:
                recorder.write(Marker("phase_start", edges[round(t, 6)], 1000.0 + t, t, "script"))
            lagging = watts(t - 1.0) * 1000  # the averaged power usage, a second late
            recorder.write(Sample(t_wall=1000.0 + t, t_mono=t, rails={"NVML_GPU": Rail(lagging)}))
            recorder.write(PowerReading(1000.0 + t, t, {"NVML_GPU": lagging}, {"NVML_GPU": counter_mj},
                                        "NVML, power averaged over about 1 s", 0.1))
            counter_mj += watts(t) * 0.1 * 1000
    report = file_report(str(path), tz=timezone.utc, interval_s=None, config=Config())
    gemm, after = report["phases"]
    assert gemm["energy_source"] == after["energy_source"] == "NVML energy counter"
    assert (gemm["start_s"], gemm["end_s"]) == (pytest.approx(3.0), pytest.approx(8.0))
    assert gemm["energy_j"]["rails"]["NVML_GPU"] == pytest.approx(700 * 5.0)
    assert after["energy_j"]["rails"]["NVML_GPU"] == pytest.approx(100 * (11.0 - 8.0))


def test_without_a_total_every_stream_that_gave_a_rail_is_named():
    """A second GPU without an energy counter: its rail comes from the host's samples, and the
    span says both sources."""
    ledger = EnergyLedger(0.1, "host")
    for i in range(11):
        t = i * 0.1
        ledger.add_sample(t, None, None, {"NVML_GPU": 300_000.0, "NVML_GPU1": 200_000.0})
        ledger.add_power(reading(t, {}, counters={"NVML_GPU": i * 10_000.0}, source="NVML", period=0.1))
    whole = ledger.whole
    assert whole.energy_source == "NVML energy counter + host NVML_GPU1, 100 ms"
    assert whole.rails_j == {"NVML_GPU": pytest.approx(100.0), "NVML_GPU1": pytest.approx(200.0)}


def test_device_counters_are_per_rail_never_the_machines_total():
    """RAPL's CPU package and NVML's GPU measure one device each: their energy is kept per rail,
    and no sum of them is reported as the machine's input energy."""
    ledger = EnergyLedger(1.0)
    for i in range(11):
        counters = {"RAPL_package-0": 20_000.0 * i, "NVML_GPU": 100_000.0 * i}
        ledger.add_power(PowerReading(1000.0 + i, float(i), {}, counters, "RAPL", 1.0))
    whole = ledger.whole
    assert whole.energy_j is None
    assert whole.rails_j == pytest.approx({"RAPL_package-0": 200.0, "NVML_GPU": 1000.0})

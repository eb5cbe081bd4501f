"""Power at the source is not taken on trust: a fake INA3221 tree read beside real tegrastats lines
(../shared), whose VDD_IN the sampler cannot read, reads negative, 1000x or 1.5x what tegrastats
read off the same chip, has its total refused; the span's total is then tegrastats' VDD_IN, and
``energy_total_source``/``energy_note`` say so, live (the pipeline), and from a recording read back.
A tegrastats restart does not cost the power stream that kept reading its energy."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timezone
from pathlib import Path

import pytest
from paths import REPO
from power_tree import FakeIna3221, write_value

from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.formats.parser import parse_line
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.records import Event, PowerReading, Record, Sample
from jtop_roof.sources.power import board_meters

ROOT = REPO
LOG = ROOT.parent / "shared" / "tegrastats" / "logs" / "orinnano8gb_jp6_orinnanolab_1.log"
MV = 5000
HZ = 5


def real_samples(count: int = 12) -> list[Sample]:
    """Real Orin Nano lines (VDD_IN about 5.2 W), one a second."""
    lines = [line for line in LOG.read_text().splitlines() if "VDD_IN" in line][:count]
    samples = []
    for i, line in enumerate(lines):
        sample = parse_line(line)
        sample.t_mono, sample.t_wall = float(i), 1_700_000_000.0 + i
        samples.append(sample)
    return samples


def recorded(tmp_path: Path, vdd_in: Callable[[float], float],
             soc_ma: Callable[[float], float] = lambda mw: mw / MV * 1000,
             *, unreadable: bool = False) -> list[Record]:
    """The samples, and between them the fake tree's readings at ``HZ``: each second the tree is
    set to what the line says the chip read (``vdd_in(mW)`` gives VDD_IN's mA at 5 V)."""
    samples = real_samples()
    first = samples[0].rails
    board = FakeIna3221(tmp_path, {"VDD_IN": (MV, int(vdd_in(first["VDD_IN"].now_mw))),
                                   "VDD_SOC": (MV, int(soc_ma(first["VDD_SOC"].now_mw)))})
    if unreadable:
        write_value(board.path("VDD_IN"), "unreadable\n")
    found = board_meters(tmp_path)
    (meter,) = found.meters
    records: list[Record] = []
    try:
        for sample in samples:
            records.append(sample)
            assert sample.t_mono is not None and sample.t_wall is not None
            if not unreadable:
                board.set("VDD_IN", MV, int(vdd_in(sample.rails["VDD_IN"].now_mw)))
            board.set("VDD_SOC", MV, int(soc_ma(sample.rails["VDD_SOC"].now_mw)))
            for k in range(HZ):
                read = meter.read()
                assert read is not None
                t = sample.t_mono + k / HZ
                wall = sample.t_wall + k / HZ
                records.append(PowerReading(wall, t, read[0], read[1], meter.source, 1 / HZ))
    finally:
        meter.close()
    return records


def ledger_of(records: list[Record]):
    pipeline = Pipeline(history_s=0.0, interval_s=1.0)
    for record in records:
        pipeline.ingest(record)
    return pipeline.ledger


def tegrastats_only(records: list[Record]):
    return ledger_of([r for r in records if isinstance(r, Sample)]).whole


needs_shared = pytest.mark.skipif(not LOG.is_file(), reason="../shared tegrastats logs not beside the repo")


@needs_shared
def test_a_sampler_that_agrees_with_tegrastats_gives_the_measured_total(tmp_path):
    """The control: the same chip read at 5 Hz, each reading within 20% of tegrastats' line."""
    records = recorded(tmp_path, lambda mw: mw * 1.05 / MV * 1000)
    whole = ledger_of(records).whole
    assert whole.energy_source == "INA3221 hwmon, 5 Hz"
    assert (whole.energy_total_source, whole.energy_note) == ("measured", None)
    assert whole.energy_j != pytest.approx(tegrastats_only(records).energy_j, rel=1e-6)


@needs_shared
@pytest.mark.parametrize(("case", "vdd_in", "unreadable", "why"), [
    ("unreadable", lambda mw: mw / MV * 1000, True, "VDD_IN not read by it"),
    ("negative", lambda mw: -mw / MV * 1000, False, "VDD_IN read negative"),
    ("1000x", lambda mw: mw * 1000 / MV * 1000, False, "VDD_IN read past 2 kW"),
    ("1.5x", lambda mw: mw * 1.5 / MV * 1000, False, "VDD_IN disagrees with the samples'"),
])
def test_a_refused_input_rail_falls_back_to_tegrastats_vdd_in(tmp_path, case, vdd_in, unreadable, why):
    records = recorded(tmp_path, vdd_in, unreadable=unreadable)
    for whole in (ledger_of(records).whole, _read_back(tmp_path, records)):
        fallback = tegrastats_only(records)
        assert whole.energy_j == pytest.approx(fallback.energy_j, rel=1e-12), case
        assert whole.energy_source == "tegrastats VDD_IN, 1000 ms"
        assert whole.energy_total_source == "measured"  # tegrastats' VDD_IN is an input rail that read it
        assert why in whole.energy_note and "total from tegrastats' VDD_IN" in whole.energy_note
        assert whole.peak_mw == fallback.peak_mw  # no refused reading is the peak either
        assert whole.rails_j["VDD_IN"] == pytest.approx(fallback.rails_j["VDD_IN"])


def _read_back(tmp_path: Path, records: list[Record]):
    """The records written as a recording and read back by ``report``'s route."""
    from jtop_roof.outputs.compare import file_report
    from jtop_roof.runtime.config import Config

    path = tmp_path / "r.jsonl"
    with Recorder(path, {"source": "tegrastats", "interval_ms": 1000}, fsync_every_s=0) as recorder:
        for record in records:
            recorder.write(record)
    whole = file_report(str(path), tz=timezone.utc, interval_s=None, config=Config())["whole"]

    class Back:  # the JSON keys under the ledger's names
        energy_j = whole["energy_j"]["total"]
        energy_source = whole["energy_source"]
        energy_total_source = whole["energy_total_source"]
        energy_note = whole["energy_note"]
        peak_mw = None if whole["power_w"]["peak"] is None else whole["power_w"]["peak"] * 1000
        rails_j = whole["energy_j"]["rails"]
    return Back


@needs_shared
def test_a_negative_module_rail_is_refused_with_a_count_and_the_input_still_measures(tmp_path):
    records = recorded(tmp_path, lambda mw: mw / MV * 1000, soc_ma=lambda mw: -mw / MV * 1000)
    whole = ledger_of(records).whole
    assert whole.energy_source == "INA3221 hwmon, 5 Hz" and whole.energy_total_source == "measured"
    assert whole.energy_note == f"{12 * HZ} VDD_SOC readings refused (negative or past 2 kW)"
    assert whole.rails_j["VDD_SOC"] == pytest.approx(tegrastats_only(records).rails_j["VDD_SOC"])
    assert whole.rail_peak_mw["VDD_SOC"] > 0


def test_a_sum_of_rails_is_inferred_and_nothing_measured_is_null():
    from jtop_roof.analysis.ledger import EnergyLedger

    ledger = EnergyLedger(1.0)
    for t in range(4):  # AGX Orin's rails: no input rail among them
        ledger.add_sample(float(t), None, 3000.0, {"VDD_GPU_SOC": 2000.0, "VDD_CPU_CV": 1000.0})
    whole = ledger.whole
    assert whole.energy_total_source == "inferred" and "a sum of rails" in whole.energy_note
    host = EnergyLedger(1.0, "host")
    for t in range(4):  # a dGPU host: a device rail only
        host.add_sample(float(t), None, None, {"NVML_GPU": 300_000.0})
    assert host.whole.energy_total_source is None and host.whole.energy_j is None
    assert "no rail measures the board's input" in host.whole.energy_note


def restart_records(late_s: float, silent_s: float = 0.0) -> list[Record]:
    """tegrastats at 1 Hz (6 W) exits after its sample at 4 s and is restarted; its samples resume
    at 8 s. The sampler reads 6 W at 20 Hz throughout, except that its thread read nothing for
    ``late_s`` before the samples resumed (a busy machine) and for ``silent_s`` after the restart.
    The records in the order the monitor takes them."""
    records: list[Record] = []
    reading = 0.0
    for second in range(12):
        if second == 5:
            records.append(Event("source_restart", "tegrastats exited; restarting in 1 s", None, 4.5))
        if second == 8:
            records.append(Event("gap", "no samples for 4.0 s while tegrastats restarted", None, 8.0,
                                 gap_s=4.0))
        if not 4 < second < 8:
            records.append(Sample(t_mono=float(second), rails=rails_of({"VDD_IN": 6000.0})))
        while reading < second + 1 - 1e-9 and reading < 12:
            quiet = 8.0 - late_s <= reading < 8.0 or 4.5 <= reading < 4.5 + silent_s
            if not quiet:
                records.append(PowerReading(None, reading, {"VDD_IN": 6000.0}, {}, "INA3221 hwmon", 0.05))
            reading = round(reading + 0.05, 6)
    return records


def rails_of(mw: dict[str, float]):
    from jtop_roof.model.records import Rail

    return {name: Rail(value, value) for name, value in mw.items()}


@pytest.mark.parametrize("late_s", [0.0, 0.6, 2.0])
def test_a_tegrastats_restart_keeps_the_power_stream_that_kept_reading(late_s):
    """The restart breaks tegrastats' samples only: the sampler's stream keeps its energy through
    it, however long before the samples resumed its thread last read (on a busy machine a
    reading can come more than half a second late); 6 W over the whole span, no gap."""
    whole = ledger_of(restart_records(late_s)).whole
    assert whole.energy_source == "INA3221 hwmon, 20 Hz"
    assert whole.gaps == 0
    assert whole.duration_s == pytest.approx(11.95)
    assert whole.mean_mw == pytest.approx(6000.0, rel=1e-9)


def test_a_power_stream_that_stopped_through_a_restart_has_its_own_gap():
    """A sampler that read nothing for 6 s across the restart (longer than its longest step, 5 s)
    has a gap there by its own steps: the restart does not bridge it."""
    whole = ledger_of(restart_records(0.0, silent_s=6.0)).whole
    assert whole.energy_source == "INA3221 hwmon, 20 Hz"
    assert whole.gaps == 1 and whole.gap_s == pytest.approx(6.05)


def test_a_gap_that_is_not_a_restarts_still_breaks_the_power_stream():
    """A recording's session break (a ``gap`` with no ``source_restart`` before it) places the next
    session just after the last: the power stream's step across it is no measurement."""
    from jtop_roof.analysis.ledger import EnergyLedger

    def run(events: tuple[str, ...]) -> int:
        ledger = EnergyLedger(1.0)
        for i in range(20):
            t = i * 0.2
            if i == 10:
                for kind in events:
                    ledger.add_break(kind, t)
            ledger.add_power(PowerReading(None, t, {"VDD_IN": 6000.0}, {}, "INA3221 hwmon", 0.2))
        return ledger.whole.gaps

    assert run(("gap",)) == 1
    assert run(("source_restart", "gap")) == 0
    assert run(("seek",)) == 1


def test_a_finished_phase_keeps_the_source_of_its_own_readings():
    """A phase's total source is what its own readings read: the stream's last reading (VDD_IN
    negative, after the phase ended) says nothing about a phase that read VDD_IN throughout."""
    from jtop_roof.analysis.ledger import EnergyLedger

    ledger = EnergyLedger(1.0)
    ledger.start_phase("A", 0.0)
    for second in range(8):
        if second == 4:
            ledger.end_phase(4.0)
        ledger.add_sample(float(second), None, 5000.0, {"VDD_IN": 5000.0, "VDD_SOC": 1000.0})
        for k in range(5):
            last = second == 7 and k == 4
            rails = {"VDD_IN": -5000.0 if last else 5000.0, "VDD_SOC": 1000.0}
            ledger.add_power(PowerReading(None, second + k / 5, rails, {}, "INA3221 hwmon", 0.2))
    (phase,) = ledger.phases()
    assert phase.energy_source == "INA3221 hwmon, 5 Hz"
    assert (phase.energy_total_source, phase.energy_note) == ("measured", None)
    assert phase.energy_j == pytest.approx(20.0)


def test_a_span_that_read_its_input_in_part_leaves_the_rest_out_as_gaps():
    """Lines with VDD_IN, then lines without it: the sum of the module rails is not the input (an
    Orin's rails do not add up to it), so where the stream reads VDD_IN elsewhere the stretches
    without it are gaps, said; a phase over the first lines only is measured, without a note."""
    from jtop_roof.analysis.ledger import EnergyLedger

    ledger = EnergyLedger(1.0)
    ledger.start_phase("with input", 0.0)
    for second in range(8):
        if second == 4:
            ledger.end_phase(3.0)
        rails = {"VDD_IN": 5000.0, "VDD_SOC": 1000.0} if second < 4 else {"VDD_SOC": 1000.0}
        ledger.add_sample(float(second), None, 5000.0 if second < 4 else 1000.0, rails)
    (phase,) = ledger.phases()
    assert (phase.energy_total_source, phase.energy_note) == ("measured", None)
    assert phase.energy_source == "tegrastats VDD_IN, 1000 ms"
    whole = ledger.whole
    assert (whole.energy_total_source, whole.energy_j) == ("measured", pytest.approx(15.0))
    assert (whole.gaps, whole.gap_s, whole.observed_s, whole.duration_s) == (4, 4.0, 3.0, 7.0)
    assert whole.energy_note == ("tegrastats: 4 samples without VDD_IN (not read at 4): 4 stretches "
                                 "between samples (4 s) are gaps, not bridged")


def _workload_of(path: Path, records: list[Record]) -> dict:
    """The ``bench`` phase's ``workload`` in ``report --format json`` of a recording of ``records``."""
    from jtop_roof.outputs.compare import file_report
    from jtop_roof.runtime.config import Config

    with Recorder(path, {"source": "tegrastats", "interval_ms": 1000}, fsync_every_s=0) as recorder:
        for record in records:
            recorder.write(record)
    report = file_report(str(path), tz=timezone.utc, interval_s=None, config=Config())
    (bench,) = [phase for phase in report["phases"] if phase["name"] == "bench"]
    return bench["workload"]


def test_energy_per_iteration_says_the_spans_own_reason_for_no_energy(tmp_path):
    """A phase with work but no energy says why in its own words: no power readings in it, or its
    stream's input refused with nothing to fall back to; never "no rail measures" where one did."""
    from jtop_roof.model.records import Marker, Work

    def run(rails: dict[str, float], *, samples: bool) -> dict:
        records: list[Record] = [Sample(t_mono=0.0, t_wall=1e9, rails=rails_of({"VDD_IN": 5000.0}))]
        records.append(Marker("phase_start", "bench", 1e9 + 0.5, 0.5, "script"))
        for k in range(6):  # the sampler, in the phase, from 0.6 s
            t = 0.6 + k * 0.1
            if samples:
                records.append(PowerReading(1e9 + t, t, rails, {}, "INA3221 hwmon", 0.1))
        records.append(Work(100.0, None, None, None, 1e9 + 1.2, 1.2))
        records.append(Marker("phase_end", None, 1e9 + 1.5, 1.5, "script"))
        return _workload_of(tmp_path / f"{samples}.jsonl", records)

    empty = run({}, samples=False)
    assert empty["j_per_iter"] is None and empty["j_per_iter_note"] == "no power readings"
    refused = run({"VDD_IN": -5000.0, "VDD_SOC": 1000.0}, samples=True)
    assert refused["j_per_iter"] is None
    assert refused["j_per_iter_note"].startswith("INA3221 hwmon's total refused: VDD_IN read negative")


def _split_run(scale: Callable[[float], float], edges: tuple[float, ...], *,
               negative_at: float | None = None):
    """Real Orin Nano lines once a second and a 5 Hz sampler reading their VDD_IN times
    ``scale(t)`` (VDD_IN negative at ``negative_at``), with phases from edge to edge."""
    from jtop_roof.model.records import Marker

    samples = real_samples()
    records: list[Record] = []
    for sample in samples:
        assert sample.t_mono is not None
        records.append(sample)
        for k in range(HZ):
            t = sample.t_mono + k / HZ
            for edge in edges:
                if t - 1 / HZ < edge <= t:
                    records.append(Marker("phase_start", f"p{edge}", None, edge, "script"))
            mw = sample.rails["VDD_IN"].now_mw * scale(t) * (-1 if t == negative_at else 1)
            soc = sample.rails["VDD_SOC"].now_mw
            records.append(PowerReading(None, t, {"VDD_IN": mw, "VDD_SOC": soc}, {}, "INA3221 hwmon", 1 / HZ))
    return ledger_of(records)


@needs_shared
@pytest.mark.parametrize("edges", [(0.0, 5.0), (0.0, 2.5, 4.3, 7.7)])
def test_a_run_and_the_phases_that_tile_it_agree_when_the_sampler_disagrees_for_a_while(edges):
    """The sampler reads 1.5x for the first 5 s of 12 (then 1.05x): the stretches between samples
    where it disagrees take tegrastats' VDD_IN, in the run as in its phases, so the run's energy is
    its phases' sum, and the run says how many stretches and samples disagreed."""
    ledger = _split_run(lambda t: 1.5 if t < 5 else 1.05, edges)
    whole, phases = ledger.whole, ledger.phases()
    assert whole.energy_j == pytest.approx(sum(p.energy_j for p in phases), rel=1e-9)
    assert (whole.energy_source, whole.energy_total_source) == ("INA3221 hwmon, 5 Hz", "measured")
    assert re.search(r"total refused in 6 of 12 stretches between samples: VDD_IN disagrees with the "
                     r"samples' by more than 20% at 5 of 11 samples \(up to 1\.5\d*x\); "
                     r"total there from tegrastats' VDD_IN$", whole.energy_note)
    honest = _split_run(lambda t: 1.0 if t < 5 else 1.05, edges).whole
    assert whole.energy_j == pytest.approx(honest.energy_j, rel=0.01)  # not 1.5x for 5 s of 12
    assert whole.peak_mw < 1.2 * tegrastats_only([r for r in real_samples()]).peak_mw


@needs_shared
def test_one_negative_reading_refuses_its_stretches_only():
    """A VDD_IN read negative once, at 5.4 s: the stretch holding it (5 s to 6 s) takes tegrastats'
    VDD_IN, the rest of the run keeps the sampler's; 11 of 12 stretches kept."""
    ledger = _split_run(lambda t: 1.05, (), negative_at=5.4)
    whole = ledger.whole
    assert whole.energy_total_source == "measured" and whole.energy_source == "INA3221 hwmon, 5 Hz"
    assert whole.energy_note.startswith("INA3221 hwmon's total refused in 1 of 12 stretches between "
                                        "samples: VDD_IN read negative at 1 reading")
    clean = _split_run(lambda t: 1.05, ()).whole
    samples = real_samples()
    five, six = (samples[i].rails["VDD_IN"].now_mw / 1e3 for i in (5, 6))
    sampler = 1.05 * (0.8 * five + 0.2 * (five + six) / 2)  # J from 5 s to 6 s: the line's W held
    assert whole.energy_j == pytest.approx(clean.energy_j - sampler + (five + six) / 2, rel=1e-9)
    assert whole.gaps == 0

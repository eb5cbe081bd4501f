"""The power reading as a record: its JSON line, a recording written and read back (reader, replay,
export's power table), readers that skip types they do not know, and the host's counters (NVML's
total energy and instantaneous power, RAPL) read for the power sampler."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from power_tree import fake_rapl, write_value

from jtop_roof.formats.logfile import decode_record_line, iter_records
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.codec import Tally, json_line, record_from_json, record_to_json
from jtop_roof.model.records import Event, Marker, PowerReading, Rail, Sample
from jtop_roof.outputs.export import ExportError, export_file
from jtop_roof.sources import host as host_module
from jtop_roof.sources.host import RAPL_ROOT_ONLY, HostSource, NvmlMeter, rapl_meters
from jtop_roof.sources.replay import ReplaySource

UTC = ZoneInfo("UTC")


def reading(t_mono: float, vdd_in_mw: float, **kwargs) -> PowerReading:
    return PowerReading(kwargs.pop("t_wall", 1_700_000_000.0 + t_mono), t_mono, {"VDD_IN": vdd_in_mw},
                        kwargs.pop("counters", {}), kwargs.pop("source", "INA3221 hwmon"),
                        kwargs.pop("period_s", 0.02))


def test_json_line_has_the_documented_keys_and_leaves_out_empty_maps():
    obj = record_to_json(reading(12.5, 7233.5))
    assert obj == {"type": "power", "t": 1_700_000_012.5, "mono": 12.5, "rails_mw": {"VDD_IN": 7233.5},
                   "source": "INA3221 hwmon", "period_s": 0.02}
    counters = record_to_json(PowerReading(1.0, 2.0, {}, {"NVML_GPU": 123456789.0}, "NVML", 0.05))
    assert "rails_mw" not in counters and counters["counters_mj"] == {"NVML_GPU": 123456789}


def test_json_round_trip():
    record = PowerReading(1_700_000_000.25, 3.25, {"VDD_IN": 5000.5, "VDD_SOC": 1200.0},
                          {"RAPL_package-0": 42.125}, "INA3221 hwmon", 0.05)
    assert record_from_json(json.loads(json_line(record_to_json(record)))) == record


@pytest.mark.parametrize(
    ("line", "nulled"),
    [
        ({"rails_mw": {"VDD_IN": "nan"}}, 1),
        ({"rails_mw": {"VDD_IN": 1e300}}, 1),
        ({"rails_mw": {"VDD_IN": True}}, 1),
        ({"counters_mj": {"NVML_GPU": -5}}, 1),
        ({"counters_mj": "lots"}, 1),
        ({"rails_mw": [1, 2]}, 1),
        ({"source": 7}, 1),
        ({"mono": -1.0}, 1),
    ],
)
def test_hostile_values_are_left_out_and_counted(line, nulled):
    base = {"type": "power", "t": 1.0, "mono": 2.0, "source": "x", "period_s": 0.02}
    tally = Tally()
    decoded = record_from_json({**base, **line}, tally)
    assert isinstance(decoded, PowerReading)
    assert tally.nulled == nulled
    assert "VDD_IN" not in decoded.rails_mw and "NVML_GPU" not in decoded.counters_mj


@pytest.mark.parametrize("period", [None, 0, -0.02, "0.02", float("nan"), 1e12])
def test_a_reading_without_a_usable_period_is_no_record(period):
    obj = {"type": "power", "t": 1.0, "mono": 2.0, "rails_mw": {"VDD_IN": 5.0}, "source": "x"}
    if period is not None:
        obj["period_s"] = period
    tally = Tally()
    assert record_from_json(obj, tally) is None
    assert tally.nulled == 1


def test_rails_past_the_cap_are_dropped_and_counted():
    tally = Tally()
    decoded = record_from_json({"type": "power", "mono": 1.0, "period_s": 0.02, "source": "x",
                                "rails_mw": {f"R{i}": 1.0 for i in range(100)}}, tally)
    assert isinstance(decoded, PowerReading) and len(decoded.rails_mw) == 64 and tally.dropped == 36


def write_recording(path: Path) -> list[object]:
    """A session: samples each second, power readings between them, a phase."""
    written: list[object] = []
    with Recorder(path, {"tz": "UTC", "interval_ms": 1000, "source": "tegrastats"}, fsync_every_s=0) as rec:
        for second in range(3):
            sample = Sample(t_wall=1_700_000_000.0 + second, t_mono=100.0 + second,
                            rails={"VDD_IN": Rail(5000.0 + second)})
            records: list[object] = [sample]
            if second == 1:
                records.append(Marker("phase_start", "work", 1_700_000_001.5, 101.5, "script"))
            records += [reading(100.0 + second + k / 10, 6000.0 + k) for k in range(1, 10)]
            for record in records:
                rec.write(record)  # type: ignore[arg-type]
            written += records
    return written


def test_a_recording_reads_back_its_power_readings_in_order(tmp_path):
    path = tmp_path / "r.jsonl"
    written = write_recording(path)
    with path.open() as lines:
        back = [r for r in iter_records(lines, tz=UTC) if not isinstance(r, Event)]
    assert back == written


def test_replay_plays_power_readings_like_the_other_records(tmp_path):
    path = tmp_path / "r.jsonl"
    written = write_recording(path)
    source = ReplaySource(path, tz="UTC", speed=64, sleep=lambda _s: None)
    played = [r for r in source.records() if not isinstance(r, Event)]
    assert played == written
    assert sum(isinstance(r, PowerReading) for r in played) == 27


def test_an_older_reader_skips_a_record_type_it_does_not_know_with_one_note(tmp_path):
    """What readers before the power type did with its lines, and what this one does with a type
    added after it: skipped, the records around it intact, said once."""
    path = tmp_path / "r.jsonl"
    write_recording(path)
    future = json.dumps({"type": "power_spectrum", "t": 1.0, "mono": 101.2, "bins": [1, 2]})
    with path.open("a") as out:
        out.write(future + "\n" + future + "\n")
    assert decode_record_line(future) is None
    with path.open() as lines:
        records = list(iter_records(lines, tz=UTC))
    notes = [r for r in records if isinstance(r, Event) and r.kind == "note"]
    assert len(notes) == 1 and "power_spectrum" in notes[0].detail
    assert sum(isinstance(r, PowerReading) for r in records) == 27


def test_export_writes_the_power_table(tmp_path):
    path = tmp_path / "r.jsonl"
    write_recording(path)
    out = io.StringIO()
    rows = export_file(str(path), "csv", tz=UTC, stdout=out, table="power")
    table = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert rows == len(table) == 27
    assert list(table[0]) == ["t_wall", "time", "t_mono", "t_s", "phase", "source", "period_s", "gap_s",
                              "rail_VDD_IN_mw"]
    assert table[0]["source"] == "INA3221 hwmon" and float(table[0]["period_s"]) == 0.02
    assert [float(row["rail_VDD_IN_mw"]) for row in table[:9]] == [6000.0 + k for k in range(1, 10)]
    samples = io.StringIO()
    assert export_file(str(path), "csv", tz=UTC, stdout=samples) == 3  # the default table is unchanged
    sample_rows = list(csv.DictReader(io.StringIO(samples.getvalue())))
    assert "rail_VDD_IN_mw" in sample_rows[0] and "source" not in sample_rows[0]
    # one timeline in both tables: the first reading is 0.1 s after the first sample
    assert float(table[0]["t_s"]) - float(sample_rows[0]["t_s"]) == pytest.approx(0.1)
    assert {row["phase"] for row in table[13:18]} == {"work"}  # readings at 101.5 ... 101.9
    assert table[12]["phase"] == ""  # 101.4, before the phase's marker


def test_export_refuses_an_unknown_table(tmp_path):
    path = tmp_path / "r.jsonl"
    write_recording(path)
    with pytest.raises(ExportError, match="unknown table"):
        export_file(str(path), "csv", tz=UTC, stdout=io.StringIO(), table="rails")


# ------------------------------------------------------------------------------ host counters


def test_rapl_counters_are_mj_of_top_level_domains_and_unwrap(tmp_path):
    files = fake_rapl(tmp_path, {"package-0": (262_143_000_000, 262_143_328_850), "psys": (5_000, 1 << 32)})
    found = rapl_meters(tmp_path)
    (meter,) = found.meters
    try:
        assert meter.read() == ({}, {"RAPL_package-0": 262_143_000.0, "RAPL_psys": 5.0})
        write_value(files["package-0"], 1_000_000)  # wrapped past its range
        write_value(files["psys"], 7_000)
        _, counters = meter.read()  # type: ignore[misc]
        assert counters["RAPL_package-0"] == pytest.approx((262_143_328_850 + 1_000_000) / 1000)
        assert counters["RAPL_psys"] == pytest.approx(7.0)
        assert "RAPL_core" not in counters  # a sub-domain is inside its package
    finally:
        meter.close()


def test_rapl_that_only_root_may_read_is_said(tmp_path, monkeypatch):
    files = fake_rapl(tmp_path, {"package-0": (1000, 1 << 32)})
    files["package-0"].chmod(0o400)
    monkeypatch.setattr(host_module, "open_regular_file", lambda _path: None)  # as a user, not root
    found = rapl_meters(tmp_path)
    assert found.meters == () and found.problems == (RAPL_ROOT_ONLY,)


def test_no_powercap_is_no_meter_and_nothing_to_say(tmp_path):
    assert rapl_meters(tmp_path).meters == () and rapl_meters(tmp_path).problems == ()


class FieldNvml:
    """The NVML calls the meter makes, with an H200's figures (research/power_measurement.md)."""

    def __init__(self, *, instant: bool = True, counter: bool = True) -> None:
        self.instant, self.counter = instant, counter
        self.energy_mj = 9_876_543

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        if not self.counter:
            raise RuntimeError("Not Supported")
        return self.energy_mj

    def nvmlDeviceGetFieldValues(self, handle, fields):
        assert fields == [186]
        value = SimpleNamespace(uiVal=689_512)
        return [SimpleNamespace(nvmlReturn=0 if self.instant else 3, valueType=1, value=value)]

    def nvmlDeviceGetPowerUsage(self, handle):
        return 612_000


def test_nvml_meter_gives_the_energy_counter_and_the_instant_power():
    nvml = FieldNvml()
    meter = NvmlMeter(nvml, [("gpu", 0), ("gpu", 1)])
    assert meter.source == "NVML"
    rails, counters = meter.read()  # type: ignore[misc]
    assert counters == {"NVML_GPU": 9_876_543.0, "NVML_GPU1": 9_876_543.0}
    assert rails == {"NVML_GPU": 689_512.0, "NVML_GPU1": 689_512.0}


def test_nvml_without_the_instant_field_gives_power_usage_labelled_averaged():
    meter = NvmlMeter(FieldNvml(instant=False, counter=False), [("gpu", 0)])
    assert "averaged" in meter.source
    assert meter.read() == ({"NVML_GPU": 612_000.0}, {})


def test_the_host_source_offers_nvml_and_rapl_meters(tmp_path):
    fake_rapl(tmp_path, {"package-0": (1000, 1 << 32)})

    class Nvml(FieldNvml):
        def nvmlInit(self):
            return None

        def nvmlDeviceGetCount(self):
            return 1

        def nvmlDeviceGetHandleByIndex(self, index):
            return ("gpu", index)

    found = HostSource(1000, nvml=Nvml()).power_meters(tmp_path)
    try:
        assert [meter.source for meter in found.meters] == ["NVML", "RAPL"]
    finally:
        for meter in found.meters:
            meter.close()


@pytest.mark.parametrize("record", [
    reading(12.5, 7233.5),
    PowerReading(None, 1.0, {}, {"NVML_GPU": 123.0, "é\"x": float("nan")}, "NVML", 1.0),
    PowerReading(1.0, float("inf"), {"a": True, "b": -0.0}, {}, "s\ud800", 0.5),  # type: ignore[dict-item]
    PowerReading(1.0, 2.0, {"VDD_IN": 1e300}, {"c": 2**70}, "x", 0.001),
])
def test_the_recorders_power_line_holds_the_plain_lines_values(tmp_path, record):
    path = tmp_path / "rec.jsonl"
    with Recorder(path, {"source": "test"}, fsync_every_s=0) as rec:
        rec.write(record)
    line = path.read_bytes().splitlines()[1].decode("utf-8")
    assert "NaN" not in line and "Infinity" not in line
    assert json.loads(line) == json.loads(json_line(record_to_json(record)))

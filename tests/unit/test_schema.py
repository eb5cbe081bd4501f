"""The one schema of a recording's records (``model.schema``): every kind read back by the typed
decoder as written, a hostile value read leniently and counted, and schema-1 recordings read as the
lenient decoder has always read them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from paths import TESTS

from jtop_roof.model.codec import Tally, json_line, record_from_json, record_to_json
from jtop_roof.model.records import (
    Clocked,
    CpuCore,
    Engine,
    Event,
    Fan,
    Gpu,
    IoRates,
    Iram,
    Marker,
    Memory,
    PowerReading,
    ProcessReading,
    ProcessRow,
    Rail,
    Record,
    Sample,
    Work,
)
from jtop_roof.model.schema import SampleLine, decode_line, decode_record

DATA = TESTS / "data"
SHARED = Path("../shared")


def full_sample() -> Sample:
    return Sample(
        t_wall=1761436800.5, t_mono=12.25, raw="RAM 6879/62841MB", is_sample=True,
        ram=Memory(6879, 62841, None, 3, 4096), swap=Memory(0, 31421, 0.5), iram=Iram(10, 252, 252),
        cpus=[CpuCore(5, 729), None, CpuCore(0.5, None)], gpu=Gpu(12, (305, 306)), emc=Clocked(3, 2133),
        engines={"NVENC": Engine(off=True), "APE": Engine(None, 174), "VIC": Engine(7, 115)},
        temps_c={"cpu": 47.687, "gpu": None}, temps_max_c={"tj": 49.5},
        rails={"VDD_IN": Rail(5000, 4900), "VDD_GPU": Rail(2801, 2800.5, 3100)},
        throttle_reasons=["sw_power_cap"], oc_events={"oc1": 3},
        unknown=["XYZ 5%"], fans={"pwmfan": Fan(35.5, 2100)}, io=IoRates(1.5, 0, None, 0.25),
    )


RECORDS: list[Record] = [
    full_sample(),
    Sample(t_wall=None, t_mono=3.0, raw="Mon Oct 27", is_sample=False),
    Marker("phase_start", "warmup", 1761436800.0, -2.5, "script"),
    Marker("phase_end", None, None, 4.0, "key"),
    Event("gap", "no data", 1761436801.0, 9.0, 4.5),
    Event("throttle", "sw_power_cap", 1761436801.0, 9.0, None, "gpu", 1761436799.0, 7.0),
    Work(100, 2.5e12, 1e9, "fp16", 1761436800.0, -1.0, "hook"),
    PowerReading(1761436800.1, 0.1, {"VDD_IN": 7233.5}, {"NVML_GPU": 123456789}, "INA3221 hwmon", 0.01),
    ProcessReading(1761436800.0, 1.0, [ProcessRow(1234, "trtexec", 99.5, 812.25, 512, True),
                                       ProcessRow(1, "systemd", None, 12)], "/proc + NVML", 1.0, True, 2.5),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_kind_reads_back_by_the_typed_route_as_written(record: Record) -> None:
    line = json_line(record_to_json(record)).strip()
    decode_line(line)  # the typed route takes it (raises for a line that does not fit)
    tally = Tally()
    assert decode_record(line, tally) == record
    assert tally == Tally()


def test_a_sample_lines_parts_are_the_models_own_objects() -> None:
    line = decode_line(json_line(record_to_json(full_sample())).strip())
    assert isinstance(line, SampleLine)
    assert type(line.cpu[0]) is CpuCore and type(line.rails_mw["VDD_IN"]) is Rail  # type: ignore[index]
    assert line.engines["NVENC"] == "off"  # the JSON form of an engine printed off
    assert decode_record(json.dumps({"type": "header", "schema": 1, "app": "jroof-tui"})) is None


def good_line() -> dict[str, object]:
    return record_to_json(full_sample())


@pytest.mark.parametrize(("change", "read", "nulled", "dropped"), [
    (lambda o: o["cpu"][0].update(load_pct="5%"), lambda s: s.cpus[0].load_pct, 1, 0),
    (lambda o: o["temps_c"].update(cpu=12345.678), lambda s: s.temps_c["cpu"], 1, 0),  # 1e400 below
    (lambda o: o["temps_c"].update(cpu=float("nan")), lambda s: s.temps_c["cpu"], 1, 0),  # NaN, not JSON
    (lambda o: o["ram_mb"].update(lfb_count=True), lambda s: s.ram.lfb_count, 1, 0),
    (lambda o: o.update(cpu=[{"load_pct": 1, "mhz": 729}] * 300), lambda s: len(s.cpus), 0, 44),
])
def test_one_hostile_value_is_nulled_or_dropped_and_counted_and_the_rest_reads(
        change: Callable[[Any], None], read: Callable[[Any], object], nulled: int, dropped: int) -> None:
    obj = good_line()
    change(obj)
    tally = Tally()
    text = json.dumps(obj).replace("12345.678", "1e400")
    with pytest.raises((msgspec.ValidationError, msgspec.DecodeError)):
        decode_line(text)
    sample = decode_record(text, tally)
    assert isinstance(sample, Sample)
    assert read(sample) == (256 if dropped else None)
    assert (tally.nulled, tally.dropped) == (nulled, dropped)
    assert sample.rails == full_sample().rails and sample.gpu == full_sample().gpu


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    text = json.dumps(good_line()).replace('"RAM 6879', '"\\ud800RAM 6879')
    sample = decode_record(text, Tally())
    assert isinstance(sample, Sample) and sample.raw == "\ufffdRAM 6879/62841MB"


def recordings() -> list[Path]:
    found = sorted(DATA.rglob("*.jsonl"))
    if SHARED.is_dir():
        found += sorted(SHARED.rglob("*.jsonl"))
    return found


def kinds_of(record: Record | None) -> object:
    """The types of a record's numbers: an int read as an int stays one on both routes."""
    if not isinstance(record, Sample):
        return type(record)
    return ([type(getattr(record, name)) for name in record.__slots__]
            + [type(core.load_pct) for core in record.cpus or [] if core is not None]
            + [type(rail.now_mw) for rail in record.rails.values()]
            + [type(value) for value in record.temps_c.values()])


@pytest.mark.parametrize("path", recordings(), ids=lambda p: p.name)
def test_schema_1_recordings_read_as_the_lenient_decoder_reads_them(path: Path) -> None:
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    typed = 0
    for line in lines:
        old_tally, new_tally = Tally(), Tally()
        old = record_from_json(json.loads(line), old_tally)
        new = decode_record(line, new_tally)
        assert new == old and kinds_of(new) == kinds_of(old)
        assert new_tally == old_tally
        try:
            decode_line(line)
            typed += 1
        except msgspec.ValidationError:
            pass
    assert typed == len(lines)  # every real line fits the schema: none takes the slow route

"""Power read at the source: the board's monitors under a fake sysfs root, the sampler, and the
source that merges its readings with the main source's records."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from power_tree import FakeIna3221, fake_ina238, fake_ina3221x, write_value
from source_support import finishes

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, PowerReading, Record, Sample
from jtop_roof.sources.base import Source
from jtop_roof.sources.power import MeterSet, PoweredSource, PowerSampler, board_meters

ORIN_NANO = {"VDD_IN": (5048, 1432), "VDD_CPU_GPU_CV": (5040, 304), "VDD_SOC": (5032, 248)}


def read_all(found: MeterSet) -> dict[str, float]:
    rails: dict[str, float] = {}
    for meter in found.meters:
        reading = meter.read()
        if reading is not None:
            rails.update(reading[0])
    return rails


@pytest.fixture
def close_after() -> Iterator[list[MeterSet]]:
    opened: list[MeterSet] = []
    yield opened
    for found in opened:
        for meter in found.meters:
            meter.close()


def meters(root: Path, opened: list[MeterSet]) -> MeterSet:
    found = finishes(lambda: board_meters(root))
    opened.append(found)
    return found


def test_ina3221_rails_are_named_as_tegrastats_names_them_in_mw(tmp_path, close_after):
    FakeIna3221(tmp_path, ORIN_NANO)
    found = meters(tmp_path, close_after)
    assert [meter.source for meter in found.meters] == ["INA3221 hwmon"]
    rails = read_all(found)
    assert list(rails) == list(ORIN_NANO)  # the shunt-sum channel (in7, no current) is not a rail
    for name, (mv, ma) in ORIN_NANO.items():
        assert rails[name] == pytest.approx(mv * ma / 1000)
    assert found.problems == ()


def test_agx_orin_unwired_channels_are_not_read_and_names_repeat_as_tegrastats(tmp_path, close_after):
    FakeIna3221(tmp_path, {"VDD_GPU_SOC": (5000, 800), "VDD_CPU_CV": (5000, 300), "VIN_SYS_5V0": (5000, 500)})
    second = FakeIna3221(tmp_path, {"NC": (0, 0), "VDDQ_VDD2_1V8AO": (5000, 100), "VDD_CPU_CV": (5000, 1)},
                         hwmon="hwmon4")
    assert second.path("NC").exists()
    rails = read_all(meters(tmp_path, close_after))
    assert "NC" not in rails
    assert rails["VDD_CPU_CV"] == pytest.approx(1500) and rails["VDD_CPU_CV_2"] == pytest.approx(5)


def test_a_value_changed_in_place_is_read_anew(tmp_path, close_after):
    board = FakeIna3221(tmp_path, ORIN_NANO)
    found = meters(tmp_path, close_after)
    board.set("VDD_IN", 5000, 2000)
    assert read_all(found)["VDD_IN"] == pytest.approx(10000)


def test_ina238_power_input_is_microwatts_and_vin(tmp_path, close_after):
    fake_ina238(tmp_path, 41_250_000)
    found = meters(tmp_path, close_after)
    assert [meter.source for meter in found.meters] == ["INA238 hwmon"]
    assert read_all(found) == {"VIN": pytest.approx(41250)}


def test_ina238_with_a_label_takes_it(tmp_path, close_after):
    fake_ina238(tmp_path, 2_000_000, label="VDD_GPU")
    assert read_all(meters(tmp_path, close_after)) == {"VDD_GPU": pytest.approx(2000)}


def test_jetpack4_iio_rails_in_mw(tmp_path, close_after):
    fake_ina3221x(tmp_path, {"POM_5V_IN": 2532, "POM_5V_GPU": 621, "POM_5V_CPU": 412})
    found = meters(tmp_path, close_after)
    assert [meter.source for meter in found.meters] == ["ina3221x iio"]
    assert read_all(found) == {"POM_5V_IN": 2532, "POM_5V_GPU": 621, "POM_5V_CPU": 412}


def test_no_monitor_is_no_meter_and_one_hint_says_what_is_used_instead(tmp_path):
    source = PoweredSource(Scripted([]), lambda: board_meters(tmp_path), 20.0, root=str(tmp_path),
                           fallback="energy comes from tegrastats' rails at its interval")
    info = source.describe()
    said = [hint for hint in info.hints if "power monitor" in hint]
    assert len(said) == 1 and "tegrastats' rails" in said[0]
    assert "power_sampler" not in info.header
    assert list(source.records()) == []


@pytest.mark.parametrize("hostile", ["fifo", "directory", "dev_zero", "missing"])
def test_a_value_file_that_is_not_one_falls_back_with_a_problem_and_never_blocks(tmp_path, hostile,
                                                                                    close_after):
    board = FakeIna3221(tmp_path, ORIN_NANO)
    path = board.path("VDD_SOC", "in")
    path.unlink()
    if hostile == "fifo":
        os.mkfifo(path)
    elif hostile == "directory":
        path.mkdir()
    elif hostile == "dev_zero":
        path.symlink_to("/dev/zero")
    found = meters(tmp_path, close_after)
    rails = finishes(lambda: read_all(found))
    assert "VDD_SOC" not in rails and "VDD_IN" in rails
    assert len(found.problems) == 1 and "VDD_SOC" in found.problems[0]


def test_a_name_file_that_is_a_fifo_or_dev_zero_is_no_monitor(tmp_path, close_after):
    board = FakeIna3221(tmp_path, ORIN_NANO)
    (board.node / "name").unlink()
    os.mkfifo(board.node / "name")
    other = FakeIna3221(tmp_path, {"VDD_IN": (5000, 1000)}, hwmon="hwmon7")
    (other.node / "name").unlink()
    (other.node / "name").symlink_to("/dev/zero")
    assert meters(tmp_path, close_after).meters == ()


@pytest.mark.parametrize("text", ["nan\n", "inf\n", "1e3\n", "", "-\n", "12" * 40 + "\n",
                                  "99999999999999999999\n", "0x10\n"])
def test_hostile_values_are_no_reading(tmp_path, text, close_after):
    """One rail that cannot be read makes the monitor's whole reading none: without VDD_IN the
    total would be the module rails' sum for that reading, and the step's energy lost, no gap said
    (the energy comes from the neighbouring readings instead). Once it reads again, all of it does."""
    board = FakeIna3221(tmp_path, ORIN_NANO)
    found = meters(tmp_path, close_after)
    write_value(board.path("VDD_IN"), text)
    assert read_all(found) == {}
    write_value(board.path("VDD_IN"), "1000\n")
    assert set(read_all(found)) == set(ORIN_NANO)


def test_a_huge_value_file_is_read_only_at_its_start(tmp_path, close_after):
    board = FakeIna3221(tmp_path, ORIN_NANO)
    with board.path("VDD_IN").open("w") as out:
        out.write("1" * (8 << 20))
    found = meters(tmp_path, close_after)
    assert "VDD_IN" not in finishes(lambda: read_all(found))
    assert any("VDD_IN" in problem for problem in found.problems)


# ---------------------------------------------------------------------------------------- sampler


class Steps:
    """A clock that moves on by ``step`` at each reading."""

    def __init__(self, start: float, step: float) -> None:
        self.now, self.step = start, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_reading_is_stamped_at_the_middle_of_its_read_with_its_period(tmp_path, close_after):
    FakeIna3221(tmp_path, ORIN_NANO)
    found = meters(tmp_path, close_after)
    sampler = PowerSampler(found.meters, 50.0, clock=lambda: 1000.0, mono=Steps(10.0, 0.002))
    (reading,) = sampler.read_once()
    assert reading.t_mono == pytest.approx(10.005)  # read between 10.004 and 10.006
    assert reading.t_wall == pytest.approx(999.999)
    assert reading.period_s == pytest.approx(0.02)
    assert reading.source == "INA3221 hwmon" and reading.counters_mj == {}
    assert set(reading.rails_mw) == set(ORIN_NANO)


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_the_schedule_keeps_its_pace_and_does_not_burst_after_a_stall(tmp_path, close_after):
    FakeIna3221(tmp_path, ORIN_NANO)
    clock = Clock()
    sampler = PowerSampler(meters(tmp_path, close_after).meters, 10.0, mono=clock)
    assert sampler.due_in() == 0
    assert len(sampler.take()) == 1
    clock.now = 50.03  # read 30 ms late: the next is still due at 50.1, then 50.2
    assert sampler.due_in() == pytest.approx(0.07)
    clock.now = 50.1
    sampler.take()
    assert sampler.due_in() == pytest.approx(0.1)
    clock.now = 53.0  # stalled for seconds: one read now, the next a period on
    sampler.take()
    assert sampler.due_in() == pytest.approx(0.1)


# ----------------------------------------------------------------------------- the merged source


class Scripted(Source):
    """A main source that yields its records, then waits until stopped (or ends, ``ends``)."""

    kind = "tegrastats"

    def __init__(self, records: list[Record], *, ends: bool = True, error: Exception | None = None) -> None:
        self._records = records
        self._ends = ends
        self._error = error
        self._stop = threading.Event()
        self.stopped = False

    def records(self) -> Iterator[Record]:
        yield from self._records
        if self._error is not None:
            raise self._error
        if not self._ends:
            self._stop.wait(20)

    def stop(self) -> None:
        self.stopped = True
        self._stop.set()

    def describe(self) -> SourceInfo:
        return SourceInfo.from_mapping({"source": self.kind, "hints": ["from the board"]})


def powered(tmp_path: Path, inner: Source, hz: float = 200.0) -> PoweredSource:
    FakeIna3221(tmp_path, ORIN_NANO)
    return PoweredSource(inner, lambda: board_meters(tmp_path), hz, root=str(tmp_path), fallback="unused")


def test_merged_stream_has_the_source_records_and_readings_and_ends_with_the_source(tmp_path):
    samples: list[Record] = [Sample(t_mono=1.0), Sample(t_mono=2.0)]
    source = powered(tmp_path, Scripted(samples))
    info = source.describe()
    assert info.hints[0] == "from the board" and "INA3221 hwmon" in info.hints[-1]
    assert info.header["power_sampler"] == {"hz": 200.0, "sources": ["INA3221 hwmon"]}
    assert info.header["hints"] == list(info.hints)
    out = finishes(lambda: list(source.records()))
    assert [r for r in out if isinstance(r, Sample)] == samples


def test_readings_come_while_the_source_is_quiet_and_stop_ends_both(tmp_path):
    inner = Scripted([Sample(t_mono=1.0)], ends=False)
    source = powered(tmp_path, inner)
    stream = source.records()
    readings = []
    while len(readings) < 3:
        record = finishes(lambda: next(stream))
        if isinstance(record, PowerReading):
            readings.append(record)
    source.stop()
    assert inner.stopped
    finishes(lambda: list(stream))


def test_nothing_follows_a_source_error(tmp_path):
    error = Event("source_error", "cannot run tegrastats", None, 1.0)
    source = powered(tmp_path, Scripted([error]), hz=1000.0)
    out = finishes(lambda: list(source.records()))
    assert out[-1] is error


def test_a_failing_source_raises_in_the_reading_thread(tmp_path):
    source = powered(tmp_path, Scripted([], error=RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        finishes(lambda: list(source.records()))


def test_closing_the_stream_early_stops_the_source_and_the_sampler(tmp_path):
    inner = Scripted([Sample(t_mono=1.0)], ends=False)
    source = powered(tmp_path, inner)
    stream = source.records()
    finishes(lambda: next(stream))
    finishes(stream.close)
    assert inner.stopped
    assert not [t for t in threading.enumerate() if t.name == "jroof-source"]  # the source's thread ended

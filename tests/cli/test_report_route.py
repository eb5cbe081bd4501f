"""``report``'s short ways through the one route give the numbers of the long way, exactly.

``report`` of a day-long log at most 2x ``parse``. What made it cheaper are
short ways inside the same runtime and pipeline, each the same arithmetic in the same order:

* ``energy.Step.add_to``: a step whole inside a span already observed, without the edge cases
  (the long way: ``Step.add_part`` for every step);
* ``EnergyLedger.add_sample``: the usual sample (only the run open, the samples the only stream,
  a step measured whole, nothing refused) without spans, steps and streams (the long way:
  ``EnergyLedger.any_sample`` for every sample);
* ``ThrottleDetector``: a unit without a hold whose load is below "busy" is not stepped (the long
  way: every unit of every sample through ``_step``), and its caps are asked once per board;
* ``Pipeline.context``: made again only when the board or the description changed;
* a pipeline that shows nothing keeps no display columns (``TimesOnlyHistory``);
* ``runtime.play_whole`` reads ``READ_AHEAD`` records at a time (the long way: one at a time).

The long way is all of them undone. Both must give the same report JSON, every field, on the real
logs beside the repo when present (with and without ``--device``/``--power-mode``, with trtexec's
phases, with a wrong power mode: a ``mode_check``), and on the recordings in tests/data (phases,
power readings, NVML counters, throttles); on the test data alone otherwise. The ledger's short
way is also attacked with hostile streams (NaN, inf, huge values, rails coming and going, breaks,
counters that reset, phases, late markers).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import REPO

from jtop_roof.analysis import detector_registry, detectors, mode_changes, pipeline
from jtop_roof.analysis.energy import Step
from jtop_roof.analysis.history import History
from jtop_roof.analysis.ledger import EnergyLedger, SpanStats
from jtop_roof.analysis.pipeline import Pipeline, StreamContext
from jtop_roof.commands.main import main
from jtop_roof.model.codec import MAX_READING
from jtop_roof.model.records import Clocked, CpuCore, Gpu, PowerReading, Sample
from jtop_roof.roofline.devices import load_devices
from jtop_roof.runtime import runtime

ROOT = REPO
SHARED = ROOT.parent / "shared"
LOGS = SHARED / "tegrastats" / "logs"
TRTEXEC = SHARED / "trtexec"
DATA = ROOT / "tests" / "data"
#: The Orin Nano Super benchlab runs' power modes, by the word in their names.
BENCHLAB_MODES = {"maxn": "MAXN_SUPER", "15w": "15W", "7w": "7W"}
#: Recordings in tests/data: phases, power readings and NVML counters, throttles.
RECORDINGS = ("h200_phases.jsonl", "h200_energy.jsonl", "h200_host_recording.jsonl")


def _cases() -> list[tuple[str, list[str]]]:
    """(id, report arguments): the real logs when present, else the test data; the recordings."""
    cases = [(name, [str(DATA / name)]) for name in RECORDINGS]
    if not LOGS.is_dir() or not any(LOGS.glob("*.log")):
        return [*cases,
                ("fake", [str(DATA / "fake_tegrastats_orinnano_super.txt")]),
                ("fake-7W", [str(DATA / "fake_tegrastats_orinnano_super.txt"),
                             "--device", "orin-nano-8gb-super", "--power-mode", "7W"]),
                ("lines", [str(DATA / "tegrastats_lines.txt")]),
                *((path.name, [str(path)]) for path in sorted((DATA / "logfile").glob("*.log")))]
    for path in sorted(LOGS.glob("*.log")):
        cases.append((path.name, [str(path)]))
        if not path.name.startswith("orinnano8gb-super_jp6.2.1_benchlab"):
            continue
        board = ["--device", "orin-nano-8gb-super", "--power-mode", BENCHLAB_MODES[path.stem.split("_")[-2]]]
        cases.append((f"{path.name}-mode", [str(path), *board]))
        trtexec = TRTEXEC / path.name
        if trtexec.is_file():  # trtexec's build, warm-up and timed phases on the plain log
            cases.append((f"{path.name}-trtexec", [str(path), "--trtexec", str(trtexec), *board]))
    seven_w = LOGS / "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_7w_run3.log"
    if seven_w.is_file():  # a 7 W run said to be MAXN_SUPER: its caps never reached, a mode_check
        cases.append(("7w-as-maxn", [str(seven_w), "--trtexec", str(TRTEXEC / seven_w.name),
                                     "--device", "orin-nano-8gb-super", "--power-mode", "MAXN_SUPER"]))
    return cases


def _long_way(patch: pytest.MonkeyPatch) -> None:
    """Every short way undone (the module docstring)."""
    patch.setattr(Step, "add_to", Step.add_part)
    patch.setattr(EnergyLedger, "add_sample", EnergyLedger.any_sample)

    def every_unit(settings_: Any) -> detectors.ThrottleDetector:
        detector = detectors.ThrottleDetector(settings_)
        detector._quiet_below = -math.inf
        return detector

    patch.setattr(detector_registry, "DETECTORS",
                  [replace(detectors.DETECTOR, make=every_unit), mode_changes.DETECTOR])
    patch.setattr(detectors.ThrottleDetector, "_unit_caps",
                  lambda self, context, t: tuple(detectors._cap(unit, context, context.board.mode_at(t))
                                                      for unit in detectors.UNITS))
    patch.setattr(Pipeline, "context",
                  property(lambda self: StreamContext(self.info, self.interval_s, self.board)))
    patch.setattr(pipeline, "history_for",
                  lambda history_s, interval_s: History.for_duration(max(history_s, 60.0), interval_s))
    patch.setattr(runtime, "READ_AHEAD", 1)


def _report(args: list[str], out: Path) -> dict[str, Any]:
    assert main(["report", *args, "--format", "json", "--tz", "UTC", "--out", str(out)]) == 0
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


@pytest.mark.parametrize("args", [args for _, args in _cases()], ids=[name for name, _ in _cases()])
def test_the_short_ways_report_what_the_long_way_reports(args, tmp_path, monkeypatch):
    short = _report(args, tmp_path / "short.json")
    with monkeypatch.context() as patch:
        _long_way(patch)
        long = _report(args, tmp_path / "long.json")
    assert short == long  # every field, exactly: the same arithmetic in the same order


def test_the_cases_hold_phases_power_readings_and_throttles(tmp_path):
    """The comparison above means something: its recordings have phases, a power stream and
    throttle events (and the real logs, when present, trtexec's phases and a mode_check)."""
    reports = {name: _report(args, tmp_path / f"{i}.json") for i, (name, args) in enumerate(_cases())}
    energy = reports["h200_energy.jsonl"]
    assert len(energy["phases"]) >= 3 and energy["whole"]["throttled_s"] > 0
    assert "counter" in energy["whole"]["energy_source"]  # NVML's energy counter, a power stream
    assert any(event["kind"] == "throttle" for event in reports["h200_phases.jsonl"]["events"])
    if "7w-as-maxn" in reports:
        assert [event["kind"] for event in reports["7w-as-maxn"]["events"]] == ["mode_check"]
        assert any(len(report["phases"]) == 3 for name, report in reports.items()
                   if name.endswith("-trtexec"))


# ------------------------------------------------------------------ the ledger's short way, attacked

# Up to the largest reading a reader lets through (``codec.MAX_READING``; past it a value is
# dropped: ``energy.point``'s fsum would overflow on two 1e308 rails), and what ``finite`` drops.
_VALUES = st.one_of(st.floats(min_value=-MAX_READING, max_value=MAX_READING), st.sampled_from(
    [math.nan, math.inf, -math.inf, MAX_READING, -MAX_READING, 0.0, -0.0, 5e-324]))
_RAILS = st.dictionaries(st.sampled_from(["VDD_IN", "VDD_SOC", "VDD_GPU", "NVML_GPU"]), _VALUES, max_size=4)
_STEP = st.one_of(st.floats(min_value=0.001, max_value=3.0), st.sampled_from([0.0, 7.0, 60.0, -1.0]))
_RECORD = st.one_of(
    st.tuples(st.just("sample"), _STEP, _RAILS, st.one_of(st.none(), _VALUES)),
    st.tuples(st.just("power"), _STEP, _RAILS, st.booleans()),
    st.tuples(st.just("start"), st.floats(min_value=-2.0, max_value=2.0), st.sampled_from([None, "a", "b"]),
              st.sampled_from(["key", "resume", "run"])),
    st.tuples(st.just("end"), st.floats(min_value=-2.0, max_value=2.0)),
    st.tuples(st.just("break")),
)


def _play(stream: list[tuple[Any, ...]]) -> EnergyLedger:
    ledger, t = EnergyLedger(0.5), 100.0
    for record in stream:
        kind = record[0]
        if kind == "sample":
            t += record[1]
            ledger.add_sample(t, t + 1e9, record[3], record[2], gpu_mhz=record[3], emc_mhz=300)
        elif kind == "power":
            t += record[1]
            counters = record[3]
            ledger.add_power(PowerReading(t + 1e9, t, rails_mw={} if counters else record[2],
                                          counters_mj=record[2] if counters else {},
                                          source="NVML" if counters else "INA3221 hwmon", period_s=0.02))
        elif kind == "start":
            ledger.start_phase(record[2], t + record[1], origin=record[3])
        elif kind == "end":
            ledger.end_phase(t + record[1])
        else:
            ledger.add_break()
    return ledger


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN (a hostile stream's sums may be NaN either way)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, SpanStats) and isinstance(b, SpanStats):
        return all(_same(getattr(a, name), getattr(b, name)) for name in SpanStats.__dataclass_fields__)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RECORD, max_size=40))
def test_the_ledgers_short_way_gives_the_long_ways_spans_on_any_stream(stream):
    short = _play(stream)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Step, "add_to", Step.add_part)
        patch.setattr(EnergyLedger, "add_sample", EnergyLedger.any_sample)
        long = _play(stream)
    assert _same([short.whole, *short.phases()], [long.whole, *long.phases()])


def test_the_short_way_is_taken_and_is_the_long_ways_arithmetic():
    """A steady 1 Hz stream inside a phase: every step after a span's first goes the short way,
    and gives the trapezoid (to the last bit, as the long way sums it)."""
    taken: list[int] = []
    add_part = Step.add_part

    def counted(self: Step, coverage: Any, start: float, end: float) -> None:
        taken.append(1)
        add_part(self, coverage, start, end)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Step, "add_part", counted)
        ledger = EnergyLedger(1.0)
        ledger.start_phase("p", 0.5)
        for second in range(10):
            ledger.add_sample(float(second), None, 1000.0 + second, {"VDD_IN": 1000.0 + second})
    # only the phase's first step (across its edge at 0.5 s) goes the long way; 17 steps go short
    assert len(taken) == 1
    whole, (phase,) = ledger.whole, ledger.phases()
    expected = 0.0
    for second in range(1, 10):
        expected += (1000.0 + second - 1 + 0.5) * 1e-3
    assert whole.energy_j == expected and whole.rails_j == {"VDD_IN": expected}
    assert phase.first_mono == 0.5 and phase.samples == 9


# ------------------------------------------------------------ the detector's short way, attacked

# Few values, so that runs repeat: loads around "busy" (50 %) and "saturated" (80 %), clocks under,
# at and over the 7 W caps (GPU 408, EMC 2133, CPU 960 MHz), steps short and past ``close_after_s``.
_UNIT_LOADS = st.sampled_from([None, math.nan, 10.0, 49.9, 50.0, 85.0, 99.0, 99.0, 99.0])
_CPU = st.builds(CpuCore, _UNIT_LOADS, st.sampled_from([None, 0, 729, 960, 960, 2000]))
_STEPPED = st.lists(st.tuples(st.tuples(
    st.sampled_from([0.5, 1.0, 1.0, 1.5]),
    st.lists(st.one_of(st.none(), _CPU), max_size=4),
    st.one_of(st.none(), st.builds(Gpu, _UNIT_LOADS, st.sampled_from([(), (306,), (408, 0), (900,)]))),
    st.one_of(st.none(), st.builds(Clocked, _UNIT_LOADS, st.sampled_from([None, 665, 2133])))),
    st.integers(min_value=1, max_value=6)), max_size=20).map(
        lambda runs: [sample for sample, times in runs for _ in range(times)])  # held a few samples


def _events(stream: list[tuple[Any, ...]], context: StreamContext, quiet_below: float) -> list[Any]:
    detector = detectors.ThrottleDetector()
    detector._quiet_below = quiet_below
    events: list[Any] = []
    t = 0.0
    for step, cores, gpu, emc in stream:
        t += step
        events += detector.observe(Sample(t_wall=t, t_mono=t, cpus=cores, gpu=gpu, emc=emc), context)
    return [*events, *detector.finish(context)]


@settings(max_examples=300, deadline=None)
@given(_STEPPED)
def test_the_detector_skips_only_units_whose_samples_change_nothing(stream):
    board = Pipeline(history_s=0.0, interval_s=1.0, devices=load_devices(), device_id="orin-nano-8gb-super",
                     power_mode="7W")
    context = board.context
    assert context.board.mode is not None  # caps for all three units: each is judged
    assert _events(stream, context, detectors.ThrottleDetector()._quiet_below) == \
        _events(stream, context, -math.inf)

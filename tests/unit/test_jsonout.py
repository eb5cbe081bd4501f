"""The fast line encoder of ``jroof-tui parse``: byte for byte the text of ``json_line`` of
``sample_to_json`` / ``record_to_json``, on every real log, the test data and generated samples."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from factories import EXCERPT_POOL, recombined
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import REPO

from jtop_roof.formats import jsonout
from jtop_roof.formats.jsonout import line_json, parse_line_json, sample_line
from jtop_roof.formats.logfile import ReadStats, iter_parse_lines, iter_records, open_text
from jtop_roof.formats.parser import USUAL_SHAPE, parse_line
from jtop_roof.model.codec import Tally, cap_sample, json_line, record_to_json, sample_to_json
from jtop_roof.model.records import (
    Clocked,
    CpuCore,
    Engine,
    Event,
    Gpu,
    Iram,
    Marker,
    Memory,
    Rail,
    Record,
    Sample,
    Work,
)

REAL_LOGS = REPO.parent / "shared" / "tegrastats" / "logs"
DATA = REPO / "tests" / "data"


def reference(record: Record) -> str:
    """What ``parse`` printed through the dicts and json.dumps."""
    if isinstance(record, Sample):
        obj: dict[str, Any] = sample_to_json(record)
        if not record.is_sample:
            obj["line"] = record.raw
    else:
        obj = record_to_json(record)
    return json_line(obj)


def check_file(path: Path) -> int:
    """Both routes of ``parse`` (``iter_parse_lines``, with lines read straight to JSON, and each
    record of ``iter_records``) print the reference text; returns the records."""
    with open_text(str(path)) as stream:
        expected = [reference(record) for record in
                    iter_records(stream, tz="UTC", interval_s=None, stats=ReadStats())]
    with open_text(str(path)) as stream:
        records = list(iter_records(stream, tz="UTC", interval_s=None, stats=ReadStats()))
    assert [parse_line_json(record) for record in records] == expected, path.name
    with open_text(str(path)) as stream:
        printed = list(iter_parse_lines(stream, tz="UTC", interval_s=None, stats=ReadStats()))
    assert printed == expected, path.name
    return len(expected)


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason="no real logs beside the repo")
@pytest.mark.parametrize("name", sorted(p.name for p in REAL_LOGS.glob("*.log")) if REAL_LOGS.is_dir()
                         else [])
def test_every_real_log_prints_the_same_text(name: str) -> None:
    assert check_file(REAL_LOGS / name) > 0


DATA_FILES = sorted(
    [*DATA.glob("*.txt"), *DATA.glob("*.jsonl"), *(DATA / "logfile").glob("*.log")], key=lambda p: p.name
)


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.name)
def test_every_test_log_and_recording_prints_the_same_text(path: Path) -> None:
    assert check_file(path) > 0


def test_each_line_of_the_parser_corpus_twice() -> None:
    """A second pass is served from the caches: still the same text."""
    lines = (DATA / "tegrastats_lines.txt").read_text(encoding="utf-8").splitlines()
    for _ in range(2):
        for line in lines:
            sample = parse_line(line)
            assert parse_line_json(sample) == reference(sample), line


def test_small_caches_are_emptied_and_stay_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonout, "CACHE_LIMIT", 3)
    jsonout.clear_caches()
    lines = (DATA / "tegrastats_lines.txt").read_text(encoding="utf-8").splitlines()
    for line in lines * 2:
        sample = parse_line(line)
        assert parse_line_json(sample) == reference(sample), line
    assert len(jsonout._cpu_cache.text) <= 3
    assert len(jsonout._rails.text) <= 3


ODD_FLOATS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-5, 9.99e-5, 1e-9, 1e-300, 5e-324, 1e16,
              1.5e16, 1e22, 1e300, 0.1, 47.687, 2.0**53, 2.0**53 + 2, 1e20, -3.5]


def test_odd_numbers_in_every_field() -> None:
    for x in ODD_FLOATS:
        sample = Sample(
            t_wall=x, t_mono=x, raw="RAM", ram=Memory(x, x, x, 3, x), swap=Memory(x, x, x),
            iram=Iram(x, x, x), cpus=[CpuCore(x, 729), None, CpuCore(None, None)], gpu=Gpu(x, (0, 611)),
            emc=Clocked(x, 2133), engines={"APE": Engine(x, 174), "NVENC": Engine(off=True)},
            temps_c={"cpu": x, "gpu": None}, temps_max_c={"cpu": x},
            rails={"VDD_IN": Rail(x, x, x), "VDD_GPU": Rail(x)}, throttle_reasons=["sw_power_cap"],
            oc_events={"oc1": 2}, unknown=["what"],
        )
        assert parse_line_json(sample) == reference(sample), x
        assert sample_line(sample) == json_line(sample_to_json(sample)), x
        # the JSON is valid: NaN and infinities are null
        json.loads(parse_line_json(sample), parse_constant=lambda c: pytest.fail(c))


def test_values_outside_the_models_types_take_the_plain_route() -> None:
    class Sub(float):
        pass

    odd: list[Sample] = [
        Sample(t_wall=1.0, temps_c={"cpu": True}),  # a bool equals 1 and 1.0: never from a cache
        Sample(t_wall=1.0, temps_c={"cpu": 1.0}),
        Sample(t_wall=1.0, temps_c={"cpu": Sub(2.0)}),
        Sample(t_wall=1.0, cpus=[CpuCore(True, 1), CpuCore(1.0, 1)]),  # type: ignore[arg-type]
        Sample(t_wall=1, rails={"VDD_IN": Rail(1)}),  # ints where floats belong
        Sample(t_wall=True, oc_events={"oc1": True}),  # type: ignore[arg-type]
        Sample(t_wall=1.0, engines={5: Engine(1.0, 2)}),  # type: ignore[dict-item]
        Sample(t_wall=1.0, unknown=["é°C", "\x00\x1f\"\\\u2028", "a\tb"]),
        Sample(t_wall=1.0, temps_c={"ü\n": 3.25, "tab\t": None}, rails={"NC": Rail(2), "NC_2": Rail(3)}),
        Sample(t_wall=None, is_sample=False, raw="Mon Oct 27 2025 \x1b[0m"),
        Sample(t_wall=None, is_sample=False, raw=None),
    ]
    for sample in odd * 2:
        assert parse_line_json(sample) == reference(sample), sample


def test_records_that_are_not_samples() -> None:
    records: list[Record] = [
        Marker("phase_start", "warm-up", 1.5, 0.5, "script"),
        Marker("phase_end", None, math.nan, None),
        Event("gap", "no data", 10.0, 9.0, 3.0),
        Event("throttle", "thermal", 10.0, 9.0, None, "gpu", 8.0, 7.0),
        Work(100.0, 1e12, 5e9, "int8", 2.0, 1.0),
        Work(1e15, 1e24, math.inf, None, None, None),
    ]
    for record in records:
        assert parse_line_json(record) == reference(record)


finite = st.floats(allow_nan=True, allow_infinity=True)
reading = st.one_of(st.none(), finite, st.integers(-10**9, 10**9))
names = st.text(min_size=0, max_size=8)
RAIL_NAMES = ["VDD_IN", "VIN", "NC", "NC_2", "VDD_GPU", "NVML_GPU", "x"]


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def samples(draw: st.DrawFn) -> Sample:
    def maybe(strategy: st.SearchStrategy[Any]) -> Any:
        return draw(opt(strategy))

    return Sample(
        t_wall=draw(reading),
        raw=draw(st.one_of(st.none(), st.text(max_size=20))),
        is_sample=draw(st.booleans()),
        ram=maybe(st.builds(Memory, finite, finite, reading, opt(st.integers(0, 99)), reading)),
        swap=maybe(st.builds(Memory, finite, finite, reading)),
        iram=maybe(st.builds(Iram, finite, finite, reading)),
        cpus=maybe(st.lists(st.one_of(st.none(), st.builds(CpuCore, reading, opt(st.integers(0, 5000)))),
                            max_size=6)),
        gpu=maybe(st.builds(Gpu, reading, st.tuples(st.integers(0, 2000), st.integers(0, 2000)))),
        emc=maybe(st.builds(Clocked, reading, opt(st.integers(0, 5000)))),
        engines=draw(st.dictionaries(names, st.builds(Engine, reading, opt(st.integers(0, 9)), st.booleans()),
                                     max_size=4)),
        temps_c=draw(st.dictionaries(names, reading, max_size=4)),
        temps_max_c=draw(st.dictionaries(names, finite, max_size=3)),
        rails=draw(st.dictionaries(st.sampled_from(RAIL_NAMES), st.builds(Rail, finite, reading, reading),
                                   max_size=4)),
        throttle_reasons=maybe(st.lists(st.text(max_size=6), max_size=3)),
        oc_events=maybe(st.dictionaries(names, st.integers(0, 10**6), max_size=3)),
        unknown=draw(st.lists(st.text(max_size=6), max_size=3)),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(samples())
def test_generated_samples_print_the_same_text(sample: Sample) -> None:
    try:
        expected = reference(sample)
    except (UnicodeEncodeError, ValueError):  # lone surrogates and the like: nothing to match
        return
    assert parse_line_json(sample) == expected
    assert parse_line_json(sample) == expected  # and again, from the caches


# --- the text route: a line in the usual order read straight to JSON -----------------------------

CORPUS = [line for line in (DATA / "tegrastats_lines.txt").read_text(encoding="utf-8").splitlines()
          if line and not line.startswith("#")]
T_WALL = 1761436800.25


def AT_T_WALL(stamp: str | None) -> tuple[float, float]:  # noqa: N802 (a Timeline.place at a constant time)
    return T_WALL, 0.0


def timed_reference(line: str, t_wall: float | None) -> str:
    """What ``parse`` prints for ``line`` at ``t_wall``: its sample held to the decoder's caps."""
    sample = parse_line(line)
    cap_sample(sample, Tally())
    if sample.is_sample:
        sample.t_wall = t_wall
    return reference(sample)


def test_the_text_route_prints_what_the_sample_route_prints_on_the_corpus() -> None:
    taken = 0
    for _ in range(2):  # the second pass from the caches
        for line in CORPUS:
            text = line_json(line, AT_T_WALL)
            if text is not None:
                taken += 1
                assert text == timed_reference(line, T_WALL), line
    assert taken > len(CORPUS)  # most real lines take it


@pytest.mark.parametrize("line", [
    "\x1b[32mRAM 1/2MB CPU [1%@2]",  # ANSI codes
    "RAM 1/2MB CPU [1%@2] GR3D_FREQ 5%@611 GR3D2_FREQ 5%@611",  # the second GPC apart
    "RAM 1/2MB CPU [1%@2] MTS fg 0% bg 3%",  # Denver's MTS, read into the engines
    "RAM 1/2MB CPU [1%@2] cpu@52.968C/53.1C",  # maximum temperatures (JetPack 7)
    "RAM 1/2MB CPU [1%@2] cpu@50C CPU@51C",  # one zone name twice (names are lower-cased)
    "RAM 1/2MB CPU [1%@2] NC 1/1 NC 2/2",  # one rail name twice (AGX Orin)
    "RAM 1/2MB CPU [1%@2,x%,3%@4]",  # a CPU entry not understood (kept in unknown)
    "RAM 1/2MB CPU [1%@2] junk",  # not the usual order: the token walk
    "date",
    # other blanks than single spaces between temperatures and rails: the token walk's reading
    "RAM 1/2MB CPU [1%@2] cpu@40C\x1cgpu@41C",
    "RAM 1/2MB CPU [1%@2] cpu@40C  gpu@41C",
    "RAM 1/2MB CPU [1%@2] cpu@40C\tVDD_IN 1/1",
    "RAM 1/2MB CPU [1%@2] cpu@40C VDD_IN  1/1",
    "RAM 1/2MB CPU [1%@2] VDD_IN 1/1 cpu@40C",  # rails before temperatures
    "RAM 1/2MB CPU [1%@2] cpu@40C VDD_IN 1/1 x",  # a rail without its reading
    "RAM 1/2MB CPU [1%@2] cpu@40C 5V 1/1",  # a rail name that is not one
    # texts too long to keep (a hostile file must not fill the caches with them)
    "RAM 1/2MB CPU [1%@2] " + "z" * (jsonout.NAME_CHARS + 1) + "@40C",
    "RAM 1/2MB CPU [1%@2] " + "R" * (jsonout.NAME_CHARS + 1) + " 1/1",
    "RAM 1/2MB CPU [1%@2] " + " ".join(["APE 174"] * (jsonout.RUN_CHARS // 8 + 1)),
    "RAM 1/2MB CPU [1%@2] " + " ".join(f"R{i} 1/1" for i in range(jsonout.RUN_CHARS // 7)),
    "RAM 1/2MB CPU [" + ",".join(["5%@729"] * (jsonout.USUAL_LINE_CHARS // 7 + 1)) + "]",
    "RAM 1/2MB CPU [1%@2] GR3D_FREQ 0%@[" + ",".join(["611"] * (jsonout.RUN_CHARS // 4)) + "]",
])
def test_lines_that_the_text_route_does_not_take_are_parsed(line: str) -> None:
    assert line_json(line, AT_T_WALL) is None
    # in a stamped log, after the lines that tell the interval: parse still prints the reference
    usual = "RAM 6879/62841MB CPU [5%@729] EMC_FREQ 0%@2133 cpu@47.6C VDD_IN 5000mW/5000mW"
    log = [f"10-26-2025 00:00:{s:02d} {usual}" for s in range(20)] + [f"10-26-2025 00:00:20 {line}"]
    printed = list(iter_parse_lines(log, tz="UTC", interval_s=None, stats=ReadStats()))
    records = iter_records(log, tz="UTC", interval_s=None, stats=ReadStats())
    assert printed == [reference(record) for record in records]
    last = f"10-26-2025 00:00:20 {line}"
    assert printed[-1] == timed_reference(last, 1761436820.0 if "RAM" in line else None)


def test_the_text_route_with_caches_emptied_as_it_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonout, "CACHE_LIMIT", 3)
    jsonout.clear_caches()
    for line in CORPUS * 2:
        text = line_json(line, AT_T_WALL)
        assert text is None or text == timed_reference(line, T_WALL), line
    assert len(jsonout._cpu_text) <= 3 and len(jsonout._rail_text) <= 3 and len(jsonout._field_text) <= 3


USUAL = [line for line in CORPUS if line_json(line, AT_T_WALL) is not None]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(USUAL), st.data())
def test_real_lines_with_other_numbers_print_the_same_text_by_either_route(line: str,
                                                                          data: st.DataObject) -> None:
    """Every digit run of a real line replaced by a drawn one (zeros, 12 digits, 13 that the grammar
    refuses, -256 sensors off, decimals): the text route gives the reference text or declines."""
    number = st.one_of(st.from_regex(r"[0-9]{1,13}", fullmatch=True), st.sampled_from(["0", "256", "000"]))
    parts = re.split(r"([0-9]+)", line)
    for i in range(1, len(parts), 2):
        if data.draw(st.booleans()):
            parts[i] = data.draw(number)
    mutated = "".join(parts)
    t_wall = data.draw(st.one_of(st.none(), st.floats(0, 4e9), st.sampled_from([math.nan, math.inf])))
    text = line_json(mutated, lambda stamp: (t_wall, 0.0))
    if text is not None:
        assert text == timed_reference(mutated, t_wall), mutated


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recombined(EXCERPT_POOL))
def test_recombined_grammar_lines_print_the_same_text_by_either_route(case: tuple[Any, Any, str]) -> None:
    line = case[2]
    text = line_json(line, AT_T_WALL)
    if text is not None:
        assert text == timed_reference(line, T_WALL), line


def test_names_and_runs_up_to_the_bounds_take_the_text_route() -> None:
    line = ("RAM 1/2MB CPU [1%@2] " + " ".join(["APE 174"] * (jsonout.RUN_CHARS // 8 - 1)) + " "
            + "z" * jsonout.NAME_CHARS + "@40C " + "R" * jsonout.NAME_CHARS + " 1/1")
    assert line_json(line, AT_T_WALL) == timed_reference(line, T_WALL)


def test_the_shapes_groups_come_in_the_order_the_text_route_unpacks() -> None:
    assert tuple(USUAL_SHAPE.groupindex) == ("stamp", "ram", "swap", "iram", "cpu", "emc", "gpu", "gpu2",
                                             "rest")


@pytest.mark.parametrize("end", ["\n", "\r\n", "", "  \n"])
@pytest.mark.parametrize("last", ["APE 174", "EMC_FREQ 0%@2133", "GR3D_FREQ 0%@[305,305]", "SWAP 0/31421MB",
                                  "tj@47.5C", "VDD_IN 5000mW/5000mW"])
def test_a_line_ending_in_any_field_takes_the_text_route(last: str, end: str) -> None:
    head = "10-26-2025 00:00:01 RAM 6879/62841MB"
    middle, tail = (f" {last}", "") if last.startswith("SWAP") else ("", f" {last}")
    line = f"{head}{middle} CPU [5%@729]{tail}{end}"
    assert line_json(line, AT_T_WALL) == timed_reference(line, T_WALL)


SPLICED = ["junk", "cpu@40C", "CPU@41C", "VDD_IN 1/1", "NC 2/2", "APE 174", "GR3D_FREQ 5%", "EMC_FREQ @3199",
           "MTS fg 0% bg 1%", "x@1C/2C", "NVENC_LOAD 7%", "VIC_FREQ @[115,230]", "5V 1/1", "@", "off"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(USUAL), st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPLICED),
                                                  st.sampled_from([" ", "  ", "\t", "\x1c", "\xa0"])),
                                        min_size=1, max_size=3))
def test_real_lines_with_tokens_spliced_between_fields_print_the_same_text(line: str, splices: Any) -> None:
    for where, token, blank in splices:
        spaces = [i for i, c in enumerate(line) if c == " "]
        at = spaces[where % len(spaces)]
        line = line[:at] + blank + token + line[at:]
    text = line_json(line, AT_T_WALL)
    if text is not None:
        assert text == timed_reference(line, T_WALL), line


@pytest.mark.parametrize("rest", [
    "EMC_FREQ 0%@2133 GR3D_FREQ 0%@[305] VIC 5%@115 NVDEC @[716,716] APE 174 cpu@40C VDD_IN 1/1",
    "GR3D_FREQ 0% cpu@40C VDD_IN 1/1",  # no engines
    "APE 174 VDD_IN 1/1 VDD_CPU 2/2",  # no temperatures
    "VDD_IN 1/1",
    "APE 174 VIC 5%@115",  # engines last
    "cpu@40C gpu@-256C",  # temperatures last, a sensor off
    "VIC 5%@115 NVENC_LOAD 7% NVENC_FREQ @716 CPU@40C POM_5V_IN 1234/1234 POM_5V_GPU 5/5/9",
])
def test_engines_temperatures_and_rails_are_told_apart(rest: str) -> None:
    line = f"10-26-2025 00:00:01 RAM 6879/62841MB CPU [5%@729,off] {rest}\n"
    text = line_json(line, AT_T_WALL)
    assert text is not None
    assert text == timed_reference(line, T_WALL)


def test_a_newline_inside_is_not_one_line_and_is_declined() -> None:
    # a reader splits at newlines; given one anyway, the shape is not tried (it would backtrack)
    assert line_json("RAM 1/2MB CPU [] " + " " * 4000 + "\nX", AT_T_WALL) is None
    assert line_json("RAM 1/2MB CPU [1%@2]\nRAM 1/2MB CPU [1%@2]\n", AT_T_WALL) is None


def test_a_time_of_a_float_subclass_prints_as_the_float() -> None:
    class Seconds(float):
        pass

    line = "RAM 1/2MB CPU [1%@2] cpu@40C VDD_IN 1/1\n"
    assert line_json(line, lambda stamp: (Seconds(T_WALL), 0.0)) == timed_reference(line, T_WALL)


def test_whole_engine_sets_are_kept_in_fewer_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonout, "ENGINE_SETS_LIMIT", 3)
    jsonout.clear_caches()
    for i in range(10):
        sample = Sample(ram=Memory(1.0, 2.0), engines={"APE": Engine(None, i), "VIC": Engine(off=True)})
        assert parse_line_json(sample) == reference(sample)
    assert 0 < len(jsonout._engine_sets) <= 3

"""``usual.usual_sample``, ``iter_records``' cheap route for lines in the usual order, gives the
Sample ``parse_line`` gives (equal dataclasses), or declines: on every real line (the shared corpus
when beside the repo, tests/data always), on real lines damaged at random, and on hostile ones
(past the decoder's caps, digits past 12, ANSI colours, tabs, MTS, now/max temperatures). And
``iter_records`` of whole logs gives the records and tallies of the parse-every-line route."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import OUTSIDE, REPO, TESTS

from jtop_roof.formats import logfile
from jtop_roof.formats.logfile import ReadStats, iter_records
from jtop_roof.formats.parser import _parse
from jtop_roof.formats.usual import usual_sample
from jtop_roof.model.codec import MAX_CORES, MAX_GPCS, MAX_NAMED
from jtop_roof.model.records import Record, Sample

ROOT = REPO
DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "tegrastats"
DATA_FILES = sorted(DATA.glob("*.txt")) + sorted((DATA / "logfile").glob("*.log"))
SHARED_FILES = sorted((SHARED / "lines").glob("*.txt")) + sorted((SHARED / "logs").glob("*.log"))
#: The log ``benchmarks/day.py`` re-stamps to a day: every one of its lines takes the route.
DAY_LOG = SHARED / "logs" / "agxorin_jp6_abdeltegraparser_1.log"
TIMES = (1234.5, 6.25)


class Place:
    """A stand-in for ``Timeline.place`` that records the stamps it was asked for."""

    def __init__(self) -> None:
        self.stamps: list[str | None] = []

    def __call__(self, stamp: str | None) -> tuple[float | None, float]:
        self.stamps.append(stamp)
        return TIMES


def _parsed(line: str) -> Sample:
    """The slow route's sample of ``line`` (the token walk), timed as ``usual_sample`` times it."""
    sample = _parse(line, walk=True)
    assert sample == _parse(line)
    sample.t_wall, sample.t_mono = TIMES
    return sample


def _check(line: str) -> bool:
    """Whether the route took ``line``; when it did, its sample is the parser's."""
    place = Place()
    sample = usual_sample(line, place)
    if sample is None:
        assert place.stamps == []
        return False
    assert sample == _parsed(line), line
    assert place.stamps == [sample.stamp]
    return True


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines(keepends=True) if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.name)
def test_every_test_data_line_gives_the_parsers_sample(path):
    lines = _lines(path)
    taken = [line for line in lines if _check(line)]
    assert taken, path  # not a test of declining only


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/tegrastats is not beside the repo")
def test_every_real_line_gives_the_parsers_sample():
    taken = declined = 0
    for path in SHARED_FILES:
        for line in _lines(path):
            if _check(line):
                taken += 1
            else:
                declined += 1
    assert taken > 10000, (taken, declined)
    assert all(_check(line) for line in _lines(DAY_LOG))


def _damaged(line: str, edits: list[tuple[int, str, bool]]) -> str:
    for at, text, replace in edits:
        at %= len(line) + 1
        line = line[:at] + text + line[at + 1 if replace else at:]
    return line


REAL_LINES = [line for path in DATA_FILES for line in _lines(path) if "RAM " in line]
# pieces of tegrastats' grammar, so that damage often still looks like a field
PIECES = st.sampled_from([" ", "  ", "\t", ",", "@", "/", "%", "[", "]", "(", ")", "C", "mW", "MB", "kB",
                          "x", "0", "9", "-", ".", "off", "\r", "\n", "\x1b[0m", "_FREQ", " NC 1/1",
                          " MTS fg 0% bg 0%", " cpu@1.5C", " cpu@1C/2C", " GR3D2_FREQ 5%@[1]", "9" * 13,
                          " X 1/2", "@[", "é"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(REAL_LINES),
       st.lists(st.tuples(st.integers(0, 10_000), PIECES, st.booleans()), min_size=1, max_size=4))
def test_damaged_real_lines_give_the_parsers_sample_or_are_declined(line, edits):
    _check(_damaged(line, edits))


def _day_line(cores: int = 4, zones: int = 2, rails: int = 2, gpcs: int = 2) -> str:
    """A line in the usual order with so many cores, zones, rails and GPC clocks."""
    cpu = ",".join(["5%@729"] * cores)
    temps = " ".join(f"z{i}@4{i % 10}.5C" for i in range(zones))
    rail_text = " ".join(f"R{i} {i}mW/{i}mW" for i in range(rails))
    gpc = ",".join(["305"] * gpcs)
    return (f"10-26-2025 00:00:00 RAM 6879/62841MB (lfb 3x4MB) CPU [{cpu}] EMC_FREQ 0%@2133 "
            f"GR3D_FREQ 0%@[{gpc}] NVENC off APE 174 {temps} {rail_text}\n")


TAKEN, DECLINED, EITHER = True, False, None


@pytest.mark.parametrize(("line", "route"), [
    (_day_line(), TAKEN),
    (_day_line()[20:], TAKEN),  # no stamp
    ("  " + _day_line(), TAKEN),
    (_day_line().replace("\n", "\r\n"), TAKEN),
    (_day_line().replace("\n", "  \n"), TAKEN),
    (_day_line().replace("z1@41.5C", "z1@-256C"), TAKEN),  # a sensor that is off
    (_day_line().replace("CPU [", "CPU [,"), TAKEN),  # an empty entry keeps its core
    (_day_line().replace("z1@", "z0@"), TAKEN),  # a zone named twice: the parser numbers them
    (_day_line().replace("R1 ", "R0 "), TAKEN),  # a rail named twice (AGX Orin's NC)
    (_day_line().replace("NVENC off", "NVENC off NVENC off"), TAKEN),  # an engine named twice
    (_day_line().replace("GR3D_FREQ 0%@[305,305]", "GR3D_FREQ 0%@[305,305] GR3D2_FREQ 9%@[7]"), TAKEN),
    # past the decoder's caps: the caller parses it, caps it and counts what it dropped
    (_day_line(cores=MAX_CORES + 1), DECLINED),
    (_day_line(zones=MAX_NAMED + 1), DECLINED),
    (_day_line(rails=MAX_NAMED + 1), DECLINED),
    (_day_line(gpcs=MAX_GPCS + 1), DECLINED),
    (_day_line().replace("6879", "9" * 13), DECLINED),  # past the parser's 12-digit bound
    (_day_line().replace("CPU [", "CPU [5%@[1],"), DECLINED),  # an entry not understood: unknown
    (_day_line().replace("CPU [", "CPU [5%@729 ,"), DECLINED),  # a blank inside the CPU field
    (_day_line().replace(" APE", " MTS fg 0% bg 0% APE"), DECLINED),
    (_day_line().replace("z0@40.5C", "z0@40.5C/41.5C"), DECLINED),  # JetPack 7's now/max
    ("\x1b[32m" + _day_line(), DECLINED),
    (_day_line().replace("\n", "\t\n"), DECLINED),
    (_day_line().replace(" R0", "\tR0"), DECLINED),
    (_day_line().replace(" R0", " R0\rx"), DECLINED),
    (_day_line().replace("NVENC", "NVENC\x00"), DECLINED),
    (_day_line().replace(" GR3D", " GR3D2_FREQ 9%@[7] GR3D"), EITHER),
])
def test_hostile_lines_give_the_parsers_sample_or_are_declined(line, route):
    taken = _check(line)
    if route is not EITHER:
        assert taken == route


def _slow_records(lines: list[str], stats: ReadStats) -> list[Record]:
    """``iter_records`` of a plain log as it was before the route: every line parsed."""
    return list(logfile._read(lines, "UTC", None, stats, logfile._as_is, None))


@pytest.mark.parametrize("lines", [
    *[_lines(path) for path in DATA_FILES],
    [_day_line(cores=MAX_CORES + 1 if i % 7 == 0 else 4, rails=70 if i % 5 == 0 else 2)
     .replace("00:00:00", f"00:{i // 60:02d}:{i % 60:02d}") for i in range(900)],
    *([] if not SHARED.is_dir() else [_lines(path) for path in SHARED_FILES]),
])
def test_iter_records_gives_the_records_and_tallies_of_the_slow_route(lines):
    fast_stats, slow_stats = ReadStats(), ReadStats()
    fast = list(iter_records(lines, tz="UTC", stats=fast_stats))
    assert fast == _slow_records(lines, slow_stats)
    assert fast_stats == slow_stats


REPLAYED = sorted((TESTS / "data" / "logfile").glob("*.log")) + sorted(
    (OUTSIDE / "shared" / "tegrastats" / "logs").glob("*.log"))


@pytest.mark.parametrize("path", REPLAYED, ids=lambda p: p.name)
def test_a_replays_backfill_reads_the_samples_the_reader_does(path):
    """A seek's backfill (``FileIndex.read_span``) takes the same short way: the same Samples, times
    included, as ``iter_records`` reads from the file."""
    from jtop_roof.sources.replay import ReplaySource

    source = ReplaySource(path, tz="UTC")
    try:
        while source.index.step():
            pass
        spanned = [r for r in source.index.read_span(0, len(source.index), set())
                   if isinstance(r, Sample) and r.is_sample]
    finally:
        source.stop()
    with open(path, encoding="utf-8", errors="replace") as lines:
        read = [r for r in iter_records(lines, tz="UTC") if isinstance(r, Sample) and r.is_sample]
    assert spanned == read

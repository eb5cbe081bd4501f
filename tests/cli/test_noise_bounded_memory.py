"""A log of noise (lines that are no samples) is read in bounded memory, by every reader: the lines
before the first sample line go out as read, and what waits for the interval is capped by the timer
(``PlainTimer.over_held``). Samples after the noise are read as without it, and the replay's index
times every line as the reader does."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from datetime import timezone
from pathlib import Path

import pytest
from paths import REPO, TESTS

from jtop_roof.formats.logfile import ReadStats, iter_records
from jtop_roof.formats.timing import HOLD_MAX_LINES
from jtop_roof.model.records import Sample
from jtop_roof.sources.fileindex import FileIndex

REAL = TESTS / "data" / "logfile" / "agxorin_jp6_500ms.log"
ROOT = REPO


def noise(count: int) -> Iterator[str]:
    for i in range(count):
        yield f"noise line {i} from a board spewing junk\n"


class Counted:
    """Lines handed to a reader, counted as it takes them."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self.taken = 0

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            self.taken += 1
            yield line


def most_held(lines: Iterator[str]) -> int:
    """The most lines the reader had taken and not yet given back as records."""
    counted = Counted(lines)
    most = given = 0
    for _ in iter_records(counted, tz="UTC"):
        given += 1
        most = max(most, counted.taken - given)
    return most


def real_lines() -> list[str]:
    return REAL.read_text().splitlines(keepends=True)


def test_noise_before_the_first_sample_is_not_held():
    """A million noise lines used to wait, each a parsed Sample, for a sample that never came."""
    assert most_held(iter([*noise(30_000), *real_lines()])) <= 700


def test_noise_after_a_first_sample_line_waits_at_most_the_timer_s_cap():
    lines = [real_lines()[0], *noise(3 * HOLD_MAX_LINES), *real_lines()[1:]]
    assert most_held(iter(lines)) <= HOLD_MAX_LINES + 2


def samples_of(lines: Iterable[str]) -> list[tuple[float | None, float | None, str | None]]:
    return [(r.t_wall, r.t_mono, r.stamp) for r in iter_records(iter(lines), tz="UTC")
            if isinstance(r, Sample) and r.is_sample]


def test_samples_after_a_million_noise_lines_are_read_as_without_them():
    alone = samples_of(real_lines())
    assert len(alone) > 10
    assert samples_of(itertools.chain(noise(1_000_000), real_lines())) == alone


@pytest.mark.parametrize("first_real", [0, 1, 40])
def test_the_replay_index_times_the_lines_as_the_reader_does_around_noise(tmp_path, first_real):
    """The cap decides the interval at the same line in both readers (here before the stamps tell)."""
    real = real_lines()
    lines = [*real[:first_real], *noise(HOLD_MAX_LINES + 500), *real[first_real:]]
    path = tmp_path / "noisy.log"
    path.write_text("".join(lines))
    index = FileIndex(str(path), tz=timezone.utc, interval_s=None)
    index.index_new_data(final=True)
    indexed = [(index.wall_at(i, index.mono(i)), index.mono(i)) for i in range(len(index))]
    read = [(r.t_wall, r.t_mono) for r in iter_records(iter(lines), tz=timezone.utc)
            if isinstance(r, Sample) and r.is_sample]
    assert indexed == read


#: Runs jroof-tui and says its exit status and peak RSS (``VmHWM``: this process's own, where
#: ``ru_maxrss`` would count the pages of the test process it was forked from).
PEAK_RSS = """
import re, runpy, sys
sys.argv = ["jroof-tui", *sys.argv[1:]]
try:
    runpy.run_module("jtop_roof", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
with open("/proc/self/status") as status:
    print(code, re.search(r"VmHWM:\\s*(\\d+) kB", status.read()).group(1), file=sys.stderr)
"""
HAS_PEAK = Path("/proc/self/status").is_file() and "VmHWM" in Path("/proc/self/status").read_text()


def peak_rss_kib(*args: str) -> tuple[int, int]:
    """(exit status, peak RSS in KiB) of one jroof-tui command run in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, *args], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=600, check=False)
    code, rss = done.stderr.split()[-2:]
    return int(code), int(rss)


@pytest.mark.skipif(not HAS_PEAK, reason="no /proc/self/status VmHWM here")
def test_a_million_noise_lines_then_samples_take_a_bounded_peak_memory(tmp_path):
    """200 MB is the bound asked; the old reader took about 600 MB for this file."""
    path = tmp_path / "noisy.log"
    with path.open("w") as out:
        out.write(real_lines()[0])
        out.writelines(noise(1_000_000))
        out.writelines(real_lines())
    code, rss = peak_rss_kib("parse", str(path))
    assert code == 0
    assert rss < 200 * 1024


@pytest.mark.skipif(not HAS_PEAK, reason="no /proc/self/status VmHWM here")
def test_a_million_noise_lines_and_no_sample_are_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "noise.log"
    with path.open("w") as out:
        out.writelines(noise(1_000_000))
    code, rss = peak_rss_kib("report", str(path), "--format", "json")
    assert code == 2
    assert rss < 200 * 1024


def test_a_recording_s_junk_lines_are_counted_not_listed():
    """The reader's note needs how many lines were skipped and whether the last was one: a count
    and the last's number, not a list that grows with a file of junk."""
    header = ('{"type":"header","schema":1,"app":"jroof-tui","version":"0.1.0","start_wall":0.0,'
              '"start_mono":0.0,"tz":"UTC","interval_ms":1000}\n')
    stats = ReadStats()
    records = list(iter_records(itertools.chain([header], noise(50_000)), stats=stats))
    assert records == []
    assert stats.skipped_lines == 50_000 and stats.last_skipped == 50_001
    assert stats.truncated_tail

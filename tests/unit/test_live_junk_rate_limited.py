"""A live board spewing junk (lines that are not samples) is not recorded line by line: a few such
lines are kept per window and a run, the rest are dropped and counted, and a note says how many,
once per window. The samples among the junk all come through."""

from __future__ import annotations

import itertools
import re
import sys
import textwrap

from paths import TESTS
from source_support import Collector

from jtop_roof.model.records import Event, Sample
from jtop_roof.sources.nonsamples import MAX_KEPT, PER_WINDOW, WINDOW_S, NonSampleGate
from jtop_roof.sources.tegrastats import TegrastatsSource

LINES = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"
SYSFS = TESTS / "data" / "sysfs"
JUNK = 20_000


def real_lines() -> list[str]:
    return [line for line in LINES.read_text().splitlines() if line.strip() and not line.startswith("#")]


def dropped_in(notes: list[str]) -> int:
    total = 0
    for note in notes:
        found = re.search(r"dropped ([\d,]+) line", note)
        assert found is not None, note
        total += int(found.group(1).replace(",", ""))
    return total


def test_a_board_spewing_binary_is_recorded_as_a_few_lines_and_a_count(tmp_path):
    script = tmp_path / "spew.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        real = {real_lines()[:5]!r}
        out = sys.stdout.buffer
        for i in range({JUNK}):
            if i % 4000 == 0:
                out.write(real[i // 4000].encode() + b"\\n")
            out.write(b"\\x00\\xff\\x1b[31m\\x07junk %d\\xfe\\n" % i)
        out.flush()
    """))
    source = TegrastatsSource([sys.executable, str(script)], 20, backoff=(30.0,), sysfs_root=str(SYSFS),
                              clock=itertools.count(1_000_000.0, 1.0).__next__,
                              mono=itertools.count(0.0, 1.0).__next__)
    collector = Collector(source)
    try:
        records = collector.take_until(lambda r: isinstance(r, Event) and r.kind == "source_restart")
    finally:
        collector.stop()
    samples = [r for r in records if isinstance(r, Sample) and r.is_sample]
    kept = [r for r in records if isinstance(r, Sample) and not r.is_sample]
    notes = [r.detail for r in records if isinstance(r, Event) and r.kind == "note"]
    assert len(samples) == 5
    assert 0 < len(kept) <= 2 * PER_WINDOW  # one window, two where the spew straddles one's end
    assert notes and dropped_in(notes) == JUNK - len(kept)
    assert "not samples" in notes[0]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_each_window_keeps_a_few_and_says_its_drops_once():
    clock = Clock()
    gate = NonSampleGate("tegrastats", clock=clock)
    kept = [gate.keep() for _ in range(PER_WINDOW + 30)]
    assert kept.count(True) == PER_WINDOW
    assert gate.said() is None  # the window is still open
    clock.now += WINDOW_S
    note = gate.said()
    assert note is not None and dropped_in([note]) == 30
    assert gate.said(final=True) is None  # said once
    assert gate.keep()  # a new window keeps again


def test_a_run_keeps_at_most_so_many_in_all():
    clock = Clock()
    gate = NonSampleGate("tegrastats", clock=clock)
    kept = 0
    notes = []
    for _ in range(3 * MAX_KEPT // PER_WINDOW):
        kept += sum(gate.keep() for _ in range(PER_WINDOW + 1))
        clock.now += WINDOW_S
        notes.append(gate.said())
    assert kept == MAX_KEPT
    assert dropped_in([n for n in notes if n]) == 3 * MAX_KEPT // PER_WINDOW * (PER_WINDOW + 1) - MAX_KEPT

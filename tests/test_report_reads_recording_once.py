"""``report`` of a recording reads the file once through the pipeline, after a short look for its
interval, and gives what reading it whole for the interval first gave.

A recording's interval (``IntervalProbe``) settles within its first samples, so the whole file
need not be decoded twice; where it settles past the look (session breaks early on), the file is
played again at the whole file's interval, so the report never rests on a wrong one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest

from jtop_roof.formats.logfile import ReadStats, iter_records, open_text
from jtop_roof.formats.recorder import Recorder
from jtop_roof.outputs import report as report_module
from jtop_roof.outputs.report import build_report

DATA = Path(__file__).resolve().parent / "data"
RECORDINGS = ("h200_phases.jsonl", "h200_energy.jsonl", "h200_host_recording.jsonl")


def _report(path: Path, lines_read: list[int] | None = None) -> tuple[dict[str, Any], ReadStats]:
    def lines() -> Iterator[str]:
        with open_text(path) as stream:
            for line in stream:
                if lines_read is not None:
                    lines_read.append(1)
                yield line

    stats = ReadStats()
    report = build_report(lines, source={"file": str(path)}, tz=timezone.utc, interval_s=None, stats=stats)
    return report, stats


def _recording(path: Path, samples: int) -> Path:
    """A recording of ``samples`` copies of a real AGX Orin line, stamps taken off (1 s apart)."""
    line = (DATA / "logfile" / "agxorin_jp6_500ms.log").read_text(encoding="utf-8").splitlines()[0]
    unstamped = line.split(" ", 2)[2]
    with Recorder(path, {"type": "header", "schema": 1, "source": "replay"}) as recorder:
        for record in iter_records([unstamped] * samples, tz="UTC"):
            recorder.write(record)
    return path


def test_a_recording_is_read_once_past_its_first_look(tmp_path):
    path = _recording(tmp_path / "long.jsonl", 2000)
    read: list[int] = []
    report, _ = _report(path, read)
    lines = sum(1 for _ in open_text(path))
    assert report["whole"]["samples"] == 2000
    assert len(read) < 1.1 * lines  # one read, and a look at its start (the old way: two reads)


@pytest.mark.parametrize("look", [0, 1, 3, report_module.INTERVAL_LOOK])
@pytest.mark.parametrize("name", RECORDINGS)
def test_any_look_reports_what_the_whole_files_interval_gives(name, look, monkeypatch):
    """A look too short to settle the interval (0 or 1 sample: none or the header's) is caught
    after the play: the report and the caller's read statistics are the whole file's."""
    path = DATA / name
    with monkeypatch.context() as patch:
        patch.setattr(report_module, "INTERVAL_LOOK", math.inf)
        whole, whole_stats = _report(path)
    monkeypatch.setattr(report_module, "INTERVAL_LOOK", look)
    looked, looked_stats = _report(path)
    assert looked == whole
    assert looked_stats == whole_stats
    assert whole_stats.interval_s is not None and whole_stats.last_line > 0


def test_a_cut_last_line_is_said_of_the_whole_file(tmp_path):
    """The statistics ``report`` says on stderr come from the one whole read, not the look."""
    path = tmp_path / "cut.jsonl"
    text = (DATA / "h200_phases.jsonl").read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n")[:-5], encoding="utf-8")
    _, stats = _report(path)
    assert stats.truncated_tail and stats.last_line == len(text.splitlines())

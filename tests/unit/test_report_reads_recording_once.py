"""``report`` of a recording reads the file once through the pipeline, after a short look for its
interval: a recording's interval (``IntervalProbe``) is final once its first samples' steps are in,
and the reader says so (``ReadStats.interval_final``), so the whole file need not be decoded twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from paths import TESTS

from jtop_roof.formats.logfile import ReadStats, iter_records, open_text
from jtop_roof.formats.recorder import Recorder
from jtop_roof.outputs.report import build_report

DATA = TESTS / "data"
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


@pytest.mark.parametrize("name", RECORDINGS)
def test_the_interval_said_final_is_the_whole_files(name):
    """Where the reader says a recording's interval is final, reading on to the end never moves it
    (so ``report`` plays the file once, at that interval), nor its basis."""
    path = DATA / name
    early = ReadStats()
    for _ in iter_records(open_text(path), tz=timezone.utc, stats=early):
        if early.interval_final:
            break
    whole = ReadStats()
    for _ in iter_records(open_text(path), tz=timezone.utc, stats=whole):
        pass
    assert (early.interval_s, early.basis) == (whole.interval_s, whole.basis)
    assert whole.interval_s is not None


def test_breaks_early_on_delay_the_final_interval_until_its_steps_are_in(tmp_path):
    """Steps across a session break are not steps: a recording whose first sessions are short is
    final only once enough steps within sessions are in, and then at the whole file's interval."""
    line = (DATA / "logfile" / "agxorin_jp6_500ms.log").read_text(encoding="utf-8").splitlines()[0]
    unstamped = line.split(" ", 2)[2]
    path = tmp_path / "sessions.jsonl"
    for _ in range(30):  # thirty sessions of two samples: one step each
        with Recorder(path, {"type": "header", "schema": 1, "source": "replay"}) as recorder:
            for record in iter_records([unstamped] * 2, tz="UTC", interval_s=0.5):
                recorder.write(record)
    with Recorder(path, {"type": "header", "schema": 1, "source": "replay"}) as recorder:
        for record in iter_records([unstamped] * 100, tz="UTC", interval_s=0.5):
            recorder.write(record)
    early, samples = ReadStats(), 0
    for record in iter_records(open_text(path), tz=timezone.utc, stats=early):
        samples += record.__class__.__name__ == "Sample"
        if early.interval_final:
            break
    whole = ReadStats()
    for _ in iter_records(open_text(path), tz=timezone.utc, stats=whole):
        pass
    assert samples > 60  # past the short sessions' 30 steps
    assert early.interval_s == whole.interval_s == 0.5


def test_a_cut_last_line_is_said_of_the_whole_file(tmp_path):
    """The statistics ``report`` says on stderr come from the one whole read, not the look."""
    path = tmp_path / "cut.jsonl"
    text = (DATA / "h200_phases.jsonl").read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n")[:-5], encoding="utf-8")
    _, stats = _report(path)
    assert stats.truncated_tail and stats.last_line == len(text.splitlines())

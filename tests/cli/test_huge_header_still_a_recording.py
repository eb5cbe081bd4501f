"""A recording whose header is huge stays a recording: the recorder bounds every header field and
says what it cut (``cut``); a reader meeting a header line too long to hold, or torn, reads it field
by field with its long fields dropped and said, and never takes the file for a plain log; one that
lost what makes it ours is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timezone
from pathlib import Path

import pytest
from paths import REPO, TESTS

from jtop_roof.formats import recorder as recorder_module
from jtop_roof.formats.logfile import ReadStats, RecordingError, iter_records, open_text, read_header
from jtop_roof.formats.nosamples import require_samples
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.records import Event, Sample
from jtop_roof.sources.fileindex import FileIndex

ROOT = REPO
FIXTURE = TESTS / "data" / "tui" / "orinnano_super_replay.jsonl"
LINES = FIXTURE.read_text().splitlines(keepends=True)
HEADER = json.loads(LINES[0])
SAMPLES = sum(1 for line in LINES if '"type":"sample"' in line)

#: What a hostile board or a long run gives a header: each alone well over a MiB.
HUGE = {
    "command": ["python", "train.py", *(f"--opt{i}=" + "x" * 60 for i in range(40_000))],
    "model": "NVIDIA Jetson " + "M" * 2_000_000,
    "thermal_trips": {f"zone{i}": {"trip_point_0": 95000, "type": "passive"} for i in range(20_000)},
}


def with_header(tmp_path: Path, header_line: str) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text(header_line + "".join(LINES[1:]))
    return path


def samples_read(path: Path) -> tuple[list[Sample], list[str]]:
    with open_text(path) as lines:
        records = list(iter_records(lines, tz="UTC"))
    samples = [r for r in records if isinstance(r, Sample) and r.is_sample]
    notes = [r.detail for r in records if isinstance(r, Event) and r.kind == "note"]
    return samples, notes


# -- writing ---------------------------------------------------------------------------------------


def test_the_recorder_bounds_every_header_field_and_says_what_it_cut(tmp_path):
    path = tmp_path / "run.jsonl"
    with Recorder(path, {**HEADER, **HUGE}) as rec:
        rec.write(Sample(t_wall=1.0, t_mono=1.0))
    first = path.read_bytes().split(b"\n", 1)[0]
    assert len(first) <= 64 << 10
    header = json.loads(first)
    assert set(HUGE) <= set(header["cut"])
    assert header["app"] == "jroof-tui" and header["tz"] == HEADER["tz"]
    assert header["model"].startswith("NVIDIA Jetson ")  # cut, not dropped
    assert read_header(path) is not None


def test_a_recording_with_a_huge_header_is_appended_to(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({**HEADER, **HUGE}) + "\n" + "".join(LINES[1:]))
    assert os.path.getsize(path) > 1 << 20
    with Recorder(path, dict(HEADER)) as again:
        assert again.appended


# -- reading ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", sorted(HUGE))
def test_a_header_line_over_a_mib_is_read_as_a_recording_its_long_field_said(tmp_path, field):
    path = with_header(tmp_path, json.dumps({**HEADER, field: HUGE[field]}) + "\n")
    assert os.path.getsize(path) > 1 << 20
    samples, notes = samples_read(path)
    assert len(samples) == SAMPLES
    assert any(field in note and "cut" in note for note in notes)
    header = read_header(path)
    assert header is not None and field in header["cut"]
    if field != "model":
        assert header["model"] == HEADER["model"]  # the other fields are kept
    require_samples(str(path))  # the no-samples check reads it as a recording too


def test_the_replay_index_reads_a_huge_header_as_a_recording(tmp_path):
    path = with_header(tmp_path, json.dumps({**HEADER, **HUGE}) + "\n")
    index = FileIndex(str(path), tz=timezone.utc, interval_s=None)
    index.index_new_data(final=True)
    assert index.mode == "recording" and index.header is not None
    assert set(HUGE) <= set(index.header["cut"])
    noted: set[str] = set()
    records = [index.read(i, noted) for i in range(len(index))]
    assert sum(isinstance(r, Sample) and r.is_sample for r in records) == SAMPLES
    assert any(isinstance(r, Event) and r.kind == "note" and "command" in r.detail for r in records)


def test_a_torn_header_is_read_as_far_as_it_holds(tmp_path):
    torn = json.dumps(HEADER)[:-30]  # a crash mid-write: not valid JSON
    path = with_header(tmp_path, torn + "\n")
    samples, notes = samples_read(path)
    assert len(samples) == SAMPLES
    assert any("breaks off" in note for note in notes)


def test_a_header_without_what_makes_it_ours_is_refused_not_read_as_a_log(tmp_path):
    path = with_header(tmp_path, '{"type":"header","junk":"' + "z" * (2 << 20) + '"}\n')
    with pytest.raises(RecordingError), open_text(path) as lines:
        list(iter_records(lines, stats=ReadStats()))
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "parse", str(path)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "not a jroof recording" in done.stderr


def test_report_of_a_huge_header_recording_is_a_recording_s(tmp_path):
    path = with_header(tmp_path, json.dumps({**HEADER, "command": HUGE["command"]}) + "\n")
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(path), "--format", "json"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["source"]["format"] != "tegrastats log"
    assert report["source"].get("model") == HEADER["model"]


def test_the_recorder_s_check_reads_a_long_first_line_past_its_probe(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "_HEADER_PROBE_BYTES", 256)
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({**HEADER, "model": "M" * 5000}) + "\n")
    with Recorder(path, dict(HEADER)) as again:
        assert again.appended

"""Reading plain tegrastats logs and our recordings (jtop_roof.formats.logfile)."""

from __future__ import annotations

import io
import itertools
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from paths import OUTSIDE, REPO, TESTS

from jtop_roof.formats import logfile
from jtop_roof.formats.logfile import infer_interval_s, iter_records, open_text, read_header
from jtop_roof.formats.parser import parse_line
from jtop_roof.model.codec import record_to_json
from jtop_roof.model.records import Event, Marker, Sample

DATA = TESTS / "data" / "logfile"
SHARED_LOGS = OUTSIDE / "shared" / "tegrastats" / "logs"
DEMO_LOG = REPO / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"


def utc_epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%m-%d-%Y %H:%M:%S").replace(tzinfo=timezone.utc).timestamp()


def read_lines(path: Path) -> list[str]:
    with open_text(path) as f:
        return list(f)


def header(**extra) -> dict:
    base = {"type": "header", "schema": 1, "app": "jroof-tui", "version": "0.1.0", "source": "tegrastats",
            "start_wall": 1000.0, "start_mono": 50.0, "tz": "UTC", "interval_ms": 500,
            "model": "NVIDIA Jetson AGX Orin", "max_clocks": {"gpu_mhz": 1300, "emc_mhz": 3199}}
    base.update(extra)
    return base


def recorded_sample(line: str, t: float, mono: float) -> Sample:
    sample = parse_line(line)
    sample.t_wall, sample.t_mono = t, mono
    return sample


def write_recording(path: Path, records: list, tail: str = "") -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(header()) + "\n")
        for record in records:
            f.write(json.dumps(record_to_json(record)) + "\n")
        f.write(tail)


# -- interval inference ------------------------------------------------------------------------


def stamps_at(seconds: list[int]) -> list[str]:
    return [datetime.fromtimestamp(1_700_000_000 + s, timezone.utc).strftime("%m-%d-%Y %H:%M:%S")
            for s in seconds]


def test_infer_interval_from_lines_per_stamp():
    ten_a_second = stamps_at([s for s in range(10) for _ in range(10)])
    assert infer_interval_s(ten_a_second) == 0.1


def test_infer_interval_longer_than_a_second():
    assert infer_interval_s(stamps_at([0, 3, 6, 9, 12, 15, 18, 21])) == 3.0


def test_infer_interval_ignores_one_gap_and_a_partial_first_group():
    # first stamp holds 1 line (log started mid-second), then 2 a second, with a 7 s gap
    seconds = [0] + [1, 1, 2, 2, 9, 9, 10, 10, 11, 11, 12, 12, 13]
    assert infer_interval_s(stamps_at(seconds)) == 0.5


def test_infer_interval_rounds_down_to_whole_milliseconds():
    """46 lines a second (AGX Xavier at --interval 20): 1/46 s is 0.0217; 0.022 would spread 47
    lines of one second past the next stamp."""
    seconds = [s for s in range(8) for _ in range(46)]
    assert infer_interval_s(stamps_at(seconds)) == 0.021
    assert infer_interval_s(stamps_at([0, 3, 6, 9, 12, 15, 18, 21])) == 3.0  # exact ones stay


def test_infer_interval_needs_stamps():
    assert infer_interval_s([None, None, None]) is None
    assert infer_interval_s(stamps_at([0, 0, 0])) is None


# -- plain logs -------------------------------------------------------------------------------


def test_stamped_log_spreads_duplicate_stamps_at_the_inferred_interval():
    records = list(iter_records(read_lines(DATA / "agxorin_jp6_500ms.log"), tz="UTC"))
    assert len(records) == 12 and all(r.is_sample for r in records)
    walls = [r.t_wall for r in records]
    base = utc_epoch("10-26-2025 05:10:54")
    # 05:10:54 x2, :55 x2, :56 x2, :57 x2, :58 x1, :59 x2, 05:11:00 x1, spread at 0.5 s
    assert walls == [base, base + 0.5, base + 1, base + 1.5, base + 2, base + 2.5, base + 3, base + 3.5,
                     base + 4, base + 5, base + 5.5, base + 6]
    assert [r.t_mono for r in records] == [w - base for w in walls]
    assert records[0].stamp == "10-26-2025 05:10:54"


def test_stamps_decide_the_interval_over_a_given_one():
    """A configured default (1000 ms) must not spread two lines of one second over two seconds."""
    records = list(iter_records(read_lines(DATA / "agxorin_jp6_500ms.log"), tz="UTC", interval_s=1.0))
    assert [r.t_mono for r in records[:3]] == [0.0, 0.5, 1.0]


def test_given_interval_spreads_when_the_stamps_cannot_tell():
    two_lines_one_stamp = read_lines(DATA / "agxorin_jp6_500ms.log")[:2]
    records = list(iter_records(two_lines_one_stamp, tz="UTC", interval_s=0.25))
    assert [r.t_mono for r in records] == [0.0, 0.25]


def test_zone_moves_wall_time_not_the_timeline():
    lines = read_lines(DATA / "agxorin_jp6_500ms.log")
    utc = list(iter_records(lines, tz="UTC"))
    plus_two = list(iter_records(lines, tz="+02:00"))
    assert utc[0].t_wall - plus_two[0].t_wall == 7200
    assert [r.t_mono for r in utc] == [r.t_mono for r in plus_two]


def test_log_without_stamps_is_spaced_by_interval_and_keeps_its_date_header():
    records = list(iter_records(read_lines(DATA / "tx2_jp4_date_header.log"), tz="UTC", interval_s=0.25))
    first, samples = records[0], records[1:]
    assert not first.is_sample and first.raw == "Tue Jan 26 18:22:31 UTC 2021"
    assert len(samples) == 4 and all(s.is_sample for s in samples)
    assert [s.t_mono for s in samples] == [0.0, 0.25, 0.5, 0.75]
    assert all(s.t_wall is None for s in samples)
    assert samples[0].ram is not None and samples[0].ram.total_mb == 7859


def test_log_without_stamps_defaults_to_one_second():
    records = list(iter_records(read_lines(DATA / "tx2_jp4_date_header.log"), tz="UTC"))
    assert [r.t_mono for r in records if r.is_sample] == [0.0, 1.0, 2.0, 3.0]


def test_date_header_before_stamped_lines():
    records = list(iter_records(read_lines(DATA / "agxxavier_jp5_date_header.log"), tz="UTC"))
    assert [r.is_sample for r in records] == [False, True, True, True]
    assert records[0].raw == "pon, 6 maj 2024, 18:29:45 UTC"
    assert records[0].t_wall is None
    assert records[1].t_wall == utc_epoch("05-06-2024 20:29:45")
    assert records[2].t_mono > records[1].t_mono


def test_blank_lines_are_skipped():
    lines = ["\n"] + read_lines(DATA / "tx2_jp4_date_header.log")[1:3] + ["   \n", "\n"]
    records = list(iter_records(lines, tz="UTC", interval_s=1.0))
    assert len(records) == 2 and all(r.is_sample for r in records)


def test_streaming_input_is_read_with_bounded_lookahead():
    """`tegrastats | jroof-tui parse -` must print before the pipe ends: inference reads a few
    seconds of lines, never the whole stream."""
    body = read_lines(DEMO_LOG)[0][20:]
    pulled = 0

    def endless():
        nonlocal pulled
        for second in itertools.count():
            pulled += 1
            stamp = datetime.fromtimestamp(1_700_000_000 + second, timezone.utc)
            yield stamp.strftime("%m-%d-%Y %H:%M:%S ") + body

    first = list(itertools.islice(iter_records(endless(), tz="UTC"), 3))
    assert [r.t_mono for r in first] == [0.0, 1.0, 2.0]
    assert pulled <= logfile.INFER_MAX_LINES


def test_jittery_high_rate_log_keeps_wall_time_in_order_and_inside_each_second():
    """Real AGX Xavier lines re-stamped at the 45-48 lines a second of their log: t_wall never
    runs back and no line is placed at or past the next stamp."""
    bodies = [line.split(" ", 2)[2] for line in read_lines(DATA / "agxxavier_jp5_date_header.log")[1:]]
    group_sizes = [2, 46, 47, 48, 46, 46, 48, 45, 47, 3]
    seconds = [s for s, size in enumerate(group_sizes) for _ in range(size)]
    lines = [f"{stamp} {bodies[i % len(bodies)]}" for i, stamp in enumerate(stamps_at(seconds))]
    samples = [r for r in iter_records(lines, tz="UTC") if r.is_sample]
    assert len(samples) == len(lines)
    walls = [s.t_wall for s in samples]
    assert all(b >= a for a, b in itertools.pairwise(walls))
    assert all(0 <= s.t_wall - utc_epoch(s.stamp) < 1 for s in samples)
    assert all(b.t_mono >= a.t_mono for a, b in itertools.pairwise(samples))


def test_demo_log_inferred_interval_matches_its_lines_per_second():
    records = list(iter_records(read_lines(DEMO_LOG), tz="UTC"))
    samples = [r for r in records if r.is_sample]
    assert len(samples) == 661
    # 9 lines a second in its first complete stamps: 1/9 s, to the millisecond
    assert samples[4].t_mono - samples[3].t_mono == pytest.approx(0.111)
    assert all(b.t_mono >= a.t_mono for a, b in itertools.pairwise(samples))


# -- recordings --------------------------------------------------------------------------------


def test_recording_keeps_its_times_markers_and_events_and_skips_a_cut_last_line(tmp_path):
    line = read_lines(DATA / "agxorin_jp6_500ms.log")[0]
    records = [
        recorded_sample(line, 1000.0, 50.0),
        Marker("phase_start", "prefill", 1000.2, 50.2, origin="script"),
        recorded_sample(line, 1000.5, 50.5),
        Event("gap", "no data", 1000.5, 50.5, gap_s=3.0),
        Marker("phase_end", None, 1004.0, 54.0),
        recorded_sample(line, 1004.0, 54.0),
    ]
    path = tmp_path / "rec.jsonl"
    cut = json.dumps(record_to_json(records[0]))[:57]  # kill -9 in the middle of a write
    write_recording(path, records, tail=cut)
    got = list(iter_records(read_lines(path), tz="UTC"))
    assert [type(r) for r in got] == [Sample, Marker, Sample, Event, Marker, Sample]
    assert [(r.t_wall, r.t_mono) for r in got] == [(r.t_wall, r.t_mono) for r in records]
    assert got[1].name == "prefill" and got[1].origin == "script"
    assert got[3].kind == "gap" and got[3].gap_s == 3.0
    assert got[0].gpu is not None and got[0].gpu.gpc_mhz == (305, 305)
    assert got[0].raw == line.rstrip("\n")


def test_recording_skips_malformed_lines_in_the_middle(tmp_path):
    line = read_lines(DATA / "agxorin_jp6_500ms.log")[0]
    path = tmp_path / "rec.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(header()) + "\n")
        f.write(json.dumps(record_to_json(recorded_sample(line, 1.0, 1.0))) + "\n")
        f.write("{not json\n[1, 2]\n{\"type\": \"future-kind\"}\n\n")
        f.write(json.dumps(record_to_json(recorded_sample(line, 2.0, 2.0))) + "\n")
    got = list(iter_records(read_lines(path), tz="UTC"))
    assert [r.t_mono for r in got if isinstance(r, Sample)] == [1.0, 2.0]
    notes = [r.detail for r in got if isinstance(r, Event)]
    assert len(notes) == 1 and "unknown type 'future-kind'" in notes[0]


def test_read_header(tmp_path):
    rec = tmp_path / "rec.jsonl"
    write_recording(rec, [])
    assert read_header(rec)["model"] == "NVIDIA Jetson AGX Orin"
    assert read_header(DATA / "tx2_jp4_date_header.log") is None
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert read_header(empty) is None
    with pytest.raises(OSError):
        read_header(tmp_path / "missing.log")


# -- opening files -----------------------------------------------------------------------------


def test_open_text_replaces_undecodable_bytes(tmp_path):
    path = tmp_path / "bad.log"
    line = read_lines(DATA / "tx2_jp4_date_header.log")[1]
    path.write_bytes(b"\xff\xfe garbage\n" + line.encode())
    records = list(iter_records(read_lines(path), tz="UTC"))
    assert not records[0].is_sample and "\ufffd" in records[0].raw
    assert records[1].is_sample


def test_open_text_dash_reads_stdin(monkeypatch):
    data = "".join(read_lines(DATA / "tx2_jp4_date_header.log")).encode()

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr("sys.stdin", Stdin())
    with open_text("-") as f:
        records = list(iter_records(f, tz="UTC"))
    assert sum(r.is_sample for r in records) == 4


# -- every real log in shared/ ------------------------------------------------------------------


@pytest.mark.skipif(not SHARED_LOGS.is_dir(), reason="shared/ reference folder not beside the repo")
@pytest.mark.parametrize("name", sorted(p.name for p in SHARED_LOGS.glob("*.log")) if SHARED_LOGS.is_dir()
                         else [])
def test_every_shared_log_reads_with_a_timeline_that_never_runs_back(name):
    lines = read_lines(SHARED_LOGS / name)
    records = list(iter_records(lines, tz="UTC"))
    samples = [r for r in records if r.is_sample]
    assert len(samples) == sum("RAM " in line for line in lines)
    monos = [s.t_mono for s in samples]
    assert monos[0] == 0.0 and all(b >= a for a, b in itertools.pairwise(monos))
    # t_wall too (no log here has a clock step): the spread of a second's lines stays in it
    walls = [s.t_wall for s in samples if s.t_wall is not None]
    assert all(b >= a for a, b in itertools.pairwise(walls))

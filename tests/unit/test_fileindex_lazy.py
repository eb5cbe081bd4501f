"""The replay's index built in steps (a million lines play at once, seek anywhere).

``STEP_BYTES`` is made small here, so that files of a few thousand lines are indexed in many steps,
as a million-line log is with the real step: the replay starts after the first, the rest comes
from the background indexer, the worker (playing or seeking past the part indexed) and ``scan``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from factories import recording_header, synthetic_sample
from paths import REPO
from replay_support import FakeTime

from jtop_roof.formats.logfile import RecordingError, iter_records
from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.sources import fileindex
from jtop_roof.sources.replay import ReplaySource

DEMO_LOG = REPO / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"
# Real stamped JetPack 6 line bodies (Orin Nano), re-stamped below.
BODIES = [line[20:] for line in DEMO_LOG.read_text().splitlines()[:20]]
LINES = 3000
JUMP = 10 * 86400  # a clock being set half-way (longer than Timeline.MAX_GAP_S): a gap in the index


@pytest.fixture(autouse=True)
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileindex, "STEP_BYTES", 4096)


def stamped(seconds: list[int]) -> str:
    out = []
    for i, second in enumerate(seconds):
        stamp = datetime.fromtimestamp(1_700_000_000 + second, timezone.utc).strftime("%m-%d-%Y %H:%M:%S")
        out.append(f"{stamp} {BODIES[i % len(BODIES)]}\n")
    return "".join(out)


def day_log(path: Path, count: int = LINES) -> Path:
    """One line a second, the clock set ``JUMP`` on half-way."""
    path.write_text(stamped([s if s < count // 2 else s + JUMP for s in range(count)]), encoding="utf-8")
    return path


def recording(path: Path, count: int, *, foreign_header_at: int | None = None) -> Path:
    """A recording of ``count`` samples 0.5 s apart, a new session (a reboot) half-way, and a
    header of another program at ``foreign_header_at``."""
    base = synthetic_sample(0)
    lines = [json_line(recording_header(base.t_wall or 0.0, base.t_mono or 0.0))]
    for i in range(count):
        if i == count // 2:
            lines.append(json_line(recording_header(2_000_000.0, 7.0)))
        if i == foreign_header_at:
            lines.append(json_line({**recording_header(0.0, 0.0), "app": "another-program"}))
        sample = replace(synthetic_sample(i % 30), t_wall=1_000_000.0 + i * 0.5,
                         t_mono=100.0 + i * 0.5 if i < count // 2 else 7.0 + i * 0.5)
        lines.append(json_line(record_to_json(sample)))
    path.write_text("".join(lines), encoding="utf-8")
    return path


def as_json(records: list[Record | None]) -> list[object]:
    return [None if r is None else json.dumps(record_to_json(r), sort_keys=True) for r in records]


def whole_index(path: Path) -> fileindex.FileIndex:
    index = fileindex.FileIndex(str(path), tz=timezone.utc, interval_s=None)
    index.index_new_data(final=True)
    return index


def entries(index: fileindex.FileIndex) -> list[object]:
    """What the index holds: each entry's time, wall time and record (or its synthetic event)."""
    noted: set[str] = set()
    return [(index.mono(i), repr(index.wall_at(i, index.mono(i))), *as_json([index.read(i, noted)]))
            for i in range(len(index))]


#: Sleeps after which a replay idles on for what never comes (FakeTime fails the test).
IDLE_SLEEPS = 20_000


def replay(path: Path, clock: FakeTime, **kwargs: object) -> ReplaySource:
    return ReplaySource(path, tz="UTC", speed=64.0, clock=clock.clock, sleep=clock.sleep, **kwargs)  # type: ignore[arg-type]


# -- the index in steps is the index in one go -------------------------------------------------------


@pytest.mark.parametrize("kind", ["plain", "recording"])
def test_an_index_built_in_steps_holds_what_one_built_in_one_go_holds(tmp_path, kind):
    path = day_log(tmp_path / "day.log") if kind == "plain" else recording(tmp_path / "r.jsonl", 600)
    stepped = fileindex.FileIndex(str(path), tz=timezone.utc, interval_s=None)
    steps = 0
    while stepped.step():
        steps += 1
    assert steps > 20 and stepped.caught_up
    whole = whole_index(path)
    assert entries(stepped) == entries(whole)
    assert stepped.interval_s == whole.interval_s
    assert any(e.kind == "gap" for e in whole._synthetic.values())  # the jump / the session break


def test_opening_a_long_log_indexes_its_first_step_and_says_the_rest_is_being_indexed(tmp_path):
    path = day_log(tmp_path / "day.log")
    src = ReplaySource(path, tz="UTC")
    try:
        assert src.indexing and 0 < len(src.index) < LINES
        assert src.duration_s < LINES - 1  # the part indexed, not a wrong total said as the file's
        assert src.interval_s == 1.0
        assert src.index.last_times()[1] == whole_index(path).last_indexed_times()[1]  # the whole file's
        assert not src.indexing and len(src.index) == LINES + 1  # its lines and the jump's gap
        assert src.duration_s == pytest.approx(LINES - 1)  # the jump is a gap, not 10 days
    finally:
        src.stop()


def test_a_recordings_interval_is_settled_before_its_replay_starts(tmp_path):
    """The replay's history and ledger are sized by the interval ``describe`` gives at once: the
    first step goes on until the probe has its samples, so more indexing cannot change it."""
    path = recording(tmp_path / "r.jsonl", 600)
    src = ReplaySource(path, tz="UTC")
    try:
        assert src.indexing
        said = src.describe().header["interval_ms"]
        while src.index.step():
            pass
        assert said == src.describe().header["interval_ms"] == 500
    finally:
        src.stop()


# -- playing and seeking past the part indexed ---------------------------------------------------------


def test_playing_past_the_indexed_part_plays_every_line_once_in_order(tmp_path):
    """The worker, the background indexer and the ledger's scan all index: no line is lost or
    played twice, whoever indexed it."""
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock)
    scanned = src.index.scan()
    played = []
    for record in src.records():
        played.append(record)
        next(scanned, None)  # a scan driving the index too, between the records
    samples = [r for r in played if isinstance(r, Sample)]
    assert len(samples) == LINES
    monos = [r.t_mono for r in samples]
    assert monos == sorted(monos) and len(set(monos)) == LINES
    assert [r.kind for r in played if isinstance(r, Event)] == ["gap"]  # the jump, at its place
    assert as_json(samples) == as_json([r for r in whole_index(path).scan() if isinstance(r, Sample)])


def test_a_seek_past_the_indexed_part_waits_for_the_index_and_lands_where_it_asked(tmp_path):
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock, hold_at_end=True)
    assert src.indexing
    records = src.records()
    next(records)
    target = LINES - 100.0  # past the jump: far past the first step
    src.seek(target, relative=False)
    assert src.position_s <= src.duration_s  # said within what is indexed, never past it
    seek = next(records)
    assert isinstance(seek, Event) and seek.kind == "seek" and seek.detail == f"seek to {target:.1f} s"
    after = [r for r in itertools.islice(records, 150) if isinstance(r, Sample)]
    first = src.index.first_mono or 0.0
    backfill = [r for r in after if (r.t_mono or 0.0) < first + target]
    assert backfill and (backfill[0].t_mono or 0.0) >= first + target - 120.0  # the 120 s before
    assert any((r.t_mono or 0.0) >= first + target for r in after)
    records.close()


def test_a_seek_to_the_end_while_indexing_goes_to_the_files_end(tmp_path):
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock, hold_at_end=True)
    records = src.records()
    next(records)
    src.seek_to("end")
    seek = next(records)
    whole = whole_index(path)
    end = (whole.last_indexed_times()[1] or 0.0) - (whole.first_mono or 0.0)
    assert isinstance(seek, Event) and seek.kind == "seek" and seek.detail == f"seek to {end:.1f} s"
    rest = list(itertools.takewhile(lambda r: not (isinstance(r, Event) and r.detail == "end of replay"),
                                    records))
    assert rest and all(isinstance(r, Sample) for r in rest)  # the backfill and the last line
    assert not src.indexing and src.position_s == pytest.approx(end)
    records.close()


def test_stopped_while_indexing_its_ledger_still_reads_the_whole_file(tmp_path):
    """``scan`` (the whole file's ledger, read after a stop too) indexes the rest itself."""
    path = day_log(tmp_path / "day.log")
    src = ReplaySource(path, tz="UTC")
    records = src.records()
    next(records)
    src.stop()
    records.close()
    assert sum(isinstance(r, Sample) for r in src.index.scan()) == LINES


# -- files that grow, shrink, or hold little -------------------------------------------------------------


def test_a_followed_file_that_grows_while_it_is_indexed_plays_its_new_lines(tmp_path):
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock, follow=True)
    assert src.indexing
    records = src.records()
    first = next(records)  # like tail -f: the backfill before the end, once the index got there
    assert isinstance(first, Sample) and not src.indexing
    with path.open("a", encoding="utf-8") as out:
        out.write(stamped([LINES + JUMP + s for s in range(5)]))
    new = []
    for record in records:
        if isinstance(record, Sample) and (record.t_wall or 0.0) >= 1_700_000_000 + LINES + JUMP:
            new.append(record)
            if len(new) == 5:
                break
    assert [r.t_wall for r in new] == [1_700_000_000 + LINES + JUMP + s for s in range(5)]
    records.close()


def test_a_file_truncated_while_it_is_indexed_ends_where_it_was_cut(tmp_path):
    """A file cut short under a replay that is not following: what was indexed and is gone reads
    as no record; nothing raises, and the replay ends."""
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock)
    indexed = len(src.index)
    with path.open("r+b") as f:
        f.truncate(os.path.getsize(path) // 10)
    played = list(src.records())
    samples = [r for r in played if isinstance(r, Sample)]
    assert 0 < len(samples) <= max(indexed, LINES // 10)
    assert all(r.is_sample for r in samples)


def test_a_followed_file_truncated_says_so_and_plays_what_is_written_again(tmp_path):
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock, follow=True)
    records = src.records()
    next(records)
    path.write_text(stamped([LINES + JUMP + 9000 + s for s in range(3)]), encoding="utf-8")
    got = list(itertools.takewhile(lambda r: not (isinstance(r, Event) and r.detail == "file truncated"),
                                   records))
    assert all(isinstance(r, Sample) for r in got)  # what was left of the old file, no more
    gap, *after = itertools.islice(records, 4)  # 9,000 s on from the old file's last line
    assert isinstance(gap, Event) and gap.kind == "gap"
    assert [r.t_wall for r in after] == [1_700_000_000 + LINES + JUMP + 9000 + s for s in range(3)]
    records.close()


@pytest.mark.parametrize("content", [b"", b"\n\n", b"garbage \x00\xff no sample here\n" * 2000,
                                     b"x" * (3 << 19)])  # 1.5 MiB without a newline: a line too long
def test_a_file_without_records_opens_ends_and_seeks_without_indexing_forever(tmp_path, content):
    path = tmp_path / "empty.log"
    path.write_bytes(content)
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock)
    assert not src.indexing and src.duration_s == 0.0
    src.seek_to("end")
    src.seek(-5.0)
    played = list(itertools.islice(src.records(), 10))
    assert all(isinstance(r, Event) and r.kind in ("note", "seek") for r in played)


def test_a_one_line_file_plays_its_line(tmp_path):
    path = tmp_path / "one.log"
    path.write_text(stamped([0]).rstrip("\n"), encoding="utf-8")  # its newline not written either
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock)
    assert not src.indexing and src.duration_s == 0.0
    src.seek_to("end")
    played = list(src.records())
    assert [type(r).__name__ for r in played] == ["Event", "Sample"] and played[0].kind == "seek"
    assert played[1].ram is not None


def test_a_later_session_refused_ends_the_index_there_with_a_note(tmp_path):
    """A header of another program past the first step cannot refuse the file at open any more:
    the replay plays up to it and says why it stops; a short file is refused at open as before."""
    path = recording(tmp_path / "r.jsonl", 400, foreign_header_at=300)
    src = replay(path, FakeTime(limit=IDLE_SLEEPS))
    played = list(src.records())
    samples = [r for r in played if isinstance(r, Sample)]
    assert len(samples) == 300
    assert isinstance(played[-1], Event) and played[-1].kind == "note"
    assert "is not read" in played[-1].detail and "another-program" in played[-1].detail
    assert sum(isinstance(r, Sample) for r in src.index.scan()) == 300  # the ledger stops there too
    short = recording(tmp_path / "short.jsonl", 4, foreign_header_at=2)
    with pytest.raises(RecordingError, match="another-program"):
        ReplaySource(short, tz="UTC")


# -- wall times kept as runs ------------------------------------------------------------------------------


def test_wall_times_come_back_exactly_as_runs_or_one_each(tmp_path):
    """A plain log's walls are one offset from their t_mono between clock jumps (kept as a few
    runs); drifting clocks (a recording's) are kept one float each; either gives back each wall
    bit for bit, NaN (no wall) too."""
    from array import array

    monos = array("d")
    walls = fileindex.WallTimes(monos)
    wanted = []
    for i in range(400):  # a plain log: 1.7e9 on, a jump at 150, no stamps from 300
        mono = i * 0.1
        wall = math.nan if i >= 300 else 1.7e9 + mono + (86_400.0 * 8 if i >= 150 else 0.0)
        walls.append(mono, wall)
        monos.append(mono)
        wanted.append(wall)
    assert walls._dense is None and len(walls._starts) == 3
    assert [repr(w) for w in walls] == [repr(w) for w in wanted]
    for i in range(600):  # then drifting: one float each
        mono = 40.0 + i * 0.5
        wall = 1.7e9 + mono + i * 1e-6 + 0.1234567
        walls.append(mono, wall)
        monos.append(mono)
        wanted.append(wall)
    assert walls._dense is not None and len(walls) == 1000
    assert [repr(walls[i]) for i in range(1000)] == [repr(w) for w in wanted]


def test_a_plain_logs_walls_in_the_index_are_those_parse_gives(tmp_path):
    path = day_log(tmp_path / "day.log")
    index = whole_index(path)
    with open(path, encoding="utf-8") as lines:
        parsed = [r.t_wall for r in iter_records(lines, tz="UTC") if isinstance(r, Sample)]
    indexed = [index.wall_at(i, index.mono(i)) for i in range(len(index)) if index._offsets[i] >= 0]
    assert indexed == parsed and len(parsed) == LINES
    assert index._walls._dense is None  # a few runs, not a float per line


def test_a_nan_seek_is_ignored_and_an_infinite_one_goes_to_the_end(tmp_path):
    path = day_log(tmp_path / "day.log")
    clock = FakeTime(limit=IDLE_SLEEPS)
    src = replay(path, clock, hold_at_end=True)
    records = src.records()
    next(records)
    src.seek(math.nan)
    src.seek(math.nan, relative=False)
    assert src.position_s == 0.0 and src._pending_seek is None
    src.seek(math.inf, relative=False)
    seek = next(records)
    assert isinstance(seek, Event) and seek.detail == f"seek to {LINES - 1:.1f} s"
    records.close()


def test_the_header_says_the_length_is_at_least_while_the_file_is_indexed(tmp_path):
    """While the rest of the file is indexed, the length shown is the part known so far: a lower
    bound, said so (never a wrong total); once indexed, the file's length."""
    from jtop_roof.runtime.config import Config
    from jtop_roof.runtime.runtime import Runtime
    from jtop_roof.tui.header import elapsed
    from jtop_roof.tui.streams import Stream

    source = ReplaySource(day_log(tmp_path / "day.log", 600), tz="UTC")
    stream = Stream(Runtime(source, Config(tz="UTC")))
    assert source.indexing and "/≥" in elapsed(stream)
    while source.index.step():
        pass
    assert not source.indexing and "/≥" not in elapsed(stream)
    assert elapsed(stream).endswith("/00:09:59")

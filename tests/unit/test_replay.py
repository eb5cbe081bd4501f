"""Replay of logs and recordings (jtop_roof.sources.replay): pacing, controls, seek, follow.

Time is a fake clock whose sleep advances it, so nothing waits for real; the hook lets a test act
while the source sleeps (pause holds, follow polls) without threads.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from paths import OUTSIDE, REPO, TESTS
from replay_support import DEMO_LOG, FakeTime, source, stamped_lines

from jtop_roof.formats import logfile
from jtop_roof.formats.logfile import iter_records, open_text
from jtop_roof.formats.parser import parse_line
from jtop_roof.model.codec import record_to_json
from jtop_roof.model.records import Event, Marker, Sample
from jtop_roof.sources import fileindex
from jtop_roof.sources import replay as replay_module
from jtop_roof.sources.replay import ReplaySource

DATA = TESTS / "data" / "logfile"
SHARED_LOGS = OUTSIDE / "shared" / "tegrastats" / "logs"
# Real JetPack 4 lines without stamps (TX2); replay_support stamps the demo's Orin Nano line bodies.
UNSTAMPED = DATA.joinpath("tx2_jp4_date_header.log").read_text().splitlines()[1:]


def unstamped_log(path: Path, count: int, start: int = 0) -> Path:
    with open(path, "a", encoding="utf-8") as f:
        for i in range(start, start + count):
            f.write(UNSTAMPED[i % len(UNSTAMPED)] + "\n")
    return path


def play(src: ReplaySource, fake: FakeTime, limit: int | None = None) -> list[tuple[object, float]]:
    """(record, clock when it came) for each record."""
    return [(r, fake.now) for r in itertools.islice(src.records(), limit)]


def kinds(records) -> list[str]:
    return ["sample" if isinstance(r, Sample) else f"{type(r).__name__.lower()}:{r.kind}" for r in records]


# -- pacing -------------------------------------------------------------------------------------


def test_stamped_log_plays_at_its_recorded_pace(tmp_path):
    path = tmp_path / "demo40.log"
    path.write_bytes(b"".join(DEMO_LOG.read_bytes().splitlines(keepends=True)[:40]))
    fake = FakeTime()
    got = play(source(path, fake), fake)
    assert len(got) == 40
    for record, at in got:
        assert at == pytest.approx(record.t_mono)
    first = got[0][0]
    # The log starts with 3 lines of 01:31:10 at 0.111 s (9 a second): the last slots of that second.
    stamp = datetime(2026, 4, 19, 1, 31, 10, tzinfo=timezone.utc).timestamp()
    assert [r.t_wall for r, _ in got[:4]] == pytest.approx([stamp + 1 - 3 * 0.111, stamp + 1 - 2 * 0.111,
                                                            stamp + 1 - 0.111, stamp + 1])
    assert first.gpu.gpc_mhz == (1018,) and first.emc.mhz == 3199


def test_speed_divides_the_waits(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 6)
    fake = FakeTime()
    got = play(source(path, fake, speed=4, interval_ms=1000), fake)
    assert [at for _, at in got] == pytest.approx([0, 0.25, 0.5, 0.75, 1.0, 1.25])


def test_log_without_stamps_is_spaced_by_interval_ms_and_skips_the_date_line():
    fake = FakeTime()
    got = play(source(DATA / "tx2_jp4_date_header.log", fake, interval_ms=250), fake)
    records = [r for r, _ in got]
    assert all(isinstance(r, Sample) and r.is_sample for r in records)
    assert [r.t_mono for r in records] == [0.0, 0.25, 0.5, 0.75]
    assert all(r.t_wall is None for r in records)


def test_parsing_is_lazy(tmp_path, monkeypatch):
    calls = []  # the lines read, by the usual short way or else the parser
    usual, parse = fileindex.usual_sample, fileindex.parse_line
    monkeypatch.setattr(fileindex, "usual_sample", lambda line, at: calls.append(line) or usual(line, at))
    monkeypatch.setattr(fileindex, "parse_line", lambda line: calls.append(line) or parse(line))
    path = unstamped_log(tmp_path / "u.log", 500)
    src = source(path, FakeTime(), interval_ms=1000)
    assert calls == [] and src.duration_s == 499.0
    next(src.records())
    assert len(calls) == 1


def test_describe_plain_log():
    src = source(DATA / "agxorin_jp6_500ms.log", FakeTime())
    info = src.describe().header
    assert info["source"] == "replay" and info["file"].endswith("agxorin_jp6_500ms.log")
    assert info["interval_ms"] == 500 and info["tz"] == "UTC"


# -- controls -----------------------------------------------------------------------------------


def test_pause_holds_until_resume_and_the_pause_does_not_count(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 5)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000)
    records = src.records()
    assert next(records).t_mono == 0.0
    src.pause()
    assert src.paused

    def resume_after_five_sleeps():
        if fake.sleeps == 5:
            src.resume()

    fake.hook = resume_after_five_sleeps
    second = next(records)
    assert fake.sleeps >= 5 and not src.paused
    resumed_at = 5 * replay_module.POLL_S
    assert second.t_mono == 1.0 and fake.now == pytest.approx(resumed_at + 1.0)


def test_step_emits_exactly_one_sample_while_paused(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 5)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000)
    src.pause()
    records = src.records()
    src.step()
    assert next(records).t_mono == 0.0
    src.step()
    assert next(records).t_mono == 1.0
    assert fake.now == 0.0 and src.paused and src.position_s == 1.0

    def step_after_three_sleeps():
        if fake.sleeps == 3:
            src.step()

    fake.hook = step_after_three_sleeps
    assert next(records).t_mono == 2.0
    assert fake.sleeps == 3  # nothing came until the step


def test_step_while_playing_pauses(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 5)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000)
    records = src.records()
    next(records)
    src.step()
    assert src.paused
    assert next(records).t_mono == 1.0 and fake.now == 0.0


def test_toggle_pause(tmp_path):
    src = source(unstamped_log(tmp_path / "u.log", 3), FakeTime())
    src.toggle_pause()
    assert src.paused
    src.toggle_pause()
    assert not src.paused


def test_speed_is_clamped_and_a_change_keeps_the_playhead(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 5)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000)
    src.set_speed(1000)
    assert src.speed == 64
    src.set_speed(0.01)
    assert src.speed == 0.25
    src.set_speed(math.nan)
    assert src.speed == 0.25
    src.set_speed(1)
    records = src.records()
    next(records)  # mono 0 at clock 0
    fake.now = 0.5  # half way to the next record, then twice as fast
    src.set_speed(2)
    assert next(records).t_mono == 1.0
    assert fake.now == pytest.approx(0.75)


def test_seek_back_emits_seek_then_backfill_then_plays_on(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 100)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, backfill_s=5)
    records = src.records()
    for _ in range(50):
        next(records)
    assert src.position_s == 49.0
    src.seek(-20)
    assert src.position_s == 29.0
    at_seek = fake.now
    got = list(itertools.islice(records, 8))
    assert kinds(got) == ["event:seek"] + ["sample"] * 7
    assert got[0].t_mono == 29.0 and "29.0" in got[0].detail
    assert [r.t_mono for r in got[1:]] == [24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0]
    assert fake.now == pytest.approx(at_seek + 1.0)  # only the step from 29 to 30 waited
    assert src.position_s == 30.0


def test_seek_forward_absolute_and_clamped(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 100)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, backfill_s=0)
    records = src.records()
    next(records)
    src.seek(10)
    assert [r.t_mono for r in itertools.islice(records, 2)] == [10.0, 10.0]  # event, sample
    src.seek(42, relative=False)
    event = next(records)
    assert isinstance(event, Event) and event.kind == "seek" and event.t_mono == 42.0
    src.seek(1e9)
    assert src.position_s == src.duration_s == 99.0
    src.seek(-1e9)
    assert src.position_s == 0.0


def test_seek_to_start_and_end(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 30)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, backfill_s=2)
    records = src.records()
    next(records)
    src.seek_to("end")
    got = list(records)  # plays the end and stops: no follow, loop or hold
    assert kinds(got) == ["event:seek", "sample", "sample", "sample"]
    assert [r.t_mono for r in got] == [29.0, 27.0, 28.0, 29.0]
    with pytest.raises(ValueError):
        src.seek_to("middle")


def test_seek_to_start_replays_from_the_first_record(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 30)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000)
    records = src.records()
    for _ in range(10):
        next(records)
    src.seek_to("start")
    got = list(itertools.islice(records, 3))
    assert kinds(got) == ["event:seek", "sample", "sample"]
    assert [r.t_mono for r in got] == [0.0, 0.0, 1.0]
    assert got[1].raw == UNSTAMPED[0]


def test_hold_at_end_waits_for_a_seek(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 3)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, hold_at_end=True)
    records = src.records()
    got = list(itertools.islice(records, 4))
    assert kinds(got) == ["sample"] * 3 + ["event:note"]
    assert got[3].detail == "end of replay"
    held_from = fake.sleeps

    def seek_back_after_three_waits():
        if fake.sleeps == held_from + 3:
            src.seek_to("start")

    fake.hook = seek_back_after_three_waits
    got = list(itertools.islice(records, 3))
    assert kinds(got) == ["event:seek", "sample", "sample"]
    assert fake.sleeps >= held_from + 3


def test_loop_restarts_one_interval_after_the_last_with_continuous_times(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 3)
    fake = FakeTime()
    got = play(source(path, fake, interval_ms=500, loop=True), fake, limit=8)
    assert kinds([r for r, _ in got]) == ["sample"] * 3 + ["event:note"] + ["sample"] * 3 + ["event:note"]
    assert got[3][0].detail.startswith("loop")
    assert [at for _, at in got[:5]] == pytest.approx([0.0, 0.5, 1.0, 1.0, 1.5])
    # the second pass plays the same lines with times that go on rising, one interval apart
    monos = [r.t_mono for r, _ in got if isinstance(r, Sample)]
    assert monos == pytest.approx([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    assert got[4][0].raw == got[0][0].raw


def test_controls_from_another_thread_and_stop(tmp_path):
    """The UI calls controls while records() runs in a worker; stop() ends it (real clock)."""
    path = unstamped_log(tmp_path / "u.log", 30)
    src = ReplaySource(path, interval_ms=100, loop=True, speed=64)
    got: list = []
    worker = threading.Thread(target=lambda: got.extend(src.records()))
    worker.start()
    time.sleep(0.05)
    src.pause()
    src.step()
    src.set_speed(8)
    src.resume()
    src.seek(-1)
    src.seek_to("end")
    src.stop()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert any(isinstance(r, Sample) for r in got)


# -- our recordings -----------------------------------------------------------------------------


def test_recording_replays_markers_and_events_at_their_times(tmp_path):
    line = (DATA / "agxorin_jp6_500ms.log").read_text().splitlines()[0]

    def sample(t, mono):
        s = parse_line(line)
        s.t_wall, s.t_mono = t, mono
        return s

    records = [
        sample(5000.0, 100.0),
        Marker("phase_start", "decode", 5000.25, 100.25, origin="script"),
        sample(5000.5, 100.5),
        Event("gap", "no data", 5000.5, 100.5, gap_s=2.0),
        sample(5003.0, 103.0),
        Marker("phase_end", None, 5003.0, 103.0),
    ]
    header = {"type": "header", "schema": 1, "app": "jroof-tui", "version": "0.1.0",
              "source": "tegrastats", "start_wall": 5000.0, "start_mono": 100.0, "tz": "Europe/Warsaw",
              "interval_ms": 500, "command": ["jroof-tui"], "model": "NVIDIA Jetson AGX Orin",
              "power_mode": "MAXN", "max_clocks": {"gpu_mhz": 1300, "emc_mhz": 3199}}
    path = tmp_path / "rec.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(header) + "\n")
        for record in records:
            f.write(json.dumps(record_to_json(record)) + "\n")
        f.write(json.dumps(record_to_json(sample(5003.5, 103.5)))[:80])  # cut by kill -9
    fake = FakeTime()
    src = source(path, fake)
    got = play(src, fake)
    assert kinds([r for r, _ in got]) == ["sample", "marker:phase_start", "sample", "event:gap", "sample",
                                          "marker:phase_end"]
    assert [(r.t_wall, r.t_mono) for r, _ in got] == [(r.t_wall, r.t_mono) for r in records]
    assert [at for _, at in got] == pytest.approx([0, 0.25, 0.5, 0.5, 3.0, 3.0])
    info = src.describe().header
    assert info["source"] == "replay" and info["recorded_source"] == "tegrastats"
    assert info["model"] == "NVIDIA Jetson AGX Orin" and info["power_mode"] == "MAXN"
    assert info["max_clocks"] == {"gpu_mhz": 1300, "emc_mhz": 3199}
    assert info["tz"] == "Europe/Warsaw" and info["interval_ms"] == 500
    assert "start_wall" not in info and "command" not in info


def test_recording_step_passes_markers_up_to_the_next_sample(tmp_path):
    line = (DATA / "agxorin_jp6_500ms.log").read_text().splitlines()[0]
    s = parse_line(line)
    s.t_wall, s.t_mono = 1.0, 1.0
    later = parse_line(line)
    later.t_wall, later.t_mono = 2.0, 2.0
    path = tmp_path / "rec.jsonl"
    lines = [{"type": "header", "app": "jroof-tui", "schema": 1, "interval_ms": 1000}, record_to_json(s),
             record_to_json(Marker("phase_start", "x", 1.5, 1.5)), record_to_json(later)]
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    fake = FakeTime()
    src = source(path, fake)
    src.pause()
    records = src.records()
    src.step()
    next(records)
    src.step()
    assert kinds([next(records), next(records)]) == ["marker:phase_start", "sample"]
    assert fake.now == 0.0


def test_a_seek_held_in_a_recording_plays_as_a_note(tmp_path):
    """Only this replay's own seeks are seek events: one written by the viewer that made an older
    recording is a note now, so the UI does not clear its history on it."""
    line = (DATA / "agxorin_jp6_500ms.log").read_text().splitlines()[0]
    first, second = parse_line(line), parse_line(line)
    first.t_wall, first.t_mono, second.t_wall, second.t_mono = 1.0, 1.0, 2.0, 2.0
    seek = Event("seek", "seek to 10.0 s", 1.5, 1.5)
    path = tmp_path / "rec.jsonl"
    header = {"type": "header", "app": "jroof-tui", "schema": 1, "interval_ms": 1000}
    lines = [header, record_to_json(first), record_to_json(seek), record_to_json(second)]
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    fake = FakeTime()
    got = [record for record, _ in play(source(path, fake, speed=64), fake)]
    assert kinds(got) == ["sample", "event:note", "sample"]
    assert got[1].detail == "recorded: seek to 10.0 s" and got[1].t_mono == 1.5


# -- follow -------------------------------------------------------------------------------------


def while_following(src: ReplaySource, fake: FakeTime, actions: list) -> None:
    """Run the next action each time the source waits at the end of the file."""

    def hook():
        if src.following and actions:
            actions.pop(0)()

    fake.hook = hook


def test_follow_starts_at_the_end_and_plays_appended_lines(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 10)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, follow=True, backfill_s=3)

    def append_partial():
        with open(path, "a") as f:
            f.write(UNSTAMPED[0] + "\n" + UNSTAMPED[1][:30])  # the second line still being written

    def finish_line():
        with open(path, "a") as f:
            f.write(UNSTAMPED[1][30:] + "\n")

    while_following(src, fake, [append_partial, finish_line, src.stop])
    got = [r for r, _ in play(src, fake)]
    assert [r.t_mono for r in got] == [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
    assert got[-1].raw == UNSTAMPED[1]
    assert src.duration_s == 11.0


def test_follow_truncation_restarts_from_the_top(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 5)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, follow=True, backfill_s=100)

    def truncate_and_write_two():
        path.write_text(UNSTAMPED[2] + "\n" + UNSTAMPED[3] + "\n")

    while_following(src, fake, [truncate_and_write_two, src.stop])
    got = [r for r, _ in play(src, fake)]
    assert kinds(got) == ["sample"] * 5 + ["event:note"] + ["sample"] * 2
    assert got[5].detail == "file truncated"
    assert [r.raw for r in got[6:]] == [UNSTAMPED[2], UNSTAMPED[3]]
    assert got[6].t_mono > got[4].t_mono  # the stream's timeline keeps going


def test_follow_rotation_reopens_and_old_data_stays_seekable(tmp_path):
    path = unstamped_log(tmp_path / "u.log", 3)
    fake = FakeTime()
    src = source(path, fake, interval_ms=1000, follow=True, backfill_s=100)

    def rotate():
        unstamped_log(path, 1, start=3)  # written just before the rotation
        os.rename(path, tmp_path / "u.log.1")
        unstamped_log(path, 2, start=1)

    while_following(src, fake, [rotate, lambda: src.seek_to("start"), src.stop])
    got = [r for r, _ in play(src, fake)]
    assert kinds(got) == ["sample"] * 4 + ["event:note"] + ["sample"] * 2 + ["event:seek"] + ["sample"] * 6
    assert got[3].raw == UNSTAMPED[3] and "rotated" in got[4].detail
    assert [r.raw for r in got[5:7]] == [UNSTAMPED[1], UNSTAMPED[2]]
    # from the start again: the renamed old file, then the new one
    replayed = [UNSTAMPED[0], UNSTAMPED[1], UNSTAMPED[2], UNSTAMPED[3], UNSTAMPED[1], UNSTAMPED[2]]
    assert [r.raw for r in got[8:]] == replayed
    assert [r.t_mono for r in got[8:]] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_follow_infers_the_interval_once_enough_stamps_came(tmp_path):
    path = tmp_path / "s.log"
    lines = stamped_lines([s for s in range(10) for _ in range(4)])  # 4 lines a second
    path.write_text("".join(lines[:3]))
    fake = FakeTime()
    src = source(path, fake, follow=True, backfill_s=100)
    assert src.duration_s == 0.0  # waiting for stamps to tell the interval

    def append_rest():
        with open(path, "a") as f:
            f.write("".join(lines[3:]))

    while_following(src, fake, [append_rest, src.stop])
    got = [r for r, _ in play(src, fake)]
    assert len(got) == 40
    assert [r.t_mono for r in got[:6]] == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]
    assert src.describe().interval_ms == 250


def test_follow_a_short_log_that_stops_growing_uses_what_it_has(tmp_path):
    path = tmp_path / "s.log"
    path.write_text("".join(stamped_lines([0, 0, 1, 1, 2])))
    fake = FakeTime()
    src = source(path, fake, follow=True, backfill_s=100)

    def stop_when_played():
        if src.following and src.duration_s > 0:
            src.stop()

    fake.hook = stop_when_played
    got = [r for r, _ in play(src, fake)]
    assert [r.t_mono for r in got] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert fake.now >= logfile.INFER_WAIT_S


# -- every real log in shared/ ------------------------------------------------------------------


@pytest.mark.skipif(not SHARED_LOGS.is_dir(), reason="shared/ reference folder not beside the repo")
@pytest.mark.parametrize("name", sorted(p.name for p in SHARED_LOGS.glob("*.log")) if SHARED_LOGS.is_dir()
                         else [])
def test_replay_index_agrees_with_streaming_parse(name):
    path = SHARED_LOGS / name
    with open_text(path) as f:
        expected = [r for r in iter_records(f, tz="UTC") if r.is_sample]
    fake = FakeTime()
    got = [r for r, _ in play(source(path, fake, speed=64), fake)]
    assert [(r.t_wall, r.t_mono) for r in got] == [(r.t_wall, r.t_mono) for r in expected]
    assert [r.raw for r in got] == [r.raw for r in expected]


def test_stamps_decide_the_interval_unless_one_is_given():
    """Without --interval the stamps give it (measured); a given one wins over them, and the
    stamps still place the lines in time."""
    fake = FakeTime()
    src = source(DATA / "agxorin_jp6_500ms.log", fake)
    assert src.duration_s == 6.0 and src.describe().interval_ms == 500
    assert src.index.basis.interval_source == "measured"
    given = source(DATA / "agxorin_jp6_500ms.log", FakeTime(), interval_ms=1000)
    assert given.duration_s == 6.0 and given.describe().interval_ms == 1000
    assert given.index.basis.interval_source == "given"


def test_a_step_longer_than_replay_waits_is_a_gap_played_at_once(tmp_path):
    """A board without RTC logs 1970 until NTP sets the clock: the jump is not waited for."""
    path = tmp_path / "ntp.log"
    path.write_text("".join(stamped_lines([0, 1, 2, 3, 100_000, 100_001])))
    fake = FakeTime()
    got = play(source(path, fake), fake)
    assert kinds([r for r, _ in got]) == ["sample"] * 4 + ["event:gap", "sample", "sample"]
    gap = got[4][0]
    assert gap.gap_s == pytest.approx(100_000 - 3) and gap.t_mono == got[5][0].t_mono
    assert fake.now < 10  # played at once, not after 27 hours


def test_index_times_lines_as_it_reads_and_places_them_as_one_release_would(tmp_path, monkeypatch):
    """The index releases timed lines per chunk (a million lines held ~350 MB of
    pending stamps before); the offsets and times are those of one release at the end."""
    path = tmp_path / "day.log"
    lines = stamped_lines([s // 3 for s in range(900)])  # three lines a second, then a long break
    lines += stamped_lines([5000 + s for s in range(300)])
    path.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(fileindex, "READ_CHUNK", 4096)

    def snapshot() -> tuple[object, ...]:
        index = fileindex.FileIndex(str(path), tz=timezone.utc, interval_s=None)
        index.index_new_data(final=True)
        events = sorted((i, e.kind, e.detail, e.t_mono) for i, e in index._synthetic.items())
        return (list(index._offsets), list(index._monos), [repr(w) for w in index._walls], events,
                index.interval_s)

    chunked = snapshot()
    monkeypatch.setattr(logfile.PlainTimer, "settled", lambda self: False)
    assert chunked == snapshot()
    assert len(chunked[0]) == 1200


def test_a_long_files_ledger_is_read_while_it_plays_and_taken_when_there(tmp_path):
    """``describe`` does not make the first record wait for a day-long file's ledger;
    the pipeline takes it when it is read (and ``finish`` waits for it)."""
    from concurrent.futures import Future

    from jtop_roof.runtime.config import Config
    from jtop_roof.runtime.runtime import Runtime, read_ahead

    path = tmp_path / "run.log"
    path.write_text("".join(stamped_lines(list(range(40)))), encoding="utf-8")
    runtime = Runtime(ReplaySource(path, tz="UTC"), Config())
    build = runtime._ledger_builder()
    assert build is not None
    whole = build(()).whole
    gate = threading.Event()

    def slow(markers):
        gate.wait(10)
        return build(markers)

    pending = read_ahead(lambda: slow(()), wait_s=0.0)
    assert isinstance(pending, Future)
    pipeline = runtime.pipeline
    pipeline.load_ledger(build, pending)
    version = pipeline.ledger_version
    assert pipeline.ledger.whole.samples == 0  # not there yet: empty, never half a file
    gate.set()
    pending.result(10)
    assert pipeline.ledger_version > version
    assert pipeline.ledger.whole == whole
    assert read_ahead(lambda: build(())).whole == whole  # type: ignore[union-attr]  # short: at once

    pending = read_ahead(lambda: slow(()), wait_s=0.0)  # the gate is open: done soon; finish waits for it
    pipeline.load_ledger(build, pending)
    pipeline.finish()
    assert not pipeline.still_reading and pipeline.ledger.whole == whole


@pytest.mark.parametrize("name", ["tests/data/h200_phases.jsonl", "tests/data/tegrastats_lines.txt",
                                  "tests/data/logfile/agxxavier_jp5_date_header.log"])
def test_a_span_read_in_one_go_is_what_reading_each_record_gives(name):
    """A seek's backfill reads its lines in one go (``read_span``), as ``read`` would."""
    path = REPO / name
    index = fileindex.FileIndex(str(path), tz=timezone.utc, interval_s=None)
    index.index_new_data(final=True)
    size = len(index)
    one = [record_to_json(r) if r is not None else None for r in (index.read(i, set()) for i in range(size))]
    for start, stop in [(0, size), (1, size - 1), (size // 2, size), (size - 2, size - 1), (2, 2)]:
        span = [record_to_json(r) if r is not None else None for r in index.read_span(start, stop, set())]
        assert span == one[start:stop]


def test_offsets_past_2_gib_are_kept_whole():
    """The index holds offsets in 32 bits while they fit, in 64 from the first that does not."""
    path = TESTS / "data" / "tegrastats_lines.txt"
    index = fileindex.FileIndex(str(path), tz=timezone.utc, interval_s=None)
    assert index._offsets.typecode == "i"
    index._append(2**31 + 5, 1e9, None)
    assert index._offsets.typecode == "q" and index._offsets[-1] == 2**31 + 5

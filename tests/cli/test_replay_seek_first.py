"""A replay's seek has the interpreter to itself. While a seek's backfill is read, and a
moment after while it is taken in, the ledger's read of the whole file (``FileIndex.scan``, in a
thread of its own) waits; the seek's records say that more follow at once (``backfilling``), so a
consumer can take them in as one batch; the objects of start-up are out of the collector's sight
(``gc.freeze`` at the first ``apply``)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import FakeTime, source, stamped_lines

from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.sources import fileindex
from jtop_roof.sources.replay import ReplaySource

LINES = 300


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "run.log"
    path.write_text("".join(stamped_lines(list(range(LINES)))), encoding="utf-8")
    return path


def scan_in_a_thread(index: fileindex.FileIndex) -> tuple[threading.Thread, list[Record]]:
    read: list[Record] = []
    thread = threading.Thread(target=lambda: read.extend(index.scan()), daemon=True)
    thread.start()
    return thread, read


def seeked(log: Path) -> tuple[ReplaySource, Iterator[Record]]:
    """A replay of ``log`` (20 s of backfill) asked to seek 200 s in, after its first record."""
    src = source(log, FakeTime(), backfill_s=20, hold_at_end=True)
    records = src.records()
    next(records)
    src.seek(200, relative=False)
    return src, records


def test_the_ledgers_read_waits_while_a_seek_backfills_then_reads_the_whole_file(log, monkeypatch):
    monkeypatch.setattr(fileindex, "PLAYER_FIRST_S", 60.0)
    src, records = seeked(log)
    seek = next(records)
    assert isinstance(seek, Event) and seek.kind == "seek"
    first = next(records)  # the backfill's first: the player is inside it
    assert isinstance(first, Sample) and first.t_mono is not None
    thread, read = scan_in_a_thread(src.index)
    time.sleep(0.2)  # room for the scan to read, were it not waiting
    assert read == []
    backfill = [first, *itertools.islice(records, 20)]  # up to the target, played after the backfill
    assert [r.t_mono for r in backfill] == [first.t_mono + i for i in range(21)]
    thread.join(10)
    assert not thread.is_alive()
    assert len(read) == LINES and [r.t_mono for r in read] == sorted(r.t_mono for r in read)
    records.close()


def test_the_ledgers_read_waits_a_while_after_the_backfill_while_it_is_taken_in(log, monkeypatch):
    monkeypatch.setattr(fileindex, "TAKE_IN_S", 2.0)
    src, records = seeked(log)
    assert [r.t_mono for r in itertools.islice(records, 22)][-1] == src.index.first_mono + 200  # the target
    thread, read = scan_in_a_thread(src.index)
    time.sleep(0.2)  # well inside TAKE_IN_S
    assert read == []
    thread.join(10)
    assert not thread.is_alive() and len(read) == LINES
    records.close()


def test_a_player_stopped_inside_a_backfill_lets_the_ledgers_read_go_on(log, monkeypatch):
    monkeypatch.setattr(fileindex, "PLAYER_FIRST_S", 60.0)
    src, records = seeked(log)
    list(itertools.islice(records, 3))  # the seek event and two records of the backfill
    records.close()  # the player goes away in the middle of it
    thread, read = scan_in_a_thread(src.index)
    thread.join(10)
    assert not thread.is_alive() and len(read) == LINES


def test_a_seek_and_its_backfill_say_that_more_follow_at_once_until_their_last(log):
    """``backfilling``: a consumer gathers the seek's records and takes them in as one batch."""
    src = source(log, FakeTime(), backfill_s=20, hold_at_end=True)
    records = src.records()
    next(records)
    assert not src.backfilling
    src.seek(200, relative=False)
    seen = [(record.t_mono, isinstance(record, Event), src.backfilling)
            for record in itertools.islice(records, 23)]
    assert seen[0][1:] == (True, True)  # the seek event
    assert [t for t, _, _ in seen[1:]] == [seen[1][0] + i for i in range(22)]  # 180 ... 201
    assert [more for _, _, more in seen] == [True] * 20 + [False] * 3  # the backfill's last, then play
    src.seek(100, relative=False)
    src.seek(50, relative=False)  # the newer seek is the one played
    again = [(record, src.backfilling) for record in itertools.islice(records, 21)]
    assert isinstance(again[0][0], Event) and "50.0" in again[0][0].detail
    assert [more for _, more in again] == [True] * 20 + [False]  # the event, then 20 records
    records.close()


def test_a_seek_without_a_backfill_says_nothing_follows(log):
    src = source(log, FakeTime(), backfill_s=0, hold_at_end=True)
    records = src.records()
    next(records)
    src.seek(200, relative=False)
    seek = next(records)
    assert isinstance(seek, Event) and seek.kind == "seek" and not src.backfilling
    assert next(records).t_mono == seek.t_mono and not src.backfilling
    records.close()


def test_a_backfill_that_never_ends_holds_the_ledgers_read_only_a_while(log, monkeypatch):
    """The wait is ``PLAYER_FIRST_S`` once for the backfill, not once a record: the whole file is
    read soon after (a wait a record would take LINES times as long)."""
    monkeypatch.setattr(fileindex, "PLAYER_FIRST_S", 0.2)
    src = source(log, FakeTime())
    with src.index.player_first():
        thread, read = scan_in_a_thread(src.index)
        thread.join(10)
        assert not thread.is_alive()
    assert len(read) == LINES


_FREEZE = r"""
import gc, json, sys
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.runtime import Runtime
from jtop_roof.sources.replay import ReplaySource
out = {"before": gc.get_freeze_count()}
runtime = Runtime(ReplaySource(sys.argv[1], tz="UTC"), Config(), history_s=60.0)
runtime.apply(runtime.describe())
out["first"] = gc.get_freeze_count()
made_after = [[index] for index in range(5000)]
again = Runtime(ReplaySource(sys.argv[1], tz="UTC"), Config(), history_s=60.0)
again.apply(again.describe())
out["second"] = gc.get_freeze_count()
print(json.dumps(out))
"""


def test_the_first_apply_of_a_process_puts_start_up_out_of_the_collectors_sight(log):
    """Once: the objects made after it (a second board's, the stream's) stay collectable."""
    done = subprocess.run([sys.executable, "-c", _FREEZE, str(log)], capture_output=True, text=True,
                          check=True, timeout=120)
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["before"] == 0
    assert counts["first"] > 5000  # the modules' objects and more
    assert counts["second"] <= counts["first"]  # the 5,000 lists made since were not frozen


def test_a_seek_after_a_loop_is_stamped_on_the_looped_stream_once():
    """The demo loops on with times moved on by the file's length: a seek's event is moved once,
    as the records played after it are."""
    from replay_support import DEMO_LOG

    fake = FakeTime()
    src = ReplaySource(DEMO_LOG, tz="UTC", loop=True, clock=fake.clock, sleep=fake.sleep, speed=64)
    records = src.records()
    looped = next(r for r in records if isinstance(r, Event) and r.kind == "note" and "loop" in r.detail)
    assert looped is not None
    first, length = src.index.first_mono, src.duration_s
    assert first is not None
    src.seek(10, relative=False)
    seek = next(r for r in records if isinstance(r, Event) and r.kind == "seek")
    assert seek.t_mono is not None and seek.t_mono - first == pytest.approx(10 + length, abs=1.5)
    backfill = next(records)  # the backfill's first: the looped stream's, before the target
    assert backfill.t_mono is not None and first + length - 1.5 <= backfill.t_mono <= seek.t_mono
    records.close()

"""The recorder in-process: file format, append rules, durability hooks, thread safety, and the
headless loop's stop paths (signals are also tested against a real child in test_recorder_signals)."""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import jtop_roof
from jtop_roof.formats import recorder as recorder_module
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.codec import record_from_json
from jtop_roof.model.records import SCHEMA_VERSION, CpuCore, Event, Marker, Memory, Rail, Sample
from jtop_roof.runtime import headless
from jtop_roof.runtime.headless import run_headless
from jtop_roof.sources.base import Source

HEADER = {"source": "test", "tz": "UTC", "interval_ms": 20, "command": ["test"], "host": "bench"}


def lines_of(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text.splitlines()


def objects_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in lines_of(path)]


def sample(n: int) -> Sample:
    return Sample(t_wall=1000.0 + n, t_mono=float(n), raw=str(n),
                  ram=Memory(100.0 + n, 8000.0), cpus=[CpuCore(10.0, 1500), None])


class FakeClock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class CountingFsync:
    """Stands in for os.fsync and remembers which descriptors were synced."""

    def __init__(self) -> None:
        self.fds: list[int] = []
        self.called = threading.Event()

    def __call__(self, fd: int) -> None:
        self.fds.append(fd)
        self.called.set()


# ---------------------------------------------------------------------------------------------
# File format


def test_new_file_has_mode_0600_and_header_first(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    old_umask = os.umask(0o022)
    try:
        with Recorder(path, HEADER, wall=FakeClock(1234.5), mono=FakeClock(77.0)) as rec:
            rec.write(sample(0))
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    header, first = objects_of(path)
    assert list(header)[:6] == ["type", "schema", "app", "version", "start_wall", "start_mono"]
    assert header == {"type": "header", "schema": SCHEMA_VERSION, "app": "jroof-tui",
                      "version": jtop_roof.__version__, "start_wall": 1234.5, "start_mono": 77.0, **HEADER}
    assert first["type"] == "sample" and first["raw"] == "0"
    assert rec.appended is False


def test_caller_header_values_win_but_type_stays_header(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    with Recorder(path, {"type": "sample", "start_wall": 5.0, "source": "demo"}):
        pass
    (header,) = objects_of(path)
    assert header["type"] == "header"
    assert header["start_wall"] == 5.0
    assert header["source"] == "demo"


def test_lines_are_compact_utf8_and_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    records = [
        sample(1),
        Marker("phase_start", "décodage", 1001.5, 1.5, "script"),
        Event("gap", "no data", 1002.0, 2.0, gap_s=3.0),
    ]
    with Recorder(path, HEADER) as rec:
        for record in records:
            assert rec.write(record) is True
    lines = lines_of(path)
    assert "décodage" in lines[2]  # ensure_ascii=False: readable names
    assert ": " not in lines[1] and ", " not in lines[1]  # compact separators
    back = [record_from_json(json.loads(line)) for line in lines[1:]]
    assert back[1:] == records[1:]
    assert back[0].raw == "1" and back[0].ram.used_mb == 101 and back[0].cpus[1] is None


def test_nan_and_infinity_become_null(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    bad = Sample(t_wall=1.0, t_mono=math.nan, temps_c={"cpu": math.nan, "gpu": 41.5},
                 rails={"VDD_IN": Rail(math.inf, 5000.0)})
    with Recorder(path, {"interval_ms": math.nan}) as rec:
        rec.write(bad)
    header, line = objects_of(path)  # json.loads accepts NaN, so also check the text itself
    assert "NaN" not in path.read_text() and "Infinity" not in path.read_text()
    assert header["interval_ms"] is None
    assert line["mono"] is None
    assert line["temps_c"] == {"cpu": None, "gpu": 41.5}
    assert line["rails_mw"]["VDD_IN"] == {"now": None, "avg": 5000}


def test_undecodable_characters_still_give_valid_utf8_json(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    raw = b"RAM 1/2MB \xff junk".decode("utf-8", "surrogateescape")
    with Recorder(path, HEADER) as rec:
        rec.write(Sample(raw=raw, is_sample=False))
    line = objects_of(path)[1]  # read_text is strict UTF-8: it would raise on a bad byte
    assert line["raw"] == raw


# ---------------------------------------------------------------------------------------------
# Existing files


def test_existing_recording_is_appended_with_a_new_header(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    with Recorder(path, {**HEADER, "host": "first"}) as rec:
        rec.write(sample(0))
    before = path.read_bytes()
    os.chmod(path, 0o640)
    with Recorder(path, {**HEADER, "host": "second"}) as rec:
        assert rec.appended is True
        rec.write(sample(1))
    assert path.read_bytes().startswith(before)
    assert [(o["type"], o.get("host"), o.get("raw")) for o in objects_of(path)] == [
        ("header", "first", None), ("sample", None, "0"), ("header", "second", None), ("sample", None, "1")]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # an existing file keeps its mode


def test_appending_after_a_torn_last_line_keeps_the_tear_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    with Recorder(path, HEADER) as rec:
        rec.write(sample(0))
    with open(path, "ab") as f:  # what kill -9 in the middle of a write leaves
        f.write(b'{"type":"sample","t":10')
    with Recorder(path, HEADER) as rec:
        rec.write(sample(1))
    lines = lines_of(path)
    assert lines[2] == '{"type":"sample","t":10'
    assert [json.loads(line)["type"] for i, line in enumerate(lines) if i != 2] == [
        "header", "sample", "header", "sample"]


def test_existing_file_that_is_not_a_recording_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "tegrastats.log"
    original = b"RAM 2000/7620MB (lfb 3x4MB) CPU [1%@729,2%@729] EMC_FREQ 0% GR3D_FREQ 0%\n"
    path.write_bytes(original)
    with pytest.raises(FileExistsError, match="not a jroof recording"):
        Recorder(path, HEADER)
    assert path.read_bytes() == original


def test_existing_empty_file_is_refused(tmp_path: Path) -> None:
    """An empty file may be someone else's placeholder (or a planted one keeping its own mode)."""
    path = tmp_path / "rec.jsonl"
    path.touch()
    with pytest.raises(FileExistsError, match="not a jroof recording"):
        Recorder(path, HEADER)
    assert path.read_bytes() == b""


def test_new_file_is_created_exclusively_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    old = os.umask(0)
    try:
        Recorder(path, HEADER).close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "target.jsonl"
    Recorder(target, HEADER).close()
    before = target.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symbolic link"):
        Recorder(link, HEADER)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(OSError, match="symbolic link"):
        Recorder(dangling, HEADER)
    assert target.read_bytes() == before and not (tmp_path / "elsewhere.jsonl").exists()


def test_fifo_and_devices_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/null")):
        with pytest.raises(OSError, match="not a regular file"):
            Recorder(path, HEADER)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a file to another user")
def test_a_recording_of_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    Recorder(path, HEADER).close()
    os.chown(path, 12345, -1)
    with pytest.raises(PermissionError, match="another user"):
        Recorder(path, HEADER)


def test_recording_into_the_replayed_file_is_refused(tmp_path: Path) -> None:
    """Through the same path, a symlink to it (the replay's side) or a hard link."""
    replayed = tmp_path / "replayed.jsonl"
    Recorder(replayed, HEADER).close()
    before = replayed.read_bytes()
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(replayed)
    hard = tmp_path / "hard.jsonl"
    os.link(replayed, hard)
    for record_to, file in ((replayed, replayed), (replayed, alias), (hard, replayed)):
        with pytest.raises(OSError, match="being replayed"):
            Recorder(record_to, {**HEADER, "file": str(file)})
    assert replayed.read_bytes() == before
    assert recorder_module.same_file(alias, hard) and not recorder_module.same_file(alias, tmp_path / "x")


def test_unwritable_path_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        Recorder(tmp_path, HEADER)  # a directory
    with pytest.raises(OSError):
        Recorder(tmp_path / "missing" / "rec.jsonl", HEADER)


# ---------------------------------------------------------------------------------------------
# Writing, closing, markers


def test_close_is_idempotent_and_later_writes_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    rec = Recorder(path, HEADER)
    rec.write(sample(0))
    rec.close()
    rec.close()
    assert rec.closed
    before = path.read_bytes()
    assert rec.write(sample(1)) is False
    assert path.read_bytes() == before


def test_before_any_sample_now_is_the_recorder_clocks_and_markers_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    wall, mono = FakeClock(5000.0), FakeClock(50.0)
    with Recorder(path, HEADER, wall=wall, mono=mono) as rec:
        wall.now, mono.now = 5003.0, 53.0
        assert rec.stream_now() == (5003.0, 53.0)
        start = Marker("phase_start", "prefill", *rec.stream_now(), "script")  # as a monitor marks
        end = Marker("phase_end", None, 1.0, 2.0, "key")
        assert rec.write(start) and rec.write(end)
        note = rec.write_event("note", "hello")
    assert note == Event("note", "hello", 5003.0, 53.0)
    assert [record_from_json(o) for o in objects_of(path)[1:]] == [start, end, note]


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    per_thread = 300
    with Recorder(path, HEADER) as rec:
        def samples() -> None:
            for n in range(per_thread):
                rec.write(sample(n))

        def markers(name: str) -> None:
            for n in range(per_thread):
                rec.write(Marker("phase_start", f"{name}{n}" * 20, *rec.stream_now(), "script"))

        threads = [threading.Thread(target=samples), threading.Thread(target=markers, args=("a",)),
                   threading.Thread(target=markers, args=("b",))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    objects = objects_of(path)  # raises if any line is not valid JSON
    assert [o["raw"] for o in objects if o["type"] == "sample"] == [str(n) for n in range(per_thread)]
    names = [o["name"] for o in objects if o["type"] == "marker"]
    assert sorted(names) == sorted(f"{p}{n}" * 20 for p in "ab" for n in range(per_thread))


def test_failed_write_tears_only_its_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "rec.jsonl"
    real_write = os.write
    calls = []

    def half_then_disk_full(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    with Recorder(path, HEADER) as rec:
        monkeypatch.setattr(recorder_module.os, "write", half_then_disk_full)
        with pytest.raises(OSError, match="No space"):
            rec.write(sample(1))
        monkeypatch.setattr(recorder_module.os, "write", real_write)
        rec.write(sample(2))
    lines = lines_of(path)
    assert len(lines) == 3
    with pytest.raises(ValueError):
        json.loads(lines[1])
    assert json.loads(lines[2])["raw"] == "2"


# ---------------------------------------------------------------------------------------------
# fsync


def test_fsync_runs_every_fsync_every_s_of_writing_and_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsync = CountingFsync()
    monkeypatch.setattr(recorder_module.os, "fsync", fsync)
    clock = FakeClock(100.0)
    rec = Recorder(tmp_path / "rec.jsonl", HEADER, fsync_every_s=2.0, mono=clock)
    after_open = len(fsync.fds)
    assert after_open >= 1  # the header is made durable at once
    synced_at = []
    for n, t in enumerate([100.5, 101.0, 101.9, 102.0, 102.5, 103.9, 104.0, 104.1, 107.0]):
        clock.now = t
        before = len(fsync.fds)
        rec.write(sample(n))
        if len(fsync.fds) > before:
            synced_at.append(t)
    assert synced_at == [102.0, 104.0, 107.0]
    before_close = len(fsync.fds)
    rec.close()
    assert len(fsync.fds) == before_close + 1


def test_fsync_every_write_when_interval_is_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsync = CountingFsync()
    monkeypatch.setattr(recorder_module.os, "fsync", fsync)
    with Recorder(tmp_path / "rec.jsonl", HEADER, fsync_every_s=0) as rec:
        before = len(fsync.fds)
        for n in range(3):
            rec.write(sample(n))
        assert len(fsync.fds) == before + 3


def test_stalled_stream_is_still_synced_within_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsync = CountingFsync()
    monkeypatch.setattr(recorder_module.os, "fsync", fsync)
    clock = FakeClock(0.0)
    with Recorder(tmp_path / "rec.jsonl", HEADER, fsync_every_s=0.01, mono=clock) as rec:
        rec.write_event("note", "stall")  # not due yet on the frozen clock: not synced
        fsync.called.clear()
        synced_before = len(fsync.fds)
        clock.now = 1.0  # time passes and no further write comes
        assert fsync.called.wait(5.0)
        assert len(fsync.fds) > synced_before


def test_negative_interval_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Recorder(tmp_path / "rec.jsonl", HEADER, fsync_every_s=-1)
    assert not (tmp_path / "rec.jsonl").exists()


# ---------------------------------------------------------------------------------------------
# run_headless in-process


class ListSource(Source):
    """Yields given records (an Exception item is raised), then ends, or waits for stop()."""

    kind = "test"

    def __init__(self, items: list, *, then_wait: bool = False, on_yield=None) -> None:
        self.items = items
        self.then_wait = then_wait
        self.on_yield = on_yield
        self.stopped = threading.Event()

    def records(self) -> Iterator:
        for n, item in enumerate(self.items):
            if self.stopped.is_set():
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            if self.on_yield is not None:
                self.on_yield(n)
        if self.then_wait:
            self.stopped.wait(10.0)

    def stop(self) -> None:
        self.stopped.set()


def run(path: Path, source: Source, duration_s: float | None = None, **kw) -> int:
    return run_headless(source, Recorder(path, HEADER), duration_s, **kw)


def test_source_that_ends_gives_all_records_and_a_closing_note(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    assert run(path, ListSource([sample(n) for n in range(3)]), install_signal_handlers=False) == 0
    objects = objects_of(path)
    assert [o.get("raw") for o in objects[1:4]] == ["0", "1", "2"]
    assert objects[-1]["type"] == "event" and objects[-1]["detail"] == "source ended"


def test_duration_stops_a_source_that_sends_nothing(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    source = ListSource([], then_wait=True)
    assert run(path, source, 0.05, install_signal_handlers=False) == 0
    assert source.stopped.is_set()
    assert objects_of(path)[-1]["detail"] == "stopped after --duration 0.05 s"


def test_duration_stops_an_endless_source(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"

    class Endless(ListSource):
        def records(self) -> Iterator:
            n = 0
            while not self.stopped.wait(0.005):
                yield sample(n)
                n += 1

    assert run(path, Endless([]), 0.1, install_signal_handlers=False) == 0
    objects = objects_of(path)
    raws = [o["raw"] for o in objects if o["type"] == "sample"]
    assert raws == [str(n) for n in range(len(raws))]
    assert objects[-1]["detail"] == "stopped after --duration 0.1 s"


@pytest.mark.parametrize("error", [RuntimeError("boom"), FileNotFoundError(2, "No such file", "tegrastats")])
def test_failing_source_leaves_a_closed_valid_file_and_exit_1(
    tmp_path: Path, error: Exception, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = Recorder(path, HEADER)
    status = run_headless(ListSource([sample(0), sample(1), error]), recorder, None,
                          install_signal_handlers=False)
    assert status == 1
    assert recorder.closed
    objects = objects_of(path)
    assert [o.get("raw") for o in objects[1:3]] == ["0", "1"]
    assert objects[-1]["kind"] == "source_error" and type(error).__name__ in objects[-1]["detail"]
    assert "source failed" in capsys.readouterr().err


def test_write_error_stops_the_source_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    class DiskFull(Recorder):
        def write(self, record) -> bool:
            if isinstance(record, Sample) and record.raw == "2":
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(record)

    path = tmp_path / "rec.jsonl"
    source = ListSource([sample(n) for n in range(5)], then_wait=True)
    recorder = DiskFull(path, HEADER)
    assert run_headless(source, recorder, None, install_signal_handlers=False) == 1
    assert source.stopped.is_set() and recorder.closed
    assert [o.get("raw") for o in objects_of(path)[1:]] == ["0", "1"]
    assert "No space left on device" in capsys.readouterr().err


def test_signal_stops_cleanly_and_handlers_are_restored(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    before = {s: signal.getsignal(s) for s in headless.STOP_SIGNALS}

    def terminate_after_two(n: int) -> None:
        if n == 1:
            os.kill(os.getpid(), signal.SIGTERM)

    source = ListSource([sample(n) for n in range(3)], then_wait=True, on_yield=terminate_after_two)
    assert run(path, source) == 0  # returns only because the signal stopped the waiting source
    assert source.stopped.is_set()
    objects = objects_of(path)
    assert [o["raw"] for o in objects if o["type"] == "sample"][:2] == ["0", "1"]
    assert objects[-1] == {**objects[-1], "type": "event", "kind": "note", "detail": "stopped by SIGTERM"}
    assert {s: signal.getsignal(s) for s in headless.STOP_SIGNALS} == before


def test_ignored_signal_stays_ignored(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        def hang_up(n: int) -> None:
            if n == 0:
                os.kill(os.getpid(), signal.SIGHUP)

        assert run(path, ListSource([sample(n) for n in range(3)], on_yield=hang_up)) == 0
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    objects = objects_of(path)
    assert [o.get("raw") for o in objects[1:4]] == ["0", "1", "2"]
    assert objects[-1]["detail"] == "source ended"


def test_second_sigint_forces_the_stop(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"

    class Stubborn(ListSource):
        """Ignores stop(), as a hung source would; only the second Ctrl-C gets out."""

        def records(self) -> Iterator:
            yield sample(0)
            os.kill(os.getpid(), signal.SIGINT)
            yield sample(1)
            os.kill(os.getpid(), signal.SIGINT)
            while True:
                time.sleep(0.01)

    source = Stubborn([])
    assert run(path, source) == 130
    assert source.stopped.is_set()
    objects = objects_of(path)
    assert [o.get("raw") for o in objects[1:3]] == ["0", "1"]
    assert objects[-1]["detail"] == "forced stop by SIGINT"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_source_failing_at_start_still_restores_handlers(tmp_path: Path) -> None:
    class Broken(ListSource):
        def records(self) -> Iterator:  # not a generator: fails on the call itself
            raise PermissionError(13, "Permission denied", "/usr/bin/tegrastats")

    path = tmp_path / "rec.jsonl"
    before = {s: signal.getsignal(s) for s in headless.STOP_SIGNALS}
    assert run(path, Broken([])) == 1
    assert {s: signal.getsignal(s) for s in headless.STOP_SIGNALS} == before
    assert objects_of(path)[-1]["kind"] == "source_error"


def test_markers_follow_the_stream_timeline_of_a_replay(tmp_path: Path) -> None:
    """Recording a replay: markers and events land between the samples they were made among,
    on the replayed stream's clock, not on ours (whose monotonic clock is the host's uptime)."""
    path = tmp_path / "rec.jsonl"
    wall, mono = FakeClock(9_000_000.0), FakeClock(86_400.0)
    with Recorder(path, HEADER, wall=wall, mono=mono) as rec:
        rec.write(sample(0))  # the replayed stream is at t_mono 0, t_wall 1000
        mono.now += 0.25
        now = rec.stream_now()  # what a marker made now is stamped with
        event = rec.write_event("note", "noted")
    assert now == (1000.25, 0.25)
    assert (event.t_wall, event.t_mono) == (1000.25, 0.25)


def test_duration_beyond_any_timeout_still_stops_on_a_signal(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"

    def terminate_after_one(n: int) -> None:
        if n == 0:
            os.kill(os.getpid(), signal.SIGTERM)

    source = ListSource([sample(0)], then_wait=True, on_yield=terminate_after_one)
    assert run(path, source, 1e308) == 0
    assert source.stopped.is_set()
    assert objects_of(path)[-1]["detail"] == "stopped by SIGTERM"


def test_source_ending_on_an_error_event_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rec.jsonl"
    failure = Event("source_error", "sudo not found on PATH", None, None)
    assert run(path, ListSource([sample(0), failure]), install_signal_handlers=False) == 1
    assert "sudo not found on PATH" in capsys.readouterr().err
    assert objects_of(path)[-1]["kind"] == "source_error"

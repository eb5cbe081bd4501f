"""Headless recording against real signals, in a real child process: SSH hangup, kill, Ctrl-C and
kill -9 each leave a file that holds every sample the child had written before the signal."""

from __future__ import annotations

import json
import os
import queue
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from paths import REPO

from jtop_roof.formats.logfile import iter_records
from jtop_roof.model.records import Sample

# The child: a source yielding numbered samples every 20 ms, recorded by run_headless. It prints
# each sample's number after writing it, so the test knows what was on disk before it signalled.
# Dispositions are set explicitly: a test run started in the background may inherit SIGINT ignored,
# and run_headless keeps ignored signals ignored (which the "nohup" case relies on).
CHILD = r"""
import signal, sys, threading, time
from jtop_roof.model.records import Sample
from jtop_roof.runtime.headless import run_headless
from jtop_roof.formats.recorder import Recorder
from jtop_roof.sources.base import Source

path, duration, ignored = sys.argv[1], sys.argv[2], sys.argv[3]
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_IGN if ignored == "SIGHUP" else signal.SIG_DFL)

class Counter(Source):
    kind = "counter"
    def __init__(self):
        self._stop = threading.Event()
    def records(self):
        n = 0
        while not self._stop.wait(0.02):
            yield Sample(t_wall=time.time(), t_mono=time.monotonic(), raw=str(n))
            n += 1
    def stop(self):
        self._stop.set()

class Reporting(Recorder):
    def write(self, record):
        written = super().write(record)
        if isinstance(record, Sample):
            print(record.raw, flush=True)
        return written

recorder = Reporting(path, {"source": "counter", "interval_ms": 20, "command": sys.argv})
sys.exit(run_headless(Counter(), recorder, float(duration) if duration else None))
"""


class Child:
    """A recording child process whose printed sample numbers are read on a thread."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.printed: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.seen: list[str] = []

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.printed.put(line.strip())
        self.printed.put(None)

    def wait_for_samples(self, count: int) -> None:
        """Block until the child reports `count` more samples written (fails if it exits first)."""
        for _ in range(count):
            line = self.printed.get(timeout=20)
            assert line is not None, f"child ended early: {self.proc.stderr.read()}"
            self.seen.append(line)

    def finish(self) -> tuple[int, str]:
        try:
            status = self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.reader.join(timeout=20)
        while (line := self.printed.get_nowait()) is not None:
            self.seen.append(line)
        return status, self.proc.stderr.read()


def counter_child(path: Path, *, duration: str = "", ignored: str = "") -> Child:
    return Child([sys.executable, "-c", CHILD, str(path), duration, ignored])


def read_recording(path: Path, *, torn_tail_allowed: bool = False) -> list[dict]:
    """Every line must be JSON, except (after kill -9) an unterminated last line."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail:
        assert torn_tail_allowed, f"unterminated last line: {tail!r}"
    return [json.loads(line) for line in lines]


def replayed_sample_numbers(path: Path) -> list[int]:
    """What a reader of the recording gets back (it must skip torn lines and later headers)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return [int(r.raw) for r in iter_records(f, tz="UTC", interval_s=0.02) if isinstance(r, Sample)]


def check_samples(objects: list[dict], seen: list[str]) -> None:
    """Header first; samples numbered 0..n-1 with no gap, covering every number the child printed."""
    assert objects[0]["type"] == "header" and objects[0]["source"] == "counter"
    numbers = [int(o["raw"]) for o in objects if o["type"] == "sample"]
    assert numbers == list(range(len(numbers)))
    assert seen and max(int(n) for n in seen) < len(numbers)


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT])
def test_stop_signal_ends_cleanly_with_every_sample(tmp_path: Path, signum: signal.Signals) -> None:
    path = tmp_path / "rec.jsonl"
    child = counter_child(path)
    child.wait_for_samples(3)
    child.proc.send_signal(signum)
    status, stderr = child.finish()
    assert status == 0, stderr
    objects = read_recording(path)
    check_samples(objects, child.seen)
    assert objects[-1]["type"] == "event" and objects[-1]["kind"] == "note"
    assert objects[-1]["detail"] == f"stopped by {signum.name}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_kill_9_loses_nothing_that_was_written(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    child = counter_child(path)
    child.wait_for_samples(3)
    child.proc.send_signal(signal.SIGKILL)
    status, _ = child.finish()
    assert status == -signal.SIGKILL
    objects = read_recording(path, torn_tail_allowed=True)
    check_samples(objects, child.seen)
    assert all(o["type"] in ("header", "sample") for o in objects)  # no closing note: it had no chance
    assert replayed_sample_numbers(path) == [int(o["raw"]) for o in objects if o["type"] == "sample"]


def test_hangup_under_nohup_keeps_recording(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    child = counter_child(path, ignored="SIGHUP")
    child.wait_for_samples(2)
    child.proc.send_signal(signal.SIGHUP)
    child.wait_for_samples(3)  # still writing after the hangup (reading would fail on exit)
    child.proc.send_signal(signal.SIGTERM)
    status, stderr = child.finish()
    assert status == 0, stderr
    objects = read_recording(path)
    check_samples(objects, child.seen)
    assert objects[-1]["detail"] == "stopped by SIGTERM"


def test_duration_ends_the_recording_by_itself(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    child = counter_child(path, duration="0.2")
    status, stderr = child.finish()
    assert status == 0, stderr
    objects = read_recording(path)
    check_samples(objects, child.seen)
    assert objects[-1]["detail"] == "stopped after --duration 0.2 s"


def test_a_second_session_appends_to_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    for _ in range(2):
        child = counter_child(path)
        child.wait_for_samples(2)
        child.proc.send_signal(signal.SIGTERM)
        assert child.finish()[0] == 0
    objects = read_recording(path)
    headers = [i for i, o in enumerate(objects) if o["type"] == "header"]
    assert len(headers) == 2 and headers[0] == 0
    check_samples(objects[: headers[1]], ["1"])
    check_samples(objects[headers[1]:], ["1"])
    assert replayed_sample_numbers(path) == [int(o["raw"]) for o in objects if o["type"] == "sample"]


def test_real_record_command_stops_on_sigterm(tmp_path: Path) -> None:
    pytest.importorskip("jtop_roof.sources.demo", reason="the demo source is not written yet")
    path = tmp_path / "rec.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "jtop_roof", "record", str(path), "--source", "demo", "--duration", "30"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**{k: v for k, v in os.environ.items() if k != "JROOF_CONFIG"},
             "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    try:
        # Wait for the header and the first sample: the recording is running.
        sample_seen = threading.Event()

        def watch() -> None:
            while proc.poll() is None and not sample_seen.is_set():
                if path.exists() and b'"type":"sample"' in path.read_bytes():
                    sample_seen.set()
                sample_seen.wait(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        watcher.join(timeout=30)
        assert sample_seen.is_set(), proc.stderr.read() if proc.poll() is not None else "no sample"
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert status == 0, proc.stderr.read()
    objects = read_recording(path)
    assert objects[0]["type"] == "header" and objects[0]["source"] == "demo"
    assert any(o["type"] == "sample" for o in objects)
    assert objects[-1]["detail"] == "stopped by SIGTERM"

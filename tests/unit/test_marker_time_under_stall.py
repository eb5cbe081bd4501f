"""A marker sent while the headless monitor's pump is stalled (a slow write: an fsync on eMMC)
is stamped when it came, not when the stall ended: its phase edge is where the script put it."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from tui_support import ScriptedSource

from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.records import Record, Sample
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import send_marker
from jtop_roof.runtime.headless import run_headless
from jtop_roof.sources.base import Source

STALL_S = 2.0
INTO_STALL_S = 1.5


class PacedLiveSource(ScriptedSource):
    """A live board: a sample every half second, stamped on our own clock as it comes."""

    def records(self):  # type: ignore[no-untyped-def]
        for _ in range(12):
            if self._stopped.wait(0.5):
                return
            yield Sample(t_wall=time.time(), t_mono=time.monotonic())
        self._stopped.wait()


def test_a_marker_sent_during_a_stalled_write_keeps_the_time_it_came(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    source: Source = PacedLiveSource([])
    path = tmp_path / "stalled.jsonl"
    recorder = Recorder(path, dict(source.describe().header))
    written = recorder.write
    samples: list[Sample] = []
    stalled = threading.Event()

    def slow_third_sample(record: Record) -> bool:
        if isinstance(record, Sample):
            samples.append(record)
            if len(samples) == 3:
                stalled.set()
                time.sleep(STALL_S)
        return written(record)

    monkeypatch.setattr(recorder, "write", slow_third_sample)
    stop, listening = threading.Event(), threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(run_headless(
        source, recorder, None, install_signal_handlers=False, config=Config(), listen_for_markers=True,
        stop_event=stop, on_listening=listening.set)))
    thread.start()
    try:
        assert listening.wait(10) and stalled.wait(20)
        time.sleep(INTO_STALL_S)
        assert send_marker("phase_start", "mid-stall") == 1
        time.sleep(STALL_S)
    finally:
        stop.set()
        thread.join(20)
    assert result == [0]
    stalled_mono = samples[2].t_mono
    assert stalled_mono is not None
    markers = [json.loads(line) for line in path.read_text().splitlines() if '"marker"' in line]
    marker = next(m for m in markers if m.get("name") == "mid-stall")
    # On arrival: 1.5 s after the stalled sample came (less the little before its write began);
    # stamped when the stall ended, it read as the stalled sample's own time.
    assert INTO_STALL_S - 0.6 < marker["mono"] - stalled_mono < INTO_STALL_S + 0.6

"""Markers from scripts (``jroof-tui mark``, the hook) go to live monitors only: a replay of an
old file takes keys, never a phase a benchmark running now marks (it would land at whatever
sample the replay shows)."""

from __future__ import annotations

import json
import threading
import time

from paths import REPO
from tui_support import ScriptedSource

from jtop_roof.formats.recorder import Recorder
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import send_marker, takes_script_markers
from jtop_roof.runtime.headless import run_headless
from jtop_roof.sources.replay import ReplaySource

ROOT = REPO
DEMO_LOG = ROOT / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"


def test_a_replay_takes_no_script_markers_a_live_or_following_source_does(tmp_path):
    from jtop_roof.sources.demo import DemoSource

    assert not takes_script_markers([ReplaySource(DEMO_LOG, tz="UTC")])
    assert takes_script_markers([DemoSource()])  # plays as a live board: to try ``mark`` on
    assert takes_script_markers([ReplaySource(DEMO_LOG, tz="UTC", follow=True)])  # a growing log
    assert takes_script_markers([ScriptedSource([])])
    assert takes_script_markers([ReplaySource(DEMO_LOG, tz="UTC"), ScriptedSource([])])


def test_mark_does_not_reach_a_headless_replay(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    source = ReplaySource(DEMO_LOG, tz="UTC", speed=0.25)  # plays for minutes: stopped below
    path = tmp_path / "replayed.jsonl"
    recorder = Recorder(path, dict(source.describe().header))
    stop = threading.Event()
    listening = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(run_headless(
        source, recorder, None, install_signal_handlers=False, config=Config(), listen_for_markers=True,
        stop_event=stop, on_listening=listening.set)))
    thread.start()
    try:
        assert listening.wait(10)
        deadline = time.monotonic() + 10
        while '"sample"' not in path.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not list(tmp_path.glob("jroof/*.sock"))
        assert send_marker("phase_start", "not this file's") == 0
    finally:
        stop.set()
        thread.join(10)
    assert result == [0]
    kinds = [json.loads(line).get("kind") for line in path.read_text().splitlines()]
    assert "phase_start" not in kinds

"""The power sampler end to end: a fake INA3221 tree under ``--sysfs-root`` whose VDD_IN a
writer thread changes on a known schedule, recorded by ``record --power-hz 50`` beside a fake
tegrastats (whose own 1 s rails are unrelated to the tree), with a phase marked by ``jroof-tui
mark``. The phase's edges are the mark calls'; the run's and the phase's energy are the exact
integral of the schedule between their reported bounds, not tegrastats' rails (near the schedule's,
as they read the same chip, but coarser)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime

import pytest
from paths import REPO
from power_tree import FakeIna3221

ROOT = REPO
TESTS = ROOT / "tests"
MILLIVOLTS = 5000
#: VDD_IN's current (mA) in turn, each held HOLD_S: 5 V x 1.06..1.3 A, within 20% of tegrastats' ~6 W
#: lines (the sampler and tegrastats read one chip; a stream further off is refused), never equal.
CURRENTS_MA = (1300, 1060, 1250, 1120, 1280, 1080)
HOLD_S = 0.7
RECORD_S = 15.0


def schedule_j(changes: list[tuple[float, float]], start: float, end: float) -> float:
    """The exact energy (J) of a piecewise-constant power (``changes``: (wall time, mW) in order)
    over [start, end]."""
    joules = 0.0
    for (at, mw), (until, _) in zip(changes, [*changes[1:], (float("inf"), 0.0)], strict=True):
        lo, hi = max(at, start), min(until, end)
        if hi > lo:
            joules += mw * (hi - lo) / 1000
    return joules


def wall(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


@pytest.mark.skipif(sys.platform != "linux", reason="the sampler reads a sysfs tree (Linux)")
def test_a_phase_marked_while_recording_a_fake_ina3221_at_50_hz(tmp_path):
    tree = tmp_path / "sys-root"
    board = FakeIna3221(tree, {"VDD_IN": (MILLIVOLTS, CURRENTS_MA[0]), "VDD_SOC": (MILLIVOLTS, 300)})
    changes: list[tuple[float, float]] = [(0.0, MILLIVOLTS * CURRENTS_MA[0] / 1000)]
    bin_dir, run_dir = tmp_path / "bin", tmp_path / "run"
    bin_dir.mkdir()
    run_dir.mkdir(mode=0o700)
    shutil.copy(TESTS / "fake_tegrastats", bin_dir / "tegrastats")
    (bin_dir / "tegrastats").chmod(0o755)
    lines = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", XDG_RUNTIME_DIR=str(run_dir),
               PYTHONPATH=str(ROOT), FAKE_TEGRASTATS_LINES=str(lines))
    out = tmp_path / "r.jsonl"
    recorder = subprocess.Popen(
        [sys.executable, "-m", "jtop_roof", "record", str(out), "--source", "tegrastats", "--sysfs-root",
         str(tree), "--power-hz", "50", "--duration", str(RECORD_S)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()

    def writer() -> None:
        """VDD_IN through CURRENTS_MA, each held HOLD_S; the change's time is its write's."""
        turn = 0
        while not stop.wait(HOLD_S):
            turn += 1
            ma = CURRENTS_MA[turn % len(CURRENTS_MA)]
            before = time.time()
            board.set("VDD_IN", MILLIVOLTS, ma)  # the voltage stays: one file changes
            changes.append(((before + time.time()) / 2, MILLIVOLTS * ma / 1000))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    marks: list[tuple[float, float]] = []
    try:
        for delay, args in ((4.0, ["p"]), (7.0, ["--end"])):
            time.sleep(delay)
            before = time.time()
            done = subprocess.run([sys.executable, "-m", "jtop_roof", "mark", *args], env=env,
                                  capture_output=True, text=True, timeout=30)
            marks.append((before, time.time()))
            assert done.returncode == 0, done.stderr
        _, stderr = recorder.communicate(timeout=RECORD_S + 30)
    finally:
        stop.set()
        thread.join()
        if recorder.poll() is None:
            recorder.kill()
    assert recorder.returncode == 0, stderr

    report = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(out), "--format", "json"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    got = json.loads(report.stdout)
    whole, (phase,) = got["whole"], got["phases"]
    assert whole["samples"] >= 5  # tegrastats ran: its rails were there to be (wrongly) integrated
    for span in (whole, phase):
        assert span["energy_source"] == "INA3221 hwmon, 50 Hz" and span["power_period_s"] == 0.02
        assert span["energy_total_source"] == "measured"
    # The phase starts and ends at the mark calls.
    (start_from, start_to), (end_from, end_to) = marks
    assert start_from - 0.3 <= wall(phase["start"]) <= start_to + 0.3
    assert end_from - 0.3 <= wall(phase["end"]) <= end_to + 0.3
    # Its energy, and the run's, are the schedule's between their own bounds.
    changes[0] = (wall(whole["start"]) - 1.0, changes[0][1])
    for span in (whole, phase):
        exact = schedule_j(changes, wall(span["start"]), wall(span["end"]))
        assert span["energy_j"]["rails"]["VDD_IN"] == pytest.approx(exact, rel=0.01), span["name"]
        assert span["energy_j"]["total"] == span["energy_j"]["rails"]["VDD_IN"]
        assert span["power_w"]["mean"] == pytest.approx(span["energy_j"]["total"] / span["duration_s"])

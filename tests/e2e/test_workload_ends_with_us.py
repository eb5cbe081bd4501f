"""``run``'s workload never outlives jroof: killed with ``kill -9`` (no handler runs), jroof still
takes the workload's whole process group with it, grandchildren included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import REPO
from source_support import WAIT_S

ROOT = REPO
#: Long enough for a loaded machine; a workload left behind would live for five minutes.
GONE_WITHIN_S = 20.0


def live_members(group: int) -> list[int]:
    """The processes of ``group`` that still run (a zombie waits only for its reaper)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rpartition(b")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != b"Z":
            members.append(int(entry.name))
    return members


def wait_for(condition, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from Linux /proc")
def test_a_killed_run_ends_the_workloads_whole_group(runtime_dir, tmp_path):
    group_file = tmp_path / "group"
    # The shell is the group's leader; its sleeps are the grandchildren of jroof.
    workload = f"sleep 300 & sleep 300 & echo $$ > {group_file}; wait"
    argv = [sys.executable, "-m", "jtop_roof", "run", "--headless", "--record", str(tmp_path / "r.jsonl"),
            "--source", "host", "--interval", "200", "--", "sh", "-c", workload]
    jroof = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))
    group = None
    try:
        assert wait_for(lambda: group_file.exists() and group_file.read_text().endswith("\n"), 60.0)
        group = int(group_file.read_text())
        assert wait_for(lambda: len(live_members(group)) == 3, WAIT_S)  # the shell and two sleeps
        jroof.send_signal(signal.SIGKILL)
        jroof.wait()
        assert wait_for(lambda: not live_members(group), GONE_WITHIN_S), live_members(group)
    finally:
        if jroof.poll() is None:
            jroof.kill()
            jroof.wait()
        if group is not None:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_workload_stopped_by_us_releases_its_guard(runtime_dir, tmp_path):
    """A normal end: ``stop`` ends the group and the guard leaves without signalling anything."""
    from jtop_roof.runtime.child import Child

    ended = []
    child = Child(["sh", "-c", "exit 0"], on_exit=lambda: ended.append(True), log=None, on_screen=True)
    deadline = time.monotonic() + 30  # the workload ends by itself first (a busy machine: slowly)
    while child.status is None and time.monotonic() < deadline:
        time.sleep(0.01)
    child.stop()
    guard = child._guard._process
    assert guard is not None and guard.wait(timeout=30) == 0
    assert child.status == 0

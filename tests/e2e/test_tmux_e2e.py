"""End to end: the real ``jroof-tui`` command in a real terminal (tmux), on a replay.

Reads the screen with ``capture-pane``, marks a phase with a key, quits, and checks the recording.
A second run drops the terminal (``kill-session``, as an SSH drop does) and checks that the
process still exits cleanly with its recording intact. Skipped without tmux or jroof-tui.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_support import FIXTURE

TMUX = shutil.which("tmux")
JROOF = shutil.which("jroof-tui") or shutil.which("jroof-tui", path=str(Path(sys.executable).parent))

pytestmark = pytest.mark.skipif(TMUX is None or JROOF is None, reason="needs tmux and jroof-tui on PATH")


class Terminal:
    """One tmux server of our own (its own socket), 120x40, running one shell command."""

    def __init__(self, tmp_path: Path, command: str, *, leader: bool = False) -> None:
        """``leader``: jroof-tui replaces the shell (``exec``), so a hangup signals it directly;
        otherwise the shell stays, ignores SIGHUP, and writes jroof-tui's exit status."""
        self.socket = f"jroof-e2e-{os.getpid()}-{tmp_path.name}"
        self.rc_file = tmp_path / "rc"
        self.runtime = tmp_path / "run"  # our own marker sockets, apart from other monitors
        self.runtime.mkdir(mode=0o700)
        env = {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config"),
               "XDG_RUNTIME_DIR": str(self.runtime)}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.pid_file = tmp_path / "pid"
        # COLUMNS/LINES from the test runner would pin the app's size; a user's config stays out.
        setup = f"export {exports}; unset NO_COLOR JROOF_CONFIG COLUMNS LINES"
        if leader:
            script = f"{setup}; echo $$ > {self.pid_file}; exec {command}"
        else:
            script = f"trap '' HUP; {setup}; {command}; echo $? > {self.rc_file}"
        self._tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", f"sh -c {shlex.quote(script)}")

    def _tmux(self, *args: str) -> str:
        result = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=20)
        return result.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "e2e")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "e2e", *keys)

    def wait_for(self, text: str, rounds: int = 400) -> str:
        for _ in range(rounds):
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen()}")

    def exit_status(self, rounds: int = 400) -> int:
        for _ in range(rounds):
            if self.rc_file.exists() and self.rc_file.read_text().strip():
                return int(self.rc_file.read_text())
            time.sleep(0.1)
        raise AssertionError("jroof-tui did not exit")

    def wait_gone(self, rounds: int = 400) -> None:
        """Wait for the exec'd jroof-tui (its pid from the pid file) to end."""
        pid = int(self.pid_file.read_text())
        for _ in range(rounds):
            if not Path(f"/proc/{pid}").exists() or "zombie" in _proc_state(pid):
                return
            time.sleep(0.1)
        raise AssertionError("jroof-tui did not exit after the hangup")

    def mark_from_script(self, name: str) -> subprocess.CompletedProcess:
        """``jroof-tui mark NAME`` as a benchmark script runs it, next to the monitor."""
        env = {**os.environ, "XDG_RUNTIME_DIR": str(self.runtime)}
        return subprocess.run([JROOF, "mark", name], env=env, capture_output=True, text=True, timeout=20)

    def kill(self) -> None:
        self._tmux("kill-server")


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].splitlines()[0].lower()
    except (OSError, IndexError):
        return "zombie"


def replay_command(out: Path) -> str:
    return (f"{shlex.quote(JROOF)} --replay {shlex.quote(str(FIXTURE))} --tz UTC --speed 2 "
            f"--record {shlex.quote(str(out))}")


def read_recording(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_mark_a_phase_and_quit(tmp_path):
    out = tmp_path / "run.jsonl"
    term = Terminal(tmp_path, replay_command(out))
    try:
        screen = term.wait_for("VDD_IN")
        assert "REPLAY ×2" in screen and "● REC run.jsonl" in screen
        assert "CPU · 6 cores" in screen and "Temperatures" in screen
        term.keys("space")  # paused: the file's own markers cannot take over the header meanwhile
        term.wait_for("PAUSED")
        term.keys("m")
        term.wait_for("▶ phase 4")  # the replayed file holds three phases
        # A replay takes keys, never a script's marks: they belong to a live run.
        script = term.mark_from_script("from script")
        assert script.returncode == 1 and "no running jroof-tui" in script.stderr
        term.keys("q")
        assert term.exit_status() == 0
    finally:
        term.kill()
    records = read_recording(out)
    assert records[0]["type"] == "header" and records[0]["source"] == "replay"
    assert any(r["type"] == "sample" for r in records)
    # (the replayed file's own markers, origin "script", are copied into the recording too)
    ours = [r for r in records if r["type"] == "marker" and r["name"] in ("phase 4", "from script")]
    assert [(m["kind"], m["name"], m["origin"]) for m in ours] == [("phase_start", "phase 4", "key")]


def test_terminal_loss_exits_cleanly_and_keeps_the_recording(tmp_path):
    out = tmp_path / "drop.jsonl"
    term = Terminal(tmp_path, replay_command(out))
    try:
        term.wait_for("VDD_IN")
        term.keys("m")
        term.wait_for("▶ phase 4")  # the replayed file holds three phases
        samples_before = sum(1 for r in read_recording(out) if r["type"] == "sample")
        term._tmux("kill-session", "-t", "e2e")  # the terminal goes away, as when SSH drops
        assert term.exit_status() == 0
    finally:
        term.kill()
    records = read_recording(out)
    assert sum(1 for r in records if r["type"] == "sample") >= samples_before
    assert [r["name"] for r in records if r["type"] == "marker" and r["origin"] == "key"] == ["phase 4"]


def test_sighup_to_the_monitor_itself_exits_cleanly(tmp_path):
    out = tmp_path / "hup.jsonl"
    term = Terminal(tmp_path, replay_command(out), leader=True)
    try:
        term.wait_for("VDD_IN")
        term.keys("space")  # paused: the file's own markers cannot take over the header meanwhile
        term.wait_for("PAUSED")
        term.keys("m")
        term.wait_for("▶ phase 4")  # the replayed file holds three phases
        term._tmux("kill-session", "-t", "e2e")  # SIGHUP goes to the session leader: jroof-tui
        term.wait_gone()
    finally:
        term.kill()
    records = read_recording(out)
    assert records[0]["type"] == "header"
    assert [r["name"] for r in records if r["type"] == "marker" and r["origin"] == "key"] == ["phase 4"]


def test_run_gives_128_plus_n_when_the_workload_dies_by_a_signal(tmp_path):
    """The monitor's `run` and `run --headless` share one workload runner: a workload ended by
    SIGTERM makes both exit 143, as a shell says it."""
    workload = "sh -c 'sleep 1; kill -TERM $$'"
    term = Terminal(tmp_path, f"{shlex.quote(JROOF)} run --source demo -- {workload}")
    try:
        term.wait_for("VDD_IN")
        assert term.exit_status() == 143
    finally:
        term.kill()
    headless = subprocess.run([JROOF, "run", "--headless", "--record", str(tmp_path / "r.jsonl"),
                               "--source", "demo", "--", "sh", "-c", "sleep 1; kill -TERM $$"],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "XDG_RUNTIME_DIR": str(term.runtime)})
    assert headless.returncode == 143, headless.stderr

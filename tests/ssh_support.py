"""What the ssh tests share (test modules import this, never one another): tests/fake_ssh on PATH
as ``ssh`` (it runs the remote command here, in its own session, as the board would) with
tests/fake_tegrastats as the board's tegrastats, their knobs cleared (``fake_ssh``), an
``SshSource`` on them, and waits for the processes they start and end."""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from source_support import pids

from jtop_roof.sources.ssh import SshSource

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FAKE_SSH = TESTS / "fake_ssh"
FAKE = TESTS / "fake_tegrastats"
SYSFS = TESTS / "data" / "sysfs"
ROOT_LINES = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.tegrastats = tmp_path / "tegrastats.pid"  # remote tegrastats pids
        self.ssh = tmp_path / "ssh.pid"  # local ssh pids
        self.argv = tmp_path / "ssh.argv"
        self.linger = tmp_path / "linger.pid"
        self.run = tmp_path / "run"  # the board's $XDG_RUNTIME_DIR

    def remote_pidfiles(self) -> list[Path]:
        return sorted(self.run.glob("jroof-ssh-*.pid"))


def fake_ssh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Env]:
    """The ssh tests' ``env`` fixture (each module makes it one: ``yield from fake_ssh(...)``):
    the stand-ins on PATH, their knobs cleared, their pid files under ``tmp_path``."""
    for name in ("EXIT_AFTER", "HANG_AFTER", "IGNORE_TERM", "EXIT_CODE"):
        monkeypatch.delenv(f"FAKE_TEGRASTATS_{name}", raising=False)
    for name in ("REFUSE", "CONNECT_FAIL", "NO_DNS", "DIE_AFTER", "DIE_ON", "LINGER", "SILENT"):
        monkeypatch.delenv(f"FAKE_SSH_{name}", raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").symlink_to(FAKE_SSH)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    e = Env(tmp_path)
    e.run.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(e.run))
    monkeypatch.setenv("FAKE_TEGRASTATS_LINES", str(ROOT_LINES))
    monkeypatch.setenv("FAKE_TEGRASTATS_PIDFILE", str(e.tegrastats))
    monkeypatch.setenv("FAKE_SSH_PIDFILE", str(e.ssh))
    monkeypatch.setenv("FAKE_SSH_ARGV_FILE", str(e.argv))
    monkeypatch.setenv("FAKE_SSH_COUNTFILE", str(tmp_path / "ssh.count"))
    monkeypatch.setenv("FAKE_SSH_LINGER_PIDFILE", str(e.linger))
    yield e
    for pid in pids(e.linger, 0):  # the stand-in's half-dead sshd, if a test made one
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def make_source(host: str = "jetson", command=None, **kwargs) -> SshSource:
    kwargs.setdefault("clock", itertools.count(1_000_000.0, 1.0).__next__)
    kwargs.setdefault("mono", itertools.count(0.0, 1.0).__next__)
    kwargs.setdefault("backoff", (0.01, 0.02))
    kwargs.setdefault("kill_grace_s", 0.5)
    kwargs.setdefault("remote_root", str(SYSFS))
    return SshSource(host, command or [str(FAKE)], 20, **kwargs)

"""The files ``run`` writes beside a recording unasked (trtexec's output ``FILE.trtexec.log``, a
workload's ``FILE.out``) are as private as the recording (0600, whatever the umask); an output the
user names (``--out``) follows the umask as any tool's does."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from source_support import WAIT_S

from jtop_roof.formats.userfiles import create_output
from jtop_roof.runtime.child import Child, ChildError, kept_output_path


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 0: a file created 0644 shows as 0644, so only an explicit 0600 gives 0600."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


def fake_trtexec(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "trtexec"
    fake.write_text("#!/bin/sh\necho '[I] fake trtexec line'\n")
    fake.chmod(0o755)
    return fake


def ran(argv: list[str], log: str) -> None:
    done = threading.Event()
    Child(argv, on_exit=done.set, log=log, on_screen=False)
    assert done.wait(WAIT_S), "the workload never ended"


def mode(path: str | Path) -> int:
    return os.stat(path).st_mode & 0o777


def test_trtexecs_kept_output_is_created_0600(tmp_path, open_umask):
    argv = [str(fake_trtexec(tmp_path))]
    log = kept_output_path(str(tmp_path / "r.jsonl"), argv)
    assert log.endswith(".trtexec.log")
    ran(argv, log)
    assert Path(log).read_text() == "[I] fake trtexec line\n"
    assert mode(log) == 0o600


def test_a_workloads_output_is_created_0600_and_appended_to(tmp_path, open_umask):
    argv = [sys.executable, "-c", "print('step')"]
    log = kept_output_path(str(tmp_path / "r.jsonl"), argv)
    assert log.endswith(".out")
    ran(argv, log)
    ran(argv, log)
    assert Path(log).read_text() == "step\nstep\n" and mode(log) == 0o600


def test_trtexecs_output_never_replaces_a_file_that_appeared_meanwhile(tmp_path):
    """``kept_output_path`` refuses an earlier output; one that appears between that check and the
    start (another run into the same recording) is refused too, and kept as it was."""
    argv = [str(fake_trtexec(tmp_path))]
    log = kept_output_path(str(tmp_path / "r.jsonl"), argv)
    Path(log).write_text("the other run\n")
    with pytest.raises(ChildError, match="cannot write"):
        Child(argv, on_exit=lambda: None, log=log, on_screen=False)
    assert Path(log).read_text() == "the other run\n"


def test_an_output_the_user_names_follows_the_umask(tmp_path):
    before = os.umask(0o027)
    try:
        os.close(create_output(tmp_path / "asked.csv"))
    finally:
        os.umask(before)
    assert mode(tmp_path / "asked.csv") == 0o640

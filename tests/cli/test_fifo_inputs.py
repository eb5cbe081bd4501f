"""A FIFO given as a file to read (``parse FIFO``) is read as a pipe is: once a writer has come,
until its end. A writer that connects late is waited for, not taken for an empty input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from paths import TESTS

LOG = TESTS / "data" / "logfile" / "agxorin_jp6_500ms.log"


def holds_open(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(fds / fd) == str(path) for fd in os.listdir(fds))
    except OSError:
        return False


def sleeping(pid: int) -> bool:
    """Whether process ``pid`` is asleep (waiting), from /proc/PID/stat."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "S"
    except (OSError, IndexError):
        return False


def test_parse_reads_a_fifo_whose_writer_comes_late(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    parse = subprocess.Popen([sys.executable, "-m", "jtop_roof", "parse", str(fifo), "--tz", "UTC"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        # The writer comes only once parse holds the FIFO open and waits: late, by construction.
        while not (holds_open(parse.pid, fifo) and sleeping(parse.pid)) and parse.poll() is None:
            assert time.monotonic() < deadline, "parse never opened the FIFO"
            time.sleep(0.05)
        assert parse.poll() is None, parse.communicate()
        writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: parse no longer reads it
        with open(writer, "wb") as stream:
            stream.write(LOG.read_bytes())
        stdout, stderr = parse.communicate(timeout=60)
    finally:
        if parse.poll() is None:
            parse.kill()
            parse.wait()
    assert parse.returncode == 0, stderr
    samples = [json.loads(line) for line in stdout.splitlines()]
    expected = sum(1 for line in LOG.read_text().splitlines() if "RAM " in line)
    assert len(samples) == expected > 0

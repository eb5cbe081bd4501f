"""`--out -` is standard output on every command that writes a file, as `-` is standard input for the
files read: never a file named `-`. Binary formats go to a pipe or a file as bytes, and are refused
(one line, exit 2) onto a terminal, where they would only garble the screen."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import cli_support
import pytest
from paths import TESTS

LOG = TESTS / "data" / "logfile" / "agxorin_jp6_500ms.log"


def jroof(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess[bytes]:
    """The command as a user runs it, in bytes."""
    return cli_support.jroof(*args, cwd=cwd, text=False, **kwargs)


@pytest.mark.parametrize("command", [
    ("report", str(LOG), "--tz", "UTC"),
    ("report", str(LOG), "--tz", "UTC", "--format", "json"),
    ("compare", str(LOG), str(LOG), "--tz", "UTC"),
    ("export", str(LOG), "--tz", "UTC"),
    ("export", str(LOG), "--tz", "UTC", "--format", "jsonl"),
])
def test_out_dash_writes_what_stdout_would(tmp_path, command):
    plain = jroof(*command, cwd=tmp_path)
    dashed = jroof(*command, "--out", "-", cwd=tmp_path)
    assert dashed.returncode == 0, dashed.stderr
    assert dashed.stdout == plain.stdout and dashed.stdout
    assert dashed.stderr == b""  # no "wrote -": the data is on stdout
    assert not (tmp_path / "-").exists()


def test_parquet_to_stdout_is_the_file_export_writes(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    to_file = jroof("export", str(LOG), "--tz", "UTC", "--out", "run.parquet", cwd=tmp_path)
    assert to_file.returncode == 0, to_file.stderr
    piped = jroof("export", str(LOG), "--tz", "UTC", "--format", "parquet", "--out", "-", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert pq.read_table(io.BytesIO(piped.stdout)).equals(pq.read_table(tmp_path / "run.parquet"))
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(("fmt", "magic"),
                         [(None, b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF-"), ("svg", b"<?xml")])
def test_a_figure_to_stdout(tmp_path, fmt, magic):
    pytest.importorskip("matplotlib")
    extra = () if fmt is None else ("--format", fmt)
    result = jroof("plot", str(LOG), "--tz", "UTC", "--out", "-", *extra, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(magic)
    assert list(tmp_path.iterdir()) == []


def test_stdout_that_is_the_input_is_refused(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(LOG.read_bytes())
    with open(log, "ab") as same:
        result = jroof("export", str(log), "--tz", "UTC", "--format", "parquet", "--out", "-",
                       cwd=tmp_path, stdout=same)
    assert result.returncode == 2
    assert b"it is this command's input" in result.stderr
    assert log.read_bytes() == LOG.read_bytes()


@pytest.mark.parametrize("command", [("export", str(LOG), "--format", "parquet"), ("plot", str(LOG))])
def test_binary_onto_a_terminal_is_one_line(tmp_path, command):
    main, other = os.openpty()
    try:
        result = jroof(*command, "--tz", "UTC", "--out", "-", cwd=tmp_path, stdout=other)
    finally:
        os.close(other)
        os.close(main)
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "binary and standard output is a terminal" in lines[0]


def test_parquet_without_out_names_the_dash(tmp_path):
    result = jroof("export", str(LOG), "--format", "parquet", cwd=tmp_path)
    assert result.returncode == 2
    assert b"--out -" in result.stderr

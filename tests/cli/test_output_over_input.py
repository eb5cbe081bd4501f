"""No command writes over a file it reads: not through ``--out`` naming the input, nor through ``-``
(standard input is spooled, so the spool is not the file to compare with: standard input's own
``fstat`` is), nor by a redirection of standard output onto the input (``>> FILE``). Each is
refused in one line (exit 2) before the file is touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cli_support
import pytest
from paths import TESTS

DATA = TESTS / "data"
LOG = DATA / "logfile" / "agxorin_jp6_500ms.log"
RECORDING = DATA / "h200_phases.jsonl"


def jroof(*args: str, cwd: Path, stdin: Path | None = None, stdout: Path | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The command as a shell runs it: ``< stdin`` and ``>> stdout`` when given."""
    with open(stdin if stdin is not None else os.devnull, "rb") as source, \
            open(stdout, "ab") if stdout is not None else open(os.devnull, "wb") as target:
        return cli_support.jroof(*args, stdin=source, stdout=target, cwd=cwd, env=env, text=False)


def one_refusal(result: subprocess.CompletedProcess[bytes], *words: str) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jroof-tui: error: refusing to write "), lines
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", [
    ("report", "-", "--tz", "UTC", "--out", "in.log"),
    ("report", "-", "--tz", "UTC", "--format", "csv", "--out", "in.log"),
    ("export", "-", "--tz", "UTC", "--out", "in.log"),
    ("export", "-", "--tz", "UTC", "--format", "parquet", "--out", "in.log"),
    ("compare", "-", str(LOG), "--tz", "UTC", "--out", "in.log"),
    ("plot", "-", "--tz", "UTC", "--format", "svg", "--out", "in.log"),
])
def test_out_over_standard_input_is_refused(tmp_path, command):
    """``CMD - --out X < X``: X is what standard input is."""
    if "parquet" in command:
        pytest.importorskip("pyarrow")
    if command[0] == "plot":
        pytest.importorskip("matplotlib")
    target = tmp_path / "in.log"
    target.write_bytes(LOG.read_bytes())
    result = jroof(*command, cwd=tmp_path, stdin=target)
    one_refusal(result, "in.log", "standard input")
    assert target.read_bytes() == LOG.read_bytes()


@pytest.mark.parametrize("follow", [(), ("--follow",)])
def test_recording_onto_the_replayed_standard_input_is_refused(tmp_path, follow):
    """``record X --replay - < X`` would append X to itself."""
    target = tmp_path / "run.jsonl"
    target.write_bytes(RECORDING.read_bytes())
    result = jroof("record", "run.jsonl", "--replay", "-", *follow, "--speed", "64", "--duration", "5",
                   cwd=tmp_path, stdin=target)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and "run.jsonl" in lines[0] and "replayed" in lines[0], lines
    assert target.read_bytes() == RECORDING.read_bytes()


@pytest.mark.parametrize("command", [
    ("report", "in.log", "--tz", "UTC", "--out", "in.log"),
    ("report", "in.log", "--tz", "UTC", "--out", "alias.log"),  # a hard link: the same file
    ("export", "in.log", "--tz", "UTC", "--out", "t.log", "--trtexec", "t.log"),
    ("report", "in.log", "--tz", "UTC", "--out", "t.log", "--trtexec", "t.log"),
    ("compare", "in.log", str(LOG), "--tz", "UTC", "--out", "in.log"),
])
def test_out_naming_one_of_the_inputs_is_refused(tmp_path, command):
    """The FILE read, or a file a flag reads (``--trtexec``), named again as ``--out``."""
    target = tmp_path / "in.log"
    target.write_bytes(LOG.read_bytes())
    os.link(target, tmp_path / "alias.log")
    (tmp_path / "t.log").write_bytes(b"&&&& RUNNING TensorRT.trtexec\n")
    result = jroof(*command, cwd=tmp_path)
    one_refusal(result, "input")
    assert target.read_bytes() == LOG.read_bytes()
    assert (tmp_path / "t.log").read_bytes() == b"&&&& RUNNING TensorRT.trtexec\n"


@pytest.mark.parametrize("command", [
    ("report", "in.log", "--tz", "UTC"),
    ("report", "-", "--tz", "UTC"),
    ("report", "in.log", "--tz", "UTC", "--out", "-"),
    ("export", "in.log", "--tz", "UTC"),
    ("export", "-", "--tz", "UTC", "--format", "jsonl", "--out", "-"),
    ("parse", "in.log"),
    ("compare", "-", str(LOG), "--tz", "UTC"),
])
def test_standard_output_appended_to_the_input_is_refused(tmp_path, command):
    """``CMD in.log >> in.log`` (and through ``-``): the output would land in the file read,
    which ``parse`` would then read again."""
    target = tmp_path / "in.log"
    target.write_bytes(LOG.read_bytes())
    stdin = target if "-" in command[:2] else None
    result = jroof(*command, cwd=tmp_path, stdin=stdin, stdout=target)
    one_refusal(result, "standard output", "input")
    assert target.read_bytes() == LOG.read_bytes()


def test_record_to_standard_output_appended_to_the_replayed_file_is_refused(tmp_path):
    """``record - --replay X >> X``: the replay would read what it records, without end when
    followed."""
    target = tmp_path / "run.jsonl"
    target.write_bytes(RECORDING.read_bytes())
    result = jroof("record", "-", "--replay", "run.jsonl", "--follow", "--duration", "5", cwd=tmp_path,
                   stdout=target)
    one_refusal(result, "standard output", "run.jsonl")
    assert target.read_bytes() == RECORDING.read_bytes()


def test_other_files_and_a_pipe_on_standard_input_still_work(tmp_path):
    """What is refused is only the input itself: a piped standard input, written to a new file or
    over an unrelated one, goes through."""
    (tmp_path / "other.md").write_text("old\n")
    with open(LOG, "rb") as log:
        piped = subprocess.run([sys.executable, "-m", "jtop_roof", "report", "-", "--tz", "UTC", "--out",
                                "other.md"], capture_output=True, timeout=120,
                               cwd=tmp_path, input=log.read())
    assert piped.returncode == 0, piped.stderr
    assert (tmp_path / "other.md").read_text().startswith("#")

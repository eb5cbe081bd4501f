"""The command line as a user meets it: one-line errors with exit code 2, and `parse` output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def jroof(*args: str, stdin: str | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jtop_roof", *args], input=stdin, capture_output=True,
                          text=True, timeout=60, **kwargs)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--theme", "nope", "--source", "demo"), "unknown theme 'nope'"),
        (("--replay", "/nonexistent.log"), "No such file"),
        (("--replay", "/"), "Is a directory"),
        (("parse", "/nonexistent.log"), "cannot read /nonexistent.log"),
        (("parse", "-", "--tz", "Nowhere/Bad"), "Nowhere/Bad"),
        (("parse", "-", "--interval", "0"), "--interval"),
        (("record", "out.jsonl", "--source", "demo", "--duration", "nan"), "--duration"),
        (("record", "out.jsonl", "--source", "demo", "--duration", "-1"), "--duration"),
        (("--speed", "1000", "record", "out.jsonl"), "--speed"),
        (("--bogus",), "unrecognized arguments"),
        (("mark", "name", "--end"), "--end alone"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(tmp_path, args, needle):
    result = jroof(*args, stdin="", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_parse_reads_stdin_and_reports_lines_that_are_not_samples():
    log = (DATA / "logfile" / "tx2_jp4_date_header.log").read_text()
    result = jroof("parse", "-", stdin=log)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    lines = [line for line in log.splitlines() if line.strip() and not line.startswith("#")]
    assert len(rows) == len(lines)
    assert rows[0]["non_sample"] is True and rows[0]["line"] == lines[0]
    assert rows[1]["t"] is None and len(rows[1]["cpu"]) == 6 and rows[1]["unknown"] == []


def test_parse_of_binary_input_never_fails():
    result = subprocess.run([sys.executable, "-m", "jtop_roof", "parse", "-"], input=bytes(range(256)) * 4,
                            capture_output=True, timeout=60)
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    assert all(json.loads(line)["non_sample"] for line in result.stdout.splitlines())

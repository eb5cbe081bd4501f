"""``-`` where a file goes: ``record -`` streams the recording to standard output, ``--replay -``
and a ``compare`` item read standard input, and what cannot be used is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import write_synthetic
from paths import REPO, TESTS

DATA = TESTS / "data"
RECORDING = DATA / "h200_host_recording.jsonl"
JROOF = [sys.executable, "-m", "jtop_roof"]


def start(args: list[str], cwd: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(JROOF + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), **kw)


def test_record_to_stdout_streams_lines_while_it_runs_and_makes_no_file(tmp_path):
    proc = start(["record", "-", "--source", "demo", "--duration", "6"], tmp_path)
    header = json.loads(proc.stdout.readline())
    first = json.loads(proc.stdout.readline())
    assert proc.poll() is None  # still recording: the lines come as they are recorded
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert header["type"] == "header" and header["app"] == "jroof-tui" and first["type"]
    lines = [json.loads(line) for line in rest.decode().splitlines()]  # nothing else on stdout
    assert any(line["type"] == "sample" for line in lines)
    assert lines[-1] == {**lines[-1], "type": "event", "kind": "note"}  # the closing note, last
    assert not (tmp_path / "-").exists() and not list(tmp_path.iterdir())
    assert b"Traceback" not in err and b"standard output" in err  # what was said went to stderr


def test_a_reader_that_leaves_ends_the_recording_quietly(tmp_path):
    """`record - | head -3`: exit 0, nothing on stderr, no traceback; the source is stopped."""
    proc = start(["record", "-", "--source", "demo", "--duration", "300"], tmp_path)
    got = [proc.stdout.readline() for _ in range(3)]
    proc.stdout.close()
    assert proc.wait(60) == 0
    assert proc.stderr.read() == b""
    assert all(json.loads(line) for line in got)


def test_record_replays_standard_input(tmp_path):
    with open(RECORDING, "rb") as stdin:
        done = subprocess.run(JROOF + ["record", "-", "--replay", "-", "--speed", "64"], stdin=stdin,
                              cwd=tmp_path, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    played = [json.loads(line) for line in done.stdout.decode().splitlines()]
    original = [json.loads(line) for line in RECORDING.read_text().splitlines()]
    assert [s["mono"] for s in played if s["type"] == "sample"] == \
        [s["mono"] for s in original if s["type"] == "sample"]
    assert os.path.basename(played[0]["file"]).startswith("jroof-stdin-")  # where it was spooled
    assert not os.path.exists(played[0]["file"])  # and removed after
    assert not list(tmp_path.iterdir())


def test_replay_of_standard_input_follows_it_as_it_comes(tmp_path):
    """--follow: the spool grows as standard input comes; what comes after the start is played."""
    lines = RECORDING.read_text().splitlines(keepends=True)
    proc = start(["record", "-", "--replay", "-", "--follow", "--speed", "64"], tmp_path,
                 stdin=subprocess.PIPE)
    proc.stdin.write("".join(lines[:10]).encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["type"] == "header"
    later = [json.loads(line) for line in lines[10:] if '"type":"sample"' in line]
    proc.stdin.write("".join(lines[10:]).encode())
    proc.stdin.flush()
    while True:  # until the last sample written after the start is played (or the test times out)
        record = json.loads(proc.stdout.readline())
        if record.get("type") == "sample" and record["mono"] == later[-1]["mono"]:
            break
    proc.stdin.close()
    proc.terminate()
    assert proc.wait(60) == 0


@pytest.mark.parametrize("stdin", ["/dev/null", "/dev/zero"])
def test_standard_input_that_is_not_a_pipe_or_a_file_is_refused(tmp_path, stdin):
    with open(stdin, "rb") as device:
        done = subprocess.run(JROOF + ["record", str(tmp_path / "r.jsonl"), "--replay", "-"], stdin=device,
                              capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1 and "not a pipe or a file" in done.stderr.decode()
    assert not list(tmp_path.iterdir())


def test_a_closed_or_terminal_standard_input_is_refused(tmp_path):
    closed = subprocess.run(JROOF + ["report", "-"], stdin=subprocess.DEVNULL, capture_output=True,
                            timeout=60, preexec_fn=lambda: os.close(0))
    assert closed.returncode == 2 and b"closed" in closed.stderr and closed.stderr.count(b"\n") == 1
    main, other = os.openpty()
    try:
        tty = subprocess.run(JROOF + ["export", "-"], stdin=other, capture_output=True, timeout=60)
    finally:
        os.close(main)
        os.close(other)
    assert tty.returncode == 2 and b"is a terminal" in tty.stderr and tty.stderr.count(b"\n") == 1


def test_the_monitor_refuses_to_record_into_its_screen_or_replay_stdin_without_a_terminal(tmp_path):
    screen = subprocess.run(JROOF + ["--source", "demo", "--record", "-"], capture_output=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert screen.returncode == 2 and b"jroof-tui record -" in screen.stderr
    with open(RECORDING, "rb") as stdin:
        keyless = subprocess.run(JROOF + ["--replay", "-"], stdin=stdin, capture_output=True, timeout=60,
                                 start_new_session=True)  # no controlling terminal
    assert keyless.returncode == 2 and b"terminal" in keyless.stderr
    assert keyless.stderr.count(b"\n") == 1


def test_compare_takes_standard_input_once(tmp_path):
    run = tmp_path / "run.jsonl"
    write_synthetic(run)
    with open(run, "rb") as stdin:
        done = subprocess.run(JROOF + ["compare", str(run), "-", "--format", "json"], stdin=stdin,
                              capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["items"]
    assert [i["label"] for i in items] == ["run", "stdin"] and items[1]["file"] == "-"
    assert {k: v for k, v in items[0].items() if k not in ("label", "file")} == \
        {k: v for k, v in items[1].items() if k not in ("label", "file")}
    with open(run, "rb") as stdin:
        twice = subprocess.run(JROOF + ["compare", "-", str(run), "-"], stdin=stdin, capture_output=True,
                               timeout=60)
    assert twice.returncode == 2 and b"read once" in twice.stderr and twice.stderr.count(b"\n") == 1


def test_run_refuses_to_record_to_standard_output(tmp_path):
    """The workload's own output goes there: `run --record -` is one line and exit 2, and makes
    no file named `-`."""
    done = subprocess.run(JROOF + ["run", "--headless", "--record", "-", "--", "true"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "run --record -" in done.stderr
    assert not (tmp_path / "-").exists()

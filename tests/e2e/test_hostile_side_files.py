"""Side files, outputs over inputs, the workload's process group and the server's
deadline, as an attacker or a careless second run would meet them. Each case failed on main at
5394437 (checked with that commit's command line)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from cli_support import jroof
from factories import write_synthetic
from paths import REPO
from source_support import finishes
from tui_support import ScriptedSource

from jtop_roof.formats.userfiles import create_output
from jtop_roof.model.errors import UserError
from jtop_roof.runtime.child import Child
from jtop_roof.runtime.config import Config

ROOT = REPO
WAIT_S = 60


@pytest.fixture
def run_env(tmp_path) -> dict[str, str]:
    """Our own marker sockets, and a fake ``trtexec`` first on PATH."""
    folder = tmp_path / "xdg"
    folder.mkdir(mode=0o700)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "trtexec"
    fake.write_text("#!/bin/sh\nfor n in 1 2 3; do echo \"[I] fake trtexec line $n\"; done\n")
    fake.chmod(0o755)
    return dict(os.environ, XDG_RUNTIME_DIR=str(folder), PATH=f"{bin_dir}:{os.environ['PATH']}",
                PYTHONPATH=str(ROOT))


def test_a_side_file_is_never_written_through_a_link(tmp_path):
    victim = tmp_path / "notes.txt"
    victim.write_text("mine\n")
    link = tmp_path / "bench.jsonl.out"
    link.symlink_to(victim)
    with pytest.raises(UserError, match="symbolic link"):
        Child(["true"], on_exit=lambda: None, log=str(link), on_screen=False)
    assert victim.read_text() == "mine\n"
    with pytest.raises(UserError, match="input"):
        create_output(tmp_path / "notes.txt", inputs=[str(victim)])
    fd = create_output(tmp_path / "private.json", private=True)
    os.close(fd)
    assert (tmp_path / "private.json").stat().st_mode & 0o777 == 0o600


def test_a_second_trtexec_run_into_one_recording_keeps_the_first_output(tmp_path, run_env):
    out = tmp_path / "engine.jsonl"
    first = jroof("run", "--headless", "--record", str(out), "--source", "demo", "--", "trtexec",
                  "--int8", env=run_env)
    kept = Path(f"{out}.trtexec.log")
    assert first.returncode == 0, first.stderr
    before = kept.read_bytes()
    assert b"fake trtexec line 3" in before
    again = jroof("run", "--headless", "--record", str(out), "--source", "demo", "--", "trtexec",
                  "--fp16", env=run_env)
    assert again.returncode == 2 and "earlier run's trtexec output" in again.stderr
    assert kept.read_bytes() == before


def test_trtexec_with_our_stdout_closed_still_ends_and_keeps_its_output(tmp_path, run_env):
    out = tmp_path / "closed.jsonl"
    script = (f"exec {sys.executable} -m jtop_roof run --headless --record {out} --source demo "
              "-- trtexec >&-")
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=WAIT_S,
                          cwd=ROOT, env=run_env)
    assert done.returncode == 0, done.stderr
    assert b"fake trtexec line 3" in Path(f"{out}.trtexec.log").read_bytes()


@pytest.mark.parametrize("command", [["report", "{f}", "--out", "{f}"],
                                     ["compare", "{f}", "{f}", "--out", "{f}"],
                                     ["export", "{f}", "--out", "{f}"]])
def test_an_output_is_never_written_over_the_commands_input(tmp_path, command):
    recording = tmp_path / "held.jsonl"
    write_synthetic(recording)
    before = recording.read_bytes()
    done = jroof(*[arg.format(f=recording) for arg in command])
    assert done.returncode == 2 and "input" in done.stderr, done.stderr
    assert recording.read_bytes() == before


def test_record_refuses_to_append_to_what_it_cannot_read_back(tmp_path):
    newer = tmp_path / "future.jsonl"
    newer.write_text(json.dumps({"type": "header", "app": "jroof-tui", "schema": 7}) + "\n")
    plain = tmp_path / "tegrastats.log"
    plain.write_text("RAM 1/2MB CPU [1%@100]\n")
    for path in (newer, plain):
        before = path.read_bytes()
        done = jroof("record", str(path), "--source", "demo", "--duration", "1")
        assert done.returncode == 2 and "record to another file" in done.stderr, done.stderr
        assert path.read_bytes() == before


def test_signals_end_the_workloads_children_and_say_how_it_ended(tmp_path, run_env):
    pid_file = tmp_path / "sleeper.pid"
    workload = f"sleep 300 & echo $! > {pid_file}; wait"
    run = subprocess.Popen([sys.executable, "-m", "jtop_roof", "run", "--headless", "--record",
                            str(tmp_path / "t.jsonl"), "--source", "demo", "--", "sh", "-c", workload],
                           cwd=ROOT, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_S
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the workload never started"
        time.sleep(0.05)
    sleeper = int(pid_file.read_text())
    run.send_signal(signal.SIGTERM)
    assert run.wait(WAIT_S) == 128 + signal.SIGTERM  # the workload's status: ended by our SIGTERM
    run.stdout.close()
    run.stderr.close()
    deadline = time.monotonic() + WAIT_S
    while alive(sleeper):
        assert time.monotonic() < deadline, "the workload's child outlived the run"
        time.sleep(0.05)
    crashed = jroof("run", "--headless", "--record", str(tmp_path / "s.jsonl"), "--source", "demo", "--",
                    "sh", "-c", "kill -SEGV $$", env=run_env)
    assert crashed.returncode == 128 + signal.SIGSEGV, crashed.stderr


def alive(pid: int) -> bool:
    """True while the process runs; a zombie counts as gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_trickling_clients_cannot_keep_the_metrics_from_answering():
    from jtop_roof.outputs import serve as sv
    from jtop_roof.runtime.runtime import Runtime

    runtime = Runtime(ScriptedSource([]), Config())
    server = sv.MetricsServer(sv.Metrics(runtime.pipeline, source_kind="host"), "127.0.0.1", 0)
    server.start()
    host, port = server.address
    tricklers = []
    try:
        for _ in range(sv.MAX_CONCURRENT + 5):  # more than the answers rendered at once
            client = socket.create_connection((host, port))
            client.sendall(b"G")
            tricklers.append(client)
        reply = finishes(lambda: urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5).read())
        assert b"jroof_info" in reply
    finally:
        for client in tricklers:
            client.close()
        server.close()


def test_run_refuses_to_start_its_workload_when_markers_would_be_lost(tmp_path, monkeypatch, capsys):
    """A fallback marker folder planted by another user: the workload's phases could not reach the
    monitor, so `run` refuses (one line, exit 2) unless told to go on without them."""
    from jtop_roof.commands.main import main
    from jtop_roof.runtime import control

    planted = tmp_path / f"jroof-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)
    monkeypatch.setattr(control, "FALLBACK_PARENT", tmp_path)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    out, touched = tmp_path / "r.jsonl", tmp_path / "ran"
    workload = ["--", "touch", str(touched)]
    assert main(["run", "--headless", "--record", str(out), "--source", "demo", *workload]) == 2
    assert "markers from scripts are off" in capsys.readouterr().err
    assert not touched.exists() and not out.exists()


def test_a_figure_is_never_drawn_through_a_link(tmp_path):
    pytest.importorskip("matplotlib")
    recording = tmp_path / "held.jsonl"
    write_synthetic(recording)
    victim = tmp_path / "thesis.tex"
    victim.write_text("chapter 1\n")
    (tmp_path / "held.png").symlink_to(victim)  # where `plot held.jsonl` draws by default
    done = subprocess.run([sys.executable, "-m", "jtop_roof", "plot", str(recording)], capture_output=True,
                          text=True, timeout=WAIT_S, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2 and "symbolic link" in done.stderr, done.stderr
    assert victim.read_text() == "chapter 1\n"


def test_a_workload_that_ignores_sigterm_is_killed_after_the_grace(tmp_path, monkeypatch):
    """The TUI's `run` and headless alike stop it through Child.stop: bounded, whatever it traps."""
    from jtop_roof.runtime import child as child_module

    monkeypatch.setattr(child_module, "STOP_GRACE_S", 0.5)
    ready = tmp_path / "trapped"
    stubborn = Child(["sh", "-c", f"trap '' TERM; touch {ready}; while :; do sleep 1; done"],
                     on_exit=lambda: None, log=None, on_screen=False)
    deadline = time.monotonic() + WAIT_S
    while not ready.exists():
        assert time.monotonic() < deadline, "the workload never started"
        time.sleep(0.05)
    finishes(stubborn.stop)
    assert stubborn.status == 128 + signal.SIGKILL

"""Markers from benchmark scripts over the per-user Unix socket."""

import json
import os
import signal
import socket
import stat
import struct
import subprocess
import sys
import time

import pytest

from jtop_roof.control import ControlError, MarkerListener, control_dir, send_marker


@pytest.fixture
def runtime_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    return tmp_path


def test_marker_reaches_listener_and_socket_is_private(runtime_dir):
    received = []
    listener = MarkerListener(lambda kind, name: received.append((kind, name)))
    path = listener.start()
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert send_marker("phase_start", "resnet50 int8") == 1
        assert send_marker("phase_end", None) == 1
    finally:
        listener.close()
    assert received == [("phase_start", "resnet50 int8"), ("phase_end", None)]
    assert not path.exists()


def test_stale_socket_is_removed_and_not_counted(runtime_dir):
    directory = control_dir()
    stale = directory / "999999.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(stale))
    sock.close()  # bound but nobody listens: a monitor that died
    assert send_marker("phase_start", "x") == 0
    assert not stale.exists()


def test_bad_messages_are_refused_without_calling_back(runtime_dir):
    received = []
    listener = MarkerListener(lambda kind, name: received.append((kind, name)))
    path = listener.start()
    try:
        for payload in (b"not json\n", b'{"kind": "explode"}\n', b'{"name": "x"}\n'):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(path))
                sock.sendall(payload)
                assert sock.recv(256).startswith(b"error")
    finally:
        listener.close()
    assert received == []


def test_rejects_a_directory_others_can_enter(tmp_path):
    shared = tmp_path / "jroof"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    with pytest.raises(ControlError):
        control_dir({"XDG_RUNTIME_DIR": str(tmp_path)})


def test_names_are_validated():
    with pytest.raises(ValueError):
        send_marker("phase_start", "x" * 500)
    with pytest.raises(ValueError):
        send_marker("phase_start", "bad\x1b[31m")


def test_mark_command_lands_in_headless_recording(runtime_dir, tmp_path):
    out = tmp_path / "rec.jsonl"
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir), PYTHONUNBUFFERED="1")
    recorder = subprocess.Popen(
        [sys.executable, "-m", "jtop_roof", "record", str(out), "--source", "demo", "--speed", "4",
         "--duration", "60"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not list((runtime_dir / "jroof").glob("*.sock")) and time.monotonic() < deadline:
            time.sleep(0.05)
        mark = [sys.executable, "-m", "jtop_roof", "mark"]
        assert subprocess.run([*mark, "warmup"], env=env, timeout=30).returncode == 0
        assert subprocess.run([*mark, "--end"], env=env, timeout=30).returncode == 0
        assert subprocess.run([*mark], env=env, timeout=30).returncode == 0
    finally:
        recorder.send_signal(signal.SIGTERM)
        recorder.wait(timeout=30)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    markers = [(r["kind"], r["name"], r["origin"]) for r in lines if r["type"] == "marker"]
    assert markers == [("phase_start", "warmup", "script"), ("phase_end", None, "script"),
                       ("phase_start", "phase 2", "script")]
    assert all(r["mono"] is not None for r in lines if r["type"] == "marker")


def test_mark_without_monitor_says_so(runtime_dir):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    result = subprocess.run([sys.executable, "-m", "jtop_roof", "mark", "x"], env=env,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "no running jroof-tui" in result.stderr and "Traceback" not in result.stderr


def test_listener_survives_a_client_that_leaves_early_and_a_failing_callback(runtime_dir):
    received = []

    def on_marker(kind, name):
        if name == "disk full":
            raise OSError(28, "No space left on device")
        received.append(name)

    listener = MarkerListener(on_marker)
    path = listener.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.connect(str(path))
            sock.sendall(b'{"kind": "phase_start", "name": "hasty"}\n')
        # the failing callback is reported to the client, and the listener keeps serving
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(path))
            sock.sendall(b'{"kind": "phase_start", "name": "disk full"}\n')
            assert sock.recv(256).startswith(b"error: OSError")
        assert send_marker("phase_start", "later") == 1
    finally:
        listener.close()
    assert received == ["hasty", "later"]

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
from source_support import WAIT_S

from jtop_roof.runtime.control import MAX_CLIENTS, ControlError, MarkerListener, control_dir, send_marker

#: A read timeout no test waits out: a client dropped for idling would be dropped only after it.
IDLE_FOR_EVER_S = 3600.0


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


# --- clients served at once ---------------------------------------------------------------------


def idle_clients(path, count):
    """Clients that connect and say nothing (a stuck script, a port scanner of this user)."""
    socks = []
    for _ in range(count):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(path))
        socks.append(sock)
    return socks


def test_an_idle_client_does_not_delay_another_clients_marker(runtime_dir):
    received = []
    # Idle clients are dropped only after IDLE_FOR_EVER_S, far past send_marker's own wait for a
    # reply: the marker is delivered only if it is served while the idle client still waits.
    listener = MarkerListener(lambda kind, name: received.append(name), read_timeout_s=IDLE_FOR_EVER_S)
    path = listener.start()
    (idle,) = idle_clients(path, 1)
    try:
        assert send_marker("phase_start", "on time") == 1
        assert received == ["on time"]  # handed over on arrival, not after the idle client's timeout
        idle.setblocking(False)
        with pytest.raises(BlockingIOError):
            idle.recv(256)  # still connected and unanswered: served alongside, not dropped first
    finally:
        idle.close()
        listener.close()


@pytest.mark.parametrize("count", [3, MAX_CLIENTS + 8])
def test_many_idle_clients_do_not_make_send_marker_fail(runtime_dir, count):
    received = []
    listener = MarkerListener(lambda kind, name: received.append(name), read_timeout_s=IDLE_FOR_EVER_S)
    path = listener.start()
    idle = idle_clients(path, count)
    try:
        for name in ("a", "b", "c"):
            assert send_marker("phase_start", name) == 1
    finally:
        for sock in idle:
            sock.close()
        listener.close()
    assert received == ["a", "b", "c"]


def test_an_idle_client_is_told_and_dropped(runtime_dir):
    listener = MarkerListener(lambda kind, name: None, read_timeout_s=0.2)
    path = listener.start()
    try:
        (idle,) = idle_clients(path, 1)
        with idle:
            idle.settimeout(WAIT_S)
            assert idle.recv(256) == b"error: no marker within 0.2 s\n"
    finally:
        listener.close()


def test_oversized_clients_are_told_and_a_line_in_pieces_still_counts(runtime_dir):
    received = []
    listener = MarkerListener(lambda kind, name: received.append(name), read_timeout_s=IDLE_FOR_EVER_S)
    path = listener.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(WAIT_S)
            sock.connect(str(path))
            sock.sendall(b"{" * 10_000)  # no newline, ever
            assert sock.recv(256).startswith(b"error: a message is at most 4096 bytes")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(WAIT_S)
            sock.connect(str(path))
            for piece in (b'{"kind": "phase_', b'start", "name": "slow"}', b"\n"):
                sock.sendall(piece)
                time.sleep(0.02)  # pacing, so that the pieces arrive apart
            assert sock.recv(256) == b"ok\n"
    finally:
        listener.close()
    assert received == ["slow"]


@pytest.mark.parametrize(
    "payload",
    [b"[1, 2]\n", b'{"kind": "phase_start", "name": 7}\n', b'{"kind": ["phase_start"]}\n', b"\xff\xfe\n",
     b"[" * 3000 + b"\n", b"\n"],
)
def test_odd_json_is_an_error_reply(runtime_dir, payload):
    received = []
    listener = MarkerListener(lambda kind, name: received.append(name))
    path = listener.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(path))
            sock.sendall(payload)
            reply = sock.recv(256)
        assert reply.startswith(b"error: ") and reply.endswith(b"\n") and reply.count(b"\n") == 1
        assert send_marker("phase_end", None) == 1  # still serving
    finally:
        listener.close()
    assert received == [None]


def test_close_ends_idle_clients_at_once(runtime_dir):
    listener = MarkerListener(lambda kind, name: None, read_timeout_s=IDLE_FOR_EVER_S)
    path = listener.start()
    idle = idle_clients(path, 5)
    assert send_marker("phase_end", None) == 1  # served after them: every idle client is accepted
    listener.close()
    assert not path.exists()
    for sock in idle:  # told now: their own timeout is far away
        with sock:
            sock.settimeout(WAIT_S)
            assert sock.recv(256) == b"error: the monitor is closing\n"


def test_the_benchmark_is_the_hook_itself_or_the_script_that_ran_mark(runtime_dir):
    """A hook in the workload marks its own process; `jroof-tui mark`, a short-lived helper, marks
    the script that ran it (its parent), whose tree is the benchmark."""
    from jtop_roof.sources.processes import BENCHMARK

    listener = MarkerListener(lambda kind, name: None)
    listener.start()
    try:
        assert send_marker("phase_start", "in process") == 1
        assert os.getpid() in BENCHMARK.pids()
        script = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -m jtop_roof mark warmup; exit $?'],
                                  env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir)))
        assert script.wait(timeout=30) == 0
    finally:
        listener.close()
    assert script.pid in BENCHMARK.pids()

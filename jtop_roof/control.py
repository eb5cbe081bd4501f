"""Phase markers from benchmark scripts: ``jroof-tui mark NAME`` / ``jroof-tui mark --end``.

Each running monitor (TUI or headless ``record``) listens on its own Unix socket,
``<control dir>/<pid>.sock``, mode 0600 inside a 0700 directory owned by the user
(``$XDG_RUNTIME_DIR/jroof``, else ``/tmp/jroof-<uid>``). No network listener, nothing another user
can reach. ``send_marker`` delivers one marker to every monitor of this user and removes sockets
left behind by monitors that died. The monitor stamps the marker with its own clocks on receipt,
so a marker lines up with the samples around it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from jtop_roof.model import MARKER_KINDS

MAX_NAME_CHARS = 200
_MAX_MESSAGE_BYTES = 4096


class ControlError(OSError):
    """The control directory is unsafe or unusable (one line for the user)."""


def control_dir(environ: dict[str, str] | None = None) -> Path:
    """The per-user directory of monitor sockets, created 0700; refuses one that others could use."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR")
    path = Path(runtime) / "jroof" if runtime else Path(f"/tmp/jroof-{os.getuid()}")
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise ControlError(f"cannot use {path}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ControlError(f"refusing {path}: it must be a directory of yours with mode 0700")
    return path


def _validate(kind: str, name: str | None) -> None:
    if kind not in MARKER_KINDS:
        raise ValueError(f"marker kind must be one of {', '.join(MARKER_KINDS)}")
    if name is not None and (len(name) > MAX_NAME_CHARS or not name.isprintable()):
        raise ValueError(f"a phase name is at most {MAX_NAME_CHARS} printable characters")


class MarkerListener:
    """Accepts markers for one monitor and hands them to ``on_marker(kind, name)`` from its thread."""

    def __init__(self, on_marker: Callable[[str, str | None], None], directory: Path | None = None):
        self._on_marker = on_marker
        self._directory = directory
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self.path: Path | None = None

    def start(self) -> Path:
        directory = self._directory or control_dir()
        path = directory / f"{os.getpid()}.sock"
        path.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # the socket file is created 0600, never briefly wider
        try:
            sock.bind(str(path))
        finally:
            os.umask(old_umask)
        sock.listen(8)
        self._sock, self.path = sock, path
        self._thread = threading.Thread(target=self._serve, name="jroof-markers", daemon=True)
        self._thread.start()
        return path

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            with conn:
                conn.settimeout(2.0)
                reply = self._handle(conn)
                try:
                    conn.sendall(reply.encode() + b"\n")
                except OSError:
                    pass  # the client left before the reply (or timed out): the marker still counts

    def _handle(self, conn: socket.socket) -> str:
        data = b""
        try:
            while b"\n" not in data and len(data) < _MAX_MESSAGE_BYTES:
                chunk = conn.recv(_MAX_MESSAGE_BYTES)
                if not chunk:
                    break
                data += chunk
            message = json.loads(data.decode("utf-8"))
            kind, name = message["kind"], message.get("name")
            _validate(kind, name)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"error: {exc}"
        try:
            self._on_marker(kind, name)
        except Exception as exc:  # e.g. the recording's disk is full: say so, keep listening
            return f"error: {type(exc).__name__}: {exc}"
        return "ok"


def start_listener(on_marker: Callable[[str, str | None], None]) -> MarkerListener | None:
    """Listen for ``jroof-tui mark`` in a monitor; without the channel the monitor still runs, and
    says so on stderr (one line)."""
    listener = MarkerListener(on_marker)
    try:
        listener.start()
    except OSError as exc:  # ControlError included
        print(f"jroof-tui: markers from scripts are off: {exc}", file=sys.stderr)
        return None
    return listener


def send_marker(kind: str, name: str | None, directory: Path | None = None) -> int:
    """Send a marker to every running monitor of this user; returns how many took it."""
    _validate(kind, name)
    directory = directory or control_dir()
    payload = json.dumps({"kind": kind, "name": name}).encode() + b"\n"
    delivered = 0
    for path in sorted(directory.glob("*.sock")):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(2.0)
                sock.connect(str(path))
                sock.sendall(payload)
                reply = sock.recv(256).decode("utf-8", "replace")
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink(missing_ok=True)  # its monitor is gone
            continue
        except OSError:
            continue
        if reply.startswith("ok"):
            delivered += 1
    return delivered

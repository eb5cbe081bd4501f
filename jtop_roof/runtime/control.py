"""Phase markers from benchmark scripts: ``jroof-tui mark NAME`` / ``jroof-tui mark --end``.

Each running monitor (TUI or headless ``record``) listens on its own Unix socket,
``<control dir>/<pid>.sock`` (live monitors and the demo: a replay of a file opens
none, ``takes_script_markers``), mode 0600 inside a 0700 directory owned by the user
(``$XDG_RUNTIME_DIR/jroof``, else ``/tmp/jroof-<uid>``). No network listener, nothing another user
can reach: a directory in its place that is not ours and private (another user can create
``/tmp/jroof-<uid>`` first) is refused with a ``ControlError`` saying what to do. ``send_marker``
delivers one marker to every monitor of this user at once and removes sockets left behind by
monitors that died; it waits ``REPLY_WAIT_S`` in all for their replies and skips a monitor that is
stopped (Ctrl-Z), so such a monitor costs a benchmark nothing. The monitor stamps the marker with its
own clocks on receipt, so a marker lines up with the samples around it.

One thread serves every client at once (``selectors``): a client that connects and says nothing,
or many of them, never delays another's marker. Each client has ``READ_TIMEOUT_S`` to send one
line of at most ``_MAX_MESSAGE_BYTES``; past ``MAX_CLIENTS`` open connections the oldest is dropped.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jtop_roof.model.errors import UserError
from jtop_roof.model.metrics import for_terminal
from jtop_roof.model.records import MARKER_KINDS, MAX_WORK_AMOUNT, MAX_WORK_ITERATIONS
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.sources.processes import BENCHMARK

MAX_NAME_CHARS = 200
_MAX_MESSAGE_BYTES = 4096
#: A client's time to send its line (``send_marker`` sends at once); then it is told and dropped.
READ_TIMEOUT_S = 1.0
#: Connections open at once; a new one past this drops the oldest (idle the longest).
MAX_CLIENTS = 32
#: How long ``send_marker``/``send_work`` wait for every monitor's reply, all together (stopped
#: monitors are skipped). A live monitor answers in a millisecond; one that misses this still takes
#: the marker, uncounted.
REPLY_WAIT_S = 1.0


class ControlError(UserError, OSError):
    """The control directory is unsafe or unusable, or the marker channel cannot open (one line
    for the user)."""


#: Where the socket directory goes without ``$XDG_RUNTIME_DIR`` (shared by every user).
FALLBACK_PARENT = Path("/tmp")


def control_dir(environ: dict[str, str] | None = None) -> Path:
    """The per-user directory of monitor sockets, created 0700. Refuses one that is a symbolic
    link, not ours, or open to others: another user could read or plant sockets there."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR")
    path = Path(runtime) / "jroof" if runtime else FALLBACK_PARENT / f"jroof-{os.getuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass  # ours from an earlier run, or planted: checked below
    except OSError as exc:
        raise ControlError(f"cannot use {path}: {exc.strerror or exc}") from None
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ControlError(f"cannot use {path}: {exc.strerror or exc}") from None
    problem = _unsafe(info)
    if problem is not None:
        fix = "remove it" if runtime else "remove it, or set XDG_RUNTIME_DIR to a private directory"
        raise ControlError(f"refusing {path}: {problem} (another user may have made it first); markers "
                           f"need a directory of yours with mode 0700: {fix}")
    return path


def _unsafe(info: os.stat_result) -> str | None:
    """Why a directory with this ``lstat`` cannot hold our sockets, or None."""
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if info.st_uid != os.getuid():
        return f"it belongs to uid {info.st_uid}"
    if info.st_mode & 0o077:
        return f"others can use it (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _validate(kind: Any, name: Any) -> tuple[str, str | None]:
    """(kind, name) when they make a marker (from the command line or a client's JSON)."""
    if not isinstance(kind, str) or kind not in MARKER_KINDS:
        raise ValueError(f"marker kind must be one of {', '.join(MARKER_KINDS)}")
    if name is None or (isinstance(name, str) and len(name) <= MAX_NAME_CHARS and name.isprintable()):
        return kind, name
    raise ValueError(f"a phase name is at most {MAX_NAME_CHARS} printable characters")


@dataclass(frozen=True, slots=True)
class WorkReport:
    """``{"kind": "work", "iterations": n, "flops": f, "bytes": b, "precision": p}``: work done since
    the last report (FLOPs and bytes in total over the n iterations; all but n optional)."""

    iterations: float
    flops: float | None = None
    bytes: float | None = None
    precision: str | None = None


def _amount(message: dict[str, Any], key: str, required: bool = False) -> float | None:
    value = message.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_WORK_AMOUNT:
        raise ValueError(f"work '{key}' must be a number from 0 to {MAX_WORK_AMOUNT:g}")
    return float(value)


def work_report(message: dict[str, Any]) -> WorkReport:
    """Check a work message (from a client, or ``mark --work``); ValueError says what is wrong."""
    iterations = _amount(message, "iterations", required=True)
    assert iterations is not None
    if iterations > MAX_WORK_ITERATIONS:
        raise ValueError(f"work 'iterations' must be at most {MAX_WORK_ITERATIONS:g}")
    precision = message.get("precision")
    if precision is not None and not (isinstance(precision, str) and 0 < len(precision) <= 32
                                      and precision.isprintable()):
        raise ValueError("work 'precision' must be a short name such as bf16, fp16 or int8")
    return WorkReport(iterations, _amount(message, "flops"), _amount(message, "bytes"), precision)


@dataclass
class _Client:
    deadline: float
    data: bytearray = field(default_factory=bytearray)


class MarkerListener:
    """Accepts markers for one monitor and hands them to ``on_marker(kind, name)`` from its thread,
    each as it arrives."""

    def __init__(
        self,
        on_marker: Callable[[str, str | None], None],
        directory: Path | None = None,
        *,
        read_timeout_s: float = READ_TIMEOUT_S,
        on_work: Callable[[WorkReport], None] | None = None,
    ):
        self._on_marker = on_marker
        self._on_work = on_work
        self._directory = directory
        self._read_timeout_s = read_timeout_s
        self._selector = selectors.DefaultSelector()
        self._clients: dict[socket.socket, _Client] = {}  # in order of arrival: the oldest first
        self._wake_r, self._wake_w = socket.socketpair()  # close() writes to it to end the loop
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
        except OSError:
            sock.close()
            raise
        finally:
            os.umask(old_umask)
        sock.listen(MAX_CLIENTS)
        sock.setblocking(False)
        self.path = path
        self._thread = threading.Thread(target=self._serve, args=(sock,), name="jroof-markers", daemon=True)
        self._thread.start()
        return path

    def close(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)  # no new client finds this monitor
        if self._thread is None:  # never started: nothing serves, the loop's resources are ours
            self._selector.close()
            self._wake_r.close()
        else:
            try:
                self._wake_w.send(b"x")
            except OSError:
                pass  # closed already
            self._thread.join(timeout=2)
        self._wake_w.close()

    def _serve(self, listener: socket.socket) -> None:
        selector = self._selector
        with selector, listener, self._wake_r:
            selector.register(listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            try:
                while True:
                    deadline = min((c.deadline for c in self._clients.values()), default=None)
                    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                    for key, _ in selector.select(timeout):
                        if key.fileobj is self._wake_r:
                            return
                        if key.fileobj is listener:
                            self._accept(listener)
                        elif isinstance(key.fileobj, socket.socket):
                            self._read(key.fileobj)
                    now = time.monotonic()
                    for conn in [c for c, client in self._clients.items() if client.deadline <= now]:
                        self._finish(conn, f"error: no marker within {self._read_timeout_s:g} s")
            finally:
                for conn in list(self._clients):
                    self._finish(conn, "error: the monitor is closing")

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # none left (BlockingIOError), or out of file descriptors: try later
                return
            conn.setblocking(False)
            self._selector.register(conn, selectors.EVENT_READ)
            self._clients[conn] = _Client(time.monotonic() + self._read_timeout_s)
            if len(self._clients) > MAX_CLIENTS:
                self._finish(next(iter(self._clients)), "error: too many connections")

    def _read(self, conn: socket.socket) -> None:
        client = self._clients[conn]
        try:
            chunk = conn.recv(_MAX_MESSAGE_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""  # the client is gone; what it sent before still counts
        client.data += chunk
        line, newline, _ = client.data.partition(b"\n")
        if newline or not chunk:
            reply, for_parent = self._handle(bytes(line))
            if reply == "ok":
                _mark_benchmark(conn, for_parent)
            self._finish(conn, reply)
        elif len(client.data) > _MAX_MESSAGE_BYTES:
            self._finish(conn, f"error: a message is at most {_MAX_MESSAGE_BYTES} bytes")

    def _finish(self, conn: socket.socket, reply: str) -> None:
        del self._clients[conn]
        self._selector.unregister(conn)
        try:
            conn.send(reply.encode("utf-8", "replace")[:255] + b"\n")  # fits any socket buffer at once
        except OSError:
            pass  # the client left before the reply: the marker still counts
        conn.close()

    def _handle(self, line: bytes) -> tuple[str, bool]:
        """The reply, and whether the sender spoke for its parent (``FOR_PARENT``)."""
        try:
            message = json.loads(line.decode("utf-8"))
            if not isinstance(message, dict):
                raise ValueError("expected a JSON object")
            if message.get("kind") == "work":
                report = work_report(message)
            else:
                kind, name = _validate(message.get("kind"), message.get("name"))
        except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors are ValueErrors
            return f"error: {exc}", False
        try:
            if message.get("kind") == "work":
                if self._on_work is None:
                    return "error: this monitor takes no work reports", False
                self._on_work(report)
            else:
                self._on_marker(kind, name)
        except Exception as exc:  # e.g. the recording's disk is full: say so, keep listening
            return f"error: {type(exc).__name__}: {exc}", False
        return "ok", message.get("for") == FOR_PARENT


#: What ``jroof-tui mark`` says in its message: it is a short-lived helper, and the benchmark is the
#: script (or shell) that ran it, its parent.
FOR_PARENT = "parent"


def _mark_benchmark(conn: socket.socket, for_parent: bool) -> None:
    """The process that reported (the socket's peer, Linux ``SO_PEERCRED``), or its parent where it
    spoke for it, is the benchmark's: its tree is marked in the process readings. The peer is alive
    here (it waits for the reply), so its parent is read from /proc before it can go."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return
    try:
        pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except (OSError, struct.error):
        return
    if for_parent:
        pid = _parent_pid(pid)
    if pid > 1:  # never init's tree: that is every process
        BENCHMARK.add(pid)


def _parent_pid(pid: int) -> int:
    """``pid``'s parent from /proc (0 where it cannot be read): the fields after the command's
    closing parenthesis are state, then the parent's id."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read(4096).rpartition(b")")[2].split()
        return int(fields[1])
    except (OSError, ValueError, IndexError):
        return 0


def takes_script_markers(sources: Sequence[Source]) -> bool:
    """Whether a monitor of ``sources`` opens a marker channel: a live one does; a replay of a
    file takes keys only, as a script marking now has nothing to do with a file's past (its phase
    would land at whatever sample the replay shows). A replay that follows a growing log watches
    a live run, and the demo plays as one (to try ``mark`` on): they take them."""
    return any(not isinstance(source, ReplayControls) or source.follow_enabled or source.kind == "demo"
               for source in sources)


def start_listener(
    on_marker: Callable[[str, str | None], None], on_work: Callable[[WorkReport], None] | None = None,
    *, required: bool = False,
) -> MarkerListener | None:
    """Listen for ``jroof-tui mark`` (and work reports) in a monitor. Without the channel the
    monitor still runs and says so on stderr (one line); ``required``: raise ``ControlError``
    instead (``run``, whose workload's markers would be lost)."""
    listener = MarkerListener(on_marker, on_work=on_work)
    try:
        listener.start()
    except OSError as exc:  # ControlError included
        listener.close()
        problem = f"markers from scripts are off: {exc}"
        if required:
            raise ControlError(problem) from None
        print(for_terminal(f"jroof-tui: {problem}"), file=sys.stderr)
        return None
    return listener


def send_marker(kind: str, name: str | None, directory: Path | None = None, *,
                for_parent: bool = False) -> int:
    """Send a marker to every running monitor of this user; returns how many took it.
    ``for_parent``: the benchmark is this process's parent (``jroof-tui mark`` from a script)."""
    _validate(kind, name)
    return _send({"kind": kind, "name": name}, directory, for_parent)


def send_work(report: WorkReport, directory: Path | None = None, *, for_parent: bool = False) -> int:
    """Report work to every running monitor of this user; returns how many took it."""
    message = {"kind": "work", "iterations": report.iterations, "flops": report.flops,
               "bytes": report.bytes, "precision": report.precision}
    work_report(message)
    return _send(message, directory, for_parent)


def _send(message: dict[str, Any], directory: Path | None, for_parent: bool) -> int:
    """Offer the message to every monitor at once, then count their "ok" replies, waiting
    ``REPLY_WAIT_S`` in all: a monitor that is slow or stopped delays no other."""
    directory = directory or control_dir()
    payload = json.dumps({**message, "for": FOR_PARENT} if for_parent else message).encode() + b"\n"
    replies: dict[socket.socket, bytearray] = {}
    try:
        for path in sorted(directory.glob("*.sock")):
            sock = _offer(path, payload)
            if sock is not None:
                replies[sock] = bytearray()
        return _count_ok(replies)
    finally:
        for sock in replies:
            sock.close()


def _offer(path: Path, payload: bytes) -> socket.socket | None:
    """The connection that carried ``payload`` to the monitor at ``path``, without waiting; None
    for a monitor that is gone (its socket is removed), stopped, or too busy to accept."""
    if _monitor_stopped(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.connect(str(path))
        if sock.send(payload) == len(payload):  # a few hundred bytes: the socket buffer takes them
            return sock
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # its monitor is gone
    except OSError:
        pass  # BlockingIOError: its backlog is full (stopped, or swamped by other clients)
    sock.close()
    return None


def _monitor_stopped(path: Path) -> bool:
    """Whether the monitor behind ``<pid>.sock`` is stopped (Ctrl-Z, SIGSTOP; Linux ``/proc``):
    it would take the marker only once resumed, stamped at the wrong time."""
    if not path.stem.isdecimal() or len(path.stem) > 10:
        return False
    try:
        with open(f"/proc/{path.stem}/stat", "rb") as status:
            fields = status.read(4096).rpartition(b")")[2].split()
    except OSError:
        return False
    return bool(fields) and fields[0] in (b"T", b"t")


def _count_ok(replies: dict[socket.socket, bytearray]) -> int:
    """How many of the connections answer "ok" within ``REPLY_WAIT_S`` (all together)."""
    delivered = 0
    deadline = time.monotonic() + REPLY_WAIT_S
    with selectors.DefaultSelector() as selector:
        for sock, buffer in replies.items():
            selector.register(sock, selectors.EVENT_READ, buffer)
        while selector.get_map() and (remaining := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(remaining):
                reply: bytearray = key.data
                try:
                    chunk = os.read(key.fd, 256)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    chunk = b""
                reply += chunk
                if not chunk or b"\n" in reply or len(reply) >= 256:
                    selector.unregister(key.fd)
                    delivered += reply.startswith(b"ok")
    return delivered

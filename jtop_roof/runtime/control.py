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
line of at most ``_MAX_MESSAGE_BYTES``; past ``MAX_CLIENTS`` open connections the one idle longest
is told ``busy`` (nothing of it was taken). A message is read as soon as its connection is accepted,
so a burst of clients that each send at once never fills the table.

Every reply says what happened to the message, so a sender can count exactly: ``ok`` (recorded,
or ``ok: queued``: taken in order, recorded once the monitor's pump is free), ``busy`` (not taken:
send it again) or ``error`` (not taken, and sending again will not help). Markers and work are
handed to the monitor by a thread of their own, in order (at most ``MAX_QUEUED`` waiting): a monitor
whose pump is stalled (its disk, a reader of ``record -`` that stopped) still answers within
``ACK_AFTER_S``. ``send_marker``/``send_work`` send again to a busy monitor for up to ``BUSY_WAIT_S``,
and raise ``DeliveryError`` when a running monitor neither took nor refused the message: never
"0 monitors" while a report may be lost or counted.
"""

from __future__ import annotations

import json
import os
import queue
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
from jtop_roof.runtime.delivery import BUSY_WAIT_S as BUSY_WAIT_S
from jtop_roof.runtime.delivery import REPLY_WAIT_S as REPLY_WAIT_S
from jtop_roof.runtime.delivery import DeliveryError as DeliveryError
from jtop_roof.runtime.delivery import deliver
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.sources.processes import BENCHMARK

MAX_NAME_CHARS = 200
_MAX_MESSAGE_BYTES = 4096
#: A client's time to send its line (``send_marker`` sends at once); then it is told and dropped.
READ_TIMEOUT_S = 1.0
#: Connections open at once; a new one past this drops the one idle longest, told ``busy``.
MAX_CLIENTS = 32
#: Connections waiting to be accepted (``listen``): a burst of hooks waits here, not refused.
BACKLOG = 512
#: Markers and work reports taken but not yet handed to the monitor (its pump is stalled); past
#: this a sender is told ``busy``.
MAX_QUEUED = 4096
#: A message not yet recorded after this long is answered ``ok: queued`` (it is taken, in order).
ACK_AFTER_S = 0.25


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


@dataclass(eq=False)
class _Taken:
    """A message taken from a client, waiting to be handed to the monitor; its connection is
    answered once, by whichever comes first: the hand-over (``ok`` or its error) or
    ``ACK_AFTER_S`` (``ok: queued``)."""

    conn: socket.socket
    apply: Callable[[], None]
    ack_at: float
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _answered: bool = False

    def answer(self, reply: str) -> None:
        with self._lock:
            if self._answered:
                return
            self._answered = True
        _reply(self.conn, reply)

    @property
    def answered(self) -> bool:
        with self._lock:
            return self._answered


def _reply(conn: socket.socket, reply: str) -> None:
    try:
        conn.send(reply.encode("utf-8", "replace")[:255] + b"\n")  # fits any socket buffer at once
    except OSError:
        pass  # the client left before the reply: what it sent still counts
    conn.close()


class MarkerListener:
    """Accepts markers for one monitor and hands them to ``on_marker(kind, name)`` (and work to
    ``on_work``) in the order they arrive, from a thread of its own."""

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
        self._handing: threading.Thread | None = None
        self._queue: queue.Queue[_Taken | None] = queue.Queue(MAX_QUEUED)
        self._unacknowledged: list[_Taken] = []  # the listener's thread only, oldest first
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
        sock.listen(BACKLOG)
        sock.setblocking(False)
        self.path = path
        self._handing = threading.Thread(target=self._hand_over, name="jroof-markers-hand-over", daemon=True)
        self._handing.start()
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
        if self._handing is not None:
            try:
                self._queue.put(None, timeout=2)  # after every message taken: they are handed over
            except queue.Full:  # the monitor is stuck: what it has not begun is not taken
                self._refuse_queued()
            self._handing.join(timeout=2)
            self._refuse_queued()

    def _refuse_queued(self) -> None:
        while True:
            try:
                taken = self._queue.get_nowait()
            except queue.Empty:
                return
            if taken is not None:
                taken.answer("error: the monitor closed before recording it")

    def _hand_over(self) -> None:
        """Hand each message to the monitor in order; a callback that blocks (the pump holds the
        pipeline) delays only this thread, never the listener's answers."""
        while (taken := self._queue.get()) is not None:
            try:
                taken.apply()
            except Exception as exc:  # e.g. the recording's disk is full: say so, keep going
                if taken.answered:  # told "queued" already: the monitor says it instead
                    _warn(f"jroof-tui: a marker or work report was not recorded: {type(exc).__name__}: {exc}")
                taken.answer(f"error: {type(exc).__name__}: {exc}")
                continue
            taken.answer("ok")

    def _serve(self, listener: socket.socket) -> None:
        selector = self._selector
        with selector, listener, self._wake_r:
            selector.register(listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            try:
                while True:
                    deadlines = [c.deadline for c in self._clients.values()]
                    if self._unacknowledged:
                        deadlines.append(self._unacknowledged[0].ack_at)
                    deadline = min(deadlines, default=None)
                    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                    for key, _ in selector.select(timeout):
                        if key.fileobj is self._wake_r:
                            return
                        try:
                            if key.fileobj is listener:
                                self._accept(listener)
                            elif isinstance(key.fileobj, socket.socket) and key.fileobj in self._clients:
                                self._read(key.fileobj)  # not one dropped by an accept before it
                        except Exception as exc:  # one client's trouble never ends the listener
                            if isinstance(key.fileobj, socket.socket) and key.fileobj in self._clients:
                                self._finish(key.fileobj, f"error: {type(exc).__name__}")
                    now = time.monotonic()
                    for conn in [c for c, client in self._clients.items() if client.deadline <= now]:
                        self._finish(conn, f"error: no marker within {self._read_timeout_s:g} s")
                    self._acknowledge(now)
            finally:
                for conn in list(self._clients):
                    self._finish(conn, "error: the monitor is closing")

    def _acknowledge(self, now: float) -> None:
        """Answer ``ok: queued`` for each message still waiting for the monitor after ``ACK_AFTER_S``."""
        waiting = self._unacknowledged
        done = 0
        while done < len(waiting) and (waiting[done].answered or waiting[done].ack_at <= now):
            waiting[done].answer("ok: queued (the monitor is busy; recorded in order once it is free)")
            done += 1
        del waiting[:done]

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # none left (BlockingIOError), or out of file descriptors: try later
                return
            conn.setblocking(False)
            self._selector.register(conn, selectors.EVENT_READ)
            self._clients[conn] = _Client(time.monotonic() + self._read_timeout_s)
            self._read(conn)  # a sender writes as it connects: most are done here
            if len(self._clients) > MAX_CLIENTS:
                oldest = next(iter(self._clients))
                self._read(oldest)  # whatever it sent since is still taken
                if oldest in self._clients:
                    self._finish(oldest, "busy: too many connections; nothing was taken, send again")

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
            self._take(conn, bytes(line))
        elif len(client.data) > _MAX_MESSAGE_BYTES:
            self._finish(conn, f"error: a message is at most {_MAX_MESSAGE_BYTES} bytes")

    def _forget(self, conn: socket.socket) -> None:
        self._clients.pop(conn, None)
        try:
            self._selector.unregister(conn)
        except (KeyError, ValueError):
            pass

    def _finish(self, conn: socket.socket, reply: str) -> None:
        self._forget(conn)
        _reply(conn, reply)

    def _take(self, conn: socket.socket, line: bytes) -> None:
        """Check a whole message; queue a good one for the monitor (its connection is answered
        from there), refuse a bad one now."""
        try:
            apply, for_parent = self._parse(line)
        except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors are ValueErrors
            self._finish(conn, f"error: {exc}")
            return
        self._forget(conn)
        taken = _Taken(conn, apply, time.monotonic() + ACK_AFTER_S)
        try:
            self._queue.put_nowait(taken)
        except queue.Full:
            taken.answer(f"busy: {MAX_QUEUED} messages wait for the monitor; nothing was taken, send again")
            return
        _mark_benchmark(conn, for_parent)  # the peer waits for the answer: it is still there
        self._unacknowledged.append(taken)

    def _parse(self, line: bytes) -> tuple[Callable[[], None], bool]:
        """What taking the message does, and whether the sender spoke for its parent (``FOR_PARENT``)."""
        message = json.loads(line.decode("utf-8"))
        if not isinstance(message, dict):
            raise ValueError("expected a JSON object")
        for_parent = message.get("for") == FOR_PARENT
        if message.get("kind") == "work":
            report = work_report(message)
            on_work = self._on_work
            if on_work is None:
                raise ValueError("this monitor takes no work reports")
            return (lambda: on_work(report)), for_parent
        kind, name = _validate(message.get("kind"), message.get("name"))
        on_marker = self._on_marker
        return (lambda: on_marker(kind, name)), for_parent


def _warn(message: str) -> None:
    try:
        print(for_terminal(message), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


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
    """Send a marker to every running monitor of this user; returns how many took it (0: none
    runs, or none takes markers). ``for_parent``: the benchmark is this process's parent
    (``jroof-tui mark`` from a script). Raises ``DeliveryError`` when a running monitor neither
    took it nor refused it for good."""
    _validate(kind, name)
    return _send({"kind": kind, "name": name}, directory, for_parent, "the marker")


def send_work(report: WorkReport, directory: Path | None = None, *, for_parent: bool = False) -> int:
    """Report work to every running monitor of this user; returns how many took it. Raises
    ``DeliveryError`` when a running monitor neither took it nor refused it for good."""
    message = {"kind": "work", "iterations": report.iterations, "flops": report.flops,
               "bytes": report.bytes, "precision": report.precision}
    work_report(message)
    return _send(message, directory, for_parent, "the work report")


def _send(message: dict[str, Any], directory: Path | None, for_parent: bool, what: str) -> int:
    payload = json.dumps({**message, "for": FOR_PARENT} if for_parent else message).encode() + b"\n"
    return deliver(payload, directory or control_dir(), what)



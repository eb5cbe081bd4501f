"""The sender's side of the marker channel (``runtime.control``): one line to every monitor of
this user, counted exactly. Each monitor answers ``ok`` (taken), ``busy`` (nothing taken: this side
sends again, for up to ``BUSY_WAIT_S``) or ``error`` (refused for good). A monitor that neither
took the line nor refused it (busy to the end, or no answer within ``REPLY_WAIT_S``) makes
``DeliveryError``: a sender is never told "0" while what it sent may be lost, and never sends again
what may have been taken (it would count twice). A stopped monitor (Ctrl-Z) is skipped: it would
take the line only once resumed, stamped at the wrong time."""

from __future__ import annotations

import os
import random
import selectors
import socket
import time
from pathlib import Path

#: How long the replies are waited for, all together (stopped monitors are skipped). A live
#: monitor answers in a millisecond, or ``ok: queued`` within ``control.ACK_AFTER_S`` when busy.
REPLY_WAIT_S = 1.0
#: How long a sender keeps sending again to a monitor that answers ``busy``.
BUSY_WAIT_S = 10.0


class DeliveryError(OSError):
    """A running monitor did not take the message, or did not say whether it did: ``taken``
    monitors took it, ``busy`` stayed busy for ``BUSY_WAIT_S`` (not taken), ``unanswered`` gave no
    reply within ``REPLY_WAIT_S`` (it may or may not be recorded)."""

    def __init__(self, what: str, taken: int, busy: int, unanswered: int) -> None:
        self.taken, self.busy, self.unanswered = taken, busy, unanswered
        parts = [f"{busy} stayed busy for {BUSY_WAIT_S:g} s (not taken)"] if busy else []
        if unanswered:
            parts.append(f"{unanswered} gave no answer within {REPLY_WAIT_S:g} s (it may or may not "
                         "be recorded)")
        super().__init__(f"{what} reached {taken} of {taken + busy + unanswered} running jroof-tui: "
                         + "; ".join(parts))


#: ``_offer``'s word for a monitor whose backlog is full: nothing was sent, send again.
_BUSY = "busy"


def deliver(payload: bytes, directory: Path, what: str) -> int:
    """How many monitors in ``directory`` took ``payload`` (one line). It is offered to every
    monitor at once, then their replies are read, waiting ``REPLY_WAIT_S`` in all: a monitor that
    is slow or stopped delays no other. One that answers ``busy`` (or whose backlog is full) took
    nothing and is sent to again, for up to ``BUSY_WAIT_S``."""
    pending = sorted(directory.glob("*.sock"))
    taken = unanswered = 0
    give_up = time.monotonic() + BUSY_WAIT_S
    pause = 0.002
    while pending:
        replies: dict[socket.socket, bytearray] = {}
        busy: list[Path] = []
        by_socket: dict[socket.socket, Path] = {}
        try:
            for path in pending:
                offered = _offer(path, payload)
                if offered == _BUSY:
                    busy.append(path)
                elif isinstance(offered, socket.socket):
                    replies[offered] = bytearray()
                    by_socket[offered] = path
            _read_replies(replies)
        finally:
            for sock in replies:
                sock.close()
        for sock, reply in replies.items():
            if reply.startswith(b"ok"):
                taken += 1
            elif reply.startswith(b"busy"):
                busy.append(by_socket[sock])
            elif not reply:
                unanswered += 1  # it may have taken it: never sent again, never counted twice
        pending = busy
        if pending:
            if time.monotonic() >= give_up:
                break
            time.sleep(pause * random.uniform(1.0, 2.0))  # apart from the others sending at once
            pause = min(pause * 2, 0.05)
    if pending or unanswered:
        raise DeliveryError(what, taken, len(pending), unanswered)
    return taken


def _offer(path: Path, payload: bytes) -> socket.socket | str | None:
    """The connection that carried ``payload`` to the monitor at ``path``, without waiting;
    ``_BUSY`` when its backlog is full (nothing sent); None for a monitor that is gone (its socket
    is removed) or stopped."""
    if _monitor_stopped(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.connect(str(path))
        if sock.send(payload) == len(payload):  # a few hundred bytes: the socket buffer takes them
            return sock
        outcome: str | None = _BUSY  # a part of a line is never taken (it is not JSON)
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # its monitor is gone
        outcome = None
    except (BlockingIOError, InterruptedError):
        outcome = _BUSY  # its backlog is full: swamped by other clients
    except OSError:
        outcome = None
    sock.close()
    return outcome


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


def _read_replies(replies: dict[socket.socket, bytearray]) -> None:
    """Each connection's reply line into its buffer, waiting ``REPLY_WAIT_S`` in all (a buffer
    left empty: no answer)."""
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

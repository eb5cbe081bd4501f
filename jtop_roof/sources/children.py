"""The child processes of the sources (tegrastats, ssh, nvpmodel), none of which may outlive the
monitor, however it ends.

``spawn`` starts each in a session and process group of its own, so one ``killpg`` reaches it and
anything it started, behind a guard: ``sh -c GUARD jroof-guard ARGV...`` first starts a watcher in
that group, then ``exec``s the command (same pid, same exit status). The watcher waits for EOF on
the child's stdin, a pipe whose other end only the monitor holds and never writes. The kernel
closes that end however the monitor ends (``stop()``, an exception, SIGTERM, SIGHUP, kill -9), and
the watcher then ends the group: SIGTERM (sudo relays it to the command it runs as root), SIGKILL
``GUARD_KILL_S`` later. So a silent child, which SIGPIPE never reaches, dies with the monitor too.

In the monitor, ``end`` stops a child with SIGTERM, then SIGKILL after a grace period, and the
atexit hook ends every group still live; ``run_bounded`` runs a short command within a deadline.
"""

from __future__ import annotations

import atexit
import errno
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

#: Seconds the guard waits between SIGTERM and SIGKILL once the monitor is gone.
GUARD_KILL_S = 2
_GUARD = (
    f'exec 3<&0; {{ trap "" TERM; read -r _ <&3; kill -TERM 0; sleep {GUARD_KILL_S}; kill -KILL 0; }} '
    '>/dev/null 2>&1 & exec "$@" 3<&-'
)
_POLL_S = 0.2  # longest wait between checks of a stop flag
_STDERR_KEEP = 2000  # bytes of a child's stderr kept for messages

# Process groups started by spawn() and not yet reaped; the atexit hook ends them.
LIVE_GROUPS: dict[int, subprocess.Popen[bytes]] = {}


def check_program(program: str) -> None:
    """Raise what ``exec`` would for a program that cannot run (FileNotFoundError,
    PermissionError): the guard shell would only exit 127 or 126, and a missing command must stay
    one clear error, not a restart loop."""
    if os.sep in program:
        if not os.path.exists(program):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    elif not program or shutil.which(program) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def spawn(argv: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` guarded (see the module docstring), stdout and stderr piped to us, stdin the
    guard's pipe (ssh relays its EOF to the board). Raises OSError when it cannot run."""
    if not argv:
        raise FileNotFoundError(errno.ENOENT, "empty command")
    check_program(argv[0])
    proc = subprocess.Popen(
        ["/bin/sh", "-c", _GUARD, "jroof-guard", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    LIVE_GROUPS[proc.pid] = proc
    return proc


def signal_group(pgid: int, sig: int) -> None:
    """Signal a process group, ignoring one that is gone or (behind sudo) not ours to signal."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def wait_unreaped(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    """Wait up to ``timeout_s`` for the child to exit, without reaping it: a zombie keeps its pid,
    so the group id cannot be reused while we still signal it. Returns the Popen-style status
    (negative: killed by that signal), or ``None`` while it still runs."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        except ChildProcessError:  # already reaped (close() in another thread)
            return proc.returncode
        if info is not None:
            killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
            return -info.si_status if killed else info.si_status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


def end(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the group, close our pipe ends, SIGKILL the group after ``grace_s``, reap."""
    signal_group(proc.pid, signal.SIGTERM)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
    wait_unreaped(proc, grace_s)
    # The leader is not reaped yet, so its pid (the group id) cannot have been reused: this
    # SIGKILL reaches only our group, including members that outlive the leader (a shell's child,
    # the guard's watcher).
    signal_group(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    LIVE_GROUPS.pop(proc.pid, None)


def _end_all_groups() -> None:
    """atexit: no child outlives the monitor, even if nobody called stop()."""
    procs = list(LIVE_GROUPS.values())
    for proc in procs:
        signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 1.0
    for proc in procs:
        wait_unreaped(proc, max(0.0, deadline - time.monotonic()))
        signal_group(proc.pid, signal.SIGKILL)


atexit.register(_end_all_groups)


def run_bounded(
    argv: Sequence[str], timeout_s: float, limit: int, stopped: threading.Event | None = None
) -> tuple[int | None, bytes, bytes]:
    """Run a short command (spawned as above): (status, or None when it timed out or ``stopped``
    was set; stdout up to ``limit`` bytes; the last 2000 bytes of stderr). The group is ended in
    every case, within a second of the deadline or the stop."""
    proc = spawn(argv)
    out, err = b"", b""
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
    selector.register(proc.stderr.fileno(), selectors.EVENT_READ, "err")
    code: int | None = None
    try:
        while selector.get_map() and len(out) < limit and not (stopped is not None and stopped.is_set()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for key, _ in selector.select(min(remaining, _POLL_S)):
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fd)
                elif key.data == "out":
                    out += data
                else:
                    err = (err + data)[-_STDERR_KEEP:]
        if not selector.get_map():
            code = wait_unreaped(proc, max(0.0, deadline - time.monotonic()))
    finally:
        selector.close()
        end(proc, 1.0)
    return code, out[:limit], err

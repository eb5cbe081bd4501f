"""Live samples from a tegrastats child process.

The child runs as ``<command> --interval N`` in its own session and process group, so one
``killpg`` reaches it and anything it started, behind the guard of ``children.spawn``: however the
monitor ends (kill -9 included), the child's group is ended, even a silent one. Behind ``sudo`` the
real tegrastats runs as root and may sit in another group (sudo's ``use_pty``): a non-root monitor
cannot signal it, but sudo relays SIGTERM to it, so stopping sends SIGTERM first and SIGKILL only
after ``kill_grace_s``. A tegrastats whose reader is gone also dies of SIGPIPE at its next line.

A child that exits, or prints nothing for ``hang_timeout_s``, is killed and restarted after the next
delay in ``backoff`` (the last delay repeats; a run that produced a sample resets the sequence).
The stream says so: an ``Event("source_restart")`` when it happens and, when samples resume, an
``Event("gap")`` at the time of the first sample after (so records keep a non-decreasing
``t_mono``) whose ``gap_s`` is the silence since the last sample before. A command that cannot be
started at all (not found, not executable) yields one ``Event("source_error")`` and ends the
stream: retrying cannot fix it, and a recorder must not spin silently. ``sudo -n`` failing (no
sudoers rule) is an exit, so it is retried with back-off and each restart event carries sudo's
message.

Each line is parsed (``usual.usual_sample``'s short way for a line in the usual order, else
``parser.parse_line``: the same Sample), stamped with the host clocks (``t_wall=clock()``,
``t_mono=mono()``; the tegrastats stamp stays in ``sample.stamp``) and keeps ``sample.raw``. Clocks a
non-root tegrastats leaves out are filled from sysfs (``sysfs.BoardFiles.fill``). A line longer than
``MAX_LINE_BYTES`` is cut there and kept as a line that is not a sample, the rest of it dropped, so
an endless line never grows the monitor. The child's stderr reaches messages only made printable.
"""

from __future__ import annotations

import os
import select
import selectors
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from jtop_roof.formats.parser import parse_line
from jtop_roof.formats.usual import usual_sample
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.metrics import printable
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.sources import children
from jtop_roof.sources.base import Source
from jtop_roof.sources.nonsamples import NonSampleGate
from jtop_roof.sources.sysfs import BoardFiles

_STDERR_KEEP = 2000  # bytes of the child's stderr kept for the restart message
#: The longest line taken from the child (a real one is a few KiB, even with 256 CPUs).
MAX_LINE_BYTES = 64 << 10


class FatalReason(str):
    """A reason the child stopped that retrying cannot fix (a refused ssh login): ``records()``
    yields it as one ``source_error`` and ends, as for a command that cannot start."""


def _drain(fd: int, tail: bytes) -> bytes:
    """Add what the pipe holds right now to ``tail``, without waiting for more."""
    try:
        while select.select([fd], [], [], 0)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            tail = (tail + data)[-_STDERR_KEEP:]
    except OSError:
        pass
    return tail


def _missing_program_hint(program: str) -> str:
    """What to do about a command that is not there, fitting the program that is missing."""
    name = os.path.basename(program)
    if name == "sudo":
        return " (install sudo, or run jroof-tui as root with --tegrastats-command tegrastats)"
    if name == "tegrastats":
        return " (tegrastats exists on Jetson boards; elsewhere use --source host)"
    if name == "ssh":
        return " (install the OpenSSH client)"
    return ""


def start_problem(program: str, exc: OSError) -> str:
    """Why ``program`` could not be started, in words (with what to do where we know)."""
    if isinstance(exc, FileNotFoundError):
        return f"{program} not found on PATH{_missing_program_hint(program)}"
    if isinstance(exc, PermissionError):
        return f"{program} is not executable"
    return exc.strerror or str(exc)


class TegrastatsSource(Source):
    """Runs tegrastats and yields its samples, restart events and gaps until ``stop()``."""

    kind = "tegrastats"

    def __init__(
        self,
        command: Sequence[str],
        interval_ms: int,
        *,
        clock: Callable[[], float] = time.time,
        mono: Callable[[], float] = time.monotonic,
        backoff: Sequence[float] = (1.0, 2.0, 5.0, 10.0, 30.0),
        hang_timeout_s: float | None = None,
        kill_grace_s: float = 1.0,
        sysfs_root: str | None = "/",
        is_root: bool | None = None,
    ) -> None:
        """``hang_timeout_s``: silence after which the child counts as hung (default: three
        intervals, at least 5 s). ``kill_grace_s``: SIGTERM-to-SIGKILL wait. ``is_root``: whether
        tegrastats will run as root (default: effective uid 0 or a ``sudo`` command), for hints.
        ``sysfs_root``: where the board's files are; ``None`` for a board that is not this machine
        (nothing is read or filled locally; a subclass describes it)."""
        self.command = list(command)
        self.interval_ms = int(interval_ms)
        self._clock = clock
        self._mono = mono
        self._backoff = tuple(backoff) or (1.0,)
        self._hang_timeout_s = (
            hang_timeout_s if hang_timeout_s is not None else max(3 * self.interval_ms / 1000, 5.0)
        )
        self._kill_grace_s = kill_grace_s
        self._board = BoardFiles(sysfs_root) if sysfs_root is not None else None
        if is_root is None:
            via_sudo = bool(self.command) and os.path.basename(self.command[0]) == "sudo"
            is_root = os.geteuid() == 0 or via_sudo
        self._is_root = is_root
        self._stop = threading.Event()
        #: While ``records()`` runs, ``stop()`` sends a byte here, so the reader's wait ends at
        #: once: it waits for the child's output, its silence limit or this, not on a poll (each
        #: wake-up of an idle thread costs about 0.1 ms of CPU on a small VM, as much as parsing a
        #: line).
        self._wake: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        #: How messages name the child ("tegrastats"; "tegrastats on HOST" over ssh).
        self.name = "tegrastats"

    # -- control -------------------------------------------------------------------------------

    def stop(self) -> None:
        """End the stream soon. Safe from a signal handler: it takes no lock and does not wait; it
        sets a flag and sends SIGTERM to the child's group. The worker running ``records()`` then
        reaps the child (SIGKILL after ``kill_grace_s``)."""
        self._stop.set()
        wake = self._wake
        if wake is not None:
            try:
                wake.send(b"x")
            except OSError:  # closed (the stream ended) or full (woken already)
                pass
        proc = self._proc
        if proc is not None:
            children.signal_group(proc.pid, signal.SIGTERM)

    # -- identity ------------------------------------------------------------------------------

    def describe(self) -> SourceInfo:
        info: dict[str, Any] = {"source": self.kind, "interval_ms": self.interval_ms, "command": self.command}
        board = self._board.describe() if self._board is not None else {}
        info.update(board)
        info["hints"] = self.hints(power_mode_known="power_mode" in board or "power_mode_id" in board)
        return SourceInfo.from_mapping(info)

    def hints(self, *, power_mode_known: bool) -> list[str]:
        """Plain sentences on fields this setup cannot show and how to get them."""
        hints: list[str] = []
        if not self._is_root:
            hints.append(
                "GPU and EMC clocks need root: run with --tegrastats-command 'sudo -n tegrastats' after "
                "adding a sudoers rule, see README."
            )
            if self._board is not None and self._board.gpu_devfreq is not None:
                hints.append(
                    "Without root the GPU clock comes from devfreq cur_freq: the governor's set point, "
                    "not the measured clock, and it does not show short over-current dips."
                )
            if self._board is not None and self._board.emc_devfreq is None:
                hints.append(
                    "The EMC (memory) clock is not readable without root on this board, so the memory "
                    "roof cannot follow it."
                )
        if not power_mode_known:
            hints.append("Power mode unknown: nvpmodel -q and /var/lib/nvpmodel/status gave nothing.")
        return hints

    # -- the stream ----------------------------------------------------------------------------

    def records(self) -> Iterator[Record]:
        """Samples (lines that are not samples too, flagged ``is_sample=False``, so a recording keeps
        them, up to a rate: ``nonsamples.NonSampleGate``, a ``note`` saying how many were dropped),
        ``source_restart`` and ``gap`` events, or one ``source_error`` for a command that cannot
        start. Closing the generator ends the child as ``stop()`` does."""
        failures = 0
        last_wall: float | None = None
        last_mono: float | None = None
        restarted = False
        gate = NonSampleGate(self.name)  # lines that are not samples: kept up to a rate, then counted
        wake_reader, wake = socket.socketpair()
        wake.setblocking(False)
        self._wake = wake
        try:
            while not self._stop.is_set():
                try:
                    proc = self._start()
                except OSError as exc:
                    yield self._event("source_error", self._start_error(exc))
                    return
                got_sample = False
                reason: str | None = None
                for item in self._read(proc, wake_reader):
                    if isinstance(item, str):
                        reason = item
                        break
                    said = gate.said()
                    if said is not None:
                        yield self._event("note", said)
                    if not item.is_sample and not gate.keep():
                        continue
                    if item.is_sample:
                        if restarted and last_mono is not None and item.t_mono is not None:
                            yield self._gap(last_wall, last_mono, item)
                        restarted = False
                        got_sample = True
                        last_wall, last_mono = item.t_wall, item.t_mono
                    yield item
                self._end(proc)
                said = gate.said(final=True)
                if said is not None:
                    yield self._event("note", said)
                if self._stop.is_set() or reason is None:
                    return
                if isinstance(reason, FatalReason):
                    yield self._event("source_error", str(reason))
                    return
                if got_sample:
                    failures = 0
                delay = self._backoff[min(failures, len(self._backoff) - 1)]
                failures += 1
                restarted = True
                yield self._event("source_restart", f"{reason}; restarting in {delay:g} s")
                if self._stop.wait(delay):
                    return
        finally:
            running = self._proc
            if running is not None:
                self._end(running)
            self._wake = None
            wake_reader.close()
            wake.close()

    def _gap(self, last_wall: float | None, last_mono: float, resumed: Sample) -> Event:
        """The gap event for samples resuming after a restart, at the resumed sample's time."""
        gap_s = (last_mono if resumed.t_mono is None else resumed.t_mono) - last_mono
        since = "" if last_wall is None else time.strftime(" since %H:%M:%S", time.localtime(last_wall))
        detail = f"no samples for {gap_s:.1f} s{since} while {self.name} restarted"
        return Event("gap", detail, resumed.t_wall, resumed.t_mono, gap_s=gap_s)

    def _event(self, kind: str, detail: str) -> Event:
        return Event(kind, detail, self._clock(), self._mono())

    def _argv(self) -> list[str]:
        """The command line of the child."""
        return [*self.command, "--interval", str(self.interval_ms)]

    def _start(self) -> subprocess.Popen[bytes]:
        proc = children.spawn(self._argv())
        self._proc = proc
        if self._stop.is_set():  # stop() raced with the start: it may have seen no child
            children.signal_group(proc.pid, signal.SIGTERM)
        return proc

    def _start_error(self, exc: OSError) -> str:
        program = self.command[0] if self.command else "(empty command)"
        return f"cannot run {shlex.join(self.command) or '(empty command)'}: {start_problem(program, exc)}"

    def _read(self, proc: subprocess.Popen[bytes], wake_reader: socket.socket) -> Iterator[Any]:
        """Yield stamped samples; finally yield a string saying why the child stopped serving
        (exited or hung). Returns without a reason when ``stop()`` was called."""
        assert proc.stdout is not None and proc.stderr is not None
        out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
        pending = b""
        skipping = False  # inside a line longer than MAX_LINE_BYTES, its head already given
        stderr_tail = b""
        selector = selectors.DefaultSelector()
        selector.register(out_fd, selectors.EVENT_READ)
        selector.register(err_fd, selectors.EVENT_READ)
        selector.register(wake_reader, selectors.EVENT_READ)
        deadline = time.monotonic() + self._hang_timeout_s
        try:
            while not self._stop.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    yield f"no line from {self.name} for {self._hang_timeout_s:g} s (hung); killed it"
                    return
                try:
                    events = selector.select(remaining)
                    ready = [(key.fd, os.read(key.fd, 65536)) for key, _ in events
                             if key.fileobj is not wake_reader]
                except (OSError, ValueError) as exc:  # pipe closed under us by close()
                    if not self._stop.is_set():
                        yield f"lost the {self.name} pipe ({exc})"
                    return
                # stderr first: its last words, read in the same round as stdout's EOF, belong in
                # the exit reason.
                ready.sort(key=lambda item: item[0] != err_fd)
                for fd, data in ready:
                    if fd == err_fd:
                        if data:
                            stderr_tail = (stderr_tail + data)[-_STDERR_KEEP:]
                        else:
                            selector.unregister(err_fd)
                        continue
                    if not data:
                        yield self._exit_reason(proc, stderr_tail, err_fd, selector)
                        return
                    pending += data
                    *lines, pending = pending.split(b"\n")
                    if skipping and lines:  # the rest of a line cut at MAX_LINE_BYTES
                        skipping = False
                        lines.pop(0)
                    if len(pending) > MAX_LINE_BYTES and not skipping:
                        lines.append(pending)  # endless: cut here, drop the rest up to its newline
                        skipping = True
                    if skipping:
                        pending = b""
                    for raw in lines:
                        record = self._line(raw)
                        if record is None:
                            continue
                        deadline = time.monotonic() + self._hang_timeout_s
                        yield record
                        if self._stop.is_set():
                            return
        finally:
            selector.close()

    def _line(self, raw: bytes) -> Sample | None:
        """The record of one line of output (None for a blank one); a line too long for a
        tegrastats line is kept cut, as a line that is not a sample."""
        line = raw[:MAX_LINE_BYTES].decode("utf-8", "replace").rstrip("\r")
        if not line.strip():
            return None
        if len(raw) <= MAX_LINE_BYTES:
            return self._sample(line)
        return Sample(is_sample=False, raw=line, t_wall=self._clock(), t_mono=self._mono())

    def _sample(self, line: str) -> Sample:
        """The line's sample, stamped now: the short way (``usual_sample``, the parser's Sample
        for half the work) for a line in the usual order, else the parser's; tegrastats' own
        stamp is kept as text."""
        sample = usual_sample(line, self._now)
        if sample is None:
            sample = parse_line(line)
            sample.t_wall, sample.t_mono = self._now(None)
        self._fill(sample)
        return sample

    def _now(self, _stamp: str | None) -> tuple[float, float]:
        return self._clock(), self._mono()

    def _fill(self, sample: Sample) -> None:
        """Clocks tegrastats left out, from the board's files."""
        if self._board is not None:
            self._board.fill(sample)

    def _exit_reason(
        self, proc: subprocess.Popen[bytes], stderr_tail: bytes, err_fd: int, selector: selectors.BaseSelector
    ) -> str:
        """Why stdout ended: the exit status and the last words on stderr."""
        code = children.wait_unreaped(proc, self._kill_grace_s)
        if code is None:
            return f"{self.name} closed its output; killed it"
        if err_fd in selector.get_map():
            stderr_tail = _drain(err_fd, stderr_tail)
        message = printable(" ".join(stderr_tail.decode("utf-8", "replace").split()))
        return self._exit_message(code, message)

    def _exit_message(self, code: int, message: str) -> str:
        """The restart reason for an exit with ``code`` (negative: killed by that signal) and the
        child's last words on stderr (whitespace folded); a ``FatalReason`` ends the stream."""
        if code < 0:
            try:
                status = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                status = f"was killed by signal {-code}"
        else:
            status = f"exited with status {code}"
        return f"{self.name} {status}" + (f": {message[-300:]}" if message else "")

    def _end(self, proc: subprocess.Popen[bytes]) -> None:
        """End the child's group (SIGTERM, SIGKILL after the grace period) and reap it."""
        if self._proc is proc:
            self._proc = None  # before reaping: stop() must never signal a reused pid
        children.end(proc, self._kill_grace_s)

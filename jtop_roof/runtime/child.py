"""``run``'s workload: one child process beside the monitor or the headless recording, started,
waited for in a thread, and stopped with us. The TUI and ``run --headless`` share it, so they
start, keep its output and give its exit status the same way: its own code, or 128+N when a
signal N ended it (as a shell says it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO

from jtop_roof.formats.trtexec import KEPT_SUFFIX, is_trtexec
from jtop_roof.formats.userfiles import create_output
from jtop_roof.model.errors import UserError
from jtop_roof.sources.processes import BENCHMARK

#: How long a workload has to end after SIGTERM before it is killed.
STOP_GRACE_S = 10.0
#: The same, when we were killed (``kill -9``) and the guard ends it: the recording is over.
GUARD_GRACE_S = 3.0
#: What ``stop`` tells the guard once the workload's group is ended: nothing left to do.
RELEASE = b"released"

#: The guard (``python -I -S -c``, no import of ours): it waits on a pipe whose only writer is
#: us; end of file without ``RELEASE`` first means we died however we died (``kill -9`` too), so
#: it ends the workload's whole process group, grandchildren included, SIGTERM then SIGKILL. It
#: is in a session of its own and ignores the terminal's signals: a Ctrl-C, a hang-up or a kill
#: of our process group leave it to do its work.
GUARD = """\
import os, signal, sys, time
for name in ("SIGINT", "SIGHUP", "SIGTERM", "SIGQUIT", "SIGTSTP", "SIGTTIN", "SIGTTOU"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
group, grace, said = int(sys.argv[1]), float(sys.argv[2]), b""
while chunk := os.read(0, 64):
    said += chunk
if said == sys.argv[3].encode():
    sys.exit(0)
def left():
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True
try:
    os.killpg(group, signal.SIGTERM)
except OSError:
    sys.exit(0)
end = time.monotonic() + grace
while time.monotonic() < end and left():
    time.sleep(0.05)
try:
    os.killpg(group, signal.SIGKILL)
except OSError:
    pass
"""


class ChildError(UserError):
    """The workload could not be started (one line, exit 2)."""


def kept_output_path(recording: str, argv: Sequence[str]) -> str:
    """Where ``run`` keeps the workload's output beside its recording: ``run.jsonl.trtexec.log`` for
    trtexec (``report`` and replay read it back), else ``run.jsonl.out``. Raises ChildError when
    an earlier run's trtexec output is there (it holds one run: a second would replace it)."""
    if is_trtexec(argv):
        path = recording + KEPT_SUFFIX
        if os.path.lexists(path):
            raise ChildError(f"{path} holds an earlier run's trtexec output: record this run to another file")
        return path
    return recording + ".out"


class Child:
    """A running workload, in a process group of its own so that stopping it ends its children
    too; ``on_exit`` is called (from its thread) once it has ended. A guard process ends that
    group if we die without ``stop`` (``kill -9``)."""

    def __init__(self, argv: Sequence[str], *, on_exit: Callable[[], None], log: str | None,
                 on_screen: bool, inputs: Sequence[str] = ()) -> None:
        """``on_screen`` (headless): its output is ours, and trtexec's is also kept in ``log`` as it
        is shown. Else (the TUI: its output would tear the screen) everything goes to ``log``, or
        nowhere, and it reads no input. ``log`` is created here, mode 0600 as the recording is,
        never through a link nor over one of ``inputs``; trtexec's is a new file (it holds one
        run), a plain output is appended to (a second run into the same recording keeps the
        first's). Raises ChildError (or OutputError) before anything runs."""
        self.argv = list(argv)
        trtexec = is_trtexec(argv)
        keep = log is not None and (not on_screen or trtexec)
        try:
            kept = (open(create_output(log, inputs=inputs, private=True, append=not trtexec, new=trtexec),
                         "wb") if keep and log is not None else None)
        except OSError as exc:
            raise ChildError(f"cannot write {log}: {exc.strerror or exc}") from None
        tee = kept if on_screen else None
        try:
            stdout: int | IO[bytes] | None
            if on_screen:
                stdout = subprocess.PIPE if tee is not None else None
            else:
                stdout = kept if kept is not None else subprocess.DEVNULL
            self._process = subprocess.Popen(
                self.argv, stdout=stdout, stderr=None if on_screen else subprocess.STDOUT,
                stdin=None if on_screen else subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            if kept is not None:
                kept.close()
            raise ChildError(f"cannot run {self.argv[0]}: {exc.strerror or exc}") from None
        self._guard = _Guard(self._process.pid)
        BENCHMARK.add(self._process.pid)  # its tree is marked in the process readings
        if kept is not None and tee is None:
            kept.close()  # the child holds its own copy
        threading.Thread(target=self._wait, args=(tee, on_exit), name="jroof-run-wait", daemon=True).start()

    def _wait(self, tee: IO[bytes] | None, on_exit: Callable[[], None]) -> None:
        process = self._process
        try:
            if tee is not None and process.stdout is not None:
                with tee:
                    _copy(process.stdout, tee)
            process.wait()
        finally:
            on_exit()

    @property
    def status(self) -> int | None:
        """Its exit status as a shell gives it (128+N for signal N); None while it runs."""
        code = self._process.poll()
        if code is None:
            return None
        return 128 - code if code < 0 else code

    def stop(self) -> None:
        """We are ending (the workload ended, a signal, the user quit): whatever is left of its
        process group goes too, given ``STOP_GRACE_S`` after SIGTERM before SIGKILL."""
        self._signal_group(signal.SIGTERM)
        try:
            self._process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        self._signal_group(signal.SIGKILL)
        self._process.wait()
        self._guard.release()

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self._process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass  # nothing left of the group (a setuid member is not ours to end)

    def exit_status(self, ours: int) -> int:
        """``run``'s exit status: the workload's when it failed, else ours."""
        return self.status or ours


class _Guard:
    """A small process that ends the workload's process group if we die without ``stop`` (``kill
    -9``, a crash): the workload (its own group, so that it can be ended whole) is no child of the
    guard, so neither our death nor PR_SET_PDEATHSIG, which reaches only the direct child and
    fires when the thread that started it ends, could end its grandchildren."""

    def __init__(self, group: int) -> None:
        read_end, self._write_end = os.pipe()  # neither is inherited by the workload (O_CLOEXEC)
        try:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", GUARD, str(group), str(GUARD_GRACE_S), RELEASE.decode()],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:  # no guard: the workload is still ended by stop() as before
            self._process = None
        finally:
            os.close(read_end)

    def release(self) -> None:
        """The workload's group is ended: the guard leaves without touching it (its number may
        be another group's by the time we exit)."""
        if self._write_end < 0:
            return
        try:
            os.write(self._write_end, RELEASE)
        except OSError:
            pass
        os.close(self._write_end)
        self._write_end = -1
        if self._process is not None:
            try:
                self._process.wait(GUARD_GRACE_S)
            except subprocess.TimeoutExpired:
                pass


def _copy(source: IO[bytes], kept: IO[bytes]) -> None:
    """trtexec's output into its kept log and onto our stdout; a stdout that is closed or full
    stops only the showing, never the keeping (nor the wait for the workload)."""
    shown = True
    for line in source:
        kept.write(line)
        if shown:
            try:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
            except (OSError, ValueError, AttributeError):
                shown = False

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
    too; ``on_exit`` is called (from its thread) once it has ended."""

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

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self._process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass  # nothing left of the group (a setuid member is not ours to end)

    def exit_status(self, ours: int) -> int:
        """``run``'s exit status: the workload's when it failed, else ours."""
        return self.status or ours


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

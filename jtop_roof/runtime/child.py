"""``run``'s workload: one child process beside the monitor or the headless recording, started,
waited for in a thread, and stopped with us. The TUI and ``run --headless`` share it, so they
start, keep its output and give its exit status the same way: its own code, or 128+N when a
signal N ended it (as a shell says it)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO

from jtop_roof.formats.trtexec import KEPT_SUFFIX, is_trtexec
from jtop_roof.model.errors import UserError

#: How long a workload has to end after SIGTERM before it is killed.
STOP_GRACE_S = 10.0


class ChildError(UserError):
    """The workload could not be started (one line, exit 2)."""


def kept_output_path(recording: str, argv: Sequence[str]) -> str:
    """Where ``run`` keeps the workload's output beside its recording: ``run.jsonl.trtexec.log`` for
    trtexec (``report`` and replay read it back), else ``run.jsonl.out``."""
    return recording + (KEPT_SUFFIX if is_trtexec(argv) else ".out")


class Child:
    """A running workload; ``on_exit`` is called (from its thread) once it has ended."""

    def __init__(self, argv: Sequence[str], *, on_exit: Callable[[], None], log: str | None,
                 on_screen: bool) -> None:
        """``on_screen`` (headless): its output is ours, and trtexec's is also kept in ``log`` as it
        is shown. Else (the TUI: its output would tear the screen) everything goes to ``log``, or
        nowhere, and it reads no input. Raises ChildError."""
        self.argv = list(argv)
        tee = log if on_screen and is_trtexec(argv) else None
        kept: IO[bytes] | None = None
        try:
            if not on_screen and log is not None:
                kept = open(log, "wb")  # handed to the child; ours is closed below
            stdout: int | IO[bytes] | None = (subprocess.PIPE if tee else None) if on_screen else (
                kept if kept is not None else subprocess.DEVNULL)
            self._process = subprocess.Popen(
                self.argv, stdout=stdout, stderr=None if on_screen else subprocess.STDOUT,
                stdin=None if on_screen else subprocess.DEVNULL)
        except OSError as exc:
            raise ChildError(f"cannot run {self.argv[0]}: {exc.strerror or exc}") from None
        finally:
            if kept is not None:
                kept.close()  # the child holds its own copy
        threading.Thread(target=self._wait, args=(tee, on_exit), name="jroof-run-wait", daemon=True).start()

    def _wait(self, tee: str | None, on_exit: Callable[[], None]) -> None:
        process = self._process
        if tee is not None and process.stdout is not None:
            with open(tee, "wb") as kept:
                for line in process.stdout:
                    kept.write(line)
                    sys.stdout.buffer.write(line)
                    sys.stdout.buffer.flush()
        process.wait()
        on_exit()

    @property
    def status(self) -> int | None:
        """Its exit status as a shell gives it (128+N for signal N); None while it runs."""
        code = self._process.poll()
        if code is None:
            return None
        return 128 - code if code < 0 else code

    def stop(self) -> None:
        """We are stopping first (a signal, the user quit): the workload goes too."""
        if self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def exit_status(self, ours: int) -> int:
        """``run``'s exit status: the workload's when it failed, else ours."""
        return self.status or ours

"""The seam every command plugs into, and the ways a command speaks to the user.

A command is one module exposing ``COMMAND`` plus one line in ``main.COMMANDS``. Every user error
is one line on stderr and exit code 2, never a traceback: a command raises a ``UserError`` (main
prints it) or returns ``fail(message)``. Every line said on stderr goes through ``for_terminal``: a
name or value from a file, a peer or the command line can neither drive the terminal nor flood it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jtop_roof.formats.userfiles import STDOUT as STDOUT
from jtop_roof.model.metrics import for_terminal

if TYPE_CHECKING:
    from jtop_roof.runtime.config import Config

PROG = "jroof-tui"
EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (no usage dump) with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, for_terminal(f"{self.prog}: error: {message}") + "\n")


@dataclass(frozen=True)
class Command:
    """One command: its flags, its help, and what it does.

    ``run`` gets the parsed flags and the config (defaults < file < environment < flags); a command
    with ``reads_config`` False gets the defaults instead, so that it starts without reading the
    file (``parse`` and ``mark`` stay fast on a small board). ``shared_options`` builds the parser
    whose flags the command inherits (the sources' flags of the monitor, ``record``, ``run`` and
    ``serve``). The monitor is the command without a name on the command line: its ``name`` is the
    program's and its ``help`` is empty.
    """

    name: str
    help: str
    description: str
    epilog: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Config], int]
    reads_config: bool = True
    shared_options: Callable[[], Parser] | None = None


def fail(message: str) -> int:
    """Say what the user must fix, on one line; the exit code of a user error."""
    print(for_terminal(f"{PROG}: error: {message}"), file=sys.stderr)
    return EXIT_USAGE


def warn(message: str) -> None:
    """A note on stderr that does not stop the command."""
    print(for_terminal(f"{PROG}: {message}"), file=sys.stderr)


def emit(text: str, out: str | None, inputs: Sequence[str] = ()) -> int:
    """Write a command's result to stdout (``--out`` not given, or ``-``), or to ``--out`` (never
    through a link, nor over one of the command's ``inputs``: ``create_output``). Standard output
    is never one of ``inputs`` either (``report run.jsonl >> run.jsonl``): OutputError."""
    from jtop_roof.formats.userfiles import create_output, refuse_stream_over_input

    if out is None or out == STDOUT:
        where = "standard output" if out is None else "standard output (--out -)"
        refuse_stream_over_input(sys.stdout, where, inputs)
        sys.stdout.write(text)
        return 0

    try:
        with open(create_output(out, inputs=inputs), "w", encoding="utf-8") as stream:
            stream.write(text)
    except OSError as exc:
        return fail(f"cannot write {out}: {exc.strerror or exc}")
    return 0

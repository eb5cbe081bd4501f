"""``jroof-tui``: the parser built from the commands' table, and the one place a user error becomes
one line on stderr and exit code 2.

A command's module is imported here, but what it runs is imported only when it runs: ``parse``,
``mark`` and ``--help`` start without the session, Textual, YAML or numpy.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import TextIO

from jtop_roof.commands import (
    compare,
    devices,
    export,
    mark,
    monitor,
    parse,
    plot,
    predict,
    probe,
    record,
    report,
    roof,
    run,
    serve,
)
from jtop_roof.commands.base import Command, Parser, fail
from jtop_roof.commands.options import config_of, flag_names
from jtop_roof.model.errors import UserError
from jtop_roof.runtime.config import Config

#: The subcommands, in the order ``--help`` lists them; no subcommand is the monitor.
COMMANDS: tuple[Command, ...] = (
    record.COMMAND,
    parse.COMMAND,
    report.COMMAND,
    devices.COMMAND,
    roof.COMMAND,
    run.COMMAND,
    probe.COMMAND,
    compare.COMMAND,
    predict.COMMAND,
    export.COMMAND,
    plot.COMMAND,
    serve.COMMAND,
    mark.COMMAND,
)
MONITOR = monitor.COMMAND


def _inherited(command: Command) -> list[Parser]:
    return [] if command.shared_options is None else [command.shared_options()]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=MONITOR.name, description=MONITOR.description, parents=_inherited(MONITOR),
                    epilog=MONITOR.epilog)
    MONITOR.add_arguments(parser)
    names = ",".join(command.name for command in COMMANDS)
    sub = parser.add_subparsers(dest="command", metavar=f"{{{names}}}", parser_class=Parser)
    for command in COMMANDS:
        command.add_arguments(sub.add_parser(command.name, parents=_inherited(command), help=command.help,
                                             description=command.description, epilog=command.epilog))
    return parser


def never_fail_to_encode(stream: TextIO) -> None:
    """Characters the stream's encoding lacks (``—`` on an ASCII or ``LANG=C`` stdout, a pipe
    included) are written as ``?``: the result is still given, never a UnicodeEncodeError."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="replace")


def main(argv: list[str] | None = None) -> int:
    never_fail_to_encode(sys.stdout)
    parser = build_parser()
    args = parser.parse_args(argv)
    command = next((c for c in COMMANDS if c.name == args.command), MONITOR)
    try:
        config = config_of(args, flag_names(parser, args.command)) if command.reads_config else Config()
        return command.run(args, config)
    except UserError as exc:
        return fail(str(exc))
    except BrokenPipeError:
        # `jroof-tui parse log | head`: the reader left; not an error. Point stdout at devnull so
        # the interpreter's final flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130

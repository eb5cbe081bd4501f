"""``jroof-tui`` with no subcommand: the live screen. Textual is imported only when it starts, so the
other commands and ``--help`` stay light on a small board."""

from __future__ import annotations

import argparse
import os

from jtop_roof import __version__
from jtop_roof.commands.base import PROG, Command, fail, warn
from jtop_roof.commands.options import STDIN, StdinError, replay_of, replay_readable, source_options
from jtop_roof.commands.source_flags import refuse_unused, sources_of
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"jroof-tui {__version__}")
    parser.add_argument("--record", metavar="FILE", default=argparse.SUPPRESS,
                        help="record every sample to FILE (JSON Lines) while monitoring")
    parser.add_argument("--theme", metavar="NAME", default=argparse.SUPPRESS, help="colour theme")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.tui.run import run_app
    from jtop_roof.tui.themes import theme_name_error

    problem = theme_name_error(config.theme)
    if problem is not None:
        return fail(problem)
    from jtop_roof.roofline.measured import load_probe
    from jtop_roof.roofline.workload import load_workload

    refuse_unused(args, config, roofless=None)
    if config.record == "-":
        return fail("--record - would write into the screen: `jroof-tui record -` streams the "
                    "recording to standard output without one")
    # A bad file is one line now, not a surprise on screen.
    if config.probe is not None:
        load_probe(config.probe)
    if config.workload is not None:
        load_workload(config.workload)
    keys = _keyboard() if replay_of(args) == STDIN else None
    with replay_readable(args, config) as replay:
        if keys is not None:
            os.dup2(keys, 0)  # the log came on standard input; the keys come from the terminal
            os.close(keys)
        chosen = sources_of(config, replay, interactive=True, several=True)
        hint = chosen.hint
        status = run_app(chosen.source, config, record_path=config.record, notices=[hint] if hint else (),
                         more=chosen.sources[1:])
    if hint:
        warn(hint)  # still readable once the screen is gone
    return status


def _keyboard() -> int:
    """The terminal, opened for the screen's keys where ``--replay -`` takes standard input (as
    ``less`` does); StdinError without one (a cron job, ``ssh host cmd`` without ``-t``)."""
    try:
        return os.open("/dev/tty", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise StdinError(f"--replay - reads the log from standard input, so the screen takes its keys "
                         f"from the terminal, and there is none ({exc.strerror or exc}): "
                         "`jroof-tui record FILE --replay -` needs no screen") from None


COMMAND = Command(
    name=PROG,
    help="",
    description="Terminal monitor and flight recorder for NVIDIA Jetson boards.",
    epilog="examples: jroof-tui   |   jroof-tui --record run1.jsonl   |   "
    "jroof-tui --replay run1.jsonl --speed 4   |   jroof-tui --ssh nano1 --ssh nano2",
    add_arguments=add_arguments,
    run=run,
    shared_options=source_options,
)

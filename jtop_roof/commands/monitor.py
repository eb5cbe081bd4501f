"""``jroof-tui`` with no subcommand: the live screen. Textual is imported only when it starts, so the
other commands and ``--help`` stay light on a small board."""

from __future__ import annotations

import argparse

from jtop_roof import __version__
from jtop_roof.commands.base import PROG, Command, fail, warn
from jtop_roof.commands.options import check_trtexec, refuse_unplaced, source_options
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"jroof-tui {__version__}")
    parser.add_argument("--record", metavar="FILE", default=argparse.SUPPRESS,
                        help="record every sample to FILE (JSON Lines) while monitoring")
    parser.add_argument("--theme", metavar="NAME", default=argparse.SUPPRESS, help="colour theme")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.runtime.session import make_sources, resolve_source_kind
    from jtop_roof.tui.run import run_app
    from jtop_roof.tui.themes import theme_name_error

    problem = theme_name_error(config.theme)
    if problem is not None:
        return fail(problem)
    from jtop_roof.roofline.measured import load_probe
    from jtop_roof.roofline.workload import load_workload

    refuse_unplaced(config, getattr(args, "replay", None))
    # A bad file is one line now, not a surprise on screen.
    if config.probe is not None:
        load_probe(config.probe)
    if config.workload is not None:
        load_workload(config.workload)
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    sources = make_sources(config, kind, getattr(args, "replay", None), interactive=True)
    check_trtexec(sources, config)
    status = run_app(sources[0], config, record_path=config.record, notices=[hint] if hint else (),
                     more=sources[1:])
    if hint:
        warn(hint)  # still readable once the screen is gone
    return status


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

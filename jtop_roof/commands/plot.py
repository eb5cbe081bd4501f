"""``jroof-tui plot FILE``: a figure of a run (matplotlib, imported only here)."""

from __future__ import annotations

import argparse

from jtop_roof.commands.base import Command, warn
from jtop_roof.commands.options import file_args, file_flags
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--out", metavar="PATH", default=None,
                        help="chart.png, .svg or .pdf (default: FILE's name with .png, here)")
    parser.add_argument("--title", metavar="TEXT", default=None, help="the figure's title (default: FILE)")
    file_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.plot import plot_file

    tz, interval_s = file_args(args)
    written = plot_file(args.file, args.out, tz=tz, interval_s=interval_s, config=config, title=args.title)
    warn(f"wrote {written}")
    return 0


COMMAND = Command(
    name="plot",
    help="a figure of a run: clocks, loads, power, temperatures, phases, roofline",
    description="Draw a recording or a tegrastats log: clocks, loads, power and temperatures over "
    "time with phases and throttle events, and the roofline where phases reported their work. "
    "Needs matplotlib: pip install 'jroof-tui[plot]'.",
    epilog="example: jroof-tui plot run1.jsonl --out run1.svg",
    add_arguments=add_arguments,
    run=run,
)

"""``jroof-tui export FILE``: one flat row per sample, for pandas and spreadsheets."""

from __future__ import annotations

import argparse
import os
import sys

from jtop_roof.commands.base import Command, warn
from jtop_roof.commands.options import file_args, file_flags, readable
from jtop_roof.runtime.config import Config

#: What ``--format`` takes; without it, ``--out``'s suffix when it is one of these, else csv.
EXPORT_FORMATS = ("csv", "jsonl", "parquet")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--format", choices=EXPORT_FORMATS, default=None,
                        help="csv (default; or from --out's suffix), jsonl, or parquet (needs pyarrow)")
    parser.add_argument("--out", metavar="PATH", default=None, help="write here instead of stdout")
    file_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.export import export_file

    tz, interval_s = file_args(args)
    fmt = args.format
    if fmt is None:
        suffix = os.path.splitext(args.out or "")[1].lower().lstrip(".")
        fmt = suffix if suffix in EXPORT_FORMATS else "csv"
    with readable(args.file) as path:
        export_file(path, fmt, args.out, tz=tz, interval_s=interval_s, config=config, warn=warn)
    sys.stdout.flush()
    return 0


COMMAND = Command(
    name="export",
    help="one flat row per sample (csv, jsonl, parquet) for pandas and spreadsheets",
    description="Export every sample of a recording or a tegrastats log as one flat row, with the "
    "phase and the throttle events as columns (names in the README).",
    epilog="example: jroof-tui export run1.jsonl --out run1.csv",
    add_arguments=add_arguments,
    run=run,
)

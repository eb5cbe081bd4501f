"""``jroof-tui export FILE``: one flat row per sample, for pandas and spreadsheets."""

from __future__ import annotations

import argparse
import os
import sys

from jtop_roof.commands.base import STDOUT, Command, fail, warn
from jtop_roof.commands.options import (
    OUT_HELP,
    binary_out,
    file_args,
    file_flags,
    input_files,
    placed_trtexec,
    readable,
    refuse_out_over_inputs,
    tell_written,
    trtexec_flags,
)
from jtop_roof.outputs.output_formats import export_for_out, export_format, export_help, export_names
from jtop_roof.runtime.config import Config

#: What one row of each ``--table`` is, as the line after ``--out`` says.
ROWS_OF = {"samples": "samples", "power": "power readings", "processes": "process rows"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--format", choices=export_names(), default=None, help=export_help())
    parser.add_argument("--out", metavar="PATH", default=None, help=OUT_HELP)
    parser.add_argument("--table", choices=tuple(ROWS_OF), default="samples",
                        help="samples (default: one row per sample), power (one row per power "
                        "reading of `record --power-hz`: the board's monitors, NVML, RAPL) or processes "
                        "(one row per process per process reading of a recording)")
    file_flags(parser, refuse=("--workload", "--ncu", "--probe"))
    trtexec_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.formats.nosamples import require_samples
    from jtop_roof.outputs.export import export_file

    tz, interval_s = file_args(args)
    spec = export_for_out(args.out) if args.format is None else export_format(args.format)
    fmt = spec.name
    if spec.binary:
        if args.out is None:
            return fail(f"{fmt} is binary: give --out PATH (or --out - for standard output)")
        binary_out(args.out, fmt)
    if spec.needs == "pyarrow":
        # pyarrow's default allocator (mimalloc) keeps what each row group freed: some 15 MB more
        # at the peak. The user's own choice, where given, stands.
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # Text to standard output is export's own stdout path; a binary format goes through create_output's.
    out = None if args.out == STDOUT and not spec.binary else args.out
    refuse_out_over_inputs(args.out, input_files(args, args.file))
    with readable(args.file) as path:
        try:
            require_samples(path, args.file)
            placed = placed_trtexec(args, path, tz=tz, interval_s=interval_s)
        except OSError as exc:
            return fail(f"cannot read {args.file}: {exc.strerror or exc}")
        if placed.note is not None:
            warn(placed.note)
        rows = export_file(path, fmt, out, tz=tz, interval_s=placed.interval_s(interval_s),
                           config=config, warn=warn,
                           table=args.table, trtexec=placed.run, log_start=placed.log_start)
    sys.stdout.flush()
    if args.out is not None:
        tell_written(args.out, f"{rows} {ROWS_OF[args.table]}, {fmt}")
    return 0


COMMAND = Command(
    name="export",
    help="one flat row per sample or power reading (csv, jsonl, parquet) for pandas and spreadsheets",
    description="Export every sample of a recording or a tegrastats log as one flat row, with the "
    "phase and the throttle events as columns (names in docs/export.md).",
    epilog="example: jroof-tui export run1.jsonl --out run1.csv",
    add_arguments=add_arguments,
    run=run,
)

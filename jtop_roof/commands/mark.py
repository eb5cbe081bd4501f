"""``jroof-tui mark [NAME] [--end] [--work N]``: a phase boundary or a work report for the running
monitors of this user. It starts without reading the config or importing the session: a benchmark
script calls it between steps."""

from __future__ import annotations

import argparse

from jtop_roof.commands.base import Command, fail, warn
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", nargs="?", help="phase name (default: phase N)")
    parser.add_argument("--end", action="store_true", help="end the current phase")
    parser.add_argument("--work", type=float, metavar="N", default=None,
                        help="report N iterations done (the roofline point comes from these)")
    parser.add_argument("--flops", type=float, metavar="F", default=None, help="with --work: their FLOPs")
    parser.add_argument("--bytes", type=float, metavar="B", dest="bytes_", default=None,
                        help="with --work: their DRAM bytes (read + written)")
    parser.add_argument("--precision", metavar="P", default=None, help="with --work: e.g. bf16, fp16, int8")


def run(args: argparse.Namespace, _defaults: Config) -> int:
    from jtop_roof.runtime.control import DeliveryError, WorkReport, send_marker, send_work

    work_flags = args.flops is not None or args.bytes_ is not None or args.precision is not None
    if args.work is None and work_flags:
        return fail("--flops, --bytes and --precision go with --work N")
    if args.work is not None and (args.end or args.name):
        return fail("--work N reports work: give it without a NAME or --end")
    if args.end and args.name:
        return fail("give a NAME to start a phase, or --end alone")
    try:
        if args.work is not None:
            what = "the work report"
            report = WorkReport(args.work, args.flops, args.bytes_, args.precision)
            delivered = send_work(report, for_parent=True)
        else:
            what = "the marker"
            delivered = send_marker("phase_end" if args.end else "phase_start", args.name, for_parent=True)
    except ValueError as exc:  # a name or an amount out of bounds
        return fail(str(exc))
    except DeliveryError as exc:  # a running monitor neither took it nor refused it
        warn(str(exc))
        return 1
    if delivered == 0:
        warn(f"no running jroof-tui of this user took {what}")
        return 1
    return 0


COMMAND = Command(
    name="mark",
    help="start (or --end) a phase in every running jroof-tui of this user",
    description="For benchmark scripts: mark a phase boundary in the running monitors (TUI or record) "
    "of this user, through a per-user Unix socket.",
    epilog="example: jroof-tui mark warmup; ...; jroof-tui mark timed; ...; "
    "jroof-tui mark --work 1000 --flops 8.2e12; jroof-tui mark --end",
    add_arguments=add_arguments,
    run=run,
    reads_config=False,
)

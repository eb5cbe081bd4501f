"""``jroof-tui report FILE``: the run and each phase, through the same pipeline as the monitor."""

from __future__ import annotations

import argparse
import json

from jtop_roof.commands.base import Command, emit, fail, warn
from jtop_roof.commands.options import board_flags, file_args, readable
from jtop_roof.runtime.config import REPORT_FORMATS, Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--format", choices=REPORT_FORMATS, default="md", help="md (default), json or csv")
    parser.add_argument("--out", metavar="PATH", default=None, help="write here instead of stdout")
    parser.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                        help="spacing of lines without timestamps (default 1000)")
    parser.add_argument("--tz", metavar="ZONE", default=None,
                        help="zone of tegrastats stamps and of the times printed (default: this machine's)")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (its `devices:` entries)")
    parser.add_argument("--trtexec", metavar="FILE", default=None,
                        help="trtexec's output for the same run: its build, warm-up and timed phases "
                        "(only timed counts), iterations and throughput")
    parser.add_argument("--trtexec-offset", metavar="S", type=float, dest="trtexec_offset", default=0.0,
                        help="seconds added to trtexec's stamps (for clocks that disagree)")
    parser.add_argument("--workload", metavar="FILE", default=None,
                        help="workload spec (YAML): FLOPs or MACs and DRAM bytes per iteration")
    parser.add_argument("--ncu", metavar="FILE", default=None,
                        help="Nsight Compute CSV (ncu --csv): each kernel on the roof, by ncu's own numbers")
    parser.add_argument("--probe", metavar="FILE", default=None,
                        help="a `jroof-tui probe` result: measured ceilings beside the datasheet's")
    board_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.formats.logfile import ReadStats, RecordingError
    from jtop_roof.formats.ncu import NcuError, read_ncu_csv
    from jtop_roof.formats.trtexec import TrtexecError, read_trtexec
    from jtop_roof.outputs.report import report_file, to_csv, to_markdown
    from jtop_roof.roofline.measured import ProbeError, load_probe
    from jtop_roof.roofline.workload import WorkloadError, load_workload

    tz, interval_s = file_args(args)
    path = args.file
    stats = ReadStats()
    try:
        with readable(path) as readable_path:
            report = report_file(
                readable_path, tz=tz, interval_s=interval_s, config=config, stats=stats,
                trtexec=None if args.trtexec is None else read_trtexec(args.trtexec, tz, args.trtexec_offset),
                workload=None if args.workload is None else load_workload(args.workload),
                kernels=() if args.ncu is None else read_ncu_csv(args.ncu),
                probe=None if args.probe is None else load_probe(args.probe))
        report["source"]["file"] = path  # "-": standard input, not where it was spooled
    except OSError as exc:
        return fail(f"cannot read {path}: {exc.strerror or exc}")
    except (RecordingError, TrtexecError, WorkloadError, NcuError, ProbeError) as exc:
        return fail(f"cannot report {path}: {exc}")
    if args.trtexec is None and report["source"].get("trtexec"):
        warn(f"with trtexec's output kept beside it by `run`: {report['source']['trtexec']}")
    if report["source"].get("trtexec_unread"):
        warn(f"{report['source']['trtexec_unread']}; reported without it")
    if stats.truncated_tail:
        warn(f"{path}: the last line is cut short (line {stats.last_line}); the rest is used")
    elif stats.skipped_lines:
        warn(f"{path}: skipped {len(stats.skipped_lines)} lines that are not records")
    if args.format == "json":
        text = json.dumps(report, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    elif args.format == "csv":
        text = to_csv(report)
    else:
        text = to_markdown(report)
    return emit(text, args.out, inputs=[args.file])


COMMAND = Command(
    name="report",
    help="energy, power and duration of the run and each phase",
    description="Report the whole run and each phase of a jroof recording or a tegrastats log: duration, "
    "samples, gaps, energy per rail (J) and mean/peak power, through the same pipeline as the monitor.",
    epilog="example: jroof-tui report run1.jsonl --workload resnet50_int8.yaml",
    add_arguments=add_arguments,
    run=run,
)

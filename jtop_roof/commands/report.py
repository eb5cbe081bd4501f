"""``jroof-tui report FILE``: the run and each phase, through the same pipeline as the monitor.

``reported`` is the one place a file's report is built from the inputs the user gave (trtexec's
output, a workload, Nsight Compute's kernels, a probe), each used or refused in one line: ``plot``
draws the report it returns, so the two cannot disagree.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from jtop_roof.commands.base import Command, emit, warn
from jtop_roof.commands.options import (
    OUT_HELP,
    board_flags,
    file_args,
    input_files,
    placed_trtexec,
    readable,
    refuse_out_over_inputs,
    roof_flags,
    tell_written,
    trtexec_flags,
)
from jtop_roof.model.errors import UserError
from jtop_roof.outputs.output_formats import report_format, report_help, report_names
from jtop_roof.runtime.config import Config

if TYPE_CHECKING:
    from jtop_roof.formats.logfile import ReadStats
    from jtop_roof.formats.ncu import Kernel
    from jtop_roof.roofline.measured import Probe
    from jtop_roof.roofline.workload import Workload


class ReportInputError(UserError):
    """A file or an input of ``report`` (or ``plot``) that cannot be read or used (one line)."""


@dataclass(frozen=True)
class RoofInputs:
    """``--workload``, ``--ncu`` and ``--probe`` as read (None or empty where not given)."""

    workload: Workload | None
    kernels: tuple[Kernel, ...]
    probe: Probe | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--format", choices=report_names(), default=report_names()[0], help=report_help())
    parser.add_argument("--out", metavar="PATH", default=None, help=OUT_HELP)
    parser.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                        help="spacing of lines without timestamps (default 1000)")
    parser.add_argument("--tz", metavar="ZONE", default=None,
                        help="zone of tegrastats stamps and of the times printed (default: this machine's)")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (its `devices:` entries)")
    trtexec_flags(parser)
    roof_flags(parser)
    board_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    tz, interval_s = file_args(args)
    inputs = input_files(args, args.file)
    refuse_out_over_inputs(args.out, inputs)
    with readable(args.file) as path:
        report = reported(args, config, path, tz=tz, interval_s=interval_s, command="report")[0]
    text = report_format(args.format).render(report)
    code = emit(text, args.out, inputs=inputs)
    if code == 0 and args.out is not None:
        tell_written(args.out, f"report, {args.format}")
    return code


def reported(args: argparse.Namespace, config: Config, path: str, *, tz: tzinfo, interval_s: float | None,
             command: str) -> tuple[dict[str, Any], RoofInputs]:
    """The report of ``path`` (``args.file``, or where standard input was spooled) with every input
    of ``report`` in ``args``, each used or refused in one line (UserError), and the roof inputs
    as read; its notes are said on stderr. ``command`` names what failed in an error."""
    from jtop_roof.formats.logfile import ReadStats, RecordingError
    from jtop_roof.formats.ncu import NcuError, read_ncu_csv
    from jtop_roof.formats.nosamples import require_samples
    from jtop_roof.formats.trtexec import TrtexecError
    from jtop_roof.outputs.report import report_file
    from jtop_roof.roofline.measured import ProbeError, load_probe
    from jtop_roof.roofline.workload import WorkloadError, load_workload

    name = args.file
    stats = ReadStats()
    try:
        require_samples(path, name)
        inputs = RoofInputs(None if args.workload is None else load_workload(args.workload),
                            () if args.ncu is None else read_ncu_csv(args.ncu),
                            None if args.probe is None else load_probe(args.probe))
        placed = placed_trtexec(args, path, tz=tz, interval_s=interval_s)
        report = report_file(path, tz=tz, interval_s=interval_s, config=config, stats=stats,
                             trtexec=placed.run, workload=inputs.workload, kernels=inputs.kernels,
                             probe=inputs.probe, placement=placed.placement,
                             tz_given=getattr(args, "tz", None) is not None)
    except OSError as exc:
        raise ReportInputError(f"cannot read {name}: {exc.strerror or exc}") from None
    except (RecordingError, TrtexecError, WorkloadError, NcuError, ProbeError) as exc:
        raise ReportInputError(f"cannot {command} {name}: {exc}") from None
    report["source"]["file"] = name  # "-": standard input, not where it was spooled
    refused = unused_input(args, report, config, inputs)
    if refused is not None:
        raise ReportInputError(refused)
    for note in said_notes(report, stats, name, kept=args.trtexec is None):
        warn(note)
    return report, inputs


def said_notes(report: dict[str, Any], stats: ReadStats, name: str, *, kept: bool) -> list[str]:
    """What ``reported`` says on stderr, each note once: how trtexec's run lies on the file,
    trtexec's output ``run`` kept beside it (``kept``: none was given), why it was not used, and a
    cut or skipped line."""
    source = report["source"]
    notes = []
    if source.get("trtexec_note"):
        notes.append(source["trtexec_note"])
    if kept and source.get("trtexec"):
        notes.append(f"with trtexec's output kept beside it by `run`: {source['trtexec']}")
    if source.get("trtexec_unread"):
        notes.append(f"{source['trtexec_unread']}; reported without it")
    if stats.truncated_tail:
        notes.append(f"{name}: the last line is cut short (line {stats.last_line}); the rest is used")
    elif stats.skipped_lines:
        notes.append(f"{name}: skipped {stats.skipped_lines} lines that are not records")
    return list(dict.fromkeys(notes))


def unused_input(args: argparse.Namespace, report: dict[str, Any], config: Config,
                 inputs: RoofInputs) -> str | None:
    """Why an input given would be read and used for nothing, or placed on a roof not this
    board's (the report is then refused: one line), or None."""
    from jtop_roof.analysis.input_fit import kernels_misfit, probe_misfit, workload_misfit
    from jtop_roof.roofline.devices import load_devices

    devices = load_devices(config.devices)
    named = [report["device"]] if report["device"] else report.get("device_candidates") or []
    board = [devices[each] for each in named if each in devices]  # its device, else its candidates
    if inputs.workload is not None:
        spans = [report["whole"], *report["phases"]]
        if not any(span["workload"] for span in spans):
            return (f"--workload {args.workload}: {args.file} reports no work (iterations) to put it "
                    "on: give --trtexec, or report the work from the run (`from jtop_roof import hook`)")
        if not any(span["roofline"] and span["roofline"]["from_workload"] for span in spans):
            return (f"--workload {args.workload}: the work {args.file} reports carries its own FLOPs, "
                    "bytes and precision, so the spec would be used for nothing")
        why = workload_misfit(inputs.workload, board)
        if why is not None:
            return f"--workload {args.workload}: {why}"
    why = None if inputs.probe is None else probe_misfit(inputs.probe, board)
    if why is not None:
        return f"--probe {args.probe}: {why}"
    why = kernels_misfit(inputs.kernels, board, devices)
    return None if why is None else f"--ncu {args.ncu}: {why}"


COMMAND = Command(
    name="report",
    help="energy, power and duration of the run and each phase",
    description="Report the whole run and each phase of a jroof recording or a tegrastats log: duration, "
    "samples, gaps, energy per rail (J) and mean/peak power, through the same pipeline as the monitor.",
    epilog="example: jroof-tui report run1.jsonl --workload resnet50_int8.yaml",
    add_arguments=add_arguments,
    run=run,
)

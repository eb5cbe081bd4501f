"""``jroof-tui plot FILE``: a figure of a run (matplotlib, imported only here).

It takes ``report``'s inputs and draws the report ``report`` builds from them (``report.reported``):
trtexec's phases on the time panels, the workload's and the kernels' points and the probe's roof
on the roofline, the device and mode the ceilings are of.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from jtop_roof.commands.base import STDOUT, Command
from jtop_roof.commands.options import (
    FlagError,
    binary_out,
    file_args,
    file_flags,
    input_files,
    readable,
    refuse_out_over_inputs,
    roof_flags,
    tell_written,
    trtexec_flags,
)
from jtop_roof.model.extras import install_hint
from jtop_roof.runtime.config import Config

#: What ``--format`` takes (``outputs.plot.FORMATS``, without importing matplotlib's module for --help).
FIGURE_FORMATS = ("png", "svg", "pdf")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a recording or a tegrastats log (`-`: standard input, "
                        "with --out)")
    parser.add_argument("--out", metavar="PATH", default=None,
                        help="chart.png, .svg or .pdf (default: FILE's name with .png, here; -: stdout, "
                        "png unless --format says, never png or pdf onto a terminal)")
    parser.add_argument("--format", choices=FIGURE_FORMATS, default=None,
                        help="png, svg or pdf (default: from --out's suffix)")
    parser.add_argument("--title", metavar="TEXT", default=None, help="the figure's title (default: FILE)")
    parser.add_argument("--term", action="store_true",
                        help="draw power, clocks and phases in the terminal with plotext (no matplotlib); "
                        "with --out, the text goes to that file, without colours")
    parser.add_argument("--size", metavar="WxH", default=None,
                        help="--term's size in characters (default: the terminal's)")
    file_flags(parser, refuse=())
    trtexec_flags(parser)
    roof_flags(parser)


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.commands.report import reported
    from jtop_roof.outputs.plot import default_out, figure_format, plot_file, pyplot

    tz, interval_s = file_args(args)
    if args.term:
        return run_term(args, config, tz, interval_s)
    if args.size is not None:
        raise FlagError("--size is --term's: the figure's size in characters")
    if args.file == "-" and args.out is None:
        raise FlagError("plot -: give --out PATH (standard input has no name to make one from)")
    out = args.out or default_out(args.file)
    fmt = args.format or ("png" if out == STDOUT else figure_format(out))
    if fmt != "svg":
        binary_out(out, fmt)
    refuse_out_over_inputs(out, input_files(args, args.file))
    pyplot()  # without matplotlib: one line now, before the file is read
    with readable(args.file) as path:
        report, inputs = reported(args, config, path, tz=tz, interval_s=interval_s, command="plot")
        refused = undrawn_input(args, report, config)
        if refused is not None:
            raise FlagError(refused)
        fitted = (report.get("trtexec") or {}).get("interval_s")  # a plain log fitted to trtexec's run
        written = plot_file(path, out, tz=tz, interval_s=fitted or interval_s, config=config,
                            title=args.title or Path(args.file).name, report=report, probe=inputs.probe,
                            fmt=fmt)
    tell_written(written, f"figure, {fmt}")
    return 0


def run_term(args: argparse.Namespace, config: Config, tz: Any, interval_s: float | None) -> int:
    """``plot --term``: the text figure on stdout (colours where it is a terminal), or in ``--out``
    without colours; what only the matplotlib figure draws (a format, the roofline) is refused."""
    import sys

    from jtop_roof.commands.report import reported
    from jtop_roof.outputs.plot_term import parse_size, plot_term, terminal_size

    if args.format is not None:
        raise FlagError(f"--format {args.format}: --term draws text; leave --format out")
    for flag, value in (("--workload", args.workload), ("--ncu", args.ncu), ("--probe", args.probe)):
        if value is not None:
            raise FlagError(f"{flag} {value}: plot draws it on the roofline, which --term has none of")
    size = parse_size(args.size) if args.size is not None else terminal_size()
    out = args.out or STDOUT
    refuse_out_over_inputs(out, input_files(args, args.file))
    with readable(args.file) as path:
        report, _ = reported(args, config, path, tz=tz, interval_s=interval_s, command="plot")
        fitted = (report.get("trtexec") or {}).get("interval_s")  # a plain log fitted to trtexec's run
        text = plot_term(path, size=size, colour=out == STDOUT and sys.stdout.isatty(), tz=tz,
                         interval_s=fitted or interval_s, config=config,
                         title=args.title or Path(args.file).name, report=report)
    if out == STDOUT:
        sys.stdout.write(text)
        return 0
    from jtop_roof.formats.userfiles import create_output

    try:
        with open(create_output(out, inputs=[args.file]), "w", encoding="utf-8") as target:
            target.write(text)
    except OSError as exc:
        raise FlagError(f"cannot write {out}: {exc.strerror or exc}") from None
    tell_written(out, "figure, text")
    return 0


def undrawn_input(args: argparse.Namespace, report: dict[str, Any], config: Config) -> str | None:
    """Why ``--workload``, ``--ncu`` or ``--probe`` would be read and drawn nowhere (plot shows
    them only on the roofline), or None; ``report`` has already refused what fits no board."""
    from jtop_roof.outputs.plot import roofline_data

    given = [(flag, value) for flag, value in (("--workload", args.workload), ("--ncu", args.ncu),
                                               ("--probe", args.probe)) if value is not None]
    if not given:
        return None
    flag, value = given[0]
    if roofline_data(report, config) is None:
        why = ("its device is unknown (give --device ID)" if not report.get("device") else
               "no phase reported its work (iterations with FLOPs) and no kernel has a rate")
        return f"{flag} {value}: plot draws it on the roofline, which {args.file} has none of: {why}"
    if args.ncu is not None and not any(k.get("achieved_flops_per_s") for k in report.get("ncu") or []):
        return f"--ncu {args.ncu}: no kernel has FLOPs and a duration to place on the roofline"
    return None


COMMAND = Command(
    name="plot",
    help="a figure of a run: clocks, loads, power, temperatures, phases, roofline",
    description="Draw a recording or a tegrastats log: clocks, loads, power and temperatures over "
    "time with phases and throttle events, and the roofline where phases reported their work. It "
    "takes report's inputs (--trtexec, --workload, --ncu, --probe, --device, --power-mode) and draws "
    "what report finds with them. Needs matplotlib: " + install_hint("plot", "matplotlib") + "; "
    "--term draws power, clocks and phases in the terminal with plotext instead.",
    epilog="example: jroof-tui plot run1.jsonl --trtexec trtexec.log --workload resnet50.yaml --out run1.svg",
    add_arguments=add_arguments,
    run=run,
)

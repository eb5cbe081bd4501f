"""Command line: ``jroof-tui`` (monitor), ``jroof-tui record FILE``, ``jroof-tui parse FILE``,
``jroof-tui mark [NAME] [--end]``.

Every user error is one line on stderr and exit code 2, never a traceback. Textual is imported only
when the monitor starts, so ``parse``, ``record`` and ``--help`` stay light on a small board.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

from jtop_roof import __version__
from jtop_roof.formats.logfile import open_text
from jtop_roof.runtime.config import (
    MIN_INTERVAL_MS,
    REPORT_FORMATS,
    SOURCES,
    Config,
    ConfigError,
    load_config,
)

EXIT_USAGE = 2
#: Lines ``parse`` writes at once when its input is a file.
PARSE_BLOCK_LINES = 256


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (no usage dump) with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _fail(message: str) -> int:
    print(f"jroof-tui: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _source_options(*, prometheus: bool = True) -> _Parser:
    """Options shared by the monitor and ``record`` (SUPPRESS keeps a subcommand from resetting them);
    ``serve`` has its own ``--prometheus`` (its address optional)."""
    common = _Parser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--config", metavar="PATH", help="config file (default: $JROOF_CONFIG, then "
                        "~/.config/jroof/config.yaml)")
    common.add_argument("--source", choices=SOURCES, help="where samples come from (default: auto = "
                        "tegrastats when on PATH, else this host)")
    common.add_argument("--replay", metavar="FILE", help="replay a tegrastats log or a jroof recording")
    common.add_argument("--follow", action="store_true", help="with --replay: keep reading a growing file")
    common.add_argument("--speed", type=float, metavar="X", help="replay speed, 0.25 to 64 (default 1)")
    common.add_argument("--interval", type=int, metavar="MS", dest="interval_ms",
                        help="sampling interval in ms (tegrastats --interval; spacing of logs "
                        "without timestamps; default 1000)")
    common.add_argument("--tz", metavar="ZONE", help="time zone of tegrastats stamps (default: this "
                        "machine's)")
    common.add_argument("--tegrastats-command", metavar="CMD", dest="tegrastats_command",
                        help="how to run tegrastats, e.g. 'sudo -n tegrastats' (default: tegrastats)")
    common.add_argument("--ssh", metavar="HOST", action="append", dest="ssh_hosts", default=argparse.SUPPRESS,
                        help="watch this board: run the tegrastats command there through your ssh "
                        "(~/.ssh/config, keys, agent; BatchMode, never a password prompt)")
    common.add_argument("--workload", metavar="FILE", default=argparse.SUPPRESS,
                        help="workload spec (YAML): FLOPs or MACs and DRAM bytes per iteration")
    common.add_argument("--trtexec", metavar="FILE", default=argparse.SUPPRESS,
                        help="with --replay: trtexec's output of that run (its phases, iterations)")
    common.add_argument("--trtexec-offset", metavar="S", type=float, dest="trtexec_offset",
                        default=argparse.SUPPRESS, help="seconds added to trtexec's stamps")
    if prometheus:
        common.add_argument("--prometheus", metavar="ADDR", default=argparse.SUPPRESS,
                            help="also serve Prometheus metrics, as --prometheus=ADDR (HOST:PORT or PORT on "
                            "loopback; e.g. --prometheus=9101)")
    common.add_argument("--probe", metavar="FILE", dest="probe", default=argparse.SUPPRESS,
                        help="a `jroof-tui probe` result: its measured roof drawn beside the datasheet's")
    _board_flags(common)
    return common


def _board_flags(parser: argparse.ArgumentParser) -> None:
    """``--device`` and ``--power-mode``: for every command that reads samples."""
    parser.add_argument("--device", metavar="ID", default=argparse.SUPPRESS,
                        help="the board or GPU, by its device-database id (`jroof-tui devices`), where "
                        "the source does not say (plain logs)")
    parser.add_argument("--power-mode", metavar="NAME", dest="power_mode", default=argparse.SUPPRESS,
                        help="the nvpmodel mode (e.g. 7W, MAXN_SUPER) where the source does not say")


def build_parser() -> argparse.ArgumentParser:
    common = _source_options()
    parser = _Parser(
        prog="jroof-tui",
        description="Terminal monitor and flight recorder for NVIDIA Jetson boards.",
        parents=[common],
        epilog="examples: jroof-tui   |   jroof-tui --record run1.jsonl   |   "
        "jroof-tui --replay run1.jsonl --speed 4   |   jroof-tui --ssh nano1 --ssh nano2",
    )
    parser.add_argument("--version", action="version", version=f"jroof-tui {__version__}")
    parser.add_argument("--record", metavar="FILE", default=argparse.SUPPRESS,
                        help="record every sample to FILE (JSON Lines) while monitoring")
    parser.add_argument("--theme", metavar="NAME", default=argparse.SUPPRESS, help="colour theme")
    commands = "{record,run,parse,report,compare,export,plot,serve,devices,roof,probe,mark}"
    sub = parser.add_subparsers(dest="command", metavar=commands,
                                parser_class=_Parser)
    record = sub.add_parser("record", parents=[common], help="record without the TUI (scripts, SSH)",
                            description="Record samples to FILE without a screen, until --duration "
                            "elapses or SIGINT/SIGTERM/SIGHUP.",
                            epilog="example: jroof-tui record run1.jsonl --duration 600")
    record.add_argument("file", metavar="FILE")
    record.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    parse = sub.add_parser("parse", help="print one JSON object per line of a log (JSON Lines)",
                           description="Parse a tegrastats log or a jroof recording; '-' reads stdin.",
                           epilog="example: tegrastats | jroof-tui parse - | jq .gpu")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                       help="spacing of lines without timestamps (default 1000)")
    parse.add_argument("--tz", metavar="ZONE", default=None, help="zone of tegrastats stamps")
    report = sub.add_parser("report", help="energy, power and duration of the run and each phase",
                            description="Report the whole run and each phase of a jroof recording or a "
                            "tegrastats log: duration, samples, gaps, energy per rail (J) and mean/peak "
                            "power, through the same pipeline as the monitor.",
                            epilog="example: jroof-tui report run1.jsonl --workload resnet50_int8.yaml")
    report.add_argument("file", metavar="FILE")
    report.add_argument("--format", choices=REPORT_FORMATS, default="md", help="md (default), json or csv")
    report.add_argument("--out", metavar="PATH", default=None, help="write here instead of stdout")
    report.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                        help="spacing of lines without timestamps (default 1000)")
    report.add_argument("--tz", metavar="ZONE", default=None,
                        help="zone of tegrastats stamps and of the times printed (default: this machine's)")
    report.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (its `devices:` entries)")
    report.add_argument("--trtexec", metavar="FILE", default=None,
                        help="trtexec's output for the same run: its build, warm-up and timed phases "
                        "(only timed counts), iterations and throughput")
    report.add_argument("--trtexec-offset", metavar="S", type=float, dest="trtexec_offset", default=0.0,
                        help="seconds added to trtexec's stamps (for clocks that disagree)")
    report.add_argument("--workload", metavar="FILE", default=None,
                        help="workload spec (YAML): FLOPs or MACs and DRAM bytes per iteration")
    report.add_argument("--ncu", metavar="FILE", default=None,
                        help="Nsight Compute CSV (ncu --csv): each kernel on the roof, by ncu's own numbers")
    report.add_argument("--probe", metavar="FILE", default=None,
                        help="a `jroof-tui probe` result: measured ceilings beside the datasheet's")
    _board_flags(report)
    devices = sub.add_parser("devices", help="list the device database, one device per line",
                             description="The devices jroof knows (packaged, plus the config's "
                             "`devices:`): id, name, memory, nvpmodel modes.",
                             epilog="example: jroof-tui devices | grep orin")
    devices.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")
    roof = sub.add_parser("roof", help="the roofline ceilings of a device at given clocks",
                          description="Peak FLOP/s per precision, memory bandwidth and ridge points at "
                          "the given clocks (default: the power mode's maximum, else the device's).",
                          epilog="example: jroof-tui roof --device orin-nano-8gb-super --gpu-mhz 612 "
                          "--emc-mhz 2133")
    roof.add_argument("--device", metavar="ID", required=True, help="device-database id")
    roof.add_argument("--gpu-mhz", metavar="F", type=float, dest="gpu_mhz", default=None)
    roof.add_argument("--emc-mhz", metavar="F", type=float, dest="emc_mhz", default=None,
                      help="memory clock (tegrastats' EMC_FREQ; NVML's memory clock on a dGPU)")
    roof.add_argument("--power-mode", metavar="NAME", dest="power_mode", default=None)
    roof.add_argument("--json", action="store_true", help="JSON with the documented keys")
    roof.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")
    run = sub.add_parser("run", parents=[common], help="run a workload under the monitor, recording it",
                         description="Start the monitor (or, with --headless, a recording without a "
                         "screen), run COMMAND, and stop when it exits; the exit status is COMMAND's. "
                         "The workload marks its phases and reports its work through the hook "
                         "(`from jtop_roof import hook`) or `jroof-tui mark`.",
                         epilog="example: jroof-tui run --headless --record r50.jsonl -- trtexec "
                         "--loadEngine=r50.engine --duration=60")
    run.add_argument("--headless", action="store_true", help="no screen: record only")
    run.add_argument("--record", metavar="FILE", dest="run_record", default=None,
                     help="record to FILE (required with --headless)")
    run.add_argument("argv", metavar="COMMAND", nargs=argparse.REMAINDER,
                     help="the workload, after --: run --headless --record r.jsonl -- python w.py")
    probe = sub.add_parser("probe", help="measure this machine's ceilings (bandwidth, FLOP/s per precision)",
                           description="Measure achievable memory bandwidth (device-to-device copy and "
                           "triad, bytes read + written) and matrix-product FLOP/s per precision, the way "
                           "the Empirical Roofline Toolkit does, on the GPU (PyTorch or CuPy) or, without "
                           "them, on the CPU (numpy), with the clocks and power seen; saved per device and "
                           "power mode.",
                           epilog="example: jroof-tui probe --quick")
    probe.add_argument("--quick", action="store_true", help="a few-second run (smaller arrays, short runs)")
    probe.add_argument("--out", metavar="FILE", default=None,
                       help="write here (default: $XDG_DATA_HOME/jroof/probe/DEVICE/MODE.json)")
    probe.add_argument("--backend", choices=("auto", "cupy", "torch", "numpy"), default="auto",
                       help="auto (default): PyTorch on CUDA, else CuPy, else numpy on the CPU")
    probe.add_argument("--json", action="store_true", help="print the JSON result instead of the summary")
    probe.add_argument("--tegrastats-command", metavar="CMD", dest="tegrastats_command",
                       default=argparse.SUPPRESS, help="how to run tegrastats for the clocks, e.g. "
                       "'sudo -n tegrastats' (default: tegrastats when on PATH, else NVML/psutil)")
    probe.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")
    _board_flags(probe)
    compare = sub.add_parser(
        "compare", help="runs side by side: deltas, verdicts and the cheapest power mode",
        description="Compare runs. ITEM: a recording or a tegrastats log (its whole run), FILE#PHASE "
        "(that phase) or a JSON file saved by `report --format json`; an item's figures are its "
        "`timed` phase when it has one. The first item is the baseline of the deltas.",
        epilog="example: jroof-tui compare r50_maxn.json r50_15w.json r50_7w.json --min-throughput 500")
    compare.add_argument("items", metavar="ITEM", nargs="+")
    compare.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")
    compare.add_argument("--min-throughput", type=float, metavar="X", dest="min_throughput", default=None,
                         help="the cheapest item must reach X iterations/s (default: any)")
    compare.add_argument("--out", metavar="PATH", default=None, help="write here instead of stdout")
    _file_flags(compare)
    export = sub.add_parser(
        "export", help="one flat row per sample (csv, jsonl, parquet) for pandas and spreadsheets",
        description="Export every sample of a recording or a tegrastats log as one flat row, with the "
        "phase and the throttle events as columns (names in the README).",
        epilog="example: jroof-tui export run1.jsonl --out run1.csv")
    export.add_argument("file", metavar="FILE")
    export.add_argument("--format", choices=("csv", "jsonl", "parquet"), default=None,
                        help="csv (default; or from --out's suffix), jsonl, or parquet (needs pyarrow)")
    export.add_argument("--out", metavar="PATH", default=None, help="write here instead of stdout")
    _file_flags(export)
    plot = sub.add_parser(
        "plot", help="a figure of a run: clocks, loads, power, temperatures, phases, roofline",
        description="Draw a recording or a tegrastats log: clocks, loads, power and temperatures over "
        "time with phases and throttle events, and the roofline where phases reported their work. "
        "Needs matplotlib: pip install 'jroof-tui[plot]'.",
        epilog="example: jroof-tui plot run1.jsonl --out run1.svg")
    plot.add_argument("file", metavar="FILE")
    plot.add_argument("--out", metavar="PATH", default=None,
                      help="chart.png, .svg or .pdf (default: FILE's name with .png, here)")
    plot.add_argument("--title", metavar="TEXT", default=None, help="the figure's title (default: FILE)")
    _file_flags(plot)
    serve = sub.add_parser(
        "serve", parents=[_source_options(prometheus=False)],
        help="Prometheus /metrics of the live board (headless)",
        description="Monitor headless and serve the latest values as Prometheus metrics on GET "
        "/metrics, on loopback unless --listen names another address; until SIGINT/SIGTERM.",
        epilog="example: jroof-tui serve --listen 127.0.0.1:9101 --board nano1")
    serve.add_argument("--listen", "--prometheus", metavar="ADDR", dest="listen", nargs="?", const=None,
                       default=None,
                       help="HOST:PORT, [ADDR]:PORT or PORT (default, and with no ADDR: 127.0.0.1:9101, "
                       "loopback only)")
    serve.add_argument("--board", metavar="NAME", default=None, help="a `board` label on every series")
    mark = sub.add_parser("mark", help="start (or --end) a phase in every running jroof-tui of this user",
                          description="For benchmark scripts: mark a phase boundary in the running "
                          "monitors (TUI or record) of this user, through a per-user Unix socket.",
                          epilog="example: jroof-tui mark warmup; ...; jroof-tui mark timed; ...; "
                          "jroof-tui mark --work 1000 --flops 8.2e12; jroof-tui mark --end")
    mark.add_argument("name", metavar="NAME", nargs="?", help="phase name (default: phase N)")
    mark.add_argument("--end", action="store_true", help="end the current phase")
    mark.add_argument("--work", type=float, metavar="N", default=None,
                      help="report N iterations done (the roofline point comes from these)")
    mark.add_argument("--flops", type=float, metavar="F", default=None, help="with --work: their FLOPs")
    mark.add_argument("--bytes", type=float, metavar="B", dest="bytes_", default=None,
                      help="with --work: their DRAM bytes (read + written)")
    mark.add_argument("--precision", metavar="P", default=None, help="with --work: e.g. bf16, fp16, int8")
    return parser


_CONFIG_OVERRIDES = ("source", "interval_ms", "tz", "speed", "follow", "tegrastats_command", "record",
                     "theme", "device", "power_mode", "ssh_hosts", "probe", "workload", "trtexec",
                     "trtexec_offset", "prometheus")


def _load(args: argparse.Namespace) -> Config:
    overrides = {key: getattr(args, key) for key in _CONFIG_OVERRIDES if hasattr(args, key)}
    return load_config(getattr(args, "config", None), overrides=overrides)


def _cmd_parse(args: argparse.Namespace) -> int:
    from jtop_roof.formats.logfile import MAX_LINE_BYTES, ReadStats, RecordingError, iter_parse_lines
    from jtop_roof.model.codec import MAX_CORES, MAX_NAMED
    from jtop_roof.model.timeline import parse_tz

    if args.interval_ms is not None and args.interval_ms < MIN_INTERVAL_MS:
        return _fail(f"--interval must be at least {MIN_INTERVAL_MS} milliseconds")
    try:
        tz = parse_tz(args.tz)
    except ValueError as exc:
        return _fail(str(exc))
    try:
        stream = open_text(args.file)
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}")
    interval_s = None if args.interval_ms is None else args.interval_ms / 1000.0
    stats = ReadStats()
    # A file is there whole: its lines go out in blocks (a write each, even when Python's output is
    # unbuffered). From a pipe (`tegrastats | jroof-tui parse -`) each line goes when it is read.
    block = PARSE_BLOCK_LINES if stream.is_file else 1
    lines: list[str] = []
    try:
        with stream:
            for text in iter_parse_lines(stream, tz=tz, interval_s=interval_s, stats=stats):
                lines.append(text)
                if len(lines) >= block:
                    sys.stdout.write("".join(lines))
                    lines.clear()
    except BrokenPipeError:
        raise  # our reader left (`| head`), not our input: main() ends quietly
    except RecordingError as exc:
        return _fail_after(lines, f"cannot parse {args.file}: {exc}")
    except OSError as exc:
        return _fail_after(lines, f"cannot read {args.file}: {exc.strerror or exc}")
    sys.stdout.write("".join(lines))
    sys.stdout.flush()
    said = []
    if stats.skipped_lines:
        said.append(f"skipped {len(stats.skipped_lines)} lines that are not records")
    if stream.long_lines:
        said.append(f"skipped {stream.long_lines} lines longer than {MAX_LINE_BYTES >> 20} MiB")
    if stats.tally.nulled:
        said.append(f"nulled {stats.tally.nulled} values of the wrong type or range")
    if stats.tally.dropped:
        said.append(f"dropped {stats.tally.dropped} entries past {MAX_CORES} cores or {MAX_NAMED} "
                    "rails, zones or engines a line")
    if said:
        print(f"jroof-tui: {args.file}: " + "; ".join(said), file=sys.stderr)
    return 0


def _fail_after(printed: list[str], message: str) -> int:
    """What was read before the error is printed, then the error."""
    sys.stdout.write("".join(printed))
    sys.stdout.flush()
    return _fail(message)


def _cmd_roof(args: argparse.Namespace, config: Config) -> int:
    """``devices`` and ``roof``: the database (with the config's entries) and its arithmetic."""
    from jtop_roof.commands.roof import cmd_devices, cmd_roof
    from jtop_roof.roofline.devices import DeviceError, load_devices

    try:
        db = load_devices(config.devices)
        if args.command == "devices":
            print("\n".join(cmd_devices(db)))
            return 0
        text, warnings = cmd_roof(db, args.device, args.gpu_mhz, args.emc_mhz, args.power_mode, args.json)
    except DeviceError as exc:
        return _fail(str(exc))
    for warning in warnings:
        print(f"jroof-tui: {warning}", file=sys.stderr)
    print(text)
    return 0


def _cmd_probe(args: argparse.Namespace, config: Config) -> int:
    """Measure this machine's ceilings with the monitor's own sources watching the clocks."""
    from jtop_roof.probe import default_probe_path, run_probe, save_probe, summary_lines
    from jtop_roof.roofline.devices import DeviceError, load_devices
    from jtop_roof.roofline.measured import ProbeError
    from jtop_roof.runtime.session import probe_source_factory

    try:
        result = run_probe(args.quick, backend=args.backend, source_factory=probe_source_factory(config),
                           device=config.device, power_mode=config.power_mode,
                           devices=load_devices(config.devices),
                           progress=lambda line: print(f"jroof-tui: {line}", file=sys.stderr, flush=True))
    except (ProbeError, DeviceError) as exc:
        return _fail(str(exc))
    path = args.out or default_probe_path(result["device"], result["power_mode"])
    try:
        written = save_probe(result, path)
    except OSError as exc:
        return _fail(f"cannot write {path}: {exc.strerror or exc}")
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        print("\n".join(summary_lines(result)))
    print(f"jroof-tui: probe written to {written}", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.formats.logfile import ReadStats, RecordingError
    from jtop_roof.formats.ncu import NcuError, read_ncu_csv
    from jtop_roof.formats.trtexec import TrtexecError, read_trtexec
    from jtop_roof.model.timeline import parse_tz
    from jtop_roof.outputs.report import report_file, to_csv, to_markdown
    from jtop_roof.roofline.measured import ProbeError, load_probe
    from jtop_roof.roofline.workload import WorkloadError, load_workload

    if args.interval_ms is not None and args.interval_ms < MIN_INTERVAL_MS:
        return _fail(f"--interval must be at least {MIN_INTERVAL_MS} milliseconds")
    try:
        tz = parse_tz(args.tz)
    except ValueError as exc:
        return _fail(str(exc))
    path = args.file
    stats = ReadStats()
    try:
        interval_s = None if args.interval_ms is None else args.interval_ms / 1000.0
        report = report_file(
            path, tz=tz, interval_s=interval_s, config=config, stats=stats,
            trtexec=None if args.trtexec is None else read_trtexec(args.trtexec, tz, args.trtexec_offset),
            workload=None if args.workload is None else load_workload(args.workload),
            kernels=() if args.ncu is None else read_ncu_csv(args.ncu),
            probe=None if args.probe is None else load_probe(args.probe))
    except OSError as exc:
        return _fail(f"cannot read {path}: {exc.strerror or exc}")
    except (RecordingError, TrtexecError, WorkloadError, NcuError, ProbeError) as exc:
        return _fail(f"cannot report {path}: {exc}")
    if args.trtexec is None and report["source"].get("trtexec"):
        print(f"jroof-tui: with trtexec's output kept beside it by `run`: {report['source']['trtexec']}",
              file=sys.stderr)
    if report["source"].get("trtexec_unread"):
        print(f"jroof-tui: {report['source']['trtexec_unread']}; reported without it", file=sys.stderr)
    if stats.truncated_tail:
        print(f"jroof-tui: {path}: the last line is cut short (line {stats.last_line}); the rest is used",
              file=sys.stderr)
    elif stats.skipped_lines:
        print(f"jroof-tui: {path}: skipped {len(stats.skipped_lines)} lines that are not records",
              file=sys.stderr)
    if args.format == "json":
        text = json.dumps(report, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    elif args.format == "csv":
        text = to_csv(report)
    else:
        text = to_markdown(report)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    return 0


def _cmd_mark(args: argparse.Namespace) -> int:
    from jtop_roof.runtime.control import ControlError, WorkReport, send_marker, send_work

    work_flags = args.flops is not None or args.bytes_ is not None or args.precision is not None
    if args.work is None and work_flags:
        return _fail("--flops, --bytes and --precision go with --work N")
    if args.work is not None and (args.end or args.name):
        return _fail("--work N reports work: give it without a NAME or --end")
    if args.end and args.name:
        return _fail("give a NAME to start a phase, or --end alone")
    try:
        if args.work is not None:
            what = "the work report"
            delivered = send_work(WorkReport(args.work, args.flops, args.bytes_, args.precision))
        else:
            what = "the marker"
            delivered = send_marker("phase_end" if args.end else "phase_start", args.name)
    except (ValueError, ControlError) as exc:
        return _fail(str(exc))
    if delivered == 0:
        print(f"jroof-tui: no running jroof-tui of this user took {what}", file=sys.stderr)
        return 1
    return 0


def _cmd_record(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.runtime.headless import run_headless
    from jtop_roof.runtime.session import make_source, open_recording, resolve_source_kind

    duration = getattr(args, "duration", None)
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        return _fail("--duration must be a positive number of seconds")
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    source = make_source(config, kind, getattr(args, "replay", None))
    if hint:
        print(f"jroof-tui: {hint}", file=sys.stderr)
    try:
        recorder = open_recording(args.file, source, config)
    except OSError as exc:
        source.stop()
        return _fail(f"cannot write {args.file}: {exc.strerror or exc}")
    status = run_headless(source, recorder, duration, config=config, listen_for_markers=True)
    if status == 0:
        print(f"jroof-tui: recorded to {args.file}; `jroof-tui report {args.file}` for the phases",
              file=sys.stderr)
    return status


def _cmd_run(args: argparse.Namespace, config: Config) -> int:
    """Monitor (or record headless) while the workload runs; end when it ends."""
    import subprocess
    import threading

    from jtop_roof.formats.trtexec import KEPT_SUFFIX, is_trtexec
    from jtop_roof.runtime.headless import run_headless
    from jtop_roof.runtime.session import make_source, open_recording, resolve_source_kind

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        return _fail("give the workload after --: jroof-tui run --headless --record r.jsonl -- python w.py")
    if args.headless and args.run_record is None:
        return _fail("--headless needs --record FILE (the run is kept there)")
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    source = make_source(config, kind, getattr(args, "replay", None))
    if hint:
        print(f"jroof-tui: {hint}", file=sys.stderr)
    recorder = None
    if args.run_record is not None:
        try:
            recorder = open_recording(args.run_record, source, config)
        except OSError as exc:
            source.stop()
            return _fail(f"cannot write {args.run_record}: {exc.strerror or exc}")
    phase = command_phase_name(argv)
    if not args.headless:
        from jtop_roof.tui.app import run_app

        return run_app(source, config, recorder=recorder, child_argv=argv, command_phase=phase)
    assert recorder is not None
    ended = threading.Event()
    started: list[subprocess.Popen[bytes]] = []
    failed: list[str] = []

    # trtexec's output is understood afterwards (its timed window is known only at its end): kept
    # beside the recording as it is shown, where `report` and replay find it.
    trtexec_log = f"{args.run_record}{KEPT_SUFFIX}" if is_trtexec(argv) else None

    def start_workload() -> None:
        """Once markers are taken: so that the workload's first marker is not lost."""
        try:
            child = subprocess.Popen(argv, stdout=subprocess.PIPE if trtexec_log else None)
        except OSError as exc:
            failed.append(f"cannot run {argv[0]}: {exc.strerror or exc}")
            ended.set()
            return
        started.append(child)

        def wait_child() -> None:
            if trtexec_log is not None and child.stdout is not None:
                with open(trtexec_log, "wb") as kept:
                    for line in child.stdout:
                        kept.write(line)
                        sys.stdout.buffer.write(line)
                        sys.stdout.buffer.flush()
            child.wait()
            ended.set()

        threading.Thread(target=wait_child, name="jroof-run-wait", daemon=True).start()

    status = run_headless(source, recorder, None, config=config, listen_for_markers=True, stop_event=ended,
                          on_listening=start_workload, command_phase=phase)
    if failed:
        return _fail(failed[0])
    child = started[0]
    if child.poll() is None:  # we were stopped first (a signal): the workload goes too
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    kept = "" if trtexec_log is None else f" (trtexec's output in {trtexec_log}, read with it)"
    print(f"jroof-tui: recorded to {args.run_record}{kept}; `jroof-tui report {args.run_record}` for the "
          "phases", file=sys.stderr)
    return child.returncode if child.returncode and child.returncode > 0 else status


def command_phase_name(argv: Sequence[str]) -> str:
    """``run``'s phase for a command that marks none: the command with paths by their last part
    (``/usr/bin/python3 /work/b/bench.py -n 3`` -> ``python3 bench.py -n 3``), at most 60 characters."""
    import shlex

    def short(arg: str) -> str:
        option, eq, path = arg.partition("=") if "=" in arg else ("", "", arg)
        is_path = path.startswith(("/", "./", "../", "~/"))
        return option + eq + (os.path.basename(path.rstrip("/")) or path) if is_path else arg

    text = "".join(c if c.isprintable() else " " for c in shlex.join(short(arg) for arg in argv))
    return text if len(text) <= 60 else text[:59] + "…"


def _file_flags(parser: argparse.ArgumentParser) -> None:
    """What every command that reads one log or recording takes (as ``report`` does)."""
    parser.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                        help="spacing of lines without timestamps (default 1000)")
    parser.add_argument("--tz", metavar="ZONE", default=None, help="zone of tegrastats stamps")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (its `devices:` and detector settings)")
    _board_flags(parser)


def _file_args(args: argparse.Namespace) -> tuple[Any, float | None] | str:
    """(tz, interval_s) of --tz and --interval, or the error."""
    from jtop_roof.model.timeline import parse_tz

    if args.interval_ms is not None and args.interval_ms < MIN_INTERVAL_MS:
        return f"--interval must be at least {MIN_INTERVAL_MS} milliseconds"
    try:
        tz = parse_tz(args.tz)
    except ValueError as exc:
        return str(exc)
    return tz, None if args.interval_ms is None else args.interval_ms / 1000.0


def _emit(text: str, out: str | None) -> int:
    if out is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(out, "w", encoding="utf-8") as stream:
            stream.write(text)
    except OSError as exc:
        return _fail(f"cannot write {out}: {exc.strerror or exc}")
    return 0


def _warn(message: str) -> None:
    print(f"jroof-tui: {message}", file=sys.stderr)


def _cmd_compare(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.compare import CompareError, compare, load_item, to_json, to_markdown

    if len(args.items) < 2:
        return _fail("compare needs at least two items (FILE, FILE#PHASE or a report JSON)")
    need = args.min_throughput
    if need is not None and not (math.isfinite(need) and need >= 0):
        return _fail("--min-throughput must be a number of iterations per second, 0 or more")
    parsed = _file_args(args)
    if isinstance(parsed, str):
        return _fail(parsed)
    tz, interval_s = parsed
    try:
        items = [load_item(spec, tz=tz, interval_s=interval_s, config=config, warn=_warn)
                 for spec in args.items]
    except CompareError as exc:
        return _fail(str(exc))
    result = compare(items, args.min_throughput)
    return _emit(to_json(result) if args.format == "json" else to_markdown(result), args.out)


def _cmd_export(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.export import ExportError, export_file

    parsed = _file_args(args)
    if isinstance(parsed, str):
        return _fail(parsed)
    tz, interval_s = parsed
    fmt = args.format
    if fmt is None:
        suffix = os.path.splitext(args.out or "")[1].lower().lstrip(".")
        fmt = suffix if suffix in ("csv", "jsonl", "parquet") else "csv"
    try:
        export_file(args.file, fmt, args.out, tz=tz, interval_s=interval_s, config=config, warn=_warn)
    except ExportError as exc:
        return _fail(str(exc))
    sys.stdout.flush()
    return 0


def _cmd_plot(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.plot import PlotError, plot_file

    parsed = _file_args(args)
    if isinstance(parsed, str):
        return _fail(parsed)
    tz, interval_s = parsed
    try:
        written = plot_file(args.file, args.out, tz=tz, interval_s=interval_s, config=config,
                            title=args.title)
    except PlotError as exc:
        return _fail(str(exc))
    print(f"jroof-tui: wrote {written}", file=sys.stderr)
    return 0


def _cmd_serve(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.outputs.serve import ServeError, parse_listen, run_serve
    from jtop_roof.runtime.session import make_source, resolve_source_kind

    try:
        host, port = parse_listen(args.listen or config.prometheus)  # --prometheus=ADDR is the same
    except ServeError as exc:
        return _fail(str(exc))
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    source = make_source(config, kind, getattr(args, "replay", None))
    if hint:
        print(f"jroof-tui: {hint}", file=sys.stderr)
    return run_serve(source, config, host=host, port=port, board=args.board)


def _cmd_monitor(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.runtime.session import make_sources, resolve_source_kind
    from jtop_roof.tui.app import run_app
    from jtop_roof.tui.themes import theme_name_error

    problem = theme_name_error(config.theme)
    if problem is not None:
        return _fail(problem)
    from jtop_roof.formats.trtexec import TrtexecError, read_trtexec
    from jtop_roof.model.timeline import parse_tz
    from jtop_roof.roofline.measured import ProbeError, load_probe
    from jtop_roof.roofline.workload import WorkloadError, load_workload

    if config.trtexec is not None and getattr(args, "replay", None) is None:
        return _fail("--trtexec goes with --replay (the log of the same run)")
    try:  # a bad file is one line now, not a surprise on screen
        if config.probe is not None:
            load_probe(config.probe)
        if config.workload is not None:
            load_workload(config.workload)
        if config.trtexec is not None:
            read_trtexec(config.trtexec, parse_tz(config.tz), config.trtexec_offset)
    except (ProbeError, WorkloadError, TrtexecError) as exc:
        return _fail(str(exc))
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    sources = make_sources(config, kind, getattr(args, "replay", None), interactive=True)
    status = run_app(sources[0], config, record_path=config.record, notices=[hint] if hint else (),
                     more=sources[1:])
    if hint:
        print(f"jroof-tui: {hint}", file=sys.stderr)  # still readable once the screen is gone
    return status


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "parse":
            return _cmd_parse(args)
        if args.command == "mark":
            return _cmd_mark(args)
        return _configured(args)
    except ConfigError as exc:
        return _fail(str(exc))
    except BrokenPipeError:
        # `jroof-tui parse log | head`: the reader left; not an error. Point stdout at devnull so
        # the interpreter's final flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


def _configured(args: argparse.Namespace) -> int:
    """The commands that read the config (``parse`` and ``mark`` start without the session's imports)."""
    from jtop_roof.runtime.session import SessionError

    try:
        config = _load(args)
        return _CONFIGURED.get(args.command, _cmd_monitor)(args, config)
    except SessionError as exc:
        return _fail(str(exc))


#: The subcommands that read the config, by name (no subcommand: the monitor).
_CONFIGURED = {
    "report": _cmd_report, "devices": _cmd_roof, "roof": _cmd_roof, "probe": _cmd_probe,
    "compare": _cmd_compare, "export": _cmd_export, "plot": _cmd_plot, "serve": _cmd_serve,
    "record": _cmd_record, "run": _cmd_run,
}

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
from typing import Any

from jtop_roof import __version__
from jtop_roof.config import MIN_INTERVAL_MS, SOURCES, Config, ConfigError, load_config

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (no usage dump) with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _fail(message: str) -> int:
    print(f"jroof-tui: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _source_options() -> argparse.ArgumentParser:
    """Options shared by the monitor and ``record`` (SUPPRESS keeps a subcommand from resetting them)."""
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
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
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _source_options()
    parser = _Parser(
        prog="jroof-tui",
        description="Terminal monitor and flight recorder for NVIDIA Jetson boards.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"jroof-tui {__version__}")
    parser.add_argument("--record", metavar="FILE", default=argparse.SUPPRESS,
                        help="record every sample to FILE (JSON Lines) while monitoring")
    parser.add_argument("--theme", metavar="NAME", default=argparse.SUPPRESS, help="colour theme")
    sub = parser.add_subparsers(dest="command", metavar="{record,parse,mark}", parser_class=_Parser)
    record = sub.add_parser("record", parents=[common], help="record without the TUI (scripts, SSH)",
                            description="Record samples to FILE without a screen, until --duration "
                            "elapses or SIGINT/SIGTERM/SIGHUP.")
    record.add_argument("file", metavar="FILE")
    record.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    parse = sub.add_parser("parse", help="print one JSON object per line of a log (JSON Lines)",
                           description="Parse a tegrastats log or a jroof recording; '-' reads stdin.")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                       help="spacing of lines without timestamps (default 1000)")
    parse.add_argument("--tz", metavar="ZONE", default=None, help="zone of tegrastats stamps")
    mark = sub.add_parser("mark", help="start (or --end) a phase in every running jroof-tui of this user",
                          description="For benchmark scripts: mark a phase boundary in the running "
                          "monitors (TUI or record) of this user, through a per-user Unix socket.")
    mark.add_argument("name", metavar="NAME", nargs="?", help="phase name (default: phase N)")
    mark.add_argument("--end", action="store_true", help="end the current phase")
    return parser


_CONFIG_OVERRIDES = ("source", "interval_ms", "tz", "speed", "follow", "tegrastats_command", "record",
                     "theme")


def _load(args: argparse.Namespace) -> Config:
    overrides = {key: getattr(args, key) for key in _CONFIG_OVERRIDES if hasattr(args, key)}
    return load_config(getattr(args, "config", None), overrides=overrides)


def _cmd_parse(args: argparse.Namespace) -> int:
    from jtop_roof.logfile import iter_records, open_text
    from jtop_roof.model import Sample, record_to_json, sample_to_json
    from jtop_roof.timeline import parse_tz

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
    out = sys.stdout
    with stream:
        for record in iter_records(stream, tz=tz, interval_s=interval_s):
            if isinstance(record, Sample):
                obj: dict[str, Any] = sample_to_json(record)
                if not record.is_sample:
                    obj["line"] = record.raw
            else:
                obj = record_to_json(record)
            out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()
    return 0


def _cmd_mark(args: argparse.Namespace) -> int:
    from jtop_roof.control import ControlError, send_marker

    if args.end and args.name:
        return _fail("give a NAME to start a phase, or --end alone")
    try:
        delivered = send_marker("phase_end" if args.end else "phase_start", args.name)
    except (ValueError, ControlError) as exc:
        return _fail(str(exc))
    if delivered == 0:
        print("jroof-tui: no running jroof-tui of this user took the marker", file=sys.stderr)
        return 1
    return 0


class _AutoNamedMarkers:
    """Writes script markers into a headless recording; an unnamed phase is named by its number
    among all phases of the session (phase 1, phase 2...), as the TUI does."""

    def __init__(self, recorder: Any) -> None:
        self._recorder = recorder
        self._count = 0

    def __call__(self, kind: str, name: str | None) -> None:
        from jtop_roof.model import auto_phase_name

        if kind == "phase_start":
            self._count += 1
            name = name or auto_phase_name(self._count)
        self._recorder.write_marker(kind, name, origin="script")


def _cmd_record(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.recorder import run_headless
    from jtop_roof.session import make_source, open_recording, resolve_source_kind

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
    from jtop_roof.control import start_listener

    listener = start_listener(_AutoNamedMarkers(recorder))
    try:
        return run_headless(source, recorder, duration)
    finally:
        if listener is not None:
            listener.close()


def _cmd_monitor(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.app import run_app
    from jtop_roof.session import make_source, resolve_source_kind
    from jtop_roof.themes import available_theme_names

    themes = available_theme_names()
    if config.theme not in themes:
        return _fail(f"unknown theme {config.theme!r}; available: {', '.join(themes)}")
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    source = make_source(config, kind, getattr(args, "replay", None), interactive=True)
    status = run_app(source, config, record_path=config.record, notices=[hint] if hint else ())
    if hint:
        print(f"jroof-tui: {hint}", file=sys.stderr)  # still readable once the screen is gone
    return status


def main(argv: list[str] | None = None) -> int:
    from jtop_roof.session import SessionError

    args = build_parser().parse_args(argv)
    try:
        if args.command == "parse":
            return _cmd_parse(args)
        if args.command == "mark":
            return _cmd_mark(args)
        config = _load(args)
        if args.command == "record":
            return _cmd_record(args, config)
        return _cmd_monitor(args, config)
    except (ConfigError, SessionError) as exc:
        return _fail(str(exc))
    except BrokenPipeError:
        # `jroof-tui parse log | head`: the reader left; not an error. Point stdout at devnull so
        # the interpreter's final flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130

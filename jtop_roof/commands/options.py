"""Flags that several commands take, and the config they make: one definition each, so that
``record`` and the monitor, or ``report`` and ``export``, cannot drift apart."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import tzinfo

from jtop_roof.commands.base import Parser
from jtop_roof.model.errors import UserError
from jtop_roof.runtime.config import MIN_INTERVAL_MS, SOURCES, Config, load_config


def source_options(*, prometheus: bool = True) -> Parser:
    """Options shared by the monitor and ``record`` (SUPPRESS keeps a subcommand from resetting them);
    ``serve`` has its own ``--prometheus`` (its address optional)."""
    common = Parser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--config", metavar="PATH", help="config file (default: $JROOF_CONFIG, then "
                        "~/.config/jroof/config.yaml)")
    common.add_argument("--source", choices=SOURCES, help="where samples come from (default: auto = "
                        "tegrastats when on PATH, else this host)")
    common.add_argument("--replay", metavar="FILE", help="replay a tegrastats log or a jroof recording")
    common.add_argument("--follow", action="store_true", help="with --replay: keep reading a growing file")
    common.add_argument("--anonymize", action="store_true", default=argparse.SUPPRESS,
                        help="leave the host name, the command line and paths out of recordings")
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
    board_flags(common)
    return common


def serve_source_options() -> Parser:
    """The sources' options without ``--prometheus``, which ``serve`` defines as its own address."""
    return source_options(prometheus=False)


def board_flags(parser: argparse.ArgumentParser) -> None:
    """``--device`` and ``--power-mode``: for every command that reads samples."""
    parser.add_argument("--device", metavar="ID", default=argparse.SUPPRESS,
                        help="the board or GPU, by its device-database id (`jroof-tui devices`), where "
                        "the source does not say (plain logs)")
    parser.add_argument("--power-mode", metavar="NAME", dest="power_mode", default=argparse.SUPPRESS,
                        help="the nvpmodel mode (e.g. 7W, MAXN_SUPER) where the source does not say")


def file_flags(parser: argparse.ArgumentParser) -> None:
    """What every command that reads one log or recording takes (as ``report`` does)."""
    parser.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                        help="spacing of lines without timestamps (default 1000)")
    parser.add_argument("--tz", metavar="ZONE", default=None, help="zone of tegrastats stamps")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (its `devices:` and detector settings)")
    board_flags(parser)


class FlagError(UserError):
    """A flag's value that cannot be used (one line, exit 2)."""


def file_args(args: argparse.Namespace) -> tuple[tzinfo, float | None]:
    """(tz, interval_s) of --tz and --interval; FlagError names what is wrong."""
    from jtop_roof.model.timeline import parse_tz

    if args.interval_ms is not None and args.interval_ms < MIN_INTERVAL_MS:
        raise FlagError(f"--interval must be at least {MIN_INTERVAL_MS} milliseconds")
    try:
        tz = parse_tz(args.tz)
    except ValueError as exc:
        raise FlagError(str(exc)) from None
    return tz, None if args.interval_ms is None else args.interval_ms / 1000.0


#: The flags that override the config's keys of the same name.
_CONFIG_OVERRIDES = ("source", "interval_ms", "tz", "speed", "follow", "tegrastats_command", "record",
                     "theme", "device", "power_mode", "ssh_hosts", "probe", "workload", "trtexec",
                     "trtexec_offset", "prometheus", "anonymize")


def config_of(args: argparse.Namespace, flags: Mapping[str, str] | None = None) -> Config:
    """The config file (``--config``, else the default one), overridden by the flags given;
    ``flags``: each option's flag by its ``dest``, for errors (``flag_names``)."""
    overrides = {key: getattr(args, key) for key in _CONFIG_OVERRIDES if hasattr(args, key)}
    return load_config(getattr(args, "config", None), overrides=overrides, flags=flags)


def flag_names(parser: argparse.ArgumentParser, command: str | None) -> dict[str, str]:
    """Each option's ``dest`` -> its long flag (``ssh_hosts`` -> ``--ssh``), in ``parser`` and the
    subcommand's parser that read the command line: an error names the flag the user typed."""
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            parsers.append(action.choices[command])
    return {action.dest: max(action.option_strings, key=len)
            for each in parsers for action in each._actions if action.option_strings}


@contextmanager
def readable(path: str) -> Iterator[str]:
    """``path``, or for ``-`` standard input spooled to a private temporary file: the readers go
    through a file twice (its interval first, then the pipeline), which a pipe cannot give."""
    if path != "-":
        yield path
        return
    with tempfile.NamedTemporaryFile(prefix="jroof-stdin-", suffix=".log") as spool:
        shutil.copyfileobj(sys.stdin.buffer, spool)
        spool.flush()
        yield spool.name


#: Flags of the shared source options that only the monitor's roof and ``report`` use.
ROOF_ONLY_FLAGS = ("workload", "probe")


def refuse_roof_only(args: argparse.Namespace, command: str) -> None:
    """A command that draws no roof refuses ``--workload`` and ``--probe`` in one line, rather
    than take them and use nothing (FlagError)."""
    for dest in ROOF_ONLY_FLAGS:
        if hasattr(args, dest):  # given on the command line (the default is to leave it out)
            raise FlagError(f"--{dest} is for the monitor's roofline and `report`: `{command}` keeps no "
                            f"roof (give it to `jroof-tui report FILE --{dest} ...` afterwards)")

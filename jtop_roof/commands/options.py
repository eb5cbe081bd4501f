"""Flags that several commands take, and the config they make: one definition each, so that
``record`` and the monitor, or ``report`` and ``export``, cannot drift apart."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import tzinfo
from typing import IO, TYPE_CHECKING, BinaryIO

from jtop_roof.commands.base import STDOUT, Parser, warn
from jtop_roof.model.errors import UserError
from jtop_roof.runtime.config import MIN_INTERVAL_MS, SOURCES, Config, check_device, load_config
from jtop_roof.sources.base import Source

if TYPE_CHECKING:
    from jtop_roof.formats.trtexec import TrtexecRun
    from jtop_roof.formats.trtexec_span import RunPlacement


def listen_address(text: str) -> str:
    """``--prometheus``'s address, checked as typed (a port of 5,000 digits, ``²``): one line and
    exit 2 before anything starts; only a port that cannot be bound turns the metrics off."""
    from jtop_roof.outputs.listen import ServeError, parse_listen

    try:
        parse_listen(text)
    except ServeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


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
    common.add_argument("--log-start", metavar="TIME", dest="log_start", default=argparse.SUPPRESS,
                        help=LOG_START_HELP)
    if prometheus:
        common.add_argument("--prometheus", metavar="ADDR", default=argparse.SUPPRESS, type=listen_address,
                            help="also serve Prometheus metrics, as --prometheus=ADDR (HOST:PORT or PORT on "
                            "loopback; e.g. --prometheus=9101)")
    common.add_argument("--probe", metavar="FILE", dest="probe", default=argparse.SUPPRESS,
                        help="a `jroof-tui probe` result: its measured roof drawn beside the datasheet's")
    common.add_argument("--sysfs-root", metavar="DIR", dest="sysfs_root", default=argparse.SUPPRESS,
                        help="where the board's /sys is (a container's mount of the host's; default /)")
    common.add_argument("--power-hz", metavar="N", type=str, dest="power_hz", default=argparse.SUPPRESS,
                        help="rate of the power sampler: the board's monitors, NVML and RAPL read "
                        "between samples (default 5)")
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


def file_flags(parser: argparse.ArgumentParser, refuse: Sequence[str] | None = None) -> None:
    """What every command that reads one log or recording takes (as ``report`` does); ``refuse``:
    those of ``report``'s inputs it would read and not use (default: all, ``REPORT_INPUTS``), each
    refused in one line saying where it goes (``refused_inputs``)."""
    parser.add_argument("--interval", type=int, metavar="MS", dest="interval_ms", default=None,
                        help="the log's interval: wins over its stamps; without stamps "
                        "or --interval, 1000 is assumed (and said)")
    parser.add_argument("--tz", metavar="ZONE", default=None,
                        help="zone of stamps that write none (default: this machine's, assumed)")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (its `devices:` and detector settings)")
    board_flags(parser)
    refused_inputs(parser, REPORT_INPUTS if refuse is None else refuse)


def trtexec_flags(parser: argparse.ArgumentParser) -> None:
    """``--trtexec``, ``--trtexec-offset`` and ``--log-start`` of a command that reads one file
    (``report``, ``plot``, ``export``): trtexec's phases and iterations placed on it
    (``placed_trtexec``)."""
    parser.add_argument("--trtexec", metavar="FILE", default=None,
                        help="trtexec's output for the same run: its build, warm-up and timed phases "
                        "(only timed counts), iterations and throughput")
    parser.add_argument("--trtexec-offset", metavar="S", type=float, dest="trtexec_offset", default=0.0,
                        help="seconds added to trtexec's stamps (for clocks that disagree)")
    parser.add_argument("--log-start", metavar="TIME", dest="log_start", default=None, help=LOG_START_HELP)


def roof_flags(parser: argparse.ArgumentParser) -> None:
    """``--workload``, ``--ncu`` and ``--probe``: what ``report`` and ``plot`` put on the roofline."""
    parser.add_argument("--workload", metavar="FILE", default=None,
                        help="workload spec (YAML): FLOPs or MACs and DRAM bytes per iteration")
    parser.add_argument("--ncu", metavar="FILE", default=None,
                        help="Nsight Compute CSV (ncu --csv): each kernel on the roof, by ncu's own numbers")
    parser.add_argument("--probe", metavar="FILE", default=None,
                        help="a `jroof-tui probe` result: measured ceilings beside the datasheet's")


#: How ``--log-start`` reads, for every command that takes it.
LOG_START_HELP = ("when a log without timestamps started (its first line), to place --trtexec's "
                  "output on it: 2023-03-29T17:56:40 or 03-29-2023 17:56:40, in --tz unless it "
                  "names an offset")
#: ``report``'s inputs, which the other commands that read a file refuse (``refused_inputs``).
REPORT_INPUTS = ("--trtexec", "--trtexec-offset", "--log-start", "--workload", "--ncu", "--probe")
#: Where each command's user takes ``report``'s inputs instead.
_INPUTS_GO = {
    "compare": "give compare a report saved with them (`jroof-tui report FILE {flag} ... --format "
               "json --out FILE.json`)",
    "export": "export writes the samples as they are; `jroof-tui report FILE {flag} ...` uses it",
}


class _Refused(argparse.Action):
    """An input of ``report`` given to a command that would read it and use nothing: one line."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        command = parser.prog.rsplit(" ", 1)[-1]
        where = _INPUTS_GO.get(command, "`jroof-tui report FILE {flag} ...` uses it")
        parser.error(f"{option_string} is not used by `{command}`: "
                     + where.format(flag=option_string))


def refused_inputs(parser: argparse.ArgumentParser, flags: Sequence[str] = REPORT_INPUTS) -> None:
    """``flags`` of ``report``'s inputs on ``parser``, hidden, each refused when given (exit 2, one
    line)."""
    for flag in flags:
        parser.add_argument(flag, action=_Refused, metavar="X", help=argparse.SUPPRESS,
                            dest=f"refused_{flag.strip('-').replace('-', '_')}", default=argparse.SUPPRESS)


class FlagError(UserError):
    """A flag's value that cannot be used (one line, exit 2)."""


def file_args(args: argparse.Namespace) -> tuple[tzinfo, float | None]:
    """(tz, interval_s) of --tz and --interval (None when not given: the reader then takes the
    stamps' interval, or assumes 1 s and says so); FlagError names what is wrong."""
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
                     "trtexec_offset", "log_start", "prometheus", "anonymize", "sysfs_root", "power_hz")


def config_of(args: argparse.Namespace, flags: Mapping[str, str] | None = None) -> Config:
    """The config file (``--config``, else the default one), overridden by the flags given;
    ``flags``: each option's flag by its ``dest``, for errors (``flag_names``)."""
    overrides = {key: getattr(args, key) for key in _CONFIG_OVERRIDES if hasattr(args, key)}
    config = load_config(getattr(args, "config", None), overrides=overrides, flags=flags)
    if getattr(args, "command", None) != "devices":  # the list an unknown id's refusal points to
        given = getattr(args, "device", None) is not None
        check_device(config, "--device" if given else "config key 'device'")
    if config.prometheus is not None and not hasattr(args, "prometheus"):  # the flag is checked as typed
        try:
            listen_address(config.prometheus)
        except argparse.ArgumentTypeError as exc:
            raise UserError(f"config key 'prometheus': {exc}") from None
    return config


def flag_names(parser: argparse.ArgumentParser, command: str | None) -> dict[str, str]:
    """Each option's ``dest`` -> its long flag (``ssh_hosts`` -> ``--ssh``), in ``parser`` and the
    subcommand's parser that read the command line: an error names the flag the user typed."""
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            parsers.append(action.choices[command])
    return {action.dest: max(action.option_strings, key=len)
            for each in parsers for action in each._actions if action.option_strings}


#: What ``-`` names where a file is read: standard input.
STDIN = "-"


class StdinError(UserError):
    """Standard input that cannot be read as a file (one line, exit 2)."""


#: The most of standard input ``-`` spools to a temporary file, unless ``JROOF_STDIN_MAX_BYTES``
#: says otherwise: a day of 1 s samples is a few tens of MB, and an endless or hostile stream must
#: not fill $TMPDIR.
STDIN_MAX_BYTES = 2 << 30
#: The environment variable that sets the cap, in bytes (``4G``, ``512M`` and ``100K`` too).
STDIN_MAX_ENV = "JROOF_STDIN_MAX_BYTES"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def stdin_cap(environ: Mapping[str, str] | None = None) -> int:
    """The most bytes of standard input ``-`` spools: ``JROOF_STDIN_MAX_BYTES`` (a whole number of
    bytes, or with K, M, G or T), else ``STDIN_MAX_BYTES``. StdinError for a value it cannot use."""
    text = (os.environ if environ is None else environ).get(STDIN_MAX_ENV, "").strip()
    if not text:
        return STDIN_MAX_BYTES
    digits, unit = (text[:-1], text[-1].upper()) if text[-1:].upper() in _UNITS else (text, "")
    if not (digits.isascii() and digits.isdigit() and 0 < len(digits) <= 15 and int(digits) > 0):
        shown = text if len(text) <= 20 else text[:17] + "..."
        raise StdinError(f"{STDIN_MAX_ENV}={shown!r}: expected a positive number of bytes "
                         "(or with K, M, G, T)")
    return int(digits) * _UNITS[unit]


def _size_text(n: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit] and n % _UNITS[unit] == 0:
            return f"{n // _UNITS[unit]} {unit}iB"
    return f"{n:,} bytes"


@contextmanager
def readable(path: str, *, follow: bool = False) -> Iterator[str]:
    """``path``, or for ``-`` standard input spooled to a private temporary file, removed after:
    the readers go through a file more than once (its interval first, then the pipeline) and a
    replay seeks in it, which a pipe cannot give. At most ``stdin_cap()`` bytes are spooled: past
    it, StdinError (one line saying the cap) and the spool is removed. ``follow`` (``--replay -
    --follow``): the spool grows as standard input comes, from a thread, and the replay follows
    it as a growing file; at the cap the thread stops spooling and says so. A terminal, a device
    (``/dev/zero`` would never end) or a closed standard input is refused (StdinError), as is a
    spool the disk cannot hold. What standard input was is noted for the outputs
    (``userfiles.note_spooled``): ``report - --out X < X`` is refused before X is touched."""
    if path != STDIN:
        yield path
        return
    from jtop_roof.formats.userfiles import forget_spooled, note_spooled

    cap = stdin_cap()
    stdin = _checked_stdin()
    with tempfile.NamedTemporaryFile(prefix="jroof-stdin-", suffix=".log") as spool:
        origin = _fstat_of(stdin)
        if origin is not None:
            note_spooled(spool.name, origin)
        try:
            if follow:
                _spool_as_it_comes(stdin.fileno(), spool.fileno(), cap).wait()
            else:
                _spool_bounded(stdin, spool, cap)
            yield spool.name
        finally:
            forget_spooled(spool.name)


def _fstat_of(stream: BinaryIO) -> os.stat_result | None:
    try:
        return os.fstat(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return None


def _spool_bounded(stdin: BinaryIO, spool: IO[bytes], cap: int) -> None:
    """Copy standard input into ``spool`` up to ``cap`` bytes (StdinError past it, or when the
    disk cannot hold it)."""
    size = 0
    try:
        while chunk := stdin.read(min(1 << 20, cap + 1 - size)):
            size += len(chunk)
            if size > cap:
                raise StdinError(f"standard input (-) is larger than {_size_text(cap)}, the most that is "
                                 f"spooled: give a file name, or set {STDIN_MAX_ENV}")
            spool.write(chunk)
        spool.flush()
    except OSError as exc:
        raise StdinError(f"cannot spool standard input to {spool.name}: {exc.strerror or exc}") from None


def _checked_stdin() -> BinaryIO:
    """Standard input, when it is a pipe, a socket or a regular file (StdinError); a stand-in
    without a descriptor (tests) is taken as it is."""
    closed = StdinError("- reads standard input, which is closed: pipe a log or a recording in")
    if sys.stdin is None:
        raise closed
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return sys.stdin.buffer
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        raise closed from None
    if os.isatty(fd):
        raise StdinError("- reads standard input, which is a terminal: pipe a log or a recording in "
                         "(`cat run.jsonl | jroof-tui ...`)")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        raise StdinError("- reads standard input, which is not a pipe or a file")
    return sys.stdin.buffer


def _spool_as_it_comes(stdin: int, spool: int, cap: int) -> threading.Event:
    """Copy standard input into ``spool`` from a thread as it comes, until its end, a write fails
    or ``cap`` bytes are in (said once on stderr): the replay then has what came before. The
    thread holds its own descriptors, so that the spool can be closed under it, and dies with
    the process. Returns what is set once the
    first line is in (or standard input ended): a followed file must not start empty, its kind
    and timing are read from its first line."""
    source, target = os.dup(stdin), os.dup(spool)
    first_line = threading.Event()

    def copy() -> None:
        size = 0
        try:
            while chunk := os.read(source, min(1 << 16, cap + 1 - size)):
                size += len(chunk)
                if size > cap:
                    warn(f"standard input (-) passed {_size_text(cap)}, the most that is spooled: "
                         f"the rest is not replayed (set {STDIN_MAX_ENV} for more)")
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(target, view):]
                if b"\n" in chunk:
                    first_line.set()
        except OSError:
            pass
        finally:
            first_line.set()
            os.close(source)
            os.close(target)

    threading.Thread(target=copy, name="jroof-stdin-spool", daemon=True).start()
    return first_line


def replay_of(args: argparse.Namespace) -> str | None:
    """``--replay FILE`` as given (``-``: standard input, for ``readable``), else None."""
    replay = getattr(args, "replay", None)
    return replay if isinstance(replay, str) else None


@contextmanager
def replay_readable(args: argparse.Namespace, config: Config) -> Iterator[str | None]:
    """The file ``--replay`` plays (``readable``: standard input spooled for ``-``), else None."""
    replay = replay_of(args)
    if replay is None:
        yield None
        return
    with readable(replay, follow=config.follow) as path:
        if not config.follow:  # a followed file may have no sample yet
            from jtop_roof.formats.nosamples import require_samples

            with contextlib.suppress(OSError):  # the replay says why it cannot read it, as before
                require_samples(path, replay)
        yield path


#: Flags of the shared source options that only the monitor's roof and ``report`` use.
ROOF_ONLY_FLAGS = ("workload", "probe")


def refuse_roof_only(args: argparse.Namespace, command: str) -> None:
    """A command that draws no roof refuses ``--workload`` and ``--probe`` in one line, rather
    than take them and use nothing (FlagError)."""
    for dest in ROOF_ONLY_FLAGS:
        if hasattr(args, dest):  # given on the command line (the default is to leave it out)
            raise FlagError(f"--{dest} is for the monitor's roofline and `report`: `{command}` keeps no "
                            f"roof (give it to `jroof-tui report FILE --{dest} ...` afterwards)")


#: Why ``--log-start`` without ``--trtexec`` is refused.
LOG_START_ALONE = "--log-start places --trtexec's output on a log without timestamps: give --trtexec FILE too"


def refuse_unplaced(config: Config, replay: str | None) -> None:
    """``--trtexec`` places a finished run's output on a replayed file: on a live source it would be
    read and dropped; ``--log-start`` places nothing without it (FlagError, one line)."""
    if config.trtexec is not None and replay is None:
        raise FlagError("--trtexec goes with --replay (the log of the same run)")
    if config.log_start is not None and config.trtexec is None:
        raise FlagError(LOG_START_ALONE)


#: Why each source reads none of this machine's monitors or sysfs (the others, tegrastats and
#: host, read both).
_NO_LOCAL_METERS = {"replay": "a replay plays what was recorded",
                    "demo": "the demo makes its numbers up",
                    "ssh": "an --ssh board is read over ssh, not through this machine's /sys"}


def refuse_unread_meters(args: argparse.Namespace, config: Config) -> None:
    """``--power-hz`` and ``--sysfs-root`` given for a source that reads no local monitor would be
    taken and used for nothing: refused in one line (FlagError), before standard input is spooled.
    A config file's keys stay quiet."""
    kind = "replay" if replay_of(args) is not None else "ssh" if config.ssh_hosts else config.source
    why = _NO_LOCAL_METERS.get(kind)
    for dest, flag in (("power_hz", "--power-hz"), ("sysfs_root", "--sysfs-root")):
        if why is not None and hasattr(args, dest):
            raise FlagError(f"{flag} is for a live tegrastats or host source: {why}, so it would be "
                            "used for nothing")


def check_trtexec(sources: Sequence[Source], config: Config) -> None:
    """The user's ``--trtexec`` placed on the replayed file now, so that one that cannot be read or
    placed is one line and exit 2 before a screen or a recording starts (the sources are stopped)."""
    if config.trtexec is None:
        return
    from jtop_roof.runtime.inputs import trtexec_extras

    try:
        for source in sources:
            trtexec_extras(source, config)
    except UserError:
        for source in sources:
            source.stop()
        raise


@dataclass(frozen=True)
class PlacedRun:
    """``--trtexec``'s run as ``placed_trtexec`` found it on a file (all None without it)."""

    run: TrtexecRun | None
    #: Where and how the run lies on the file: its start, coverage and notes (None without a run).
    placement: RunPlacement | None = None

    @property
    def log_start(self) -> float | None:
        """The first line's wall time, for a log without stamps (``RunPlacement.plain_log_start``)."""
        return None if self.placement is None else self.placement.plain_log_start

    @property
    def note(self) -> str | None:
        """Where only part of the run lies inside the file, how much; how a plain log was fitted."""
        return None if self.placement is None else self.placement.note

    def interval_s(self, given: float | None) -> float | None:
        """The interval to space the file with: the one fitted to trtexec's run, else ``given``."""
        p = self.placement
        return given if p is None or p.interval_s is None else p.interval_s


def placed_trtexec(args: argparse.Namespace, path: str, *, tz: tzinfo, interval_s: float | None) -> PlacedRun:
    """``--trtexec`` (with ``--trtexec-offset`` and ``--log-start``) read and placed on ``path``
    (``args.file``, or where standard input was spooled) before anything is written, so that a run
    that cannot be placed is one line (``TrtexecError``, ``LogStartError``), never phases without
    samples; FlagError for the other two given without it. A plain log given neither
    ``--log-start`` nor ``--interval`` is fitted to the run (``trtexec_span.placement``). OSError
    and ``RecordingError``: the file."""
    from jtop_roof.formats.trtexec import read_trtexec
    from jtop_roof.formats.trtexec_span import parse_log_start
    from jtop_roof.runtime.inputs import place_on_file

    log_start = None if args.log_start is None else parse_log_start(args.log_start, tz)
    if args.trtexec is None:
        if log_start is not None:
            raise FlagError(LOG_START_ALONE)
        if args.trtexec_offset:
            raise FlagError("--trtexec-offset shifts --trtexec's stamps: give --trtexec FILE too")
        return PlacedRun(None)
    run = read_trtexec(args.trtexec, tz, args.trtexec_offset)
    return PlacedRun(run, place_on_file(run, args.trtexec, path, tz=tz, interval_s=interval_s,
                                        log_start=log_start, name=args.file))


def tell_written(out: str, what: str) -> None:
    """The one line ``report``, ``export`` and ``plot`` say on stderr once ``--out`` is written
    (without ``--out``, or with ``--out -``, stdout is the data, and nothing is said)."""
    if out != STDOUT:
        warn(f"wrote {out} ({what})")


#: The flags whose value is a file the command reads besides its FILE.
_INPUT_FLAGS = ("config", "trtexec", "workload", "ncu", "probe", "replay")


def input_files(args: argparse.Namespace, *files: str) -> list[str]:
    """``files`` and every file a flag of ``args`` names for reading (``--trtexec``, ``--config``,
    ...): what no output of the command may overwrite."""
    named = [getattr(args, dest, None) for dest in _INPUT_FLAGS]
    return [*files, *(value for value in named if isinstance(value, str))]


def refuse_out_over_inputs(out: str | None, inputs: Sequence[str]) -> None:
    """``--out`` naming one of the command's ``inputs`` (``report run.jsonl --out run.jsonl``,
    ``report - --out run.jsonl < run.jsonl``, ``export run.log --trtexec t.log --out t.log``):
    OutputError before anything is read. Without ``--out``, or ``--out -``, standard output is
    looked at. ``create_output`` looks again at the descriptor it opens."""
    from jtop_roof.formats.userfiles import OutputError, refuse_stream_over_input, same_input

    if out is None or out == STDOUT:
        where = "standard output" if out is None else "standard output (--out -)"
        refuse_stream_over_input(sys.stdout, where, inputs)
        return
    try:
        info = os.stat(out)
    except (OSError, ValueError):
        return  # not there yet, or a link to nowhere: create_output says
    same = same_input(info, inputs)
    if same is not None:
        raise OutputError(f"refusing to write {out}: it is this command's input {same}")


#: What ``--out`` says of ``-`` in every command's help.
OUT_HELP = "write here instead of stdout (-: stdout)"


def binary_out(out: str | None, fmt: str) -> None:
    """Refuse ``--out -`` for a binary format (parquet, png, pdf) when standard output is a
    terminal, where its bytes would only garble the screen (FlagError); a pipe or a file takes them."""
    if out == STDOUT and sys.stdout is not None and sys.stdout.isatty():
        raise FlagError(f"--out -: {fmt} is binary and standard output is a terminal: redirect it "
                        "(> FILE, | ...) or give --out PATH")

"""``jroof-tui parse FILE``: one JSON object per line of a log, for jq and scripts. It starts without
reading the config or importing the session, so that ``tegrastats | jroof-tui parse -`` is cheap.
The characters a terminal would act on are written escaped (``model.jsonsafe``)."""

from __future__ import annotations

import argparse
import os
import sys

from jtop_roof.commands.base import Command, fail
from jtop_roof.commands.options import file_args, refuse_out_over_inputs
from jtop_roof.model.jsonsafe import terminal_safe
from jtop_roof.runtime.config import MAX_INTERVAL_MS, MIN_INTERVAL_MS, Config

#: Lines ``parse`` writes at once when its input is a file.
PARSE_BLOCK_LINES = 256


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--interval", type=interval_ms, metavar="MS", dest="interval_ms", default=None,
                        help="the log's interval: wins over its stamps; without stamps "
                        "or --interval, 1000 is assumed (and said)")
    parser.add_argument("--tz", metavar="ZONE", default=None,
                        help="zone of stamps that write none (default: this machine's, assumed)")


def interval_ms(text: str) -> int:
    """``--interval``'s value, bounded as the config bounds it: ``parse`` reads no config, and
    argparse's int takes 400 digits, which no float holds."""
    digits = text.strip()
    if digits.isascii() and digits.isdigit() and len(digits) <= len(str(MAX_INTERVAL_MS)) \
            and MIN_INTERVAL_MS <= int(digits) <= MAX_INTERVAL_MS:
        return int(digits)
    shown = text if len(text) <= 20 else f"{text[:12]}... ({len(text)} characters)"
    raise argparse.ArgumentTypeError(
        f"expected a whole number of milliseconds from {MIN_INTERVAL_MS} to {MAX_INTERVAL_MS}, got {shown!r}")


def run(args: argparse.Namespace, _defaults: Config) -> int:
    from jtop_roof.formats.logfile import (
        MAX_LINE_BYTES,
        ReadStats,
        RecordingError,
        iter_parse_lines,
        open_text,
    )
    from jtop_roof.formats.nosamples import SampleFinder, require_samples, watched
    from jtop_roof.model.codec import MAX_CORES, MAX_NAMED

    tz, interval_s = file_args(args)
    refuse_out_over_inputs(None, [args.file])  # `parse run.log >> run.log` would never end
    # A file is looked at before anything is printed; a pipe as its lines pass.
    whole = args.file != "-" and os.path.isfile(args.file)
    try:
        if whole:
            require_samples(args.file)
        stream = open_text(args.file)
    except OSError as exc:
        return fail(f"cannot read {args.file}: {exc.strerror or exc}")
    stats = ReadStats()
    finder = SampleFinder()
    read = stream if whole else watched(stream, finder)
    # A file is there whole: its lines go out in blocks (a write each, even when Python's output is
    # unbuffered). From a pipe (`tegrastats | jroof-tui parse -`) each line goes when it is read.
    block = PARSE_BLOCK_LINES if stream.is_file else 1
    lines: list[str] = []
    try:
        with stream:
            for text in iter_parse_lines(read, tz=tz, interval_s=interval_s, stats=stats,
                                         tz_given=args.tz is not None):
                lines.append(text)
                if len(lines) >= block:
                    _write(lines)
                    lines.clear()
    except BrokenPipeError:
        raise  # our reader left (`| head`), not our input: main() ends quietly
    except RecordingError as exc:
        return _fail_after(lines, f"cannot parse {args.file}: {exc}")
    except OSError as exc:
        return _fail_after(lines, f"cannot read {args.file}: {exc.strerror or exc}")
    _write(lines)
    sys.stdout.flush()
    if not whole and not finder.found:
        return fail(finder.message(args.file, streamed=True))
    said = []
    if stats.skipped_lines:
        said.append(f"skipped {stats.skipped_lines} lines that are not records")
    if stream.long_lines:
        said.append(f"skipped {stream.long_lines} lines longer than {MAX_LINE_BYTES >> 20} MiB")
    if stats.tally.nulled:
        said.append(f"nulled {stats.tally.nulled} values of the wrong type or range")
    if stats.tally.dropped:
        said.append(f"dropped {stats.tally.dropped} entries past {MAX_CORES} cores or {MAX_NAMED} "
                    "rails, zones or engines a line")
    if stats.basis is not None and stats.basis.interval_source == "assumed":
        said.append(f"interval assumed: {stats.basis.interval_note}")
    if stats.clock_backwards:
        said.append(f"{stats.clock_backwards} stamps earlier than the line before (the clock was set "
                    "back): placed one interval on, in file order")
    if said:
        print(f"jroof-tui: {args.file}: " + "; ".join(said), file=sys.stderr)
    return 0


def _write(lines: list[str]) -> None:
    """JSON lines onto stdout, a terminal's controls in their strings escaped (one search a block)."""
    sys.stdout.write(terminal_safe("".join(lines)))


def _fail_after(printed: list[str], message: str) -> int:
    """What was read before the error is printed, then the error."""
    _write(printed)
    sys.stdout.flush()
    return fail(message)


COMMAND = Command(
    name="parse",
    help="print one JSON object per line of a log (JSON Lines)",
    description="Parse a tegrastats log or a jroof recording; '-' reads stdin.",
    epilog="example: tegrastats | jroof-tui parse - | jq .gpu",
    add_arguments=add_arguments,
    run=run,
    reads_config=False,
)

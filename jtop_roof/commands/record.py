"""``jroof-tui record FILE``: the monitor without a screen, for scripts and SSH sessions.
``record -`` streams the recording to standard output (``jroof-tui record - | jq``)."""

from __future__ import annotations

import argparse
import math
import threading
from collections.abc import Callable

from jtop_roof.commands.base import Command, fail, warn
from jtop_roof.commands.options import input_files, refuse_out_over_inputs, replay_readable, source_options
from jtop_roof.commands.source_flags import refuse_unused, sources_of
from jtop_roof.formats.recorder import STDOUT, Recorder
from jtop_roof.model.jsonsafe import terminal_safe
from jtop_roof.model.records import Record
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the recording (JSON Lines); - for standard output")
    parser.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")


def run(args: argparse.Namespace, config: Config) -> int:
    duration = getattr(args, "duration", None)
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        return fail("--duration must be a positive number of seconds")
    refuse_unused(args, config, roofless="record")
    if args.file == STDOUT:  # `record - --replay X >> X` would replay its own output (a file: the recorder)
        refuse_out_over_inputs(None, input_files(args))
    with replay_readable(args, config) as replay:
        return _record(args.file, replay, duration, config)


def _record(path: str, replay: str | None, duration: float | None, config: Config) -> int:
    """Record ``replay`` (the spooled standard input of ``--replay -``) or the live source."""
    from jtop_roof.commands.recording import headless_runtime
    from jtop_roof.runtime.headless import run_headless
    from jtop_roof.runtime.session import build_header, open_recording

    chosen = sources_of(config, replay)
    source = chosen.source
    if chosen.hint:
        warn(chosen.hint)
    try:
        if path == STDOUT:
            recorder: Recorder = StdoutRecorder(build_header(source, config), source.stop)
        else:
            recorder = open_recording(path, source, config)
    except BrokenPipeError:
        source.stop()
        return 0  # `record - | head -0`: the reader left before the first line
    except OSError as exc:
        source.stop()
        return fail(f"cannot write {path}: {exc.strerror or exc}")
    runtime, exporter = headless_runtime(source, recorder, config)
    try:
        status = run_headless(source, recorder, duration, runtime=runtime, listen_for_markers=True)
    finally:
        if exporter is not None:
            exporter.close()
    if isinstance(recorder, StdoutRecorder) and recorder.reader_left:
        return 0  # as any filter whose reader has what it wanted: nothing to say
    if status == 0:
        where = "standard output" if path == STDOUT else path
        warn(f"recorded to {where}; `jroof-tui report {path}` for the phases")
    return status


class StdoutRecorder(Recorder):
    """The recording on standard output (``record -``), a line per record as it comes. A reader
    that leaves (``record - | head -3``) ends the recording as it ends any filter, quietly: nothing
    more is written and ``stop_source`` is called (the pump then ends as at the source's end)."""

    def __init__(self, header: dict[str, object], stop_source: Callable[[], None]) -> None:
        self._stop_source = stop_source
        self._reader_left = threading.Event()
        super().__init__(STDOUT, header, to_stdout=True)

    @property
    def reader_left(self) -> bool:
        """Whether the reader closed the pipe (then the recording is closed)."""
        return self._reader_left.is_set()

    def _append(self, data: bytes) -> None:
        """As the file's, with C1 and bidi controls escaped: the line may reach a terminal."""
        if not data.isascii():
            data = terminal_safe(data.decode("utf-8")).encode("utf-8")
        super()._append(data)

    def write(self, record: Record) -> bool:
        try:
            return super().write(record)
        except BrokenPipeError:
            self._reader_left.set()
            self.close()
            self._stop_source()
            return False


COMMAND = Command(
    name="record",
    help="record without the TUI (scripts, SSH)",
    description="Record samples to FILE without a screen, until --duration elapses or "
    "SIGINT/SIGTERM/SIGHUP. FILE - streams the recording to standard output, a line per record.",
    epilog="examples: jroof-tui record run1.jsonl --duration 600   |   jroof-tui record - | jq -c .gpu   |   "
    "tegrastats --logfile /dev/stdout | jroof-tui record run.jsonl --replay - --follow",
    add_arguments=add_arguments,
    run=run,
    shared_options=source_options,
)

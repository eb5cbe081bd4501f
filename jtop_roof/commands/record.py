"""``jroof-tui record FILE``: the monitor without a screen, for scripts and SSH sessions."""

from __future__ import annotations

import argparse
import math

from jtop_roof.commands.base import Command, fail, warn
from jtop_roof.commands.options import check_trtexec, refuse_roof_only, refuse_unplaced, source_options
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")


def run(args: argparse.Namespace, config: Config) -> int:
    from jtop_roof.commands.recording import headless_runtime
    from jtop_roof.runtime.headless import run_headless
    from jtop_roof.runtime.session import make_source, open_recording, resolve_source_kind

    refuse_roof_only(args, "record")
    refuse_unplaced(config, getattr(args, "replay", None))
    duration = getattr(args, "duration", None)
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        return fail("--duration must be a positive number of seconds")
    kind, hint = resolve_source_kind(config, getattr(args, "replay", None))
    source = make_source(config, kind, getattr(args, "replay", None))
    check_trtexec([source], config)
    if hint:
        warn(hint)
    try:
        recorder = open_recording(args.file, source, config)
    except OSError as exc:
        source.stop()
        return fail(f"cannot write {args.file}: {exc.strerror or exc}")
    runtime, exporter = headless_runtime(source, recorder, config)
    try:
        status = run_headless(source, recorder, duration, runtime=runtime, listen_for_markers=True)
    finally:
        if exporter is not None:
            exporter.close()
    if status == 0:
        warn(f"recorded to {args.file}; `jroof-tui report {args.file}` for the phases")
    return status


COMMAND = Command(
    name="record",
    help="record without the TUI (scripts, SSH)",
    description="Record samples to FILE without a screen, until --duration elapses or "
    "SIGINT/SIGTERM/SIGHUP.",
    epilog="example: jroof-tui record run1.jsonl --duration 600",
    add_arguments=add_arguments,
    run=run,
    shared_options=source_options,
)

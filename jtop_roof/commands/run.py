"""``jroof-tui run -- COMMAND``: monitor (or record headless) while a workload runs; end when it ends."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from jtop_roof.commands.base import Command, fail, warn
from jtop_roof.commands.options import replay_of, source_options
from jtop_roof.commands.source_flags import refuse_unused, sources_of
from jtop_roof.runtime.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--headless", action="store_true", help="no screen: record only")
    parser.add_argument("--record", metavar="FILE", dest="run_record", default=None,
                        help="record to FILE (required with --headless)")
    parser.add_argument("--without-markers", action="store_true",
                        help="start the workload even when markers from scripts cannot be taken "
                        "(its phases and work reports are then lost)")
    parser.add_argument("argv", metavar="COMMAND", nargs=argparse.REMAINDER,
                        help="the workload, after --: run --headless --record r.jsonl -- python w.py")


def run(args: argparse.Namespace, config: Config) -> int:
    """Monitor (or record headless) while the workload runs; end when it ends."""
    import threading

    from jtop_roof.commands.recording import headless_runtime
    from jtop_roof.formats.trtexec import KEPT_SUFFIX, is_trtexec
    from jtop_roof.formats.userfiles import OutputError
    from jtop_roof.runtime.child import Child, ChildError, kept_output_path
    from jtop_roof.runtime.control import ControlError, control_dir
    from jtop_roof.runtime.headless import run_headless
    from jtop_roof.runtime.session import open_recording

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        return fail("give the workload after --: jroof-tui run --headless --record r.jsonl -- python w.py")
    if args.headless and args.run_record is None:
        return fail("--headless needs --record FILE (the run is kept there)")
    if args.run_record == "-":
        return fail("run --record -: the workload's own output goes to standard output; give a file "
                    "(`jroof-tui record -` streams a recording to standard output)")
    refuse_unused(args, config, roofless="run --headless" if args.headless else None)
    log = None if args.run_record is None else kept_output_path(args.run_record, argv)
    if not args.without_markers:
        try:
            control_dir()  # the workload's phases would be lost without it: refused, said why
        except ControlError as exc:
            return fail(f"markers from scripts are off, so the workload's phases would be lost: {exc} "
                        "(or run with --without-markers)")
    chosen = sources_of(config, replay_of(args))
    source = chosen.source
    if chosen.hint:
        warn(chosen.hint)
    recorder = None
    if args.run_record is not None:
        try:
            recorder = open_recording(args.run_record, source, config)
        except OSError as exc:
            source.stop()
            return fail(f"cannot write {args.run_record}: {exc.strerror or exc}")
    phase = command_phase_name(argv)
    if not args.headless:
        from jtop_roof.tui.run import run_app

        return run_app(source, config, recorder=recorder, child_argv=argv, command_phase=phase)
    assert recorder is not None
    ended = threading.Event()
    children: list[Child] = []
    failed: list[str] = []

    def start_workload() -> None:
        """Once markers are taken: so that the workload's first marker is not lost. trtexec's
        output is understood afterwards (its timed window is known only at its end): kept beside
        the recording as it is shown, where `report` and replay find it."""
        try:
            children.append(Child(argv, on_exit=ended.set, log=log, on_screen=True,
                                  inputs=[args.run_record]))
        except (ChildError, OutputError) as exc:  # a planted FIFO or another user's file at FILE.out
            failed.append(str(exc))
            ended.set()  # the recording closes with what it has

    runtime, exporter = headless_runtime(source, recorder, config)
    try:
        status = run_headless(source, recorder, None, runtime=runtime, listen_for_markers=True,
                              stop_event=ended, on_listening=start_workload, command_phase=phase)
    finally:
        if exporter is not None:
            exporter.close()
    if failed:
        return fail(failed[0])
    if not children:  # a stop signal came before the workload was started: none ran
        warn(f"stopped before the workload started; recorded to {args.run_record}")
        return status
    child = children[0]
    child.stop()
    kept = f" (trtexec's output in {args.run_record}{KEPT_SUFFIX}, read with it)" if is_trtexec(argv) else ""
    warn(f"recorded to {args.run_record}{kept}; `jroof-tui report {args.run_record}` for the phases")
    return child.exit_status(status)


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


COMMAND = Command(
    name="run",
    help="run a workload under the monitor, recording it",
    description="Start the monitor (or, with --headless, a recording without a screen), run COMMAND, "
    "and stop when it exits; the exit status is COMMAND's. The workload marks its phases and reports "
    "its work through the hook (`from jtop_roof import hook`) or `jroof-tui mark`.",
    epilog="example: jroof-tui run --headless --record r50.jsonl -- trtexec --loadEngine=r50.engine "
    "--duration=60",
    add_arguments=add_arguments,
    run=run,
    shared_options=source_options,
)

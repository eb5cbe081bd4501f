"""Running the monitor on a terminal: its recordings opened first, the marker listener, the watch
over the terminal, and ``run``'s workload beside it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from jtop_roof.formats.recorder import Recorder
from jtop_roof.formats.userfiles import OutputError
from jtop_roof.model.metrics import for_terminal
from jtop_roof.runtime.child import Child, ChildError, kept_output_path
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import start_listener, takes_script_markers
from jtop_roof.runtime.session import open_recording, record_paths
from jtop_roof.sources.base import Source
from jtop_roof.tui.app import JroofApp
from jtop_roof.tui.terminal import TerminalWatch


def run_app(
    source: Source,
    config: Config,
    *,
    record_path: str | None = None,
    recorder: Recorder | None = None,
    notices: Sequence[str] = (),
    child_argv: Sequence[str] | None = None,
    more: Sequence[Source] = (),
    command_phase: str | None = None,
) -> int:
    """Run the monitor on a terminal; returns the exit status. The recording (``record_path``) is
    opened before the screen starts so that an unwritable path is a plain one-line error.
    ``child_argv``: a workload to run meanwhile (``jroof-tui run``); the monitor ends when it does,
    and its exit status is returned. ``more``: further boards (several ``--ssh``), each recorded
    to a file of its own (``run1.orin.jsonl``)."""
    sources = [source, *more]
    recorders: list[Recorder | None] = [recorder] + [None] * len(more)
    if record_path is not None:
        for index, path in enumerate(record_paths(record_path, sources)):
            try:
                recorders[index] = open_recording(path, sources[index], config)
            except OSError as exc:
                print(for_terminal(f"jroof-tui: error: cannot write {path}: {exc.strerror or exc}"),
                      file=sys.stderr)
                for opened in recorders:
                    if opened is not None:
                        opened.close()
                for each in sources:
                    each.stop()
                return 2
    recorder = recorders[0]
    app = JroofApp(source, config, recorder=recorder, notices=notices,
                   more=list(zip(more, recorders[1:], strict=True)), command_phase=command_phase)
    listener = None  # a replay of a file takes keys, not scripts' markers
    if takes_script_markers(sources):
        listener = start_listener(lambda kind, name: app.request_marker(kind, name), app.request_work)
    watch = TerminalWatch(app)
    watch.start()
    child = None
    if child_argv:
        def quit_when_done() -> None:
            loop = app.loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(app.end_command_phase)
                loop.call_soon_threadsafe(app.exit, 0)

        try:
            log = None if recorder is None else kept_output_path(recorder.path, child_argv)
            child = Child(child_argv, on_exit=quit_when_done, on_screen=False, log=log,
                          inputs=[] if recorder is None else [recorder.path])
        except (ChildError, OutputError) as exc:  # a planted FIFO or another user's file at FILE.out
            print(for_terminal(f"jroof-tui: error: {exc}"), file=sys.stderr)
            source.stop()
            if recorder is not None:
                recorder.close()
            return 2
    try:
        app.run()
    finally:
        app.shutdown_source()
        watch.finished.set()
        if listener is not None:
            listener.close()
        if child is not None:
            child.stop()
    ours = app.return_code or 0
    return ours if child is None else child.exit_status(ours)

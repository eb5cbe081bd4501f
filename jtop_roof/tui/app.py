"""The monitor: a Textual app fed by one source per board, each in a worker thread of its own.

Data flow: ``Boards.pump`` runs each source in a thread worker, which writes each record to the
recording (if any, through the pipeline's sink) and posts it to the app; the app's handler hands it
to ``Boards`` and so to the ``Pipeline`` (history, phases, energy, detectors: the same path as
headless ``record`` and ``report``). What changes the screen asks for a frame (``_request_frame``):
a one-shot timer repaints what changed and is visible (``Painter``), at most ``redraw_hz`` times a
second, and not at all while nothing changes (a 1 Hz source: one frame a second). The App only
draws what the pipeline holds (``build_view``, ``header_lines``); nothing but the handlers touches
the pipeline or widgets.

Quitting, SIGHUP (the SSH session dropped) and SIGTERM all stop the source and close the recording,
so what was recorded stays on disk.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.driver import Driver
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import get_current_worker

from jtop_roof.analysis.history import History
from jtop_roof.analysis.pipeline import Pipeline, RecordingSink
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.metrics import printable
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs.serve import ServeError
from jtop_roof.roofline.board import precisions_of
from jtop_roof.roofline.measured import load_probe
from jtop_roof.roofline.workload import load_workload
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import WorkReport
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.tui import fastpaint
from jtop_roof.tui.header import header_lines
from jtop_roof.tui.keys import (
    HELP_IDS_MIN_COLUMNS,
    MONITOR_BINDINGS,
    action_enabled,
    help_rows,
    next_focus,
    next_in_cycle,
    next_zoom,
)
from jtop_roof.tui.layout import WIDE_MIN_COLUMNS, WIDE_MIN_ROWS, pane_css, set_compact, set_focus
from jtop_roof.tui.messages import (
    NOTICE_SECONDS,
    MarkerRequested,
    PlotResized,
    RecordingFailed,
    RecordsReceived,
    SourceDescribed,
    SourceEnded,
    WorkRequested,
    short_notice,
)
from jtop_roof.tui.painter import Painter
from jtop_roof.tui.panes import COLUMNS, PANES, Pane
from jtop_roof.tui.streams import Boards, Marked, Stream
from jtop_roof.tui.theming import ThemedApp
from jtop_roof.tui.transport import ReplayTransport
from jtop_roof.tui.view import build_view, shown_precision
from jtop_roof.tui.widgets import HelpScreen, PhaseNameScreen, Readout

#: A frame due sooner than this comes with the next message, not on a timer of its own.
MIN_TIMER_S = 0.005
#: Panes in the order the focus key cycles through them.
PANE_IDS = tuple(spec.id for spec in PANES if spec.in_focus_cycle)

__all__ = ["JroofApp"]


class JroofApp(ReplayTransport, ThemedApp):
    """jroof: live or replayed Jetson telemetry with phases, energy and plots."""

    CSS_PATH = "app.tcss"
    #: Each pane's own rules, from its spec (loaded after ``app.tcss``).
    CSS = pane_css(PANES)
    TITLE = "jroof"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = list(MONITOR_BINDINGS)

    #: The plots' time window in seconds (None: all of history); the z key cycles it.
    window_s: reactive[float | None] = reactive(None, init=False)
    #: The pane shown full-screen (None: all panes); the f key cycles it.
    focused_pane: reactive[str | None] = reactive(None, init=False)
    #: The phase open at the newest record shown (the header, the end key).
    phase: reactive[str | None] = reactive(None, init=False)
    #: The precision the roofline draws (None: the workload's, else the board's fastest); the p
    #: key cycles it.
    precision: reactive[str | None] = reactive(None, init=False)
    #: Whether the roofline shows energy (J per operation, each mode) instead of time; the j key.
    energy_roof: reactive[bool] = reactive(False, init=False)
    #: The board the panes show, of several (``--ssh a --ssh b``); the b key cycles it.
    board: reactive[int] = reactive(0, init=False)

    def __init__(
        self,
        source: Source,
        config: Config,
        *,
        recorder: Recorder | None = None,
        notices: Sequence[str] = (),
        user_themes: Path | None = None,
        mono: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        more: Sequence[tuple[Source, Recorder | None]] = (),
        command_phase: str | None = None,
    ) -> None:
        """``recorder``: an open ``Recorder`` (from ``--record``); ``notices``: lines for the user
        (e.g. why this source was chosen), shown once and kept in Events; ``user_themes``: folder
        of user theme files (default: the config dir's ``themes/``); ``mono``/``wall``: clocks,
        injectable for tests; ``more``: further boards with their recorders (``--ssh a --ssh b``):
        one header line each, the b key switches the panes between them; ``command_phase``:
        ``run``'s phase named after its command, started at the first sample unless the command
        has marked a phase by then (and replaced by the command's first phase after it)."""
        paint = fastpaint.choose_route()  # a bad JROOF_PAINT stops here, before anything starts
        super().__init__(user_themes)
        fastpaint.use(paint)
        self.config = config
        self.animation_level = "none"
        self.boards = Boards(config, [(source, recorder), *more], mono=mono, wall=wall,
                             command_phase=command_phase)
        # A replay (and the demo, a looping one) gets the transport keys and a wall-clock axis.
        self.replay = self.boards.replay
        self._probe = None if config.probe is None else load_probe(config.probe)
        self._workload = None if config.workload is None else load_workload(config.workload)
        self._tz = parse_tz(config.tz)
        self._notes: list[str] = []
        self._notices = [printable(str(text)) for text in notices]
        if paint.note is not None:  # said once, as the source's notices are
            self._notices.append(paint.note)
        self._narrow = False  # below WIDE_MIN_COLUMNS: the footer drops its least needed keys
        self._painter = Painter(mono, config.redraw_hz)
        self._mono = mono
        #: When (``mono``) the frame asked for is due (None: none is), its timer (None: it comes
        #: with the next message, or none is asked for), and when the last frame was drawn.
        self._frame_due: float | None = None
        self._frame_timer: asyncio.TimerHandle | None = None
        self._last_frame = -math.inf
        self._panes: list[Pane] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.use_theme(config.theme)
        self.set_reactive(JroofApp.window_s, config.window_s)

    @property
    def streams(self) -> list[Stream]:
        return self.boards.streams

    @property
    def stream(self) -> Stream:
        """The board the panes show."""
        return self.boards.shown(self.board)

    @property
    def source(self) -> Source:
        return self.stream.source

    @property
    def pipeline(self) -> Pipeline:
        return self.stream.pipeline

    @property
    def controls(self) -> ReplayControls | None:
        return self.stream.controls

    @property
    def history(self) -> History:
        """What the panes draw: the pipeline's display history."""
        return self.pipeline.history

    @property
    def sink(self) -> RecordingSink:
        return self.pipeline.sink

    @property
    def notes(self) -> list[str]:
        """Notices and source hints shown so far (the Events pane lists them)."""
        return list(self._notes)

    # ------------------------------------------------------------------------------ layout

    def get_default_screen(self) -> Screen[Any]:
        return fastpaint.default_screen()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, or the fast paint's quiet one in its place."""
        return fastpaint.driver_class(super().get_driver_class())

    def compose(self) -> ComposeResult:
        yield Readout(id="header")
        with Horizontal(id="main"):
            for column in COLUMNS:
                with Vertical(id=column, classes="column"):
                    for spec in PANES:
                        if spec.column == column:
                            yield spec.pane_class(id=spec.id)
        yield Footer()

    def on_mount(self) -> None:
        self.set_keymap(dict(self.config.keymap))
        for reason in self.theme_failures:
            self.notify(reason, title="theme not loaded", severity="warning", markup=False, timeout=8)
        for text in self._notices:
            self._note(text)
        self._apply_size(self.size.width, self.size.height)
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self._request_frame()
        self.loop = asyncio.get_running_loop()
        if self.config.prometheus is not None:
            warn = partial(self.notify, severity="warning", markup=False)
            try:
                self.boards.serve_metrics(self.config.prometheus, say=warn)
            except (ServeError, OSError) as exc:
                self.notify(f"metrics are off: {exc}", severity="error", markup=False)
        for index in range(len(self.streams)):
            self.run_worker(partial(self._pump, index), thread=True, exit_on_error=False,
                            group=f"source-{index}", name=f"source-{index}")

    def _pump(self, index: int) -> None:
        worker = get_current_worker()
        self.boards.pump(index, self.post_message, lambda: worker.is_cancelled)

    def _note(self, text: str) -> None:
        self._notes.append(text)
        self.notify(short_notice(text), markup=False, timeout=NOTICE_SECONDS)

    def _on_theme_changed(self, _theme: Any) -> None:
        """Plots bake the theme's colours into their canvas: draw them again, whoever changed it."""
        self._redraw_soon()

    def on_resize(self, event: Any) -> None:
        self._apply_size(event.size.width, event.size.height)

    def on_plot_resized(self, _message: PlotResized) -> None:
        self._request_frame(force=True)

    def _apply_size(self, width: int, height: int) -> None:
        set_compact(self.screen_stack[0], width < WIDE_MIN_COLUMNS or height < WIDE_MIN_ROWS)
        if self._narrow != (width < WIDE_MIN_COLUMNS):
            self._narrow = width < WIDE_MIN_COLUMNS
            self.refresh_bindings()
        self._redraw_soon()

    @property
    def panes(self) -> list[Pane]:
        if not self._panes:
            self._panes = list(self.screen_stack[0].query(Pane))
        return self._panes

    # ------------------------------------------------------------------------ the sources

    def on_source_described(self, message: SourceDescribed) -> None:
        for text in self.boards.describe(message.stream, message.described):
            self._note(text)
        for text in message.described.notes:  # an input beside the stream used in part, or not
            self._note(printable(text))
        self._request_frame(force=True)

    def on_records_received(self, message: RecordsReceived) -> None:
        for record in message.records:
            marked = self.boards.receive(message.stream, record)
            if marked is not None:
                self._show_marked(marked)
        self.phase = self.pipeline.current_phase
        self._request_frame()

    def on_source_ended(self, message: SourceEnded) -> None:
        self.boards.end(message.stream, message.error)
        if message.error:
            self.notify(message.error, title="source failed", severity="error", markup=False, timeout=15)
        self._request_frame(force=True)

    def on_recording_failed(self, message: RecordingFailed) -> None:
        self.notify(f"recording stopped: {message.error}", severity="error", markup=False, timeout=15)
        self._request_frame(force=True)

    def request_marker(self, kind: str, name: str | None, origin: str = "script") -> None:
        """Thread-safe: a phase start or end from outside the UI (the ``jroof-tui mark`` listener)."""
        self.post_message(MarkerRequested(kind, name, origin))

    def on_marker_requested(self, message: MarkerRequested) -> None:
        if message.kind == "phase_start":
            self._add_marker("phase_start", message.name, message.origin)
        elif message.kind == "phase_end":
            self._add_marker("phase_end", None, message.origin)

    def request_work(self, report: WorkReport) -> None:
        """Thread-safe: work a benchmark reported (the listener's thread)."""
        self.post_message(WorkRequested(report))

    def on_work_requested(self, message: WorkRequested) -> None:
        self._tell_failures(self.boards.work(message.report))

    def end_command_phase(self) -> None:
        """``run``'s command ended: so does its phase, when it is still the one open."""
        marked = self.boards.end_command_phase(self.board)
        if marked is not None:
            self._show_marked(marked)

    def _add_marker(self, kind: str, name: str | None, origin: str = "key") -> None:
        self._show_marked(self.boards.mark(kind, name, origin, self.board))

    def _show_marked(self, marked: Marked) -> None:
        self._tell_failures(marked.failures)
        self.phase = self.pipeline.current_phase
        self._request_frame(force=True)  # every plot draws the new boundary, on the next frame
        self._update_header()

    def _tell_failures(self, failures: Sequence[str]) -> None:
        for text in failures:
            self.notify(text, severity="error", markup=False)

    # ------------------------------------------------------------------------------ drawing

    def _request_frame(self, *, force: bool = False, at: float | None = None) -> None:
        """A frame on the frame timer: at ``at`` (``mono`` time; None: now), but never within
        ``1 / redraw_hz`` of the last frame; one timer at a time, the earliest wins. ``force``:
        that frame draws every visible pane (a layout, theme or phase boundary changed)."""
        if force:
            self._painter.force()
        now = self._mono()
        due = max(now if at is None else at, self._last_frame + 1.0 / self.config.redraw_hz)
        if self._frame_due is not None:
            if self._frame_due <= due:
                return
            if self._frame_timer is not None:
                self._frame_timer.cancel()
        self._frame_due = due
        if due - now < MIN_TIMER_S:
            self._frame_timer = None
            self.call_later(self._timed_frame)
        else:  # asyncio's timer, not Textual's (a task to start, and to cancel when the next
            # sample comes first: a frame held back for a plot is asked for after most samples)
            self._frame_timer = asyncio.get_running_loop().call_later(due - now, self._timed_frame)

    def _timed_frame(self) -> None:
        self._frame_due = self._frame_timer = None
        self._redraw()

    def _redraw(self) -> None:
        """Repaint what changed and is visible (the frame timer; also forced on layout changes).
        A plot held back (it changes once per time column) asks for the frame it is due in."""
        if len(self.screen_stack) > 1 or not self.is_running:
            return
        self._last_frame = self._mono()
        pipeline = self.pipeline
        version = (pipeline.history.version, pipeline.ledger_version)
        if self._painter.settled(version):  # nothing new for the panes: the header's clock only
            self._draw_header()
            return
        view = build_view(pipeline, thresholds=self.config.thresholds, tz=self._tz, window_s=self.window_s,
                          wall_axis=self.replay, notes=self._notes, precision=self.precision,
                          probe=self._probe, workload=self._workload, energy=self.energy_roof)
        self._draw_header()
        held_until = self._painter.paint(self.panes, view, version)
        if held_until is not None:
            self._request_frame(at=held_until)

    def _redraw_soon(self) -> None:
        self._painter.force()
        self.call_after_refresh(self._redraw)

    def redraw_now(self) -> None:
        """Repaint everything now (tests and snapshots call this after feeding data)."""
        self._painter.force()
        self._redraw()

    def _draw_header(self) -> None:
        header = self.query_one("#header", Readout)
        header.set_lines(header_lines(header.cells.width or self.size.width, self.streams, self.stream))

    def _update_header(self) -> None:
        """After a key that changes what the header says: it is one line, draw it now."""
        if len(self.screen_stack) == 1 and self.is_running:
            self._draw_header()

    # ------------------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action_enabled(action, boards=len(self.streams), replay=self.replay,
                              phase_open=self.phase is not None, narrow=self._narrow)

    def action_next_board(self) -> None:
        self.board = (self.board + 1) % len(self.streams)

    def watch_board(self) -> None:
        self.phase = self.pipeline.current_phase
        self._painter.forget_plots()
        self.refresh_bindings()
        self.redraw_now()

    def watch_phase(self) -> None:
        if not self.screen_stack:
            return  # quitting: records still queued from the worker have no screen to change
        self.refresh_bindings()
        self._update_header()

    def action_mark_phase(self) -> None:
        self._add_marker("phase_start", None)

    def action_name_phase(self) -> None:
        suggestion = self.pipeline.next_auto_name

        def started(name: str | None) -> None:
            if name is not None:
                self._add_marker("phase_start", name or suggestion)
            self._request_frame(force=True)  # what came while the dialog was up

        self.push_screen(PhaseNameScreen(suggestion), started)

    def action_name_phase_unlisted(self) -> None:
        self.action_name_phase()

    def action_end_phase(self) -> None:
        if self.phase is not None:
            self._add_marker("phase_end", None)

    def action_toggle_record(self) -> None:
        notice = self.stream.toggle_recording(self.config)
        self.notify(notice.text, severity="error" if notice.error else "information", markup=False)
        if not notice.error:
            self._update_header()

    def action_cycle_precision(self) -> None:
        available = precisions_of(self.pipeline.board)
        if available:
            current = shown_precision(self.pipeline, self.precision, self._workload)
            self.precision = next_in_cycle(available, current)

    def watch_precision(self) -> None:
        self.redraw_now()

    def action_toggle_energy_roof(self) -> None:
        self.energy_roof = not self.energy_roof

    def watch_energy_roof(self) -> None:
        self.redraw_now()

    def action_zoom(self) -> None:
        self.window_s = next_zoom(self.window_s)

    def watch_window_s(self) -> None:
        self.redraw_now()

    def action_focus_pane(self) -> None:
        self.focused_pane = next_focus(PANE_IDS, self.focused_pane)

    def watch_focused_pane(self, focus: str | None) -> None:
        set_focus(self.screen_stack[0], self.panes, focus)
        self._redraw_soon()

    def action_help(self) -> None:
        rows = help_rows(MONITOR_BINDINGS, self.config.keymap)
        self.push_screen(HelpScreen(rows, show_ids=self.size.width >= HELP_IDS_MIN_COLUMNS),
                         lambda _: self.redraw_now())

    async def action_quit(self) -> None:
        self.boards.finish()
        self.shutdown_source()
        self.exit(0)

    def shutdown_source(self) -> None:
        """Stop every source, close every recording and the metrics server; idempotent."""
        self.boards.shutdown()

    def on_unmount(self) -> None:
        if self._frame_timer is not None:
            self._frame_timer.cancel()
        self.shutdown_source()

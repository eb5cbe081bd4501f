"""The monitor: a Textual app fed by one source in one worker thread.

Data flow: ``Source.records()`` runs in a thread worker, which writes each record to the recording
(if any, through the pipeline's sink) and posts it to the app; the app's handler hands it to the
``Pipeline`` (history, phases, energy, detectors: the same path as headless ``record`` and
``report``). A timer at ``redraw_hz`` repaints what changed and is visible: readouts when there is
new data, each plot at most once per time-column it can show. The App only draws what the
pipeline holds; nothing but the handlers touches the pipeline or widgets.

Seeks: a replay answers each seek with a ``seek`` event, on which the pipeline clears the display
history (never the ledger) and the replay refills it from the file.

Quitting, SIGHUP (the SSH session dropped) and SIGTERM all stop the source and close the recording,
so what was recorded stays on disk.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult, InvalidThemeError
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import get_current_worker

from jtop_roof.analysis.history import History
from jtop_roof.analysis.ledger import COMMAND_ORIGIN
from jtop_roof.analysis.pipeline import Pipeline, RecordingSink
from jtop_roof.analysis.verdict import place
from jtop_roof.formats.recorder import Recorder
from jtop_roof.formats.trtexec import KEPT_SUFFIX, TrtexecError, is_trtexec, kept_output, read_trtexec
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.metrics import fmt_duration, fmt_speed, printable
from jtop_roof.model.records import Marker, Sample, Work
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs.report import trtexec_records
from jtop_roof.outputs.serve import Metrics, MetricsServer, ServeError, start_exporter
from jtop_roof.roofline.board import precisions_of, roof_state
from jtop_roof.roofline.measured import load_probe
from jtop_roof.roofline.workload import load_workload
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.control import WorkReport
from jtop_roof.runtime.session import (
    auto_record_path,
    file_ledger_builder,
    open_recording,
    pipeline_options,
    record_paths,
)
from jtop_roof.sources.base import ReplayControls, Source
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.messages import (
    MarkerRequested,
    RecordingFailed,
    RecordReceived,
    SourceDescribed,
    SourceEnded,
    WorkRequested,
)
from jtop_roof.tui.terminal import TerminalWatch
from jtop_roof.tui.themes import (
    BUILTIN_THEME_NAMES,
    ThemeError,
    builtin_theme_specs,
    load_theme_dir,
    theme_variable_defaults,
    to_textual_theme,
    user_theme_dir,
)
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets import (
    CpuPane,
    EnginesPane,
    EventsPane,
    GpuPane,
    HelpScreen,
    MemoryPane,
    Pane,
    PhaseNameScreen,
    PowerPane,
    Readout,
    RooflinePane,
    TempPane,
    TrendsPane,
)
from jtop_roof.tui.widgets.readout import Line

#: Replay speeds the +/- keys step through.
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: Zoom windows the z key cycles through (None = all of history).
ZOOMS: tuple[float | None, ...] = (30.0, 120.0, 600.0, 3600.0, None)
#: Below this size the panes collapse to one-line summaries (roofline and events behind focus).
WIDE_MIN_COLUMNS = 100
WIDE_MIN_ROWS = 30
#: Panes in the order the focus key cycles through them.
PANE_IDS = ("cpu", "gpu", "memory", "power", "temps", "engines", "roofline", "events")
REPLAY_ACTIONS = ("toggle_pause", "step", "speed_up", "speed_down", "seek", "seek_to", "follow")
#: Help shows binding ids (the keymap's names) from this width on; narrower, it says where they are.
HELP_IDS_MIN_COLUMNS = 100

__all__ = ["JroofApp", "run_app"]


#: Footer groups: "+- speed" and "←→ seek" take less room at 80 columns than one item per key.
SPEED_KEYS = Binding.Group("speed", compact=True)
SEEK_KEYS = Binding.Group("seek", compact=True)


@dataclass
class Stream:
    """One board's source and its pipeline (several with ``--ssh a --ssh b``)."""

    source: Source
    pipeline: Pipeline
    controls: ReplayControls | None
    ended: str | None = None
    last_receipt: float | None = None  # our clock when its newest sample came (live markers)


class JroofApp(App[int]):
    """jroof: live or replayed Jetson telemetry with phases, energy and plots."""

    CSS_PATH = "app.tcss"
    TITLE = "jroof"
    ENABLE_COMMAND_PALETTE = False

    BINDINGS = [
        Binding("m", "mark_phase", "mark", tooltip="Start a new phase (auto-named)", id="mark-phase"),
        Binding("M", "name_phase", "name", tooltip="Start a new phase and name it", id="name-phase"),
        Binding("e", "end_phase", "end", tooltip="End the current phase", id="end-phase"),
        Binding("space", "toggle_pause", "pause", key_display="␣", tooltip="Pause or resume the replay",
                id="pause"),
        Binding("full_stop", "step", "step", key_display=".", show=False, tooltip="Play one more sample",
                id="step"),
        Binding("plus,equals_sign", "speed_up", "fast", key_display="+",
                tooltip="Replay faster (up to 64×)", id="speed-up", group=SPEED_KEYS),
        Binding("minus", "speed_down", "slow", key_display="-", tooltip="Replay slower (down to 0.25×)",
                id="speed-down", group=SPEED_KEYS),
        Binding("left", "seek(-10)", "-10s", key_display="←", tooltip="Back 10 s", id="seek-back",
                group=SEEK_KEYS),
        Binding("right", "seek(10)", "+10s", key_display="→", tooltip="Forward 10 s", id="seek-forward",
                group=SEEK_KEYS),
        Binding("shift+left", "seek(-60)", "-60s", show=False, tooltip="Back 60 s", id="seek-back-long"),
        Binding("shift+right", "seek(60)", "+60s", show=False, tooltip="Forward 60 s",
                id="seek-forward-long"),
        Binding("home", "seek_to('start')", "start", show=False, tooltip="Jump to the start",
                id="seek-start"),
        Binding("end", "seek_to('end')", "end of file", show=False, tooltip="Jump to the end", id="seek-end"),
        Binding("F", "follow", "follow", show=False, tooltip="Follow the growing file (again: stop)",
                id="follow"),
        Binding("r", "toggle_record", "rec", tooltip="Start or stop recording", id="record"),
        Binding("t", "cycle_theme", "theme", tooltip="Next colour theme", id="theme"),
        # The same key kept out of the footer: a narrow replay footer needs the room for seek.
        Binding("t", "cycle_theme_unlisted", "theme", show=False, tooltip="Next colour theme", id="theme"),
        Binding("z", "zoom", "zoom", tooltip="Time window: 30 s, 2 min, 10 min, 1 h, all", id="zoom"),
        Binding("p", "cycle_precision", "precision", show=False,
                tooltip="Roofline precision: FP32, FP16, INT8...",
                id="precision"),
        Binding("b", "next_board", "board", show=False, tooltip="Next board (several --ssh)", id="board"),
        Binding("f", "focus_pane", "focus", tooltip="One pane full-screen, each in turn", id="focus"),
        Binding("question_mark", "help", "help", key_display="?", tooltip="This list", id="help"),
        Binding("q", "quit", "quit", tooltip="Quit (the recording is kept)", id="quit"),
    ]

    #: The plots' time window in seconds (None: all of history); the z key cycles it.
    window_s: reactive[float | None] = reactive(None, init=False)
    #: The pane shown full-screen (None: all panes); the f key cycles it.
    focused_pane: reactive[str | None] = reactive(None, init=False)
    #: The phase open at the newest record shown (the header, the end key).
    phase: reactive[str | None] = reactive(None, init=False)
    #: The precision the roofline draws (None: the device's first); the p key cycles it.
    precision: reactive[str | None] = reactive(None, init=False)
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
        super().__init__()
        self.config = config
        self._command_phase = command_phase  # None once started (or given up for the command's own)
        self._command_phase_name = command_phase
        self.animation_level = "none"
        self.streams = [self._stream(src, rec) for src, rec in [(source, recorder), *more]]
        # A replay (and the demo, a looping one) gets the transport keys and a wall-clock axis.
        self.replay = self.streams[0].controls is not None
        self._probe = None if config.probe is None else load_probe(config.probe)
        self._metrics: Metrics | None = None  # --prometheus=ADDR: fed with the first board's records
        self._exporter: MetricsServer | None = None
        self._workload = None if config.workload is None else load_workload(config.workload)
        self._mono = mono
        self._wall = wall
        self._tz = parse_tz(config.tz)
        self._notes: list[str] = []
        self._notices = [printable(str(text)) for text in notices]
        self._narrow = False  # below WIDE_MIN_COLUMNS: the footer drops its least needed keys
        self._drawn_version: tuple[int, int] = (-1, -1)
        self._plot_drawn: dict[str, tuple[tuple[int, int], float]] = {}
        self._force_redraw = True
        self._theme_failures: list[tuple[str, str]] = []
        self._theme_cycle: list[str] = []
        self._panes: list[Pane] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self._register_themes(user_theme_dir() if user_themes is None else user_themes)
        self._apply_theme(config.theme)
        self.set_reactive(JroofApp.window_s, config.window_s)

    def _stream(self, source: Source, recorder: Recorder | None) -> Stream:
        controls = source if isinstance(source, ReplayControls) else None
        pipeline = Pipeline(
            history_s=self.config.history_s,
            interval_s=self.config.interval_ms / 1000.0,
            info=SourceInfo(source.kind),
            sink=RecordingSink(recorder, forward_only=controls is not None),
            **pipeline_options(self.config),
        )
        return Stream(source, pipeline, controls)

    @property
    def stream(self) -> Stream:
        """The board the panes show."""
        return self.streams[min(self.board, len(self.streams) - 1)]

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

    # ------------------------------------------------------------------------------- themes

    def _register_themes(self, folder: Path) -> None:
        for name, spec in builtin_theme_specs().items():
            self.register_theme(to_textual_theme(spec))
            self._theme_cycle.append(name)
        user, failed = load_theme_dir(folder)
        self._theme_failures.extend(failed)
        for name, spec in user.items():
            try:
                theme = to_textual_theme(spec)
            except ThemeError as exc:
                self._theme_failures.append((spec.path, str(exc)))
                continue
            self.register_theme(theme)
            if name not in self._theme_cycle:
                self._theme_cycle.append(name)

    def _apply_theme(self, name: str) -> None:
        try:
            self.theme = name
        except InvalidThemeError:
            fallback = BUILTIN_THEME_NAMES[0]
            self._theme_failures.append((name, f"theme {name!r} is not available; using {fallback}"))
            self.theme = fallback

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults(self.current_theme.to_color_system().generate())

    # ------------------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Readout(id="header")
        with Horizontal(id="main"):
            with Vertical(id="col-left", classes="column"):
                yield CpuPane(id="cpu")
                yield MemoryPane(id="memory")
                yield TempPane(id="temps")
            with Vertical(id="col-mid", classes="column"):
                yield GpuPane(id="gpu")
                yield PowerPane(id="power")
                yield EnginesPane(id="engines")
            with Vertical(id="col-right", classes="column"):
                yield TrendsPane(id="trends")
                yield RooflinePane(id="roofline")
                yield EventsPane(id="events")
        yield Footer()

    def on_mount(self) -> None:
        self.set_keymap(dict(self.config.keymap))
        for _path, reason in self._theme_failures:
            self.notify(reason, title="theme not loaded", severity="warning", markup=False, timeout=8)
        for text in self._notices:
            self._notes.append(text)
            self.notify(text, title="note", markup=False, timeout=10)
        self._apply_size(self.size.width, self.size.height)
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self.set_interval(1.0 / self.config.redraw_hz, self._redraw, name="redraw")
        self.loop = asyncio.get_running_loop()
        if self.config.prometheus is not None:
            try:
                self._metrics, self._exporter = start_exporter(
                    self.streams[0].pipeline, self.streams[0].source.kind, self.config.prometheus,
                    say=lambda text: self.notify(text, severity="warning", markup=False))
            except (ServeError, OSError) as exc:
                self.notify(f"metrics are off: {exc}", severity="error", markup=False)
        for index in range(len(self.streams)):
            self.run_worker(partial(self._pump, index), thread=True, exit_on_error=False,
                            group=f"source-{index}", name=f"source-{index}")

    def _on_theme_changed(self, _theme: Any) -> None:
        """Plots bake the theme's colours into their canvas: draw them again, whoever changed it."""
        self._force_redraw = True
        self.call_after_refresh(self._redraw)

    def on_resize(self, event: Any) -> None:
        self._apply_size(event.size.width, event.size.height)

    def _apply_size(self, width: int, height: int) -> None:
        compact = width < WIDE_MIN_COLUMNS or height < WIDE_MIN_ROWS
        main = self.screen_stack[0]
        if main.has_class("-compact") != compact:
            main.set_class(compact, "-compact")
        for footer in main.query(Footer):
            footer.compact = compact
        if self._narrow != (width < WIDE_MIN_COLUMNS):
            self._narrow = width < WIDE_MIN_COLUMNS
            self.refresh_bindings()
        self._force_redraw = True
        self.call_after_refresh(self._redraw)

    @property
    def panes(self) -> list[Pane]:
        if not self._panes:
            self._panes = list(self.screen_stack[0].query(Pane))
        return self._panes

    # ------------------------------------------------------------------------------ worker

    def _pump(self, stream: int) -> None:
        """Run one board's blocking source; write and forward each record (never touches
        widgets). Runs in a thread worker of its own."""
        worker = get_current_worker()
        source, sink = self.streams[stream].source, self.streams[stream].pipeline.sink
        try:
            info = source.describe()
        except Exception as exc:  # noqa: BLE001 - a description is optional
            info = SourceInfo(source.kind, hints=(f"source description failed: {exc}",))
        # A whole replayed file: its ledger is read here, off the UI thread, once.
        build = file_ledger_builder(source)
        self.post_message(SourceDescribed(info, build, None if build is None else build(()),
                                          self._trtexec_extras(source), stream))
        try:
            for record in source.records():
                if worker.is_cancelled:
                    break
                try:
                    sink.write(record)
                except OSError as exc:
                    sink.stop()
                    self.post_message(RecordingFailed(exc.strerror or str(exc), stream))
                self.post_message(RecordReceived(record, stream))
        except Exception as exc:  # noqa: BLE001 - shown to the user; the app keeps its last data
            self.post_message(SourceEnded(f"{type(exc).__name__}: {exc}", stream))
            return
        self.post_message(SourceEnded(None, stream))

    def _trtexec_extras(self, source: Source) -> list[Marker | Work]:
        """``--trtexec`` (else the output ``run`` kept beside the file): its phases and iterations
        placed on the replayed file's stream (worker)."""
        if not isinstance(source, ReplaySource):
            return []
        kept = None if self.config.trtexec is not None else kept_output(source.path)
        trtexec = self.config.trtexec or kept
        if trtexec is None:
            return []
        index = source.index
        if not len(index):
            return []
        wall = index.wall_at(0, index.mono(0))
        if wall is None:
            return []  # a log without stamps: nothing to place trtexec's stamps against
        try:
            run = read_trtexec(trtexec, self._tz, self.config.trtexec_offset)
        except TrtexecError:
            if kept is None:
                raise  # the user's --trtexec was checked before the screen started
            return []  # e.g. trtexec stopped before its summary: the replay goes on without it
        return trtexec_records(run, wall - index.mono(0))

    def on_source_described(self, message: SourceDescribed) -> None:
        info = message.info
        stream = self.streams[message.stream]
        pipeline = stream.pipeline
        pipeline.describe(info)
        if message.ledger_builder is not None and message.ledger is not None:
            pipeline.load_ledger(message.ledger_builder, message.ledger)
        if message.extras:
            pipeline.add_extras(message.extras)
        # A replayed recording's hints are about the board it was made on, not this machine.
        prefix = "recorded: " if stream.source.kind == "replay" else ""
        if len(self.streams) > 1:
            prefix = f"{self._board_name(message.stream)}: {prefix}"
        for hint in info.hints:
            text = prefix + printable(hint)
            self._notes.append(text)
            self.notify(text, title="note", markup=False, timeout=10)
        self._force_redraw = True

    def on_record_received(self, message: RecordReceived) -> None:
        record = message.record
        stream = self.streams[message.stream]
        if self._metrics is not None and message.stream == 0:
            self._metrics.update(record)  # ingests it into the pipeline and publishes the result
        else:
            stream.pipeline.ingest(record)
        if isinstance(record, Sample) and record.is_sample:
            stream.last_receipt = self._mono()
            if self._command_phase is not None:
                if not stream.pipeline.ledger.phases():
                    self._add_marker("phase_start", self._command_phase, COMMAND_ORIGIN)
                self._command_phase = None
        self.phase = self.pipeline.current_phase

    def _board_name(self, index: int) -> str:
        """A board's short name: the ssh host's, else its model, else its number."""
        info = self.streams[index].pipeline.info
        host = info.header.get("ssh_host")
        if isinstance(host, str) and host:
            return printable(host.rsplit("@", 1)[-1].split(":", 1)[0], 24)
        return printable(info.model or f"board {index + 1}", 24)

    def action_next_board(self) -> None:
        self.board = (self.board + 1) % len(self.streams)

    def watch_board(self) -> None:
        self.phase = self.pipeline.current_phase
        self._plot_drawn.clear()
        self.refresh_bindings()
        self.redraw_now()

    def watch_phase(self) -> None:
        self.refresh_bindings()
        self._update_header()

    def on_source_ended(self, message: SourceEnded) -> None:
        stream = self.streams[message.stream]
        stream.pipeline.finish()  # what the detectors still hold open is an event now
        stream.ended = message.error or "ended"
        if message.error:
            self.notify(message.error, title="source failed", severity="error", markup=False, timeout=15)
        self._force_redraw = True

    def on_recording_failed(self, message: RecordingFailed) -> None:
        self.notify(f"recording stopped: {message.error}", severity="error", markup=False, timeout=15)
        self._force_redraw = True

    # ------------------------------------------------------------------------------ drawing

    def _view(self) -> View:
        pipeline = self.pipeline
        ledger = pipeline.ledger
        last = pipeline.history.last_t_mono
        if pipeline.ledger_from_file:
            # The whole file's ledger: the phase the playhead is in, with all of its energy.
            phase = None if last is None else ledger.phase_at(last)
        else:
            phase = ledger.current
        board = pipeline.board
        active = pipeline.active_events()
        clock_events = [e for e in pipeline.history.events if e.unit is not None] + active
        point = None
        if phase is not None and phase.iterations:
            point = (phase.name, place(phase, board, clock_events, self._workload))
        return View(
            history=pipeline.history,
            thresholds=self.config.thresholds,
            tz=self._tz,
            window_s=self.window_s,
            wall_axis=self.replay,
            info=pipeline.info,
            whole=ledger.whole,
            phase=phase,
            notes=self._notes,
            board=board,
            roof=roof_state(board, pipeline.history.latest, self.precision, self._probe),
            clock_events=clock_events,
            active_events=active,
            point=point,
        )

    def _redraw(self) -> None:
        """Repaint what changed and is visible (timer callback, also forced on layout changes)."""
        if len(self.screen_stack) > 1 or not self.is_running:
            return
        force, self._force_redraw = self._force_redraw, False
        view = self._view()
        self._draw_header()
        version = (self.history.version, self.pipeline.ledger_version)
        if force or version != self._drawn_version:
            for pane in self.panes:
                if _shown(pane):
                    pane.update_readout(view)
            self._drawn_version = version
        now = self._mono()
        for pane in self.panes:
            plot = pane.plot
            if plot is None or not _shown(plot) or not plot.size.area:
                continue
            drawn_version, drawn_at = self._plot_drawn.get(pane.id or "", ((-1, -1), -1e9))
            if not force and drawn_version == version:
                continue
            if not force and now - drawn_at < self._plot_period(plot.size.width):
                continue
            pane.update_plot(view)
            self._plot_drawn[pane.id or ""] = (version, now)

    def _draw_header(self) -> None:
        header = self.query_one("#header", Readout)
        width = header.size.width or self.size.width
        if len(self.streams) == 1:
            header.set_lines([self._header_line(width, self.stream)])
            return
        # One line per board; the one the panes show is marked.
        shown = self.stream
        header.set_lines([[("▸ " if stream is shown else "  ", "phase"),
                           *self._header_line(width - 2, stream)] for stream in self.streams])

    def _update_header(self) -> None:
        """After a key that changes what the header says: it is one line, draw it now."""
        if len(self.screen_stack) == 1 and self.is_running:
            self._draw_header()

    def _plot_period(self, width: int) -> float:
        """A plot changes visibly once per time column: no need to redraw it more often."""
        span = self.window_s
        if span is None:
            first, last = self.history.first_t_mono, self.history.last_t_mono
            span = (last - first) if first is not None and last is not None else 0.0
        return max(1.0 / self.config.redraw_hz, span / max(width, 1))

    def redraw_now(self) -> None:
        """Repaint everything now (tests and snapshots call this after feeding data)."""
        self._force_redraw = True
        self._redraw()

    def _header_line(self, width: int, stream: Stream) -> Line:
        """Board · power mode · source state · REC file · elapsed · phase; the board name gives way
        first when the terminal is narrow."""
        sep = (" · ", "muted")
        pipeline = stream.pipeline
        info = pipeline.info
        board = info.model or info.host
        if not board and info.file:
            board = Path(info.file).name
        tail: Line = []
        if info.power_mode:
            tail += [sep, (printable(info.power_mode, 20), None)]
        tail += [sep, *self._source_state(stream)]
        throttled = [e for e in pipeline.active_events() if e.kind == "throttle"]
        if throttled:
            first = throttled[0]
            reason = first.detail.split(" (")[0]
            tail += [sep, ("THROTTLED ", "crit"), (printable(f"{first.unit}: {reason}", 40), "crit")]
        rec = pipeline.sink.path
        if rec:
            tail += [sep, ("● REC ", "rec"), (printable(Path(rec).name, 32), None)]
        tail += [sep, (self._elapsed(stream), None)]
        phase = pipeline.current_phase
        if phase is not None:
            tail += [sep, ("▶ ", "phase"), (printable(phase or "phase", 32), "phase")]
        line: Line = [("jroof", "title")]
        if board:
            room = width - 5 - 3 - sum(len(text) for text, _ in tail)
            line += [sep, (printable(str(board), max(8, min(40, room))), None)]
        return line + tail

    @staticmethod
    def _source_state(stream: Stream) -> Line:
        controls, ended = stream.controls, stream.ended
        if controls is None:
            if ended:
                return [("ENDED", "crit" if ended != "ended" else "paused")]
            return [("LIVE", "live")]
        label = "DEMO " if stream.source.kind == "demo" else "REPLAY "
        state: Line = [(label, "live"), (fmt_speed(controls.speed), None)]
        if controls.paused:
            state += [(" ", None), ("PAUSED", "paused")]
        if controls.following:
            state += [(" ", None), ("FOLLOW", "live")]
        if ended:
            state += [(" ", None), ("ENDED", "paused")]
        return state

    @staticmethod
    def _elapsed(stream: Stream) -> str:
        controls = stream.controls
        if controls is not None:
            return f"{fmt_duration(controls.position_s)}/{fmt_duration(controls.duration_s)}"
        history = stream.pipeline.history
        first, last = history.first_t_mono, history.last_t_mono
        return fmt_duration(None if first is None or last is None else last - first)

    # ------------------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_board":
            return len(self.streams) > 1
        if action in REPLAY_ACTIONS:
            return self.replay
        if action == "toggle_record":
            return not self.replay
        if action == "end_phase":
            return self.phase is not None
        if action in ("cycle_theme", "cycle_theme_unlisted"):
            unlisted = self.replay and self._narrow
            return unlisted == (action == "cycle_theme_unlisted")
        return True

    def _marker_times(self, stream: Stream) -> tuple[float | None, float | None]:
        """Stream times for a marker made now: the newest sample's, moved on by the time since it
        arrived when live (a paused or replayed stream stays at its sample)."""
        history = stream.pipeline.history
        t_mono, t_wall = history.last_t_mono, history.last_t_wall
        if stream.controls is not None:
            return t_wall, t_mono
        receipt = stream.last_receipt
        if t_mono is not None and receipt is not None:
            t_mono += max(0.0, self._mono() - receipt)
        return self._wall(), t_mono

    def _add_marker(self, kind: str, name: str | None, origin: str = "key") -> None:
        """A phase boundary made here (``name`` None: the pipeline names it ``phase N``): a key
        marks the board shown, a script every board (it cannot tell which it ran on)."""
        for stream in self.streams if origin != "key" else [self.stream]:
            t_wall, t_mono = self._marker_times(stream)
            _, error = stream.pipeline.mark(kind, name, origin, t_wall, t_mono)
            if error is not None:
                stream.pipeline.sink.stop()
                self.notify(f"recording stopped: {error.strerror or error}", severity="error", markup=False)
        self.phase = self.pipeline.current_phase
        self._force_redraw = True  # every plot draws the new boundary, on the timer's next tick
        self._update_header()

    def action_mark_phase(self) -> None:
        self._add_marker("phase_start", None)

    def request_marker(self, kind: str, name: str | None, origin: str = "script") -> None:
        """Thread-safe: a phase start or end from outside the UI (the ``jroof-tui mark`` listener)."""
        self.post_message(MarkerRequested(kind, name, origin))

    def end_command_phase(self) -> None:
        """``run``'s command ended: so does its phase, when it is still the one open."""
        if self._command_phase_name is not None and self.pipeline.current_phase == self._command_phase_name:
            self._add_marker("phase_end", None, COMMAND_ORIGIN)

    def request_work(self, report: WorkReport) -> None:
        """Thread-safe: work a benchmark reported (the listener's thread)."""
        self.post_message(WorkRequested(report))

    def on_work_requested(self, message: WorkRequested) -> None:
        report = message.report
        for stream in self.streams:
            t_wall, t_mono = self._marker_times(stream)
            _, error = stream.pipeline.work(report.iterations, report.flops, report.bytes, report.precision,
                                            t_wall, t_mono)
            if error is not None:
                stream.pipeline.sink.stop()
                self.notify(f"recording stopped: {error.strerror or error}", severity="error", markup=False)

    def on_marker_requested(self, message: MarkerRequested) -> None:
        if message.kind == "phase_start":
            self._add_marker("phase_start", message.name, message.origin)
        elif message.kind == "phase_end":
            self._add_marker("phase_end", None, message.origin)

    def action_name_phase(self) -> None:
        suggestion = self.pipeline.ledger.next_auto_name

        def started(name: str | None) -> None:
            if name is None:
                return
            self._add_marker("phase_start", name or suggestion)

        self.push_screen(PhaseNameScreen(suggestion), started)

    def action_end_phase(self) -> None:
        if self.phase is not None:
            self._add_marker("phase_end", None)

    def action_toggle_pause(self) -> None:
        if self.controls is not None:
            self.controls.toggle_pause()
            self._update_header()

    def action_step(self) -> None:
        if self.controls is not None:
            self.controls.step()

    def _change_speed(self, direction: int) -> None:
        if self.controls is None:
            return
        current = self.controls.speed
        if direction > 0:
            options = [s for s in SPEEDS if s > current + 1e-9]
            target = options[0] if options else SPEEDS[-1]
        else:
            options = [s for s in SPEEDS if s < current - 1e-9]
            target = options[-1] if options else SPEEDS[0]
        self.controls.set_speed(target)
        self._update_header()

    def action_speed_up(self) -> None:
        self._change_speed(+1)

    def action_speed_down(self) -> None:
        self._change_speed(-1)

    def request_seek(self, seconds: float, *, relative: bool = True) -> None:
        """Seek the replay; its seek event, when it comes, clears history (see the module doc)."""
        if self.controls is not None:
            self.controls.seek(float(seconds), relative=relative)

    def request_seek_to(self, where: str) -> None:
        if self.controls is not None:
            self.controls.seek_to(where)

    def action_seek(self, seconds: float) -> None:
        self.request_seek(seconds)

    def action_seek_to(self, where: str) -> None:
        self.request_seek_to(where)

    def action_follow(self) -> None:
        """Follow mode on: tail the file, jump to its end and play new lines as they come
        (FOLLOW in the header once caught up). Pressed again: stop following, stay where it is."""
        controls = self.controls
        if controls is None:
            return
        if controls.follow_enabled:
            controls.set_follow(False)
        else:
            controls.set_follow(True)
            self.request_seek_to("end")
            controls.resume()
        self._update_header()

    def action_toggle_record(self) -> None:
        if self.sink.path is not None:
            path = self.sink.path
            self.sink.stop()
            self.notify(f"recording saved: {path}", markup=False)
        else:
            path = auto_record_path(self.config)
            try:
                self.start_recording(open_recording(path, self.source, self.config))
            except OSError as exc:
                self.sink.stop()
                self.notify(f"cannot record to {path}: {exc.strerror or exc}", severity="error", markup=False)
                return
            self.notify(f"recording to {path}", markup=False)
        self._update_header()

    def start_recording(self, recorder: Recorder) -> None:
        """Record from now on; a phase already open is written as a start (origin ``resume``) at
        this moment, so the recording has the phase it is in. Raises OSError."""
        self.sink.start(recorder)
        resume = self.pipeline.resume_marker(*self._marker_times(self.stream))
        if resume is not None:
            self.sink.write(resume, from_stream=False)

    def action_cycle_theme(self) -> None:
        names = self._theme_cycle
        index = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(index + 1) % len(names)]

    def action_cycle_theme_unlisted(self) -> None:
        self.action_cycle_theme()

    def action_cycle_precision(self) -> None:
        available = precisions_of(self.pipeline.board)
        if not available:
            return
        current = roof_state(self.pipeline.board, None, self.precision).precision
        index = available.index(current) if current in available else -1
        self.precision = available[(index + 1) % len(available)]

    def watch_precision(self) -> None:
        self.redraw_now()

    def action_zoom(self) -> None:
        current = self.window_s
        if current is None:
            self.window_s = ZOOMS[0]
        else:
            self.window_s = [z for z in ZOOMS if z is None or z > current + 1e-9][0]

    def watch_window_s(self) -> None:
        self.redraw_now()

    def action_focus_pane(self) -> None:
        """Cycle: each pane full-screen in turn, then back to all panes."""
        order = list(PANE_IDS)
        if self.focused_pane is None:
            self.focused_pane = order[0]
        else:
            index = order.index(self.focused_pane) + 1
            self.focused_pane = order[index] if index < len(order) else None

    def watch_focused_pane(self, focus: str | None) -> None:
        main = self.screen_stack[0]
        main.set_class(focus is not None, "-focus")
        for pane in self.panes:
            pane.set_class(pane.id == focus, "-focused")
        for column in main.query(".column"):
            column.set_class(focus is not None and bool(column.query(f"#{focus}")), "-has-focus")
        self._force_redraw = True
        self.call_after_refresh(self._redraw)

    def action_help(self) -> None:
        keymap = self.config.keymap
        rows = []
        listed: set[str] = set()
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            if binding.id in listed:
                continue
            listed.add(binding.id or "")
            action = binding.action.split("(")[0]
            if action in REPLAY_ACTIONS:
                when = "replay"
            elif action == "toggle_record":
                when = "live"
            else:
                when = ""
            keys = keymap.get(binding.id or "") or binding.key_display or binding.key
            rows.append((keys, binding.tooltip or binding.description, binding.id or "", when))
        self.push_screen(HelpScreen(rows, show_ids=self.size.width >= HELP_IDS_MIN_COLUMNS),
                         lambda _: self.redraw_now())

    async def action_quit(self) -> None:
        for stream in self.streams:
            stream.source.stop()
            stream.pipeline.finish()  # open detector events close and are recorded before the file is
        self.shutdown_source()
        self.exit(0)

    def shutdown_source(self) -> None:
        """Stop every source, close every recording and the metrics server; idempotent."""
        for stream in self.streams:
            stream.source.stop()
            stream.pipeline.sink.stop()
        exporter, self._exporter = self._exporter, None
        if exporter is not None:
            exporter.close()

    def on_unmount(self) -> None:
        self.shutdown_source()


def _shown(widget: Widget) -> bool:
    """True when the widget and all its ancestors are displayed."""
    node: Any = widget
    while node is not None and isinstance(node, Widget):
        if not node.display:
            return False
        node = node.parent
    return True


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
                print(f"jroof-tui: error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
                for opened in recorders:
                    if opened is not None:
                        opened.close()
                for each in sources:
                    each.stop()
                return 2
    recorder = recorders[0]
    app = JroofApp(source, config, recorder=recorder, notices=notices,
                   more=list(zip(more, recorders[1:], strict=True)), command_phase=command_phase)
    from jtop_roof.runtime.control import start_listener

    listener = start_listener(lambda kind, name: app.request_marker(kind, name), app.request_work)
    watch = TerminalWatch(app)
    watch.start()
    child = None
    if child_argv:
        import subprocess

        try:
            # Its output would tear the screen: it goes to a log beside the recording, or nowhere.
            log = (open(_child_log_path(recorder, child_argv), "wb") if recorder is not None
                   else subprocess.DEVNULL)
            child = subprocess.Popen(list(child_argv), stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        except OSError as exc:
            print(f"jroof-tui: error: cannot run {child_argv[0]}: {exc.strerror or exc}", file=sys.stderr)
            source.stop()
            if recorder is not None:
                recorder.close()
            return 2

        def quit_when_done() -> None:
            assert child is not None
            child.wait()
            loop = app.loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(app.end_command_phase)
                loop.call_soon_threadsafe(app.exit, 0)

        threading.Thread(target=quit_when_done, name="jroof-run-wait", daemon=True).start()
    try:
        app.run()
    finally:
        app.shutdown_source()
        watch.finished.set()
        if listener is not None:
            listener.close()
        if child is not None and child.poll() is None:
            child.terminate()
            child.wait()
    if child is not None and child.returncode:
        return child.returncode if child.returncode > 0 else 128 - child.returncode
    return app.return_code or 0


def _child_log_path(recorder: Recorder, argv: Sequence[str]) -> str:
    """Where ``jroof-tui run`` keeps the workload's output: ``run.jsonl.trtexec.log`` for trtexec
    (read back by ``report`` and replay), else ``run.jsonl.out``."""
    return recorder.path + (KEPT_SUFFIX if is_trtexec(argv) else ".out")

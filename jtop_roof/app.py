"""The monitor: a Textual app fed by one source in one worker thread.

Data flow: ``Source.records()`` runs in a thread worker, which writes each record to the recording
(if any) and posts it to the app; the app's handler ingests it into ``History`` in O(1). A timer
at ``redraw_hz`` repaints what changed and is visible: readouts when there is a new sample, each
plot at most once per time-column it can show. Nothing but the handlers touches history or widgets.

Seeks: a replay answers each seek with a ``seek`` event, on which history is cleared and refilled
from the file. Recordings never hold seek events (they describe the viewer, not the board), and the
replay source turns one read back from an older recording into a note.

Quitting, SIGHUP (the SSH session dropped) and SIGTERM all stop the source and close the recording,
so what was recorded stays on disk.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult, InvalidThemeError
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import get_current_worker

from jtop_roof.config import Config
from jtop_roof.history import History
from jtop_roof.messages import (
    MarkerRequested,
    RecordingFailed,
    RecordReceived,
    SourceDescribed,
    SourceEnded,
)
from jtop_roof.metrics import fmt_duration, fmt_speed, printable, trip_points
from jtop_roof.model import Event, Marker, Record, Sample, auto_phase_name
from jtop_roof.sources.base import Source
from jtop_roof.themes import (
    BUILTIN_THEME_NAMES,
    ThemeError,
    builtin_theme_specs,
    load_theme_dir,
    theme_variable_defaults,
    to_textual_theme,
    user_theme_dir,
)
from jtop_roof.timeline import parse_tz
from jtop_roof.widgets import (
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
    View,
)
from jtop_roof.widgets.readout import Line

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

__all__ = ["JroofApp", "RecordingSink", "run_app"]


class RecordingSink:
    """The recording the worker and the UI both write to; swapped and closed under a lock.

    With ``forward_only`` (replays), samples are only written when their stream time moves
    forward, so seeking back in a replay that is being recorded does not duplicate samples.
    Seek events are never written: they describe the viewer, not the board."""

    def __init__(self, recorder: Any = None, *, forward_only: bool = False) -> None:
        self._lock = threading.Lock()
        self._recorder = recorder
        self._forward_only = forward_only
        self._last_mono: float | None = None

    @property
    def path(self) -> str | None:
        with self._lock:
            return None if self._recorder is None else self._recorder.path

    def start(self, recorder: Any) -> None:
        with self._lock:
            previous, self._recorder = self._recorder, recorder
            self._last_mono = None
        if previous is not None:
            previous.close()

    def stop(self) -> None:
        with self._lock:
            recorder, self._recorder = self._recorder, None
        if recorder is not None:
            recorder.close()

    def write(self, record: Record) -> None:
        """Raises OSError when the file cannot be written (the caller stops recording)."""
        with self._lock:
            if self._recorder is None:
                return
            if isinstance(record, Event) and record.kind == "seek":
                return
            if self._forward_only and isinstance(record, Sample) and record.t_mono is not None:
                if self._last_mono is not None and record.t_mono <= self._last_mono:
                    return
                self._last_mono = record.t_mono
            self._recorder.write(record)


#: Footer groups: "+- speed" and "←→ seek" take less room at 80 columns than one item per key.
SPEED_KEYS = Binding.Group("speed", compact=True)
SEEK_KEYS = Binding.Group("seek", compact=True)


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
        Binding("f", "focus_pane", "focus", tooltip="One pane full-screen, each in turn", id="focus"),
        Binding("question_mark", "help", "help", key_display="?", tooltip="This list", id="help"),
        Binding("q", "quit", "quit", tooltip="Quit (the recording is kept)", id="quit"),
    ]

    def __init__(
        self,
        source: Source,
        config: Config,
        *,
        recorder: Any = None,
        notices: Sequence[str] = (),
        user_themes: Path | None = None,
        mono: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        """``recorder``: an open ``Recorder`` (from ``--record``); ``notices``: lines for the user
        (e.g. why this source was chosen), shown once and kept in Events; ``user_themes``: folder
        of user theme files (default: the config dir's ``themes/``); ``mono``/``wall``: clocks,
        injectable for tests."""
        super().__init__()
        self.source = source
        self.config = config
        self.animation_level = "none"
        # The demo is a looping replay: it gets the same transport keys and axis.
        self.replay = source.kind in ("replay", "demo")
        self.sink = RecordingSink(recorder, forward_only=self.replay)
        self.history = History.for_duration(config.history_s, config.interval_ms / 1000.0)
        self._mono = mono
        self._wall = wall
        self._tz = parse_tz(config.tz)
        self._describe: dict[str, Any] = {"source": source.kind}
        self._trips: dict[str, float] = {}
        self._notes: list[str] = []
        self._notices = [printable(str(text)) for text in notices]
        self._window_s: float | None = config.window_s
        self._focus: str | None = None
        self._narrow = False  # below WIDE_MIN_COLUMNS: the footer drops its least needed keys
        self._phases_started = 0
        self._session_markers: list[Marker] = []  # replay only: put back after a seek
        self._pending_markers: list[Marker] = []
        self._last_receipt: float | None = None
        self._ended: str | None = None
        self._drawn_version = -1
        self._plot_drawn: dict[str, tuple[int, float]] = {}
        self._force_redraw = True
        self._theme_failures: list[tuple[str, str]] = []
        self._theme_cycle: list[str] = []
        self._panes: list[Pane] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self._register_themes(user_theme_dir() if user_themes is None else user_themes)
        self._apply_theme(config.theme)

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
        self._pump()

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

    @work(thread=True, exit_on_error=False, group="source", name="source")
    def _pump(self) -> None:
        """Run the blocking source; write and forward each record (never touches widgets)."""
        worker = get_current_worker()
        try:
            info = self.source.describe()
        except Exception as exc:  # noqa: BLE001 - a description is optional
            info = {"source": self.source.kind, "hints": [f"source description failed: {exc}"]}
        self.post_message(SourceDescribed(info))
        try:
            for record in self.source.records():
                if worker.is_cancelled:
                    break
                try:
                    self.sink.write(record)
                except OSError as exc:
                    self.sink.stop()
                    self.post_message(RecordingFailed(exc.strerror or str(exc)))
                self.post_message(RecordReceived(record))
        except Exception as exc:  # noqa: BLE001 - shown to the user; the app keeps its last data
            self.post_message(SourceEnded(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(SourceEnded(None))

    def on_source_described(self, message: SourceDescribed) -> None:
        self._describe = dict(message.info)
        self._trips = trip_points(self._describe.get("thermal_trips"))
        interval_ms = self._describe.get("interval_ms")
        if (isinstance(interval_ms, (int, float)) and not isinstance(interval_ms, bool) and interval_ms > 0
                and self.history.version == 0 and interval_ms / 1000.0 != self.history.interval_s):
            # Size history for the stream's own interval (a replayed 100 ms log, say), not the config's.
            self.history = History.for_duration(self.config.history_s, interval_ms / 1000.0)
        hints = self._describe.get("hints") or []
        if isinstance(hints, str):
            hints = [hints]
        # A replayed recording's hints are about the board it was made on, not this machine.
        prefix = "recorded: " if self.source.kind == "replay" else ""
        for hint in hints:
            text = prefix + printable(str(hint))
            self._notes.append(text)
            self.notify(text, title="note", markup=False, timeout=10)
        self._force_redraw = True

    def on_record_received(self, message: RecordReceived) -> None:
        record = message.record
        phase_before = self.history.current_phase
        if isinstance(record, Sample):
            if not record.is_sample:
                return
            self.history.append(record)
            self._last_receipt = self._mono()
            self._flush_pending_markers()
        elif isinstance(record, Marker):
            self.history.add_marker(record)
        elif isinstance(record, Event):
            self._add_event(record)
        if self.history.current_phase != phase_before:
            self.refresh_bindings()

    def _add_event(self, event: Event) -> None:
        if event.kind == "seek":
            # The replay jumped: the backfill that follows refills history from the file.
            self.history.clear()
            self._pending_markers = sorted(self._session_markers, key=lambda m: m.t_mono or 0.0)
        self.history.add_event(event)

    def _flush_pending_markers(self) -> None:
        """After a seek, put this session's own markers back as the replay passes them."""
        last = self.history.last_t_mono
        while self._pending_markers and last is not None and (self._pending_markers[0].t_mono or 0.0) <= last:
            self.history.add_marker(self._pending_markers.pop(0))

    def on_source_ended(self, message: SourceEnded) -> None:
        self._ended = message.error or "ended"
        if message.error:
            self.notify(message.error, title="source failed", severity="error", markup=False, timeout=15)
        self._force_redraw = True

    def on_recording_failed(self, message: RecordingFailed) -> None:
        self.notify(f"recording stopped: {message.error}", severity="error", markup=False, timeout=15)
        self._force_redraw = True

    # ------------------------------------------------------------------------------ drawing

    def _view(self) -> View:
        max_clocks = self._describe.get("max_clocks")
        return View(
            history=self.history,
            thresholds=self.config.thresholds,
            tz=self._tz,
            window_s=self._window_s,
            wall_axis=self.replay,
            trips=self._trips,
            max_clocks=max_clocks if isinstance(max_clocks, dict) else {},
            notes=self._notes,
        )

    def _redraw(self) -> None:
        """Repaint what changed and is visible (timer callback, also forced on layout changes)."""
        if len(self.screen_stack) > 1 or not self.is_running:
            return
        force, self._force_redraw = self._force_redraw, False
        view = self._view()
        self._draw_header()
        version = self.history.version
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
            drawn_version, drawn_at = self._plot_drawn.get(pane.id or "", (-1, -1e9))
            if not force and drawn_version == version:
                continue
            if not force and now - drawn_at < self._plot_period(plot.size.width):
                continue
            pane.update_plot(view)
            self._plot_drawn[pane.id or ""] = (version, now)

    def _draw_header(self) -> None:
        header = self.query_one("#header", Readout)
        header.set_lines([self._header_line(header.size.width or self.size.width)])

    def _update_header(self) -> None:
        """After a key that changes what the header says: it is one line, draw it now."""
        if len(self.screen_stack) == 1 and self.is_running:
            self._draw_header()

    def _plot_period(self, width: int) -> float:
        """A plot changes visibly once per time column: no need to redraw it more often."""
        span = self._window_s
        if span is None:
            first, last = self.history.first_t_mono, self.history.last_t_mono
            span = (last - first) if first is not None and last is not None else 0.0
        return max(1.0 / self.config.redraw_hz, span / max(width, 1))

    def redraw_now(self) -> None:
        """Repaint everything now (tests and snapshots call this after feeding data)."""
        self._force_redraw = True
        self._redraw()

    def _header_line(self, width: int) -> Line:
        """Board · power mode · source state · REC file · elapsed · phase; the board name gives way
        first when the terminal is narrow."""
        sep = (" · ", "muted")
        info = self._describe
        board = info.get("model") or info.get("host")
        if not board and info.get("file"):
            board = Path(str(info["file"])).name
        tail: Line = []
        if info.get("power_mode"):
            tail += [sep, (printable(str(info["power_mode"]), 20), None)]
        tail += [sep, *self._source_state()]
        rec = self.sink.path
        if rec:
            tail += [sep, ("● REC ", "rec"), (printable(Path(rec).name, 32), None)]
        tail += [sep, (self._elapsed(), None)]
        phase = self.history.current_phase
        if phase is not None:
            tail += [sep, ("▶ ", "phase"), (printable(phase or "phase", 32), "phase")]
        line: Line = [("jroof", "title")]
        if board:
            room = width - 5 - 3 - sum(len(text) for text, _ in tail)
            line += [sep, (printable(str(board), max(8, min(40, room))), None)]
        return line + tail

    def _source_state(self) -> Line:
        if self._ended and not self.replay:
            return [("ENDED", "crit" if self._ended != "ended" else "paused")]
        if not self.replay:
            return [("LIVE", "live")]
        speed = getattr(self.source, "speed", 1.0)
        label = "DEMO " if self.source.kind == "demo" else "REPLAY "
        state: Line = [(label, "live"), (fmt_speed(speed), None)]
        if getattr(self.source, "paused", False):
            state += [(" ", None), ("PAUSED", "paused")]
        if getattr(self.source, "following", False):
            state += [(" ", None), ("FOLLOW", "live")]
        if self._ended:
            state += [(" ", None), ("ENDED", "paused")]
        return state

    def _elapsed(self) -> str:
        if self.replay and hasattr(self.source, "position_s"):
            return f"{fmt_duration(self.source.position_s)}/{fmt_duration(self.source.duration_s)}"
        first, last = self.history.first_t_mono, self.history.last_t_mono
        return fmt_duration(None if first is None or last is None else last - first)

    # ------------------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in REPLAY_ACTIONS:
            return self.replay
        if action == "toggle_record":
            return not self.replay
        if action == "end_phase":
            return self.history.current_phase is not None
        if action in ("cycle_theme", "cycle_theme_unlisted"):
            unlisted = self.replay and self._narrow
            return unlisted == (action == "cycle_theme_unlisted")
        return True

    def _next_phase_name(self) -> str:
        return auto_phase_name(self._phases_started + 1)

    def _marker_times(self) -> tuple[float | None, float | None]:
        """Stream times for a marker made now: the newest sample's, moved on by the time since it
        arrived when live (a paused or replayed stream stays at its sample)."""
        t_mono, t_wall = self.history.last_t_mono, self.history.last_t_wall
        if self.replay:
            return t_wall, t_mono
        if t_mono is not None and self._last_receipt is not None:
            t_mono += max(0.0, self._mono() - self._last_receipt)
        return self._wall(), t_mono

    def _add_marker(self, kind: str, name: str | None, origin: str = "key") -> None:
        t_wall, t_mono = self._marker_times()
        marker = Marker(kind, name, t_wall, t_mono, origin)
        try:
            self.sink.write(marker)
        except OSError as exc:
            self.sink.stop()
            self.notify(f"recording stopped: {exc.strerror or exc}", severity="error", markup=False)
        self.history.add_marker(marker)
        if self.replay and marker.t_mono is not None:
            self._session_markers.append(marker)
        self.refresh_bindings()
        self._force_redraw = True  # every plot draws the new boundary, on the timer's next tick
        self._update_header()

    def action_mark_phase(self) -> None:
        self._start_phase(self._next_phase_name())

    def _start_phase(self, name: str, origin: str = "key") -> None:
        self._phases_started += 1
        self._add_marker("phase_start", name, origin)

    def request_marker(self, kind: str, name: str | None, origin: str = "script") -> None:
        """Thread-safe: a phase start or end from outside the UI (the ``jroof-tui mark`` listener)."""
        self.post_message(MarkerRequested(kind, name, origin))

    def on_marker_requested(self, message: MarkerRequested) -> None:
        if message.kind == "phase_start":
            self._start_phase(message.name or self._next_phase_name(), message.origin)
        elif message.kind == "phase_end":
            self._add_marker("phase_end", None, message.origin)

    def action_name_phase(self) -> None:
        suggestion = self._next_phase_name()

        def started(name: str | None) -> None:
            if name is None:
                return
            self._start_phase(name or suggestion)

        self.push_screen(PhaseNameScreen(suggestion), started)

    def action_end_phase(self) -> None:
        if self.history.current_phase is not None:
            self._add_marker("phase_end", None)

    def action_toggle_pause(self) -> None:
        self.source.toggle_pause()
        self._update_header()

    def action_step(self) -> None:
        self.source.step()

    def _change_speed(self, direction: int) -> None:
        current = getattr(self.source, "speed", 1.0)
        if direction > 0:
            options = [s for s in SPEEDS if s > current + 1e-9]
            target = options[0] if options else SPEEDS[-1]
        else:
            options = [s for s in SPEEDS if s < current - 1e-9]
            target = options[-1] if options else SPEEDS[0]
        self.source.set_speed(target)
        self._update_header()

    def action_speed_up(self) -> None:
        self._change_speed(+1)

    def action_speed_down(self) -> None:
        self._change_speed(-1)

    def request_seek(self, seconds: float, *, relative: bool = True) -> None:
        """Seek the replay; its seek event, when it comes, clears history (see the module doc)."""
        self.source.seek(float(seconds), relative=relative)

    def request_seek_to(self, where: str) -> None:
        self.source.seek_to(where)

    def action_seek(self, seconds: float) -> None:
        self.request_seek(seconds)

    def action_seek_to(self, where: str) -> None:
        self.request_seek_to(where)

    def action_follow(self) -> None:
        """Follow mode on: tail the file, jump to its end and play new lines as they come
        (FOLLOW in the header once caught up). Pressed again: stop following, stay where it is."""
        if getattr(self.source, "follow_enabled", False):
            self.source.set_follow(False)
        else:
            self.source.set_follow(True)
            self.request_seek_to("end")
            self.source.resume()
        self._update_header()

    def action_toggle_record(self) -> None:
        if self.sink.path is not None:
            path = self.sink.path
            self.sink.stop()
            self.notify(f"recording saved: {path}", markup=False)
        else:
            from jtop_roof.session import auto_record_path, open_recording

            path = auto_record_path(self.config)
            try:
                self.start_recording(open_recording(path, self.source, self.config))
            except OSError as exc:
                self.sink.stop()
                self.notify(f"cannot record to {path}: {exc.strerror or exc}", severity="error", markup=False)
                return
            self.notify(f"recording to {path}", markup=False)
        self._update_header()

    def start_recording(self, recorder: Any) -> None:
        """Record from now on; a phase already open is written as a start (origin ``resume``) at
        this moment, so the recording has the phase it is in. Raises OSError."""
        self.sink.start(recorder)
        phase = self.history.current_phase
        if phase is not None:
            t_wall, t_mono = self._marker_times()
            self.sink.write(Marker("phase_start", phase or None, t_wall, t_mono, "resume"))

    def action_cycle_theme(self) -> None:
        names = self._theme_cycle
        index = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(index + 1) % len(names)]

    def action_cycle_theme_unlisted(self) -> None:
        self.action_cycle_theme()

    def action_zoom(self) -> None:
        current = self._window_s
        if current is None:
            self._window_s = ZOOMS[0]
        else:
            larger = [z for z in ZOOMS if z is None or z > current + 1e-9]
            self._window_s = larger[0]
        self.redraw_now()

    def action_focus_pane(self) -> None:
        """Cycle: each pane full-screen in turn, then back to all panes."""
        order = list(PANE_IDS)
        if self._focus is None:
            self._focus = order[0]
        else:
            index = order.index(self._focus) + 1
            self._focus = order[index] if index < len(order) else None
        main = self.screen_stack[0]
        main.set_class(self._focus is not None, "-focus")
        for pane in self.panes:
            pane.set_class(pane.id == self._focus, "-focused")
        for column in main.query(".column"):
            column.set_class(self._focus is not None and bool(column.query(f"#{self._focus}")), "-has-focus")
        self._force_redraw = True
        self.call_after_refresh(self._redraw)

    @property
    def focused_pane(self) -> str | None:
        return self._focus

    @property
    def window_s(self) -> float | None:
        return self._window_s

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
        self.shutdown_source()
        self.exit(0)

    def shutdown_source(self) -> None:
        """Stop the source and close the recording; idempotent."""
        self.source.stop()
        self.sink.stop()

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


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


class TerminalWatch:
    """Leaves cleanly when the terminal goes away (SSH drop, closed window) or on SIGHUP/SIGTERM.

    A hung-up terminal fails every write, which stops Textual's output thread; the event loop can
    then block for good on its full output queue, and a SIGHUP may never arrive at all (it goes to
    the session leader). So a small thread watches both the signals and ``isatty`` of the terminal,
    and on either: stops the source, closes the recording (fsync), asks the app to exit, and ends
    the process itself if the app cannot (the recording is already safe by then).
    """

    POLL_S = 2.0
    GRACE_S = 3.0

    def __init__(self, app: JroofApp, fds: tuple[int, ...] = (0, 2)) -> None:
        self._app = app
        # Only descriptors that are terminals now (stderr may be redirected to a file).
        self._fds = [fd for fd in fds if _isatty(fd)]
        self._gone = threading.Event()
        self.finished = threading.Event()
        self.reason: str | None = None
        self._thread = threading.Thread(target=self._watch, name="jroof-terminal-watch", daemon=True)

    def start(self) -> None:
        for signum in (signal.SIGHUP, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        self._thread.start()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        # Only an Event.set here: the main thread may be interrupted while holding any other lock.
        self.reason = signal.Signals(signum).name
        self._gone.set()

    def _watch(self) -> None:
        while not self._gone.wait(self.POLL_S):
            if self.finished.is_set():
                return
            if not all(_isatty(fd) for fd in self._fds):
                self.reason = "terminal gone"
                break
        if self.finished.is_set():
            return
        self._app.shutdown_source()
        loop = self._app.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._app.exit, 0)
        if not self.finished.wait(self.GRACE_S):
            os._exit(0)


def run_app(
    source: Source, config: Config, *, record_path: str | None = None, notices: Sequence[str] = ()
) -> int:
    """Run the monitor on a terminal; returns the exit status. The recording (``record_path``) is
    opened before the screen starts so that an unwritable path is a plain one-line error."""
    recorder = None
    if record_path is not None:
        from jtop_roof.session import open_recording

        try:
            recorder = open_recording(record_path, source, config)
        except OSError as exc:
            print(f"jroof-tui: error: cannot write {record_path}: {exc.strerror or exc}", file=sys.stderr)
            source.stop()
            return 2
    app = JroofApp(source, config, recorder=recorder, notices=notices)
    from jtop_roof.control import start_listener

    listener = start_listener(lambda kind, name: app.request_marker(kind, name))
    watch = TerminalWatch(app)
    watch.start()
    try:
        app.run()
    finally:
        app.shutdown_source()
        watch.finished.set()
        if listener is not None:
            listener.close()
    return app.return_code or 0

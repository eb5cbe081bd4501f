"""The header: one line per board saying what is shown and in what state, as styled text.

Plain functions of the boards' data; the app puts the lines into its header readout.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jtop_roof.model.metrics import fmt_duration, fmt_speed, printable
from jtop_roof.tui.streams import Stream
from jtop_roof.tui.widgets.readout import Line

SEPARATOR = (" · ", "muted")


def header_lines(width: int, streams: Sequence[Stream], shown: Stream) -> list[Line]:
    """One line for one board; with several, one each, the one the panes show marked."""
    if len(streams) == 1:
        return [header_line(width, shown)]
    return [[("▸ " if stream is shown else "  ", "phase"), *header_line(width - 2, stream)]
            for stream in streams]


def header_line(width: int, stream: Stream) -> Line:
    """Board · power mode · source state · REC file · elapsed · phase; the board name gives way
    first when the terminal is narrow."""
    pipeline = stream.pipeline
    info = pipeline.info
    board = info.model or info.host
    if not board and info.file:
        board = Path(info.file).name
    tail: Line = []
    if info.power_mode:
        tail += [SEPARATOR, (printable(info.power_mode, 20), None)]
    tail += [SEPARATOR, *source_state(stream)]
    throttled = [e for e in pipeline.active_events() if e.kind == "throttle"]
    if throttled:
        first = throttled[0]
        reason = first.detail.split(" (")[0]
        tail += [SEPARATOR, ("THROTTLED ", "crit"), (printable(f"{first.unit}: {reason}", 40), "crit")]
    rec = pipeline.sink.path
    if rec:
        tail += [SEPARATOR, ("● REC ", "rec"), (printable(Path(rec).name, 32), None)]
    tail += [SEPARATOR, (elapsed(stream), None)]
    phase = pipeline.current_phase
    if phase is not None:
        tail += [SEPARATOR, ("▶ ", "phase"), (printable(phase or "phase", 32), "phase")]
    line: Line = [("jroof", "title")]
    if board:
        room = width - 5 - 3 - sum(len(text) for text, _ in tail)
        line += [SEPARATOR, (printable(str(board), max(8, min(40, room))), None)]
    return line + tail


def source_state(stream: Stream) -> Line:
    """LIVE or ENDED; for a replay or the demo its speed and PAUSED, FOLLOW, ENDED."""
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


def elapsed(stream: Stream) -> str:
    """A replay's position of its duration; a live stream's time since its first sample."""
    controls = stream.controls
    if controls is not None:
        return f"{fmt_duration(controls.position_s)}/{fmt_duration(controls.duration_s)}"
    history = stream.pipeline.history
    first, last = history.first_t_mono, history.last_t_mono
    return fmt_duration(None if first is None or last is None else last - first)

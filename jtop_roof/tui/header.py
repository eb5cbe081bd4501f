"""The header: one line per board saying what is shown and in what state, as styled text.

Plain functions of the boards' data; the app puts the lines into its header readout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jtop_roof.analysis.assumptions import SAID, Sourced, sourced_items
from jtop_roof.model.event_kinds import event_kind
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
    """Board · power mode · source state · THROTTLED reason · REC file · elapsed · phase. When the
    terminal is narrow, the least needed give way first (``_fit``): the board name, then words
    are shortened and long names cut; the throttle's reason and the time stay readable."""
    pipeline = stream.pipeline
    info = pipeline.info
    board = info.model or info.host
    if not board and info.file:
        board = Path(info.file).name
    resolved = pipeline.board
    mode = resolved.mode_name or info.power_mode
    said = {item.what: item for item in sourced_items(pipeline)}
    mode_item = said.pop("power_mode")
    said.pop("throttle_detection")  # its own words below: said when not full, whatever its source
    flagged = [(e, kind) for e in pipeline.active_events() if (kind := event_kind(e.kind)).header]
    rec = pipeline.sink.path
    phase = pipeline.current_phase
    for level in range(len(_SHORTER)):
        short = _SHORTER[level]
        line: Line = [("jroof", "title")]
        if board and not short.no_board:
            line += [SEPARATOR, (printable(str(board), 40), None)]
        for item in said.values():  # the device, the energy, ...: where inferred or assumed
            if item.source in SAID:
                line += [SEPARATOR, *_sourced(item, short)]
        if mode:
            line += [SEPARATOR, (printable(mode, 20), None)]
            if mode_item.source in SAID:
                line += [(f" {_word(mode_item.source, short)}", "muted")]
        if resolved.throttle_detection != "full":
            detection = "throttle detection" if not short.words else "detection"
            line += [SEPARATOR, (f"{detection} {resolved.throttle_detection}", "muted")]
        line += [SEPARATOR, *source_state(stream)]
        if flagged:  # the first event in progress whose kind flags the header (THROTTLED)
            first, kind = flagged[0]
            reason, tone = first.detail.split(" (")[0], "crit" if kind.severity == "crit" else "warn"
            line += [SEPARATOR, (f"{kind.header} ", tone), (printable(f"{first.unit}: {reason}", 40), tone)]
        if rec:
            line += [SEPARATOR, ("● REC ", "rec"), (printable(Path(rec).name, short.name_cells), None)]
        line += [SEPARATOR, (elapsed(stream), None)]
        if phase is not None:
            line += [SEPARATOR, ("▶ ", "phase"), (printable(phase or "phase", short.name_cells), "phase")]
        if sum(len(text) for text, _ in line) <= width:
            break
    return line


def _sourced(item: Sourced, short: _Shorter) -> Line:
    """``energy tegrastats inferred``: the item's value (log text, shown literally) and its source."""
    name = item.what.replace("_", " ")
    value = printable(item.value or "unknown", short.name_cells)
    return [(value if item.what == "device" else f"{name} {value}", None),
            (f" {_word(item.source, short)}", "muted")]


def _word(source: str | None, short: _Shorter) -> str:
    return (source or "") if not short.words else f"{(source or '')[:3]}."


@dataclass(frozen=True, slots=True)
class _Shorter:
    """How much a header line gives way to fit: no board name, short words, names cut to so many
    cells."""

    no_board: bool = False
    words: bool = False
    name_cells: int = 32


_SHORTER = (_Shorter(), _Shorter(no_board=True), _Shorter(no_board=True, words=True),
            *(_Shorter(no_board=True, words=True, name_cells=cells) for cells in (12, 8)))


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
        at_least = "≥" if controls.indexing else ""  # the length known so far, not the file's
        return f"{fmt_duration(controls.position_s)}/{at_least}{fmt_duration(controls.duration_s)}"
    history = stream.pipeline.history
    first, last = history.first_t_mono, history.last_t_mono
    return fmt_duration(None if first is None or last is None else last - first)

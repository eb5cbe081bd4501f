"""The monitor's keys: its bindings (ids are the config keymap's names), the steps the speed and
zoom keys go through, and the rows of the help screen."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from textual.binding import Binding

#: Replay speeds the +/- keys step through.
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: Zoom windows the z key cycles through (None = all of history).
ZOOMS: tuple[float | None, ...] = (30.0, 120.0, 600.0, 3600.0, None)
#: Actions only a replay has (the others say so in help); ``toggle_record`` is live only.
REPLAY_ACTIONS = ("toggle_pause", "step", "speed_up", "speed_down", "seek", "seek_to", "follow")
#: Help shows binding ids (the keymap's names) from this width on; narrower, it says where they are.
HELP_IDS_MIN_COLUMNS = 100

#: Footer groups: "+- speed" and "←→ seek" take less room at 80 columns than one item per key.
SPEED_KEYS = Binding.Group("speed", compact=True)
SEEK_KEYS = Binding.Group("seek", compact=True)

MONITOR_BINDINGS: tuple[Binding, ...] = (
    Binding("m", "mark_phase", "mark", tooltip="Start a new phase (auto-named)", id="mark-phase"),
    Binding("M", "name_phase", "name", tooltip="Start a new phase and name it", id="name-phase"),
    # The same key kept out of the footer: a narrow replay footer needs the room for seek.
    Binding("M", "name_phase_unlisted", "name", show=False, tooltip="Start a new phase and name it",
            id="name-phase"),
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
    Binding("p", "cycle_precision", "precision", tooltip="Roofline precision: FP32, FP16, INT8...",
            id="precision"),
    Binding("j", "toggle_energy_roof", "J/op", show=False,
            tooltip="Roofline: time or energy (J/op per mode)", id="energy-roof"),
    Binding("b", "next_board", "board", show=False, tooltip="Next board (several --ssh)", id="board"),
    Binding("f", "focus_pane", "focus", tooltip="One pane full-screen, each in turn", id="focus"),
    Binding("question_mark", "help", "help", key_display="?", tooltip="This list", id="help"),
    Binding("q", "quit", "quit", tooltip="Quit (the recording is kept)", id="quit"),
)

_T = TypeVar("_T")


def next_in_cycle(options: Sequence[_T], current: _T | None) -> _T:
    """The option after ``current``, round; the first when ``current`` is not one of them."""
    index = options.index(current) if current in options else -1
    return options[(index + 1) % len(options)]


def action_enabled(action: str, *, boards: int, replay: bool, phase_open: bool, narrow: bool) -> bool:
    """Whether a key's action applies now (Textual hides and refuses the others): the board key
    with several boards, the transport keys in a replay, the record key live, the end key in a
    phase. The theme and name keys are listed in the footer unless a narrow replay footer needs
    the room (they still work, and help lists them)."""
    if action == "next_board":
        return boards > 1
    if action in REPLAY_ACTIONS:
        return replay
    if action == "toggle_record":
        return not replay
    if action == "end_phase":
        return phase_open
    if action in ("cycle_theme", "cycle_theme_unlisted", "name_phase", "name_phase_unlisted"):
        return (replay and narrow) == action.endswith("_unlisted")
    return True


def next_focus(order: Sequence[str], current: str | None) -> str | None:
    """Each pane full-screen in turn, then back to all panes (None)."""
    if current is None:
        return order[0]
    index = order.index(current) + 1
    return order[index] if index < len(order) else None


def next_speed(current: float, direction: int) -> float:
    """The speed step above (``direction`` > 0) or below ``current``, held at the ends."""
    if direction > 0:
        faster = [s for s in SPEEDS if s > current + 1e-9]
        return faster[0] if faster else SPEEDS[-1]
    slower = [s for s in SPEEDS if s < current - 1e-9]
    return slower[-1] if slower else SPEEDS[0]


def next_zoom(current: float | None) -> float | None:
    """The next wider window after ``current``; after all of history, the narrowest again."""
    if current is None:
        return ZOOMS[0]
    return [z for z in ZOOMS if z is None or z > current + 1e-9][0]


def help_rows(bindings: Sequence[Binding], keymap: Mapping[str, str]) -> list[tuple[str, str, str, str]]:
    """One row per binding id: (keys as mapped, what it does, its id, when it applies)."""
    rows = []
    listed: set[str] = set()
    for binding in bindings:
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
    return rows

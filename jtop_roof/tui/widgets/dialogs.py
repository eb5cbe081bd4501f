"""Modal screens: the phase-name prompt and the key help."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

#: The longest phase name accepted (it is drawn on plots and in the header).
PHASE_NAME_CHARS = 80


class PhaseNameScreen(ModalScreen["str | None"]):
    """Ask for a phase name; Enter starts the phase (an empty name gets the automatic one),
    Escape cancels (dismisses with None)."""

    BINDINGS = [Binding("escape", "cancel", "cancel", id="cancel-name")]

    def __init__(self, suggestion: str) -> None:
        super().__init__()
        self._suggestion = suggestion

    def compose(self) -> ComposeResult:
        with Vertical(id="name-dialog"):
            yield Label(Content("Name of the new phase (Enter: start it, Escape: cancel)"))
            yield Input(placeholder=self._suggestion, max_length=PHASE_NAME_CHARS, id="phase-name")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """Every key with what it does, as currently mapped (config keymap applied)."""

    BINDINGS = [
        Binding("escape", "close", "close", id="close-help"),
        Binding("question_mark", "close", "close", show=False),
        Binding("q", "close", "close", show=False),
    ]

    def __init__(self, rows: list[tuple[str, str, str, str]], *, show_ids: bool = True) -> None:
        """``rows``: (keys, description, binding id, when it applies) per binding. ``show_ids``:
        a column of binding ids (the keymap's names); a narrow terminal leaves it out and says so."""
        super().__init__()
        self._rows = rows
        self._show_ids = show_ids

    def compose(self) -> ComposeResult:
        key_width = max((len(row[0]) for row in self._rows), default=4)
        text_width = max((len(row[1]) for row in self._rows), default=4)
        lines = ["Keys (Escape or ? closes this; ↑/↓ scroll)", ""]
        for keys, description, binding_id, when in self._rows:
            # "(replay)" before the description, where a narrow screen cannot cut it off.
            mode = f"({when})" if when else ""
            line = f"  {keys.ljust(key_width)}  {mode.ljust(8)} {description.ljust(text_width)}"
            lines.append((line + f"  {binding_id}" if self._show_ids else line).rstrip())
        lines.append("")
        if not self._show_ids:
            lines.append("Binding ids: widen the terminal or see config.example.yaml.")
        lines.append("Remap a key in the config file: keymap: {binding-id: keys}.")
        with VerticalScroll(id="help-dialog"):
            yield Static(Content("\n".join(lines)), id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)

"""Readout: lines of plain text chunks, each styled by a component class.

Every chunk is appended as literal text (never parsed as markup), so names from logs, recordings
or the user are shown exactly as they are. Colours come from the component classes, which the app's
TCSS maps to theme variables.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

#: One chunk: (text, component class suffix or None). Suffixes: see COMPONENT_CLASSES.
Chunk = tuple[str, "str | None"]
Line = list[Chunk]


class Readout(Widget):
    """Styled lines of numbers; only repaints when the lines change.

    | Class | Description |
    | :- | :- |
    | `readout--label` | Names of values (rails, zones, fields). |
    | `readout--muted` | Secondary text, units, placeholders. |
    | `readout--ok` / `--warn` / `--crit` | Levels of a reading. |
    | `readout--off` | A sensor or core that is off. |
    | `readout--fixed` | A fixed placeholder reading (PMIC@100C). |
    | `readout--bar` / `--bar-empty` | Filled and empty parts of a bar. |
    | `readout--rec` / `--live` / `--paused` | Header badges. |
    | `readout--plot-1` ... `--plot-6` | Legend swatches, in plot line colours. |
    | `readout--phase` | Phase names, in the phase-marker colour. |
    """

    COMPONENT_CLASSES = {
        "readout--label", "readout--muted", "readout--ok", "readout--warn", "readout--crit",
        "readout--off", "readout--fixed", "readout--bar", "readout--bar-empty", "readout--rec",
        "readout--live", "readout--paused", "readout--phase", "readout--title",
        "readout--plot-1", "readout--plot-2", "readout--plot-3", "readout--plot-4", "readout--plot-5",
        "readout--plot-6",
    }

    DEFAULT_CSS = """
    Readout {
        height: auto;
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[Line] = []

    @property
    def lines(self) -> list[Line]:
        return self._lines

    @property
    def plain(self) -> str:
        """The text as shown, without styles (for tests and the tmux end-to-end check)."""
        return "\n".join("".join(text for text, _ in line) for line in self._lines)

    def set_lines(self, lines: list[Line]) -> None:
        if lines == self._lines:
            return
        relayout = len(lines) != len(self._lines)
        self._lines = lines
        self.refresh(layout=relayout)

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="crop", end="")
        for index, line in enumerate(self._lines):
            if index:
                text.append("\n")
            for chunk, style in line:
                text.append(chunk, self.get_component_rich_style(f"readout--{style}") if style else None)
        return text

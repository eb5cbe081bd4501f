"""The engines pane: the board's other engines (NVENC, DLA, VIC...) on or off, with their load or
clock where the board reports one."""

from __future__ import annotations

from jtop_roof.model.metrics import load_level, printable
from jtop_roof.tui.panes.base import LABEL_WIDTH, NAME_CHARS, Pane, flow
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line


class EnginesPane(Pane):
    SHORT = "Engines"
    HAS_PLOT = False

    def _items(self, view: View) -> list[Line]:
        sample = view.sample
        if sample is None:
            return []
        items: list[Line] = []
        for name, engine in sample.engines.items():
            label = (f"{printable(name, NAME_CHARS)} ", "label")
            if engine.off:
                items.append([label, ("off", "off")])
            elif engine.load_pct is not None:
                clock = "" if engine.mhz is None else f"@{engine.mhz}"
                level = load_level(engine.load_pct, view.thresholds)
                items.append([label, (f"{engine.load_pct:.0f}%", level),
                              (clock, None)])
            elif engine.mhz is not None:
                items.append([label, (f"{engine.mhz} MHz", None)])
            else:
                items.append([label, ("on", None)])
        return items

    def lines(self, view: View, width: int) -> list[Line]:
        items = self._items(view)
        if not items:
            return [[("no engines reported", "muted")]]
        return flow(items, width)

    def compact_lines(self, view: View, width: int) -> list[Line]:
        head: Line = [("ENG".ljust(LABEL_WIDTH), "title")]
        items = self._items(view)
        if not items:
            return [head + [("no engines reported", "muted")]]
        return flow(items, width, indent=head)[:1]

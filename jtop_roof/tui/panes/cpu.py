"""The CPU pane: a load bar and clock per core (in two columns when many cores fit), or in
compact mode the average load and every core's on one or two lines."""

from __future__ import annotations

import math

from jtop_roof.model.metrics import bar_parts, load_level
from jtop_roof.tui.panes.base import LABEL_WIDTH, Pane, flow, pct_chunk, window_label
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.timeplot import Axis, Series


class CpuPane(Pane):
    SHORT = "CPU"
    UNIT = "cpu"

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        #: Whether the last lines put " MHz" after each core's clock (``title`` says it if not).
        self._unit_per_core = True

    def title(self, view: View) -> str:
        cpus = view.sample.cpus if view.sample else None
        if not cpus:
            return "CPU"
        off = sum(1 for c in cpus if c is None)
        # Where a core's line has no room for its unit (two columns of cores), the title says it.
        unit = "" if self._unit_per_core else " · load %, MHz"
        return f"CPU · {len(cpus)} cores" + (f" · {off} off" if off else "") + unit

    def lines(self, view: View, width: int) -> list[Line]:
        cpus = view.sample.cpus if view.sample else None
        if not cpus:
            return [[("no CPU data", "muted")]]
        count = len(cpus)
        columns = 2 if count > 8 and width >= 2 * 16 + 2 else 1
        col_width = (width - 2 * (columns - 1)) // columns
        rows = math.ceil(count / columns)
        with_unit = self._unit_per_core = col_width >= 30
        tail = 10 + (4 if with_unit else 0)
        bar_width = max(3, col_width - 3 - tail)
        out: list[Line] = [[] for _ in range(rows)]
        for index, core in enumerate(cpus):
            line = out[index % rows]
            if line:
                line.append(("  ", None))
            label = f"{index:>2} "
            if core is None:
                line.extend([(label, "label"), ("off".ljust(col_width - 3), "off")])
                continue
            filled, empty = bar_parts(core.load_pct, bar_width)
            pct, level = pct_chunk(core.load_pct, view)
            mhz = "    —" if core.mhz is None else f"{core.mhz:>5}"
            line.extend([(label, "label"), (filled, level if level != "ok" else "bar"),
                         (empty, "bar-empty"), (f" {pct}", level), (mhz, None)])
            if with_unit:
                line.append((" MHz", "muted"))
        return out

    def compact_lines(self, view: View, width: int) -> list[Line]:
        cpus = view.sample.cpus if view.sample else None
        head: Line = [("CPU".ljust(LABEL_WIDTH), "title")]
        if not cpus:
            return [head + [("no CPU data", "muted")]]
        online = [c for c in cpus if c is not None]
        loads = [c.load_pct for c in online if c.load_pct is not None]
        avg = sum(loads) / len(loads) if loads else None
        filled, empty = bar_parts(avg, 8)
        pct, level = pct_chunk(avg, view)
        line = head + [(filled, "bar"), (empty, "bar-empty"), (f" {pct}", level)]
        clocks = [c.mhz for c in online if c.mhz is not None]
        if clocks:
            line += [(" @", "muted"), (f"{max(clocks)}", None), (" MHz ", "muted")]
        items: list[Line] = []
        for core in cpus:
            if core is None:
                items.append([("off", "off")])
            else:
                value = "—" if core.load_pct is None else f"{core.load_pct:.0f}"
                items.append([(value.rjust(3), load_level(core.load_pct, view.thresholds))])
        return flow(items, width, gap=" ", indent=line, hang=LABEL_WIDTH)[:2]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return [Series("cpu_avg_load", "plot-1")], Axis(0, 100), Axis()

    def subtitle(self, view: View) -> str | None:
        return f"avg load % · {window_label(view.window_s)}"

"""The GPU pane: load and clock (each GPC's clock where there are several), plotted together."""

from __future__ import annotations

from jtop_roof.model.registry import metric
from jtop_roof.tui.panes.base import (
    LABEL_WIDTH,
    Pane,
    clock_chunks,
    history_sparkline,
    legend,
    line_width,
    pct_chunk,
)
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.timeplot import Axis, Series


class GpuPane(Pane):
    UNIT = "gpu"
    SHORT = "GPU"

    def lines(self, view: View, width: int) -> list[Line]:
        gpu = view.sample.gpu if view.sample else None
        if gpu is None:
            return [[("GPU not reported", "muted")]]
        pct, level = pct_chunk(gpu.load_pct, view)
        line: Line = [("load ", "label"), (pct, level)]
        line += clock_chunks(("   clock ", "label"), gpu.mhz, gpu.load_pct, view.max_clocks.get("gpu_mhz"))
        out = [line]
        if len(gpu.gpc_mhz) > 1:
            clocks = " · ".join(str(m) for m in gpu.gpc_mhz)
            out.append([("GPC  ", "label"), (clocks, None), (" MHz", "muted")])
        out.append(legend(metric("gpu_load").legend(),
                           None if gpu.mhz is None else metric("gpu_mhz").legend() + " (right)"))
        return out

    def compact_lines(self, view: View, width: int) -> list[Line]:
        gpu = view.sample.gpu if view.sample else None
        head: Line = [("GPU".ljust(LABEL_WIDTH), "title")]
        if gpu is None:
            return [head + [("not reported", "muted")]]
        pct, level = pct_chunk(gpu.load_pct, view)
        line = head + [(pct, level), *clock_chunks((" @", "muted"), gpu.mhz, gpu.load_pct)]
        line.append(("  ", None))
        room = min(30, width - line_width(line))
        line.append((history_sparkline(view.history, "gpu_load", room, view.window_s, 0, 100), "plot-1"))
        return [line]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        max_mhz = view.max_clocks.get("gpu_mhz")
        top = float(max_mhz) if isinstance(max_mhz, (int, float)) else None
        return ([Series("gpu_load", "plot-1"), Series("gpu_mhz", "plot-2", right=True)],
                Axis(0, 100), Axis(0, top, min_high=100))

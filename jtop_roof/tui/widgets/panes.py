"""The monitor's panes. Each turns the newest sample and the history into readout lines (wide or
one-line compact) and, where it has one, a time plot.

Text from the board (rail, zone and engine names) and from users (phase names) goes through
``printable`` and into plain chunks: it is never parsed as markup.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from jtop_roof.analysis.history import History
from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.analysis.verdict import Placement
from jtop_roof.model.metrics import (
    bar_parts,
    fmt_energy,
    fmt_memory,
    fmt_mw,
    fmt_power,
    fmt_si,
    load_level,
    printable,
    sparkline,
)
from jtop_roof.model.records import Sample
from jtop_roof.model.registry import metric
from jtop_roof.model.thermal import classify_temp
from jtop_roof.roofline.ceilings import Ceilings
from jtop_roof.tui.themes import PLOT_COLOURS
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Chunk, Line, Readout
from jtop_roof.tui.widgets.roofplot import RoofPlot, RoofPoint
from jtop_roof.tui.widgets.timeplot import Axis, Series, TimePlot

#: Width of a compact line's label column ("CPU ", "TEMP ").
LABEL_WIDTH = 5
NAME_CHARS = 16  # rail/zone/engine names are cut to this many characters


def _rail_j(span: SpanStats | None, rail: str) -> float:
    """A rail's joules in a span (0 before any step was integrated)."""
    return 0.0 if span is None else span.rails_j.get(rail, 0.0)


def window_label(window_s: float | None) -> str:
    if window_s is None:
        return "all"
    if window_s < 120:
        return f"{window_s:g} s"
    if window_s < 3600:
        return f"{window_s / 60:g} min"
    return f"{window_s / 3600:g} h"


def _flow(items: list[Line], width: int, gap: str = "  ", indent: Line | None = None,
          hang: int | None = None) -> list[Line]:
    """Lay chunks of items out left to right after ``indent``, wrapping at ``width``; wrapped lines
    start at column ``hang`` (default: under the first item)."""
    current: Line = list(indent or [])
    start = sum(len(t) for t, _ in current)
    hang = start if hang is None else hang
    lines: list[Line] = []
    used = start
    for item in items:
        size = sum(len(t) for t, _ in item)
        if used > start and used + len(gap) + size > width:
            lines.append(current)
            current = [(" " * hang, None)] if hang else []
            used = start = hang
        if used > start:
            current.append((gap, None))
            used += len(gap)
        current.extend(item)
        used += size
    if used > start or not lines:
        lines.append(current)
    return lines


def _legend(left: str, right: str | None) -> Line:
    """Swatches in the plot's line colours: the first series on the left axis, the second right
    (left out when the board does not report it)."""
    line: Line = [("━ ", "plot-1"), (left, "muted")]
    if right is not None:
        line += [("  ", None), ("━ ", "plot-2"), (right, "muted")]
    return line


def _spark(history: History, key: str, width: int, window_s: float | None, low: float | None = None,
           high: float | None = None, min_span: float = 0.0) -> str:
    t_to = history.last_t_mono
    if t_to is None or width <= 0:
        return ""
    t_from = None if window_s is None else t_to - window_s
    _, values = history.series(key, t_from, t_to, width)
    return sparkline(values.tolist(), width, low, high, min_span)


def _power_span(mw: float) -> float:
    """Smallest range a power sparkline spans: a steady draw reads as steady, and noise of a few
    percent stays small."""
    return max(1000.0, 0.2 * abs(mw))


def _clock_chunks(at: Chunk, mhz: int | float | None, load_pct: float | None, max_mhz: Any = None) -> Line:
    """``@ 1020/1300 MHz`` after the load (``at`` is the lead-in); a load without a clock is what
    tegrastats prints when it does not run as root, so say so rather than show nothing."""
    if mhz is None:
        return [("  clock ", "label"), ("— needs root" if load_pct is not None else "—", "muted")]
    top = f"/{max_mhz:g}" if isinstance(max_mhz, (int, float)) and not isinstance(max_mhz, bool) else ""
    return [at, (f"{mhz}{top}", None), (" MHz", "muted")]


def _width(line: Line) -> int:
    return sum(len(text) for text, _ in line)


class Pane(Vertical):
    """A bordered pane with a readout and (optionally) a plot below it."""

    HAS_PLOT = True
    SHORT = ""
    #: The unit whose clock events (throttle, mode cap) the plot shows as bands.
    UNIT: str | None = None

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, classes="pane")
        self._titles: tuple[str, str | None] | None = None

    def compose(self) -> ComposeResult:
        yield Readout(classes="readout")
        if self.HAS_PLOT:
            yield TimePlot(classes="plot")

    @property
    def readout(self) -> Readout:
        return self.query_one(Readout)

    @property
    def plot(self) -> TimePlot | None:
        return self.query_one(TimePlot) if self.HAS_PLOT else None

    @property
    def compact(self) -> bool:
        return self.screen.has_class("-compact") and not self.has_class("-focused")

    def update_readout(self, view: View) -> None:
        width = self.readout.size.width or max(20, self.size.width - 2)
        if self.compact:
            lines = self.compact_lines(view, width)
        else:
            lines = self.lines(view, width)
        self.readout.set_lines(lines)
        if self.plot is not None:
            self.plot.set_class(not self.has_plot_data(view), "-empty")
        # Setting a border title repaints the whole pane: only when the text changes.
        title, subtitle = self.title(view), self.subtitle(view)
        if (title, subtitle) != self._titles:
            self._titles = (title, subtitle)
            self.border_title = Content(title)
            self.border_subtitle = None if subtitle is None else Content(subtitle)

    def title(self, view: View) -> str:
        return self.SHORT

    def subtitle(self, view: View) -> str | None:
        return window_label(view.window_s) if self.HAS_PLOT else None

    def lines(self, view: View, width: int) -> list[Line]:
        raise NotImplementedError

    def compact_lines(self, view: View, width: int) -> list[Line]:
        return self.lines(view, width)[:1]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return [], Axis(), Axis()

    def has_plot_data(self, view: View) -> bool:
        """False hides the plot: a host without a GPU, EMC, rails or sensors gets its text only,
        not an empty frame."""
        series, _, _ = self.series(view)
        return any(view.history.has(line.key) for line in series)

    def update_plot(self, view: View) -> None:
        plot = self.plot
        if plot is None:
            return
        lines, left, right = self.series(view)
        bands = [(e.start_mono, e.t_mono) for e in view.clock_events
                 if e.unit == self.UNIT and e.start_mono is not None and e.t_mono is not None]
        plot.draw(view.history, lines, window_s=view.window_s, tz=view.tz, wall_axis=view.wall_axis,
                  left=left, right=right, bands=bands)


def _pct_chunk(pct: float | None, view: View) -> tuple[str, str]:
    if pct is None:
        return "  —", "muted"
    return f"{pct:3.0f}%", load_level(pct, view.thresholds)


class CpuPane(Pane):
    SHORT = "CPU"
    UNIT = "cpu"

    def title(self, view: View) -> str:
        cpus = view.sample.cpus if view.sample else None
        if not cpus:
            return "CPU"
        off = sum(1 for c in cpus if c is None)
        return f"CPU · {len(cpus)} cores" + (f" · {off} off" if off else "")

    def lines(self, view: View, width: int) -> list[Line]:
        cpus = view.sample.cpus if view.sample else None
        if not cpus:
            return [[("no CPU data", "muted")]]
        count = len(cpus)
        columns = 2 if count > 8 and width >= 2 * 16 + 2 else 1
        col_width = (width - 2 * (columns - 1)) // columns
        rows = math.ceil(count / columns)
        with_unit = col_width >= 30
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
            pct, level = _pct_chunk(core.load_pct, view)
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
        pct, level = _pct_chunk(avg, view)
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
        return _flow(items, width, gap=" ", indent=line, hang=LABEL_WIDTH)[:2]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return [Series("cpu_avg_load", "plot-1")], Axis(0, 100), Axis()

    def subtitle(self, view: View) -> str | None:
        return f"avg load % · {window_label(view.window_s)}"


class GpuPane(Pane):
    UNIT = "gpu"
    SHORT = "GPU"

    def lines(self, view: View, width: int) -> list[Line]:
        gpu = view.sample.gpu if view.sample else None
        if gpu is None:
            return [[("GPU not reported", "muted")]]
        pct, level = _pct_chunk(gpu.load_pct, view)
        line: Line = [("load ", "label"), (pct, level)]
        line += _clock_chunks(("   clock ", "label"), gpu.mhz, gpu.load_pct, view.max_clocks.get("gpu_mhz"))
        out = [line]
        if len(gpu.gpc_mhz) > 1:
            clocks = " · ".join(str(m) for m in gpu.gpc_mhz)
            out.append([("GPC  ", "label"), (clocks, None), (" MHz", "muted")])
        out.append(_legend(metric("gpu_load").legend(),
                           None if gpu.mhz is None else metric("gpu_mhz").legend() + " (right)"))
        return out

    def compact_lines(self, view: View, width: int) -> list[Line]:
        gpu = view.sample.gpu if view.sample else None
        head: Line = [("GPU".ljust(LABEL_WIDTH), "title")]
        if gpu is None:
            return [head + [("not reported", "muted")]]
        pct, level = _pct_chunk(gpu.load_pct, view)
        line = head + [(pct, level), *_clock_chunks((" @", "muted"), gpu.mhz, gpu.load_pct)]
        line.append(("  ", None))
        spark = _spark(view.history, "gpu_load", min(30, width - _width(line)), view.window_s, 0, 100)
        line.append((spark, "plot-1"))
        return [line]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        max_mhz = view.max_clocks.get("gpu_mhz")
        top = float(max_mhz) if isinstance(max_mhz, (int, float)) else None
        return ([Series("gpu_load", "plot-1"), Series("gpu_mhz", "plot-2", right=True)],
                Axis(0, 100), Axis(0, top, min_high=100))


class MemoryPane(Pane):
    UNIT = "emc"
    SHORT = "Memory"

    def lines(self, view: View, width: int) -> list[Line]:
        sample = view.sample
        if sample is None:
            return [[("no data", "muted")]]
        out: list[Line] = []
        emc = sample.emc
        if emc is None:
            out.append([("EMC ", "label"), ("not reported", "muted")])
        else:
            pct, level = _pct_chunk(emc.load_pct, view)
            clock = _clock_chunks((" @ ", "muted"), emc.mhz, emc.load_pct)
            out.append([("EMC ", "label"), (pct, level), *clock])
        out.append(self._memory_line(sample))
        if sample.iram is not None:
            out.append([("IRAM ", "label"), (f"{sample.iram.used_kb:g}/{sample.iram.total_kb:g}", None),
                        (" kB", "muted")])
        if emc is not None:
            out.append(_legend(metric("emc_load").legend(),
                               None if emc.mhz is None else metric("emc_mhz").legend() + " (right)"))
        return out

    @staticmethod
    def _memory_line(sample: Sample) -> Line:
        line: Line = [("RAM ", "label")]
        if sample.ram is None:
            line.append(("—", "muted"))
        else:
            line.append((fmt_memory(sample.ram.used_mb, sample.ram.total_mb), None))
        # Separating spaces go in runs of their own, never at the start of a styled word: the
        # SVG snapshot (and what reads it) drops them there, and "GB" ran into "SWAP".
        line += [("   ", None), ("SWAP ", "label")]
        if sample.swap is None:
            line.append(("—", "muted"))
        else:
            line.append((fmt_memory(sample.swap.used_mb, sample.swap.total_mb), None))
        return line

    def compact_lines(self, view: View, width: int) -> list[Line]:
        sample = view.sample
        head: Line = [("MEM".ljust(LABEL_WIDTH), "title")]
        if sample is None:
            return [head + [("no data", "muted")]]
        line = list(head)
        emc = sample.emc
        if emc is not None:
            pct, level = _pct_chunk(emc.load_pct, view)
            line += [("EMC ", "label"), (pct, level), *_clock_chunks((" @", "muted"), emc.mhz, emc.load_pct),
                     ("  ", None)]
        return [line + self._memory_line(sample)]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return ([Series("emc_load", "plot-1"), Series("emc_mhz", "plot-2", right=True)],
                Axis(0, 100), Axis(0, None, min_high=100))


class PowerPane(Pane):
    SHORT = "Power"

    def _plotted_rails(self, view: View) -> list[str]:
        """Rails drawn besides the total: not the rail that is the total, at most five."""
        history = view.history
        return [r for r in history.rails if r != history.power_source][: len(PLOT_COLOURS) - 1]

    def lines(self, view: View, width: int) -> list[Line]:
        sample = view.sample
        if sample is None or not sample.rails:
            return [[("no power rails reported", "muted")]]
        plotted = self._plotted_rails(view)
        total = sample.power_total
        names = [printable(n, NAME_CHARS) for n in sample.rails]
        pad = max(len(n) for n in names + ["total"]) + 1
        out: list[Line] = []
        for raw_name, name in zip(sample.rails, names, strict=True):
            rail = sample.rails[raw_name]
            colour = f"plot-{plotted.index(raw_name) + 2}" if raw_name in plotted else "label"
            line: Line = [(name.ljust(pad), colour), (fmt_mw(rail.now_mw).rjust(9), None)]
            if total is not None and total.source == raw_name:
                line += [("  ", None), ("total", "plot-1")]
            out.append(line)
        if total is not None and total.source not in sample.rails:
            out.append([("total".ljust(pad), "plot-1"), (fmt_mw(total.mw).rjust(9), None)])
            out += self._source_lines(total.source, width)
        whole, phase = view.whole, view.phase
        if total is not None:
            whole_j = None if whole is None else whole.energy_j
            phase_j = None if phase is None else phase.energy_j
            out.append([("energy ", "label"), (fmt_energy(whole_j), None), ("  ", None), ("phase ", "label"),
                        (fmt_energy(phase_j), None if phase_j is not None else "muted")])
            return out
        # Nothing measures the machine's input (a dGPU host): energy per rail, never a made-up total.
        out.append([("total input power: not measured here", "muted")])
        for raw_name, name in zip(sample.rails, names, strict=True):
            rail_j = None if phase is None else phase.rails_j.get(raw_name)
            out.append([("energy ", "label"), (name.ljust(pad), None),
                        (fmt_energy(_rail_j(whole, raw_name)), None), ("  ", None), ("phase ", "label"),
                        (fmt_energy(rail_j), None if rail_j is not None else "muted")])
        return out

    @staticmethod
    def _source_lines(source: str, width: int) -> list[Line]:
        """``= sum(A+B+C)``, wrapped after a ``+`` so every rail name stays whole."""
        parts = printable(source).split("+")
        items: list[Line] = [[(part + ("+" if i < len(parts) - 1 else ""), "muted")]
                             for i, part in enumerate(parts)]
        return _flow(items, width, gap="", indent=[("  = ", "muted")])

    def compact_lines(self, view: View, width: int) -> list[Line]:
        sample = view.sample
        head: Line = [("PWR".ljust(LABEL_WIDTH), "title")]
        total = sample.power_total if sample else None
        if sample is None or not sample.rails:
            return [head + [("no power rails reported", "muted")]]
        whole, phase = view.whole, view.phase
        if total is None:
            rails = [[(printable(name, NAME_CHARS) + " ", "label"), (fmt_mw(rail.now_mw), None),
                      ("  ", None), ("energy ", "label"), (fmt_energy(_rail_j(whole, name)), None)]
                     for name, rail in sample.rails.items()]
            return _flow([head + [("no total input power", "muted")], *rails], width)[:3]
        line = head + [(fmt_power(total.mw), None), (" ", None), (printable(total.source, 20), "muted"),
                       ("  ", None), ("energy ", "label"),
                       (fmt_energy(None if whole is None else whole.energy_j), None)]
        if phase is not None and phase.energy_j is not None:
            line += [("  ", None), ("phase ", "label"), (fmt_energy(phase.energy_j), None)]
        room = min(20, width - _width(line) - 2)
        if room >= 5:
            spark = _spark(view.history, "power_mw", room, view.window_s, 0, None, _power_span(total.mw))
            line += [("  ", None), (spark, "plot-1")]
        rails = [[(printable(name, NAME_CHARS) + " ", "label"), (fmt_mw(rail.now_mw), None)]
                 for name, rail in sample.rails.items()]
        return [line, *_flow(rails, width, indent=[(" " * LABEL_WIDTH, None)])[:2]]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        lines = [Series("power_mw", "plot-1", scale=1e-3)]
        for index, rail in enumerate(self._plotted_rails(view)):
            lines.append(Series(f"rail:{rail}", PLOT_COLOURS[index + 1], scale=1e-3))
        return lines, Axis(0, None), Axis()

    def subtitle(self, view: View) -> str | None:
        source = view.history.power_source
        label = f"W · total = {printable(source, 28)}" if source else "W · rails, no total"
        return f"{label} · {window_label(view.window_s)}"


class TrendsPane(Pane):
    """GPU load and total power over time: the plot a small terminal shows under its one-line
    summaries (the full panes, with their own plots, are behind the focus key)."""

    SHORT = "Trends"

    def lines(self, view: View, width: int) -> list[Line]:
        power = "power W (right)" if view.history.power_source is not None else None
        return [_legend("GPU " + metric("gpu_load").legend(), power)]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        return ([Series("gpu_load", "plot-1"), Series("power_mw", "plot-2", scale=1e-3, right=True)],
                Axis(0, 100), Axis(0, None))


class TempPane(Pane):
    SHORT = "Temperatures"

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._classified: tuple[View | None, list[Any]] = (None, [])

    def _readings(self, view: View) -> list[Any]:
        """Every zone classified, once per view (readout, title and plot all ask)."""
        cached_view, readings = self._classified
        if cached_view is view:
            return readings
        sample = view.sample
        readings = [] if sample is None else [
            classify_temp(zone, value, view.trips, view.thresholds) for zone, value in sample.temps_c.items()]
        self._classified = (view, readings)
        return readings

    def _plotted(self, view: View) -> list[str]:
        """Measured zones, junction temperature first, at most six."""
        readings = [r for r in self._readings(view) if r.state not in ("off", "fixed")]
        zones = [r.zone for r in readings]
        zones.sort(key=lambda z: z.lower() != "tj")
        return zones[: len(PLOT_COLOURS)]

    def _items(self, view: View, plotted: list[str]) -> list[Line]:
        items: list[Line] = []
        for reading in self._readings(view):
            name = printable(reading.zone, NAME_CHARS)
            colour = f"plot-{plotted.index(reading.zone) + 1}" if reading.zone in plotted else "label"
            if reading.state == "off":
                items.append([(f"{name} ", "label"), ("off", "off")])
            elif reading.state == "fixed":
                items.append([(f"{name} ", "label"), (f"{reading.value_c:g} fixed", "fixed")])
            else:
                items.append([(f"{name} ", colour), (f"{reading.value_c:.1f}", reading.state)])
        return items

    def _hottest_line(self, view: View) -> Line | None:
        measured = [r for r in self._readings(view) if r.state not in ("off", "fixed")]
        if not measured:
            return None
        with_trip = [r for r in measured if r.headroom_c is not None]
        if with_trip:
            worst = min(with_trip, key=lambda r: r.headroom_c)
            return [(f"{printable(worst.zone, NAME_CHARS)} ", "label"),
                    (f"{worst.value_c:.1f}°C", worst.state),
                    ("  ", None), ("headroom ", "label"), (f"{worst.headroom_c:.1f}", worst.state),
                    (" ", None), (f"to trip {worst.trip_c:g}°C", "muted")]
        hottest = max(measured, key=lambda r: r.value_c)
        # Spaces in runs of their own (see MemoryPane._memory_line): "°C" ran into the zone name.
        return [("max ", "label"), (f"{hottest.value_c:.1f}°C", hottest.state),
                (" ", None), (printable(hottest.zone, NAME_CHARS), "muted"), ("  ", None),
                (f"levels {view.thresholds.temp_warn_c:g}/{view.thresholds.temp_crit_c:g}°C", "muted")]

    def lines(self, view: View, width: int) -> list[Line]:
        items = self._items(view, self._plotted(view))
        if not items:
            return [[("no temperatures reported", "muted")]]
        head = self._hottest_line(view)
        return ([head] if head else []) + _flow(items, width)

    def compact_lines(self, view: View, width: int) -> list[Line]:
        items = self._items(view, [])
        head: Line = [("TEMP".ljust(LABEL_WIDTH), "title")]
        if not items:
            return [head + [("no temperatures reported", "muted")]]
        return _flow(items, width, indent=head)[:2]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        zones = self._plotted(view)
        return [Series(f"zone:{z}", PLOT_COLOURS[i]) for i, z in enumerate(zones)], Axis(), Axis()

    def subtitle(self, view: View) -> str | None:
        return f"°C · {window_label(view.window_s)}"


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
        return _flow(items, width)

    def compact_lines(self, view: View, width: int) -> list[Line]:
        head: Line = [("ENG".ljust(LABEL_WIDTH), "title")]
        items = self._items(view)
        if not items:
            return [head + [("no engines reported", "muted")]]
        return _flow(items, width, indent=head)[:1]


#: How the roofline names a precision.
PRECISION_LABELS = {"fp64": "FP64", "fp32": "FP32", "fp16_tensor": "FP16 tensor",
                    "bf16_tensor": "BF16 tensor", "int8_tensor": "INT8 tensor"}


def _rate_unit(precision: str | None) -> str:
    return "OP" if precision is not None and precision.startswith("int") else "FLOP"


class RooflinePane(Pane):
    """The roof at the current clocks against the mode's maximum, for one precision (the p key),
    with the gap in words; or why no roof is drawn (unknown device, no clocks in the samples)."""

    SHORT = "Roofline"
    HAS_PLOT = False

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._drawn: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Readout(classes="readout")
        yield RoofPlot(classes="plot roofplot")

    def title(self, view: View) -> str:
        roof = view.roof
        if roof is None or roof.precision is None:
            return "Roofline"
        return f"Roofline · {PRECISION_LABELS.get(roof.precision, roof.precision)}"

    def update_readout(self, view: View) -> None:
        super().update_readout(view)
        plot = self.query_one(RoofPlot)
        roof = view.roof
        drawable = roof is not None and (roof.current is not None or roof.maximum is not None)
        plot.set_class(not drawable or self.compact, "-empty")
        if roof is None or not drawable or self.compact:
            return
        points = _roof_points(view)
        key = (roof.precision, roof.current, roof.maximum, roof.measured, plot.size, self.app.theme, points)
        if key != self._drawn:  # clocks move in steps: the plot is drawn again only when they do
            self._drawn = key
            plot.draw(roof, points)

    def lines(self, view: View, width: int) -> list[Line]:
        roof, board = view.roof, view.board
        if roof is None or board is None or board.device is None:
            reason = "device unknown" if roof is None or roof.reason is None else roof.reason
            return [[("no roofline: ", "label"), (printable(reason), "muted")]]
        device, precision = board.device, roof.precision
        # A dGPU has no nvpmodel modes: nothing to say; a Jetson's unknown mode is said.
        mode = board.mode_name or ("mode ?" if device.power_modes else "")
        head: Line = [(printable(device.name, width - len(mode) - 3), None)]
        if mode:
            head += [(" · ", "muted"), (printable(mode), None)]
        out: list[Line] = [head]
        maximum, current = roof.maximum, roof.current
        if current is not None:
            top_gpu = "?" if maximum is None else f"{maximum.gpu_mhz:.0f}"
            top_emc = "?" if maximum is None else f"{maximum.emc_mhz:.0f}"
            out.append([("GPU ", "label"), (f"{current.gpu_mhz:.0f}/{top_gpu} MHz", None),
                        ("  ", None), ("EMC ", "label"), (f"{current.emc_mhz:.0f}/{top_emc} MHz", None)])
        shown = current or maximum
        if shown is not None and precision is not None:
            unit = _rate_unit(precision)
            items: list[Line] = [
                [("peak " if current is not None else "mode's peak ", "label"),
                 (f"{fmt_si(shown.peak_flops_per_s[precision])}{unit}/s", None)],
                [(f"{fmt_si(shown.bandwidth_bytes_per_s)}B/s", None)],
                [("ridge ", "label"), (f"{shown.ridge_flop_per_byte[precision]:.3g} {unit}/B", None)],
            ]
            out += _flow(items, width)
        if roof.reason is not None:
            out.append([(printable(roof.reason), "warn")])
        elif roof.fraction is not None:
            out.append([(_gap_text(roof.fraction, board.mode_name), "warn" if roof.fraction < 0.9 else None)])
        if roof.measured is not None and precision is not None:
            unit = _rate_unit(precision)
            out.append([("measured ", "plot-4"),
                        (f"{fmt_si(roof.measured.peak_flops_per_s[precision])}{unit}/s  "
                         f"{fmt_si(roof.measured.bandwidth_bytes_per_s)}B/s", None)])
        if view.point is not None:
            out.append(_point_line(*view.point))
        traffic = _soc_traffic(view, current)
        if traffic is not None:
            out.append([("SoC DRAM ≈ ", "label"), (f"{fmt_si(traffic)}B/s", None),
                        (" (EMC load × bandwidth: every client, a cross-check)", "muted")])
        for event in view.active_events:
            if event.kind == "throttle":  # the bright roof is the one at the throttled clock
                out.append([("THROTTLED ", "crit"), (printable(f"{event.unit}: {event.detail}"), "crit")])
        if roof.accelerators:
            busy = ", ".join(printable(name) for name in roof.accelerators)
            out.append([(f"{busy} busy: DLA/PVA work is not on the GPU roof", "muted")])
        if board.mode_note:
            out.append([(printable(board.mode_note), "muted")])
        return out

    def compact_lines(self, view: View, width: int) -> list[Line]:
        head: Line = [("ROOF".ljust(LABEL_WIDTH), "title")]
        roof, board = view.roof, view.board
        if roof is None or board is None or board.device is None or roof.precision is None:
            reason = "device unknown" if roof is None or roof.reason is None else roof.reason
            return [head + [(printable(reason, max(10, width - LABEL_WIDTH)), "muted")]]
        precision = roof.precision
        shown = roof.current or roof.maximum
        line = head + [(PRECISION_LABELS.get(precision, precision) + " ", "label")]
        if roof.current is None and shown is not None:
            line.append(("max ", "label"))
        if shown is not None:
            unit = _rate_unit(precision)
            line += [(f"{fmt_si(shown.peak_flops_per_s[precision])}{unit}/s ", None),
                     (f"{fmt_si(shown.bandwidth_bytes_per_s)}B/s", None)]
        if roof.reason is not None:
            line += [("  ", None), (printable(roof.reason, max(10, width - _width(line) - 2)), "warn")]
        elif roof.fraction is not None:
            line += [("  ", None), (f"{roof.fraction:.0%} of {board.mode_name or 'max'} roof", None)]
        return [line]


def _roof_points(view: View) -> tuple[RoofPoint, ...]:
    """The shown phase's point, where it has both FLOP/s and an intensity."""
    if view.point is None:
        return ()
    label, placement = view.point
    achieved, intensity = placement.achieved_flops_per_s, placement.intensity_flop_per_byte
    if not achieved or not intensity:
        return ()
    return (RoofPoint(intensity, achieved, printable(label, 16)),)


def _point_line(label: str, placement: Placement) -> Line:
    """``resnet50: compute-bound, 61% of the roof now (46% at max clocks)``."""
    line: Line = [(printable(label, 24) + ": ", "phase"), (placement.verdict, None)]
    if placement.efficiency_current is not None:
        line.append((f", {_pct(placement.efficiency_current)} of the roof now", None))
    if placement.efficiency_max is not None:
        line.append((f" ({_pct(placement.efficiency_max)} at max clocks)", "muted"))
    return line


def _pct(fraction: float) -> str:
    """Two significant digits below 10 % (0.41 %), whole percents above."""
    return f"{100 * fraction:.2g}%" if fraction < 0.1 else f"{fraction:.0%}"


def _soc_traffic(view: View, current: Ceilings | None) -> float | None:
    """On a Jetson, EMC load % × the bandwidth at the current EMC clock estimates all SoC DRAM
    traffic (CPU, GPU, engines): shown as a cross-check of a point, never as one."""
    sample, board = view.sample, view.board
    if sample is None or sample.emc is None or sample.emc.load_pct is None or current is None:
        return None
    if board is None or board.device is None or not board.device.power_modes:
        return None  # a dGPU's memory load is NVML's, not the SoC's
    return sample.emc.load_pct / 100 * current.bandwidth_bytes_per_s


def _gap_text(fraction: float, mode: str | None) -> str:
    """The gap between the two roofs in words."""
    whose = f"the {mode} mode's" if mode else "the maximum"
    if fraction >= 0.995:
        return f"clocks at {whose} roof"
    return f"clocks now give {fraction:.0%} of {whose} roof"


class EventsPane(Pane):
    """Stream events (gaps, restarts, seeks, source errors), phase boundaries and session notes."""

    SHORT = "Events"
    HAS_PLOT = False

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._built: tuple[Any, list[Line]] = (None, [])

    def lines(self, view: View, width: int) -> list[Line]:
        """The newest events and phase boundaries that fit, under as many whole notes as fit.
        Built again only when the log, the notes or the room changed, not on every sample."""
        rows = self.size.height or 8  # the content rows
        history = view.history
        key = (history, history.log_version, len(view.notes), history.first_t_mono, width, rows, view.tz)
        built_key, built = self._built
        if built_key == key:
            return built
        built = self._build(view, width, rows)
        self._built = (key, built)
        return built

    def _build(self, view: View, width: int, rows: int) -> list[Line]:
        history = view.history
        # Only the newest `rows` of each kind can be among the newest `rows` overall.
        newest_events = list(itertools.islice(reversed(history.events), rows))
        entries: list[tuple[float, Line]] = []
        for event in newest_events:
            if event.unit is not None:  # a detector's: shown where it started, with how long
                at = event.start_mono if event.start_mono is not None else event.t_mono
                when = self._when(event.start_wall, at, view)
                span = (event.t_mono or 0.0) - (at or 0.0)
                kind = f"{event.kind} {printable(event.unit)} {span:.0f} s "
                detail = printable(event.detail, max(10, width - 9 - len(kind)))
                level = "crit" if event.kind == "throttle" else "warn"
                entries.append((at or 0.0, [(when, "muted"), (kind, "label"), (detail, level)]))
                continue
            when = self._when(event.t_wall, event.t_mono, view)
            detail = printable(event.detail, max(10, width - 18))
            if event.kind == "gap" and event.gap_s is not None:
                detail = f"no data for {event.gap_s:.1f} s"
            style = "crit" if event.kind in ("source_error", "gap") else None
            kind = "" if detail.startswith(event.kind) else f"{event.kind} "
            entries.append((event.t_mono or 0.0, [(when, "muted"), (kind, "label"), (detail, style)]))
        for mark in history.markers[-rows:]:
            when = self._when(history.wall_at(mark.t_mono), mark.t_mono, view)
            text = "phase end" if mark.kind == "phase_end" else f"phase {printable(mark.name or '', 40)}"
            entries.append((mark.t_mono, [(when, "muted"), (text, "phase")]))
        entries.sort(key=lambda item: item[0])
        lines = [line for _, line in entries[-rows:]]
        notes: list[Line] = []
        for note in reversed(view.notes):  # whole notes only, the newest first, above the events
            wrapped = textwrap.wrap(printable(note), max(10, width - 5)) or [""]
            if len(notes) + len(wrapped) + len(lines) > rows:
                continue
            notes[:0] = [[("note " if index == 0 else "     ", "label"), (part, "muted")]
                         for index, part in enumerate(wrapped)]
        return notes + lines or [[("no events", "muted")]]

    @staticmethod
    def _when(t_wall: float | None, t_mono: float | None, view: View) -> str:
        if t_wall is not None:
            return datetime.fromtimestamp(t_wall, view.tz).strftime("%H:%M:%S ")
        if t_mono is not None and view.history.first_t_mono is not None:
            return f"+{t_mono - view.history.first_t_mono:.1f}s".rjust(8) + " "
        return "         "

    def compact_lines(self, view: View, width: int) -> list[Line]:
        return self.lines(view, width)

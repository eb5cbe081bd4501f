"""The power pane: each rail's draw, the total input power and what it is the sum of, and the
energy of the whole run and of the phase; where nothing measures the total (a dGPU host), energy
per rail instead."""

from __future__ import annotations

from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.model.metrics import fmt_energy, fmt_mw, fmt_power, printable
from jtop_roof.tui.palette import PLOT_COLOURS
from jtop_roof.tui.panes.base import (
    LABEL_WIDTH,
    NAME_CHARS,
    Pane,
    flow,
    history_sparkline,
    line_width,
    window_label,
)
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.timeplot import Axis, Series


def _rail_j(span: SpanStats | None, rail: str) -> float:
    """A rail's joules in a span (0 before any step was integrated)."""
    return 0.0 if span is None else span.rails_j.get(rail, 0.0)


def _power_span(mw: float) -> float:
    """Smallest range a power sparkline spans: a steady draw reads as steady, and noise of a few
    percent stays small."""
    return max(1000.0, 0.2 * abs(mw))


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
        return flow(items, width, gap="", indent=[("  = ", "muted")])

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
            return flow([head + [("no total input power", "muted")], *rails], width)[:3]
        line = head + [(fmt_power(total.mw), None), (" ", None), (printable(total.source, 20), "muted"),
                       ("  ", None), ("energy ", "label"),
                       (fmt_energy(None if whole is None else whole.energy_j), None)]
        if phase is not None and phase.energy_j is not None:
            line += [("  ", None), ("phase ", "label"), (fmt_energy(phase.energy_j), None)]
        room = min(20, width - line_width(line) - 2)
        if room >= 5:
            spark = history_sparkline(view.history, "power_mw", room, view.window_s, 0, None,
                                      _power_span(total.mw))
            line += [("  ", None), (spark, "plot-1")]
        rails = [[(printable(name, NAME_CHARS) + " ", "label"), (fmt_mw(rail.now_mw), None)]
                 for name, rail in sample.rails.items()]
        return [line, *flow(rails, width, indent=[(" " * LABEL_WIDTH, None)])[:2]]

    def series(self, view: View) -> tuple[list[Series], Axis, Axis]:
        lines = [Series("power_mw", "plot-1", scale=1e-3)]
        for index, rail in enumerate(self._plotted_rails(view)):
            lines.append(Series(f"rail:{rail}", PLOT_COLOURS[index + 1], scale=1e-3))
        return lines, Axis(0, None), Axis()

    def subtitle(self, view: View) -> str | None:
        source = view.history.power_source
        label = f"W · total = {printable(source, 28)}" if source else "W · rails, no total"
        return f"{label} · {window_label(view.window_s)}"

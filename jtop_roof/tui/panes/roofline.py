"""The roofline pane: the roof at the current clocks against the mode's maximum, the shown
phase's point on it, and what holds the GPU below it; or, the j key, the energy roofline: J per
operation against intensity, a line per calibrated power mode, the phase's measured J/op, and the
mode cheapest at its intensity (``roofline.energy`` answers; the pane only shows)."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.widget import Widget

from jtop_roof.analysis.verdict import Placement
from jtop_roof.model.metrics import fmt_si_unit, printable
from jtop_roof.roofline.ceilings import Ceilings
from jtop_roof.roofline.devices import rate_word
from jtop_roof.roofline.energy import EnergyRoof, joules_text
from jtop_roof.tui.panes.base import LABEL_WIDTH, Pane, flow, line_width, wrap
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets.energyplot import EnergyPlot, EnergyPoint, mode_style
from jtop_roof.tui.widgets.readout import Line
from jtop_roof.tui.widgets.roofplot import RoofPlot, RoofPoint

#: How the roofline names a precision.
PRECISION_LABELS = {"fp64": "FP64", "fp32": "FP32", "fp16_tensor": "FP16 tensor",
                    "bf16_tensor": "BF16 tensor", "int8_tensor": "INT8 tensor"}


class RooflinePane(Pane):
    """The roof at the current clocks against the mode's maximum, for one precision (the p key),
    with the gap in words; or why no roof is drawn (unknown device, no clocks in the samples)."""

    SHORT = "Roofline"
    HAS_PLOT = False

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._drawn: tuple[object, ...] | None = None
        self._drawn_energy: tuple[object, ...] | None = None
        self.roof_plot = RoofPlot(classes="plot roofplot")
        self.energy_plot = EnergyPlot(classes="plot energyplot -empty")

    def compose(self) -> ComposeResult:
        yield self.readout
        yield self.roof_plot
        yield self.energy_plot

    def title(self, view: View) -> str:
        roof = view.roof
        energy = " · energy" if view.energy is not None else ""
        if roof is None or roof.precision is None:
            return "Roofline" + energy
        return f"Roofline · {PRECISION_LABELS.get(roof.precision, roof.precision)}{energy}"

    def update_readout(self, view: View) -> None:
        super().update_readout(view)
        plot = self.roof_plot
        roof = view.roof
        energy = view.energy
        self.energy_plot.set_class(energy is None or not energy.lines or self.compact, "-empty")
        # One view's plot at a time, also where focus shows a pane's plots: the other's hidden inline
        # (over any rule), the shown one's left to the rules (compact hides both).
        _hide(self.energy_plot if energy is None else plot)
        _unhide(plot if energy is None else self.energy_plot)
        if energy is not None:
            self._drawn = None
            if energy.lines and not self.compact:
                point = _energy_point(view)
                at = None if point is None else (_step(point.intensity), _step(point.j_per_op), point.label)
                drawn = (energy.lines, energy.current_mode, self.energy_plot.cells, self.app.theme, at)
                if drawn != self._drawn_energy:  # as the time roof: again only once something moved
                    self._drawn_energy = drawn
                    self.energy_plot.draw(energy, point)
            return
        self._drawn_energy = None
        drawable = roof is not None and (roof.current is not None or roof.maximum is not None)
        plot.set_class(not drawable or self.compact, "-empty")
        if roof is None or not drawable or self.compact:
            return
        points = _roof_points(view)
        precision = roof.precision
        key = (precision, *(_drawn_roof(r, precision) for r in (roof.current, roof.maximum, roof.measured)),
               plot.cells, self.app.theme, tuple(_drawn_point(point) for point in points))
        if key != self._drawn:  # drawn again only once a roof or the point moved by a visible step
            self._drawn = key
            plot.draw(roof, points)

    def lines(self, view: View, width: int) -> list[Line]:
        """Each line wrapped to the pane, never cut: the gap's words and a throttle's reason are
        what the pane is for."""
        return [row for line in self._lines(view, width) for row in wrap(line, width)]

    def _lines(self, view: View, width: int) -> list[Line]:
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
        if view.energy is not None:
            return out + _energy_lines(view, view.energy)
        maximum, current = roof.maximum, roof.current
        if current is not None:
            top_gpu = "?" if maximum is None else f"{maximum.gpu_mhz:.0f}"
            top_emc = "?" if maximum is None else f"{maximum.emc_mhz:.0f}"
            out.append([("GPU ", "label"), (f"{current.gpu_mhz:.0f}/{top_gpu} MHz", None),
                        ("  ", None), ("EMC ", "label"), (f"{current.emc_mhz:.0f}/{top_emc} MHz", None)])
        shown = current or maximum
        if shown is not None and precision is not None:
            word = rate_word(precision)
            items: list[Line] = [
                [("peak " if current is not None else "mode's peak ", "label"),
                 (fmt_si_unit(shown.peak_flops_per_s[precision], f"{word}/s"), None)],
                [(fmt_si_unit(shown.bandwidth_bytes_per_s, "B/s"), None)],
                [("ridge ", "label"),
                 (f"{_intensity(shown.ridge_flop_per_byte[precision])} {word}/byte", None)],
            ]
            out += flow(items, width)
        if roof.reason is not None:
            out.append([(printable(roof.reason), "warn")])
        elif roof.fraction is not None:
            out.append([(_gap_text(roof.fraction, board.mode_name), "warn" if roof.fraction < 0.9 else None)])
        if roof.measured is not None and precision is not None:
            peak = fmt_si_unit(roof.measured.peak_flops_per_s[precision], f"{rate_word(precision)}/s")
            out.append([("measured ", "plot-4"),
                        (f"{peak}  {fmt_si_unit(roof.measured.bandwidth_bytes_per_s, 'B/s')}", None)])
        if view.point is not None:
            out.append(_point_line(*view.point, precision))
            if view.point[1].verdict_basis:  # what the verdict rests on, as report says it
                out.append([(printable(view.point[1].verdict_basis), "muted")])
        traffic = _soc_traffic(view, current)
        if traffic is not None:
            out.append([("SoC DRAM ≈ ", "label"), (fmt_si_unit(traffic, "B/s"), None),
                        (" (EMC load × bandwidth: all clients, a cross-check)", "muted")])
        for event in view.active_events:
            if event.kind == "throttle":  # the bright roof is the one at the throttled clock
                out.append([("THROTTLED ", "crit"), (printable(f"{event.unit}: {event.detail}"), "crit")])
        if roof.accelerators:
            busy = ", ".join(printable(name) for name in roof.accelerators)
            out.append([(f"{busy} busy: DLA/PVA work is not on the GPU roof", "muted")])
        for note in (board.mode_note, board.device_note, board.power_mode_note):  # as report says them
            if note:
                out.append([(printable(note), "muted")])
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
            peak = fmt_si_unit(shown.peak_flops_per_s[precision], f"{rate_word(precision)}/s")
            line += [(peak + "  ", None), (fmt_si_unit(shown.bandwidth_bytes_per_s, "B/s"), None)]
        if roof.reason is not None:
            line += [("  ", None), (printable(roof.reason, max(10, width - line_width(line) - 2)), "warn")]
        elif roof.fraction is not None:
            line += [("  ", None), (f"{roof.fraction:.0%} of {board.mode_name or 'max'} roof", None)]
        return [line]


#: The grid (log10 steps) on which a roof or point must move to be drawn again: a GPU clock
#: jittering by 1 MHz or a phase's running rate moves it less. What is drawn is then at most a
#: step (0.46 %) off the newest values: under a braille dot, which spans 0.0037 decades or more
#: even on a 400-column screen (the x axis spans 3 decades or more).
DRAWN_STEP_DECADES = 0.002


def _step(value: float | None) -> int | float | None:
    """``value`` on the log grid of ``DRAWN_STEP_DECADES`` (itself where it has no logarithm)."""
    if value is None or not 0 < value < math.inf:
        return value
    return round(math.log10(value) / DRAWN_STEP_DECADES)


def _drawn_roof(roof: Ceilings | None, precision: str | None) -> tuple[object, ...] | None:
    """What the plot shows of a roof: its slope's height and its flat, on the drawn grid."""
    if roof is None:
        return None
    peak = roof.peak_flops_per_s.get(precision) if precision is not None else None
    return _step(roof.bandwidth_bytes_per_s), _step(peak)


def _drawn_point(point: RoofPoint) -> tuple[object, ...]:
    return _step(point.intensity), _step(point.flops_per_s), point.label


def _roof_points(view: View) -> tuple[RoofPoint, ...]:
    """The shown phase's point, where it has both FLOP/s and an intensity."""
    if view.point is None:
        return ()
    label, placement = view.point
    achieved, intensity = placement.achieved_flops_per_s, placement.intensity_flop_per_byte
    if not achieved or not intensity:
        return ()
    return (RoofPoint(intensity, achieved, printable(label, 16)),)


def _hide(widget: Widget) -> None:
    if widget.styles.get_rule("display") != "none":
        widget.styles.display = "none"


def _unhide(widget: Widget) -> None:
    if widget.styles.has_rule("display"):
        widget.styles.clear_rule("display")


def _energy_point(view: View) -> EnergyPoint | None:
    """The shown phase on the energy roof: its measured J/op at its intensity (``Placement``)."""
    if view.point is None:
        return None
    label, placement = view.point
    if not placement.j_per_op or not placement.intensity_flop_per_byte:
        return None
    return EnergyPoint(placement.intensity_flop_per_byte, placement.j_per_op, printable(label, 16))


def _energy_lines(view: View, energy: EnergyRoof) -> list[Line]:
    """Each mode's line in words (J/op at the point's intensity, else its floor), the point, and
    the cheapest mode there; or why there is no energy roofline."""
    word = rate_word(energy.precision)
    out: list[Line] = [[("energy roofline: ", "label"),
                        (f"J/{word} = ε + ε_byte/I + π0/roof(I), per mode", "muted")]]
    if energy.reason is not None:
        return out + [[("no energy roofline: ", "label"), (printable(energy.reason), "warn")]]
    point = _energy_point(view)
    items: list[Line] = []
    for index, mode in enumerate(energy.modes):  # each name in its line's colour: the legend
        current = mode.power_mode == energy.current_mode
        name: Line = [(printable(mode.power_mode), mode_style(index) if mode.line is not None else "label")]
        name += [(" (now)", "title")] if current else []
        name.append((" ", None))
        if mode.line is None:
            items.append(name + [(printable(mode.note or "no line"), "muted")])
        elif point is not None:
            items.append(name + [(joules_text(mode.line.j_per_op(point.intensity), f"J/{word}"), None)])
        else:
            items.append(name + [(f"≥ {joules_text(mode.line.floor_j_per_op, f'J/{word}')}", None)])
    out += items
    if point is not None and view.point is not None:
        out.append([(printable(view.point[0], 24) + ": ", "phase"),
                     (f"{joules_text(point.j_per_op, f'J/{word}')} measured at "
                      f"{_intensity(point.intensity)} {word}/byte", None)])
    if view.cheapest is not None:
        out.append([(printable(view.cheapest.text), None if view.cheapest.power_mode else "muted")])
    return out


def _point_line(label: str, placement: Placement, shown: str | None) -> Line:
    """``resnet50: compute-bound at 6.36 TOP/s, 254 OP/byte, 19% of the roof now (19% at max
    clocks)``, and the roof it was judged on where that is not the one shown (the p key)."""
    word = rate_word(placement.precision)
    line: Line = [(printable(label, 24) + ": ", "phase"), (placement.verdict, None)]
    if placement.achieved_flops_per_s is not None:
        line.append((f" at {fmt_si_unit(placement.achieved_flops_per_s, word + '/s')}", None))
    if placement.intensity_flop_per_byte is not None:
        line.append((f", {_intensity(placement.intensity_flop_per_byte)} {word}/byte", None))
    if placement.efficiency_current is not None:
        line.append((f", {_pct(placement.efficiency_current)} of the roof now", None))
    if placement.efficiency_max is not None:
        line.append((f" ({_pct(placement.efficiency_max)} at max clocks)", "muted"))
    if placement.precision is not None and placement.precision != shown:
        judged = PRECISION_LABELS.get(placement.precision, placement.precision)
        line.append((f"; judged on the {judged} roof", "muted"))
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


def _intensity(value: float) -> str:
    """Operations per byte in plain digits (``2730``, ``161``, ``0.5``), never ``2.73e+03``."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"

"""``jroof-tui plot FILE --term``: the run drawn in the terminal with plotext (over SSH, no matplotlib).

Two panels over time (seconds from the first sample): power (total input and every rail, W) and
clocks (GPU, EMC, the mean of the online CPU cores, MHz); each phase's edges marked on both and its
name written over the power panel, and listed below with its span. The samples come from
``export``'s rows through ``outputs.plot``'s own route (``plotted``, ``power_series``,
``clock_series``), the phases from the one report (``phase_spans``): nothing is computed twice,
and nothing here imports matplotlib.
Long runs are reduced to each column's minimum and maximum, so a one-sample spike stays drawn.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

import numpy as np

from jtop_roof.model.errors import UserError
from jtop_roof.model.jsonsafe import shown_text
from jtop_roof.outputs.plot import PhaseSpan, clock_series, phase_spans, plotted, power_series
from jtop_roof.runtime.config import Config

#: Below this the panels have no room for their axes (plotext draws nothing useful).
MIN_WIDTH, MIN_HEIGHT = 40, 16
#: Lines under the figure: the phases' list.
FOOTER_LINES = 1
_SIZE = re.compile(r"(\d+)[xX](\d+)")


class TermPlotError(UserError):
    """A size, input or file that cannot be drawn (one line; exit 2)."""


@dataclass(frozen=True)
class TermSize:
    """The figure's size in character cells."""

    width: int
    height: int


def parse_size(text: str) -> TermSize:
    """``WxH`` (``--size 120x40``); TermPlotError when it is no size or too small to draw on."""
    found = _SIZE.fullmatch(text.strip())
    if found is None:
        raise TermPlotError(f"--size {shown_text(text)}: give WIDTHxHEIGHT in characters, e.g. 120x40")
    size = TermSize(int(found[1]), int(found[2]))
    if size.width < MIN_WIDTH or size.height < MIN_HEIGHT:
        raise TermPlotError(f"--size {text}: at least {MIN_WIDTH}x{MIN_HEIGHT} to draw two panels")
    return size


def terminal_size() -> TermSize:
    """The terminal's size (``shutil``: $COLUMNS/$LINES, else the tty's, else 80x24), kept at least
    the smallest drawable size."""
    import shutil

    cols, lines = shutil.get_terminal_size()
    return TermSize(max(cols, MIN_WIDTH), max(lines - 1, MIN_HEIGHT))  # one line left for the prompt


def plot_term(path: str, *, size: TermSize, colour: bool, tz: tzinfo, interval_s: float | None = None,
              config: Config | None = None, title: str | None = None,
              report: dict[str, Any] | None = None) -> str:
    """The figure of ``path`` as text (ANSI colours only when ``colour``), ending in a newline.
    ``report``: the file's report as ``jroof-tui report`` built it (default: the file's own)."""
    series, report = plotted(path, tz=tz, interval_s=interval_s, config=config, report=report)
    return draw_term(series, report, size=size, colour=colour, title=title or path)


def reduced(t: np.ndarray, y: np.ndarray, columns: int) -> tuple[list[float], list[float]]:
    """The finite points of (t, y); past ``2 × columns`` of them, each column's minimum and maximum
    in time order, so the line drawn through them keeps every spike."""
    keep = np.isfinite(t) & np.isfinite(y)
    t, y = t[keep], y[keep]
    if len(t) <= 2 * columns:
        return [float(v) for v in t], [float(v) for v in y]
    xs: list[float] = []
    ys: list[float] = []
    for chunk_t, chunk_y in zip(np.array_split(t, columns), np.array_split(y, columns), strict=True):
        lo, hi = int(np.argmin(chunk_y)), int(np.argmax(chunk_y))
        for at in sorted({lo, hi}):
            xs.append(float(chunk_t[at]))
            ys.append(float(chunk_y[at]))
    return xs, ys


def draw_term(series: dict[str, np.ndarray], report: dict[str, Any], *, size: TermSize, colour: bool,
              title: str) -> str:
    """The two panels and the phases' list (see the module docstring) as text."""
    import plotext as plt

    t = series["t_s"]
    spans = phase_spans(report)
    plt.main()  # clear_figure clears the active subplot only: the whole figure is the main one
    plt.clear_figure()
    plt.subplots(2, 1)
    plt.limit_size(False, False)  # the size asked for, not the size of whatever stdout is
    plt.plotsize(size.width, size.height - FOOTER_LINES)
    device = shown_text(str(report.get("device") or "device unknown"))
    mode = shown_text(str(report.get("power_mode") or "mode unknown"))
    clocks = [(name, mhz) for name, mhz in clock_series(series) if mhz is not None]
    panels = (("power (W)", power_series(series)), ("clock (MHz)", clocks))
    for row, (ylabel, lines) in enumerate(panels, start=1):
        plt.subplot(row, 1)
        if row == 1:
            plt.title(f"{shown_text(title)} — {device}, {mode}")
        drawn = False
        for name, values in lines:
            xs, ys = reduced(t, values, size.width)
            if xs:
                plt.plot(xs, ys, label=shown_text(name), marker="braille")
                drawn = True
        if not drawn:
            plt.text(f"no {ylabel.split(' ')[0]} in this file", float(np.nanmin(t)), 0.0)
        _phase_marks(plt, spans, at=_middle(lines) if row == 1 and drawn else None)
        plt.ylabel(ylabel)
    plt.xlabel("seconds from the first sample")
    text: str = plt.build()
    if not colour:
        text = plt.uncolorize(text)
    return text.rstrip("\n") + "\n" + phases_line(spans) + "\n"


def _middle(lines: Sequence[tuple[str, np.ndarray]]) -> float | None:
    """Halfway up the panel's data: the names stay clear of the legend (top left) and of a line
    that sits at its low or high level for a whole phase."""
    finite = [v[np.isfinite(v)] for _, v in lines if np.isfinite(v).any()]
    if not finite:
        return None
    return (min(float(v.min()) for v in finite) + max(float(v.max()) for v in finite)) / 2


def _phase_marks(plt: Any, spans: Sequence[PhaseSpan], *, at: float | None) -> None:
    """Each phase's start and end as vertical lines; its name after its start, at height ``at``
    (only on the panel given one)."""
    for span in spans:
        for edge in (span.start_s, span.end_s):
            plt.vline(edge, color="gray")
        if at is not None:
            plt.text(shown_text(span.name), span.start_s, at, alignment="left")


def phases_line(spans: Sequence[PhaseSpan]) -> str:
    """One line naming each phase and its span in seconds, or saying there are none."""
    if not spans:
        return "phases: none in this run"
    return "phases: " + "; ".join(f"{shown_text(s.name)} {_s(s.start_s)}–{_s(s.end_s)} s" for s in spans)


def _s(value: float) -> str:
    return f"{value:.1f}" if math.isfinite(value) else "?"

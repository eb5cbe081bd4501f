"""``jroof-tui plot FILE [--out chart.png|svg|pdf]``: a figure of a run for papers and bug reports.

Panels over time (seconds from the first sample): clocks (GPU, EMC, mean CPU), loads (GPU, EMC,
mean CPU), power (total input and every rail) and temperatures (every zone); the phases shaded and
named (in the legend where their names would crowd), throttle events marked (red: ``throttle``,
orange hatched: ``mode_cap``). Below them, where a span reported its work (FLOPs, bytes; a
``--workload`` gives them) or Nsight Compute measured kernels, and the device is known, the
roofline: the roof at each phase's mean clocks, the mode's roof at its maximum clocks (dashed), a
probe's measured roof (dotted), each phase's point and each kernel's. The samples come from
``export``'s rows; the phases, events, device, mode and every point from the one report
(``report_file``: the pipeline's queries, with the inputs ``report`` takes): nothing is computed
twice. Long runs are drawn as a min-max band per pixel column, so a one-sample spike is never lost.

matplotlib is an optional extra; without it ``plot`` is one line saying how to install it (as the
README does). Nothing here imports Textual.
"""

from __future__ import annotations

import importlib
import math
import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import numpy as np

from jtop_roof.formats.userfiles import create_output
from jtop_roof.model.errors import UserError
from jtop_roof.model.event_kinds import event_kind
from jtop_roof.model.extras import install_hint
from jtop_roof.model.jsonsafe import shown_text
from jtop_roof.model.metrics import fmt_si, fmt_si_unit, for_terminal
from jtop_roof.outputs.compare import CompareError, file_report
from jtop_roof.outputs.export import ExportError, iter_rows, scan_file
from jtop_roof.outputs.export_types import FLOAT, INT, column_type
from jtop_roof.roofline.devices import rate_word
from jtop_roof.roofline.measured import Probe
from jtop_roof.runtime.config import Config

FORMATS = ("png", "svg", "pdf")
NEEDS_EXTRA = "plot needs matplotlib: " + install_hint("plot", "matplotlib")
#: Points per series drawn as they are; more are drawn as a min-max band of this many columns.
MAX_POINTS = 4000
PHASE_COLOURS = ("#4c72b0", "#55a868", "#8172b2", "#ccb974", "#64b5cd", "#c44e52")
#: A phase label's width per character, as a fraction of the time axis (8 pt text on the 11 in
#: figure), and the room left between two labels: closer names go to the legend instead.
LABEL_CHAR_WIDTH = 0.0075
LABEL_PAD = 0.01


class PlotError(UserError):
    """matplotlib missing, or an input or output that cannot be used (one line; exit 2)."""


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display needed); PlotError without matplotlib."""
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise PlotError(NEEDS_EXTRA) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def default_out(path: str) -> str:
    return str(Path(path).with_suffix(".png").name)


def figure_format(out: str) -> str:
    """png, svg or pdf, from ``out``'s suffix; PlotError otherwise."""
    fmt = Path(out).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise PlotError(f"cannot tell the format of {out}: end it in .png, .svg or .pdf")
    return fmt


def plotted(path: str, *, tz: tzinfo, interval_s: float | None, config: Config | None,
            report: dict[str, Any] | None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What a figure of ``path`` draws (the figure's and ``plot --term``'s one route): export's rows
    as columns, and the report (``report``, else the file's own); PlotError without samples."""
    try:
        scan = scan_file(path, tz=tz, interval_s=interval_s, config=config)
        series = _columns(iter_rows(path, scan, tz=tz, interval_s=interval_s), scan.columns)
        if report is None:
            report = file_report(path, tz=tz, interval_s=interval_s, config=config)
    except (ExportError, CompareError) as exc:
        raise PlotError(str(exc)) from None
    if not len(series.get("t_s", ())):
        raise PlotError(f"{path}: no samples to plot")
    return series, report


def power_series(series: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """(name, watts) of the power panel: the total input (unless a rail is the total itself) and
    every rail."""
    total = series.get("power_total_mw")
    rails = _family(series, "rail_", "_mw")
    drawn: list[tuple[str, np.ndarray]] = []
    if total is not None and not any(np.array_equal(v, total, equal_nan=True) for _, v in rails):
        drawn.append((TOTAL_INPUT, total / 1000.0))
    for name, values in rails:
        same = total is not None and np.array_equal(values, total, equal_nan=True)
        drawn.append((f"{name} (total input)" if same else name, values / 1000.0))
    return drawn


def clock_series(series: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray | None]]:
    """(name, MHz) of the clocks panel: GPU, EMC and the mean of the online CPU cores (None: not
    in the file)."""
    cpu = _mean([v for _, v in _family(series, "cpu", "_mhz")])
    return [("GPU", series.get("gpu_mhz")), ("EMC", series.get("emc_mhz")),
            ("CPU (mean of online cores)", cpu)]


#: The power panel's line for the sum of the rails.
TOTAL_INPUT = "total input (sum of rails)"


def plot_file(path: str, out: str | None = None, *, tz: tzinfo, interval_s: float | None = None,
              config: Config | None = None, title: str | None = None, report: dict[str, Any] | None = None,
              probe: Probe | None = None, fmt: str | None = None) -> str:
    """Draw ``path`` into ``out`` (``fmt``, else from its suffix; default ``FILE-stem.png`` here:
    never through a link, nor over ``path``; ``-``: standard output); returns the path written.
    ``report``: the file's report as ``jroof-tui report`` built it with the user's inputs (default:
    the file's own, without them); ``probe``: the measured roof that report was given."""
    out = out or default_out(path)
    fmt = fmt or figure_format(out)
    plt = pyplot()
    series, report = plotted(path, tz=tz, interval_s=interval_s, config=config, report=report)
    # Names come from files and users: "$x_1$" in a phase, a rail or a title is drawn as typed,
    # not parsed as mathtext (which fails, or draws something else).
    with plt.rc_context({"text.parse_math": False}), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure = draw(plt, series, report, config=config, tz=tz, title=title or Path(path).name, probe=probe)
        try:
            shown_texts(figure)
            with open(create_output(out, inputs=[path]), "wb") as target:
                figure.savefig(target, format=fmt, dpi=150)
        except BrokenPipeError:
            raise  # `plot ... --out - | head`: the reader left; the command line says nothing
        except OSError as exc:
            raise PlotError(f"cannot write {out}: {exc.strerror or exc}") from None
        finally:
            plt.close(figure)
    for line in caught_lines(caught):
        print(for_terminal(f"jroof-tui: plot: {line}"), file=sys.stderr)
    return out


def shown_texts(figure: Any) -> None:
    """Every text of the figure (title, legends, labels) as ``shown_text`` writes it: a control or
    bidi character from a name is drawn as its escape, not asked of the font, and a lone surrogate
    (a file name or ``--title`` that is no UTF-8) is no character the font can be asked for."""
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        typed = text.get_text()
        if isinstance(typed, str) and shown_text(typed) is not typed:
            text.set_text(shown_text(typed))


#: matplotlib's warning for a character its font cannot draw (it then draws a box).
_NO_GLYPH = re.compile(r"Glyph (\d+) .*missing from font")
#: Characters named at most in the one line about missing glyphs.
MAX_GLYPHS_SAID = 8


def caught_lines(caught: Sequence[warnings.WarningMessage]) -> list[str]:
    """What matplotlib warned while drawing, for stderr: the characters the font has no glyph for
    in one line (as U+XXXX: its own message holds the raw character), each other warning once."""
    glyphs: list[int] = []
    others: list[str] = []
    for each in caught:
        message = str(each.message)
        found = _NO_GLYPH.search(message)
        if found is not None:
            if int(found[1]) not in glyphs and len(found[1]) <= 7:
                glyphs.append(int(found[1]))
        elif message not in others:
            others.append(message)
    lines = others
    if glyphs:
        named = ", ".join(f"U+{code:04X}" for code in glyphs[:MAX_GLYPHS_SAID])
        more = f" and {len(glyphs) - MAX_GLYPHS_SAID} more" if len(glyphs) > MAX_GLYPHS_SAID else ""
        lines = [f"the font has no glyph for {named}{more}: drawn as boxes", *others]
    return lines


def _columns(rows: Any, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """Numeric columns as float arrays (None -> NaN) of ``iter_rows``' rows; text and time columns
    are not needed here."""
    numeric = [(at, c) for at, c in enumerate(columns) if column_type(c) in (FLOAT, INT)]
    values: dict[str, list[float]] = {c: [] for _, c in numeric}
    for row in rows:
        for at, c in numeric:
            value = row[at]
            values[c].append(math.nan if value is None else float(value))
    return {c: np.asarray(v, dtype=float) for c, v in values.items()}


def _family(series: dict[str, np.ndarray], prefix: str, suffix: str) -> list[tuple[str, np.ndarray]]:
    return [(c[len(prefix):-len(suffix)], v) for c, v in series.items()
            if c.startswith(prefix) and c.endswith(suffix)]


def _mean(arrays: list[np.ndarray]) -> np.ndarray | None:
    if not arrays:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows (every core offline)
        mean: np.ndarray = np.nanmean(np.vstack(arrays), axis=0)
    return mean


def _draw_line(ax: Any, t: np.ndarray, y: np.ndarray | None, label: str, breaks: np.ndarray | None = None,
          **style: Any) -> None:
    """One series, broken before the rows in ``breaks`` (after a gap); past MAX_POINTS as a
    min-max band with its mean, so spikes stay visible."""
    if y is None or not np.isfinite(y).any():
        return
    if len(t) <= MAX_POINTS:
        if breaks is not None and len(breaks):
            t, y = np.insert(t, breaks, np.nan), np.insert(y, breaks, np.nan)
        ax.plot(t, y, label=label, linewidth=1.0, **style)
        return
    edges = np.linspace(0, len(t), MAX_POINTS + 1).astype(int)
    lo, hi, mid, tc = [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            chunk = y[a:b]
            lo.append(np.nanmin(chunk))
            hi.append(np.nanmax(chunk))
            mid.append(np.nanmean(chunk))
            tc.append(t[a:b].mean())
    (drawn,) = ax.plot(tc, mid, label=label, linewidth=1.0, **style)
    ax.fill_between(tc, lo, hi, color=drawn.get_color(), alpha=0.25, linewidth=0)


def draw(plt: Any, series: dict[str, np.ndarray], report: dict[str, Any], *, config: Config | None,
         tz: tzinfo, title: str, probe: Probe | None = None) -> Any:
    """The figure (see the module docstring); returned open, the caller saves and closes it."""
    t = series["t_s"]
    roof = roofline_data(report, config, probe)
    rows = 4 + (1 if roof else 0)
    heights = [1.0, 1.0, 1.0, 1.0] + ([1.6] if roof else [])
    figure = plt.figure(figsize=(11, 2.3 * sum(heights) + 0.8), layout="constrained")
    grid = figure.add_gridspec(rows, 1, height_ratios=heights)
    first = figure.add_subplot(grid[0])
    axes = [first] + [figure.add_subplot(grid[i], sharex=first) for i in (1, 2, 3)]

    gaps = series.get("gap_s")
    breaks = None if gaps is None else np.flatnonzero(np.isfinite(gaps))

    def _line(ax: Any, t: np.ndarray, y: np.ndarray | None, label: str, **style: Any) -> None:
        _draw_line(ax, t, y, label, breaks, **style)

    cpu_load = _mean([v for _, v in _family(series, "cpu", "_load_pct")])
    clocks, loads, power, temps = axes
    for name, mhz in clock_series(series):
        _line(clocks, t, mhz, name)
    clocks.set_ylabel("clock (MHz)")
    _line(loads, t, series.get("gpu_load_pct"), "GPU")
    _line(loads, t, series.get("emc_load_pct"), "EMC")
    _line(loads, t, cpu_load, "CPU (mean)")
    loads.set_ylabel("load (%)")
    loads.set_ylim(-2, 102)
    for name, watts in power_series(series):
        _line(power, t, watts, name, **({"color": "black"} if name == TOTAL_INPUT else {}))
    power.set_ylabel("power (W)")
    for name, values in _family(series, "temp_", "_c"):
        _line(temps, t, values, name)
    temps.set_ylabel("temperature (°C)")

    finite = t[np.isfinite(t)]
    _draw_phases(axes, phase_spans(report), float(finite.max() - finite.min()) if len(finite) else 0.0)
    _draw_events(axes, report)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        if handles:
            ax.legend(loc="upper left", fontsize=7, ncol=4, framealpha=0.7)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    start_wall = series.get("t_wall")
    when = ""
    if start_wall is not None and len(start_wall) and np.isfinite(start_wall[0]):
        when = " from " + datetime.fromtimestamp(float(start_wall[0]), tz).isoformat(timespec="seconds")
    elif (report.get("source") or {}).get("log_start"):
        how = "fitted to trtexec's run" if report["source"].get("log_start_source") == "inferred" \
            else "--log-start"
        when = f" from {report['source']['log_start']} ({how})"
    axes[-1].set_xlabel(f"seconds{when}")
    device = report.get("device") or "device unknown"
    mode = report.get("power_mode") or "mode unknown"
    figure.suptitle(f"{title} — {device}, {mode}", fontsize=11)
    if roof:
        _draw_roofline(figure.add_subplot(grid[4]), roof)
    return figure


@dataclass(frozen=True)
class PhaseSpan:
    """A phase of the report as drawn: its edges in seconds from the run's start, and its colour."""

    name: str
    start_s: float
    end_s: float
    colour: str


def phase_spans(report: dict[str, Any]) -> list[PhaseSpan]:
    """The report's phases that have edges (a phase without samples has none), each in the colour
    its roofline point takes."""
    return [PhaseSpan(str(phase["name"]), phase["start_s"], phase["end_s"], _colour(n))
            for n, phase in enumerate(report.get("phases") or [])
            if phase.get("start_s") is not None and phase.get("end_s") is not None]


def _colour(n: int) -> str:
    return PHASE_COLOURS[n % len(PHASE_COLOURS)]


def labels_crowd(spans: Sequence[PhaseSpan], run_s: float) -> bool:
    """Whether the phases' names, each centred over its phase on a ``run_s`` long time axis, would
    run into each other (or past the axis)."""
    if not spans:
        return False
    if not run_s > 0:
        return len(spans) > 1
    placed = sorted(((s.start_s + s.end_s) / 2 / run_s, len(s.name) * LABEL_CHAR_WIDTH / 2) for s in spans)
    return any(b_mid - a_mid < a_half + b_half + LABEL_PAD
               for (a_mid, a_half), (b_mid, b_half) in zip(placed, placed[1:], strict=False))


def _draw_phases(axes: Sequence[Any], spans: Sequence[PhaseSpan], run_s: float) -> None:
    """Each phase shaded on every panel and named above the first, or in its legend where the
    names would crowd (trtexec's short warm-up between its build and timed phases)."""
    crowded = labels_crowd(spans, run_s)
    for span in spans:
        for n, ax in enumerate(axes):
            ax.axvspan(span.start_s, span.end_s, color=span.colour, alpha=0.12, linewidth=0,
                       label=f"phase {span.name}" if crowded and n == 0 else None)
        if not crowded:
            axes[0].annotate(span.name, xy=((span.start_s + span.end_s) / 2, 1.0),
                             xycoords=("data", "axes fraction"), xytext=(0, 2), textcoords="offset points",
                             ha="center", va="bottom", fontsize=8, color=span.colour, annotation_clip=False)


def _draw_events(axes: Sequence[Any], report: dict[str, Any]) -> None:
    """The report's detector events, as each kind's declaration says (``model.event_kinds``: red for
    ``solid``, orange hatched for ``hatched``; a kind not drawn is not)."""
    marked: set[str] = set()
    for event in report.get("events") or []:
        start, end = event.get("start_s"), event.get("end_s")
        if start is None or end is None:
            continue
        kind = str(event["kind"])
        drawn = event_kind(kind).plot
        if drawn is None:
            continue
        label = None if kind in marked else f"{kind} event"
        marked.add(kind)
        style: dict[str, Any] = {"color": "red", "alpha": 0.18}
        if drawn == "hatched":
            style = {"facecolor": "none", "edgecolor": "orange", "hatch": "//", "alpha": 0.6}
        for n, ax in enumerate(axes):
            ax.axvspan(start, max(end, start + 1e-3), linewidth=0, label=label if n == 0 else None, **style)


@dataclass(frozen=True)
class RoofPoint:
    """A span's or a kernel's place on the roofline, as the report placed it."""

    label: str
    colour: str
    marker: str
    flops_per_s: float
    intensity: float | None  # None: no bytes reported (drawn as a level, not a point)


@dataclass(frozen=True)
class Roof:
    """One roof drawn: min(peak, bandwidth × intensity); a missing part is left out."""

    label: str | None
    peak_flops_per_s: float | None
    bandwidth_bytes_per_s: float | None
    colour: str
    linestyle: str


@dataclass(frozen=True)
class RooflineFigure:
    """What the roofline panel draws: its precision (the first point's), roofs and points."""

    precision: str
    roofs: tuple[Roof, ...]
    points: tuple[RoofPoint, ...]


def roofline_data(report: dict[str, Any], config: Config | None, probe: Probe | None = None
                  ) -> RooflineFigure | None:
    """The roofline panel of ``report``, or None when nothing can be placed on it: each phase with
    a roofline placement (else the whole run's: a workload reported without phases) at its roof of
    the phase's mean clocks, each Nsight Compute kernel with a rate, the mode's roof at its maximum
    clocks, and ``probe``'s measured roof."""
    spans = [(n, span) for n, span in enumerate(report.get("phases") or []) if _placed(span)]
    if not spans and _placed(report.get("whole") or {}):
        spans = [(0, report["whole"])]
    roofs: list[Roof] = []
    points: list[RoofPoint] = []
    precision: str | None = None
    for n, span in spans:
        line, ceilings = span["roofline"], span["ceilings"]
        precision = precision or line["precision"]
        peak = ceilings["peak_flops_per_s"][line["precision"]]
        bandwidth = ceilings.get("bandwidth_bytes_per_s")
        if not any((r.peak_flops_per_s, r.bandwidth_bytes_per_s) == (peak, bandwidth) for r in roofs):
            roofs.append(Roof(None, peak, bandwidth, _colour(n), "-"))  # one line for phases at one clock
        intensity = line.get("intensity_flop_per_byte")
        unplaced = "" if intensity else " (no bytes: intensity unknown)"
        points.append(RoofPoint(f"{span['name']}: {line['verdict']}{unplaced}", _colour(n), "o",
                                line["achieved_flops_per_s"], intensity or None))
    for kernel in report.get("ncu") or []:
        achieved = kernel.get("achieved_flops_per_s")
        if not achieved:
            continue
        precision = precision or kernel.get("precision")
        name = str(kernel["name"])
        name = name if len(name) <= 40 else name[:39] + "…"
        points.append(RoofPoint(f"{name}: {kernel.get('verdict', 'unknown')} (ncu)", "black", "x", achieved,
                                kernel.get("intensity_flop_per_byte") or None))
    if not points or precision is None:
        return None
    top = _top_roof(report, config, precision)
    if top is not None:
        roofs.append(Roof(f"mode's maximum clocks ({precision})", top[0], top[1], "grey", "--"))
    if probe is not None:
        measured = probe.compute.get(precision)
        lacks = "" if measured is not None else f"; no {precision} measured"
        roofs.append(Roof(f"{probe.summary()} ({precision}{lacks})",
                          None if measured is None else measured.value, probe.bandwidth_bytes_per_s,
                          "dimgrey", ":"))
    return RooflineFigure(precision, tuple(roofs), tuple(points))


def _placed(span: dict[str, Any]) -> bool:
    """Whether the report placed the span on a roof of its device (a rate and a peak to draw)."""
    line, ceilings = span.get("roofline"), span.get("ceilings")
    return (isinstance(line, dict) and isinstance(ceilings, dict) and bool(line.get("achieved_flops_per_s"))
            and (ceilings.get("peak_flops_per_s") or {}).get(line.get("precision")) is not None)


def _top_roof(report: dict[str, Any], config: Config | None, precision: str) -> tuple[float, float] | None:
    from jtop_roof.roofline.ceilings import max_ceilings
    from jtop_roof.roofline.devices import DeviceError, find_mode, load_devices

    try:
        db = load_devices((config or Config()).devices)
    except DeviceError:
        return None
    device = db.get(report.get("device") or "")
    if device is None:
        return None
    mode = find_mode(device, report["power_mode"]) if report.get("power_mode") else None
    top = max_ceilings(device, mode)
    if top is None or precision not in top.peak_flops_per_s:
        return None
    return top.peak_flops_per_s[precision], top.bandwidth_bytes_per_s


def _draw_roofline(ax: Any, roof: RooflineFigure) -> None:
    known = [p.intensity for p in roof.points if p.intensity]
    ridges = [r.peak_flops_per_s / r.bandwidth_bytes_per_s for r in roof.roofs
              if r.peak_flops_per_s and r.bandwidth_bytes_per_s]
    lo = min([*known, *ridges, 1.0]) / 10
    hi = max([*known, *ridges, 1.0]) * 10
    x = np.logspace(math.log10(lo), math.log10(hi), 200)
    for r in roof.roofs:
        y = np.full_like(x, np.inf)
        if r.peak_flops_per_s:
            y = np.minimum(y, r.peak_flops_per_s)
        if r.bandwidth_bytes_per_s:
            y = np.minimum(y, r.bandwidth_bytes_per_s * x)
        if np.isfinite(y).all():
            ax.plot(x, y, linestyle=r.linestyle, color=r.colour, linewidth=1.2, alpha=0.8, label=r.label)
    for p in roof.points:
        if p.intensity is not None:
            ax.plot([p.intensity], [p.flops_per_s], p.marker, color=p.colour, label=p.label)
        else:
            ax.axhline(p.flops_per_s, color=p.colour, linestyle=":", label=p.label)
    word = rate_word(roof.precision)
    ax.set_xscale("log")
    ax.set_yscale("log")
    # Plain-text tick labels: the figure draws text as typed (no mathtext), so matplotlib's
    # default "10^{15}" labels would show their markup.
    ticker = importlib.import_module("matplotlib.ticker")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: fmt_si(value)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: fmt_si_unit(value, f"{word}/s")))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel(f"arithmetic intensity ({word}/byte)")
    ax.set_ylabel(f"{word}/s")
    ax.set_title(f"roofline ({roof.precision}) at each phase's mean clocks", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=7)

"""``jroof-tui plot FILE [--out chart.png|svg|pdf]``: a figure of a run for papers and bug reports.

Panels over time (seconds from the first sample): clocks (GPU, EMC, mean CPU), loads (GPU, EMC,
mean CPU), power (total input and every rail) and temperatures (every zone); the phases shaded and
named, throttle events marked (red: ``throttle``, orange hatched: ``mode_cap``, as ``report``'s
events). Below them, where a phase reported its work (FLOPs, bytes) and the device is known, the
roofline: the roof at each such phase's mean clocks, the mode's roof at its maximum clocks (dashed),
and each phase's point. The samples, phases and events come from ``export`` (the pipeline's), the
roofline from ``report``: nothing is computed twice. Long runs are drawn as a min-max band per
pixel column, so a one-sample spike is never lost.

matplotlib is an optional extra (``pip install 'jroof-tui[plot]'``); without it ``plot`` is one
line naming the extra. Nothing here imports Textual.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import numpy as np

from jtop_roof.formats.userfiles import create_output
from jtop_roof.model.errors import UserError
from jtop_roof.outputs.compare import CompareError, file_report
from jtop_roof.outputs.export import ExportError, Scan, iter_rows, scan_file
from jtop_roof.runtime.config import Config

FORMATS = ("png", "svg", "pdf")
NEEDS_EXTRA = "plot needs matplotlib: pip install 'jroof-tui[plot]'"
#: Points per series drawn as they are; more are drawn as a min-max band of this many columns.
MAX_POINTS = 4000
PHASE_COLOURS = ("#4c72b0", "#55a868", "#8172b2", "#ccb974", "#64b5cd", "#c44e52")


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


def plot_file(path: str, out: str | None = None, *, tz: tzinfo, interval_s: float | None = None,
              config: Config | None = None, title: str | None = None) -> str:
    """Draw ``path`` into ``out`` (format from its suffix; default ``FILE-stem.png`` here: never
    through a link, nor over ``path``); returns the path written."""
    out = out or default_out(path)
    fmt = Path(out).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise PlotError(f"cannot tell the format of {out}: end it in .png, .svg or .pdf")
    plt = pyplot()
    try:
        scan = scan_file(path, tz=tz, interval_s=interval_s, config=config)
        series = _columns(iter_rows(path, scan, tz=tz, interval_s=interval_s), scan.columns)
        report = file_report(path, tz=tz, interval_s=interval_s, config=config)
    except (ExportError, CompareError) as exc:
        raise PlotError(str(exc)) from None
    if not len(series.get("t_s", ())):
        raise PlotError(f"{path}: no samples to plot")
    # Names come from files and users: "$x_1$" in a phase, a rail or a title is drawn as typed,
    # not parsed as mathtext (which fails, or draws something else).
    with plt.rc_context({"text.parse_math": False}):
        figure = draw(plt, series, scan, report, config=config, tz=tz, title=title or Path(path).name)
        try:
            with open(create_output(out, inputs=[path]), "wb") as target:
                figure.savefig(target, format=fmt, dpi=150)
        except OSError as exc:
            raise PlotError(f"cannot write {out}: {exc.strerror or exc}") from None
        finally:
            plt.close(figure)
    return out


def _columns(rows: Any, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """Numeric columns as float arrays (None -> NaN); text columns are not needed here."""
    numeric = [c for c in columns if c not in ("phase", "throttle", "power_total_source")]
    values: dict[str, list[float]] = {c: [] for c in numeric}
    for row in rows:
        for c in numeric:
            value = row[c]
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


def draw(plt: Any, series: dict[str, np.ndarray], scan: Scan, report: dict[str, Any], *,
         config: Config | None, tz: tzinfo, title: str) -> Any:
    """The figure (see the module docstring); returned open, the caller saves and closes it."""
    t = series["t_s"]
    roof = _roofline_data(report, config)
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

    cpu_mhz = _mean([v for _, v in _family(series, "cpu", "_mhz")])
    cpu_load = _mean([v for _, v in _family(series, "cpu", "_load_pct")])
    clocks, loads, power, temps = axes
    _line(clocks, t, series.get("gpu_mhz"), "GPU")
    _line(clocks, t, series.get("emc_mhz"), "EMC")
    _line(clocks, t, cpu_mhz, "CPU (mean of online cores)")
    clocks.set_ylabel("clock (MHz)")
    _line(loads, t, series.get("gpu_load_pct"), "GPU")
    _line(loads, t, series.get("emc_load_pct"), "EMC")
    _line(loads, t, cpu_load, "CPU (mean)")
    loads.set_ylabel("load (%)")
    loads.set_ylim(-2, 102)
    total = series.get("power_total_mw")
    rails = _family(series, "rail_", "_mw")
    if total is not None and not any(np.array_equal(values, total, equal_nan=True) for _, values in rails):
        _line(power, t, total / 1000.0, "total input (sum of rails)", color="black")
    for name, values in rails:
        same = total is not None and np.array_equal(values, total, equal_nan=True)
        _line(power, t, values / 1000.0, f"{name} (total input)" if same else name)
    power.set_ylabel("power (W)")
    for name, values in _family(series, "temp_", "_c"):
        _line(temps, t, values, name)
    temps.set_ylabel("temperature (°C)")

    origin = scan.origin or 0.0
    for n, (start, end, name) in enumerate(scan.phases):
        colour = PHASE_COLOURS[n % len(PHASE_COLOURS)]
        for ax in axes:
            ax.axvspan(start - origin, end - origin, color=colour, alpha=0.12, linewidth=0)
        first.annotate(name, xy=((start + end) / 2 - origin, 1.0), xycoords=("data", "axes fraction"),
                       xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=8,
                       color=colour, annotation_clip=False)
    marked: set[str] = set()
    for event in scan.events:
        if event.start_mono is None or event.t_mono is None:
            continue
        kind = event.kind
        label = None if kind in marked else f"{kind} event"
        marked.add(kind)
        style: dict[str, Any] = {"color": "red", "alpha": 0.18}
        if kind != "throttle":
            style = {"facecolor": "none", "edgecolor": "orange", "hatch": "//", "alpha": 0.6}
        for n, ax in enumerate(axes):
            ax.axvspan(event.start_mono - origin, max(event.t_mono, event.start_mono + 1e-3) - origin,
                       linewidth=0, label=label if n == 0 else None, **style)
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
    axes[-1].set_xlabel(f"seconds{when}")
    device = report.get("device") or "device unknown"
    mode = report.get("power_mode") or "mode unknown"
    figure.suptitle(f"{title} — {device}, {mode}", fontsize=11)
    if roof:
        _draw_roofline(figure.add_subplot(grid[4]), roof)
    return figure


def _roofline_data(report: dict[str, Any], config: Config | None) -> dict[str, Any] | None:
    """Each phase with a roofline point: its name, point, and roof; the mode's top roof."""
    points = []
    for n, span in enumerate(report.get("phases") or []):
        line, ceilings = span.get("roofline"), span.get("ceilings")
        if not isinstance(line, dict) or not isinstance(ceilings, dict):
            continue
        precision = line.get("precision")
        peak = (ceilings.get("peak_flops_per_s") or {}).get(precision)
        if peak is None:
            continue
        points.append({"name": span.get("name"), "colour": PHASE_COLOURS[n % len(PHASE_COLOURS)],
                       "flops": line.get("achieved_flops_per_s"), "bytes": line.get("achieved_bytes_per_s"),
                       "intensity": line.get("intensity_flop_per_byte"), "verdict": line.get("verdict"),
                       "peak": peak, "bandwidth": ceilings.get("bandwidth_bytes_per_s"),
                       "precision": precision})
    if not points:
        return None
    return {"points": points, "top": _top_roof(report, config, points[0]["precision"])}


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


def _draw_roofline(ax: Any, roof: dict[str, Any]) -> None:
    points = roof["points"]
    known = [p["intensity"] for p in points if p["intensity"]]
    ridges = [p["peak"] / p["bandwidth"] for p in points if p["bandwidth"]]
    lo = min([*known, *ridges, 1.0]) / 10
    hi = max([*known, *ridges, 1.0]) * 10
    x = np.logspace(math.log10(lo), math.log10(hi), 200)

    def roof_line(peak: float, bandwidth: float | None) -> np.ndarray:
        result: np.ndarray = np.full_like(x, peak) if not bandwidth else np.minimum(peak, bandwidth * x)
        return result

    if roof["top"] is not None:
        peak, bandwidth = roof["top"]
        ax.plot(x, roof_line(peak, bandwidth), "--", color="grey", linewidth=1.0,
                label=f"mode's maximum clocks ({points[0]['precision']})")
    drawn: set[tuple[float, float | None]] = set()
    for p in points:
        key = (p["peak"], p["bandwidth"])
        if key not in drawn:
            drawn.add(key)
            ax.plot(x, roof_line(p["peak"], p["bandwidth"]), color=p["colour"], linewidth=1.2, alpha=0.8)
        if p["intensity"] and p["flops"]:
            ax.plot([p["intensity"]], [p["flops"]], "o", color=p["colour"],
                    label=f"{p['name']}: {p['verdict']}")
        elif p["flops"]:
            ax.axhline(p["flops"], color=p["colour"], linestyle=":",
                       label=f"{p['name']}: {p['verdict']} (no bytes: intensity unknown)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("FLOP/s")
    ax.set_title("roofline at each phase's mean clocks", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=7)

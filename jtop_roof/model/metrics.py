"""How each number reads: formatting, load levels, bars, sparklines and time-axis ticks.

Pure functions with no Textual import, unit-tested directly. How hot a temperature is lives in
``thermal`` (data layer: the coming detectors judge it the same way).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime, tzinfo

from jtop_roof.model.settings import Thresholds

#: A process not the benchmark's at or above this (% of one core, mean over a span) is said to have
#: run beside it: ``report`` lists it, ``compare`` flags the phase.
FOREIGN_PROCESS_PCT = 5.0

# ----------------------------------------------------------------------------------- formatting


def fmt_power(mw: float | None) -> str:
    if mw is None or math.isnan(mw):
        return "—"
    if abs(mw) < 1000:
        return f"{mw:.0f} mW"
    return f"{mw / 1000:.2f} W"


def fmt_mw(mw: float | None) -> str:
    """A rail's instantaneous power as tegrastats gives it: whole milliwatts (``12479 mW``)."""
    if mw is None or math.isnan(mw):
        return "— mW"
    return f"{mw:.0f} mW"


def fmt_energy(joules: float | None) -> str:
    if joules is None or math.isnan(joules):
        return "—"
    if abs(joules) < 100:
        return f"{joules:.1f} J"
    if abs(joules) < 1000:
        return f"{joules:.0f} J"
    if abs(joules) < 1e6:
        return f"{joules / 1e3:.2f} kJ"
    return f"{joules / 1e6:.2f} MJ"


def fmt_memory(used_mb: float, total_mb: float) -> str:
    """``6.2/7.4 GB``; ``512/952 MB`` on a board with less than 1 GB."""
    if total_mb >= 1024:
        return f"{used_mb / 1024:.1f}/{total_mb / 1024:.1f} GB"
    return f"{used_mb:.0f}/{total_mb:.0f} MB"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return "--:--:--"
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}d {clock}" if days else clock


_SI_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def fmt_si(value: float) -> str:
    """Three significant digits with an SI prefix: ``16.6T``, ``102G``, ``1k``, ``0.1``."""
    for scale, prefix in _SI_PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}"
    return f"{value:.3g}"


def fmt_si_unit(value: float, unit: str) -> str:
    """``fmt_si`` with a unit, spaced as in prose: ``641 TFLOP/s``, ``0 FLOP/s``."""
    text = fmt_si(value)
    number = text.rstrip("kMGTP")
    return f"{number} {text[len(number):]}{unit}"


def fmt_speed(speed: float) -> str:
    return f"×{speed:g}"


# ---------------------------------------------------------------------------------------- levels


def load_level(pct: float | None, thresholds: Thresholds) -> str:
    """``ok``, ``warn`` or ``crit`` for a utilisation percentage (``ok`` when unknown)."""
    if pct is None:
        return "ok"
    if pct >= thresholds.load_crit_pct:
        return "crit"
    if pct >= thresholds.load_warn_pct:
        return "warn"
    return "ok"


# ------------------------------------------------------------------------------- bars, sparkline

_EIGHTHS = " ▏▎▍▌▋▊▉"
_SPARKS = "▁▂▃▄▅▆▇█"


def bar_parts(pct: float | None, width: int) -> tuple[str, str]:
    """(filled, empty) text of a horizontal bar in 1/8 cells; empty is shaded ``░``."""
    width = max(0, width)
    if pct is None or math.isnan(pct):
        return "", "░" * width
    eighths = round(min(max(pct, 0.0), 100.0) / 100.0 * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (_EIGHTHS[part] if part else "")
    return filled, "░" * (width - len(filled))


def sparkline(
    values: Sequence[float],
    width: int,
    low: float | None = None,
    high: float | None = None,
    min_span: float = 0.0,
) -> str:
    """Block characters for the last ``width`` values; NaN is a blank. Scale: [low, high], or the
    values' own range. A range narrower than ``min_span`` is widened around the values' middle
    (kept above ``low``), so a steady reading draws as a flat line half-way up rather than as
    full blocks (without ``min_span`` a flat series sits on the bottom row)."""
    tail = [float(v) for v in values][-width:] if width > 0 else []
    finite = [v for v in tail if not math.isnan(v)]
    if not finite:
        return " " * len(tail)
    lo = min(finite) if low is None else low
    hi = max(finite) if high is None else high
    if high is None and max(finite) - min(finite) < min_span:
        middle = (max(finite) + min(finite)) / 2
        lo = middle - min_span / 2 if low is None else max(low, middle - min_span / 2)
        hi = lo + min_span
    span = hi - lo
    chars = []
    for v in tail:
        if math.isnan(v):
            chars.append(" ")
            continue
        level = 0 if span <= 0 else int((min(max(v, lo), hi) - lo) / span * (len(_SPARKS) - 1) + 0.5)
        chars.append(_SPARKS[level])
    return "".join(chars)


# ----------------------------------------------------------------------------------- time axis

_TICK_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
                 86400)


def tick_step(span_s: float, max_ticks: int) -> int:
    """The smallest round step (s) that puts at most ``max_ticks`` ticks on a span."""
    max_ticks = max(1, max_ticks)
    for step in _TICK_STEPS_S:
        if span_s / step <= max_ticks:
            return step
    return _TICK_STEPS_S[-1] * math.ceil(span_s / (_TICK_STEPS_S[-1] * max_ticks))


def ago_label(seconds_ago: float) -> str:
    """``now``, ``-45s``, ``-2m``, ``-1m30s``, ``-1h``, ``-1h30m``."""
    s = int(round(abs(seconds_ago)))
    if s == 0:
        return "now"
    if s < 60:
        return f"-{s}s"
    if s < 3600:
        minutes, secs = divmod(s, 60)
        return f"-{minutes}m" + (f"{secs:02d}s" if secs else "")
    hours, rest = divmod(s, 3600)
    minutes = rest // 60
    return f"-{hours}h" + (f"{minutes:02d}m" if minutes else "")


def ago_ticks(span_s: float, max_ticks: int) -> tuple[list[float], list[str]]:
    """Ticks for a live axis: x = seconds relative to now (0 at the right edge)."""
    step = tick_step(span_s, max_ticks)
    xs = [-k * step for k in range(int(span_s // step) + 1)][::-1]
    return [float(x) for x in xs], [ago_label(x) for x in xs]


def clock_ticks(
    span_s: float, max_ticks: int, wall_now: float, tz: tzinfo
) -> tuple[list[float], list[str]]:
    """Ticks for a replay axis at round wall-clock times; x is still seconds relative to the
    newest sample, whose wall time is ``wall_now``."""
    step = tick_step(span_s, max_ticks)
    first_wall = wall_now - span_s
    offset = datetime.fromtimestamp(first_wall, tz).utcoffset()
    shift = 0.0 if offset is None else offset.total_seconds()
    start = math.ceil((first_wall + shift) / step) * step - shift
    xs: list[float] = []
    labels: list[str] = []
    wall = start
    while wall <= wall_now + 1e-6:
        stamp = datetime.fromtimestamp(wall, tz)
        xs.append(wall - wall_now)
        labels.append(stamp.strftime("%H:%M" if step >= 60 and stamp.second == 0 else "%H:%M:%S"))
        wall += step
    return xs, labels


def printable(text: str, limit: int | None = None) -> str:
    """Text from a log, a recording or the user, made safe to draw: control characters (escape
    sequences included) become U+FFFD; optionally cut to ``limit`` characters with an ellipsis."""
    clean = text if text.isprintable() else "".join(c if c.isprintable() else "\ufffd" for c in text)
    if limit is not None and len(clean) > limit:
        return clean[: max(0, limit - 1)] + "…"
    return clean


#: A message line's longest word (a path, an id, a value given) and longest line: past them, the
#: middle is cut, so that a 5,000-character value cannot flood the terminal.
MESSAGE_WORD_CHARS, MESSAGE_LINE_CHARS = 120, 1000
_LONG_WORD = re.compile(rf"\S{{{MESSAGE_WORD_CHARS + 1},}}")


def for_terminal(message: str) -> str:
    """A message for stderr as one safe line: what a file, a peer or a value put in it cannot drive
    the terminal (control characters, escape sequences and newlines included, are shown as
    ``\\x1b``, ``\\n``) nor flood it (over-long words and lines are cut in the middle)."""
    line = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in message)
    line = _LONG_WORD.sub(lambda word: _cut_middle(word[0], MESSAGE_WORD_CHARS), line)
    return _cut_middle(line, MESSAGE_LINE_CHARS)


def _cut_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def nice_ticks(low: float, high: float, max_ticks: int) -> tuple[list[float], list[str]]:
    """Round y ticks (1, 2, 2.5, 5 x 10^n) inside [low, high], labelled without needless decimals
    (``0 340 680 1020`` rather than ``0.0 340.0 ...``)."""
    span = high - low
    if not span > 0 or max_ticks < 2:
        return [low], [f"{low:g}"]
    raw = span / (max_ticks - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else (1 if step % 1 else 0)
    return ticks, [f"{t:.{decimals}f}" for t in ticks]

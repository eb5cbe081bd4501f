"""Text the outputs share: a name from a log or a user shown literally in a markdown cell, and a
wall time as ISO 8601 in the report's zone."""

from __future__ import annotations

import math
from datetime import datetime, tzinfo


def md_cell(text: object) -> str:
    """Names from logs and users, shown literally in a markdown table cell or line."""
    return "".join(c if c.isprintable() else "\ufffd" for c in str(text)).replace("|", "\\|")


def iso_at(t_wall: float | None, tz: tzinfo) -> str | None:
    """``t_wall`` as ISO 8601 with milliseconds and the zone's offset; None where unknown or out
    of the calendar's range."""
    if t_wall is None or not math.isfinite(t_wall):
        return None
    try:
        return datetime.fromtimestamp(t_wall, tz).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return None


#: From this magnitude on a number is written as ``1.23e+300``, never as its 300 digits (a report
#: JSON given to ``compare`` may hold any finite number).
MAX_FIXED = 1e15


def number_text(value: float, digits: int, *, grouped: bool = True) -> str:
    """``value`` with ``digits`` decimals (and thousands separators where ``grouped``), or in 3
    significant digits with an exponent where that would be over 15 digits long."""
    if not math.isfinite(value):
        return "—"
    return f"{value:.3g}" if abs(value) >= MAX_FIXED else f"{value:{',' if grouped else ''}.{digits}f}"


def percent_text(fraction: float, *, signed: bool = False) -> str:
    """``fraction`` as a whole percent (``+12%`` where ``signed``), bounded as ``number_text``."""
    pct = fraction * 100
    sign = "+" if signed else ""
    return f"{pct:{sign}.3g}%" if abs(pct) >= MAX_FIXED else f"{pct:{sign}.0f}%"

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

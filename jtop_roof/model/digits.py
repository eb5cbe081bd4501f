"""Whole numbers typed by a user or read from a file: a port, a power mode's id. ``int()`` takes
any Unicode digit (``٣``) yet refuses others ``str.isdigit`` says yes to (``²``), and past 4,300
digits it raises instead of answering; a run of ASCII digits checked for length first does
neither."""

from __future__ import annotations


def decimal_int(text: str, low: int, high: int) -> int | None:
    """``text`` (ASCII digits only, leading zeros allowed) as an int from ``low`` to ``high``
    (``high`` >= 0); None for anything else, however long."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(high)):
        return None
    value = int(digits)
    return value if low <= value <= high else None

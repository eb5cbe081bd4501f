"""Reading logs: a plain ``tegrastats --logfile`` capture or one of our recordings (JSON Lines).

Which one a file is follows from its first non-empty line: a JSON object with ``"type": "header"``
makes it a recording, anything else a plain tegrastats log. ``iter_records`` is what
``jroof-tui parse`` streams; the replay source indexes files itself (to seek without parsing every
line) but shares the helpers below so both read a file the same way.

Interval rule. Lines sharing a stamp are spread at the interval, and a log without stamps is
spaced by it. For a stamped log the stamps decide: tegrastats stamps have 1 s resolution, so the
interval is the median, over the first few complete stamp groups (lines sharing one stamp), of
(seconds to the next stamp / lines in the group), in whole milliseconds rounded down so that a
group of the median size fits in its second. 10 lines a second gives 0.1 s, one line every 3 s
gives 3 s, 46 a second 0.021 s, and a single gap in the window does not move the median. This is
the rate the lines really came at (``--interval 100`` gives about 9 lines a second on an Orin
Nano), and a configured default such as 1000 ms cannot spread ten lines of one second over ten
seconds. The given interval is used for logs without stamps and when the stamps cannot tell
(fewer than two stamp changes); without one, tegrastats' default of 1 s.
"""

from __future__ import annotations

import io
import json
import math
import statistics
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, TextIO

from jtop_roof.model import Record, record_from_json
from jtop_roof.parser import parse_line, stamp_of
from jtop_roof.timeline import Timeline, parse_tz

DEFAULT_INTERVAL_S = 1.0  # tegrastats' own default interval
# Complete stamp groups looked at to infer the interval; few, so that `tegrastats | jroof-tui parse -`
# starts printing within seconds.
INFER_GROUPS = 5
INFER_MAX_LINES = 600  # stop looking after this many lines even if the groups are not complete
HEADER_MAX_BYTES = 1 << 20  # a header line longer than this is not one of ours


def open_text(path: str | Path) -> TextIO:
    """Open a log for reading as text; ``"-"`` is stdin. Undecodable bytes become U+FFFD so a
    damaged log never stops the reader."""
    if str(path) == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")  # the caller closes it


def parse_header_line(line: str | bytes) -> dict[str, Any] | None:
    """The header dict when ``line`` is our recording's header line, else None."""
    text = line.strip()
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = text.lstrip("\ufeff")
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if isinstance(obj, dict) and obj.get("type") == "header":
        return obj
    return None


def read_header(path: str | Path) -> dict[str, Any] | None:
    """The header of one of our recordings, or None for a plain tegrastats log (or an empty file).
    Raises OSError when the file cannot be read."""
    with open(path, "rb") as f:
        for raw in f:
            if raw.strip():
                return parse_header_line(raw[:HEADER_MAX_BYTES])
    return None


def decode_record_line(line: str | bytes) -> Record | None:
    """One line of a recording -> record. None for a blank, header, unknown or malformed line (a
    kill -9 can leave the last line cut short); never raises."""
    text = line.strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
        return record_from_json(obj) if isinstance(obj, dict) else None
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def is_sample_candidate(line: str) -> bool:
    """Cheap test for a line the parser may take as a sample (it needs RAM or a CPU list)."""
    return "RAM " in line or "CPU [" in line or "cpu [" in line


def stamp_seconds(stamp: str) -> float:
    """Seconds of a ``MM-DD-YYYY HH:MM:SS`` stamp on a naive scale: only differences are used."""
    return datetime.strptime(stamp, "%m-%d-%Y %H:%M:%S").timestamp()


def infer_interval_s(stamps: Iterable[str | None]) -> float | None:
    """Interval from the stamps of consecutive sample lines (the rule in the module docstring);
    None when the stamps cannot tell (no stamps, or fewer than two stamp changes)."""
    ratios: list[float] = []
    group_stamp: str | None = None
    group_lines = 0
    complete = False  # the first group may have started before the log did
    for stamp in stamps:
        if stamp is None:
            continue
        if stamp == group_stamp:
            group_lines += 1
            continue
        if group_stamp is not None and complete:
            try:
                step = stamp_seconds(stamp) - stamp_seconds(group_stamp)
            except ValueError:
                step = 0.0
            if step > 0:
                ratios.append(step / group_lines)
                if len(ratios) >= INFER_GROUPS:
                    break
        complete = group_stamp is not None
        group_stamp, group_lines = stamp, 1
    if not ratios:
        return None
    # Whole milliseconds, rounded down: 46 lines a second is 0.021 s, not 0.022 s, which would
    # spread a 46-line second over 0.99 s and a 47-line one past its end.
    return max(math.floor(statistics.median(ratios) * 1000 + 1e-6), 1) / 1000


def window_is_complete(stamp_groups: int, lines: int) -> bool:
    """True once the lines read are enough for ``infer_interval_s``: the first (maybe partial)
    group, INFER_GROUPS complete ones and the stamp that ends the last, or INFER_MAX_LINES lines."""
    return stamp_groups > INFER_GROUPS + 1 or lines >= INFER_MAX_LINES


def as_tz(tz: tzinfo | str | None) -> tzinfo:
    """Accept a zone object or its text form (None = this machine's zone)."""
    return tz if isinstance(tz, tzinfo) else parse_tz(tz)


def iter_records(
    lines: Iterable[str], *, tz: tzinfo | str | None = None, interval_s: float | None = None
) -> Iterator[Record]:
    """Records of a plain tegrastats log or of one of our recordings, with times.

    Recordings keep their own ``t``/``mono``; lines that are not valid records are skipped. Plain
    logs give one Sample per non-blank line, including ``Sample(is_sample=False)`` for lines such
    as a ``date`` header, so that ``parse`` can report them; samples get times from a Timeline
    (the interval rule is in the module docstring).
    """
    it = iter(lines)
    head: list[str] = []
    for line in it:
        head.append(line)
        if line.strip():
            break
    if not head or not head[-1].strip():
        return
    if parse_header_line(head[-1]) is not None:
        for line in it:
            record = decode_record_line(line)
            if record is not None:
                yield record
        return
    yield from _plain_records(head, it, as_tz(tz), interval_s)


def _plain_records(
    head: list[str], rest: Iterator[str], tz: tzinfo, interval_s: float | None
) -> Iterator[Record]:
    head = _read_inference_window(head, rest)
    stamps = (stamp_of(line) for line in head if is_sample_candidate(line))
    timeline = Timeline(tz, infer_interval_s(stamps) or interval_s or DEFAULT_INTERVAL_S)
    for source in (head, rest):
        for line in source:
            if not line.strip():
                continue
            sample = parse_line(line)
            if sample.is_sample:
                timeline.assign(sample)
            yield sample


def _read_inference_window(head: list[str], rest: Iterator[str]) -> list[str]:
    """Buffer lines until enough stamp groups are complete to infer the interval. Stops at once
    when the first sample line has no stamp (nothing to infer)."""
    window = list(head)
    groups = 0
    last: str | None = None
    seen_sample = False
    for line in _chain_from(window, rest):
        if not is_sample_candidate(line):
            continue
        stamp = stamp_of(line)
        if not seen_sample and stamp is None:
            break
        seen_sample = True
        if stamp is not None and stamp != last:
            groups += 1
            last = stamp
        if window_is_complete(groups, len(window)):
            break
    return window


def _chain_from(window: list[str], rest: Iterator[str]) -> Iterator[str]:
    """Yield the lines already in ``window``, then pull more from ``rest`` into it."""
    yield from list(window)
    for line in rest:
        window.append(line)
        yield line

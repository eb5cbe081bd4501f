"""Where a trtexec run lies on a tegrastats log's time span: used, or refused in one line.

trtexec stamps its lines with the wall clock; a tegrastats log is placed by its own stamps, or, for a
plain log without them (JetPack 4), by ``--log-start`` (when its first line was written). Without
either, or when the run lies wholly outside the log (another run's log, a clock set wrongly), its
phases would get no samples and blank cells: ``place_run`` refuses that with ``TrtexecError``,
naming both spans. Where only part of the run lies inside the log, it is used and a note says how
much; a run whose timed window measured nothing (``TrtexecRun.unmeasured``) is placed with a note
saying why it gives no per-inference figures. ``report`` and the replaying runtime both ask here, so
they agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, tzinfo

from jtop_roof.formats.trtexec import TrtexecError, TrtexecRun
from jtop_roof.model.errors import UserError
from jtop_roof.model.timeline import MAX_YEAR, MIN_YEAR

#: Slack for "inside": tegrastats and trtexec both stamp to the second.
STAMP_SLACK_S = 1.0
_TEGRASTATS_STAMP = re.compile(r"(\d\d)-(\d\d)-(\d{4}) (\d\d):(\d\d):(\d\d)", re.ASCII)
_TRTEXEC_STAMP = re.compile(r"(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)", re.ASCII)


class LogStartError(UserError):
    """A ``--log-start`` that is not a time (one line, exit 2)."""


def parse_log_start(text: str, tz: tzinfo) -> float:
    """``--log-start``: ISO 8601 (``2023-03-29T17:56:40``, or with a space, with or without an
    offset), tegrastats' ``03-29-2023 17:56:40`` or trtexec's ``03/29/2023-17:56:40``; read in
    ``tz`` unless it names its own offset. Unix seconds; LogStartError otherwise."""
    stripped = text.strip()
    m = _TEGRASTATS_STAMP.fullmatch(stripped) or _TRTEXEC_STAMP.fullmatch(stripped)
    try:
        if m is not None:
            month, day, year, hour, minute, second = map(int, m.groups())
            when = datetime(year, month, day, hour, minute, second)
        else:
            when = datetime.fromisoformat(stripped[:-1] + "+00:00" if stripped.endswith("Z") else stripped)
    except ValueError:
        raise LogStartError(f"--log-start: not a time: {text!r} (e.g. 2023-03-29T17:56:40, or "
                         "03-29-2023 17:56:40 as tegrastats stamps)") from None
    if not MIN_YEAR <= when.year <= MAX_YEAR:
        raise LogStartError(f"--log-start: year {when.year} is outside {MIN_YEAR} to {MAX_YEAR}")
    return (when if when.tzinfo is not None else when.replace(tzinfo=tz)).timestamp()


@dataclass(frozen=True, slots=True)
class LogSpan:
    """A tegrastats log's span on the stream: its first and last record's stream time, and their
    wall times where the log is stamped (None for a plain log without stamps)."""

    path: str
    first_mono: float
    last_mono: float
    first_wall: float | None
    last_wall: float | None


def place_run(run: TrtexecRun, trtexec: str, log: LogSpan, tz: tzinfo,
              log_start: float | None = None) -> tuple[float, str | None]:
    """(the log's first record's wall time, a note when only part of the run lies inside the log
    or its timed window measured nothing). ``log_start``: ``--log-start``, for a log without stamps.
    TrtexecError (one line) when the run cannot be placed: the log has no stamps and no
    ``log_start``, or has stamps and one; trtexec's log has no stamps; or the two spans do not
    overlap."""
    start, overlap = _placed(run, trtexec, log, tz, log_start)
    unmeasured = None if run.unmeasured is None else (
        f"trtexec log {trtexec}: {run.unmeasured}, so its run gives no per-inference figures")
    return start, "; ".join(note for note in (overlap, unmeasured) if note) or None


def _placed(run: TrtexecRun, trtexec: str, log: LogSpan, tz: tzinfo,
            log_start: float | None) -> tuple[float, str | None]:
    """``place_run`` without the note on what the timed window measured."""
    if log.first_wall is not None and log_start is not None:
        raise TrtexecError(f"--log-start is for a log without timestamps: {log.path} has its own")
    start = log.first_wall if log.first_wall is not None else log_start
    if start is None:
        raise TrtexecError(f"{log.path} has no timestamps, so trtexec's run ({trtexec}) cannot be placed "
                           "on it: give --log-start TIME, when its first line was written")
    end = log.last_wall if log.last_wall is not None else start + (log.last_mono - log.first_mono)
    walls = [w for phase in run.phases for w in (phase.start_wall, phase.end_wall) if w is not None]
    if not walls:
        raise TrtexecError(f"trtexec log {trtexec} has no timestamps: its phases cannot be placed on "
                           f"{log.path}")
    run_start, run_end = min(walls), max(walls)
    spans = (f"trtexec log {trtexec} covers {_span(run_start, run_end, tz)}, {log.path} covers "
             f"{_span(start, end, tz)}")
    overlap = min(run_end, end) - max(run_start, start)
    if overlap < -STAMP_SLACK_S:
        raise TrtexecError(f"{spans}: they do not overlap (trtexec starts {run_start - start:+.0f} s from "
                           "the log's start; --trtexec-offset S moves trtexec's stamps"
                           + (", --log-start the log" if log.first_wall is None else "") + ")")
    if run_start >= start - STAMP_SLACK_S and run_end <= end + STAMP_SLACK_S:
        return start, None
    timed = run.timed
    cut = timed is not None and not (
        timed.start_wall is not None and timed.start_wall >= start - STAMP_SLACK_S
        and timed.end_wall is not None and timed.end_wall <= end + STAMP_SLACK_S)
    return start, (f"{spans}: only {max(overlap, 0.0):.0f} s of trtexec's {run_end - run_start:.0f} s "
                   "overlap; its phases outside the log have no samples"
                   + ("; its timed window is cut, so its per-inference figures count only part of it"
                      if cut else ""))


def _span(first: float, last: float, tz: tzinfo) -> str:
    return f"{_at(first, tz)} to {_at(last, tz)}"


def _at(wall: float, tz: tzinfo) -> str:
    try:
        return datetime.fromtimestamp(wall, tz).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"unix time {wall:.0f}"

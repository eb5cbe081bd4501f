"""Where a trtexec run lies on a tegrastats log's time span: used, or refused in one line.

trtexec stamps its lines with the wall clock; a tegrastats log is placed by its own stamps, or, for a
plain log without them (JetPack 4), by ``--log-start`` (when its first line was written), or, where
the user gave neither ``--log-start`` nor ``--interval``, by fitting its lines to trtexec's run (said:
``inferred``; its coverage of trtexec's timed window is then unknown, null; the fit is checked
against the GPU's load on the log, and its energy per inference is withheld where the two do not
line up). ``--log-start`` without ``--interval`` leaves the log's
spacing assumed, so its coverage is ``assumed`` and gives no energy per inference. Without any, or
when the run lies wholly outside the log (another run's log, a clock set wrongly), its phases would
get no samples and blank cells: ``placement`` refuses that with ``TrtexecError``, naming both spans.
Where only part of the run lies inside the log, it is used and a note says how much; ``coverage`` is
the fraction of the timed window inside the log, and below ``MIN_COVERAGE`` the energy per inference
is withheld. A run whose timed window measured nothing (``TrtexecRun.unmeasured``) is placed with a
note saying why it gives no per-inference figures. ``report``, ``compare`` and the replaying runtime
all ask here (``runtime.inputs``), so they agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo

from jtop_roof.formats.trtexec import TrtexecError, TrtexecRun
from jtop_roof.model.errors import UserError
from jtop_roof.model.info import ASSUMED, GIVEN, INFERRED, MEASURED, TimeBasis
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
    wall times where the log is stamped (None for a plain log without stamps). ``interval_s``: the
    spacing its reader gave a plain log's lines (None where unknown): the placement can fit it."""

    path: str
    first_mono: float
    last_mono: float
    first_wall: float | None
    last_wall: float | None
    interval_s: float | None = None
    #: What a plain log's spacing rests on: ``given`` (``--interval``), else ``assumed`` (None too).
    interval_source: str | None = None
    #: (stream time, GPU load %) of a plain log's samples that show a load, for checking a fit
    #: (``fit_check``); empty where not read.
    gpu_loads: tuple[tuple[float, float], ...] = ()


#: Below this fraction of trtexec's timed window inside the log, its energy per inference is
#: withheld: the energy of part of the window over all its queries reads low.
MIN_COVERAGE = 0.99
#: What a number rests on (the project's four words).
#: What a log without stamps fitted to trtexec's run says of its interval (report and replay alike).
FITTED_INTERVAL_NOTE = ("the log has no stamps: its lines are spread over trtexec's run (first to last "
                        "stamp); give --interval and --log-start to set them")


#: Why a log without stamps fitted to trtexec's run has no coverage of its timed window to give.
FITTED_COVERAGE_NOTE = ("the log was spread over trtexec's run; its real span is not known: give "
                        "--interval and --log-start")


def fitted_timing(timing: TimeBasis | None) -> TimeBasis | None:
    """How a log fitted to trtexec's run was timed: its interval rests on the fit (inferred)."""
    return None if timing is None else replace(timing, interval_source=INFERRED,
                                               interval_note=FITTED_INTERVAL_NOTE)
#: A fitted interval outside these bounds fits nothing (tegrastats' own limits are wider).
_FIT_MIN_S, _FIT_MAX_S = 0.001, 60.0
#: The checks of a fit (``fit_check``), from the real pairs in ../shared: trtexec's timed loop keeps
#: the GPU fed back to back (97-99% load through every timed window; 0-2% idle), so a line is busy
#: at half the log's highest GPU load, and a log whose highest is below ``_FIT_PEAK_PCT`` shows no
#: GPU work to check against. Where the fit holds, at least 91% of the fitted timed window's lines
#: are busy (the rest are its last: the GPU's work ends before trtexec's end, stamped to the
#: second), and the last busy line lies within ``STAMP_SLACK_S`` and two to four lines of the
#: window's end; a log that runs on idle past the run puts idle lines there.
_FIT_PEAK_PCT, _FIT_MIN_BUSY, _FIT_SLACK_LINES = 20.0, 0.85, 4


@dataclass(frozen=True, slots=True)
class RunPlacement:
    """Where trtexec's run lies on a log, and what that rests on.

    ``log_start``: the log's first record's wall time; ``log_start_source``: ``measured`` (the log's
    own stamps), ``given`` (``--log-start``) or ``inferred`` (a plain log fitted to trtexec's run).
    ``interval_s``: the interval fitted to a plain log (its lines spread over trtexec's run), with
    ``interval_source`` ``inferred``; None where the log's own spacing is used. ``coverage``: the
    fraction (0 to 1) of trtexec's timed window that the log covers (None where the window has no
    length or no stamps, and for a fitted log, whose span was made trtexec's: unknown),
    ``coverage_source`` what it rests on: ``measured`` (the log's stamps), ``given``
    (``--log-start`` and ``--interval``) or ``assumed`` (``--log-start`` on a plain log spaced at
    the default interval), None with it; ``coverage_note`` says why it is not whole, or why it is
    unknown. ``per_inference_usable``: whether the timed window's energy per
    inference may be given; ``per_inference_note`` why not, or, where it may but rests on a fit,
    that it does. ``note``: overlap, fitting, a fit that fails its check and a timed window that
    measured nothing, in one line, or None."""

    log_start: float
    log_start_source: str
    interval_s: float | None
    interval_source: str | None
    coverage: float | None
    coverage_source: str | None
    coverage_note: str | None
    note: str | None
    per_inference_usable: bool = False
    per_inference_note: str | None = None

    @property
    def plain_log_start(self) -> float | None:
        """The first line's wall time of a log without stamps (``--log-start``, or fitted) for
        placing trtexec's records on its stream; None for a stamped log, whose stamps place them."""
        return None if self.log_start_source == MEASURED else self.log_start


def place_run(run: TrtexecRun, trtexec: str, log: LogSpan, tz: tzinfo,
              log_start: float | None = None) -> tuple[float, str | None]:
    """(the log's first record's wall time, a note when only part of the run lies inside the log
    or its timed window measured nothing): ``placement`` without fitting a plain log."""
    placed = placement(run, trtexec, log, tz, log_start)
    return placed.log_start, placed.note


def placement(run: TrtexecRun, trtexec: str, log: LogSpan, tz: tzinfo, log_start: float | None = None,
              *, fit: bool = False) -> RunPlacement:
    """trtexec's run placed on the log. ``log_start``: ``--log-start``, for a log without stamps.
    ``fit``: a plain log given neither ``--log-start`` nor ``--interval`` is fitted to trtexec's run
    (its first line at trtexec's first stamp, its lines spread evenly to trtexec's last: the log
    was taken around the run, as ``run`` and a script starting tegrastats then trtexec take it),
    and says so; the fit is checked against the GPU's load on the log (``fit_check``). A plain log
    placed by ``--log-start`` alone is spaced at an assumed interval: its coverage is ``assumed``
    and gives no energy per inference (nothing says where it ends: ``--interval`` does). TrtexecError
    (one line) when the run cannot be placed: the log has no stamps, no ``log_start`` and cannot be
    fitted, or has stamps and a ``log_start``; trtexec's log has no stamps; or the two spans do not
    overlap."""
    if log.first_wall is not None and log_start is not None:
        raise TrtexecError(f"--log-start is for a log without timestamps: {log.path} has its own")
    walls = [w for phase in run.phases for w in (phase.start_wall, phase.end_wall) if w is not None]
    if not walls:
        raise TrtexecError(f"trtexec log {trtexec} has no timestamps: its phases cannot be placed on "
                           f"{log.path}")
    run_start, run_end = min(walls), max(walls)
    interval_s: float | None = None
    fitted_note = None
    if log.first_wall is not None:
        start, source = log.first_wall, MEASURED
    elif log_start is not None:
        start, source = log_start, GIVEN
    elif fit:
        start, source = run_start, INFERRED
        interval_s, fitted_note = _fitted(run_start, run_end, trtexec, log)
    else:
        raise TrtexecError(f"{log.path} has no timestamps, so trtexec's run ({trtexec}) cannot be placed "
                           "on it: give --log-start TIME, when its first line was written"
                           + (" (or leave out --interval, to fit the log to trtexec's run)"
                              if log.interval_source == GIVEN else ""))
    if log.last_wall is not None:
        end = log.last_wall
    elif interval_s is not None:
        end = run_end
    else:
        end = start + (log.last_mono - log.first_mono)
    overlap = _overlap(run, trtexec, log, tz, (start, end), (run_start, run_end))
    # Where the log's end lies rests on its start and, for a plain log placed by --log-start, its
    # spacing: given with --interval, else the default's (assumed).
    rests = ASSUMED if source == GIVEN and log.interval_source != GIVEN else source
    check: str | None = None
    coverage: float | None
    coverage_note: str | None
    per_inference: str | None
    if interval_s is not None:
        # Fitted: the log's span was set to trtexec's run, so its coverage is unknown (whole only
        # because it was made so); the J/inference rests on the fit, as its check says.
        coverage, coverage_note = None, FITTED_COVERAGE_NOTE
        usable, per_inference, found = fit_check(run, log, run_start, interval_s)
        # the fit itself is said once, by fitted_note: the note adds only what its check found
        check = None if usable else f"the fit {found}"
    else:
        coverage, coverage_note = _coverage(run, start, end, rests, log)
        usable = coverage is not None and coverage >= MIN_COVERAGE and rests != ASSUMED
        per_inference = coverage_note if not usable else None
    unmeasured = None if run.unmeasured is None else (
        f"trtexec log {trtexec}: {run.unmeasured}, so its run gives no per-inference figures")
    short = coverage_note if coverage is not None and (coverage < 1.0 or rests == ASSUMED) else None
    note = "; ".join(n for n in (fitted_note, overlap, short, check, unmeasured) if n) or None
    return RunPlacement(start, source, interval_s, None if interval_s is None else INFERRED,
                        coverage, None if coverage is None else rests, coverage_note, note,
                        usable, per_inference)


#: How a user places a plain log instead of fitting it (said once in each note).
_FIT_FIX = "; --interval MS and --log-start TIME place it instead"


def fit_check(run: TrtexecRun, log: LogSpan, run_start: float,
              interval_s: float) -> tuple[bool, str, str]:
    """(whether a fit of a plain log to trtexec's run holds, the note saying what the energy per
    inference then rests on, or why it is withheld, and what the check found alone). The fit
    takes the log to span trtexec's run exactly; a log that runs on idle past the run puts idle
    lines in the fitted timed window (its energy per inference reads low), one that runs on into
    other GPU work moves the GPU's load past the window's end. So the fit holds where the fitted
    timed window's lines are busy (``_FIT_MIN_BUSY``) and the log's GPU work ends with it
    (``_FIT_SLACK_LINES``). A log that shows no GPU work (no load, or none above
    ``_FIT_PEAK_PCT``: a DLA run) cannot be checked: the fit stands, and the note says it is
    unchecked."""
    fitted = ("the log fitted to trtexec's run (inferred: its first line at trtexec's first stamp, "
              "its last at trtexec's last)")
    fix = _FIT_FIX
    timed = run.timed
    peak = max((load for _, load in log.gpu_loads), default=0.0)
    if (peak < _FIT_PEAK_PCT or timed is None or timed.start_wall is None or timed.end_wall is None
            or not log.interval_s):
        found = "unchecked: the log shows no GPU work to check it against"
        return True, f"rests on {fitted}, {found}{fix}", found
    scale = interval_s / log.interval_s  # fitted seconds per second of the log's own spacing
    walls = [(run_start + (mono - log.first_mono) * scale, load >= peak / 2) for mono, load in log.gpu_loads]
    inside = [busy for wall, busy in walls if timed.start_wall <= wall <= timed.end_wall]
    off = max(wall for wall, busy in walls if busy) - timed.end_wall
    ends = f"the GPU's work on the log ends {abs(off):.1f} s {'after' if off > 0 else 'before'} the "
    share = sum(inside) / len(inside) if inside else 0.0
    if share >= _FIT_MIN_BUSY and abs(off) <= STAMP_SLACK_S + _FIT_SLACK_LINES * interval_s:
        found = f"checked: {share:.0%} of the timed window's lines show the GPU busy and {ends}window's end"
        return True, f"rests on {fitted}; {found}{fix}", found
    found = (f"does not line up with the GPU's load on the log: {share:.0%} of the fitted timed "
             f"window's lines show the GPU busy and {ends}window's end (the log spans more than "
             "trtexec's run, or another run), so no J/inference")
    return False, f"{fitted} {found}{fix}", found


def _fitted(run_start: float, run_end: float, trtexec: str, log: LogSpan) -> tuple[float, str]:
    """(the interval of a plain log fitted to trtexec's run, the note saying so); TrtexecError
    where it cannot be fitted (one line, or no spacing known)."""
    steps_s = log.last_mono - log.first_mono
    spacing = log.interval_s
    why = None
    if spacing is None or spacing <= 0 or steps_s <= 0:
        why = "it has fewer than two lines" if steps_s <= 0 else "its spacing is unknown"
    elif run_end <= run_start:
        why = "trtexec's run has one stamp"
    if why is not None or spacing is None:
        raise TrtexecError(f"{log.path} has no timestamps and cannot be fitted to trtexec's run "
                           f"({trtexec}): {why}; give --log-start TIME and --interval MS")
    lines = round(steps_s / spacing) + 1
    interval = (run_end - run_start) / (lines - 1)
    if not _FIT_MIN_S <= interval <= _FIT_MAX_S:
        raise TrtexecError(f"{log.path} has no timestamps and its {lines} lines spread over trtexec's "
                           f"{run_end - run_start:.0f} s run ({trtexec}) would be {interval * 1000:g} ms "
                           "apart: not a tegrastats interval; give --log-start TIME and --interval MS")
    return interval, (f"{log.path} has no timestamps: placed on trtexec's run ({trtexec}), its first "
                      f"line at trtexec's first stamp and its {lines} lines spread to trtexec's last, "
                      f"{interval * 1000:.0f} ms apart (inferred; --log-start and --interval place it "
                      "instead)")


def _overlap(run: TrtexecRun, trtexec: str, log: LogSpan, tz: tzinfo, log_span: tuple[float, float],
             run_span: tuple[float, float]) -> str | None:
    """A note where only part of trtexec's run lies inside the log; TrtexecError where none does."""
    (start, end), (run_start, run_end) = log_span, run_span
    spans = (f"trtexec log {trtexec} covers {_span(run_start, run_end, tz)}, {log.path} covers "
             f"{_span(start, end, tz)}")
    overlap = min(run_end, end) - max(run_start, start)
    if overlap < -STAMP_SLACK_S:
        raise TrtexecError(f"{spans}: they do not overlap (trtexec starts {run_start - start:+.0f} s from "
                           "the log's start; --trtexec-offset S moves trtexec's stamps"
                           + (", --log-start the log" if log.first_wall is None else "") + ")")
    if run_start >= start - STAMP_SLACK_S and run_end <= end + STAMP_SLACK_S:
        return None
    # how much of the timed window is cut is the coverage's to say (``_coverage``), once
    return (f"{spans}: only {max(overlap, 0.0):.0f} s of trtexec's {run_end - run_start:.0f} s "
            "overlap; its phases outside the log have no samples")


def _coverage(run: TrtexecRun, start: float, end: float, source: str,
              log: LogSpan) -> tuple[float | None, str | None]:
    """(the fraction of trtexec's timed window inside the log's ``start``..``end``, a note where it
    is not whole, not known, or rests on something other than the log's stamps)."""
    timed = run.timed
    if timed is None or timed.start_wall is None or timed.end_wall is None:
        return None, "trtexec's timed window has no stamps: the log's coverage of it is unknown"
    length = timed.end_wall - timed.start_wall
    if length <= 0:
        return None, "trtexec's timed window has no length: the log's coverage of it is unknown"
    inside = min(timed.end_wall, end) - max(timed.start_wall, start)
    coverage = min(max(inside / length, 0.0), 1.0)
    if source == ASSUMED:
        spacing = "" if log.interval_s is None else f" of {log.interval_s * 1000:.0f} ms"
        return coverage, (f"{log.path} has no timestamps and no --interval: placed by --log-start, its "
                          f"lines spaced at an assumed interval{spacing}, it covers {coverage:.1%} of "
                          "trtexec's timed window only if that spacing is right, so no J/inference; "
                          "give --interval MS")
    rests = " (with the log placed by --log-start and --interval)" if source == GIVEN else ""
    if coverage >= 1.0:
        whole = f"the log covers all of trtexec's timed window{rests}"
        return coverage, None if source == MEASURED else whole
    said = (f"the log covers {coverage:.1%} of trtexec's timed window ({max(inside, 0.0):.2f} s of "
            f"{length:.2f} s){rests}")
    if coverage < MIN_COVERAGE:
        return coverage, (f"{said}: below {MIN_COVERAGE:.0%}, so no J/inference (the energy of part of "
                          "the window over all its queries would read low)")
    return coverage, f"{said}: at least {MIN_COVERAGE:.0%}, so J/inference is given"


def _span(first: float, last: float, tz: tzinfo) -> str:
    return f"{_at(first, tz)} to {_at(last, tz)}"


def _at(wall: float, tz: tzinfo) -> str:
    try:
        return datetime.fromtimestamp(wall, tz).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"unix time {wall:.0f}"

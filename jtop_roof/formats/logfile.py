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

import errno
import io
import itertools
import json
import math
import os
import stat
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar, cast

from jtop_roof.formats.jsonout import line_json, parse_line_json
from jtop_roof.formats.parser import parse_line, stamp_of
from jtop_roof.formats.sessions import SessionPlacer, jump_gaps
from jtop_roof.formats.usual import usual_sample
from jtop_roof.model.codec import Tally, cap_sample, encodable_tree, record_from_json
from jtop_roof.model.errors import UserError
from jtop_roof.model.records import SCHEMA_VERSION, Event, Record, Sample
from jtop_roof.model.timeline import MAX_YEAR, MIN_YEAR, Timeline, parse_tz

DEFAULT_INTERVAL_S = 1.0  # tegrastats' own default interval
# Complete stamp groups looked at to infer the interval; few, so that `tegrastats | jroof-tui parse -`
# starts printing within seconds.
INFER_GROUPS = 5
INFER_MAX_LINES = 600  # stop looking after this many lines even if the groups are not complete
#: Following a stamped log that is still short: infer the interval from what came within this time
#: when the stamps have not filled the inference window by then.
INFER_WAIT_S = 10.0
#: The longest interval a stream's times may give (the config's bound): stamps or times years
#: apart would otherwise make replay wait for years before calling a step a gap.
MAX_INTERVAL_S = 3600.0
HEADER_MAX_BYTES = 1 << 20  # a header line longer than this is not one of ours
#: Record types of schema 1 this reader knows; others (added later, additively) are skipped.
KNOWN_TYPES = ("header", "sample", "marker", "event", "work", "power", "processes")
#: Unknown record types said with a note, at most (a hostile file may hold a million).
MAX_NOTED_TYPES = 16

K = TypeVar("K")


#: A line longer than this is no tegrastats line nor one of our records: it is skipped without
#: being held in memory (``/dev/zero``, a binary file, a hostile recording).
MAX_LINE_BYTES = 1 << 20


class LineReader:
    """Text lines of a binary stream, each at most ``limit`` bytes. A longer line is read past in
    bounded pieces and given as a blank line (so line numbers hold), counted in ``long_lines``.
    Undecodable bytes become U+FFFD so a damaged log never stops the reader. ``is_file``: the
    stream is a regular file (there whole, not a live pipe)."""

    def __init__(self, raw: BinaryIO, limit: int = MAX_LINE_BYTES, *, is_file: bool = False) -> None:
        self._raw = raw
        self._limit = limit
        self.is_file = is_file
        self.long_lines = 0

    def __iter__(self) -> Iterator[str]:
        readline, limit = self._raw.readline, self._limit
        while line := readline(limit + 1):
            if len(line) > limit and not line.endswith(b"\n"):
                self.long_lines += 1
                while (more := readline(limit)) and not more.endswith(b"\n"):
                    pass
                line = b"\n"
            yield line.decode("utf-8", "replace")

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> LineReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_text(path: str | Path) -> LineReader:
    """Open a log for reading, by lines (``LineReader``); ``"-"`` is stdin. Only a regular file,
    a pipe, a socket or a terminal is read: OSError for anything else (``/dev/zero`` would never
    end). A FIFO without a writer is not waited for: it reads as empty."""
    if str(path) == "-":
        stdin = sys.stdin.buffer
        try:
            mode = os.fstat(stdin.fileno()).st_mode
            _check_readable_kind(mode, stdin.isatty(), "stdin")
        except (AttributeError, io.UnsupportedOperation):
            return LineReader(stdin)  # a stand-in without a descriptor (tests)
        return LineReader(stdin, is_file=stat.S_ISREG(mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        _check_readable_kind(mode, os.isatty(fd), str(path))
        os.set_blocking(fd, True)
        return LineReader(open(fd, "rb", closefd=True), is_file=stat.S_ISREG(mode))  # the caller closes it
    except BaseException:
        os.close(fd)
        raise


def _check_readable_kind(mode: int, tty: bool, name: str) -> None:
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or tty:
        return
    _refuse(mode, "not a regular file or a pipe", name)


def _refuse(mode: int, why: str, name: str) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    raise OSError(errno.EINVAL, why, name)


def open_regular(path: str | Path) -> BinaryIO:
    """Open a file that must be a regular one (replay, report: they seek and read it again), in
    binary; OSError for a FIFO, a device or a directory, without waiting on a FIFO's writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            _refuse(mode, "not a regular file", str(path))
        os.set_blocking(fd, True)
        return open(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


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
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and obj.get("type") == "header":
        return cast(dict[str, Any], encodable_tree(obj))
    return None


def read_header(path: str | Path) -> dict[str, Any] | None:
    """The header of one of our recordings, or None for a plain tegrastats log (or an empty file).
    Raises OSError when the file cannot be read."""
    with open_regular(path) as f:
        for raw in LineReader(f, HEADER_MAX_BYTES):
            if raw.strip():
                return parse_header_line(raw)
    return None


def decode_record_line(line: str | bytes, tally: Tally | None = None) -> Record | None:
    """One line of a recording -> record. None for a blank, header, unknown or malformed line (a
    kill -9 can leave the last line cut short); bad values are nulled and counted in ``tally``
    (``model.record_from_json``); never raises."""
    text = line.strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: [[[[...]]]] nested past the stack
        return None
    return record_from_json(obj, tally) if isinstance(obj, dict) else None


def is_sample_candidate(line: str) -> bool:
    """Cheap test for a line the parser may take as a sample (it needs RAM or a CPU list)."""
    return "RAM " in line or "CPU [" in line or "cpu [" in line


def stamp_seconds(stamp: str) -> float:
    """Seconds of a ``MM-DD-YYYY HH:MM:SS`` stamp on a naive scale: only differences are used.
    ValueError for an invalid stamp or one the Timeline reads as none (a year out of range)."""
    when = datetime.strptime(stamp, "%m-%d-%Y %H:%M:%S")
    if not MIN_YEAR <= when.year <= MAX_YEAR:
        raise ValueError(f"stamp year out of range: {stamp!r}")
    return when.timestamp()


def infer_interval_s(stamps: Iterable[str | None]) -> float | None:
    """Interval from the stamps of consecutive sample lines (the rule in the module docstring);
    None when the stamps cannot tell (no stamps, or fewer than two stamp changes)."""
    ratios = _interval_ratios(stamps)[0]
    if not ratios:
        return None
    # Whole milliseconds, rounded down: 46 lines a second is 0.021 s, not 0.022 s, which would
    # spread a 46-line second over 0.99 s and a 47-line one past its end.
    median = min(statistics.median(ratios), MAX_INTERVAL_S)
    return max(math.floor(median * 1000 + 1e-6), 1) / 1000


def _interval_ratios(stamps: Iterable[str | None]) -> tuple[list[float], bool]:
    """Seconds per line of the first INFER_GROUPS complete stamp groups, and whether that many
    were found (then later stamps cannot change the interval)."""
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
                    return ratios, True
        complete = group_stamp is not None
        group_stamp, group_lines = stamp, 1
    return ratios, False


def window_is_complete(stamp_groups: int, lines: int) -> bool:
    """True once the lines read are enough for ``infer_interval_s``: the first (maybe partial)
    group, INFER_GROUPS complete ones and the stamp that ends the last, or INFER_MAX_LINES lines."""
    return stamp_groups > INFER_GROUPS + 1 or lines >= INFER_MAX_LINES


def as_tz(tz: tzinfo | str | None) -> tzinfo:
    """Accept a zone object or its text form (None = this machine's zone)."""
    return tz if isinstance(tz, tzinfo) else parse_tz(tz)


class RecordingError(UserError):
    """A recording this program must not read: a newer schema, or another program's header."""


def check_header(header: Mapping[str, Any], where: str = "") -> None:
    """Refuse a header of another program or of a newer schema (RecordingError, one line)."""
    app = header.get("app")
    if app != "jroof-tui":
        raise RecordingError(f"{where}not a jroof recording (its header names app {str(app)[:40]!r})")
    schema = header.get("schema")
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 1:
        raise RecordingError(f"{where}recording header has no valid schema ({str(schema)[:40]!r})")
    if schema > SCHEMA_VERSION:
        raise RecordingError(
            f"{where}recording schema {schema} is newer than this jroof-tui reads ({SCHEMA_VERSION}); "
            "upgrade jroof-tui"
        )


def record_type(line: str | bytes) -> str | None:
    """The ``type`` of a recording line (None for a blank or malformed line)."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    kind = obj.get("type") if isinstance(obj, dict) else None
    return kind if isinstance(kind, str) else None


def unknown_type_note(kind: str, t_mono: float | None) -> Event:
    """Said once per unknown record type: a newer jroof-tui wrote records this one skips."""
    detail = f"skipped records of unknown type {kind[:40]!r} (from a newer jroof-tui?)"
    return Event("note", detail, None, t_mono)


class PlainTimer(Generic[K]):
    """Times for the sample lines of a plain tegrastats log, shared by ``iter_records`` and the
    replay's index so both place every line alike (the interval rule is in the module docstring).

    ``add(key, stamp)`` queues a sample line (``key``: whatever the caller finds it by: a byte
    offset, a line); ``release(final)`` returns the queued ones that can be timed now as (key,
    t_wall or None, t_mono). Lines wait until the interval is known: given, or inferred once enough
    stamp groups are complete (or ``final``, or after ``wait_s``). The first stamp group's size is
    counted then, so the Timeline can place a partial first second at its end."""

    def __init__(self, tz: tzinfo, interval_s: float | None, *, wait_s: float = INFER_WAIT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._tz = tz
        self.interval_s = interval_s or DEFAULT_INTERVAL_S
        self._wait_s = wait_s
        self._clock = clock
        self._pending: list[tuple[K, str | None]] = []
        self._groups = 0
        self._since: float | None = None
        self.timeline: Timeline | None = None

    def add(self, key: K, stamp: str | None) -> None:
        pending = self._pending
        if not pending:
            self._since = self._clock()
            self._groups = 1
        elif stamp != pending[-1][1]:
            self._groups += 1
        pending.append((key, stamp))

    def settled(self) -> bool:
        """True when ``release(False)`` now times every queued line as a release at the end of the
        file would: the timeline is made, the first line has no stamp, or the stamps queued
        already hold all the interval rule reads (so a reader may release as it goes and hold
        only what is not yet timed)."""
        pending = self._pending
        if self.timeline is not None:
            return True
        if not pending:
            return False
        if pending[0][1] is None:
            return True
        return self._groups > INFER_GROUPS + 1 and _interval_ratios([stamp for _, stamp in pending])[1]

    def release(self, final: bool) -> list[tuple[K, float | None, float]]:
        if not self._pending:
            return []
        if self.timeline is None:
            stamps = [stamp for _, stamp in self._pending]
            first_group: int | None = None
            if stamps[0] is not None:
                waited = 0.0 if self._since is None else self._clock() - self._since
                if not (final or window_is_complete(self._groups, len(stamps)) or waited >= self._wait_s):
                    return []
                self.interval_s = infer_interval_s(stamps) or self.interval_s
                lines = next((i for i, stamp in enumerate(stamps) if stamp != stamps[0]), None)
                first_group = lines  # None when the first group may still be growing
            self.timeline = Timeline(self._tz, self.interval_s, first_group_lines=first_group)
        place = self.timeline.place
        out = [(key, *place(stamp)) for key, stamp in self._pending]
        self._pending.clear()
        self._since = None
        return out


@dataclass
class ReadStats:
    """What a reader skipped, for commands that say so (``parse``, ``report``): the 1-based
    numbers of lines that were not valid records, whether the file's last line was one of them (a
    recording cut short by a kill or a full disk), and the values decoding nulled or dropped."""

    skipped_lines: list[int] = field(default_factory=list)
    last_line: int = 0
    tally: Tally = field(default_factory=Tally)
    #: The stream's interval as the replay's index finds it (see ``FileIndex.interval_s``).
    interval_s: float | None = None
    #: ``interval_s`` will not change while the rest is read (a plain log's, from its first record
    #: on: the timer's interval is fixed once it times lines); a recording's may until its end.
    interval_final: bool = False

    @property
    def truncated_tail(self) -> bool:
        return bool(self.skipped_lines) and self.skipped_lines[-1] == self.last_line


#: Samples whose spacing gives a recording's real interval (its header may only say the config's).
INTERVAL_PROBE_SAMPLES = 50


class IntervalProbe:
    """A recording's real interval: the lower median of the steps between its first samples
    (not across a session break), else its header's. One rule for the replay's index and the
    reader, so a replay and ``report`` bound integration steps alike."""

    def __init__(self) -> None:
        self._steps: list[float] = []
        self._last: float | None = None

    def sample(self, t_mono: float, *, after_break: bool = False) -> None:
        last, self._last = self._last, t_mono
        if last is None or after_break or t_mono <= last or len(self._steps) >= INTERVAL_PROBE_SAMPLES:
            return
        self._steps.append(round(t_mono - last, 6))

    @property
    def settled(self) -> bool:
        """True once the steps the rule reads are all in: more samples cannot change it."""
        return len(self._steps) >= INTERVAL_PROBE_SAMPLES

    def interval_s(self, fallback: float) -> float:
        if not self._steps:
            return fallback
        steps = sorted(self._steps)
        # the lower median: one long step does not move it
        return min(steps[(len(steps) - 1) // 2], MAX_INTERVAL_S)


def iter_records(
    lines: Iterable[str],
    *,
    tz: tzinfo | str | None = None,
    interval_s: float | None = None,
    stats: ReadStats | None = None,
) -> Iterator[Record]:
    """Records of a plain tegrastats log or of one of our recordings, with times.

    Recordings: every session placed on one timeline (``SessionPlacer``, with a ``gap`` event
    between sessions); lines that are not valid records are skipped, records of an unknown type
    too (with one note per type); a header this program must not read raises RecordingError.
    Plain logs give one Sample per non-blank line, including ``Sample(is_sample=False)`` for lines
    such as a ``date`` header, so that ``parse`` can report them; samples get times from the
    ``PlainTimer`` (the interval rule is in the module docstring); lines in the usual order take
    ``usual_sample``, the same Sample for less.
    """
    return _read(lines, tz, interval_s, stats, _as_is, usual_sample)


def iter_parse_lines(
    lines: Iterable[str],
    *,
    tz: tzinfo | str | None = None,
    interval_s: float | None = None,
    stats: ReadStats | None = None,
) -> Iterator[str]:
    """What ``jroof-tui parse`` prints: ``parse_line_json`` of each of ``iter_records``' records,
    the same text, with the lines of a plain log in the usual order read straight to JSON."""
    return _read(lines, tz, interval_s, stats, parse_line_json, line_json)


R = TypeVar("R")
#: Reads a line straight to what ``out`` would give for its timed sample, or None (see ``_plain``).
Direct = Callable[[str, Callable[[str | None], tuple[float | None, float]]], "R | None"]


def _read(lines: Iterable[str], tz: tzinfo | str | None, interval_s: float | None, stats: ReadStats | None,
          out: Callable[[Record], R], direct: Direct[R] | None) -> Iterator[R]:
    it = iter(lines)
    for line in it:
        if not line.strip():
            continue
        header = parse_header_line(line)
        if header is not None:
            yield from map(out, _recording_records(header, it, stats if stats is not None else ReadStats()))
        else:
            yield from _plain(line, it, as_tz(tz), interval_s, stats, out, direct)
        return


def _as_is(record: Record) -> Record:
    return record


def _recording_records(header: Mapping[str, Any], rest: Iterator[str], stats: ReadStats) -> Iterator[Record]:
    placer = SessionPlacer(DEFAULT_INTERVAL_S)
    check_header(header)
    placer.new_session(header)
    noted: set[str] = set()
    last_mono: float | None = None
    probe = IntervalProbe()
    number = 1
    for line in rest:
        number += 1
        if not line.strip():
            continue
        stats.last_line = number
        record = decode_record_line(line, stats.tally)
        if record is None:
            kind = record_type(line)
            if kind == "header":
                session = parse_header_line(line) or {}
                check_header(session)
                placer.new_session(session)
            elif kind is None:
                stats.skipped_lines.append(number)
            elif kind not in KNOWN_TYPES and kind not in noted and len(noted) < MAX_NOTED_TYPES:
                noted.add(kind)
                yield unknown_type_note(kind, last_mono)
            continue
        if record.t_mono is None:  # no time to place it by (the replay's index skips it too)
            stats.skipped_lines.append(number)
            continue
        record.t_mono, gap = placer.place(record.t_mono, record.t_wall, sample=isinstance(record, Sample))
        last_mono = record.t_mono
        if isinstance(record, Sample):
            probe.sample(record.t_mono, after_break=gap is not None)
            stats.interval_s = probe.interval_s(placer.interval_s)
        if gap is not None:
            yield gap
        yield record


def _plain(
    first: str,
    rest: Iterator[str],
    tz: tzinfo,
    interval_s: float | None,
    stats: ReadStats | None,
    out: Callable[[Record], R],
    direct: Direct[R] | None,
) -> Iterator[R]:
    """``out`` of each line's Sample, in order. Lines wait until the timer can time the samples
    among them; from then on each line is timed as it comes, as the timer's ``release`` would (one
    Timeline, same order). ``direct(line, place)``, where given, may stand for ``out`` of the line's
    timed sample (``parse``'s JSON straight from the text): it calls ``place(stamp)`` (the
    Timeline's) for a line it takes (a sample line, so a candidate), or returns None, and the line
    is parsed. A parsed sample is held to the decoder's caps (``direct`` declines a line past them);
    a clock jump (``Timeline.jumps``) is a gap event before the line it jumped at."""
    timer: PlainTimer[Sample] = PlainTimer(tz, interval_s)
    tally = stats.tally if stats is not None else Tally()
    waiting: list[Sample] = []
    lines = itertools.chain((first,), rest)
    for line in lines:
        if not line.strip():
            continue
        sample = parse_line(line)
        cap_sample(sample, tally)
        if is_sample_candidate(line):
            timer.add(sample, stamp_of(line))
        waiting.append(sample)
        _set_times(timer.release(False))
        if timer.timeline is not None:
            break
    else:
        _set_times(timer.release(True))
    if stats is not None:
        stats.interval_s, stats.interval_final = timer.interval_s, True
    timeline = timer.timeline
    if timeline is None:
        yield from map(out, waiting)
        return
    gaps = jump_gaps(timeline)
    for sample in waiting:
        while gaps and sample.t_mono is not None and (gaps[0].t_mono or 0.0) <= sample.t_mono:
            yield out(gaps.pop(0))
        yield out(sample)
    yield from map(out, gaps)  # jumped at a line that only looked like a sample, last
    place, jumps = timeline.place, timeline.jumps
    for line in lines:
        if not line or line.isspace():  # blank (as `not line.strip()`, without copying the line)
            continue
        if direct is not None:
            done = direct(line, place)
            if done is not None:
                if jumps:
                    yield from map(out, jump_gaps(timeline))
                yield done
                continue
        sample = parse_line(line)
        cap_sample(sample, tally)
        if is_sample_candidate(line):
            wall, mono = place(stamp_of(line))
            if jumps:
                yield from map(out, jump_gaps(timeline))
            if sample.is_sample:  # a line that only looked like one keeps its slot, not a time
                sample.t_wall, sample.t_mono = wall, mono
        yield out(sample)


def _set_times(timed: list[tuple[Sample, float | None, float]]) -> None:
    for sample, wall, mono in timed:
        if sample.is_sample:  # a line that only looked like one keeps its slot, not a time
            sample.t_wall, sample.t_mono = wall, mono

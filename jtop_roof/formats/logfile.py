"""Reading logs: a plain ``tegrastats --logfile`` capture or one of our recordings (JSON Lines).

Which one a file is follows from its first non-empty line: a JSON object with ``"type": "header"``
makes it a recording, anything else a plain tegrastats log. ``iter_records`` is what
``jroof-tui parse`` streams; the replay source indexes files itself (to seek without parsing every
line) but shares the helpers below so both read a file the same way.

The interval rule and the timing of a plain log's lines are in ``formats.timing``.
"""

from __future__ import annotations

import errno
import io
import itertools
import json
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

from jtop_roof.formats.headers import cut_note, looks_like_header, salvage
from jtop_roof.formats.headers import parse_header_line as parse_header_line
from jtop_roof.formats.jsonout import line_json, parse_line_json
from jtop_roof.formats.parser import parse_line, stamp_of
from jtop_roof.formats.sessions import SessionPlacer, jump_gaps
from jtop_roof.formats.timing import DEFAULT_INTERVAL_S as DEFAULT_INTERVAL_S
from jtop_roof.formats.timing import INFER_GROUPS as INFER_GROUPS
from jtop_roof.formats.timing import INFER_MAX_LINES as INFER_MAX_LINES
from jtop_roof.formats.timing import INFER_WAIT_S as INFER_WAIT_S
from jtop_roof.formats.timing import INTERVAL_PROBE_SAMPLES as INTERVAL_PROBE_SAMPLES
from jtop_roof.formats.timing import MAX_INTERVAL_S as MAX_INTERVAL_S
from jtop_roof.formats.timing import IntervalProbe as IntervalProbe
from jtop_roof.formats.timing import PlainTimer as PlainTimer
from jtop_roof.formats.timing import infer_interval_s as infer_interval_s
from jtop_roof.formats.timing import stamp_seconds as stamp_seconds
from jtop_roof.formats.timing import window_is_complete as window_is_complete
from jtop_roof.formats.userfiles import wait_for_writer
from jtop_roof.formats.usual import usual_sample
from jtop_roof.model.codec import Tally, cap_sample, json_line
from jtop_roof.model.errors import UserError
from jtop_roof.model.info import TimeBasis as TimeBasis
from jtop_roof.model.records import SCHEMA_VERSION, Event, Record, Sample
from jtop_roof.model.schema import decode_record
from jtop_roof.model.timeline import parse_tz

HEADER_MAX_BYTES = 1 << 20  # a header line longer than this is not one of ours
#: Record types of schema 1 this reader knows; others (added later, additively) are skipped.
KNOWN_TYPES = ("header", "sample", "marker", "event", "work", "power", "processes")
#: Unknown record types said with a note, at most (a hostile file may hold a million).
MAX_NOTED_TYPES = 16

#: A line longer than this is no tegrastats line nor one of our records: it is skipped without
#: being held in memory (``/dev/zero``, a binary file, a hostile recording).
MAX_LINE_BYTES = 1 << 20


class LineReader:
    """Text lines of a binary stream, each at most ``limit`` bytes. A longer line is read past in
    bounded pieces and given as a blank line (so line numbers hold), counted in ``long_lines``;
    one that starts as our recording header is read field by field as it passes and given as the
    header it holds (``headers.salvage``: its long fields dropped and said in ``cut``), so a huge
    header never turns a recording into a plain log. Undecodable bytes become U+FFFD so a damaged
    log never stops the reader. ``is_file``: the stream is a regular file (there whole, not a live
    pipe)."""

    def __init__(self, raw: BinaryIO, limit: int = MAX_LINE_BYTES, *, is_file: bool = False) -> None:
        self._raw = raw
        self._limit = limit
        self.is_file = is_file
        self.long_lines = 0

    def __iter__(self) -> Iterator[str]:
        readline, limit = self._raw.readline, self._limit
        while line := readline(limit + 1):
            if len(line) > limit and not line.endswith(b"\n"):
                if looks_like_header(line):
                    line = json_line(salvage(self._rest_of(line))).encode("utf-8", "backslashreplace")
                    yield line.decode("utf-8", "replace")
                    continue
                self.long_lines += 1
                while (more := readline(limit)) and not more.endswith(b"\n"):
                    pass
                line = b"\n"
            yield line.decode("utf-8", "replace")

    def _rest_of(self, head: bytes) -> Iterator[bytes]:
        """``head`` and the rest of its line, in pieces of at most ``limit`` bytes."""
        yield head
        while more := self._raw.readline(self._limit):
            yield more
            if more.endswith(b"\n"):
                return

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> LineReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_text(path: str | Path) -> LineReader:
    """Open a log for reading, by lines (``LineReader``); ``"-"`` is stdin. Only a regular file,
    a pipe, a socket or a terminal is read: OSError for anything else (``/dev/zero`` would never
    end). A FIFO is read once a writer has come (``userfiles.wait_for_writer``), until its end."""
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
        if stat.S_ISFIFO(mode):
            wait_for_writer(fd)
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
    (``model.schema.decode_record``: typed, lenient where a value does not fit); never raises."""
    text = line.strip()
    return decode_record(text, tally) if text else None


def is_sample_candidate(line: str) -> bool:
    """Cheap test for a line the parser may take as a sample (it needs RAM or a CPU list)."""
    return "RAM " in line or "CPU [" in line or "cpu [" in line


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


@dataclass
class ReadStats:
    """What a reader skipped, for commands that say so (``parse``, ``report``): how many lines
    were not valid records and the 1-based number of the last (counts, so a file of junk does not
    grow them), whether the file's last line was one of them (a recording cut short by a kill or a
    full disk), and the values decoding nulled or dropped."""

    skipped_lines: int = 0
    last_skipped: int = 0
    last_line: int = 0
    tally: Tally = field(default_factory=Tally)
    #: The stream's interval as the replay's index finds it (see ``FileIndex.interval_s``).
    interval_s: float | None = None
    #: ``interval_s`` will not change while the rest is read (a plain log's, from its first record
    #: on: the timer's interval is fixed once it times lines; a recording's once ``IntervalProbe``
    #: has its steps, within its first samples).
    interval_final: bool = False
    #: What gave ``interval_s`` and how the stamps were read (None before a sample is timed).
    basis: TimeBasis | None = None
    #: Stamps earlier than the line before them (a clock set back), counted as read.
    clock_backwards: int = 0

    @property
    def truncated_tail(self) -> bool:
        return self.skipped_lines > 0 and self.last_skipped == self.last_line

    def skip(self, number: int) -> None:
        """Line ``number`` is not a valid record."""
        self.skipped_lines += 1
        self.last_skipped = number


def iter_records(
    lines: Iterable[str],
    *,
    tz: tzinfo | str | None = None,
    interval_s: float | None = None,
    stats: ReadStats | None = None,
    tz_given: bool = False,
) -> Iterator[Record]:
    """Records of a plain tegrastats log or of one of our recordings, with times.

    Recordings: every session placed on one timeline (``SessionPlacer``, with a ``gap`` event
    between sessions); lines that are not valid records are skipped, records of an unknown type
    too (with one note per type); a header this program must not read raises RecordingError.
    Plain logs give one Sample per non-blank line, including ``Sample(is_sample=False)`` for lines
    such as a ``date`` header, so that ``parse`` can report them; samples get times from the
    ``PlainTimer`` (the interval rule is in the module docstring); lines in the usual order take
    ``usual_sample``, the same Sample for less. ``tz_given``: ``tz`` is the user's (``--tz``), not
    this machine's (``stats.basis`` says which).
    """
    return _read(lines, tz, interval_s, stats, _as_is, usual_sample, tz_given)


def iter_parse_lines(
    lines: Iterable[str],
    *,
    tz: tzinfo | str | None = None,
    interval_s: float | None = None,
    stats: ReadStats | None = None,
    tz_given: bool = False,
) -> Iterator[str]:
    """What ``jroof-tui parse`` prints: ``parse_line_json`` of each of ``iter_records``' records,
    the same text, with the lines of a plain log in the usual order read straight to JSON."""
    return _read(lines, tz, interval_s, stats, parse_line_json, line_json, tz_given)


R = TypeVar("R")
#: Reads a line straight to what ``out`` would give for its timed sample, or None (see ``_plain``).
Direct = Callable[[str, Callable[[str | None], tuple[float | None, float]]], "R | None"]


def _read(lines: Iterable[str], tz: tzinfo | str | None, interval_s: float | None, stats: ReadStats | None,
          out: Callable[[Record], R], direct: Direct[R] | None, tz_given: bool = False) -> Iterator[R]:
    it = iter(lines)
    for line in it:
        if not line.strip():
            continue
        header = parse_header_line(line)
        if header is not None:
            records = _recording_records(header, it, stats if stats is not None else ReadStats())
            yield from cast("Iterator[R]", records) if out is _as_is else map(out, records)
        else:
            yield from _plain(line, it, as_tz(tz), interval_s, stats, out, direct, tz_given)
        return


def _as_is(record: Record) -> Record:
    return record


def _recording_records(header: Mapping[str, Any], rest: Iterator[str], stats: ReadStats) -> Iterator[Record]:
    placer = SessionPlacer(DEFAULT_INTERVAL_S)
    check_header(header)
    header_said = placer.header_interval(header)
    placer.new_session(header)
    cut = cut_note(header)  # said at the first record's time
    noted: set[str] = set()
    last_mono: float | None = None
    probe = IntervalProbe()
    said_settled, said_for = False, placer.interval_s  # the probe's state when stats were last set
    number = 1
    for line in rest:
        number += 1
        text = line.strip()
        if not text:
            continue
        stats.last_line = number
        record = decode_record(text, stats.tally)  # ``decode_record_line``, stripped once
        if record is None:
            kind = record_type(line)
            if kind == "header" or (kind is None and looks_like_header(line)):  # torn: read what holds
                session = parse_header_line(line) or {}
                check_header(session)
                placer.new_session(session)
                cut = cut_note(session) or cut
            elif kind is None:
                stats.skip(number)
            elif kind not in KNOWN_TYPES and kind not in noted and len(noted) < MAX_NOTED_TYPES:
                noted.add(kind)
                yield unknown_type_note(kind, last_mono)
            continue
        if record.t_mono is None:  # no time to place it by (the replay's index skips it too)
            stats.skip(number)
            continue
        record.t_mono, gap = placer.place(record.t_mono, record.t_wall, sample=isinstance(record, Sample))
        last_mono = record.t_mono
        if cut is not None:
            yield Event("note", cut, record.t_wall, record.t_mono)
            cut = None
        if isinstance(record, Sample):
            probe.sample(record.t_mono, after_break=gap is not None)
            if not (said_settled and said_for == placer.interval_s):  # else the same as said last
                stats.interval_s = probe.interval_s(placer.interval_s)
                stats.basis = probe.basis(placer.interval_s, header_said)
                said_settled, said_for = probe.settled, placer.interval_s
                stats.interval_final = probe.settled  # its steps are all in: no later line moves it
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
    tz_given: bool = False,
) -> Iterator[R]:
    """``out`` of each line's Sample, in order. Lines wait until the timer can time the samples
    among them; from then on each line is timed as it comes, as the timer's ``release`` would (one
    Timeline, same order). Lines before the first sample line have no time to wait for and go out
    as read; what waits is bounded by the timer (``PlainTimer.over_held``), so memory does not grow
    with a file of noise. ``direct(line, place)``, where given, may stand for ``out`` of the line's
    timed sample (``parse``'s JSON straight from the text): it calls ``place(stamp)`` (the
    Timeline's) for a line it takes (a sample line, so a candidate), or returns None, and the line
    is parsed. A parsed sample is held to the decoder's caps (``direct`` declines a line past them);
    a clock jump (``Timeline.jumps``) is a gap event before the line it jumped at."""
    timer: PlainTimer[Sample] = PlainTimer(tz, interval_s, tz_given=tz_given)
    tally = stats.tally if stats is not None else Tally()
    waiting: list[Sample] = []
    lines = itertools.chain((first,), rest)
    for line in lines:
        if not line.strip():
            continue
        sample = parse_line(line)
        cap_sample(sample, tally)
        if is_sample_candidate(line):
            timer.add(sample, stamp_of(line), held_size(line))
        elif not waiting:  # no sample line waits for a time: this one has none to take
            yield out(sample)
            continue
        else:
            timer.hold(held_size(line))
        waiting.append(sample)
        _set_times(timer.release(False))
        if timer.timeline is not None:
            break
    else:
        _set_times(timer.release(True))
    if stats is not None:
        stats.interval_s, stats.interval_final, stats.basis = timer.interval_s, True, timer.basis
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
    if stats is not None:
        stats.clock_backwards = timeline.backwards


def held_size(line: str) -> int:
    """What a line held for the timer counts (``PlainTimer.hold``): its characters without its
    newline, as the replay's index counts the same line read as bytes and decoded."""
    return len(line) - line.endswith("\n")


def _set_times(timed: list[tuple[Sample, float | None, float]]) -> None:
    for sample, wall, mono in timed:
        if sample.is_sample:  # a line that only looked like one keeps its slot, not a time
            sample.t_wall, sample.t_mono = wall, mono

"""The index of a log file: where each record is and when it happened, without parsing it.

For each record line: its byte offset, its time on the stream's timeline (``t_mono``) and its wall
time. Plain tegrastats logs get those from their stamps through the same ``PlainTimer`` that
``logfile.iter_records`` uses (so replay and ``parse`` place every line alike); recordings from
their ``"mono"``/``"t"`` keys, each session placed on one timeline by the same ``SessionPlacer``.
A line is parsed only when it is read back, and seeking is a binary search. A session break of a
recording, and a clock jump of either kind of file (``SessionPlacer``, ``Timeline.jumps``), is a
synthetic ``gap`` event in the index.

The index grows in steps (``step``: ``STEP_BYTES`` of the file each), so a replay plays once its
first step is in (a million lines take seconds to index) and any thread that needs more (the
replay's background indexer, its worker at the end of what is indexed or seeking past it, the
ledger's ``scan``) indexes the next step. Indexing holds a lock; reading does not: entries are
only appended, each one's ``monos`` last (it says how many there are), so a reader sees an entry
whole or not at all. Files are read for the index with ``os.pread``, which leaves the offset of
the reading file alone. Other threads read ``first_mono``, ``last_mono``, ``caught_up`` and
``interval_s``, plain attributes set after each step.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import tzinfo
from typing import Any, BinaryIO

from jtop_roof.formats.headers import cut_note, looks_like_header, salvage, salvage_at
from jtop_roof.formats.logfile import (
    KNOWN_TYPES,
    MAX_LINE_BYTES,
    MAX_NOTED_TYPES,
    IntervalProbe,
    PlainTimer,
    RecordingError,
    TimeBasis,
    check_header,
    decode_record_line,
    open_regular,
    parse_header_line,
    record_type,
    unknown_type_note,
)
from jtop_roof.formats.parser import parse_line, stamp_of
from jtop_roof.formats.sessions import SessionPlacer, jump_gaps
from jtop_roof.formats.usual import usual_sample
from jtop_roof.model.codec import MAX_MONO_S, MAX_WALL_S, Tally
from jtop_roof.model.records import Event, Record
from jtop_roof.sources.walltimes import WallTimes as WallTimes

READ_CHUNK = 1 << 22
#: Bytes one ``step`` indexes (about a thousand tegrastats lines, a few milliseconds): short, so
#: that a thread which needs the next step never waits long for one another thread is taking.
STEP_BYTES = 1 << 19
#: The longest a ``scan`` waits for the player's backfill (``player_first``): a backfill takes tens
#: of milliseconds; a player stopped in the middle of one must not stall the ledger's read for good.
PLAYER_FIRST_S = 1.0
#: How long a ``scan`` still waits after a backfill, while its records are taken in and drawn (in
#: the monitor by the event loop, a thread other than the player's): a thread reading records
#: beside it would take half of the interpreter (CPython shares it evenly between busy threads).
TAKE_IN_S = 0.1
#: A scan looks for the player's backfill once every this many records (about a millisecond of
#: reading), not at each of a million.
SCAN_LOOKS_EVERY = 32

# A top-level key of a recording line. In JSON a quote inside a string is always escaped, so an
# unescaped `"mono":` is a key; record_to_json writes "t" and "mono" before any nested object.
_MONO_KEY = re.compile(rb'(?<!\\)"mono"\s*:\s*(null|-?\d[\d.eE+-]*)')
_WALL_KEY = re.compile(rb'(?<!\\)"t"\s*:\s*(null|-?\d[\d.eE+-]*)')
# A record line's type: record_to_json writes it first.
_RECORD_TYPE = re.compile(rb'^\s*\{\s*"type"\s*:\s*"(\w+)"')
#: Records whose time may come before the stream's first sample (``codec.Check.times``).
_BEFORE_STREAM_TYPES = frozenset({b"marker", b"work"})
_NAN = float("nan")
_SYNTHETIC = -1  # offset of an index entry that is not a line (a session's gap event)
_INT32_MAX = 2**31 - 1


def _number(match: re.Match[bytes] | None, high: float, low: float = 0.0) -> float | None:
    """The time a key holds when it is one ``model.record_from_json`` keeps (low ... high), else None."""
    if match is None or match.group(1) == b"null":
        return None
    try:
        value = float(match.group(1))
    except ValueError:
        return None
    return value if low <= value <= high else None


class FileIndex:
    """Offsets and times of the records of one file (and of the files it is rotated to)."""

    def __init__(self, path: str, *, tz: tzinfo, interval_s: float | None, growing: bool = False,
                 clock: Callable[[], float] = time.monotonic, tz_given: bool = False) -> None:
        """``growing``: the file is followed, so a last line without its newline is still being
        written (else it is the file's last). ``interval_s``: the user's (``--interval``), which
        wins over the stamps; ``tz_given``: ``tz`` is the user's. Raises OSError if the file
        cannot be read."""
        self.path = path
        self._growing = growing
        self._lock = threading.RLock()  # one indexing thread at a time (see the module doc)
        self._closed = False
        self._scans_may_read = threading.Event()  # cleared while the player backfills (player_first)
        self._scans_may_read.set()
        self._scans_resume_at = 0.0  # time.monotonic() at which scans go on after a backfill
        self._scans_wait_until = 0.0  # time.monotonic() past which scans stop waiting for one
        self._cut = False  # a step failed: the index ends where it did (``_cut_short``)
        self._tz = tz
        self._given_interval_s = interval_s
        self._clock = clock
        self.mode: str | None = None  # "plain" | "recording", from the first non-blank line
        self.header: dict[str, Any] | None = None  # the first session's
        self._segments: list[tuple[int, BinaryIO]] = []  # (first record index, file) per inode
        self._offsets = array("i")  # 32-bit while the offsets fit (a million lines: 4 MB less)
        self._monos = array("d")
        self._walls = WallTimes(self._monos)
        self._synthetic: dict[int, Event] = {}
        self._shifts: list[tuple[int, float]] = [(0, 0.0)]  # (first index, t_mono shift) per session
        self._placer = SessionPlacer(interval_s or 1.0)
        self._timer: PlainTimer[int] = PlainTimer(tz, interval_s, clock=clock, tz_given=tz_given)
        self._header_said = False  # the first session's header states an interval
        self._probe = IntervalProbe()
        self._read_offset = 0  # bytes of the current segment indexed (complete lines only)
        self._skipping = False  # inside a line longer than MAX_LINE_BYTES
        self._notes: list[str] = []  # notes waiting for the next record's time
        #: Lines longer than MAX_LINE_BYTES skipped; values nulled or dropped reading records.
        self.long_lines = 0
        self.tally = Tally()
        #: Read by other threads: times of the first and last record indexed.
        self.first_mono: float | None = None
        self.last_mono: float | None = None
        #: True when the index reached the end of the file as it is written (a followed file
        #: grows on: ``poll`` indexes what is appended).
        self.caught_up = False
        self.open_segment()

    # ------------------------------------------------------------------------------ queries

    def __len__(self) -> int:
        return len(self._monos)

    def mono(self, index: int) -> float:
        return self._monos[index]

    @property
    def monos(self) -> array[float]:
        """Sorted stream times of the records (for bisect); owned by the indexing thread."""
        return self._monos

    @property
    def interval_s(self) -> float:
        """The stream's real interval: a plain log's timer's; a recording's median sample step
        (its header may hold only the configured interval), else its header's."""
        if self.mode == "plain":
            return self._timer.interval_s
        return self._probe.interval_s(self._placer.interval_s)

    @property
    def basis(self) -> TimeBasis:
        """What gave ``interval_s`` and how the stamps were read, as ``logfile``'s reader says it
        (``ReadStats.basis``): the same rules, so a replay and ``report`` agree."""
        if self.mode == "plain":
            return self._timer.basis
        return self._probe.basis(self._placer.interval_s, self._header_said)

    @property
    def clock_backwards(self) -> int:
        """Stamps of a plain log earlier than the line before them, indexed so far."""
        timeline = self._timer.timeline
        return 0 if timeline is None else timeline.backwards

    def last_times(self) -> tuple[float | None, float | None]:
        """(t_wall, t_mono) of the file's last record: the rest of the file is indexed first."""
        while self.step():
            pass
        return self.last_indexed_times()

    def last_indexed_times(self) -> tuple[float | None, float | None]:
        """(t_wall, t_mono) of the last record indexed: where a note about the file goes."""
        if not self._monos:
            return None, None
        return self.wall_at(len(self._monos) - 1, self._monos[-1]), self._monos[-1]

    def wall_at(self, index: int, mono: float) -> float | None:
        if index >= len(self._walls) or math.isnan(self._walls[index]):
            return None
        return self._walls[index] - (self._monos[index] - mono)

    def read(self, index: int, noted: set[str], fh: BinaryIO | None = None) -> Record | None:
        """Record ``index`` parsed from its file with its stream times; None for a line that is
        not a record. ``noted``: unknown record types already said (one note each). ``fh``: read
        through this file instead of the index's own (another thread's scan)."""
        if self._offsets[index] == _SYNTHETIC:
            return self._synthetic[index]
        if fh is None:
            starts = [start for start, _ in self._segments]
            _, fh = self._segments[bisect_right(starts, index) - 1]
        fh.seek(self._offsets[index])
        return self._record(index, fh.readline(MAX_LINE_BYTES + 1), noted)

    def read_span(self, start: int, stop: int, noted: set[str]) -> Iterator[Record | None]:
        """``read`` of records ``start`` to ``stop - 1``, in order, their lines read in one go per
        file (a seek's backfill: one read, not a seek and a read per line)."""
        starts = [first for first, _ in self._segments]
        index = start
        while index < stop:
            segment = bisect_right(starts, index) - 1
            end = min(stop, starts[segment + 1] if segment + 1 < len(starts) else stop)
            lines = [i for i in range(index, end) if self._offsets[i] != _SYNTHETIC]
            blob, low = b"", 0
            if lines:
                fh = self._segments[segment][1]
                low, last = self._offsets[lines[0]], self._offsets[lines[-1]]
                fh.seek(low)
                blob = fh.read(last - low) + fh.readline(MAX_LINE_BYTES + 1)
            for i in range(index, end):
                offset = self._offsets[i]
                if offset == _SYNTHETIC:
                    yield self._synthetic[i]
                    continue
                begin = offset - low
                newline = blob.find(b"\n", begin)
                yield self._record(i, blob[begin:] if newline < 0 else blob[begin:newline + 1], noted)
            index = end

    def _record(self, index: int, raw: bytes, noted: set[str]) -> Record | None:
        if self.mode == "recording":
            record = decode_record_line(raw, self.tally)
            if record is None:
                kind = record_type(raw)
                if (kind is not None and kind not in KNOWN_TYPES and kind not in noted
                        and len(noted) < MAX_NOTED_TYPES):
                    noted.add(kind)
                    return unknown_type_note(kind, self._monos[index])
                return None
            if record.t_mono is None:
                record.t_mono = self._monos[index]  # the time the index found (a duplicated key)
            else:
                record.t_mono += self._shifts[bisect_right(self._shifts, (index, math.inf)) - 1][1]
            if isinstance(record, Event) and record.kind == "seek":
                # A seek of the viewer that made this recording (older recordings kept them): a
                # note now, or the UI would take it for a seek of this replay and clear its history.
                return Event("note", f"recorded: {record.detail}", record.t_wall, record.t_mono)
            return record
        text = raw.decode("utf-8", errors="replace")
        wall = self._walls[index]
        times = (None if math.isnan(wall) else wall, self._monos[index])
        usual = usual_sample(text, lambda _stamp: times)  # the reader's short way, the same Sample
        if usual is not None:
            return usual
        sample = parse_line(text)
        if not sample.is_sample:
            return None
        sample.t_wall, sample.t_mono = times
        return sample

    @contextmanager
    def player_first(self) -> Iterator[None]:
        """While inside (a seek's backfill), and ``TAKE_IN_S`` after, every ``scan`` waits before
        its next record (inside, ``PLAYER_FIRST_S`` at most in all): the seek has the interpreter to
        itself, where it would share it with the ledger's read of the whole file."""
        self._scans_wait_until = time.monotonic() + PLAYER_FIRST_S
        self._scans_may_read.clear()
        try:
            yield
        finally:
            self._scans_resume_at = time.monotonic() + TAKE_IN_S
            self._scans_may_read.set()

    def _after_the_player(self) -> None:
        """A scan's wait while the player backfills (``PLAYER_FIRST_S`` at most) and ``TAKE_IN_S``
        after (``player_first``)."""
        if not self._scans_may_read.is_set():
            self._scans_may_read.wait(max(0.0, self._scans_wait_until - time.monotonic()))
        resume_in = self._scans_resume_at - time.monotonic()
        if resume_in > 0:
            time.sleep(min(resume_in, TAKE_IN_S))

    @property
    def player_busy(self) -> bool:
        """True inside ``player_first``."""
        return not self._scans_may_read.is_set()

    def scan(self) -> Iterator[Record]:
        """Every record of a finished single file, in order, as ``read`` gives them, through a
        file of its own (so any thread may scan while the replay plays): the replay's ledger is
        built from this, from the whole file. Past the part indexed it indexes the next step
        itself, through its own file too (the replay's may be closed by then). It waits while
        the player backfills, and a moment after (``player_first``)."""
        noted: set[str] = set()
        with open_regular(self.path) as fh:
            index = 0
            while True:
                if not index % SCAN_LOOKS_EVERY:
                    self._after_the_player()
                if index < len(self._monos):
                    record = self.read(index, noted, fh)
                    index += 1
                    if record is not None:
                        yield record
                elif not self.step(fh.fileno()) and index >= len(self._monos):
                    return

    # ----------------------------------------------------------------------------- indexing

    def open_segment(self) -> None:
        """Raises OSError for a path that is not a regular file (a FIFO, ``/dev/zero``)."""
        fh = open_regular(self.path)  # kept open for seeks; closed by close()
        with self._lock:
            self._segments.append((len(self._monos), fh))
            self._read_offset = 0
            self.caught_up = False

    def close(self) -> None:
        """Close the files (a step under way ends first); ``scan`` can still index the rest."""
        with self._lock:
            self._closed = True
            for _, fh in self._segments:
                fh.close()

    def step(self, fd: int | None = None, *, strict: bool = False) -> bool:
        """Index the next ``STEP_BYTES`` of the file (through ``fd``, else the index's own file);
        False, doing nothing, once the index has caught up with the file or it is closed. A
        later session's refused header or a read error ends the index there with a note, or
        raises when ``strict`` (the file is being opened: refused as a whole)."""
        with self._lock:
            if self.caught_up or self._cut or (fd is None and self._closed):
                return False
            if fd is None:
                fd = self._segments[-1][1].fileno()
            try:
                self._index(fd, final=not self._growing, max_bytes=STEP_BYTES)
            except (RecordingError, OSError) as exc:
                if strict:
                    raise
                self._cut_short(exc)
            return True

    def index_ready(self) -> None:
        """Index until a replay can start: a record is in and the interval will not change as
        more is indexed (a plain log's is fixed once its timer times a line; a recording's once
        its probe has its samples), or the whole file is indexed. Raises as ``__init__``."""
        while not (self._monos and (self.mode == "plain" or self._probe.settled)):
            if not self.step(strict=True):
                return

    def _cut_short(self, exc: Exception) -> None:
        """The index ends at the last entry it holds, with a note saying why (no wrong end)."""
        self._cut = self.caught_up = True
        if self._monos:
            mono = self._monos[-1]
            note = Event("note", f"the rest of {self.path} is not read: {exc}", None, mono)
            self._append(_SYNTHETIC, mono, None, note)
            self.first_mono, self.last_mono = self._monos[0], mono

    def poll(self) -> Iterator[Event]:
        """Follow: index what was appended; the note when the file was truncated (the replay
        checks for rotation, ``rotated``, once it has played what the old file held)."""
        note = self._appended()
        if note is not None:
            yield note  # the lock is not held across the yield

    def _appended(self) -> Event | None:
        with self._lock:
            fh = self._segments[-1][1]
            try:
                if os.fstat(fh.fileno()).st_size < self._read_offset:
                    return self._truncated()
                self.index_new_data(final=False)
            except (OSError, ValueError):  # ValueError: closed by stop()
                pass
            return None

    def rotated(self) -> bool:
        """True when the path now names another file than the one being read."""
        fh = self._segments[-1][1]
        try:
            ours = os.fstat(fh.fileno())
            current = os.stat(self.path)
        except OSError:
            return False  # rotated away and not yet created again: keep the old file
        return (current.st_ino, current.st_dev) != (ours.st_ino, ours.st_dev)

    def _truncated(self) -> Event:
        """The file shrank: forget its index and read it again from the start. The timer is
        kept, so t_mono keeps increasing. The note is at the last record's times."""
        note = Event("note", "file truncated", *self.last_indexed_times())
        for _, fh in self._segments:
            fh.close()
        self._segments.clear()
        self._offsets, self._monos = array("i"), array("d")
        self._walls = WallTimes(self._monos)
        self._synthetic.clear()
        self._shifts = [(0, 0.0)]
        self.mode = self.header = None
        self.first_mono = self.last_mono = None
        self._skipping = self._cut = False
        self.open_segment()
        self.index_new_data(final=False)
        return note

    def index_new_data(self, *, final: bool) -> None:
        """Index the complete lines after the last read, up to the end of the file (a last line
        without its newline too when ``final``: the file is finished)."""
        with self._lock:
            if not (self._closed or self._cut):
                self._index(self._segments[-1][1].fileno(), final=final, max_bytes=None)

    def _index(self, fd: int, *, final: bool, max_bytes: int | None) -> None:
        """Index the lines after the last read: ``max_bytes`` of them (at least one line, however
        long) or up to the end of the file (``caught_up`` then). Reads in chunks so memory stays
        small."""
        start = pos = self._read_offset  # file offset of the first byte of `rest`
        rest = b""
        size = READ_CHUNK if max_bytes is None else min(READ_CHUNK, max_bytes)
        budget = math.inf if max_bytes is None else max_bytes
        at_end = False
        while budget > 0 or pos == start:
            chunk = os.pread(fd, size, pos + len(rest))
            if not chunk:
                at_end = True
                break
            budget -= len(chunk)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()  # partial: still being written, or continued in the next chunk
            for raw in lines:
                self._index_line(raw, pos)
                pos += len(raw) + 1
            if self._timer.settled():  # timed as it goes: only a chunk's lines wait in memory
                self._place(self._timer.release(False))
            if len(rest) > MAX_LINE_BYTES and not self._skipping and self.mode != "plain" \
                    and looks_like_header(rest):  # read field by field, up to its newline
                header, length = salvage_at(lambda size, at: os.pread(fd, size, at), pos)
                self._take_header(header)
                pos += length
                rest = b""
            elif len(rest) > MAX_LINE_BYTES:
                self._long_line(pos)  # not held: read past up to its newline
                pos += len(rest)
                rest = b""
                self._skipping = True
        if final and at_end and rest:
            self._index_line(rest, pos)
            pos += len(rest)
        self._read_offset = pos
        self._place(self._timer.release(final and at_end))
        if self._monos:
            self.first_mono, self.last_mono = self._monos[0], self._monos[-1]
        self.caught_up = at_end

    def _place(self, timed: list[tuple[int, float | None, float]]) -> None:
        """Plain lines the timer timed, into the index, each clock jump's gap before its line."""
        gaps = [] if self._timer.timeline is None else jump_gaps(self._timer.timeline)
        for offset, wall, mono in timed:
            while gaps and gaps[0].t_mono is not None and gaps[0].t_mono <= mono:
                self._append_event(gaps.pop(0))  # before the line the clock jumped at
            self._append(offset, mono, wall)

    def _long_line(self, offset: int) -> None:
        if not self._skipping:
            self.long_lines += 1
            if self.long_lines == 1:
                self._notes.append(f"skipped a line longer than {MAX_LINE_BYTES >> 20} MiB "
                                   f"(at byte {offset}); later ones are skipped too")

    def _index_line(self, raw: bytes, offset: int) -> None:
        if self._skipping:  # the end of a line too long to index
            self._skipping = False
            return
        if len(raw) > MAX_LINE_BYTES:
            if self.mode != "plain" and looks_like_header(raw):
                self._take_header(salvage([raw]))
            else:
                self._long_line(offset)
            return
        if self.mode is None:
            if not raw.strip():
                return
            header = parse_header_line(raw)
            if header is not None:
                self._take_header(header)
                return
            self.mode = "plain"
        if self.mode == "recording":
            self._index_record(raw, offset)
            return
        timer = self._timer
        if b"RAM " not in raw and b"CPU [" not in raw and b"cpu [" not in raw:  # is_sample_candidate
            if timer.waiting and timer.timeline is None:  # held as the reader holds it (_plain)
                text = raw.decode("utf-8", "replace")
                if text.strip():
                    timer.hold(len(text))
                    if timer.over_held:
                        self._place(timer.release(False))
            return
        if timer.timeline is not None:
            timer.add(offset, stamp_of(raw[:40].decode("latin-1")))
            return
        timer.add(offset, stamp_of(raw[:40].decode("latin-1")), len(raw.decode("utf-8", "replace")))
        if timer.over_held:  # at this very line, as the reader does, so both time lines alike
            self._place(timer.release(False))

    def _take_header(self, header: dict[str, Any]) -> None:
        """A session's header: the file's first makes it a recording; its cut fields are said."""
        check_header(header, f"{self.path}: ")
        if self.mode is None:
            self.mode, self.header = "recording", header
            self._header_said = self._placer.header_interval(header)
        self._placer.new_session(header)
        note = cut_note(header)
        if note is not None:
            self._notes.append(note)

    def _index_record(self, raw: bytes, offset: int) -> None:
        typed = _RECORD_TYPE.match(raw)
        kind = None if typed is None else typed.group(1)
        low = -MAX_MONO_S if kind in _BEFORE_STREAM_TYPES else 0.0
        mono = _number(_MONO_KEY.search(raw), MAX_MONO_S, low)
        if mono is None:
            if b'"header"' in raw[:64]:
                header = parse_header_line(raw)
                if header is not None:
                    self._take_header(header)
            return  # the header, a cut-off line, or a record without a time
        wall = _number(_WALL_KEY.search(raw), MAX_WALL_S)
        is_sample = kind == b"sample"
        placed, gap = self._placer.place(mono, wall, sample=is_sample)
        if gap is not None:
            self._append_event(gap)
            self._shifts.append((len(self._monos), placed - mono))
        if is_sample:
            self._probe.sample(placed, after_break=gap is not None)
        self._append(offset, placed, wall)

    def _append_event(self, event: Event) -> None:
        """A synthetic entry (a gap the timing made), at its time."""
        assert event.t_mono is not None
        self._append(_SYNTHETIC, event.t_mono, event.t_wall, event)

    def _append(self, offset: int, mono: float, wall: float | None, event: Event | None = None) -> None:
        """One entry; its ``monos`` last, so a reader never sees it in part (module doc)."""
        if self._monos and mono < self._monos[-1]:
            mono = self._monos[-1]  # keep the index sorted for bisect
        while self._notes:  # said at the first record after them
            self._synthetic[len(self._monos)] = Event("note", self._notes.pop(0), None, mono)
            self._offsets.append(_SYNTHETIC)
            self._walls.append(mono, _NAN)
            self._monos.append(mono)
        if event is not None:
            self._synthetic[len(self._monos)] = event
        if offset > _INT32_MAX and self._offsets.typecode == "i":
            self._offsets = array("q", self._offsets)  # a file past 2 GiB
        self._offsets.append(offset)
        self._walls.append(mono, _NAN if wall is None else wall)
        self._monos.append(mono)


"""Replay of a ``tegrastats --logfile`` capture or of one of our recordings, with transport controls.

Loading indexes the file without parsing it: for each record line, its byte offset, its time on the
stream's timeline (``t_mono``) and its wall time. Plain logs get those from their stamps through a
Timeline (or index x interval without stamps); recordings from their ``"mono"``/``"t"`` keys. A
line is parsed only when it is played, so a 24 h log opens in a fraction of a second and seeking
is a binary search.

Pacing: a playhead moves along ``t_mono`` at ``speed`` seconds per second; a record is emitted
when the playhead reaches it. Controls (pause, step, speed, seek) come from the UI thread while
``records()`` runs in a worker thread; they only change state under a lock and wake the worker.

A seek emits ``Event(kind="seek", t_mono=target)`` (the UI clears its history on it), then the
records of the ``backfill_s`` seconds before the target at once, so plots are full again, then
plays on from the target. Looping (the demo) goes on with times moved on by the file's length, so
the stream stays continuous, and says so with a ``note`` event. ``follow`` starts at the end
of the file like ``tail -f`` (after the same backfill) and then plays lines as they are written.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from datetime import tzinfo
from pathlib import Path
from typing import Any, BinaryIO

from jtop_roof.config import MAX_SPEED, MIN_SPEED
from jtop_roof.logfile import (
    DEFAULT_INTERVAL_S,
    as_tz,
    decode_record_line,
    infer_interval_s,
    parse_header_line,
    window_is_complete,
)
from jtop_roof.model import Event, Record, Sample
from jtop_roof.parser import parse_line, stamp_of
from jtop_roof.sources.base import Source
from jtop_roof.timeline import Timeline, local_tz_name

POLL_S = 0.25  # how often a followed file is checked, and the longest single wait
# Following a stamped log that is still short: infer the interval from what came within this time
# when the stamps have not filled the inference window by then.
INFER_WAIT_S = 10.0
READ_CHUNK = 1 << 22
# Keys of a recording header that describe the old session, not the data: not passed on.
_SESSION_KEYS = ("type", "schema", "app", "version", "start_wall", "start_mono", "command")

# A top-level key of a recording line. In JSON a quote inside a string is always escaped, so an
# unescaped `"mono":` is a key; record_to_json writes "t" and "mono" before any nested object.
_MONO_KEY = re.compile(rb'(?<!\\)"mono"\s*:\s*(null|-?\d[\d.eE+-]*)')
_WALL_KEY = re.compile(rb'(?<!\\)"t"\s*:\s*(null|-?\d[\d.eE+-]*)')
_NAN = float("nan")


def _number(match: re.Match[bytes] | None) -> float | None:
    if match is None or match.group(1) == b"null":
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


class ReplaySource(Source):
    """Plays a log file at its recorded pace (times ``speed``); see the module docstring."""

    kind = "replay"

    def __init__(
        self,
        path: str | Path,
        *,
        speed: float = 1.0,
        interval_ms: int | None = None,
        tz: tzinfo | str | None = None,
        follow: bool = False,
        loop: bool = False,
        backfill_s: float = 120.0,
        hold_at_end: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """``interval_ms``: spacing of a log without stamps (default 1 s); a stamped log's
        interval comes from its stamps (logfile's interval rule). ``backfill_s``: how much comes
        at once after a seek. ``hold_at_end``: at the end (without follow or loop) wait for a seek
        instead of ending, as a UI wants. ``clock``/``sleep`` are injectable for tests; the default
        sleep is woken at once by any control. Raises OSError if the file cannot be read."""
        self.path = str(path)
        self._tz = as_tz(tz)
        if tz is None:
            self._tz_name = local_tz_name()
        else:
            self._tz_name = tz if isinstance(tz, str) else getattr(tz, "key", None) or str(tz)
        self._interval_s = interval_ms / 1000.0 if interval_ms else DEFAULT_INTERVAL_S
        self._follow = follow
        self._loop = loop
        self._backfill_s = max(0.0, backfill_s)
        self._hold_at_end = hold_at_end
        self._clock = clock
        self._sleep = sleep

        self._cond = threading.Condition()
        self._stopped = False
        self._running = False
        self._paused = False
        self._speed = self._clamp_speed(speed, 1.0)
        self._steps = 0
        self._generation = 0  # bumped by every control, so a waiting worker re-plans
        self._pending_seek: float | None = None  # target position in seconds from the start
        self._anchor_mono: float | None = None  # the playhead was at anchor_mono ...
        self._anchor_clock = 0.0  # ... at this clock reading
        self._position_mono: float | None = None
        self._at_end = False
        self._next = 0  # index of the next record to play (worker thread only)
        # Added to every played time after a loop, so that looped data reads as one continuous
        # stream (plots and energy keep running) rather than time jumping back.
        self._loop_offset = 0.0

        # The index: per record line, its file segment, offset, t_mono and t_wall (nan: unknown).
        self._segments: list[tuple[int, BinaryIO]] = []  # (first record index, file) per inode
        self._offsets = array("q")
        self._monos = array("d")
        self._walls = array("d")
        self._mode: str | None = None  # "plain" | "recording", from the first non-blank line
        self._header: dict[str, Any] | None = None
        self._timeline: Timeline | None = None
        self._pending: list[tuple[int, str | None]] = []  # plain lines (offset, stamp) not yet timed
        self._pending_groups = 0
        self._pending_since: float | None = None  # clock when the first pending line came
        self._read_offset = 0  # bytes of the current segment indexed (complete lines only)
        self._last_poll = -math.inf

        self._open_segment()
        self._index_new_data(final=not follow)

    # -- controls (any thread) -------------------------------------------------------------

    def pause(self) -> None:
        with self._cond:
            if not self._paused:
                self._anchor_mono = self._playhead()
                self._paused = True
            self._changed()

    def resume(self) -> None:
        with self._cond:
            if self._paused:
                self._paused = False
                self._steps = 0
                self._anchor_clock = self._clock()
            self._changed()

    def toggle_pause(self) -> None:
        with self._cond:
            if self._paused:
                self.resume()
            else:
                self.pause()

    def step(self) -> None:
        """Emit exactly one more sample (and any marker or event before it), then stay paused.
        Pauses first when playing."""
        with self._cond:
            self.pause()
            self._steps += 1
            self._changed()

    def set_speed(self, speed: float) -> None:
        """Clamped to 0.25x ... 64x; the playhead keeps its place."""
        with self._cond:
            if not self._paused:
                self._anchor_mono = self._playhead()
                self._anchor_clock = self._clock()
            self._speed = self._clamp_speed(speed, self._speed)
            self._changed()

    def seek(self, seconds: float, relative: bool = True) -> None:
        """Move the playhead by ``seconds`` (or to ``seconds`` from the start), within the file."""
        with self._cond:
            target = self.position_s + seconds if relative else seconds
            self._request_seek(target)

    def seek_to(self, position: str) -> None:
        """``"start"`` or ``"end"`` of the file."""
        if position not in ("start", "end"):
            raise ValueError(f"seek_to expects 'start' or 'end', not {position!r}")
        with self._cond:
            self._request_seek(0.0 if position == "start" else self.duration_s)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._changed()
            if not self._running:
                self._close_segments()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def position_s(self) -> float:
        """Seconds from the first record to the last one played (or to a pending seek target)."""
        with self._cond:
            if self._pending_seek is not None:
                return self._pending_seek
            if self._position_mono is None or not self._monos:
                return 0.0
            return max(0.0, self._position_mono - self._monos[0])

    @property
    def duration_s(self) -> float:
        """Seconds from the first record to the last one indexed (grows while following)."""
        with self._cond:
            return self._monos[-1] - self._monos[0] if self._monos else 0.0

    @property
    def following(self) -> bool:
        """True while follow mode has played everything written so far and waits for more."""
        return self._follow and self._at_end

    @property
    def follow_enabled(self) -> bool:
        """Whether the file is tailed for new lines (``--follow`` or ``set_follow``)."""
        return self._follow

    def set_follow(self, on: bool) -> None:
        """Tail the file for new lines from now on (like ``tail -f``), or stop; thread-safe. A
        looping source (the demo) has nothing to follow and ignores it."""
        with self._cond:
            if not self._loop:
                self._follow = on
                self._changed()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self._header is not None:
            out.update({k: v for k, v in self._header.items() if k not in _SESSION_KEYS})
            if "source" in self._header:
                out["recorded_source"] = self._header["source"]
        else:
            out["tz"] = self._tz_name
        out["source"] = self.kind
        out["file"] = self.path
        header_interval = (self._header or {}).get("interval_ms")
        out["interval_ms"] = header_interval or round(self._interval_s * 1000)
        return out

    # -- the worker ------------------------------------------------------------------------

    def records(self) -> Iterator[Record]:
        with self._cond:
            self._running = True
        try:
            if self._follow and not self._stopped:
                yield from self._jump(self.duration_s, event=False)
            yield from self._play()
        finally:
            with self._cond:
                self._running = False
            self._close_segments()

    def _play(self) -> Iterator[Record]:
        arrived = False  # the end was reached and said so
        while True:
            with self._cond:
                if self._stopped:
                    return
                seek, self._pending_seek = self._pending_seek, None
                paused, steps, generation = self._paused, self._steps, self._generation
            if seek is not None:
                arrived = False
                yield from self._jump(seek, event=True)
                continue
            if self._follow and (
                self._next >= len(self._monos) or self._clock() - self._last_poll >= POLL_S
            ):
                yield from self._poll()
            if self._next >= len(self._monos):
                self._at_end = True
                if self._follow:
                    self._idle(POLL_S, generation)
                elif self._loop and self._monos:
                    yield self._restart()
                elif self._hold_at_end:
                    if not arrived:
                        arrived = True
                        yield Event("note", "end of replay", None, self._monos[-1] if self._monos else None)
                    self._idle(POLL_S, generation)
                else:
                    return
                continue
            self._at_end = False
            mono = self._monos[self._next]
            if paused and steps == 0:
                self._idle(POLL_S, generation)
                continue
            if not paused:
                wait = self._due(mono) - self._clock()
                if wait > 0:
                    self._idle(min(wait, POLL_S), generation)
                    continue
            record = self._load(self._next)
            self._next += 1
            if record is None:
                continue
            with self._cond:
                if self._pending_seek is None:
                    self._position_mono = mono
                if paused and isinstance(record, Sample) and self._steps > 0:
                    self._steps -= 1
                    self._anchor_mono = mono
            yield record

    def _jump(self, target_s: float, *, event: bool) -> Iterator[Record]:
        """Seek: the seek event, the backfill before the target, then play on from the target."""
        if not self._monos:
            return
        first, last = self._monos[0], self._monos[-1]
        target = min(max(first + target_s, first), last)
        index = bisect_left(self._monos, target)
        if event:
            wall = self._wall_at(index, target)
            yield Event(
                "seek",
                f"seek to {target - first:.1f} s",
                None if wall is None else wall + self._loop_offset,
                target + self._loop_offset,
            )
        start = bisect_left(self._monos, target - self._backfill_s)
        for i in range(start, index):
            if self._stopped:
                return
            record = self._load(i)
            if record is not None:
                yield record
        self._next = index
        with self._cond:
            self._anchor_mono = target
            self._anchor_clock = self._clock()
            self._position_mono = target

    def _restart(self) -> Event:
        """Loop: back to the first record, which plays one interval after the last, with its times
        moved on by the length of the file so that the stream stays continuous."""
        first = self._monos[0]
        self._next = 0
        with self._cond:
            self._anchor_mono = first - self._interval_s
            self._anchor_clock = self._clock()
            self._position_mono = first
        self._loop_offset += self._monos[-1] - first + self._interval_s
        wall = self._wall_at(0, first)
        return Event(
            "note",
            "loop: back to the start of the file",
            None if wall is None else wall + self._loop_offset,
            first + self._loop_offset,
        )

    def _idle(self, timeout: float, generation: int) -> None:
        """Wait up to ``timeout`` s; the default wait ends at once when a control changes."""
        if self._sleep is not None:
            self._sleep(timeout)
            return
        with self._cond:
            if self._generation == generation and not self._stopped:
                self._cond.wait(timeout)

    # -- state helpers (called with the lock held) ------------------------------------------

    def _changed(self) -> None:
        self._generation += 1
        self._cond.notify_all()

    def _request_seek(self, target_s: float) -> None:
        self._pending_seek = min(max(target_s, 0.0), self.duration_s)
        self._changed()

    def _playhead(self) -> float | None:
        if self._anchor_mono is None or self._paused:
            return self._anchor_mono
        return self._anchor_mono + (self._clock() - self._anchor_clock) * self._speed

    def _due(self, mono: float) -> float:
        """Clock reading at which the record at ``mono`` should play."""
        with self._cond:
            if self._anchor_mono is None:
                self._anchor_mono, self._anchor_clock = mono, self._clock()
            return self._anchor_clock + (mono - self._anchor_mono) / self._speed

    @staticmethod
    def _clamp_speed(speed: float, fallback: float) -> float:
        if not isinstance(speed, (int, float)) or math.isnan(speed):
            return fallback
        return min(max(float(speed), MIN_SPEED), MAX_SPEED)

    def _wall_at(self, index: int, mono: float) -> float | None:
        if index >= len(self._walls) or math.isnan(self._walls[index]):
            return None
        return self._walls[index] - (self._monos[index] - mono)

    # -- reading the file --------------------------------------------------------------------

    def _load(self, index: int) -> Record | None:
        """Record ``index`` with its times as played (moved on after loops)."""
        record = self._read(index)
        if record is not None and self._loop_offset:
            if record.t_mono is not None:
                record.t_mono += self._loop_offset
            if record.t_wall is not None:
                record.t_wall += self._loop_offset
        return record

    def _read(self, index: int) -> Record | None:
        """Parse record ``index`` from its file; None for a line that is not a sample/record."""
        starts = [start for start, _ in self._segments]
        _, fh = self._segments[bisect_right(starts, index) - 1]
        fh.seek(self._offsets[index])
        raw = fh.readline()
        if self._mode == "recording":
            record = decode_record_line(raw)
            if isinstance(record, Event) and record.kind == "seek":
                # A seek of the viewer that made this recording (older recordings kept them): a
                # note now, or the UI would take it for a seek of this replay and clear its history.
                return Event("note", f"recorded: {record.detail}", record.t_wall, record.t_mono)
            return record
        sample = parse_line(raw.decode("utf-8", errors="replace"))
        if not sample.is_sample:
            return None
        sample.t_mono = self._monos[index]
        wall = self._walls[index]
        sample.t_wall = None if math.isnan(wall) else wall
        return sample

    def _open_segment(self) -> None:
        fh = open(self.path, "rb")  # kept open for seeks; closed by _close_segments
        self._segments.append((len(self._monos), fh))
        self._read_offset = 0

    def _close_segments(self) -> None:
        for _, fh in self._segments:
            fh.close()

    def _poll(self) -> Iterator[Record]:
        """Follow: index what was appended; cope with truncation and rotation."""
        self._last_poll = self._clock()
        fh = self._segments[-1][1]
        try:
            ours = os.fstat(fh.fileno())
            if ours.st_size < self._read_offset:
                yield self._truncated()
                return
            with self._cond:
                self._index_new_data(final=False)
            current = os.stat(self.path)
        except OSError:
            return  # rotated away and not yet created again: keep the old file
        played_all = self._next >= len(self._monos)
        if played_all and (current.st_ino, current.st_dev) != (ours.st_ino, ours.st_dev):
            # rotated: reopen once everything the old file held is played, so the note comes
            # between the old file's last record and the new file's first
            with self._cond:
                self._open_segment()
                self._index_new_data(final=False)
                self._anchor_mono = None  # the new file's first record plays at once
            yield Event("note", "file rotated: reading the new file", None, self._last_mono())

    def _truncated(self) -> Event:
        """The file shrank: forget its index and read it again from the start. The Timeline is
        kept, so t_mono keeps increasing."""
        with self._cond:
            note = Event("note", "file truncated", None, self._last_mono())
            self._close_segments()
            self._segments.clear()
            self._offsets, self._monos, self._walls = array("q"), array("d"), array("d")
            self._mode = self._header = None
            self._pending.clear()
            self._pending_groups = 0
            self._pending_since = None
            self._next = 0
            self._anchor_mono = None
            self._open_segment()
            self._index_new_data(final=False)
        return note

    def _last_mono(self) -> float | None:
        return self._monos[-1] if self._monos else None

    def _index_new_data(self, *, final: bool) -> None:
        """Index the complete lines after ``_read_offset`` (a last line without its newline too
        when ``final``: the file is finished). Reads in chunks so memory stays small."""
        fh = self._segments[-1][1]
        fh.seek(self._read_offset)
        pos = self._read_offset  # file offset of the first byte of `rest`
        rest = b""
        while chunk := fh.read(READ_CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()  # partial: still being written, or continued in the next chunk
            for raw in lines:
                self._index_line(raw, pos)
                pos += len(raw) + 1
        if final and rest:
            self._index_line(rest, pos)
            pos += len(rest)
        self._read_offset = pos
        self._settle_interval(final)

    def _index_line(self, raw: bytes, offset: int) -> None:
        if self._mode is None:
            if not raw.strip():
                return
            self._header = parse_header_line(raw)
            self._mode = "plain" if self._header is None else "recording"
            if self._header is not None:
                interval_ms = self._header.get("interval_ms")
                if isinstance(interval_ms, (int, float)) and interval_ms > 0:
                    self._interval_s = interval_ms / 1000.0
                return
        if self._mode == "recording":
            mono = _number(_MONO_KEY.search(raw))
            if mono is None:
                return  # the header, a cut-off line, or a record without a time
            if self._monos and mono < self._monos[-1]:
                mono = self._monos[-1]  # keep the index sorted for bisect
            wall = _number(_WALL_KEY.search(raw))
            self._append(offset, mono, wall)
            return
        if b"RAM " not in raw and b"CPU [" not in raw and b"cpu [" not in raw:
            return  # logfile.is_sample_candidate, on bytes
        stamp = stamp_of(raw[:40].decode("latin-1"))
        pending = self._pending
        if not pending:
            self._pending_since = self._clock()
            self._pending_groups = 1
        elif stamp != pending[-1][1]:
            self._pending_groups += 1
        pending.append((offset, stamp))

    def _settle_interval(self, final: bool) -> None:
        """Plain logs: once the interval is known (given, or inferred from enough stamps), give
        the lines waiting for it their times. Lines wait here even then, so they are timed in
        one batch per read."""
        if not self._pending:
            return
        if self._timeline is None:
            stamps = [stamp for _, stamp in self._pending]
            if stamps[0] is not None:
                since = self._pending_since
                waited = 0.0 if since is None else self._clock() - since
                complete = window_is_complete(self._pending_groups, len(stamps))
                if not (final or complete or waited >= INFER_WAIT_S):
                    return
                self._interval_s = infer_interval_s(stamps) or self._interval_s
            self._timeline = Timeline(self._tz, self._interval_s)
        assign = self._timeline.assign
        probe = Sample()  # only its stamp matters to the Timeline; reused, it is cheap
        offsets, monos, walls = self._offsets, self._monos, self._walls
        for offset, stamp in self._pending:
            probe.stamp = stamp
            assign(probe)
            offsets.append(offset)
            monos.append(probe.t_mono or 0.0)
            walls.append(_NAN if probe.t_wall is None else probe.t_wall)
        self._pending.clear()
        self._pending_since = None

    def _append(self, offset: int, mono: float, wall: float | None) -> None:
        self._offsets.append(offset)
        self._monos.append(mono)
        self._walls.append(_NAN if wall is None else wall)

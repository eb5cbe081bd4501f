"""Replay of a ``tegrastats --logfile`` capture or of one of our recordings, with transport controls.

Three jobs: the index (``FileIndex``: where each record is and when, shared timing rules with
``parse``), pacing with transport controls (here), and follow (polling the index for appended
data). A record is parsed only when it is played, and seeking is a binary search. The replay
starts once the index's first step is in (``FileIndex.index_ready``); from ``records()`` on, a
thread of its own indexes the rest while it plays (a million lines take seconds), and the worker,
at the end of what is indexed or seeking past it, waits only until the index reaches what it
needs. Until the index is whole, ``duration_s`` is the part indexed and ``indexing`` says so.

Pacing: a playhead moves along ``t_mono`` at ``speed`` seconds per second; a record is emitted
when the playhead reaches it. Controls (pause, step, speed, seek) come from the UI thread while
``records()`` runs in a worker thread; they only change state under a lock and wake the worker.

A seek emits ``Event(kind="seek", t_mono=target)`` (the UI clears its history on it), then the
records of the ``backfill_s`` seconds before the target at once, so plots are full again, then plays
on from the target. Meanwhile the ledger's read of the whole file waits (``player_first``), and
``backfilling`` tells the consumer that more of the seek's records follow at once. A step to the
next record longer than max(5 s, 10 intervals) (a board without RTC logs 1970 until NTP sets the
clock) is not waited for: it becomes a ``gap`` event and the record plays at once. Looping (the
demo) goes on with times moved on by the file's length, so the stream stays continuous, and says so
with a ``note`` event. ``follow`` starts at the end of the file like ``tail -f`` (after the same
backfill) and then plays lines as they are written.
"""

from __future__ import annotations

import math
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import tzinfo
from itertools import chain
from pathlib import Path
from typing import Any

from jtop_roof.formats.logfile import as_tz
from jtop_roof.formats.trtexec_span import fitted_timing
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.model.settings import MAX_SPEED, MIN_SPEED
from jtop_roof.model.timeline import local_tz_name, max_step_for
from jtop_roof.sources.base import Source
from jtop_roof.sources.fileindex import FileIndex

POLL_S = 0.25  # how often a followed file is checked (a file not followed waits for what is due)
# Keys of a recording header that describe the old session, not the data: not passed on.
_SESSION_KEYS = ("type", "schema", "app", "version", "start_wall", "start_mono", "command")


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
        tz_given: bool | None = None,
        interval_s: float | None = None,
    ) -> None:
        """``interval_ms``: the user's interval (``interval_s``, in seconds, instead: one fitted to
        trtexec's run, ``runtime.inputs``), which wins over a log's stamps (None: a stamped log's
        interval comes from its stamps, logfile's interval rule; 1 s is assumed for a log without).
        ``tz_given``: ``tz`` is the user's (default: when ``tz`` is given at all). ``backfill_s``:
        how much comes at once after a seek. ``hold_at_end``: at the end (without follow or loop)
        wait for a seek instead of ending, as a UI wants. ``clock``/``sleep`` are injectable for
        tests; the default sleep is woken at once by any control. Raises OSError if the file
        cannot be read, and ``logfile.RecordingError`` for a recording this program must not read."""
        self.path = str(path)
        self._tz = as_tz(tz)
        if tz is None:
            self._tz_name = local_tz_name()
        else:
            self._tz_name = tz if isinstance(tz, str) else getattr(tz, "key", None) or str(tz)
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

        self._last_poll = -math.inf
        self._last_played: float | None = None  # t_mono of the last record played (worker only)
        self._noted_types: set[str] = set()

        self._seeking: float | None = None  # the target of a seek waiting for the index

        given_interval_s = interval_s or (interval_ms / 1000.0 if interval_ms else None)
        self._fitted_interval_s = interval_s  # fitted to trtexec's run: said inferred
        self.index = FileIndex(self.path, tz=self._tz, interval_s=given_interval_s, growing=follow,
                               clock=clock, tz_given=tz is not None if tz_given is None else tz_given)
        try:
            self.index.index_ready()
        except BaseException:
            self.index.close()
            raise

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
            self._request_seek(0.0 if position == "start" else math.inf)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._changed()
            if not self._running:
                self.index.close()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def position_s(self) -> float:
        """Seconds from the first record to the last one played (or to a seek's target, within
        the part indexed)."""
        with self._cond:
            target = self._pending_seek if self._pending_seek is not None else self._seeking
            if target is not None:
                return min(target, self.duration_s)
            first = self.index.first_mono
            if self._position_mono is None or first is None:
                return 0.0
            return max(0.0, self._position_mono - first)

    @property
    def duration_s(self) -> float:
        """Seconds from the first record to the last one indexed (grows while ``indexing`` and
        while following); read without a lock, so indexing never stalls the caller."""
        first, last = self.index.first_mono, self.index.last_mono
        return 0.0 if first is None or last is None else last - first

    @property
    def backfilling(self) -> bool:
        """True when the record just handed out is a seek's event or part of its backfill, and
        more of them follow at once (the last is handed out with this False): a consumer may
        gather them and take them in as one batch. Read in the thread that takes the records."""
        return self.index.player_busy

    @property
    def indexing(self) -> bool:
        """True while the file is still being indexed: ``duration_s`` is the part indexed so far,
        not the file's length."""
        return not self.index.caught_up

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

    @property
    def whole_file(self) -> bool:
        """True when the file is all there is (no follow, no loop): it can be read ahead whole."""
        return not self._follow and not self._loop

    @property
    def interval_s(self) -> float:
        """The stream's real interval (a plain log's from its stamps, a recording's from its
        sample spacing), which is what history and energy must be sized for."""
        return self.index.interval_s

    def describe(self) -> SourceInfo:
        out: dict[str, Any] = {}
        header = self.index.header
        if header is not None:
            out.update({k: v for k, v in header.items() if k not in _SESSION_KEYS})
            if "source" in header:
                out["recorded_source"] = header["source"]
        else:
            out["tz"] = self._tz_name
        out["source"] = self.kind
        out["file"] = self.path
        out["interval_ms"] = round(self.interval_s * 1000, 3)
        timing = self.index.basis if self._fitted_interval_s is None else fitted_timing(self.index.basis)
        return replace(SourceInfo.from_mapping(out), timing=timing)

    # -- the worker ------------------------------------------------------------------------

    def records(self) -> Iterator[Record]:
        with self._cond:
            self._running = True
        if not self.index.caught_up:  # started here, so that it does not slow what comes before
            threading.Thread(target=self._index_rest, name="jroof-index", daemon=True).start()
        try:
            if self._follow and not self._stopped:
                yield from self._jump(math.inf, event=False)  # like tail -f: at the end
            yield from self._play()
        finally:
            with self._cond:
                self._running = False
            self.index.close()

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
            index = self.index
            if self._next >= len(index) and index.step():
                continue  # played all that is indexed: the next step (the indexer's, if it has it)
            if self._follow and (self._next >= len(index) or self._clock() - self._last_poll >= POLL_S):
                yield from self._poll()
            if self._next >= len(index):
                self._at_end = True
                if self._follow:
                    self._idle(POLL_S, generation)
                elif self._loop and len(index):
                    yield self._restart()
                elif self._hold_at_end:
                    if not arrived:
                        arrived = True
                        yield Event("note", "end of replay", None, index.last_mono)
                    self._idle(None, generation)  # until a seek (or stop)
                else:
                    return
                continue
            self._at_end = False
            mono = index.mono(self._next)
            if paused and steps == 0:
                self._idle(POLL_S if self._follow else None, generation)  # a followed file grows
                continue
            gap = self._long_step(mono)
            if gap is not None:
                yield gap
            if not paused:
                wait = self._due(mono) - self._clock()
                if wait > 0:  # asleep until the record is due (a control wakes it at once)
                    self._idle(min(wait, POLL_S) if self._follow else wait, generation)
                    continue
            record = self._load(self._next)
            self._next += 1
            if record is None:
                continue
            self._last_played = mono
            with self._cond:
                if self._pending_seek is None:
                    self._position_mono = mono
                if paused and isinstance(record, Sample) and self._steps > 0:
                    self._steps -= 1
                    self._anchor_mono = mono
            yield record

    def _long_step(self, mono: float) -> Event | None:
        """A step to the next record longer than the replay ever waits becomes a gap, played at
        once (re-anchoring the playhead there)."""
        last = self._last_played
        if last is None or mono - last <= max_step_for(self.interval_s):
            return None
        self._last_played = mono
        with self._cond:
            self._anchor_mono, self._anchor_clock = mono, self._clock()
        wall = self.index.wall_at(self._next, mono)
        return Event("gap", f"no data for {mono - last:.1f} s",
                     None if wall is None else wall + self._loop_offset, mono + self._loop_offset,
                     gap_s=mono - last)

    def _jump(self, target_s: float, *, event: bool) -> Iterator[Record]:
        """Seek: the seek event, the backfill before the target, then play on from the target.
        A target past the part indexed waits for the index to reach it (a newer seek or a stop
        ends the wait: the newer seek is played instead)."""
        with self._cond:
            self._seeking = target_s
        try:
            yield from self._jump_indexed(target_s, event=event)
        finally:
            with self._cond:
                self._seeking = None

    def _jump_indexed(self, target_s: float, *, event: bool) -> Iterator[Record]:
        while not self._indexed_to(target_s):
            if self._stopped or self._pending_seek is not None or not self.index.step():
                break
        first, last = self.index.first_mono, self.index.last_mono
        if self._stopped or self._pending_seek is not None or first is None or last is None:
            return
        target = min(max(first + target_s, first), last)
        monos = self.index.monos
        index = bisect_left(monos, target)
        start = bisect_left(monos, target - self._backfill_s)
        records = self.index.read_span(start, index, self._noted_types)
        if event:
            wall = self.index.wall_at(index, target)
            records = chain([Event("seek", f"seek to {target - first:.1f} s", wall, target)],
                            records)  # moved on by the loops below, as the file's records are
        held: Record | None = None  # each record is handed out once the next is read (``backfilling``)
        with self.index.player_first():  # the ledger's read of the file waits meanwhile
            for record in records:
                if self._stopped:
                    return
                if record is not None:
                    if held is not None:
                        yield held
                    held = self._moved(record)
        if held is not None:
            yield held
        self._next = index
        self._last_played = target
        with self._cond:
            self._anchor_mono = target
            self._anchor_clock = self._clock()
            self._position_mono = target

    def _indexed_to(self, target_s: float) -> bool:
        """True when the index holds the records up to ``target_s`` from the start."""
        first, last = self.index.first_mono, self.index.last_mono
        return first is not None and last is not None and last >= first + target_s

    def _restart(self) -> Event:
        """Loop: back to the first record, which plays one interval after the last, with its times
        moved on by the length of the file so that the stream stays continuous."""
        first, last = self.index.mono(0), self.index.mono(len(self.index) - 1)
        self._next = 0
        with self._cond:
            self._anchor_mono = first - self.interval_s
            self._anchor_clock = self._clock()
            self._position_mono = first
        self._loop_offset += last - first + self.interval_s
        self._last_played = first - self.interval_s
        wall = self.index.wall_at(0, first)
        return Event(
            "note",
            "loop: back to the start of the file",
            None if wall is None else wall + self._loop_offset,
            first + self._loop_offset,
        )

    def _idle(self, timeout: float | None, generation: int) -> None:
        """Wait up to ``timeout`` s (None: until a control changes or ``stop``); the default wait
        ends at once when a control changes. An injected ``sleep`` sleeps POLL_S for None."""
        if self._sleep is not None:
            self._sleep(POLL_S if timeout is None else timeout)
            return
        with self._cond:
            if self._generation == generation and not self._stopped:
                self._cond.wait(timeout)

    # -- state helpers (called with the lock held) ------------------------------------------

    def _changed(self) -> None:
        self._generation += 1
        self._cond.notify_all()

    def _request_seek(self, target_s: float) -> None:
        """Past the part indexed while ``indexing``: the jump waits for the index to get there."""
        if math.isnan(target_s):
            return
        target_s = max(target_s, 0.0)
        self._pending_seek = target_s if self.indexing else min(target_s, self.duration_s)
        self._changed()

    def _index_rest(self) -> None:
        """The background indexer: step until the index has caught up (or is closed), offering
        the interpreter to the worker between steps."""
        while not self._stopped and self.index.step():
            time.sleep(0)

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

    # -- reading the file --------------------------------------------------------------------

    def _load(self, index: int) -> Record | None:
        """Record ``index`` with its times as played (moved on after loops)."""
        record = self.index.read(index, self._noted_types)
        return None if record is None else self._moved(record)

    def _moved(self, record: Record) -> Record:
        """A record read from the file, with its times as played (moved on after loops)."""
        if self._loop_offset:
            if record.t_mono is not None:
                record.t_mono += self._loop_offset
            if record.t_wall is not None:
                record.t_wall += self._loop_offset
        return record

    def _poll(self) -> Iterator[Record]:
        """Follow: index what was appended (no lock held: controls and the UI go on meanwhile);
        cope with truncation and rotation."""
        self._last_poll = self._clock()
        for note in self.index.poll():
            self._next = 0
            with self._cond:
                self._anchor_mono = None
            yield note
            return
        if self._next >= len(self.index) and self.index.rotated():
            # rotated: reopen once everything the old file held is played, so the note comes
            # between the old file's last record and the new file's first, at the old one's times
            last = self.index.last_indexed_times()
            self.index.open_segment()
            self.index.index_new_data(final=False)
            with self._cond:
                self._anchor_mono = None  # the new file's first record plays at once
            yield Event("note", "file rotated: reading the new file", *last)

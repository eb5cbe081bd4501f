"""Timing a plain tegrastats log's lines, and the interval of a stream, with what gave it.

Interval rule. Lines sharing a stamp are spread at the interval, and a log without stamps is
spaced by it. For a stamped log the stamps decide: tegrastats stamps have 1 s resolution, so the
interval is the median, over the first few complete stamp groups (lines sharing one stamp), of
(seconds to the next stamp / lines in the group), in whole milliseconds rounded down so that a
group of the median size fits in its second. 10 lines a second gives 0.1 s, one line every 3 s
gives 3 s, 46 a second 0.021 s, and a single gap in the window does not move the median. This is
the rate the lines really came at (``--interval 100`` gives about 9 lines a second on an Orin
Nano), and a configured default such as 1000 ms cannot spread ten lines of one second over ten
seconds. An interval the user gives (``--interval``) always wins over the stamps (where they say
one more than twice as long or half as short, its note says so); without one and
without stamps that tell (none, or fewer than two stamp changes), tegrastats' default of 1 s is
assumed, and said (``TimeBasis``: ``interval_source`` measured, given or assumed, with a note).
Sub-second stamps (``%s.%N``, ``date -Ins``) give each line its own stamp: the median step.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable
from datetime import timezone, tzinfo
from typing import Generic, TypeVar

from jtop_roof.model.info import ASSUMED, GIVEN, MEASURED, TimeBasis
from jtop_roof.model.timeline import EPOCH, Timeline, zone_name

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
#: Lines (sample lines or not) and bytes held while the sample lines among them wait for the
#: interval: past either, the interval is decided from what came, as at the end of the file, so a
#: reader never holds more (a log of a million noise lines after one stamped sample line). A real
#: log reaches its window (``INFER_MAX_LINES`` sample lines, a few hundred KiB) long before.
HOLD_MAX_LINES = 10_000
HOLD_MAX_BYTES = 8 << 20

K = TypeVar("K")


#: Reads stamps on a naive scale (a stamp without a zone as UTC): only differences are used.
_NAIVE = Timeline(timezone.utc, DEFAULT_INTERVAL_S)


def stamp_seconds(stamp: str) -> float:
    """Seconds of a stamp (any form ``Timeline`` reads) on a naive scale: only differences are
    used. ValueError for an invalid stamp or one the Timeline reads as none (a year out of range)."""
    seconds = _NAIVE.wall_of(stamp)
    if seconds is None:
        raise ValueError(f"not a stamp the timeline reads: {stamp!r}")
    return seconds


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


class PlainTimer(Generic[K]):
    """Times for the sample lines of a plain tegrastats log, shared by ``iter_records`` and the
    replay's index so both place every line alike (the interval rule is in the module docstring).

    ``add(key, stamp, size)`` queues a sample line (``key``: whatever the caller finds it by: a byte
    offset, a line); ``hold(size)`` counts a line that is not one, read while sample lines wait
    (the caller holds it in their order); ``release(final)`` returns the queued ones that can be
    timed now as (key, t_wall or None, t_mono). Lines wait until the interval is known: given, or
    inferred once enough stamp groups are complete (or ``final``, or after ``wait_s``, or once the
    lines held pass ``HOLD_MAX_LINES`` or ``HOLD_MAX_BYTES``: ``over_held``, for a reader to
    release at that very line). The first stamp group's size is counted then, so the Timeline can
    place a partial first second at its end."""

    def __init__(self, tz: tzinfo, interval_s: float | None, *, wait_s: float = INFER_WAIT_S,
                 clock: Callable[[], float] = time.monotonic, tz_given: bool = False) -> None:
        self._tz = tz
        self._tz_given = tz_given
        self._given = interval_s is not None and interval_s > 0
        self.interval_s = interval_s or DEFAULT_INTERVAL_S
        self._measured = False  # the stamps gave the interval
        self._stamps_say: float | None = None  # what the stamps say where an interval was given
        self._stamped = False  # the log has stamps
        self._wait_s = wait_s
        self._clock = clock
        self._pending: list[tuple[K, str | None]] = []
        self._groups = 0
        self._since: float | None = None
        self._held_lines = 0  # lines held since the first queued one, sample lines or not
        self._held_bytes = 0
        self.timeline: Timeline | None = None

    def add(self, key: K, stamp: str | None, size: int = 0) -> None:
        pending = self._pending
        if not pending:
            self._since = self._clock()
            self._groups = 1
            self._held_lines = self._held_bytes = 0
        elif stamp != pending[-1][1]:
            self._groups += 1
        pending.append((key, stamp))
        self._held_lines += 1
        self._held_bytes += size

    def hold(self, size: int) -> None:
        """A line that is not a sample line, of ``size`` bytes: counted while sample lines wait
        (before the first one, nothing waits, and the line need not be held)."""
        if self._pending and self.timeline is None:
            self._held_lines += 1
            self._held_bytes += size

    @property
    def waiting(self) -> bool:
        """True while sample lines wait for a time (a reader holds the lines after them too)."""
        return bool(self._pending)

    @property
    def over_held(self) -> bool:
        """True once the lines held while sample lines wait pass ``HOLD_MAX_LINES`` or
        ``HOLD_MAX_BYTES``: ``release(False)`` then times them from what came."""
        return self._held_lines > HOLD_MAX_LINES or self._held_bytes > HOLD_MAX_BYTES

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
                if not (final or window_is_complete(self._groups, len(stamps)) or waited >= self._wait_s
                        or self.over_held):
                    return []
                self._stamped = True
                inferred = infer_interval_s(stamps)
                if self._given:  # it wins, but where the stamps disagree that is said (``basis``)
                    self._stamps_say = inferred
                else:
                    self._measured = inferred is not None
                    self.interval_s = inferred or self.interval_s
                lines = next((i for i, stamp in enumerate(stamps) if stamp != stamps[0]), None)
                first_group = lines  # None when the first group may still be growing
            self.timeline = Timeline(self._tz, self.interval_s, first_group_lines=first_group)
        place = self.timeline.place
        out = [(key, *place(stamp)) for key, stamp in self._pending]
        self._pending.clear()
        self._since = None
        return out

    @property
    def basis(self) -> TimeBasis:
        """How the lines are timed (meaningful once ``timeline`` is made)."""
        timeline = self.timeline
        if self._given:
            source, note = GIVEN, given_note(self.interval_s, self._stamps_say)
        elif self._measured:
            source, note = MEASURED, "from the stamps: seconds between stamps per line"
        elif self._stamped:
            source, note = ASSUMED, (f"the stamps do not tell the interval (fewer than two changes): "
                                       f"{self.interval_s * 1000:.0f} ms assumed; give it with --interval MS")
        else:
            source, note = ASSUMED, (f"the log has no stamps: {self.interval_s * 1000:.0f} ms assumed "
                                       "(tegrastats' default); give the real one with --interval MS, and "
                                       "--log-start TIME to place the log in time")
        form = None if timeline is None else timeline.form
        return TimeBasis(self.interval_s, source, note, form,
                         *stamp_zone_of(form, None if timeline is None else timeline.written_zone,
                                        self._tz, self._tz_given))


#: A given interval this many times off what the stamps say (either way) is said to disagree.
DISAGREE_FACTOR = 2.0


def given_note(given_s: float, stamps_s: float | None) -> str | None:
    """The note of an interval the user gave (``--interval``) that a stamped log's own stamps say is
    more than ``DISAGREE_FACTOR`` times off: it is used as given (the user's flag wins), and said;
    None where the stamps agree or do not tell."""
    if stamps_s is None or not stamps_s > 0 or 1 / DISAGREE_FACTOR <= given_s / stamps_s <= DISAGREE_FACTOR:
        return None
    return (f"the stamps space the lines {stamps_s * 1000:.0f} ms apart: --interval {given_s * 1000:g} "
            "is used as given")


def stamp_zone_of(form: str | None, written: str | None, tz: tzinfo,
                  tz_given: bool) -> tuple[str | None, str | None, str | None]:
    """(zone, zone_source, note) of stamps of ``form`` that write ``written`` (``stamp_zone``)."""
    if form is None:
        return None, None, "no stamps: wall times unknown"
    if form == EPOCH:
        return "UTC", MEASURED, "epoch seconds are zone-free (UTC): --tz does not apply"
    if written is not None:
        return written, MEASURED, "the stamps write their offset: --tz does not apply"
    if tz_given:
        return zone_name(tz), GIVEN, None
    return zone_name(tz), ASSUMED, "the stamps write no zone: this machine's is assumed; give --tz ZONE"


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

    @property
    def measured(self) -> bool:
        """True when the samples' steps give the interval (else the header's is used)."""
        return bool(self._steps)

    def basis(self, fallback: float, header_said: bool) -> TimeBasis:
        """The recording's ``TimeBasis``: its samples' steps, else its header's interval."""
        interval = self.interval_s(fallback)
        if self.measured:
            return TimeBasis(interval, MEASURED, "from the recorded samples' steps",
                             stamps_note="a recording: times as recorded")
        if header_said:
            return TimeBasis(interval, GIVEN, "the recording header's configured interval",
                             stamps_note="a recording: times as recorded")
        return TimeBasis(interval, ASSUMED, "no steps and no interval in the header: tegrastats' default",
                         stamps_note="a recording: times as recorded")

    def interval_s(self, fallback: float) -> float:
        if not self._steps:
            return fallback
        steps = sorted(self._steps)
        # the lower median: one long step does not move it
        return min(steps[(len(steps) - 1) // 2], MAX_INTERVAL_S)

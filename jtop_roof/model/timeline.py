"""Times for parsed samples: tegrastats stamps (local wall time, 1 s resolution) -> unix seconds.

Rules (the contract other parts code against):

* A stamp is local wall time in the given zone (the machine's unless told), to the second, in
  one of the forms standard tools print before a line (``stamp_form``): tegrastats' own
  ``MM-DD-YYYY HH:MM:SS``, ``YYYY-MM-DD HH:MM:SS[.fff]`` (``date "+%F %T"``, python logging's
  ``,fff``), ISO 8601 with ``T`` (``date -Iseconds``, ``date -Ins``), whose offset or ``Z``, when
  written, fixes the zone, and epoch seconds (``date +%s``, ``%s.%N``), which are UTC. A fraction
  of a second is used as it is: only lines sharing one stamp are spread.
* Lines sharing a stamp (sub-second intervals) are spread at ``interval_s``: the k-th line of a
  stamp gets ``stamp + k * interval_s``, but never reaches the next second: a line that would go
  more than halfway from the previous line to the end of the second goes halfway instead. Lines
  come with jitter (46 a second, then 48), and a spread past the next stamp would make ``t_wall``
  run backwards there. With no lookahead a line cannot know how many more share its stamp, so a
  partial first group (the log started late in that second) is spread from ``.0`` as well, unless
  the reader counted its lines (``first_group_lines``, n): then line k (0-based) of it goes at
  ``stamp + 1 - (n - k) * interval_s``, the last slots of its second, so a 1 Hz log's first line
  stays at its stamp and a 10 Hz log that started at .7 has its three first lines at .7, .8, .9.
* Without stamps (JetPack 4 and older), ``t_wall`` stays None and ``t_mono = index * interval_s``.
* With stamps, ``t_mono = t_wall - first t_wall``. ``t_mono`` never runs backwards: when the wall
  clock steps back (NTP, a hand-set clock) the stream's timeline continues one interval after the
  previous sample, and later samples keep that offset. Forward jumps stay: a gap is a gap, up to
  ``MAX_GAP_S``; a longer one is a clock being set (a board without RTC logs 1970 until NTP sets
  it), not time that passed: the timeline continues one interval on, and ``jumps`` says so.
* DST: an ambiguous local time (the repeated hour when clocks fall back) is read with ``fold=0``
  (the first occurrence). Only when that would put a stamp before the previous sample is the
  second occurrence (``fold=1``) taken, which is what a log running through the change means.
  A non-existent time (the skipped hour) is read as ``datetime`` does with ``fold=0``.
* Unstamped samples in a stamped log continue one interval after the previous sample.

Conversion is cheap for long logs: the epoch of each local hour is computed once (with zoneinfo)
and a stamp inside an hour whose UTC offset does not change is that epoch plus minutes and
seconds; only hours holding an offset change are converted stamp by stamp.
"""

from __future__ import annotations

import os
import re
import time
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_OFFSET = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", re.ASCII)
_STAMP_FORM = re.compile(r"(\d\d)-(\d\d)-(\d{4}) (\d\d):(\d\d):(\d\d)", re.ASCII)
_MINUTE_SECOND = re.compile(r":([0-5]\d):([0-5]\d)", re.ASCII)
# YYYY-MM-DD HH:MM:SS[.fff] and ISO 8601 (T, an optional fraction, an optional offset or Z)
_YMD_FORM = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?", re.ASCII)
_FRACTION_TAIL = re.compile(r":([0-5]\d):([0-5]\d)[.,](\d{1,9})", re.ASCII)
_EPOCH_FORM = re.compile(r"\d{1,11}(?:\.\d{1,9})?", re.ASCII)
#: Stamp forms (``stamp_form``): what the report's ``source.stamps.format`` says.
TEGRASTATS, YMD, ISO8601, EPOCH = "tegrastats", "ymd", "iso8601", "epoch"
# ":MM:SS" of a stamp -> seconds into its hour, kept as stamps come (3,600 at most): a lookup per line
_minute_seconds: dict[str, int] = {}
#: Stamps outside these years are read as no stamp (the sample continues one interval on).
MIN_YEAR, MAX_YEAR = 1970, 2999
_HOUR_CACHE_LIMIT = 4096  # distinct hours kept (about 170 days of a log); cleared when full
#: The longest step between two records of a stream that is time passed; longer is a clock jump.
MAX_GAP_S = 7 * 86400.0


def local_tz_name() -> str:
    """IANA name of the machine's zone when it can be found, else its current offset (``+02:00``)."""
    key = _local_zone_key()
    if key:
        return key
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    return _format_offset(offset)


def parse_tz(text: str | None) -> tzinfo:
    """``None``/``"local"`` = the machine's zone; IANA names (``Europe/Warsaw``); ``UTC``; offsets
    ``+02:00``/``-0530``/``UTC+2``. ValueError with a one-line message otherwise."""
    if text is None or text.strip().lower() in ("", "local"):
        return _local_zone()
    name = text.strip()
    if name.upper() in ("UTC", "Z", "GMT"):
        return timezone.utc
    m = _OFFSET.fullmatch(name)
    if m is not None:
        sign, hours, minutes = m.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
        if delta >= timedelta(hours=24) or int(minutes or 0) >= 60:
            raise ValueError(f"time zone offset out of range: {text!r}")
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"unknown time zone {text!r}: use an IANA name such as Europe/Berlin, UTC, or an offset "
            "such as +02:00"
        ) from None


def _format_offset(offset: timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _local_zone_key() -> str | None:
    """The machine's IANA zone name: from $TZ when it is set (as the C library does), else the
    /etc/localtime link target, else /etc/timezone."""
    env = os.environ.get("TZ")
    if env is not None:
        return _zone_key(env.lstrip(":"))
    try:
        key = _zone_key(os.path.realpath("/etc/localtime"))
    except OSError:
        key = None
    if key:
        return key
    try:
        return _zone_key(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None


def _zone_key(text: str) -> str | None:
    """``Europe/Berlin`` or ``/usr/share/zoneinfo/Europe/Berlin`` -> ``Europe/Berlin`` if known."""
    marker = "zoneinfo/"
    key = text.split(marker, 1)[1] if marker in text else text
    if not key:
        return None
    try:
        ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
    return key


def _local_zone() -> tzinfo:
    """The machine's zone with its DST rules; a fixed offset (from the C library, which honours a
    POSIX $TZ such as ``CET-1``) only when no zone data is found."""
    key = _local_zone_key()
    if key:
        return ZoneInfo(key)
    if "TZ" not in os.environ:
        try:
            with open("/etc/localtime", "rb") as fh:
                return ZoneInfo.from_file(fh, key="localtime")
        except (OSError, ValueError):
            pass
    return datetime.now().astimezone().tzinfo or timezone(timedelta(seconds=-time.timezone))


class Timeline:
    """Assigns ``t_wall`` and ``t_mono`` to the samples of one stream, in order."""

    def __init__(self, tz: tzinfo, interval_s: float, *, first_group_lines: int | None = None) -> None:
        self.tz = tz
        self.interval_s = interval_s
        # Lines of the first stamp, when known and fewer than a second holds at this interval.
        self._first_group = (
            first_group_lines if first_group_lines and first_group_lines * interval_s < 1.0 else None
        )
        self._hours: dict[str, float] = {}  # "MM-DD-YYYY HH" -> epoch of HH:00:00 (uniform hours only)
        self._count = 0  # samples assigned
        self._last_stamp: str | None = None
        self._last_stamp_epoch = 0.0
        self._repeat = 0  # index of this line among lines sharing the stamp
        self._spread = 0.0  # seconds after its stamp of the last line placed
        self._resolution = 1.0  # seconds one step of the last stamp stands for
        #: The form of the first stamp placed (``stamp_form``), and the zone it writes (``stamp_zone``).
        self.form: str | None = None
        self.written_zone: str | None = None
        #: Stamps earlier than the sample before them (a clock set back): each is placed one
        #: interval on, never reordered, and counted here for the reader to say.
        self.backwards = 0
        self._last_wall: float | None = None
        self._last_mono: float | None = None
        self._mono_offset: float | None = None  # t_mono = t_wall + offset
        #: (t_wall, t_mono, seconds jumped) of each forward jump past MAX_GAP_S, for the reader to
        #: say (and clear).
        self.jumps: list[tuple[float, float, float]] = []

    def wall_of(self, stamp: str) -> float | None:
        """Unix seconds of a stamp (any ``stamp_form``) in this zone, unless the stamp writes its
        own (``fold=0``); None if invalid."""
        base = self._hours.get(stamp[:13])
        if base is not None:
            tail = stamp[13:]
            seconds = _minute_seconds.get(tail)
            if seconds is None and (m := _MINUTE_SECOND.fullmatch(tail)) is not None:
                seconds = _minute_seconds[tail] = int(m.group(1)) * 60 + int(m.group(2))
            if seconds is not None:
                return base + seconds
            if (m := _FRACTION_TAIL.fullmatch(tail)) is not None:
                return base + int(m.group(1)) * 60 + int(m.group(2)) + _fraction(m.group(3))
        return self._convert(stamp, fold=0)

    def _convert(self, stamp: str, fold: int) -> float | None:
        fraction, zone = 0.0, self.tz
        m = _STAMP_FORM.fullmatch(stamp)
        if m is not None:
            month, day, year, hour, minute, second = map(int, m.groups())
        elif (m := _YMD_FORM.fullmatch(stamp)) is not None:
            year, month, day, hour, minute, second = map(int, m.groups()[:6])
            fraction = _fraction(m.group(7)) if m.group(7) else 0.0
        else:
            return _epoch(stamp)
        if not MIN_YEAR <= year <= MAX_YEAR:
            return None  # year 0001 or 9999: no board's clock, and overflows near the ends
        try:
            if m.re is _YMD_FORM and m.group(8):
                zone = _written_zone(m.group(8))  # ValueError for an offset no clock writes
            exact = datetime(year, month, day, hour, minute, second, tzinfo=zone, fold=fold)
            epoch = exact.timestamp()
            if fold == 0 and zone is self.tz:
                start = exact.replace(minute=0, second=0)
                end = exact.replace(minute=59, second=59)
                if start.utcoffset() == end.utcoffset():
                    if len(self._hours) >= _HOUR_CACHE_LIMIT:
                        self._hours.clear()
                    self._hours[stamp[:13]] = start.timestamp()
        except (ValueError, OverflowError):
            return None
        return epoch + fraction

    def _first_group_wall(self) -> float:
        assert self._first_group is not None
        slot = self._first_group - min(self._repeat, self._first_group - 1)
        spread = 1.0 - slot * self.interval_s
        self._spread = spread
        return self._last_stamp_epoch + spread

    def place(self, stamp: str | None) -> tuple[float | None, float]:
        """(t_wall, t_mono) of the next sample line, stamped ``stamp`` (or not)."""
        index = self._count
        self._count += 1
        wall: float | None = None
        if stamp is not None:
            if stamp == self._last_stamp and self._first_group is not None:
                self._repeat += 1
                wall = self._first_group_wall()
            elif stamp == self._last_stamp:
                self._repeat += 1
                spread = self._repeat * self.interval_s
                halfway = (self._resolution + self._spread) * 0.5
                if spread > halfway:
                    spread = halfway
                self._spread = spread
                wall = self._last_stamp_epoch + spread
            else:
                epoch = self.wall_of(stamp)
                if epoch is not None:
                    if self.form is None:
                        self.form, self.written_zone = stamp_form(stamp), stamp_zone(stamp)
                    self._resolution = stamp_resolution(stamp)
                    if self._resolution < 1.0:
                        self._first_group = None  # a sub-second stamp is used as it is
                    if self._last_wall is not None and epoch < self._last_wall:
                        later = self._convert(stamp, fold=1)
                        if later is not None and later >= self._last_wall:
                            epoch = later
                    if self._last_stamp is not None:
                        self._first_group = None  # only the log's first stamp is partial
                    self._last_stamp = stamp
                    self._last_stamp_epoch = epoch
                    self._repeat = 0
                    self._spread = 0.0
                    wall = epoch if self._first_group is None else self._first_group_wall()
        if wall is None:
            # no usable stamp: one interval after the previous sample (or index x interval)
            if self._last_mono is None:
                mono = index * self.interval_s
            else:
                mono = self._last_mono + self.interval_s
            if self._last_wall is not None:
                wall = self._last_wall + self.interval_s
                self._mono_offset = mono - wall
        else:
            if self._mono_offset is None:
                first_mono = 0.0 if self._last_mono is None else self._last_mono + self.interval_s
                self._mono_offset = first_mono - wall
            mono = wall + self._mono_offset
            last = self._last_mono
            if last is not None and (mono < last or mono - last > MAX_GAP_S):
                if mono < last:
                    self.backwards += 1
                else:
                    self.jumps.append((wall, last + self.interval_s, mono - last))
                mono = last + self.interval_s
                self._mono_offset = mono - wall
        self._last_wall = wall if wall is not None else self._last_wall
        self._last_mono = mono
        return wall, mono


def _fraction(digits: str) -> float:
    return int(digits) / float(10 ** len(digits))


def _written_zone(text: str) -> tzinfo:
    """The zone an ISO 8601 stamp writes: ``Z``, ``+02:00``, ``+0200`` or ``+02``."""
    if text == "Z":
        return timezone.utc
    hours, minutes = int(text[1:3]), int(text[-2:]) if len(text) > 3 else 0
    if minutes >= 60:
        raise ValueError(f"offset minutes out of range: {text!r}")
    delta = timedelta(hours=hours, minutes=minutes)  # 24 hours or more: timezone's ValueError
    return timezone(-delta if text[0] == "-" else delta)


#: Epoch seconds in the years a stamp may have (MIN_YEAR..MAX_YEAR).
_MAX_EPOCH = datetime(MAX_YEAR + 1, 1, 1, tzinfo=timezone.utc).timestamp()


def _epoch(stamp: str) -> float | None:
    """Unix seconds of an epoch stamp (``date +%s``, ``%s.%N``); None for any other text."""
    if _EPOCH_FORM.fullmatch(stamp) is None:
        return None
    seconds = float(stamp)
    return seconds if seconds < _MAX_EPOCH else None


def stamp_form(stamp: str) -> str:
    """Which form a stamp (as ``parser.stamp_of`` finds it) is written in: TEGRASTATS, YMD,
    ISO8601 or EPOCH."""
    if stamp[2:3] == "-":
        return TEGRASTATS
    if "-" not in stamp[:5]:
        return EPOCH
    return ISO8601 if "T" in stamp else YMD


def stamp_zone(stamp: str) -> str | None:
    """The zone a stamp writes itself (``UTC`` for ``Z`` and for epoch seconds, else the offset as
    written), None where the reader's zone applies."""
    form = stamp_form(stamp)
    if form == EPOCH:
        return "UTC"
    m = _YMD_FORM.fullmatch(stamp) if form == ISO8601 else None
    if m is None or not m.group(8):
        return None
    return "UTC" if m.group(8) == "Z" else m.group(8)


def stamp_resolution(stamp: str) -> float:
    """Seconds one step of the stamp's last digit stands for: 1 for whole seconds, 0.001 for ms."""
    m = re.search(r"[.,](\d+)", stamp)
    return 1.0 if m is None else 10.0 ** -len(m.group(1))


def zone_name(tz: tzinfo) -> str:
    """A zone's name for a report: its IANA key, ``UTC``, or its offset (``+02:00``)."""
    key = getattr(tz, "key", None)
    if isinstance(key, str) and key != "localtime":
        return key
    if key == "localtime":
        return local_tz_name()
    offset = tz.utcoffset(None)
    if offset is None:
        return local_tz_name()
    return "UTC" if offset == timedelta(0) else _format_offset(offset)


def max_step_for(interval_s: float) -> float:
    """The longest step between readings of a power stream that is still integrated (and that a
    replay waits through): max(5 s, 10 intervals)."""
    return max(5.0, 10.0 * interval_s)


#: How many (median) intervals a step between samples spans at least to be a gap.
GAP_INTERVALS = 3.0
#: What a whole-second stamp may move a line by: a step shorter than this past one interval may be
#: the stamps' rounding (lines of one second spread at the interval), not a hole.
STAMP_RESOLUTION_S = 1.0


def gap_step_for(interval_s: float) -> float:
    """The shortest step between a log's samples that is a gap (never integrated, not observed
    time): 3 median intervals, and at least one interval past a whole-second stamp's resolution
    (the halfway-spread lines of a second can leave up to that at the second's end). 3 s at 1 Hz,
    1.5 s at 500 ms, 1.1 s at 100 ms."""
    return max(GAP_INTERVALS * interval_s, interval_s + STAMP_RESOLUTION_S)


def stream_time(sample_mono: float | None, last: float | None, interval_s: float) -> tuple[float, bool]:
    """(a sample's stream time, whether the history starts over): a sample without one is placed
    an interval after the last; one earlier than the last (a replay looped, a source restarted its
    timeline) starts the history over, since every window relies on a sorted time axis."""
    if sample_mono is None:
        return (0.0 if last is None else last + interval_s), False
    return sample_mono, last is not None and sample_mono < last

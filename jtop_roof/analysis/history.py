"""What the monitor shows: columnar ring buffers of samples, phase markers and stream events.

Display only: phases and energy live in the pipeline's ledger, which a seek or a wrapped ring
never touches.

Ingest is O(1) per sample (its times written into preallocated numpy columns, its readings with
those of the other samples waiting at the next read, one numpy write per column), memory is bounded
(rows are allocated once for ``history_s`` at the sampling interval; phase markers older than the
oldest row are dropped as the ring wraps), and plots read a time window downsampled to their
width. A field a sample does not report is stored as NaN, so a gap in a series stays a gap.
Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from jtop_roof.model import codec as model
from jtop_roof.model.records import CpuCore, Event, Marker, PowerTotal, Sample
from jtop_roof.model.registry import SCALAR_KEYS
from jtop_roof.model.timeline import stream_time

#: Upper bound on rows, whatever ``history_s`` and the interval ask for: 200k rows of ~60 float32
#: columns stay near 50 MB, inside the 150 MB budget for the whole monitor.
MAX_ROWS = 200_000
#: How many stream events the event log keeps.
EVENT_LOG_SIZE = 500
#: Series one stream may add, whatever it is fed (one hostile line of 3,000 cores would otherwise
#: allocate 6,000 full-history columns, 2 GB): cores, and rails and zones each by name ...
MAX_CORES = model.MAX_CORES
MAX_NAMES = model.MAX_NAMED
#: ... and all of them together at most this many bytes (194 columns of 24 h at 1 Hz, 83 of
#: MAX_ROWS), so the monitor stays inside its 150 MB budget: half for cores, a quarter each for
#: rails and zones, so that a hostile CPU list cannot starve the rails. Past either bound a series
#: is not kept, and an event says so once per family.
DYNAMIC_BYTES = 64 << 20
#: Rows appended and not yet read that wait for one write per column (a 100 ms stream's 120 s
#: backfill is 1,200): the samples they hold stay few.
PENDING_ROWS = 4096
_SHARE = {"core": 0.5, "rail": 0.25, "zone": 0.25}


@dataclass(frozen=True, slots=True)
class PhaseMark:
    """A phase boundary as plots draw it: where (stream seconds), which kind, and its name."""

    t_mono: float
    kind: str
    name: str | None


class History:
    """Ring buffers of the last ``capacity`` samples, one numpy column per series.

    Series keys are the registry's (``jtop_roof.model.registry``): the fixed ones, and the families
    ``cpu_load:N``, ``cpu_mhz:N``, ``rail:NAME`` (mW now), ``zone:NAME`` (°C). Rails, zones and
    cores are discovered from samples; a new one gets a column of NaN for the rows before it.
    """

    def __init__(self, capacity: int, *, interval_s: float = 1.0) -> None:
        if capacity < 2:
            raise ValueError("capacity must be at least 2 rows")
        self.capacity = int(capacity)
        self.interval_s = interval_s
        self._t_mono = np.zeros(self.capacity, dtype=np.float64)
        self._t_wall = np.full(self.capacity, np.nan, dtype=np.float64)
        self._columns: dict[str, np.ndarray] = {
            key: np.full(self.capacity, np.nan, dtype=np.float32) for key in SCALAR_KEYS
        }
        self._head = 0  # physical row of the oldest sample
        self._count = 0
        self.markers: list[PhaseMark] = []
        self.events: deque[Event] = deque(maxlen=EVENT_LOG_SIZE)
        self._has_data: set[str] = set()  # series known to hold a reading (until clear)
        self.latest: Sample | None = None
        self.rails: list[str] = []
        self.zones: list[str] = []
        self.cores = 0
        self._refused: set[str] = set()  # families that hit a cap (said once)
        self._kept: dict[str, set[str]] = {"rail": set(), "zone": set()}  # names with a column
        self._last_mono: float | None = None  # the newest row's stream time
        self._pending: list[tuple[int, Sample]] = []  # rows whose times are written, readings not yet
        self._pending_max = min(self.capacity, PENDING_ROWS)
        self._power_source: str | None = None
        self.first_t_mono: float | None = None  # stream time of the first sample ever seen
        self.version = 0  # bumped on every change; the UI redraws when it moved
        self.log_version = 0  # bumped when markers or events change (the event log redraws)

    @classmethod
    def for_duration(cls, history_s: float, interval_s: float) -> History:
        """Rows for ``history_s`` of samples at ``interval_s`` (bounded by MAX_ROWS)."""
        rows = math.ceil(history_s / max(interval_s, 1e-3)) + 1
        return cls(min(max(rows, 2), MAX_ROWS), interval_s=interval_s)

    # ---------------------------------------------------------------------------------- ingest

    def __len__(self) -> int:
        return self._count

    @property
    def last_t_mono(self) -> float | None:
        return self._last_mono

    @property
    def last_t_wall(self) -> float | None:
        if not self._count:
            return None
        value = self._t_wall[(self._head + self._count - 1) % self.capacity]
        return None if np.isnan(value) else float(value)

    def append(self, sample: Sample) -> None:
        """Store one sample: its times, its row and any new rail, zone or core now; its readings
        are written into the columns by the next read (``_flush``), a column at a time for all
        the rows waiting: a seek's backfill of 1,200 samples costs a few numpy writes per column,
        not one per reading."""
        if not sample.is_sample:
            return
        t_mono, restart = stream_time(sample.t_mono, self._last_mono, self.interval_s)
        if restart:
            self.clear()
        if self.first_t_mono is None or t_mono < self.first_t_mono:
            self.first_t_mono = t_mono
        if len(self._pending) >= self._pending_max:
            self._flush()  # bounded, and no row twice in one flush
        row = (self._head + self._count) % self.capacity
        if self._count < self.capacity:
            self._count += 1
        else:
            self._head = (self._head + 1) % self.capacity
            self._trim_markers(float(self._t_mono[self._head]))
        self._t_mono[row] = t_mono
        self._t_wall[row] = np.nan if sample.t_wall is None else sample.t_wall
        self._last_mono = float(t_mono)
        if sample.cpus is not None and len(sample.cpus) > self.cores:
            self._ensure_cores(len(sample.cpus), sample)
        self._discover("rail", self.rails, sample.rails, sample)
        self._discover("zone", self.zones, sample.temps_c, sample)
        self._pending.append((row, sample))
        self.latest = sample
        self.version += 1

    def _flush(self) -> None:
        """Write the readings of the rows appended since the last read, a column at a time (every
        column gets every row: NaN where the sample did not report it, as in a column made after
        the row: a rail, zone or core is given its column at its first sample, and one refused
        is refused for good)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        samples = [sample for _, sample in pending]
        totals = [sample.power_total for sample in samples]
        values: dict[str, list[float | None]] = {"power_mw": [None if t is None else t.mw for t in totals]}
        self._newest_power_source(reversed(totals))
        gpus, emcs = [s.gpu for s in samples], [s.emc for s in samples]
        values["gpu_load"] = [None if gpu is None else gpu.load_pct for gpu in gpus]
        values["gpu_mhz"] = [None if gpu is None else gpu.mhz for gpu in gpus]
        values["emc_load"] = [None if emc is None else emc.load_pct for emc in emcs]
        values["emc_mhz"] = [None if emc is None else emc.mhz for emc in emcs]
        values["ram_used_mb"] = [None if s.ram is None else s.ram.used_mb for s in samples]
        values["swap_used_mb"] = [None if s.swap is None else s.swap.used_mb for s in samples]
        cpus = [s.cpus or () for s in samples]
        values["cpu_avg_load"] = [_mean_load(cores) for cores in cpus]
        for index in range(self.cores):
            cores = [None if index >= len(each) else each[index] for each in cpus]
            values[f"cpu_load:{index}"] = [None if core is None else core.load_pct for core in cores]
            values[f"cpu_mhz:{index}"] = [None if core is None else core.mhz for core in cores]
        for name in self.rails:
            rails = [s.rails.get(name) for s in samples]
            values[f"rail:{name}"] = [None if rail is None else rail.now_mw for rail in rails]
        for name in self.zones:
            values[f"zone:{name}"] = [s.temps_c.get(name) for s in samples]
        if len(pending) == 1:  # live: one row a read, written as scalars (an array a column costs 2x)
            row = pending[0][0]
            for key, column in self._columns.items():
                got = values.get(key)
                value = None if got is None else got[0]
                column[row] = np.nan if value is None else value
            return
        rows = np.fromiter((row for row, _ in pending), dtype=np.intp, count=len(pending))
        for key, column in self._columns.items():
            got = values.get(key)
            column[rows] = np.nan if got is None else np.array(got, dtype=np.float64)  # None: NaN

    def _newest_power_source(self, newest_first: Iterable[PowerTotal | None]) -> None:
        """The source of the first of ``newest_first`` that there is (kept across ``clear``); the
        rest are not asked for (``clear`` works out a total only back to the newest one there is)."""
        self._power_source = next((t.source for t in newest_first if t is not None), self._power_source)

    @property
    def power_source(self) -> str | None:
        """What the newest total power came from (``model.records.total_power``), None before one."""
        self._flush()
        return self._power_source

    def _ensure_cores(self, count: int, sample: Sample) -> None:
        while self.cores < count:
            if not self._room("core", self.cores, MAX_CORES, 2, sample):
                return
            self._new_column(f"cpu_load:{self.cores}")
            self._new_column(f"cpu_mhz:{self.cores}")
            self.cores += 1

    def _room(self, family: str, have: int, cap: int, columns: int, sample: Sample) -> bool:
        """Whether one more of a family (``columns`` columns each) fits its cap and its share of
        the byte budget; says so once when not."""
        fits = (have + 1) * columns * self.capacity * 4 <= DYNAMIC_BYTES * _SHARE[family]
        if have < cap and fits:
            return True
        if family not in self._refused:
            self._refused.add(family)
            self.add_event(Event(
                "note", f"more than {have} {family}s in the stream: the rest are not kept in history "
                "(memory bound)", sample.t_wall, sample.t_mono))
        return False

    def _new_column(self, key: str) -> None:
        self._columns[key] = np.full(self.capacity, np.nan, dtype=np.float32)

    def _discover(self, prefix: str, names: list[str], values: Mapping[str, object], sample: Sample) -> None:
        """A column for each rail or zone not seen before, in the order the stream names them,
        while the family has room."""
        kept = self._kept[prefix]
        for name in values:
            if name not in kept:
                if not self._room(prefix, len(names), MAX_NAMES, 1, sample):
                    break
                self._new_column(f"{prefix}:{name}")
                names.append(name)
                kept.add(name)

    def _trim_markers(self, oldest: float) -> None:
        """Drop markers before the oldest row (the ring wrapped past them), keeping the start of a
        phase that is still open so that ``current_phase`` stays right. O(1) unless one goes."""
        markers = self.markers
        if not markers or markers[0].t_mono >= oldest:
            return
        if markers[0].kind == "phase_start" and (len(markers) == 1 or markers[1].t_mono >= oldest):
            return  # only the open phase's start is left before the oldest row
        old = 0
        while old < len(markers) and markers[old].t_mono < oldest:
            old += 1
        keep = [markers[old - 1]] if markers[old - 1].kind == "phase_start" else []
        self.markers = keep + markers[old:]
        self.log_version += 1

    def add_marker(self, marker: Marker) -> None:
        """A phase boundary (from a key press, a script, or a replayed recording)."""
        t_mono = marker.t_mono
        if t_mono is None:
            last = self.last_t_mono
            t_mono = last if last is not None else 0.0
        self.markers.append(PhaseMark(t_mono, marker.kind, marker.name))
        self.version += 1
        self.log_version += 1

    def add_event(self, event: Event) -> None:
        """A stream event, kept for the event log."""
        self.events.append(event)
        self.version += 1
        self.log_version += 1

    def clear(self) -> None:
        """Forget every sample, marker and event (a replay seek re-ingests from the file)."""
        self._head = 0
        self._count = 0
        self._last_mono = None
        self._newest_power_source(sample.power_total for _, sample in reversed(self._pending))
        self._pending.clear()  # the columns keep their old rows: none is read before it is written again
        self.markers.clear()
        self.events.clear()
        self._has_data.clear()
        self.latest = None
        self.version += 1
        self.log_version += 1

    # ----------------------------------------------------------------------------------- query

    @property
    def current_phase(self) -> str | None:
        """Name of the phase in progress (after the last start, before an end), else None."""
        for mark in reversed(self.markers):
            if mark.kind == "phase_start":
                return mark.name or ""
            if mark.kind == "phase_end":
                return None
        return None

    def _segments(self) -> tuple[np.ndarray, np.ndarray]:
        """The time column as two sorted views, oldest first (the ring may wrap)."""
        end = self._head + self._count
        first = self._t_mono[self._head : min(end, self.capacity)]
        second = self._t_mono[: max(0, end - self.capacity)]
        return first, second

    def _position(self, t: float) -> int:
        """Logical index of the first sample at or after stream time ``t`` (binary search)."""
        first, second = self._segments()
        pos = int(np.searchsorted(first, t, side="left"))
        if pos == len(first) and len(second):
            pos += int(np.searchsorted(second, t, side="left"))
        return pos

    def _gather(self, column: np.ndarray, lo: int, hi: int) -> np.ndarray:
        start = (self._head + lo) % self.capacity
        stop = start + (hi - lo)
        if stop <= self.capacity:
            return column[start:stop]
        return np.concatenate((column[start:], column[: stop - self.capacity]))

    def window(self, t_from: float | None, t_to: float | None = None) -> tuple[int, int]:
        """Logical row range [lo, hi) of samples with t_from <= t_mono <= t_to (None = open)."""
        lo = 0 if t_from is None else self._position(t_from)
        if t_to is None:
            return lo, self._count
        after = math.nextafter(t_to, math.inf)
        newest = self._last_mono  # the times are sorted: past the newest, no search (a plot's usual end)
        hi = self._count if newest is not None and after > newest else self._position(after)
        return lo, max(lo, hi)

    def times(self, lo: int, hi: int) -> np.ndarray:
        return self._gather(self._t_mono, lo, hi)

    def wall_at(self, t_mono: float) -> float | None:
        """Wall time of the sample nearest ``t_mono`` shifted by the difference; None without stamps."""
        if not self._count:
            return None
        pos = min(self._position(t_mono), self._count - 1)
        row = (self._head + pos) % self.capacity
        wall = self._t_wall[row]
        if np.isnan(wall):
            return None
        return float(wall + (t_mono - self._t_mono[row]))

    def series(
        self, key: str, t_from: float | None, t_to: float | None, buckets: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(t_mono, value) of a series inside a window, averaged down to at most ``buckets`` points
        (``series_block``); empty where the series has no column."""
        if key not in self._columns:
            return np.empty(0), np.empty(0)
        times, values = self.series_block([key], t_from, t_to, buckets)
        return times, values[0]

    def series_block(
        self, keys: Sequence[str], t_from: float | None, t_to: float | None, buckets: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(t_mono, values) of several series inside a window: their shared times, and one row of
        values per key (NaN for a key without a column), averaged down to at most ``buckets``
        points. A plot asks once for all its lines: numpy's cost per call, not per point, is what
        a drawing's few hundred points pay.

        Buckets hold equal numbers of samples; NaN readings are left out of a bucket's mean and a
        bucket with none left is NaN. The returned arrays are copies, safe to keep.
        """
        self._flush()
        lo, hi = self.window(t_from, t_to)
        count = hi - lo
        block = np.full((len(keys) + 1, count), np.nan)  # the times, then a row per key
        block[0] = self._gather(self._t_mono, lo, hi)
        for row, key in enumerate(keys, 1):
            column = self._columns.get(key)
            if column is not None:
                block[row] = self._gather(column, lo, hi)
        buckets = max(1, int(buckets))
        if count <= buckets:
            return block[0], block[1:]
        # Bucket bounds as np.linspace(0, count, buckets + 1) gives them (its arithmetic, at a
        # fraction of its cost): strictly rising, as more samples than buckets puts them over one
        # row apart (np.unique of them would change nothing, and its first call imports numpy.ma,
        # 10-30 ms, which a replay's first seek paid)
        bounds = (np.arange(buckets + 1) * (count / buckets)).astype(np.int64)
        bounds[-1] = count
        edges, sizes = bounds[:-1], np.diff(bounds)
        finite = np.isfinite(block)
        if finite.all():  # no reading missing (the usual case): a bucket's mean is its sum / size
            means = np.add.reduceat(block, edges, axis=1) / sizes
            return means[0], means[1:]
        values, finite = block[1:], finite[1:]
        sums = np.add.reduceat(np.where(finite, values, 0.0), edges, axis=1)
        counts = np.add.reduceat(finite.astype(np.int64), edges, axis=1)
        means = np.full(sums.shape, np.nan)
        np.divide(sums, counts, out=means, where=counts > 0)
        return np.add.reduceat(block[0], edges) / sizes, means

    def has(self, key: str) -> bool:
        """True when series ``key`` holds at least one reading (a pane without any shows no plot).
        A yes is remembered until ``clear``; a no scans the stored rows again."""
        if key in self._has_data:
            return True
        self._flush()
        column = self._columns.get(key)
        if column is None or not self._count:
            return False
        found = bool(np.isfinite(self._gather(column, 0, self._count)).any())
        if found:
            self._has_data.add(key)
        return found

    def markers_between(self, t_from: float | None, t_to: float | None) -> list[PhaseMark]:
        return [
            m for m in self.markers
            if (t_from is None or m.t_mono >= t_from) and (t_to is None or m.t_mono <= t_to)
        ]

    def memory_bytes(self) -> int:
        """Bytes held by the ring buffers (for the overhead benchmark and the 150 MB budget)."""
        return self._t_mono.nbytes + self._t_wall.nbytes + sum(c.nbytes for c in self._columns.values())


def _mean_load(cores: Sequence[CpuCore | None]) -> float | None:
    """The mean load of the cores that report one (all of them, kept in history or not)."""
    loads = [core.load_pct for core in cores if core is not None and core.load_pct is not None]
    return sum(loads) / len(loads) if loads else None

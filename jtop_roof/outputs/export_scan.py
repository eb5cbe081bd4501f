"""The first pass of ``export``: the file through the pipeline (its phases and detector events, as
``report`` finds them) and, on the way, which columns the file has (``Scan``), so that every row
the second pass writes has the same columns in the same order (``export`` documents them).

The column families are found from what each sample shows: the names of its engines, zones,
rails and fans, its core and GPC counts and which parts it has. A sample that shows nothing new
(the names all known, no more cores: nearly every sample of a board) costs a few set tests; only
the engines' values are looked at on every sample, until each engine has shown both (a column for
an engine's load or clock exists only where the file gives that value).
Nothing here imports Textual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import tzinfo

from jtop_roof.formats.logfile import ReadStats, RecordingError, iter_records, open_text, read_header
from jtop_roof.formats.trtexec import TrtexecRun, with_trtexec
from jtop_roof.model.errors import UserError
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, PowerReading, ProcessReading, Record, Sample, power_plan
from jtop_roof.outputs.export_types import export_metadata
from jtop_roof.outputs.report import run_pipeline
from jtop_roof.runtime.config import Config

#: What ``--table`` takes: one row per sample, per power reading, or per process per process reading.
TABLES = ("samples", "power", "processes")
#: The times that start every table's row.
TIMES = ("t_wall", "time", "t_mono", "t_s")
#: The processes table's columns.
PROCESS_COLUMNS = (*TIMES, "phase", "source", "period_s", "gap_s", "floor_pct", "priming", "pid", "name",
                   "cpu_pct", "rss_mb", "gpu_mem_mb", "benchmark")
#: Columns per family at most (a hostile file may name a new rail on every line).
MAX_FAMILY = 256
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
IO_COLUMNS = ("disk_read", "disk_write", "net_rx", "net_tx")


class ExportError(UserError):
    """A file that cannot be exported, or a format that cannot be written (one line; exit 2)."""


@dataclass
class _Family:
    """Names of one family in first-seen order, each with its column-safe name."""

    names: dict[str, str] = field(default_factory=dict)
    dropped: int = 0

    def add(self, name: str) -> None:
        if name in self.names:
            return
        if len(self.names) >= MAX_FAMILY:
            self.dropped += 1
            return
        safe = _UNSAFE.sub("_", name) or "_"
        taken = set(self.names.values())
        column, n = safe, 2
        while column in taken:
            column, n = f"{safe}_{n}", n + 1
        self.names[name] = column


@dataclass
class Scan:
    """What the first passes found: the columns, the pipeline's phases and detector events, and
    the stream's interval and origin."""

    columns: list[str]
    interval_s: float | None
    origin: float | None
    phases: list[tuple[float, float, str]]  # (first_mono, last_mono, name), in order
    events: list[Event]
    notes: list[str]
    stats: ReadStats
    cores: int = 0
    gpcs: int = 0
    engines: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)  # name: (column, load, mhz)
    zones: dict[str, str] = field(default_factory=dict)
    rails: dict[str, str] = field(default_factory=dict)
    table: str = "samples"
    counters: dict[str, str] = field(default_factory=dict)  # the power table's
    fans: dict[str, str] = field(default_factory=dict)
    #: Whether any row has a wall time (then the export has a ``time`` column).
    has_wall: bool = False
    #: What the file is, for Parquet's key-value metadata (``export_types.export_metadata``).
    metadata: dict[str, str] = field(default_factory=dict)


def check_file(path: str) -> None:
    if not os.path.isfile(path):
        raise ExportError(f"cannot read {path}: " + ("not a regular file" if os.path.exists(path)
                                                     else "No such file or directory"))


def file_lines(path: str) -> Callable[[], Iterator[str]]:
    def lines() -> Iterator[str]:
        with open_text(path) as stream:
            yield from stream
    return lines


class _Seen:
    """What a pass over the records shows of each column family (``scan_file``)."""

    def __init__(self) -> None:
        self.has = {"ram": False, "swap": False, "gpu": False, "emc": False, "power": False, "io": False,
                    "wall": False}
        self.cores = self.gpcs = 0
        self.engines, self.zones, self.rails, self.fans = _Family(), _Family(), _Family(), _Family()
        self.power_rails, self.counters = _Family(), _Family()
        #: Per engine name: whether any sample gave its load, its clock.
        self.engine_values: dict[str, list[bool]] = {}
        #: The engines of which a value is still to be seen (the rest need no look).
        self._open_engines: dict[str, list[bool]] = {}

    def watch(self, records: Iterable[Record]) -> Iterator[Record]:
        """``records``, passed on as each is looked at."""
        add_sample, add = self._add_sample, self.add
        for record in records:
            if type(record) is Sample:
                if record.is_sample:
                    add_sample(record)
            else:
                add(record)
            yield record

    def add(self, record: Record) -> None:
        has = self.has
        if isinstance(record, PowerReading):
            has["wall"] |= record.t_wall is not None
            for name in record.rails_mw:
                self.power_rails.add(name)
            for name in record.counters_mj:
                self.counters.add(name)
            return
        if isinstance(record, ProcessReading):
            has["wall"] |= record.t_wall is not None
            return
        if isinstance(record, Sample) and record.is_sample:
            self._add_sample(record)

    def _add_sample(self, s: Sample) -> None:
        has, gpu, fans = self.has, s.gpu, s.fans
        if not (s.engines.keys() <= self.engines.names.keys() and s.temps_c.keys() <= self.zones.names.keys()
                and s.rails.keys() <= self.rails.names.keys()
                and (not fans or fans.keys() <= self.fans.names.keys())
                and (not s.cpus or len(s.cpus) <= self.cores)
                and (gpu is None or (has["gpu"] and len(gpu.gpc_mhz) <= self.gpcs))
                and (s.t_wall is None or has["wall"]) and (s.ram is None or has["ram"])
                and (s.swap is None or has["swap"]) and (s.emc is None or has["emc"])
                and (s.io is None or has["io"])):
            self._add_shape(s)
        open_engines = self._open_engines
        if open_engines:
            for name, engine in s.engines.items():
                seen = open_engines.get(name)
                if seen is None:
                    continue
                if engine.load_pct is not None:
                    seen[0] = True
                if engine.mhz is not None:
                    seen[1] = True
                if seen[0] and seen[1]:
                    del open_engines[name]

    def _add_shape(self, s: Sample) -> None:
        """The columns of a sample that shows something not seen yet (a name, a part, more cores):
        what a look at every sample would find (``_add_sample``). A name past ``MAX_FAMILY`` is
        never known, so each sample naming it comes here and counts it as dropped."""
        has = self.has
        has["wall"] |= s.t_wall is not None
        has["ram"] |= s.ram is not None
        has["swap"] |= s.swap is not None
        has["emc"] |= s.emc is not None
        if s.cpus:
            self.cores = max(self.cores, len(s.cpus))
        if s.gpu is not None:
            has["gpu"] = True
            self.gpcs = max(self.gpcs, len(s.gpu.gpc_mhz))
        for name in s.engines:
            self.engines.add(name)
            if name not in self.engine_values:
                self.engine_values[name] = self._open_engines[name] = [False, False]
        for name in s.temps_c:
            self.zones.add(name)
        for name in s.rails:
            self.rails.add(name)
        for name in s.fans or {}:
            self.fans.add(name)
        has["io"] |= s.io is not None
        has["power"] |= bool(s.rails) and power_plan(tuple(s.rails)) is not None


def scan_file(path: str, *, tz: tzinfo, interval_s: float | None = None,
              config: Config | None = None, table: str = "samples", trtexec: TrtexecRun | None = None,
              log_start: float | None = None) -> Scan:
    """The columns of ``table`` and the pipeline's phases and events (the board first inferred
    from the file where nothing names it, as ``report`` does), found in one pass through the
    pipeline, after the stream's interval from its first records (as ``report`` finds it).
    ``trtexec``: a run placed on the file (``--trtexec``; ``log_start``: ``--log-start``), whose
    phases are then among the pipeline's, as in ``report``."""
    if table not in TABLES:
        raise ExportError(f"unknown table {table!r}: one of {', '.join(TABLES)}")
    check_file(path)
    lines = file_lines(path)
    try:
        header = read_header(path)
        early = ReadStats()
        for _ in iter_records(lines(), tz=tz, interval_s=interval_s, stats=early):
            if early.interval_final:
                break
        stats, seen = early, _Seen()

        def records() -> Iterable[Record]:
            nonlocal stats, seen
            stats, seen = ReadStats(), _Seen()  # the last full read is the one kept
            stream = seen.watch(iter_records(lines(), tz=tz, interval_s=interval_s, stats=stats))
            return stream if trtexec is None else with_trtexec(stream, trtexec, log_start)

        pipeline, events = run_pipeline(records, early.interval_s or interval_s or 1.0,
                                        SourceInfo.from_mapping(header or {}, source="replay"),
                                        config or Config())
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except RecordingError as exc:
        raise ExportError(f"cannot read {path}: {exc}") from None
    ledger = pipeline.ledger
    metadata = export_metadata(header, pipeline.board, tz, table)
    phases = [(p.first_mono, p.last_mono, p.name) for p in ledger.phases()
              if p.first_mono is not None and p.last_mono is not None]
    events_by_start = sorted((e for e in events if e.start_mono is not None and e.t_mono is not None),
                             key=lambda e: e.start_mono or 0.0)
    origin = ledger.whole.first_mono
    interval = stats.interval_s or interval_s
    if table == "processes":
        return Scan(list(PROCESS_COLUMNS), interval, origin, phases, events_by_start, [], stats,
                    table=table, has_wall=seen.has["wall"], metadata=metadata)
    if table == "power":
        columns = [*TIMES, "phase", "source", "period_s", "gap_s"]
        columns += [f"rail_{column}_mw" for column in seen.power_rails.names.values()]
        columns += [f"counter_{column}_mj" for column in seen.counters.names.values()]
        notes = [f"{family.dropped} {what} past {MAX_FAMILY} dropped"
                 for family, what in ((seen.power_rails, "rails"), (seen.counters, "counters"))
                 if family.dropped]
        return Scan(columns, interval, origin, phases, events_by_start, notes, stats,
                    rails=seen.power_rails.names, table=table, counters=seen.counters.names,
                    has_wall=seen.has["wall"], metadata=metadata)
    has = seen.has
    cores, gpcs = min(seen.cores, MAX_FAMILY), min(seen.gpcs, MAX_FAMILY)
    columns = [*TIMES, "phase", "throttle", "gap_s"]
    if has["ram"]:
        columns += ["ram_used_mb", "ram_total_mb"]
    if has["swap"]:
        columns += ["swap_used_mb", "swap_total_mb"]
    for n in range(cores):
        columns += [f"cpu{n}_load_pct", f"cpu{n}_mhz"]
    if has["gpu"]:
        columns += ["gpu_load_pct", "gpu_mhz"]
    if gpcs > 1:
        columns += [f"gpc{n}_mhz" for n in range(gpcs)]
    if has["emc"]:
        columns += ["emc_load_pct", "emc_mhz"]
    engine_columns: dict[str, tuple[str, bool, bool]] = {}
    for name, column in seen.engines.names.items():
        load, mhz = seen.engine_values[name]
        engine_columns[name] = (column, load, mhz)
        if load:
            columns.append(f"engine_{column}_load_pct")
        if mhz:
            columns.append(f"engine_{column}_mhz")
    columns += [f"temp_{column}_c" for column in seen.zones.names.values()]
    columns += [f"rail_{column}_mw" for column in seen.rails.names.values()]
    if has["power"]:
        columns += ["power_total_mw", "power_total_source"]
    columns += [f"fan_{column}_{unit}" for column in seen.fans.names.values() for unit in ("pct", "rpm")]
    if has["io"]:
        columns += [f"{name}_mb_s" for name in IO_COLUMNS]
    notes = [f"{family.dropped} {what} past {MAX_FAMILY} dropped"
             for family, what in ((seen.engines, "engines"), (seen.zones, "zones"), (seen.rails, "rails"))
             if family.dropped]
    return Scan(columns, interval, origin, phases, events_by_start,
                notes, stats, cores, gpcs, engine_columns, seen.zones.names, seen.rails.names,
                fans=seen.fans.names, has_wall=has["wall"], metadata=metadata)

"""``jroof-tui export FILE``: one flat row per sample, for pandas, spreadsheets and papers.

A recording or a plain tegrastats log is read by the one reader (``logfile.iter_records``) and its
phases and throttle events are the pipeline's (``report.run_pipeline``: the same ``Pipeline`` and
detectors as the monitor, ``record`` and ``report``). The columns are found from the whole file
as it goes through the pipeline, before any row is written, so every row has the same columns in
the same order; each column has one type whatever the file holds (``export_types``); a value a
sample lacks is empty (CSV), ``null`` (JSON Lines) or null (Parquet), never 0. Units are in the
names. Formats: ``csv`` (a header row; ``pandas.read_csv`` gives numbers as numbers), ``jsonl``
(one object per row, every key in every row) and ``parquet`` (only where ``pyarrow`` is installed).

Columns, in this order (families appear only when the file has them; ``N`` counts from 0):

- ``t_wall``: unix seconds of the sample (empty for logs without stamps).
- ``time``: the same in UTC, tz-aware (``export_types``); empty where ``t_wall`` is.
- ``t_mono``: the sample's seconds on the stream's monotonic timeline (``Sample.t_mono``; a later
  session's restarted clock goes on after its gap, as every reader places it).
- ``t_s``: seconds from the file's first sample on the stream's monotonic timeline (``report``'s
  ``start_s``), to the microsecond.
- ``phase``: the phase the sample is in (a phase covers its first to its last sample), else empty.
- ``throttle``: the detector events in progress at the sample, ``KIND:UNIT`` joined by ``;``
  (``throttle:gpu``, ``mode_cap:emc``; as ``report``'s ``events``), else empty.
- ``gap_s``: on the first sample after a break (a gap, a new recording session): seconds missed.
- ``ram_used_mb``, ``ram_total_mb``, ``swap_used_mb``, ``swap_total_mb``: memory in MB.
- ``cpuN_load_pct``, ``cpuN_mhz``: per core; both empty for an offline core.
- ``gpu_load_pct``, ``gpu_mhz``: GPU load and clock (the highest GPC's); ``gpcN_mhz`` per GPC, only
  where the file shows more than one GPC.
- ``emc_load_pct``, ``emc_mhz``: the memory controller.
- ``engine_NAME_load_pct``, ``engine_NAME_mhz``: hardware engines (``NVENC0``, ``VIC``, ``APE``...),
  each column only where the file gives that value; empty while the engine is ``off``.
- ``temp_ZONE_c``: temperature per zone, zones in lower case (``temp_tj_c``); empty for a sensor
  that is off (``-256C``).
- ``rail_NAME_mw``: instantaneous power per rail as tegrastats names it (``rail_VDD_IN_mw``),
  never tegrastats' running average.
- ``power_total_mw``, ``power_total_source``: total input power and where it comes from
  (``VDD_IN``, or ``sum(A+B)``).
- ``fan_NAME_pct``, ``fan_NAME_rpm``: a fan's PWM duty in % and its tachometer's rpm (``fan_pwmfan_pct``).
- ``disk_read_mb_s``, ``disk_write_mb_s``, ``net_rx_mb_s``, ``net_tx_mb_s``: this machine's disk and
  network throughput since the previous sample (live recordings; MB = 2^20 bytes).

``--table power`` writes the power read at its source between samples instead (``PowerReading``s:
the board's monitors, NVML, RAPL; ``record --power-hz``), one row per reading, in this order:
``t_wall``, ``time``, ``t_mono``, ``t_s``, ``phase`` and ``gap_s`` as above; ``source`` (what
measured it: ``INA3221 hwmon``, ``NVML``...); ``period_s`` (the sampler's period);
``rail_NAME_mw`` (power now, per rail); ``counter_NAME_mj`` (cumulative energy counters: NVML's
total energy, RAPL, mJ).

``--table processes`` writes the recorded processes (``ProcessReading``s; ``record`` on a host),
one row per process per reading (a reading of no process has none): the reading's ``t_wall``,
``time``, ``t_mono``, ``t_s``, ``phase``, ``source``, ``period_s``, ``gap_s`` (on each row of the
first reading after a break), ``floor_pct`` (processes under it were left out), ``priming``
(the first reading: no CPU figures yet); the process's ``pid``, ``name``, ``cpu_pct`` (% of one
core since the previous reading), ``rss_mb``, ``gpu_mem_mb`` and ``benchmark`` (in the
benchmark's process tree).

Names from the file are kept but for characters outside ``A-Z a-z 0-9 _``, which become ``_``. At
most 256 columns per family (cores, GPCs, engines, zones, rails); more are dropped with a note.
Nothing here imports Textual.
"""

from __future__ import annotations

import bisect
import csv
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import IO, Any

from jtop_roof.formats.logfile import ReadStats, RecordingError, iter_records, open_text, read_header
from jtop_roof.formats.trtexec import TrtexecRun, with_trtexec
from jtop_roof.formats.userfiles import create_output
from jtop_roof.model.codec import json_line
from jtop_roof.model.errors import UserError
from jtop_roof.model.extras import install_hint
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.jsonsafe import terminal_safe
from jtop_roof.model.records import Event, PowerReading, ProcessReading, Record, Sample
from jtop_roof.outputs.export_types import (
    ExportTable,
    export_metadata,
    export_table,
    parquet_schema,
    typed_rows,
)
from jtop_roof.outputs.report import run_pipeline, spreadsheet_text
from jtop_roof.runtime.config import Config

FORMATS = ("csv", "jsonl", "parquet")
NEEDS_PYARROW = "parquet needs pyarrow: " + install_hint("parquet", "pyarrow")
#: What ``--table`` takes: one row per sample, per power reading, or per process per process reading.
TABLES = ("samples", "power", "processes")
#: The times that start every table's row.
TIMES = ("t_wall", "time", "t_mono", "t_s")
#: The processes table's columns.
PROCESS_COLUMNS = (*TIMES, "phase", "source", "period_s", "gap_s", "floor_pct", "priming", "pid", "name",
                   "cpu_pct", "rss_mb", "gpu_mem_mb", "benchmark")
#: Columns per family at most (a hostile file may name a new rail on every line).
MAX_FAMILY = 256
#: Rows per Parquet row group.
PARQUET_BATCH = 65_536
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


def _check_file(path: str) -> None:
    if not os.path.isfile(path):
        raise ExportError(f"cannot read {path}: " + ("not a regular file" if os.path.exists(path)
                                                     else "No such file or directory"))


def _lines(path: str) -> Callable[[], Iterator[str]]:
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
        self.engine_values: dict[str, list[bool]] = {}

    def watch(self, records: Iterable[Record]) -> Iterator[Record]:
        """``records``, passed on as each is looked at."""
        for record in records:
            self.add(record)
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
        if not isinstance(record, Sample) or not record.is_sample:
            return
        has["wall"] |= record.t_wall is not None
        has["ram"] |= record.ram is not None
        has["swap"] |= record.swap is not None
        has["emc"] |= record.emc is not None
        if record.cpus:
            self.cores = max(self.cores, len(record.cpus))
        if record.gpu is not None:
            has["gpu"] = True
            self.gpcs = max(self.gpcs, len(record.gpu.gpc_mhz))
        for name, engine in record.engines.items():
            self.engines.add(name)
            seen = self.engine_values.setdefault(name, [False, False])
            seen[0] |= engine.load_pct is not None
            seen[1] |= engine.mhz is not None
        for name in record.temps_c:
            self.zones.add(name)
        for name in record.rails:
            self.rails.add(name)
        for name in record.fans or {}:
            self.fans.add(name)
        has["io"] |= record.io is not None
        has["power"] |= bool(record.rails) and record.power_total is not None


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
    _check_file(path)
    lines = _lines(path)
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


def iter_rows(path: str, scan: Scan, *, tz: tzinfo,
              interval_s: float | None = None) -> Iterator[dict[str, Any]]:
    """One dict per sample (per power reading for the power table, per process of a process
    reading for the processes table), keys ``scan.columns`` in order (missing values None; ``time``
    is ``export_types.typed_rows``')."""
    _check_file(path)
    phase_starts = [p[0] for p in scan.phases]
    events = scan.events
    next_event = 0
    active: list[Event] = []
    origin = scan.origin
    pending_gap: float | None = None
    empty = dict.fromkeys(scan.columns)
    table = scan.table
    try:
        for record in iter_records(_lines(path)(), tz=tz, interval_s=interval_s):
            if isinstance(record, Event):
                if record.kind == "gap" and record.gap_s is not None:
                    pending_gap = (pending_gap or 0.0) + record.gap_s
                continue
            if table == "power":
                if isinstance(record, PowerReading):
                    row = dict(empty)
                    _place(row, record.t_wall, record.t_mono, origin, phase_starts, scan)
                    row["gap_s"], pending_gap = pending_gap, None
                    _fill_power(row, record, scan)
                    yield row
                continue
            if table == "processes":
                if isinstance(record, ProcessReading) and record.processes:
                    row = dict(empty)
                    _place(row, record.t_wall, record.t_mono, origin, phase_starts, scan)
                    row["gap_s"], pending_gap = pending_gap, None
                    yield from _process_rows(row, record)
                continue
            if not isinstance(record, Sample) or not record.is_sample:
                continue
            row = dict(empty)
            t = record.t_mono
            _place(row, record.t_wall, t, origin, phase_starts, scan)
            if t is not None:
                while next_event < len(events) and (events[next_event].start_mono or 0.0) <= t:
                    active.append(events[next_event])
                    next_event += 1
                active = [e for e in active if (e.t_mono or 0.0) >= t]
                now = [e for e in active if (e.start_mono or 0.0) <= t]
                if now:
                    row["throttle"] = ";".join(f"{e.kind}:{e.unit}" for e in now)
            row["gap_s"], pending_gap = pending_gap, None
            _fill(row, record, scan)
            yield row
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except RecordingError as exc:
        raise ExportError(f"cannot read {path}: {exc}") from None


def _place(row: dict[str, Any], t_wall: float | None, t: float | None, origin: float | None,
           phase_starts: list[float], scan: Scan) -> None:
    """A row's times and the phase it is in."""
    row["t_wall"], row["t_mono"] = t_wall, t
    if t is None:
        return
    if origin is not None:
        row["t_s"] = round(t - origin, 6)
    at = bisect.bisect_right(phase_starts, t) - 1
    if at >= 0 and scan.phases[at][0] <= t <= scan.phases[at][1]:
        row["phase"] = scan.phases[at][2]


def _process_rows(base: dict[str, Any], reading: ProcessReading) -> Iterator[dict[str, Any]]:
    """One row per process of ``reading``, on ``base`` (its times, phase and gap)."""
    base.update(source=reading.source, period_s=reading.period_s, floor_pct=reading.floor_pct,
                priming=reading.priming)
    for process in reading.processes:
        row = dict(base)
        row.update(pid=process.pid, name=process.name, cpu_pct=process.cpu_pct, rss_mb=process.rss_mb,
                   gpu_mem_mb=process.gpu_mem_mb, benchmark=process.benchmark)
        yield row


def _fill_power(row: dict[str, Any], reading: PowerReading, scan: Scan) -> None:
    row["source"], row["period_s"] = reading.source, reading.period_s
    for name, mw in reading.rails_mw.items():
        column = scan.rails.get(name)
        if column is not None:
            row[f"rail_{column}_mw"] = mw
    for name, mj in reading.counters_mj.items():
        column = scan.counters.get(name)
        if column is not None:
            row[f"counter_{column}_mj"] = mj


def _fill(row: dict[str, Any], s: Sample, scan: Scan) -> None:
    if s.ram is not None and "ram_used_mb" in row:
        row["ram_used_mb"], row["ram_total_mb"] = s.ram.used_mb, s.ram.total_mb
    if s.swap is not None and "swap_used_mb" in row:
        row["swap_used_mb"], row["swap_total_mb"] = s.swap.used_mb, s.swap.total_mb
    for n, core in enumerate((s.cpus or [])[:scan.cores]):
        if core is not None:
            row[f"cpu{n}_load_pct"], row[f"cpu{n}_mhz"] = core.load_pct, core.mhz
    if s.gpu is not None and "gpu_mhz" in row:
        row["gpu_load_pct"], row["gpu_mhz"] = s.gpu.load_pct, s.gpu.mhz
        if scan.gpcs > 1:
            for n, mhz in enumerate(s.gpu.gpc_mhz[:scan.gpcs]):
                row[f"gpc{n}_mhz"] = mhz
    if s.emc is not None and "emc_mhz" in row:
        row["emc_load_pct"], row["emc_mhz"] = s.emc.load_pct, s.emc.mhz
    for name, engine in s.engines.items():
        found = scan.engines.get(name)
        if found is None or engine.off:
            continue
        column, load, mhz = found
        if load:
            row[f"engine_{column}_load_pct"] = engine.load_pct
        if mhz:
            row[f"engine_{column}_mhz"] = engine.mhz
    for name, value in s.temps_c.items():
        zone = scan.zones.get(name)
        if zone is not None:
            row[f"temp_{zone}_c"] = value
    for name, rail in s.rails.items():
        rail_column = scan.rails.get(name)
        if rail_column is not None:
            row[f"rail_{rail_column}_mw"] = rail.now_mw
    total = s.power_total
    if total is not None and "power_total_mw" in row:
        row["power_total_mw"], row["power_total_source"] = total.mw, total.source
    for name, fan in (s.fans or {}).items():
        fan_column = scan.fans.get(name)
        if fan_column is not None:
            row[f"fan_{fan_column}_pct"], row[f"fan_{fan_column}_rpm"] = fan.speed_pct, fan.rpm
    if s.io is not None and "disk_read_mb_s" in row:
        io = s.io
        for name, value in zip(IO_COLUMNS, (io.disk_read_mb_s, io.disk_write_mb_s, io.net_rx_mb_s,
                                            io.net_tx_mb_s), strict=True):
            row[f"{name}_mb_s"] = value


# ------------------------------------------------------------------------------------ writers


def write_csv(rows: Iterator[dict[str, Any]], columns: list[str], out: IO[str]) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow(["" if value is None else spreadsheet_text(value) if isinstance(value, str) else value
                         for value in row.values()])
        count += 1
    return count


def write_jsonl(rows: Iterator[dict[str, Any]], out: IO[str]) -> int:
    """One JSON object a row, a terminal's controls in its strings escaped (``model.jsonsafe``):
    the lines may go to a terminal, or be shown on one later."""
    count = 0
    for row in rows:
        out.write(terminal_safe(json_line(row)))
        count += 1
    return count


def pyarrow_modules() -> tuple[Any, Any] | None:
    """(pyarrow, pyarrow.parquet), or None where pyarrow is not installed."""
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    except ImportError:
        return None


def write_parquet(rows: Iterator[dict[str, Any]], table: ExportTable, out: IO[bytes],
                  metadata: Mapping[str, str]) -> int:
    """``rows`` (``typed_rows`` for Parquet) in ``table``'s types, with ``metadata``."""
    modules = pyarrow_modules()
    if modules is None:
        raise ExportError(NEEDS_PYARROW)
    pa, pq = modules
    schema = parquet_schema(pa, table, metadata)
    columns = table.columns
    count = 0
    with pq.ParquetWriter(out, schema) as writer:
        batch: dict[str, list[Any]] = {c: [] for c in columns}
        for row in rows:
            for column, value in row.items():
                batch[column].append(value)
            count += 1
            if count % PARQUET_BATCH == 0:
                writer.write_table(pa.table(batch, schema=schema))
                batch = {c: [] for c in columns}
        if count % PARQUET_BATCH or count == 0:
            writer.write_table(pa.table(batch, schema=schema))
    return count


@dataclass(frozen=True)
class Export:
    """One table of a file, as ``export`` writes it and the read API frames it: what the scan found,
    each column's type, and the typed rows (read from the file as they are iterated, once)."""

    scan: Scan
    table: ExportTable
    rows: Iterator[dict[str, Any]]


def export_rows(path: str, *, tz: tzinfo, interval_s: float | None = None, config: Config | None = None,
                table: str = "samples", trtexec: TrtexecRun | None = None, log_start: float | None = None,
                aware: bool = False) -> Export:
    """``table`` of ``path`` (``scan_file``'s arguments), its rows typed by ``export_types``
    (``time`` aware where ``aware``, else ISO 8601 text): the one route of export and ``read``."""
    scan = scan_file(path, tz=tz, interval_s=interval_s, config=config, table=table, trtexec=trtexec,
                     log_start=log_start)
    shape = export_table(scan.columns)
    return Export(scan, shape, typed_rows(iter_rows(path, scan, tz=tz, interval_s=interval_s), shape,
                                          aware=aware))


def export_file(
    path: str, fmt: str = "csv", out: str | None = None, *, tz: tzinfo, interval_s: float | None = None,
    config: Config | None = None, stdout: IO[str] | None = None,
    warn: Callable[[str], None] | None = None, table: str = "samples", trtexec: TrtexecRun | None = None,
    log_start: float | None = None,
) -> int:
    """Export ``table`` of ``path`` to ``out`` (stdout when None; not for parquet) in ``fmt``;
    returns the rows written. ``trtexec``, ``log_start``: as ``scan_file``'s. Raises ExportError
    (one line) for input or output that cannot be used."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        if pyarrow_modules() is None:
            raise ExportError(NEEDS_PYARROW)
        if out is None:
            raise ExportError("parquet is binary: give --out PATH")
    exported = export_rows(path, tz=tz, interval_s=interval_s, config=config, table=table, trtexec=trtexec,
                           log_start=log_start, aware=fmt == "parquet")
    scan, shape, rows = exported.scan, exported.table, exported.rows
    if warn is not None:
        for note in scan.notes:
            warn(f"{path}: {note}")
        if scan.stats.truncated_tail:
            warn(f"{path}: the last line is cut short (line {scan.stats.last_line}); the rest is used")
    columns = list(shape.columns)
    try:
        if fmt == "parquet":
            assert out is not None
            with open(create_output(out, inputs=[path]), "wb") as binary:
                return write_parquet(rows, shape, binary, scan.metadata)
        if out is None:
            target = stdout if stdout is not None else sys.stdout
            return write_csv(rows, columns, target) if fmt == "csv" else write_jsonl(rows, target)
        with open(create_output(out, inputs=[path]), "w", encoding="utf-8", newline="") as stream:
            return write_csv(rows, columns, stream) if fmt == "csv" else write_jsonl(rows, stream)
    except BrokenPipeError:
        raise  # `export ... | head`: the reader left; the command line says nothing
    except OSError as exc:
        raise ExportError(f"cannot write {out or 'stdout'}: {exc.strerror or exc}") from None

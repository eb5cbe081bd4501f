"""The second pass of ``export``: each row of a table as a list of typed cells, in the order of the
scan's columns (``export_scan.Scan``), each value of its column's type (``export_types``).

A row is built straight from the record by one function made per table, which knows where each
column sits: no dict per row, no second pass to type the values. How text and time are written
depends on the output (``Cells``): a CSV's text is ``spreadsheet_text``, and the time column is
ISO 8601 text for CSV and JSON Lines, an aware datetime for Parquet and frames.
Nothing here imports Textual.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from jtop_roof.formats.logfile import RecordingError, iter_records
from jtop_roof.model.records import Event, PowerReading, ProcessReading, Sample
from jtop_roof.outputs.export_scan import IO_COLUMNS, ExportError, Scan, check_file, file_lines
from jtop_roof.outputs.export_types import TIME_COLUMN, utc_time

#: A row as built: one cell a column, in the scan's order (None: the value is missing).
Row = list[Any]
#: Fills a row's cells from a sample.
Filler = Callable[[Row, Sample], None]
#: Shown texts remembered at most (power sources, throttle sets: a few per file).
MAX_SHOWN = 1024


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Cells:
    """How text and time cells are written: ``text`` makes each text cell (``spreadsheet_text``
    for CSV); ``aware``: the time as an aware UTC datetime, else as ISO 8601 text."""

    text: Callable[[str], str] = _same
    aware: bool = False

    def shown(self) -> Callable[[str], str]:
        """``text``, remembering what it made of each text (bounded)."""
        text = self.text
        if text is _same:
            return text
        made: dict[str, str] = {}

        def shown(value: str) -> str:
            found = made.get(value)
            if found is None:
                if len(made) >= MAX_SHOWN:
                    made.clear()
                found = made[value] = text(value)
            return found
        return shown

    def time(self, t_wall: float | None) -> Any:
        """The ``time`` cell of a row of wall time ``t_wall`` (``export_types.utc_time``)."""
        moment = utc_time(t_wall)
        if moment is None or self.aware:
            return moment
        return moment.isoformat(timespec="microseconds")


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def sample_filler(scan: Scan, shown: Callable[[str], str]) -> Filler:
    """The function that fills a samples-table row with a sample's values (the columns after
    ``gap_s``), made once for the scan's columns."""
    index = {column: at for at, column in enumerate(scan.columns)}
    ram_at, swap_at = index.get("ram_used_mb"), index.get("swap_used_mb")
    cores = scan.cores
    cpu_at = index.get("cpu0_load_pct", 0)
    gpu_at, emc_at = index.get("gpu_load_pct"), index.get("emc_load_pct")
    gpcs = scan.gpcs if scan.gpcs > 1 else 0
    gpc_at = index.get("gpc0_mhz", 0)
    engines = {name: (index[f"engine_{column}_load_pct"] if load else None,
                      index[f"engine_{column}_mhz"] if mhz else None)
               for name, (column, load, mhz) in scan.engines.items()}
    zones = {name: index[f"temp_{column}_c"] for name, column in scan.zones.items()}
    rails = {name: index[f"rail_{column}_mw"] for name, column in scan.rails.items()}
    power_at = index.get("power_total_mw")
    fans = {name: index[f"fan_{column}_pct"] for name, column in scan.fans.items()}
    io_at = index.get(f"{IO_COLUMNS[0]}_mb_s")

    def fill(row: Row, s: Sample) -> None:
        v: Any  # a value as the record holds it (the types allow None in fewer places than a source)
        memory = s.ram
        if memory is not None and ram_at is not None:
            v = memory.used_mb
            row[ram_at] = None if v is None else float(v)
            v = memory.total_mb
            row[ram_at + 1] = None if v is None else float(v)
        memory = s.swap
        if memory is not None and swap_at is not None:
            v = memory.used_mb
            row[swap_at] = None if v is None else float(v)
            v = memory.total_mb
            row[swap_at + 1] = None if v is None else float(v)
        cpus = s.cpus
        if cpus and cores:
            at = cpu_at
            for core in cpus[:cores]:
                if core is not None:
                    v = core.load_pct
                    row[at] = None if v is None else float(v)
                    v = core.mhz
                    row[at + 1] = None if v is None else int(v)
                at += 2
        gpu = s.gpu
        if gpu is not None and gpu_at is not None:
            v = gpu.load_pct
            row[gpu_at] = None if v is None else float(v)
            v = gpu.mhz
            row[gpu_at + 1] = None if v is None else int(v)
            if gpcs:
                at = gpc_at
                for v in gpu.gpc_mhz[:gpcs]:
                    row[at] = None if v is None else int(v)
                    at += 1
        emc = s.emc
        if emc is not None and emc_at is not None:
            v = emc.load_pct
            row[emc_at] = None if v is None else float(v)
            v = emc.mhz
            row[emc_at + 1] = None if v is None else int(v)
        for name, engine in s.engines.items():
            places = engines.get(name)
            if places is None or engine.off:
                continue
            load_at, mhz_at = places
            if load_at is not None:
                v = engine.load_pct
                row[load_at] = None if v is None else float(v)
            if mhz_at is not None:
                v = engine.mhz
                row[mhz_at] = None if v is None else int(v)
        for name, v in s.temps_c.items():
            place = zones.get(name)
            if place is not None:
                row[place] = None if v is None else float(v)
        for name, rail in s.rails.items():
            place = rails.get(name)
            if place is not None:
                v = rail.now_mw
                row[place] = None if v is None else float(v)
        if power_at is not None:
            total = s.power_total
            if total is not None:
                row[power_at] = float(total.mw)
                row[power_at + 1] = shown(total.source)
        if s.fans:
            for name, fan in s.fans.items():
                place = fans.get(name)
                if place is not None:
                    v = fan.speed_pct
                    row[place] = None if v is None else float(v)
                    v = fan.rpm
                    row[place + 1] = None if v is None else float(v)
        io = s.io
        if io is not None and io_at is not None:
            row[io_at:io_at + 4] = [_float(io.disk_read_mb_s), _float(io.disk_write_mb_s),
                                    _float(io.net_rx_mb_s), _float(io.net_tx_mb_s)]
    return fill


def _power_row(row: Row, reading: PowerReading, scan: Scan, index: dict[str, int],
               shown: Callable[[str], str]) -> None:
    row[index["source"]], row[index["period_s"]] = shown(reading.source), _float(reading.period_s)
    for name, mw in reading.rails_mw.items():
        column = scan.rails.get(name)
        if column is not None:
            row[index[f"rail_{column}_mw"]] = _float(mw)
    for name, mj in reading.counters_mj.items():
        column = scan.counters.get(name)
        if column is not None:
            row[index[f"counter_{column}_mj"]] = _float(mj)


def _process_rows(base: Row, reading: ProcessReading, index: dict[str, int],
                  shown: Callable[[str], str]) -> Iterator[Row]:
    """One row per process of ``reading``, on ``base`` (its times, phase and gap)."""
    base[index["source"]], base[index["period_s"]] = shown(reading.source), _float(reading.period_s)
    base[index["floor_pct"]] = _float(reading.floor_pct)
    base[index["priming"]] = None if reading.priming is None else bool(reading.priming)
    pid_at = index["pid"]
    for process in reading.processes:
        row = base.copy()
        row[pid_at:pid_at + 6] = [
            None if process.pid is None else int(process.pid),
            None if process.name is None else shown(process.name),
            _float(process.cpu_pct), _float(process.rss_mb), _float(process.gpu_mem_mb),
            None if process.benchmark is None else bool(process.benchmark)]
        yield row


def iter_rows(path: str, scan: Scan, *, tz: tzinfo, interval_s: float | None = None,
              cells: Cells | None = None) -> Iterator[Row]:
    """One row per sample (per power reading for the power table, per process of a process
    reading for the processes table): a list of ``scan.columns``' cells in order, each of its
    column's type, None where missing; text and time as ``cells`` says."""
    check_file(path)
    cells = cells or Cells()
    shown = cells.shown()
    index = {column: at for at, column in enumerate(scan.columns)}
    blank: Row = [None] * len(scan.columns)
    t_wall_at, t_mono_at, t_s_at, phase_at = index["t_wall"], index["t_mono"], index["t_s"], index["phase"]
    time_at = index.get(TIME_COLUMN)
    gap_at = index["gap_s"]
    throttle_at = index.get("throttle")
    phase_starts = [p[0] for p in scan.phases]
    phase_ends = [p[1] for p in scan.phases]
    phase_names = [shown(p[2]) for p in scan.phases]
    events = scan.events
    next_event = 0
    active: list[Event] = []
    origin = scan.origin
    pending_gap: float | None = None
    table = scan.table
    fill = sample_filler(scan, shown) if table == "samples" else None
    time_cell = cells.time

    def place(row: Row, t_wall: float | None, t: float | None) -> None:
        """A row's times and the phase it is in."""
        wall = None if t_wall is None else float(t_wall)
        row[t_wall_at] = wall
        if time_at is not None:
            row[time_at] = time_cell(wall)
        if t is None:
            return
        row[t_mono_at] = float(t)
        if origin is not None:
            row[t_s_at] = float(round(t - origin, 6))
        at = bisect.bisect_right(phase_starts, t) - 1
        if at >= 0 and t <= phase_ends[at]:
            row[phase_at] = phase_names[at]

    try:
        for record in iter_records(file_lines(path)(), tz=tz, interval_s=interval_s):
            kind = type(record)
            if kind is Sample:
                assert isinstance(record, Sample)
                if fill is None or not record.is_sample:
                    continue
                row = blank.copy()
                t = record.t_mono
                place(row, record.t_wall, t)
                if t is not None and throttle_at is not None and (active or next_event < len(events)):
                    while next_event < len(events) and (events[next_event].start_mono or 0.0) <= t:
                        active.append(events[next_event])
                        next_event += 1
                    active = [e for e in active if (e.t_mono or 0.0) >= t]
                    now = [e for e in active if (e.start_mono or 0.0) <= t]
                    if now:
                        row[throttle_at] = shown(";".join(f"{e.kind}:{e.unit}" for e in now))
                row[gap_at], pending_gap = pending_gap, None
                fill(row, record)
                yield row
            elif isinstance(record, Event):
                if record.kind == "gap" and record.gap_s is not None:
                    pending_gap = (pending_gap or 0.0) + record.gap_s
            elif table == "power" and isinstance(record, PowerReading):
                row = blank.copy()
                place(row, record.t_wall, record.t_mono)
                row[gap_at], pending_gap = pending_gap, None
                _power_row(row, record, scan, index, shown)
                yield row
            elif table == "processes" and isinstance(record, ProcessReading) and record.processes:
                row = blank.copy()
                place(row, record.t_wall, record.t_mono)
                row[gap_at], pending_gap = pending_gap, None
                yield from _process_rows(row, record, index, shown)
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except RecordingError as exc:
        raise ExportError(f"cannot read {path}: {exc}") from None

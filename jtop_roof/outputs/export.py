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

import csv
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import tzinfo
from itertools import islice
from typing import IO, Any

from jtop_roof.formats.trtexec import TrtexecRun
from jtop_roof.formats.userfiles import create_output
from jtop_roof.model.codec import finite_or_null
from jtop_roof.model.extras import install_hint
from jtop_roof.model.jsonsafe import terminal_safe
from jtop_roof.outputs.export_fill import Cells, Row, iter_rows
from jtop_roof.outputs.export_scan import PROCESS_COLUMNS, TABLES, ExportError, Scan, scan_file
from jtop_roof.outputs.export_types import ExportTable, export_table, parquet_schema
from jtop_roof.outputs.output_formats import export_format, export_names
from jtop_roof.outputs.report import spreadsheet_text
from jtop_roof.runtime.config import Config

__all__ = ["PROCESS_COLUMNS", "TABLES", "Export", "ExportError", "Scan", "export_file",
           "export_rows", "iter_rows", "scan_file", "write_csv", "write_jsonl", "write_parquet"]

NEEDS_PYARROW = "parquet needs pyarrow: " + install_hint("parquet", "pyarrow")
#: Rows per Parquet row group: its columns are held in memory until it is written (8,192 rows of
#: a board's 60 columns: some 4 MB, 30 MB at the peak with the writer's), so the export's memory
#: does not grow with the file (a million samples in under 100 MB).
PARQUET_BATCH = 8_192
#: Rows typed into a row group's columns at a time (``export_arrow.ArrowGroup``), so that the
#: rows held as Python objects at once stay few.
ARROW_CHUNK = 1_024


# ------------------------------------------------------------------------------------ writers


class _Counted:
    """Rows passed on, counted."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self.rows, self.count = rows, 0

    def __iter__(self) -> Iterator[Row]:
        for row in self.rows:
            self.count += 1
            yield row


def write_csv(rows: Iterable[Row], columns: list[str], out: IO[str]) -> int:
    """``rows`` (``iter_rows`` with text cells already ``spreadsheet_text``) under a
    header of ``columns``; a missing value is an empty cell."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    counted = _Counted(rows)
    writer.writerows(counted)
    return counted.count


def write_jsonl(rows: Iterable[Row], columns: list[str], out: IO[str]) -> int:
    """One JSON object a row (``model.codec.json_line``'s form: NaN and infinities as null), a
    terminal's controls in its strings escaped (``model.jsonsafe``): the lines may go to a
    terminal, or be shown on one later."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    count = 0
    for row in rows:
        obj = dict(zip(columns, row, strict=True))
        try:
            text = encode(obj)
        except ValueError:
            text = encode(finite_or_null(obj))
        out.write(terminal_safe(text + "\n"))
        count += 1
    return count


def pyarrow_found() -> bool:
    """Whether pyarrow is installed, without importing it (some 25 MB)."""
    try:
        return importlib.util.find_spec("pyarrow") is not None
    except (ImportError, ValueError):
        return False


def pyarrow_modules() -> tuple[Any, Any] | None:
    """(pyarrow, pyarrow.parquet), or None where pyarrow is not installed."""
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    except ImportError:
        return None


def write_parquet(rows: Iterable[Row], table: ExportTable, out: IO[bytes],
                  metadata: Mapping[str, str]) -> int:
    """``rows`` (``iter_rows`` with ``TYPED_CELLS``) in ``table``'s types, with ``metadata``: a row
    group each ``PARQUET_BATCH`` rows, typed into Arrow (``export_arrow``) ``ARROW_CHUNK`` rows at
    a time, so that the rows held as Python objects stay few: memory does not grow with the file."""
    modules = pyarrow_modules()
    if modules is None:
        raise ExportError(NEEDS_PYARROW)
    pa, pq = modules
    from jtop_roof.outputs.export_arrow import ArrowGroup  # numpy: only Parquet needs it

    schema = parquet_schema(pa, table, metadata)
    kinds = [(table.types[column], schema.field(at).type) for at, column in enumerate(table.columns)]
    group = ArrowGroup(pa, kinds, PARQUET_BATCH)
    count = 0
    rows = iter(rows)
    with pq.ParquetWriter(out, schema) as writer:
        while True:
            while group.count < PARQUET_BATCH:
                chunk = list(islice(rows, min(ARROW_CHUNK, PARQUET_BATCH - group.count)))
                if not chunk:
                    break
                group.add(chunk)
            batch = group.count
            if batch == 0 and count:
                break
            count += batch
            writer.write_table(pa.Table.from_arrays(group.arrays(), schema=schema))
            if batch < PARQUET_BATCH:
                break
    return count


#: How text and time cells are written where no format says (``export_fill.Cells``; each format of
#: ``output_formats`` says its own).
JSONL_CELLS = Cells()
TYPED_CELLS = Cells(aware=True)


@dataclass(frozen=True)
class Export:
    """One table of a file, as ``export`` writes it and the read API frames it: what the scan found,
    each column's type, and the typed rows (read from the file as they are iterated, once): lists of
    cells in the order of ``table.columns``."""

    scan: Scan
    table: ExportTable
    rows: Iterator[Row]


def export_rows(path: str, *, tz: tzinfo, interval_s: float | None = None, config: Config | None = None,
                table: str = "samples", trtexec: TrtexecRun | None = None, log_start: float | None = None,
                aware: bool = False, cells: Cells | None = None) -> Export:
    """``table`` of ``path`` (``scan_file``'s arguments), its rows typed by ``export_types``
    (``time`` aware where ``aware``, else ISO 8601 text; ``cells``, where given, says how text and
    time are written): the one route of export and ``read``."""
    scan = scan_file(path, tz=tz, interval_s=interval_s, config=config, table=table, trtexec=trtexec,
                     log_start=log_start)
    cells = cells or (TYPED_CELLS if aware else JSONL_CELLS)
    return Export(scan, export_table(scan.columns), iter_rows(path, scan, tz=tz, interval_s=interval_s,
                                                              cells=cells))


def export_file(
    path: str, fmt: str = "csv", out: str | None = None, *, tz: tzinfo, interval_s: float | None = None,
    config: Config | None = None, stdout: IO[str] | None = None,
    warn: Callable[[str], None] | None = None, table: str = "samples", trtexec: TrtexecRun | None = None,
    log_start: float | None = None,
) -> int:
    """Export ``table`` of ``path`` to ``out`` (stdout when None; not for parquet) in ``fmt``;
    returns the rows written. ``trtexec``, ``log_start``: as ``scan_file``'s. Raises ExportError
    (one line) for input or output that cannot be used."""
    try:
        spec = export_format(fmt)
    except KeyError:
        raise ExportError(f"unknown format {fmt!r}: one of {', '.join(export_names())}") from None
    missing = spec.missing()
    if missing is not None:
        raise ExportError(missing)
    if spec.binary and out is None:
        raise ExportError(f"{fmt} is binary: give --out PATH")
    cells = Cells(text=spreadsheet_text, aware=spec.aware) if spec.spreadsheet else Cells(aware=spec.aware)
    exported = export_rows(path, tz=tz, interval_s=interval_s, config=config, table=table, trtexec=trtexec,
                           log_start=log_start, cells=cells)
    scan, shape, rows = exported.scan, exported.table, exported.rows
    if warn is not None:
        for note in scan.notes:
            warn(f"{path}: {note}")
        if scan.stats.truncated_tail:
            warn(f"{path}: the last line is cut short (line {scan.stats.last_line}); the rest is used")
    try:
        if spec.load is not None and not spec.load():
            raise ExportError(spec.install())
        if spec.binary:
            assert out is not None
            with open(create_output(out, inputs=[path]), "wb") as binary:
                return spec.write(rows, shape, binary, scan.metadata)
        if out is None:
            target = stdout if stdout is not None else sys.stdout
            return spec.write(rows, shape, target, scan.metadata)
        with open(create_output(out, inputs=[path]), "w", encoding="utf-8", newline="") as stream:
            return spec.write(rows, shape, stream, scan.metadata)
    except BrokenPipeError:
        raise  # `export ... | head`: the reader left; the command line says nothing
    except OSError as exc:
        raise ExportError(f"cannot write {out or 'stdout'}: {exc.strerror or exc}") from None

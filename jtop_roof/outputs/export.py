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

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import tzinfo
from typing import IO

from jtop_roof.formats.trtexec import TrtexecRun
from jtop_roof.formats.userfiles import create_output
from jtop_roof.outputs.export_fill import Cells, Row, iter_rows
from jtop_roof.outputs.export_scan import PROCESS_COLUMNS, TABLES, ExportError, Scan, scan_file
from jtop_roof.outputs.export_types import ExportTable, export_table
from jtop_roof.outputs.export_writers import write_csv, write_jsonl, write_parquet
from jtop_roof.outputs.output_formats import export_format, export_names
from jtop_roof.outputs.report import spreadsheet_text
from jtop_roof.runtime.config import Config

__all__ = ["PROCESS_COLUMNS", "TABLES", "Export", "ExportError", "Scan", "export_file",
           "export_rows", "iter_rows", "scan_file", "write_csv", "write_jsonl", "write_parquet"]

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

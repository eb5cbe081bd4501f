"""The type of every column ``export`` writes, one rule for CSV, JSON Lines and Parquet, so that
pandas reads the CSV and the Parquet of one file into the same dtypes:

- clocks (``*_mhz``) are integers: the boards report whole MHz (``1020`` in CSV, int64 in Parquet);
- every other number is a float and written as one (``12.0``): a column of whole values (tegrastats'
  loads) would otherwise read as integers from CSV and as floats from Parquet;
- ``time``, beside ``t_wall``, only where the file has wall times: the sample's time in UTC, ISO
  8601 with its offset in CSV and JSON Lines (``2026-12-01T14:45:24.500000+00:00``; pandas:
  ``read_csv(..., parse_dates=["time"])``), a UTC timestamp in Parquet (``datetime64[us, UTC]``).
  A wall time outside the calendar (years 1 to 9999) has none;
- text columns are strings, but one the file leaves empty throughout (``phase`` of a run without
  phases, ``throttle`` of one without events: ``EMPTY``) is a float column of nulls, which is what
  pandas makes of an empty CSV column.

Parquet also carries the file's description as key-value metadata (``jroof.*``, ``METADATA_KEYS``).
Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Any

import jtop_roof
from jtop_roof.roofline.board import Board

#: The tz-aware time column, placed after ``t_wall``.
TIME_COLUMN = "time"
#: Column types: what each column holds in every format (``EMPTY``: a text column that holds
#: nothing in this file, written as floats, all null).
FLOAT, INT, TEXT, TIME, EMPTY = "float", "int", "text", "time", "empty"
#: Suffixes of the integer columns.
INT_SUFFIXES = ("_mhz",)
#: The Parquet metadata keys, each present only where the file or the pipeline says it.
METADATA_KEYS = ("jroof.version", "jroof.recorded_by", "jroof.table", "jroof.source", "jroof.board",
                 "jroof.device", "jroof.device_source", "jroof.power_mode", "jroof.power_mode_source",
                 "jroof.tz")


@dataclass(frozen=True)
class ExportTable:
    """The columns an export writes, in order, and each one's type."""

    columns: tuple[str, ...]
    types: Mapping[str, str]


def export_table(columns: Sequence[str], *, text: Collection[str], empty: Collection[str],
                 has_wall: bool) -> ExportTable:
    """The table of the scan's ``columns``: ``text`` are its text columns, ``empty`` those the file
    is known to leave empty throughout (no phase, no event), ``has_wall`` whether any row has a
    wall time (then ``time`` follows ``t_wall``)."""
    out: list[str] = []
    types: dict[str, str] = {}
    for column in columns:
        out.append(column)
        if column in text:
            types[column] = EMPTY if column in empty else TEXT
        else:
            types[column] = INT if column.endswith(INT_SUFFIXES) else FLOAT
        if column == "t_wall" and has_wall:
            out.append(TIME_COLUMN)
            types[TIME_COLUMN] = TIME
    return ExportTable(tuple(out), types)


def utc_time(t_wall: float | None) -> datetime | None:
    """Unix seconds as an aware UTC datetime to the microsecond; None outside the calendar."""
    if t_wall is None or not math.isfinite(t_wall):
        return None
    try:
        return datetime.fromtimestamp(t_wall, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def typed_rows(rows: Iterator[dict[str, Any]], table: ExportTable, *, parquet: bool = False
               ) -> Iterator[dict[str, Any]]:
    """``rows`` (``iter_rows``) with the table's columns, each value of its type; ``time`` as an
    aware datetime for ``parquet``, else as ISO 8601 text."""
    kinds = [(column, table.types[column]) for column in table.columns]
    for row in rows:
        typed: dict[str, Any] = {}
        for column, kind in kinds:
            if kind == TIME:
                moment = utc_time(row["t_wall"])
                if moment is not None and not parquet:
                    typed[column] = moment.isoformat(timespec="microseconds")
                else:
                    typed[column] = moment
                continue
            value = None if kind == EMPTY else row[column]
            if value is not None and kind != TEXT:
                value = int(value) if kind == INT else float(value)
            typed[column] = value
        yield typed


def parquet_schema(pa: Any, table: ExportTable, metadata: Mapping[str, str]) -> Any:
    """The pyarrow schema of ``table``, with ``metadata`` as its key-value metadata."""
    types = {FLOAT: pa.float64(), INT: pa.int64(), TEXT: pa.string(), TIME: pa.timestamp("us", tz="UTC"),
             EMPTY: pa.float64()}
    return pa.schema([(column, types[table.types[column]]) for column in table.columns],
                     metadata=dict(metadata))


def export_metadata(header: Mapping[str, Any] | None, board: Board, tz: tzinfo, table: str
                    ) -> dict[str, str]:
    """What Parquet says of the file (``METADATA_KEYS``): the jroof that exported it and the one
    that recorded it, the table, what recorded it (``tegrastats log`` for a plain log), the board as
    it names itself, the device and power mode as the pipeline resolved them (and from where:
    given, measured, inferred), and the zone of its stamps. Never the host or the command line."""
    header = header or {}
    zone = header.get("tz") if isinstance(header.get("tz"), str) else getattr(tz, "key", None) or str(tz)
    values: dict[str, object] = {
        "jroof.version": jtop_roof.__version__,
        "jroof.recorded_by": header.get("version"),
        "jroof.table": table,
        "jroof.source": header.get("source") if header else "tegrastats log",
        "jroof.board": header.get("model"),
        "jroof.device": None if board.device is None else board.device.id,
        "jroof.device_source": board.device_source,
        "jroof.power_mode": board.mode_name,
        "jroof.power_mode_source": board.power_mode_source,
        "jroof.tz": zone,
    }
    return {key: value for key, value in values.items() if isinstance(value, str) and value}

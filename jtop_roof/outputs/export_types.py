"""The type of every column ``export`` writes and the read API's frames hold, one rule for CSV,
JSON Lines, Parquet and pandas, whatever the file holds (two runs' files read as one dataset):

- text (``TEXT_COLUMNS``: ``phase``, ``throttle``, ``power_total_source``, ``source``, ``name``)
  is always a string, null where empty, even in a file that leaves it empty throughout;
- clocks (``*_mhz``) and ``pid`` are integers: the boards report whole MHz (``1020`` in CSV, int64
  in Parquet, pandas' nullable ``Int64``);
- ``priming`` and ``benchmark`` (the processes table) are booleans (pandas ``boolean``);
- ``time``: the row's time in UTC, ISO 8601 with its offset in CSV and JSON Lines
  (``2026-12-01T14:45:24.500000+00:00``), a UTC timestamp in Parquet and pandas
  (``datetime64[us, UTC]``); null where the file has no wall time, or one outside the calendar
  (years 1 to 9999);
- every other number is a float and written as one (``12.0``): a column of whole values
  (tegrastats' loads) would otherwise read as integers from CSV and as floats from Parquet.

Parquet carries the file's description as key-value metadata (``jroof.*``, ``METADATA_KEYS``) and
pandas' own (``pandas``), so ``pandas.read_parquet`` gives these dtypes; ``frame`` builds the same
frame from the rows directly (the read API). Nothing here imports Textual.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from itertools import islice
from typing import Any

import jtop_roof
from jtop_roof.model.records import SCHEMA_VERSION
from jtop_roof.roofline.board import Board

#: The tz-aware time column, placed after ``t_wall``.
TIME_COLUMN = "time"
#: Column types: what each column holds in every format.
FLOAT, INT, TEXT, TIME, BOOL = "float", "int", "text", "time", "bool"
#: The text columns of every table.
TEXT_COLUMNS = frozenset(("phase", "throttle", "power_total_source", "source", "name"))
#: The boolean columns (the processes table's).
BOOL_COLUMNS = frozenset(("priming", "benchmark"))
#: The integer columns: by suffix (clocks), and by name.
INT_SUFFIXES = ("_mhz",)
INT_COLUMNS = frozenset(("pid",))
#: Each type in pandas (CSV readers: ``pandas_dtypes``), and in pandas' Parquet metadata
#: (``pandas_type``, ``numpy_type``).
PANDAS_DTYPES = {FLOAT: "float64", INT: "Int64", TEXT: "str", TIME: "datetime64[us, UTC]", BOOL: "boolean"}
_PANDAS_META = {FLOAT: ("float64", "float64"), INT: ("int64", "Int64"), TEXT: ("unicode", "str"),
                TIME: ("datetimetz", "datetime64[us]"), BOOL: ("bool", "boolean")}
#: The Parquet metadata keys, each present only where the file or the pipeline says it
#: (``jroof.schema``: the version of the recording schema, ``model.records.SCHEMA_VERSION``).
#: Rows turned into columns at a time (``columns_of``).
COLUMNS_CHUNK = 8_192
METADATA_KEYS = ("jroof.version", "jroof.schema", "jroof.recorded_by", "jroof.table", "jroof.source",
                 "jroof.board", "jroof.device", "jroof.device_source", "jroof.power_mode",
                 "jroof.power_mode_source", "jroof.tz")


def column_type(column: str) -> str:
    """The type of a column, by its name alone: the same column has the same type in every file."""
    if column == TIME_COLUMN:
        return TIME
    if column in TEXT_COLUMNS:
        return TEXT
    if column in BOOL_COLUMNS:
        return BOOL
    if column in INT_COLUMNS or column.endswith(INT_SUFFIXES):
        return INT
    return FLOAT


@dataclass(frozen=True)
class ExportTable:
    """The columns an export writes, in order, and each one's type."""

    columns: tuple[str, ...]
    types: Mapping[str, str]


def export_table(columns: Sequence[str]) -> ExportTable:
    """The table of the scan's ``columns``, each typed by ``column_type``."""
    return ExportTable(tuple(columns), {column: column_type(column) for column in columns})


def pandas_dtypes(columns: Iterable[str]) -> dict[str, str]:
    """The pandas dtype of each column but ``time``, for ``pandas.read_csv(f, dtype=...,
    parse_dates=["time"])``: the CSV then reads as the Parquet and the read API's frame."""
    return {c: PANDAS_DTYPES[column_type(c)] for c in columns if c != TIME_COLUMN}


def utc_time(t_wall: float | None) -> datetime | None:
    """Unix seconds as an aware UTC datetime to the microsecond; None outside the calendar."""
    if t_wall is None or not math.isfinite(t_wall):
        return None
    try:
        return datetime.fromtimestamp(t_wall, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _pandas_metadata(table: ExportTable) -> str:
    """pandas' own Parquet metadata: what ``pandas.read_parquet`` turns each column into (nullable
    ``Int64`` and ``boolean``, ``str``), without an index."""
    columns = []
    for column in table.columns:
        pandas_type, numpy_type = _PANDAS_META[table.types[column]]
        columns.append({"name": column, "field_name": column, "pandas_type": pandas_type,
                        "numpy_type": numpy_type,
                        "metadata": {"timezone": "UTC"} if table.types[column] == TIME else None})
    return json.dumps({"index_columns": [], "column_indexes": [], "columns": columns})


def parquet_schema(pa: Any, table: ExportTable, metadata: Mapping[str, str]) -> Any:
    """The pyarrow schema of ``table``, with ``metadata`` and pandas' own as its key-value metadata."""
    types = {FLOAT: pa.float64(), INT: pa.int64(), TEXT: pa.string(), TIME: pa.timestamp("us", tz="UTC"),
             BOOL: pa.bool_()}
    return pa.schema([(column, types[table.types[column]]) for column in table.columns],
                     metadata={**metadata, "pandas": _pandas_metadata(table)})


def frame(pd: Any, table: ExportTable, rows: Iterable[Sequence[Any]]) -> Any:
    """The pandas DataFrame of ``rows`` (``export.export_rows(..., aware=True)``: cells in the
    order of ``table.columns``) in ``table``'s dtypes: equal to ``pandas.read_parquet`` of the same
    rows exported."""
    return columns_frame(pd, table, columns_of(table, rows))


def columns_of(table: ExportTable, rows: Iterable[Sequence[Any]]) -> dict[str, list[Any]]:
    """``rows`` (cells in the order of ``table.columns``) as one list of values a column, taken
    ``COLUMNS_CHUNK`` rows at a time."""
    values: list[list[Any]] = [[] for _ in table.columns]
    rows = iter(rows)
    while chunk := list(islice(rows, COLUMNS_CHUNK)):
        for column, cells in zip(values, zip(*chunk, strict=True), strict=True):
            column.extend(cells)
    return dict(zip(table.columns, values, strict=True))


def columns_frame(pd: Any, table: ExportTable, values: Mapping[str, list[Any]]) -> Any:
    """The DataFrame of columns already typed (``frame``)."""
    return pd.DataFrame({column: pd.array(values[column], dtype=PANDAS_DTYPES[table.types[column]])
                         for column in table.columns}, columns=list(table.columns))


def export_metadata(header: Mapping[str, Any] | None, board: Board, tz: tzinfo, table: str
                    ) -> dict[str, str]:
    """What Parquet says of the file (``METADATA_KEYS``): the jroof that exported it, the schema
    version of its columns and the jroof that recorded it, the table, what recorded it (``tegrastats
    log`` for a plain log), the board as it names itself, the device and power mode as the pipeline
    resolved them (and from where: given, measured, inferred), and the zone of its stamps. Never the
    host or the command line."""
    header = header or {}
    zone = header.get("tz") if isinstance(header.get("tz"), str) else getattr(tz, "key", None) or str(tz)
    values: dict[str, object] = {
        "jroof.version": jtop_roof.__version__,
        "jroof.schema": str(SCHEMA_VERSION),
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

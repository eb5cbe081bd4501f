"""Export's writers: CSV, JSON Lines and Parquet, each ``rows`` (``export_fill.iter_rows``) under
a table's columns. ``output_formats`` declares which format writes through which; ``export_file``
is their one caller. Nothing here imports Textual.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import json
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import IO, Any

from jtop_roof.model.codec import finite_or_null
from jtop_roof.model.extras import install_hint
from jtop_roof.model.jsonsafe import terminal_safe
from jtop_roof.outputs.export_fill import Row
from jtop_roof.outputs.export_scan import ExportError
from jtop_roof.outputs.export_types import ExportTable, parquet_schema

NEEDS_PYARROW = "parquet needs pyarrow: " + install_hint("parquet", "pyarrow")
#: Rows per Parquet row group: its columns are held in memory until it is written (8,192 rows of
#: a board's 60 columns: some 4 MB, 30 MB at the peak with the writer's), so the export's memory
#: grows with the file only by the footer's metadata of each group (94 MB for a million samples,
#: 90 MB for a day's 86,400: ``benchmarks/recording.py``).
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
    """(pyarrow, pyarrow._parquet), or None where pyarrow is not installed.

    The writer is ``pyarrow._parquet.ParquetWriter``, the class ``pyarrow.parquet.ParquetWriter``
    builds with the options of ``parquet_writer``: ``pyarrow.parquet`` also imports
    ``pyarrow.fs`` with its cloud filesystems (S3, GCS, Azure, HDFS), some 9 MB of memory that
    writing to an open file never uses: a million-sample export peaks at 94 MB rather than
    102–104 MB (docs/performance.md). The tests hold the file it writes equal to
    ``pyarrow.parquet``'s; a pyarrow whose private class no longer takes these options writes
    through ``pyarrow.parquet`` (``parquet_writer``)."""
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow._parquet")
    except ImportError:
        return None


class _ParquetFile:
    """A Parquet writer, closed when the block ends (the private class has no ``with``)."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer

    def __enter__(self) -> Any:
        return self.writer

    def __exit__(self, *_: object) -> None:
        self.writer.close()


def parquet_writer(parquet: Any, out: IO[bytes], schema: Any) -> _ParquetFile:
    """A writer of ``schema`` to ``out`` with ``pyarrow.parquet.ParquetWriter``'s defaults: format
    2.6, Snappy, dictionaries and statistics for every column, the Arrow schema stored; that
    class itself where a later pyarrow's private one takes other options."""
    try:
        writer = parquet.ParquetWriter(out, schema, version="2.6", compression="snappy",
                                       writer_engine_version="V2")
    except (AttributeError, TypeError):
        writer = importlib.import_module("pyarrow.parquet").ParquetWriter(out, schema)
    return _ParquetFile(writer)


def write_parquet(rows: Iterable[Row], table: ExportTable, out: IO[bytes],
                  metadata: Mapping[str, str]) -> int:
    """``rows`` (``iter_rows`` with ``TYPED_CELLS``) in ``table``'s types, with ``metadata``: a row
    group each ``PARQUET_BATCH`` rows, typed into Arrow (``export_arrow``) ``ARROW_CHUNK`` rows at
    a time, so that the rows held as Python objects stay few: memory does not grow with the file."""
    modules = pyarrow_modules()
    if modules is None:
        raise ExportError(NEEDS_PYARROW)
    pa, parquet = modules
    from jtop_roof.outputs.export_arrow import ArrowGroup  # numpy: only Parquet needs it

    schema = parquet_schema(pa, table, metadata)
    kinds = [(table.types[column], schema.field(at).type) for at, column in enumerate(table.columns)]
    group = ArrowGroup(pa, kinds, PARQUET_BATCH)
    count = 0
    rows = iter(rows)
    with parquet_writer(parquet, out, schema) as writer:
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

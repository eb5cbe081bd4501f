"""Export's typed cells (``export_fill``) as Arrow columns, a row group at a time, made from numpy
buffers: pyarrow's own conversion of Python objects (``pa.array``) imports pandas, some 50 MB
more for a Parquet export, and is slower. Each column's buffer is made once for a row group's
rows and filled again for each group, so memory stays what one group takes.

The values are those ``pa.array`` makes of the same cells: a None is null; a float NaN stays NaN;
a time is its microseconds since 1970 (UTC); text is UTF-8 (a lone surrogate fails as
``pa.array`` fails on it). Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from jtop_roof.outputs.export_types import BOOL, FLOAT, INT, TEXT, TIME

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_DTYPES = {FLOAT: np.float64, INT: np.int64, TIME: np.int64, BOOL: np.bool_}


class _Column:
    """One column's cells of the group so far."""

    def __init__(self, kind: str, arrow_type: Any, capacity: int) -> None:
        self.kind, self.arrow_type = kind, arrow_type
        self.missing = np.zeros(capacity, dtype=np.bool_)
        self.data: np.ndarray | None = None if kind == TEXT else np.zeros(capacity, dtype=_DTYPES[kind])
        self.text: list[bytes] = []

    def put(self, start: int, values: Sequence[Any]) -> None:
        end = start + len(values)
        kind, missing = self.kind, self.missing[start:end]
        if kind == TEXT:
            self.text += [b"" if v is None else v.encode("utf-8") for v in values]
            missing[:] = [v is None for v in values]
            return
        assert self.data is not None
        data = self.data[start:end]
        if kind == FLOAT:
            data[:] = values  # None -> NaN; which NaN was None is told next
            if np.isnan(data).any():
                missing[:] = [v is None for v in values]
            else:
                missing[:] = False
            return
        if kind == TIME:
            values = [None if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
        cells = np.array(values, dtype=object)
        missing[:] = cells == None  # noqa: E711 (numpy's elementwise test)
        if missing.any():
            cells[missing] = 0
        data[:] = cells

    def array(self, pa: Any, count: int) -> Any:
        missing = self.missing[:count]
        nulls = int(missing.sum())
        valid = pa.py_buffer(np.packbits(~missing, bitorder="little")) if nulls else None
        if self.kind == TEXT:
            text, self.text = self.text, []
            offsets = np.zeros(count + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, text), dtype=np.int64, count=count), out=offsets[1:])
            if offsets[-1] >= 2**31:
                raise ValueError("a text column of 2 GiB or more in one row group")
            buffers = [valid, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(text))]
        else:
            assert self.data is not None
            data = self.data[:count]
            if self.kind == BOOL:
                data = np.packbits(data, bitorder="little")
            buffers = [valid, pa.py_buffer(data)]
        return pa.Array.from_buffers(self.arrow_type, count, buffers, null_count=nulls)


class ArrowGroup:
    """The columns of up to ``capacity`` rows (a Parquet row group), filled a chunk of rows at a
    time (``add``), then taken as Arrow arrays (``arrays``: valid until the next ``add``)."""

    def __init__(self, pa: Any, kinds: Sequence[tuple[str, Any]], capacity: int) -> None:
        """``kinds``: each column's ``export_types`` type and Arrow type, in order."""
        self.pa, self.capacity, self.count = pa, capacity, 0
        self.columns = [_Column(kind, arrow_type, capacity) for kind, arrow_type in kinds]

    def add(self, rows: Sequence[Sequence[Any]]) -> None:
        """Rows of cells in column order; at most ``capacity`` in all since the last ``arrays``."""
        if self.count + len(rows) > self.capacity:
            raise ValueError("more rows than the group holds")
        if rows:
            for column, values in zip(self.columns, zip(*rows, strict=True), strict=True):
                column.put(self.count, values)
            self.count += len(rows)

    def arrays(self) -> list[Any]:
        """The group's columns as Arrow arrays; the group is then empty."""
        count, self.count = self.count, 0
        return [column.array(self.pa, count) for column in self.columns]

"""A column of export's typed cells (``export_fill``) as an Arrow array, made from its buffers with
numpy: pyarrow's own conversion of Python objects (``pa.array``) imports pandas, some 50 MB more
for a Parquet export, and is slower. The values are those ``pa.array`` makes of the same cells: a
None is null; a float NaN stays NaN; a time is its microseconds since 1970 (UTC); text is UTF-8
(a lone surrogate fails as ``pa.array`` fails on it). Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from jtop_roof.outputs.export_types import BOOL, FLOAT, INT, TEXT, TIME

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def arrow_array(pa: Any, kind: str, arrow_type: Any, values: Sequence[Any]) -> Any:
    """``values`` (cells of an ``export_types`` type ``kind``: FLOAT, INT, BOOL, TEXT or TIME) as
    an Arrow array of ``arrow_type``."""
    count = len(values)
    if kind == TEXT:
        return _text(pa, arrow_type, values, count)
    if kind == FLOAT:
        data = np.array(values, dtype=np.float64)  # None -> NaN; which NaN was None is told below
        missing = np.fromiter((v is None for v in values), dtype=bool, count=count) \
            if np.isnan(data).any() else None
        return _fixed(pa, arrow_type, data, missing, count)
    if kind == TIME:
        values = [None if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
    cells = np.array(values, dtype=object)
    missing = cells == None  # noqa: E711 (numpy's elementwise test)
    if missing.any():
        cells[missing] = 0
    else:
        missing = None
    if kind == BOOL:
        bits = np.packbits(cells.astype(bool), bitorder="little")
        return _from_buffers(pa, arrow_type, count, missing, bits)
    if kind in (INT, TIME):
        return _fixed(pa, arrow_type, cells.astype(np.int64), missing, count)
    raise ValueError(f"no Arrow form for column type {kind!r}")


def _fixed(pa: Any, arrow_type: Any, data: np.ndarray, missing: np.ndarray | None, count: int) -> Any:
    return _from_buffers(pa, arrow_type, count, missing, np.ascontiguousarray(data))


def _from_buffers(pa: Any, arrow_type: Any, count: int, missing: np.ndarray | None, *data: Any) -> Any:
    if missing is None:
        return pa.Array.from_buffers(arrow_type, count, [None, *map(pa.py_buffer, data)], null_count=0)
    valid = np.packbits(~missing, bitorder="little")
    return pa.Array.from_buffers(arrow_type, count, [pa.py_buffer(valid), *map(pa.py_buffer, data)],
                                 null_count=int(missing.sum()))


def _text(pa: Any, arrow_type: Any, values: Sequence[Any], count: int) -> Any:
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=count), out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise ValueError("text column of 2 GiB or more in one chunk")
    missing = np.fromiter((v is None for v in values), dtype=bool, count=count)
    return _from_buffers(pa, arrow_type, count, missing if missing.any() else None,
                         offsets.astype(np.int32), b"".join(encoded))

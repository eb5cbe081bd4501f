"""Reading what was recorded, from notebooks and scripts::

    import jtop_roof

    run = jtop_roof.read("run1.jsonl")  # a recording, or a plain tegrastats log
    run.samples["gpu_mhz"]              # numpy arrays, one per export column (NaN: not reported)
    run.samples["time"]                 # numpy datetime64[us], UTC (NaT: no wall time)
    run.text["phase"]                   # the text columns (phase, throttle, power source)
    run.phases, run.events              # each phase's report (energy, power, throttled time...)
    run.frame()                         # the samples as a pandas DataFrame, when pandas is installed
    run.frame("power"), run.frame("processes")   # the other tables, as export writes them
    for record in run.records(): ...    # the file's records as the model's objects

A frame has export's columns and dtypes (``outputs.export_types``): it equals
``pandas.read_parquet`` of ``jroof-tui export FILE --table TABLE --format parquet``. The numbers are
the pipeline's: the same runtime as the monitor, ``report`` and ``export``, so they never differ
from what those show. Bad input raises a ``UserError`` (one line).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timezone, tzinfo
from typing import Any

import numpy as np

from jtop_roof.formats.logfile import RecordingError, iter_records, open_text
from jtop_roof.formats.nosamples import require_samples
from jtop_roof.model.errors import UserError
from jtop_roof.model.records import Record
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs import export_types
from jtop_roof.outputs.export import TABLES, export_rows
from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise UserError("Recording.frame() needs pandas: pip install pandas") from None
    return pandas


@dataclass(frozen=True)
class Recording:
    """One file, read: its samples as columns and its report; its other tables and its records on
    demand (read from the file again, as ``read`` was given it)."""

    path: str
    #: Numeric columns (``export``'s names and units), float64, NaN where a sample lacks a value;
    #: ``time`` as datetime64[us] in UTC (NaT where none).
    samples: Mapping[str, np.ndarray]
    #: Text columns (``phase``, ``throttle``, ``power_total_source``), None where empty.
    text: Mapping[str, list[str | None]]
    #: What ``jroof-tui report FILE --format json`` gives.
    report: Mapping[str, Any]
    #: The zone of a plain log's stamps, and the spacing of lines without stamps (``read``'s).
    tz: tzinfo = timezone.utc
    interval_s: float | None = None
    config: Config | None = None
    #: The samples table as export types it (``frame()``).
    _table: export_types.ExportTable | None = field(default=None, repr=False, compare=False)
    _columns: Mapping[str, list[Any]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def phases(self) -> list[dict[str, Any]]:
        return list(self.report["phases"])

    @property
    def events(self) -> list[dict[str, Any]]:
        return list(self.report["events"])

    def frame(self, table: str = "samples") -> Any:
        """``table`` (``samples``, ``power`` or ``processes``) as a pandas DataFrame with export's
        columns and dtypes (pandas is not a dependency)."""
        pd = _pandas()
        if table == "samples" and self._table is not None:
            return export_types.columns_frame(pd, self._table, self._columns)
        if table not in TABLES:
            raise UserError(f"unknown table {table!r}: one of {', '.join(TABLES)}")
        exported = export_rows(self.path, tz=self.tz, interval_s=self.interval_s, config=self.config,
                               table=table, aware=True)
        return export_types.frame(pd, exported.table, exported.rows)

    def records(self) -> Iterator[Record]:
        """The file's records in order, as the model's objects (``Sample``, ``PowerReading``,
        ``ProcessReading``, ``Marker``, ``Event``, ``Work``), as every reader of it sees them."""
        try:
            with open_text(self.path) as lines:
                yield from iter_records(lines, tz=self.tz, interval_s=self.interval_s)
        except OSError as exc:
            raise UserError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        except RecordingError as exc:
            raise UserError(f"cannot read {self.path}: {exc}") from None


def read(path: str, *, tz: str | None = None, interval_ms: int | None = None,
         config: Config | None = None) -> Recording:
    """Read a recording or a tegrastats log (``tz``: the zone of a plain log's stamps;
    ``interval_ms``: the spacing of lines without stamps; ``config``: the device database,
    ``device`` and ``power_mode``, as the command line's)."""
    try:
        zone = parse_tz(tz)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    interval_s = None if interval_ms is None else interval_ms / 1000.0
    try:
        require_samples(path)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    exported = export_rows(path, tz=zone, interval_s=interval_s, config=config, aware=True)
    table = exported.table
    columns = export_types.columns_of(table, exported.rows)
    samples: dict[str, np.ndarray] = {}
    text: dict[str, list[str | None]] = {}
    for column, values in columns.items():
        kind = table.types[column]
        if kind == export_types.TEXT:
            text[column] = values
        elif kind == export_types.TIME:
            samples[column] = np.array([np.datetime64("NaT", "us") if v is None
                                        else np.datetime64(v.replace(tzinfo=None), "us") for v in values],
                                       dtype="datetime64[us]")
        else:
            samples[column] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    report = report_file(path, tz=zone, interval_s=interval_s, config=config or Config(),
                         tz_given=tz is not None)
    return Recording(path, samples, text, report, zone, interval_s, config, table, columns)

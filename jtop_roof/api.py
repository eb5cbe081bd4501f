"""Reading what was recorded, from notebooks and scripts::

    from jtop_roof.api import read

    run = read("run1.jsonl")            # a recording, or a plain tegrastats log
    run.samples["gpu_mhz"]              # numpy arrays, one per export column (NaN: not reported)
    run.text["phase"]                   # the text columns (phase, throttle, power source)
    run.phases, run.events              # each phase's report (energy, power, throttled time...)
    run.frame()                         # everything as a pandas DataFrame, when pandas is installed

The numbers are the pipeline's: the same runtime as the monitor, ``report`` and ``export``, so they
never differ from what those show. Bad input raises a ``UserError`` (one line).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from jtop_roof.formats.nosamples import require_samples
from jtop_roof.model.errors import UserError
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs.export import TEXT_COLUMNS, iter_rows, scan_file
from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config


@dataclass(frozen=True)
class Recording:
    """One file, read: its samples as columns and its report."""

    path: str
    #: Numeric columns (``export``'s names and units), float64, NaN where a sample lacks a value.
    samples: Mapping[str, np.ndarray]
    #: Text columns (``phase``, ``throttle``, ``power_total_source``), None where empty.
    text: Mapping[str, list[str | None]]
    #: What ``jroof-tui report FILE --format json`` gives.
    report: Mapping[str, Any]

    @property
    def phases(self) -> list[dict[str, Any]]:
        return list(self.report["phases"])

    @property
    def events(self) -> list[dict[str, Any]]:
        return list(self.report["events"])

    def frame(self) -> Any:
        """The samples and text columns as a pandas DataFrame (pandas is not a dependency)."""
        try:
            import pandas
        except ImportError:
            raise UserError("Recording.frame() needs pandas: pip install pandas") from None
        return pandas.DataFrame({**self.samples, **self.text})


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
    scan = scan_file(path, tz=zone, interval_s=interval_s, config=config)
    numeric = [c for c in scan.columns if c not in TEXT_COLUMNS]
    values: dict[str, list[float]] = {c: [] for c in numeric}
    text: dict[str, list[str | None]] = {c: [] for c in scan.columns if c in TEXT_COLUMNS}
    for row in iter_rows(path, scan, tz=zone, interval_s=interval_s):
        for column in numeric:
            value = row[column]
            values[column].append(np.nan if value is None else float(value))
        for column, kept in text.items():
            kept.append(row[column])
    report = report_file(path, tz=zone, interval_s=interval_s, config=config or Config(),
                         tz_given=tz is not None)
    return Recording(path, {c: np.asarray(v, dtype=np.float64) for c, v in values.items()}, text, report)

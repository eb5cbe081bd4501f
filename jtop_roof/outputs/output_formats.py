"""The one registry of what ``export`` and ``report`` write: one declaration per format.

``export --format`` and ``report --format`` take their choices, their help, the format ``--out``'s
suffix implies, and what a format needs installed from here; ``export_file`` writes through the
format's own writer; ``tests/test_output_formats.py`` holds the docs to naming every format. A new
format is a writer and one line in ``EXPORT_FORMATS`` or ``REPORT_FORMATS`` (``register_*`` for a
plugin or a test).

Light on purpose: ``--help`` reads it, so each writer imports its module only when it writes.
Nothing here imports Textual.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jtop_roof.outputs.export_fill import Row
    from jtop_roof.outputs.export_types import ExportTable

#: ``write(rows, table, out, metadata)``: the rows written to ``out`` (text or bytes, as the format's
#: ``binary`` says) under ``table``'s columns and types; returns how many.
ExportWriter = Callable[[Iterable["Row"], "ExportTable", IO[Any], Mapping[str, str]], int]


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """One format of ``export``. ``said``: how ``--format``'s help names it; ``suffix``: the ``--out``
    suffix that implies it; ``spreadsheet``: text cells through ``report.spreadsheet_text``;
    ``aware``: the time column as an aware datetime (typed formats), else ISO text; ``binary``: bytes,
    given ``--out PATH`` (or ``--out -`` off a terminal); ``needs``: a module that must be installed,
    ``extra``: the pip extra that installs it, and ``load``: imports it once the file is scanned (so
    its memory is not the scan's), False where it cannot."""

    name: str
    suffix: str
    said: str
    write: ExportWriter
    spreadsheet: bool = False
    aware: bool = False
    binary: bool = False
    needs: str | None = None
    extra: str | None = None
    load: Callable[[], bool] | None = None

    def missing(self) -> str | None:
        """What to install where ``needs`` is not installed (found without importing it), else None."""
        if self.needs is None or _found(self.needs):
            return None
        return self.install()

    def install(self) -> str:
        """``parquet needs pyarrow: pip install ...``: what the format needs, and how to get it."""
        from jtop_roof.model.extras import install_hint

        return f"{self.name} needs {self.needs}: " + install_hint(self.extra or self.name, str(self.needs))


@dataclass(frozen=True, slots=True)
class ReportFormat:
    """One format of ``report``: ``render`` makes the text of a report (``report_file``'s dict)."""

    name: str
    suffix: str
    said: str
    render: Callable[[dict[str, Any]], str]


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# ------------------------------------------------------------------------------ the writers


def _write_csv(rows: Iterable[Row], table: ExportTable, out: IO[Any], metadata: Mapping[str, str]) -> int:
    from jtop_roof.outputs.export_writers import write_csv

    return write_csv(rows, list(table.columns), out)


def _write_jsonl(rows: Iterable[Row], table: ExportTable, out: IO[Any], metadata: Mapping[str, str]) -> int:
    from jtop_roof.outputs.export_writers import write_jsonl

    return write_jsonl(rows, list(table.columns), out)


def _write_parquet(rows: Iterable[Row], table: ExportTable, out: IO[Any], metadata: Mapping[str, str]) -> int:
    from jtop_roof.outputs.export_writers import write_parquet

    return write_parquet(rows, table, out, metadata)


def _load_pyarrow() -> bool:
    from jtop_roof.outputs.export_writers import pyarrow_modules

    return pyarrow_modules() is not None


def _report_md(report: dict[str, Any]) -> str:
    from jtop_roof.outputs.report import to_markdown

    return to_markdown(report)


def _report_json(report: dict[str, Any]) -> str:
    import json

    return json.dumps(report, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _report_csv(report: dict[str, Any]) -> str:
    from jtop_roof.outputs.report import to_csv

    return to_csv(report)


#: Export's formats; the first is the default.
EXPORT_FORMATS: list[ExportFormat] = [
    ExportFormat("csv", ".csv", "csv (default; or from --out's suffix)", _write_csv, spreadsheet=True),
    ExportFormat("jsonl", ".jsonl", "jsonl", _write_jsonl),
    ExportFormat("parquet", ".parquet", "parquet (needs pyarrow: pip install '.[parquet]'; to stdout with "
                 "--out -, not onto a terminal)", _write_parquet, aware=True, binary=True, needs="pyarrow",
                 extra="parquet", load=_load_pyarrow),
]

#: Report's formats; the first is the default.
REPORT_FORMATS: list[ReportFormat] = [
    ReportFormat("md", ".md", "md (default)", _report_md),
    ReportFormat("json", ".json", "json", _report_json),
    ReportFormat("csv", ".csv", "csv", _report_csv),
]


def export_names() -> tuple[str, ...]:
    return tuple(f.name for f in EXPORT_FORMATS)


def report_names() -> tuple[str, ...]:
    return tuple(f.name for f in REPORT_FORMATS)


def export_format(name: str) -> ExportFormat:
    """The export format called ``name``; KeyError if none is."""
    for each in EXPORT_FORMATS:
        if each.name == name:
            return each
    raise KeyError(name)


def report_format(name: str) -> ReportFormat:
    """The report format called ``name``; KeyError if none is."""
    for each in REPORT_FORMATS:
        if each.name == name:
            return each
    raise KeyError(name)


def export_for_out(out: str | None) -> ExportFormat:
    """The format ``--out``'s suffix implies (``run.parquet``), else the default."""
    import os

    suffix = os.path.splitext(out or "")[1].lower()
    return next((f for f in EXPORT_FORMATS if suffix and f.suffix == suffix), EXPORT_FORMATS[0])


def said_list(words: list[str], *, serial: bool) -> str:
    """``a, b or c`` (``a, b, or c`` where ``serial``): a help's list of choices."""
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + ("," if serial else "") + " or " + words[-1]


def export_help() -> str:
    return said_list([f.said for f in EXPORT_FORMATS], serial=True)


def report_help() -> str:
    return said_list([f.said for f in REPORT_FORMATS], serial=False)


def register_export(fmt: ExportFormat) -> Callable[[], None]:
    """Add ``fmt`` (a plugin's, a test's); returns what takes it out again."""
    if fmt.name in export_names():
        raise ValueError(f"export format {fmt.name!r} is declared already")
    EXPORT_FORMATS.append(fmt)
    return lambda: EXPORT_FORMATS.remove(fmt)


def register_report(fmt: ReportFormat) -> Callable[[], None]:
    """Add ``fmt``; returns what takes it out again."""
    if fmt.name in report_names():
        raise ValueError(f"report format {fmt.name!r} is declared already")
    REPORT_FORMATS.append(fmt)
    return lambda: REPORT_FORMATS.remove(fmt)

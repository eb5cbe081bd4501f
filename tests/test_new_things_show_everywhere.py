"""What grows is declared once: a format, an event kind or a detector added to its registry at run
time shows in the command line's choices and help, in what the command writes, in ``/metrics``,
the TUI's header, the report and the config, with no other edit. So "where new things go" in
docs/development.md cannot silently stop being true."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pytest

from jtop_roof.outputs import output_formats as formats

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "tegrastats_lines.txt"


def _write_tsv(rows: Iterable[list[Any]], table: Any, out: IO[Any], metadata: Mapping[str, str]) -> int:
    """A dummy format: tab-separated cells under the columns."""
    out.write("\t".join(table.columns) + "\n")
    count = 0
    for row in rows:
        out.write("\t".join("" if cell is None else str(cell) for cell in row) + "\n")
        count += 1
    return count


@pytest.fixture
def tsv() -> Iterator[formats.ExportFormat]:
    fmt = formats.ExportFormat("tsv", ".tsv", "tsv (tabs between cells)", _write_tsv)
    remove = formats.register_export(fmt)
    yield fmt
    remove()


@pytest.fixture
def shout() -> Iterator[formats.ReportFormat]:
    fmt = formats.ReportFormat("shout", ".txt", "shout",
                               lambda report: report["whole"]["name"].upper() + "\n")
    remove = formats.register_report(fmt)
    yield fmt
    remove()


def test_an_export_format_added_is_a_choice_its_help_and_its_suffix(tsv, jroof_main, tmp_path):
    said = jroof_main("export", "--help")
    assert "tsv (tabs between cells)" in " ".join(said.stdout.split())
    out = tmp_path / "run.tsv"  # no --format: the suffix says which
    ran = jroof_main("export", LOG, "--out", out)
    assert ran.returncode == 0, ran.stderr
    header, first = out.read_text().splitlines()[:2]
    assert header.split("\t")[:2] == ["t_wall", "time"]
    assert len(first.split("\t")) == len(header.split("\t"))
    assert jroof_main("export", LOG, "--format", "tsv").stdout.startswith("t_wall\ttime\t")


def test_a_format_not_registered_is_refused_by_the_command_line(jroof_main):
    ran = jroof_main("export", LOG, "--format", "tsv")
    assert ran.returncode == 2 and "invalid choice" in ran.stderr


def test_a_report_format_added_to_the_registry_is_a_choice_and_renders(shout, jroof_main):
    assert "shout" in jroof_main("report", "--help").stdout
    ran = jroof_main("report", LOG, "--format", "shout")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "WHOLE RUN\n"


def export_doc_row(fmt: formats.ExportFormat) -> str:
    needs = f"`{fmt.needs}` (`pip install '.[{fmt.extra or fmt.name}]'`)" if fmt.needs else ""
    return f"| `{fmt.name}` | `{fmt.suffix}` | {needs} |".replace("|  |", "| |")


def test_the_docs_list_the_registered_formats_as_declared():
    """docs/export.md's table of formats is the registry's, row for row; docs/report.md's usage line
    names the report's formats in the registry's order."""
    export_doc = (ROOT / "docs" / "export.md").read_text()
    table = [line for line in export_doc.splitlines() if line.startswith("| `") and "` | `." in line]
    assert table == [export_doc_row(fmt) for fmt in formats.EXPORT_FORMATS]
    report_doc = (ROOT / "docs" / "report.md").read_text()
    assert f"--format {'|'.join(formats.report_names())}]" in report_doc


def test_report_json_is_the_registry_s_json(jroof_main):
    ran = jroof_main("report", LOG, "--format", "json")
    assert json.loads(ran.stdout)["whole"]["name"] == "whole run"

"""What grows is declared once: a format, an event kind or a detector added to its registry at run
time shows in the command line's choices and help, in what the command writes, in ``/metrics``,
the TUI's header, the report and the config, with no other edit. So "where new things go" in
docs/development.md cannot silently stop being true."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import IO, Any

import pytest
from paths import REPO

from jtop_roof.analysis import detector_registry
from jtop_roof.analysis.detector_spec import DetectorSpec, bounded
from jtop_roof.analysis.pipeline import StreamContext
from jtop_roof.model import event_kinds
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.outputs import output_formats as formats

ROOT = REPO
LOG = ROOT / "tests" / "data" / "logfile" / "agxorin_jp6_500ms.log"


def _write_tsv(rows: Iterable[list[Any]], table: Any, out: IO[Any], metadata: Mapping[str, str]) -> int:
    """A dummy format: tab-separated cells under the columns."""
    out.write("\t".join(table.columns) + "\n")
    count = 0
    for row in rows:
        out.write("\t".join("" if cell is None else str(cell) for cell in row) + "\n")
        count += 1
    return count


@pytest.fixture
def tabbed() -> Iterator[formats.ExportFormat]:
    fmt = formats.ExportFormat("tabbed", ".tabbed", "tabbed (tabs between cells)", _write_tsv)
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


def test_an_export_format_added_is_a_choice_its_help_and_its_suffix(tabbed, jroof_main, tmp_path):
    said = jroof_main("export", "--help")
    assert "tabbed (tabs between cells)" in " ".join(said.stdout.split())
    out = tmp_path / "run.tabbed"  # no --format: the suffix says which
    ran = jroof_main("export", LOG, "--out", out)
    assert ran.returncode == 0, ran.stderr
    header, first = out.read_text().splitlines()[:2]
    assert header.split("\t")[:2] == ["t_wall", "time"]
    assert len(first.split("\t")) == len(header.split("\t"))
    assert jroof_main("export", LOG, "--format", "tabbed").stdout.startswith("t_wall\ttime\t")


def test_a_format_not_registered_is_refused_by_the_command_line(jroof_main):
    ran = jroof_main("export", LOG, "--format", "tabbed")
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


# ------------------------------------------------------------------ an event kind and its detector


@dataclass(frozen=True)
class StallSettings:
    """The dummy detector's own settings (none of the throttle detector's)."""

    stall_samples: int = bounded(3, 1, 50)


class StallDetector:
    """A dummy: the GPU "stalls" from the first sample on, once ``stall_samples`` samples were seen;
    the hold is in progress until the stream ends."""

    def __init__(self, settings: StallSettings) -> None:
        self.settings = settings
        self.first: Sample | None = None
        self.last: Sample | None = None
        self.count = 0

    def observe(self, record: Record, context: StreamContext) -> Sequence[Event]:
        if isinstance(record, Sample) and record.is_sample and record.t_mono is not None:
            self.first = self.first or record
            self.last, self.count = record, self.count + 1
        return ()

    def _event(self) -> list[Event]:
        if self.first is None or self.last is None or self.count < self.settings.stall_samples:
            return []
        return [Event("stall", "GPU stalled (a dummy)", self.last.t_wall, self.last.t_mono, unit="gpu",
                      start_wall=self.first.t_wall, start_mono=self.first.t_mono, reasons=("stall",))]

    def active(self, context: StreamContext) -> Sequence[Event]:
        return self._event()

    def finish(self, context: StreamContext) -> Sequence[Event]:
        return self._event()


STALL_KIND = event_kinds.EventKind("stall", "the GPU stalled (a dummy)", "crit", held=True, header="STALLED",
                                   metric="stall", seconds_help="Seconds stalled.",
                                   active_help="1 while stalled.")


@pytest.fixture
def stall() -> Iterator[None]:
    drop_kind = event_kinds.register(STALL_KIND)
    drop_detector = detector_registry.register(DetectorSpec("stall", StallSettings, StallDetector))
    yield
    drop_detector()
    drop_kind()


def fed_pipeline(config: Any) -> Any:
    """A pipeline of the runtime's factory with the log's records fed in, as the monitor's pump does."""
    from jtop_roof.formats.logfile import iter_records
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.outputs.serve import Metrics
    from jtop_roof.runtime.runtime import build_pipeline

    pipeline = build_pipeline(config, SourceInfo("tegrastats"), interval_s=0.5)
    metrics = Metrics(pipeline, source_kind="replay")
    for record in iter_records(LOG.read_text().splitlines(keepends=True), tz="UTC", interval_s=0.5):
        pipeline.ingest(record)
    return pipeline, metrics


def test_an_event_kind_and_its_detector_show_in_metrics_and_the_header(stall):
    from jtop_roof.outputs.serve import render
    from jtop_roof.runtime.config import Config
    from jtop_roof.tui.header import header_line

    pipeline, metrics = fed_pipeline(Config())
    text = render(metrics.snapshot)
    assert 'jroof_stall_active{unit="gpu"} 1.0' in text
    seconds = [line for line in text.splitlines() if line.startswith('jroof_stall_seconds_total{unit="gpu"}')]
    assert len(seconds) == 1 and float(seconds[0].split()[-1]) > 0
    assert "# HELP jroof_stall_seconds_total Seconds stalled." in text
    stream = SimpleNamespace(pipeline=pipeline, source=SimpleNamespace(kind="tegrastats"), controls=None,
                             ended=None)
    shown = "".join(text for text, _ in header_line(200, stream))
    assert "STALLED gpu: GPU stalled" in shown


def test_a_detector_reads_its_own_settings_from_the_config(stall, tmp_path):
    from jtop_roof.outputs.serve import render
    from jtop_roof.runtime.config import ConfigError, load_config

    path = tmp_path / "config.yaml"
    path.write_text("detectors:\n  stall: {stall_samples: 50}\n  busy_pct: 60\n")
    config = load_config(str(path), environ={})
    pipeline, metrics = fed_pipeline(config)  # 12 samples: never 50, so no stall
    (stalls,) = [d for d in pipeline.detectors if isinstance(d, StallDetector)]
    assert stalls.settings == StallSettings(stall_samples=50)
    assert 'jroof_stall_active{unit="gpu"} 0.0' in render(metrics.snapshot)
    path.write_text("detectors:\n  stall_samples: 51\n")  # flat: the detector declaring it
    with pytest.raises(ConfigError, match=r"detectors\.stall_samples.*from 1 to 50"):
        load_config(str(path), environ={})


def test_an_event_kind_shows_in_the_report_and_its_legend(stall, jroof_main):
    md = jroof_main("report", LOG, "--format", "md").stdout
    assert "stall: the GPU stalled (a dummy)" in md
    assert "stall gpu: GPU stalled (a dummy)" in md
    events = json.loads(jroof_main("report", LOG, "--format", "json").stdout)["events"]
    assert [(e["kind"], e["unit"], e["cause_source"]) for e in events] == [("stall", "gpu", None)]


def test_a_kind_not_declared_is_a_plain_event():
    assert event_kinds.event_kind("from_a_newer_version") == event_kinds.EventKind(
        "from_a_newer_version", "from_a_newer_version", "info")


# ------------------------------------------------------------------------------------ a pane


def test_a_pane_s_layout_comes_from_its_spec_not_the_stylesheet():
    """No pane that the compact layout sums up is named in app.tcss: its height and its compact
    and focus rules are made from its PaneSpec, so a new pane's come with its spec line."""
    import re

    from jtop_roof.tui.app import JroofApp
    from jtop_roof.tui.layout import pane_css
    from jtop_roof.tui.panes import PANES, CpuPane, PaneSpec

    tcss = re.sub(r"/\*.*?\*/", "", (ROOT / "jtop_roof" / "tui" / "app.tcss").read_text(), flags=re.S)
    for spec in PANES:
        if spec.summary:
            assert f"#{spec.id}" not in tcss, spec.id
    assert JroofApp.CSS == pane_css(PANES)
    css = pane_css([*PANES, PaneSpec("fans", "col-left", CpuPane, height="2fr", max_height=9)])
    assert "#fans { height: 2fr; max-height: 9; }" in css
    assert "Screen.-compact #fans," in css or "Screen.-compact #fans {" in css
    assert "Screen.-focus #fans.-focused" in css

"""``plot``: PNG, SVG and PDF with the time panels and the roofline; one line without matplotlib."""

from __future__ import annotations

import sys
from datetime import timezone

import pytest
from factories import BENCH, write_synthetic

from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Work
from jtop_roof.outputs import plot as pl

UTC = timezone.utc


def with_work(path) -> None:
    """The synthetic run plus a work report (FLOPs and bytes) in its phase: a roofline point."""
    samples = write_synthetic(path)
    inside = samples[BENCH.stop - 2]
    work = Work(1000, 2e12, 5e10, "int8", inside.t_wall, inside.t_mono + 0.01)
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if f'"line {BENCH.stop - 1}"' in line)
    lines.insert(at, json_line(record_to_json(work)))
    path.write_text("".join(lines))


@pytest.fixture
def recording(tmp_path):
    path = tmp_path / "run.jsonl"
    with_work(path)
    return path


def test_png_svg_and_pdf(recording, tmp_path):
    pytest.importorskip("matplotlib")
    png = pl.plot_file(str(recording), str(tmp_path / "chart.png"), tz=UTC)
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    svg = pl.plot_file(str(recording), str(tmp_path / "chart.svg"), tz=UTC)
    text = open(svg, encoding="utf-8").read()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    pdf = pl.plot_file(str(recording), str(tmp_path / "chart.pdf"), tz=UTC)
    with open(pdf, "rb") as f:
        assert f.read(5) == b"%PDF-"


def test_the_figure_has_phases_events_and_the_roofline(recording):
    pytest.importorskip("matplotlib")
    from jtop_roof.outputs.compare import file_report
    from jtop_roof.outputs.export import iter_rows, scan_file

    plt = pl.pyplot()
    scan = scan_file(str(recording), tz=UTC)
    series = pl._columns(iter_rows(str(recording), scan, tz=UTC), scan.columns)
    report = file_report(str(recording), tz=UTC, interval_s=None)
    assert report["phases"][0]["roofline"]["verdict"] in ("compute-bound", "memory-bound", "clock-bound")
    figure = pl.draw(plt, series, report, config=None, tz=UTC, title="run")
    try:
        axes = figure.get_axes()
        assert len(axes) == 5  # clocks, loads, power, temperatures, roofline
        texts = [t.get_text() for t in axes[0].texts]
        assert 'bench, "1"' in texts
        labels = axes[0].get_legend_handles_labels()[1]
        assert "throttle event" in labels and "GPU" in labels
        assert any("VDD_IN (total input)" == label for label in axes[2].get_legend_handles_labels()[1])
        roof_labels = axes[4].get_legend_handles_labels()[1]
        assert any(label.startswith('bench, "1": ') for label in roof_labels)
        assert any(label.startswith("mode's maximum clocks") for label in roof_labels)
        (point,) = [line for line in axes[4].get_lines() if line.get_marker() == "o"]
        rl = report["phases"][0]["roofline"]
        assert point.get_xdata()[0] == pytest.approx(rl["intensity_flop_per_byte"])
        assert point.get_ydata()[0] == pytest.approx(rl["achieved_flops_per_s"])
    finally:
        plt.close(figure)


def test_long_runs_are_drawn_as_bands_that_keep_the_spike():
    pytest.importorskip("matplotlib")
    import numpy as np

    plt = pl.pyplot()
    figure, ax = plt.subplots()
    try:
        t = np.arange(100_000, dtype=float)
        y = np.zeros_like(t)
        y[54_321] = 99.0
        pl._draw_line(ax, t, y, "x")
        (line,) = ax.get_lines()
        assert len(line.get_xdata()) == pl.MAX_POINTS
        band = ax.collections[0]
        assert band.get_paths()[0].vertices[:, 1].max() == 99.0
    finally:
        plt.close(figure)


def test_without_matplotlib_one_line_names_the_extra(recording, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    with pytest.raises(pl.PlotError) as info:
        pl.plot_file(str(recording), str(tmp_path / "x.png"), tz=UTC)
    assert str(info.value) == pl.NEEDS_EXTRA
    assert "pip install '.[plot]'" in pl.NEEDS_EXTRA  # as the README says
    assert not (tmp_path / "x.png").exists()


def test_errors_are_one_line(tmp_path, recording):
    pytest.importorskip("matplotlib")
    with pytest.raises(pl.PlotError, match="end it in .png, .svg or .pdf"):
        pl.plot_file(str(recording), str(tmp_path / "x.gif"), tz=UTC)
    with pytest.raises(pl.PlotError, match="No such file or directory"):
        pl.plot_file(str(tmp_path / "missing.log"), str(tmp_path / "x.png"), tz=UTC)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    with pytest.raises(pl.PlotError, match="no samples"):
        pl.plot_file(str(empty), str(tmp_path / "x.png"), tz=UTC)
    with pytest.raises(pl.PlotError, match="cannot write"):
        pl.plot_file(str(recording), str(tmp_path / "nodir" / "x.png"), tz=UTC)

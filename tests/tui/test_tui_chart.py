"""The monitor's charts (tui/widgets/chart.py) and the plots built on them: the layout of frame,
ticks and dots, hostile numbers, and that a drawing repaints only the rows that changed."""

from __future__ import annotations

import dataclasses
import math

import pytest
from tui_support import park_replay, replay_app

from jtop_roof.tui.widgets.chart import QUADRANTS, Chart, Label, Line, render_chart

INK, CANVAS, RED, BLUE = (200, 200, 200), (0, 0, 0), (255, 0, 0), (0, 0, 255)


def chart(**overrides: object) -> Chart:
    base: dict[str, object] = dict(
        x_range=(-10.0, 0.0), left_range=(0.0, 100.0), left_ticks=([0.0, 50.0, 100.0], ["0", "50", "100"]),
        x_ticks=([-10.0, -5.0, 0.0], ["-10s", "-5s", "now"]), ink=INK, canvas=CANVAS)
    base.update(overrides)
    return Chart(**base)  # type: ignore[arg-type]


def text(rows: list[list[tuple[str, object, object]]]) -> list[str]:
    return ["".join(run[0] for run in row) for row in rows]


@pytest.mark.parametrize("size", [(30, 8), (61, 14), (12, 4)])
def test_every_row_is_as_wide_as_the_widget(size):
    width, height = size
    rows = render_chart(chart(lines=[Line([-10, -5, 0], [0, 100, 50], RED)]), width, height)
    assert len(rows) == height
    assert all(len(line) == width for line in text(rows))


def test_frame_ticks_and_labels_sit_where_plotext_puts_them():
    rows = text(render_chart(chart(), 30, 8))
    assert rows[0] == "   ┌" + "─" * 25 + "┐"
    assert rows[1].startswith("100┤") and rows[5].startswith("  0┤")  # high on top, low at the bottom
    assert rows[3].startswith(" 50┤")
    bottom = rows[6]
    assert bottom.startswith("   └┬") and bottom.endswith("┬┘") and bottom.count("┬") == 3
    assert rows[7].split() == ["-10s", "-5s", "now"]


def test_a_flat_line_at_the_bottom_is_lower_half_blocks_and_at_the_top_upper_ones():
    rows = text(render_chart(chart(lines=[Line([-10, 0], [0, 0], RED), Line([-10, 0], [100, 100], BLUE)]),
                             30, 8))
    assert set(rows[5][4:-1]) == {"▄"}
    assert set(rows[1][4:-1]) == {"▀"}


def test_a_later_line_takes_the_cells_it_shares_in_its_colour():
    rows = render_chart(chart(lines=[Line([-10, 0], [0, 0], RED), Line([-10, 0], [0, 0], BLUE)]), 30, 8)
    colours = {fg for text_, fg, _ in rows[5] if set(text_) <= set(QUADRANTS[1:])}
    assert colours == {BLUE}


def test_lines_sharing_a_cell_show_all_their_dots():
    """Two rails a few watts apart share the cells of one row: the lower one's dots are not
    hidden by the upper one's (the cell shows both halves: a full block)."""
    lines = [Line([-10, 0], [0, 0], RED), Line([-10, 0], [12, 12], BLUE)]  # bottom and top half of row 5
    row = text(render_chart(chart(lines=lines), 30, 8))[5]
    assert set(row[4:-1]) == {"█"}


def test_the_right_axis_gets_its_own_labels_and_scale():
    rows = text(render_chart(chart(right_range=(0.0, 1000.0), right_ticks=([0.0, 1000.0], ["0", "1000"]),
                                   lines=[Line([-10, 0], [1000, 1000], RED, right=True)]), 40, 8))
    assert rows[1].endswith("├1000") and rows[5].endswith("├0   ")
    assert set(rows[1][4:-5]) == {"▀"}  # 1000 on the right axis is the top


def test_hostile_numbers_draw_nothing_off_the_area_and_never_raise():
    lines = [Line([-10, -5, 0], [math.nan, math.inf, -math.inf], RED),
             Line([-1e300, 0, 1e300], [1e308, -1e308, 50], BLUE),
             Line([], [], RED),
             Line([-5], [50], RED, marker="●")]
    labels = [Label(-1e9, 1e9, "far", RED), Label(-5.0, 100.0, "x" * 100, RED)]
    rows = render_chart(chart(lines=lines, bands=[(-1e300, 1e300)], vlines=[math.nan, -5.0], labels=labels),
                        30, 8)
    assert all(len(line) == 30 for line in text(rows))
    assert "●" in "".join(text(rows))


def test_a_widget_too_small_for_a_frame_is_blank():
    assert text(render_chart(chart(lines=[Line([-10, 0], [0, 100], RED)]), 5, 3)) == [" " * 5] * 3


def test_the_x_axis_name_is_centred_under_the_tick_labels():
    rows = text(render_chart(chart(x_label="FLOP/byte"), 40, 9))
    assert rows[-1].strip() == "FLOP/byte" and rows[-2].split() == ["-10s", "-5s", "now"]


async def test_a_new_drawing_repaints_only_the_rows_that_changed(tmp_path, monkeypatch):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        app.redraw_now()
        await pilot.pause()
        pane = app.query_one("#cpu")
        plot = pane.plot
        assert plot is not None and plot.size.area
        before = plot.rows_text
        refreshed: list[tuple[object, ...]] = []
        mark_dirty = plot._set_dirty

        def recorded(*regions: object) -> None:
            refreshed.append(regions)
            mark_dirty(*regions)

        monkeypatch.setattr(plot, "_set_dirty", recorded)
        plot._show(plot._chart)  # the same chart: nothing to repaint
        assert refreshed == []
        assert plot._chart is not None
        plot._show(dataclasses.replace(plot._chart, lines=()))  # the data gone, frame and marks kept
        changed = {y for y, row in enumerate(plot.rows_text) if row != before[y]}
        assert changed and len(changed) < len(before)
        assert {region.y for regions in refreshed for region in regions} == changed


def test_a_short_plot_over_a_narrow_range_still_shows_its_scale():
    """Two rows over 35-51 °C: round ticks would give only 40; the axis then gives its two ends."""
    from jtop_roof.tui.widgets.timeplot import _scale_ticks

    values, labels = _scale_ticks((35.2, 50.8), 2)
    assert len(values) == 2 and labels == ["35.2", "50.8"]
    assert _scale_ticks((0.0, 100.0), 5)[1] == ["0", "25", "50", "75", "100"]  # round ones where they fit

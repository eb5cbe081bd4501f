"""DirectRows (tui/widgets/rows.py): plots and readouts paint their rows without Textual's styles
cache, and must paint exactly what it would (the TUI's own cost)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.widget import Widget
from tui_support import each_paint, park_replay, replay_app  # noqa: F401  (each_paint: a fixture)

import jtop_roof.tui
from jtop_roof.tui.fastpaint import LineCompositor
from jtop_roof.tui.widgets.rows import DirectRows
from jtop_roof.tui.widgets.timeplot import TimePlot


def _stock(widget: Widget, crop: Region) -> list[list[Any]]:
    """What Textual's own route paints (its styles cache emptied first)."""
    widget._styles_cache.clear()
    return [list(strip) for strip in Widget.render_lines(widget, crop)]


def _ours(widget: DirectRows, crop: Region) -> list[list[Any]]:
    return [list(strip) for strip in widget.render_lines(crop)]


@pytest.mark.parametrize("theme", ["jroof-dark", "jroof-light", "jroof-high-contrast", "jroof-mono"])
async def test_every_plot_and_readout_paints_what_textual_paints(tmp_path, theme):
    app = replay_app(tmp_path, theme=theme)
    async with app.run_test(size=(150, 45)) as pilot:
        await park_replay(pilot, app)
        widgets = [w for w in app.screen.query(DirectRows) if w.region.area]
        assert len(widgets) >= 15  # every pane's readout, the header and the plots
        assert all(w.direct_route() is not None for w in widgets)  # the fast route is the one tested
        for widget in widgets:
            whole = widget.region.reset_offset
            assert _ours(widget, whole) == _stock(widget, whole), widget
            top = min(1, whole.height - 1)  # clipped: columns off both sides, the first row off
            middle = Region(2, top, max(1, whole.width - 5), whole.height - top)
            assert _ours(widget, middle) == _stock(widget, middle), widget


ANSI_COLOURS = {"foreground": "ansi_white", "level-ok": "ansi_green", "level-warn": "ansi_bright_yellow",
                "level-warn-style": "dim", "level-crit": "ansi_red", "level-off": "ansi_bright_black",
                "primary": "ansi_cyan"}


async def test_a_theme_of_terminal_colours_is_painted_as_textual_paints_it(tmp_path):
    """Readouts skip the app's ANSI filter: a theme whose colours are the terminal's sixteen (and
    dim text) is turned to RGB where each style is made, to the same cells the filter gives."""
    import yaml

    from jtop_roof.tui.widgets.readout import Readout

    themes = tmp_path / "no-themes"
    themes.mkdir()
    spec = yaml.safe_load((Path(jtop_roof.tui.__file__).parent / "themes" / "jroof-dark.yaml").read_text())
    spec["name"] = "terminal-colours"
    spec["foreground"], spec["primary"] = ANSI_COLOURS["foreground"], ANSI_COLOURS["primary"]
    # backgrounds too: the fill of padding and line ends is painted past the filter as well
    spec["background"], spec["surface"], spec["panel"] = "ansi_black", "ansi_blue", "ansi_black"
    spec["variables"].update({key: value for key, value in ANSI_COLOURS.items() if key.startswith("level")})
    (themes / "terminal-colours.yaml").write_text(yaml.safe_dump(spec))
    app = replay_app(tmp_path, theme="terminal-colours")
    async with app.run_test(size=(150, 45)) as pilot:
        await park_replay(pilot, app)
        assert app.theme == "terminal-colours"
        readouts = [w for w in app.screen.query(Readout) if w.region.area]
        assert all(w.direct_route() is not None for w in readouts)
        for readout in readouts:
            lines = [list(line) for line in readout.lines]
            lines[0] = [("ok ", "ok"), ("warn ", "warn"), ("crit ", "crit"), ("off ", "off"), ("plain", None)]
            readout.set_lines(lines)
        await pilot.pause()
        painted = [segment.style for w in readouts for strip in _ours(w, w.region.reset_offset)
                   for segment in strip if segment.style is not None]
        assert any(style.color is not None and style.color.triplet is None for style in
                   (w._chunk_style("warn", w._styles()).rich_style for w in readouts))  # ANSI in the theme
        assert all(style.color is None or style.color.triplet is not None for style in painted)
        assert all(style.bgcolor is None or style.bgcolor.triplet is not None for style in painted)
        for widget in readouts:
            whole = widget.region.reset_offset
            assert _ours(widget, whole) == _stock(widget, whole), widget


@pytest.mark.parametrize("rule", ["border", "outline", "tint", "opacity", "hatch"])
async def test_a_plot_with_a_style_that_changes_its_rows_goes_textuals_way(tmp_path, rule):
    values = {"border": ("round", "red"), "outline": ("solid", "blue"),
              "tint": "red 40%", "opacity": 0.5, "hatch": ("/", "green")}
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        plot = app.query_one("#cpu").query_one(TimePlot)
        setattr(plot.styles, rule, values[rule])
        await pilot.pause()
        assert plot.direct_route() is None
        whole = plot.region.reset_offset
        assert _ours(plot, whole) == _stock(plot, whole)


@pytest.mark.parametrize("padding", [(1, 2), (0, 3, 2, 0)])
async def test_a_padded_plot_paints_its_own_rows_as_textual_would(tmp_path, padding):
    """Padding (the header has some) is painted here in the widget's background, each side and
    the rows above and below, as Textual's styles cache paints it."""
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        plot = app.query_one("#cpu").query_one(TimePlot)
        before = plot.direct_route()
        plot.styles.padding = padding
        await pilot.pause()
        route = plot.direct_route()
        assert route is not None and route is not before and tuple(route.padding) == (padding * 2)[:4]
        whole = plot.region.reset_offset
        assert _ours(plot, whole) == _stock(plot, whole)
        clipped = Region(1, 1, whole.width - 2, whole.height - 1)
        assert _ours(plot, clipped) == _stock(plot, clipped)


async def test_a_style_changed_on_an_ancestor_is_painted(tmp_path):
    """The route is kept while nothing it depends on changes: a pane's new background (an
    ancestor's style) reaches its readout's rows."""
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        pane = app.query_one("#cpu")
        readout = pane.readout
        whole = readout.region.reset_offset
        painted = _ours(readout, whole)
        pane.styles.background = "red"
        await pilot.pause()
        repainted = _ours(readout, whole)
        assert repainted != painted
        assert repainted == _stock(readout, whole)


async def test_a_row_that_did_not_change_is_the_same_strip(tmp_path):
    """Painted again (another pane's change, a partial update around it), an unchanged row is the
    strip painted before, not a new one filtered again."""
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        plot = app.query_one("#gpu").query_one(TimePlot)
        assert plot.direct_route() is not None
        whole = plot.region.reset_offset
        first, again = plot.render_lines(whole), plot.render_lines(whole)
        assert all(a is b for a, b in zip(first, again, strict=True))


async def test_a_readout_keeps_a_bounded_number_of_placed_styles(tmp_path):
    """Values that move about (every chunk at a new place each time) never grow the kept styles
    past their bound, and the rows still paint what Textual paints."""
    from jtop_roof.tui.widgets.readout import PLACED_STYLES_KEPT, Readout

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        readout = app.query_one("#cpu").readout
        for shift in range(400):
            readout.set_lines([[(" " * (shift % 7), None)] + [(f"{i}", "label" if i % 2 else "warn")
                                                               for i in range(shift, shift + 30)]])
            readout.render_line(0)
            assert len(readout._placed_styles) <= PLACED_STYLES_KEPT
        assert isinstance(readout, Readout)
        whole = readout.region.reset_offset
        assert _ours(readout, whole) == _stock(readout, whole)


async def test_after_each_change_in_place_every_row_is_what_textual_paints(tmp_path):
    """The route is kept between paints: a theme, the ANSI colour mode, a focused pane, the compact
    layout and a resize, each changed on the running app, reach every plot's and readout's rows."""
    app = replay_app(tmp_path)
    async with app.run_test(size=(150, 45)) as pilot:
        await park_replay(pilot, app)
        changes = [lambda: setattr(app, "theme", "jroof-light"), lambda: setattr(app, "theme", "jroof-mono"),
                   lambda: setattr(app, "ansi_color", True), lambda: setattr(app, "ansi_color", False),
                   lambda: setattr(app, "theme", "jroof-dark"), lambda: setattr(app, "focused_pane", "gpu"),
                   lambda: setattr(app, "focused_pane", None), lambda: pilot.resize_terminal(90, 30),
                   lambda: pilot.resize_terminal(200, 50), lambda: pilot.resize_terminal(130, 40)]
        for change in changes:
            done = change()
            if done is not None:
                await done
            for _ in range(4):
                await pilot.pause(0.05)
            widgets = [w for w in app.screen.query(DirectRows) if w.region.area]
            assert widgets
            for widget in widgets:
                assert widget.cells == widget.size
                whole = widget.region.reset_offset
                assert _ours(widget, whole) == _stock(widget, whole), (change, widget)


def _shown_text(app: Any, widget: Widget, row: int) -> str:
    """The characters the screen holds now on ``widget``'s content row ``row``."""
    region = widget.content_region
    strips = app.screen._compositor.render_strips()
    return "".join(segment.text for segment in strips[region.y + row]).__getitem__(
        slice(region.x, region.right))


async def test_a_changed_row_reaches_the_screen_without_a_message_to_its_widget(tmp_path, monkeypatch):
    """``repaint_rows``: a readout's changed line is marked dirty and the screen told at once; the
    screen's next update paints it, and the widget's own queue is not woken for it."""
    from jtop_roof.tui.widgets.readout import Readout

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        readout = app.query_one("#gpu").query_one(Readout)
        lines = [list(line) for line in readout.lines]
        row = len(lines) - 1
        lines[row] = [("<<new row>>", "warn")]
        posted: list[object] = []
        post = readout.post_message

        def recorded(message: Any) -> bool:
            posted.append(message)
            return post(message)

        monkeypatch.setattr(readout, "post_message", recorded)
        updates: list[Any] = []
        partial_update = LineCompositor.render_partial_update

        def kept(compositor: LineCompositor) -> Any:
            updates.append(partial_update(compositor))
            return updates[-1]

        monkeypatch.setattr(LineCompositor, "render_partial_update", kept)
        readout.set_lines(lines)
        assert posted == [] and readout in app.screen._dirty_widgets
        await pilot.pause()
        y = readout.content_region.y + row
        sent = ["".join(strip.text for strip in update.chops[y].values() if strip is not None)
                for update in updates if update is not None]
        assert any(text.startswith("<<new row>>") for text in sent), sent
        assert _shown_text(app, readout, row).startswith("<<new row>>")


@pytest.mark.usefixtures("each_paint")
async def test_a_row_changed_under_a_dialog_is_shown_when_it_closes(tmp_path):
    """Under another screen (a dialog) the widget goes Textual's way (``refresh``), and its row
    is on screen once the dialog is gone."""
    from textual.screen import ModalScreen

    from jtop_roof.tui.widgets.readout import Readout

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        readout = app.query_one("#gpu").query_one(Readout)
        main = app.screen
        await app.push_screen(ModalScreen())
        await pilot.pause()
        lines = [list(line) for line in readout.lines]
        lines[0] = [("<<under a dialog>>", None)]
        readout.set_lines(lines)
        dialog = app.screen
        # handed to neither screen: the dialog's does not hold it, and the main one is not shown
        assert readout not in dialog._dirty_widgets and readout not in main._dirty_widgets
        app.pop_screen()
        await pilot.pause()
        await pilot.pause()
        assert _shown_text(app, readout, 0).startswith("<<under a dialog>>")


@pytest.mark.usefixtures("each_paint")
async def test_a_line_of_wide_characters_changed_in_place_is_shown_new(tmp_path):
    """A line with a wide character (a CJK process name) goes Textual's way, which keeps the text
    it rendered: ``repaint_rows`` forgets it as ``refresh`` does."""
    from jtop_roof.tui.widgets.readout import Readout

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        readout = app.query_one("#gpu").query_one(Readout)
        row = len(readout.lines) - 1
        for text in ("进程 first", "进程 second"):
            lines = [list(line) for line in readout.lines]
            lines[row] = [(text, None)]
            readout.set_lines(lines)
            await pilot.pause()
            await pilot.pause()
            assert _shown_text(app, readout, row).startswith(text)


@pytest.mark.usefixtures("each_paint")
async def test_a_line_changed_under_a_text_selection_is_shown_new(tmp_path):
    """With text selected the readout goes Textual's way; a line changed meanwhile is painted new."""
    from textual.geometry import Offset
    from textual.selection import Selection

    from jtop_roof.tui.widgets.readout import Readout

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        readout = app.query_one("#gpu").query_one(Readout)
        app.screen.selections = {readout: Selection(Offset(0, 1), Offset(3, 1))}
        await pilot.pause()
        assert readout.text_selection is not None
        for text in ("before", "after the change"):
            lines = [list(line) for line in readout.lines]
            lines[0] = [(text, None)]
            readout.set_lines(lines)
            await pilot.pause()
            await pilot.pause()
            assert _shown_text(app, readout, 0).startswith(text)

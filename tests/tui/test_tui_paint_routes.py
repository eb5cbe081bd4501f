"""The fast paint (tui/fastpaint.py) and Textual's stock paint give the same screens; the switch
(``JROOF_PAINT``) and the Textual version check pick between them, and a fallback is said once."""

from __future__ import annotations

from typing import Any

import pytest
from paths import REPO
from textual.screen import Screen
from tui_support import park_replay, replay_app, wait_until

from jtop_roof.model.errors import UserError
from jtop_roof.tui import fastpaint
from jtop_roof.tui.fastpaint import TESTED_TEXTUAL, MonitorScreen, PaintRoute, choose_route
from jtop_roof.tui.widgets import Readout


@pytest.fixture(autouse=True)
def _fast_after() -> Any:
    yield
    fastpaint.use(PaintRoute(fast=True))


def test_the_paint_is_fast_unless_asked_otherwise_within_the_tested_versions():
    low, high = TESTED_TEXTUAL
    assert choose_route({}, low) == PaintRoute(fast=True)
    assert choose_route({"JROOF_PAINT": "fast"}, high) == PaintRoute(fast=True)
    assert choose_route({"JROOF_PAINT": " Stock "}, high) == PaintRoute(fast=False)  # asked: no note


@pytest.mark.parametrize("found", [(7, 4, 0), (8, 2, 9), (9, 0, 0), None], ids=str)
def test_a_textual_outside_the_tested_versions_gets_the_stock_paint_and_a_note(found):
    route = choose_route({}, found)
    assert not route.fast and route.note is not None
    assert ("an unknown version" if found is None else ".".join(map(str, found))) in route.note
    assert "7.5.0 to 8.2.8" in route.note


def test_a_paint_that_is_neither_fast_nor_stock_is_a_user_error():
    with pytest.raises(UserError, match="JROOF_PAINT='quick': it takes fast or stock"):
        choose_route({"JROOF_PAINT": "quick"}, TESTED_TEXTUAL[0])


def test_the_installed_textual_is_inside_the_tested_versions():
    """CI installs the ends of the range; a textual outside it would run the stock paint only."""
    found = fastpaint.textual_version()
    assert found is not None and TESTED_TEXTUAL[0] <= found <= TESTED_TEXTUAL[1], found


async def test_an_untested_textual_paints_the_stock_way_and_says_so_once(tmp_path, monkeypatch):
    monkeypatch.setattr(fastpaint, "textual_version", lambda: (9, 1, 0))
    app = replay_app(tmp_path)
    assert app.get_driver_class() is super(type(app), app).get_driver_class()
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        assert type(app.screen) is Screen and not fastpaint.fast()
        said = [note for note in app.notes if "Textual 9.1.0 is outside" in note]
        assert len(said) == 1
        await pilot.press("full_stop")
        await wait_until(pilot, lambda: "Textual 9.1.0" in app.query_one("#events").readout.plain,
                         "the note in Events")
        assert len([n for n in app.notes if "Textual 9.1.0" in n]) == 1


async def test_the_stock_paint_uses_textuals_screen_and_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("JROOF_PAINT", "stock")
    app = replay_app(tmp_path)
    assert app.get_driver_class() is super(type(app), app).get_driver_class()
    async with app.run_test(size=(80, 24)) as pilot:
        await park_replay(pilot, app)
        assert type(app.screen) is Screen
        assert not any("outside the versions" in note for note in app.notes)
        readouts = [r for r in app.query(Readout) if r.region.area]
        assert readouts and all(r.direct_route() is None for r in readouts)  # Textual's styles cache
        assert all(r._strips for r in readouts)  # fed by the readout's own lines


#: Screens to compare: (size, config, keys pressed after parking, ...), each a screenshot after
#: parking and after every key (steps, a phase mark, zoom, theme, focus: changes in place).
SCENES = {
    "120x40-dark": ((120, 40), {}, ["full_stop", "m", "full_stop", "z", "full_stop"]),
    "200x60-light": ((200, 60), {"theme": "jroof-light"}, ["full_stop", "t", "full_stop"]),
    "80x24-mono": ((80, 24), {"theme": "jroof-mono"}, ["f", "f", "full_stop"]),
    "roofline-120x40": ((120, 40), {"device": "orin-nano-8gb-super", "power_mode": "MAXN_SUPER"},
                        ["full_stop", "t", "t", "full_stop"]),
}


async def _screens(tmp_path: Any, monkeypatch: Any, paint: str, scene: str) -> list[str]:
    size, config, keys = SCENES[scene]
    monkeypatch.setenv("JROOF_PAINT", paint)
    app = replay_app(tmp_path, **config)
    shots = []
    async with app.run_test(size=size) as pilot:
        await park_replay(pilot, app)
        assert isinstance(app.screen, MonitorScreen) == (paint == "fast")
        shots.append(app.export_screenshot(title="paint"))
        for key in keys:
            await pilot.press(key)
            app.redraw_now()
            await pilot.pause()
            shots.append(app.export_screenshot(title="paint"))
    return shots


@pytest.mark.parametrize("scene", SCENES)
async def test_the_fast_and_the_stock_paint_show_the_same_screens(tmp_path, monkeypatch, scene):
    fast = await _screens(tmp_path / "fast", monkeypatch, "fast", scene)
    stock = await _screens(tmp_path / "stock", monkeypatch, "stock", scene)
    assert len(fast) == len(stock) and len(set(fast)) > 1  # the keys changed the screen
    for index, (ours, textuals) in enumerate(zip(fast, stock, strict=True)):
        assert ours == textuals, f"screen {index} of {scene}"


def _numbers(text: str) -> tuple[int, ...]:
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def test_the_tested_range_is_the_ends_pyproject_allows_and_ci_runs():
    """The fast paint's range is where the equivalence tests ran: CI runs them on the pinned
    Textual (the range's top) and on pyproject's lowest (its bottom)."""
    import re

    root = REPO
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    lowest = re.search(r'"textual>=([\d.]+),', pyproject)
    pinned = re.search(r"^textual==([\d.]+)$", (root / "tests" / "constraints.txt").read_text(), re.M)
    ci_low = re.search(r"^TEXTUAL_LOW=([\d.]+)$", (root / ".ci" / "run").read_text(), re.M)
    assert lowest and pinned and ci_low
    assert _numbers(lowest.group(1)) == _numbers(ci_low.group(1)) == TESTED_TEXTUAL[0]
    assert _numbers(pinned.group(1)) == TESTED_TEXTUAL[1]


def test_the_monitor_refuses_an_unknown_paint_in_one_line():
    import os

    from cli_support import jroof

    done = jroof("--source", "demo", env={**os.environ, "JROOF_PAINT": "quick"}, timeout=60)
    assert done.returncode == 2
    said = "jroof-tui: error: JROOF_PAINT='quick': it takes fast or stock"
    assert done.stderr.strip().splitlines() == [said]

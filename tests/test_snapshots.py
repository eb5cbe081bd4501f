"""SVG snapshots of the main screen, per built-in theme, at 120x40 and 80x24.

Deterministic by construction: a fixed recording (tests/data/tui), replayed paused at a known
position, axis labels from the recording's own UTC stamps, no wall clock on screen, and pinned
the textual version (tests/constraints.txt). Update with
``pytest tests/test_snapshots.py --snapshot-update`` only after looking at snapshot_report.html.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import make_config, park_replay, replay_app, wait_until

from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp
from jtop_roof.tui.themes import BUILTIN_THEME_NAMES

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("theme", BUILTIN_THEME_NAMES)
@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_main_screen(snap_compare, theme, size):
    app = replay_app(theme=theme)

    async def settle(pilot):
        await park_replay(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=settle)


def test_focused_power_pane_at_80x24(snap_compare):
    """Small terminal, one pane full-screen with its plot (the way to the plots over SSH)."""
    app = replay_app()

    async def settle(pilot):
        await park_replay(pilot, app)
        await pilot.press("f", "f", "f", "f")
        await pilot.pause()
        app.redraw_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_roofline_pane_focused_at_120x40(snap_compare):
    """The roof at the current clocks against the MAXN_SUPER roof, full-screen."""
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")

    async def settle(pilot):
        await park_replay(pilot, app)
        while app.focused_pane != "roofline":
            await pilot.press("f")
        await pilot.pause()
        app.redraw_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=settle)


NONROOT_LINES = [line for line in (DATA / "fake_tegrastats_orinnano_nonroot.txt").read_text().splitlines()
                 if line and not line.startswith("#")]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_roofline_on_a_log_without_clocks(snap_compare, tmp_path, size):
    """tegrastats without root prints no GPU/EMC clock: the pane says so instead of a roof."""
    log = tmp_path / "nonroot.log"
    log.write_text("\n".join(NONROOT_LINES) + "\n")
    source = ReplaySource(log, tz="UTC", hold_at_end=True)
    app = JroofApp(source, make_config(device="orin-nano-8gb"), user_themes=tmp_path)

    async def settle(pilot):
        await wait_until(pilot, lambda: len(app.history) == len(NONROOT_LINES), "every line")
        source.pause()
        app.redraw_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=settle)


def test_roofline_pane_with_a_workload_point(snap_compare):
    """Work reported for the phase at the playhead (the hook) places it on the roof, labelled."""
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")

    async def settle(pilot):
        await park_replay(pilot, app)
        last = app.history.last_t_mono
        # resnet50 at 4.1 GMACs and ~25 MB an inference, 14,000 inferences reported in this phase
        app.pipeline.work(14_000, 14_000 * 8.2e9, 14_000 * 25e6, "fp16", None, last)
        while app.focused_pane != "roofline":
            await pilot.press("f")
        await pilot.pause()
        app.redraw_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=settle)

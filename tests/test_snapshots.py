"""SVG snapshots of the main screen, per built-in theme, at 120x40 and 80x24.

Deterministic by construction: a fixed recording (tests/data/tui), replayed paused at a known
position, axis labels from the recording's own UTC stamps, no wall clock on screen, and pinned
textual / textual-plotext / plotext versions (pyproject). Update with
``pytest tests/test_snapshots.py --snapshot-update`` only after looking at snapshot_report.html.
"""

from __future__ import annotations

import pytest
from tui_support import park_replay, replay_app

from jtop_roof.themes import BUILTIN_THEME_NAMES


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

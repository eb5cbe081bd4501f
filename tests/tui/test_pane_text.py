"""Words on screen never run together: a styled run never starts with the space that separates
its word from a word ending the run before (SVG snapshots, and what reads them, drop it there:
"GBSWAP", "Jphase", "°Cgpu")."""

from __future__ import annotations

import pytest
from tui_support import park_replay, replay_app

from jtop_roof.tui.panes import MemoryPane, PowerPane, TempPane


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_memory_power_and_temperature_runs_start_with_a_word(tmp_path, size):
    app = replay_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await park_replay(pilot, app)
        seen = 0
        for pane in (app.query_one(MemoryPane), app.query_one(PowerPane), app.query_one(TempPane)):
            for line in pane.readout.lines:
                for (before, _), (text, style) in zip(line, line[1:], strict=False):
                    if style is not None and before[-1:].isalpha() and text.lstrip()[:1].isalpha():
                        assert not text[0].isspace(), (type(pane).__name__, line)
                    seen += before[-1:].isspace() and text[:1].isalpha()  # a word after a space
        assert seen > 5

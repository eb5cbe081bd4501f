"""A recording's fans (``fans`` in its samples: the pwm-fan's duty and tachometer) show in the
Temperatures pane, as the latest sample has them; a recording without fans shows no fan line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_support import FIXTURE, POSITION_S, last_sample_before, make_config, park_replay

from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp
from jtop_roof.tui.panes import TempPane


def fans_at(mono: float) -> dict[str, dict[str, float | None]]:
    """Fans that change with every sample, so the pane can only show the latest one's."""
    step = round(mono * 10)
    return {"pwmfan": {"speed_pct": float(step % 100), "rpm": 1000.0 + step},
            "pwmfan_2": {"speed_pct": 30.0, "rpm": None}}


def with_fans(path: Path) -> Path:
    """The monitor tests' recording (a real Orin Nano Super replay) with a fan in every sample."""
    lines = []
    for line in FIXTURE.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "sample":
            obj["fans"] = fans_at(obj["mono"])
        lines.append(json.dumps(obj) + "\n")
    path.write_text("".join(lines))
    return path


def pane_text(app: JroofApp) -> list[str]:
    return ["".join(text for text, _ in line) for line in app.query_one(TempPane).readout.lines]


@pytest.mark.parametrize("fans", [True, False], ids=["fans", "no-fans"])
async def test_the_latest_samples_fans_show_in_the_temperatures_pane(tmp_path, fans):
    recording = with_fans(tmp_path / "fans.jsonl") if fans else FIXTURE
    source = ReplaySource(recording, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path / "no-themes")
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        lines = pane_text(app)
    fan_lines = [line for line in lines if line.startswith("fan ")]
    if not fans:
        assert fan_lines == [] and any("tj" in line.lower() for line in lines)
        return
    latest = fans_at(last_sample_before(POSITION_S))["pwmfan"]
    assert fan_lines == [f"fan pwmfan {latest['speed_pct']:.0f}% {latest['rpm']:.0f} rpm  pwmfan_2 30%"]

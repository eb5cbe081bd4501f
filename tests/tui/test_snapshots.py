"""SVG snapshots of the main screen, per built-in theme, at 120x40 and 80x24.

Deterministic by construction: a fixed recording (tests/data/tui), replayed paused at a known
position, axis labels from the recording's own UTC stamps, no wall clock on screen, and pinned
the textual version (tests/constraints.txt). Update with
``pytest tests/tui/test_snapshots.py --snapshot-update`` only after looking at snapshot_report.html.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import TESTS
from tui_support import (
    CALIBRATED_ORIN,
    FIXTURE,
    last_sample_before,
    make_config,
    park_replay,
    plots_drawn,
    replay_app,
    wait_until,
)

from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp
from jtop_roof.tui.themes import BUILTIN_THEME_NAMES
from jtop_roof.tui.widgets import Readout

DATA = TESTS / "data"


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
        await wait_until(pilot, lambda: not app.pipeline.still_reading, "the whole file's ledger and board")
        await wait_until(pilot, lambda: plots_drawn(app), "every plot on screen drawn")
        app.redraw_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=settle)


def test_roofline_pane_with_a_workload_point(snap_compare):
    """Work reported for the phase at the playhead (the hook) places it on the roof, labelled."""
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")

    async def settle(pilot):
        await park_replay(pilot, app)
        last = app.history.last_t_mono
        # resnet50 at 4.1 GMACs and ~25 MB an inference, 4,000 inferences reported in the 5.3 s
        # of this open phase played so far (it is shown as far as the play head)
        app.pipeline.work(4_000, 4_000 * 8.2e9, 4_000 * 25e6, "fp16", None, last)
        while app.focused_pane != "roofline":
            await pilot.press("f")
        await pilot.pause()
        app.redraw_now()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=settle)


# ---------------------------------------------------------------------------- as a new user meets it

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])


async def _focus(pilot, app, pane: str) -> None:
    while app.focused_pane != pane:
        await pilot.press("f")
    await pilot.pause()
    app.redraw_now()
    await pilot.pause()


@SIZES
def test_int8_workload_point_on_the_roofline_focused_at_its_precision(snap_compare, size):
    """INT8 work reported in the INT8 phase: the roofline opens on the INT8 roof (not FP16), says
    OP/s and OP/byte, and the point's label sits beside its dot; full-screen with its plot at
    80x24 too."""
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")

    async def settle(pilot):
        await park_replay(pilot, app, 46.0)
        # resnet50 at 4.1 GMACs and ~25 MB an inference, 1,500 inferences in the 7 s of the phase
        app.pipeline.work(1_500, 1_500 * 8.2e9, 1_500 * 25e6, "int8", None, app.history.last_t_mono)
        await _focus(pilot, app, "roofline")

    assert snap_compare(app, terminal_size=size, run_before=settle)


def held_clock_recording(path: Path) -> Path:
    """The TUI recording with the GPU held at 612 MHz of its 1020 MHz cap from 42 s to 47.6 s of the
    INT8 phase, still 99 % busy: the throttle rule's case (a clock held flat below its cap while
    saturated), whose reason is long enough to wrap in Events."""
    lines = []
    for text in FIXTURE.read_text().splitlines():
        record = json.loads(text)
        if record.get("type") == "sample" and 42.0 <= record["mono"] <= 47.7:
            record["gpu"] = {"load_pct": 99, "mhz": 612, "gpc_mhz": [612]}
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


@SIZES
def test_events_wrap_a_throttles_reason(snap_compare, tmp_path, size):
    """The throttle's whole reason in Events, wrapped under its text, not cut at the pane's edge."""
    source = ReplaySource(held_clock_recording(tmp_path / "held.jsonl"), tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER"),
                   user_themes=tmp_path)

    async def settle(pilot):
        await park_replay(pilot, app, 52.0)
        await wait_until(pilot, lambda: any(e.kind == "throttle" for e in app.history.events),
                         "the throttle closed")
        app.redraw_now()
        await pilot.pause()
        if size == (80, 24):
            await _focus(pilot, app, "events")

    assert snap_compare(app, terminal_size=size, run_before=settle)


@SIZES
def test_the_screen_right_after_a_seek(snap_compare, size):
    """Ten seconds back from 60 s: the header, the plots' time axes and their lines all at 50 s
    after the next frame (the redraw timer's one call; the timer itself is slowed out of the way)."""
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER", redraw_hz=0.1)

    async def settle(pilot):
        await park_replay(pilot, app)
        await pilot.press("left")
        await wait_until(pilot, lambda: app.history.last_t_mono == last_sample_before(50.0), "the backfill")
        app._redraw()  # the next frame: what the timer's tick draws, nothing forced
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=settle)


async def test_a_seek_moves_the_headers_time_on_the_next_frame():
    """The header follows the seek key itself, not the next redraw tick (slowed to 10 s here, so
    only the seek can have moved it)."""
    app = replay_app(redraw_hz=0.1)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        header = app.query_one("#header", Readout)
        assert "00:01:00/" in header.plain
        await pilot.press("left")
        await pilot.pause()
        assert "00:00:50/" in header.plain and "00:01:00/" not in header.plain


# ---------------------------------------------------------------------------- who else ran

#: Who else ran, every 5 s: the benchmark (run's tree), the camera daemon, a foreign python above
#: the 5 % line, and the display server below it (% of one core; RSS in MB).
OTHERS = [{"pid": 2811, "name": "trtexec", "cpu_pct": 97.5, "rss_mb": 812.0, "benchmark": True},
          {"pid": 1045, "name": "nvargus-daemon", "cpu_pct": 11.8, "rss_mb": 96.0},
          {"pid": 3302, "name": "python3", "cpu_pct": 6.4, "rss_mb": 143.0},
          {"pid": 911, "name": "Xorg", "cpu_pct": 2.1, "rss_mb": 88.0}]


def processes_recording(path: Path) -> Path:
    """The TUI recording with a process reading after every fifth second's sample (the first only
    primes), as the sampler beside tegrastats writes them."""
    lines, next_at = [], None
    for text in FIXTURE.read_text().splitlines():
        lines.append(text)
        record = json.loads(text)
        if record.get("type") != "sample":
            continue
        if next_at is None or record["mono"] >= next_at:
            priming = next_at is None
            rows = [{**row, "cpu_pct": None} if priming else row for row in OTHERS]
            lines.append(json.dumps({"type": "processes", "t": record["t"], "mono": record["mono"] + 0.01,
                                     "source": "/proc", "period_s": 5.0, "floor_pct": 1.0,
                                     **({"priming": True} if priming else {}), "processes": rows}))
            next_at = record["mono"] + 5.0
    path.write_text("\n".join(lines) + "\n")
    return path


@SIZES
def test_the_processes_pane(snap_compare, tmp_path, size):
    """Who else ran in the phase at the playhead: the benchmark's tree marked, the foreign process
    above 5 % of a core highlighted; at 80x24 focused full-screen."""
    source = ReplaySource(processes_recording(tmp_path / "others.jsonl"), tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER"),
                   user_themes=tmp_path)

    async def settle(pilot):
        await park_replay(pilot, app)
        if size == (80, 24):
            await _focus(pilot, app, "processes")

    assert snap_compare(app, terminal_size=size, run_before=settle)


@SIZES
def test_the_energy_roofline_of_each_calibrated_mode(snap_compare, size):
    """The j key's energy roofline: J per OP against OP/byte, a line per calibrated mode (a test
    config's figures, not the device database's), MAXN_SUPER bright, the INT8 phase's measured
    J/OP as a point, 7W named without a line, and the cheapest mode at the point's intensity."""
    app = replay_app(device="orin-nano-8gb-super", power_mode="MAXN_SUPER", devices=CALIBRATED_ORIN)

    async def settle(pilot):
        await park_replay(pilot, app, 46.0)
        app.pipeline.work(1_500, 1_500 * 8.2e9, 1_500 * 25e6, "int8", None, app.history.last_t_mono)
        await pilot.press("j")
        await _focus(pilot, app, "roofline")

    assert snap_compare(app, terminal_size=size, run_before=settle)

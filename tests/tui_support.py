"""Shared helpers of the monitor tests: a deterministic paused replay, a scripted live source, and
waiting for the app to ingest what it was sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Record
from jtop_roof.runtime.config import Config
from jtop_roof.sources.base import Source
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui import fastpaint
from jtop_roof.tui.app import JroofApp

DATA = Path(__file__).resolve().parent / "data" / "tui"
FIXTURE = DATA / "orinnano_super_replay.jsonl"
#: Where snapshots and most tests park the replay: inside phase "resnet50-fp16", GPU busy.
POSITION_S = 60.0


@pytest.fixture(params=["fast", "stock"])
def each_paint(request: Any, monkeypatch: Any) -> Iterator[str]:
    """Run the test on the fast paint and on Textual's stock one (``JROOF_PAINT``; the app picks
    its paint as it is built). Import it into a test module to use it."""
    monkeypatch.setenv(fastpaint.PAINT_ENV, request.param)
    fastpaint.use(fastpaint.PaintRoute(fast=request.param != "fast"))  # the app must set it
    yield request.param
    taken = fastpaint.fast()
    fastpaint.use(fastpaint.PaintRoute(fast=True))
    assert taken == (request.param == "fast"), "the app did not take the paint asked for"


def fixture_sample_times() -> list[float]:
    times = []
    for line in FIXTURE.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "sample":
            times.append(obj["mono"])
    return times


def last_sample_before(position_s: float) -> float:
    """The newest sample a seek to ``position_s`` leaves in history (the backfill stops short of
    the target; the sample at the target plays next)."""
    return max(t for t in fixture_sample_times() if t < position_s)


def make_config(**changes: Any) -> Config:
    values: dict[str, Any] = {"tz": "UTC", "theme": "jroof-dark", "record_dir": "."}
    values.update(changes)
    return Config(**values)


def paused_replay(speed: float = 1.0) -> ReplaySource:
    source = ReplaySource(FIXTURE, speed=speed, tz="UTC", hold_at_end=True)
    source.pause()
    return source


def replay_app(tmp_path: Path | None = None, **config: Any) -> JroofApp:
    user_themes = tmp_path / "no-themes" if tmp_path is not None else DATA / "no-themes"
    return JroofApp(paused_replay(), make_config(**config), user_themes=user_themes)


async def wait_until(pilot: Any, condition: Callable[[], bool], what: str, rounds: int = 200) -> None:
    """Let the app run until ``condition`` holds (a bound against hanging, not a timing check)."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"the app never reached: {what}")


async def park_replay(pilot: Any, app: JroofApp, position_s: float = POSITION_S) -> None:
    """Seek the paused replay to a known place, wait for the backfill, and draw everything."""
    expected = last_sample_before(position_s)
    app.request_seek(position_s, relative=False)
    await wait_until(pilot, lambda: app.history.last_t_mono == expected, f"samples up to {expected}")
    await wait_until(pilot, lambda: not app.pipeline.still_reading, "the whole file's ledger and board")
    await wait_until(pilot, lambda: plots_drawn(app), "every plot on screen drawn")
    await pilot.pause()
    app.redraw_now()
    await pilot.pause()


def plots_drawn(app: JroofApp) -> bool:
    """Draw now and say whether every plot on screen has a chart (a cold start lays the screen
    out after the first draw asked: a plot without a size then waits for the next one)."""
    from jtop_roof.tui.widgets.chartview import ChartView

    app.redraw_now()
    return all(view._chart is not None for view in app.query(ChartView) if view.region.area > 0)


class ScriptedSource(Source):
    """A live-looking source: yields the given records, then waits until stopped."""

    def __init__(self, records: list[Record], *, kind: str = "tegrastats", info: dict | None = None,
                 fail: str | None = None) -> None:
        self.kind = kind
        self._records = records
        self._info = info or {}
        self._fail = fail
        self._stopped = threading.Event()
        self.stop_calls = 0

    def records(self) -> Iterator[Record]:
        yield from self._records
        if self._fail:
            raise RuntimeError(self._fail)
        self._stopped.wait()

    def stop(self) -> None:
        self.stop_calls += 1
        self._stopped.set()

    def describe(self) -> SourceInfo:
        return SourceInfo.from_mapping({"source": self.kind, **self._info})


def _figure(value: float, source: str = "given") -> dict[str, Any]:
    return {"value": value, "source": source, "note": "a test's figure, not the board's"}


#: The Orin Nano 8GB Super with made-up energy figures for three of its modes, and 7W with π0 alone
#: (no ε: no line): the energy roofline's tests draw these, never the device database's own figures.
CALIBRATED_ORIN: dict[str, Any] = {"orin-nano-8gb-super": {"power_modes": [
    *({"name": name, "calibration": {"pi0_w": _figure(pi0), "eps_byte_j": _figure(60e-12),
                                     "eps_flop_j": {"int8": _figure(0.25e-12), "fp16": _figure(0.6e-12)}}}
      for name, pi0 in (("MAXN_SUPER", 9.0), ("25W", 6.5), ("15W", 4.0))),
    {"name": "7W", "calibration": {"pi0_w": _figure(2.5)}}]}}

"""The monitor wakes only when something changes (the TUI's own cost): frames come when
records do, and the input thread sleeps until a key comes (tui/fastpaint.py)."""

from __future__ import annotations

import os
import selectors
import signal
import threading
import time
import tty
from typing import Any

import pytest
from textual import events
from tui_support import park_replay, replay_app, wait_until


async def test_no_frame_is_drawn_while_nothing_changes_and_one_when_a_record_comes(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        frames: list[float] = []
        redraw = app._redraw
        app._redraw = lambda: (frames.append(time.monotonic()), redraw())[1]  # type: ignore[method-assign]
        # A paused replay goes quiet: what was held back (a plot drawn a second after its period)
        # is drawn once, then no frame comes; a 2 Hz timer would draw two in every window.
        windows = []
        for _ in range(5):
            frames.clear()
            await pilot.pause(1.2)
            windows.append(len(frames))
            if not frames:
                break
        assert windows[-1] == 0, windows
        before = app.history.last_t_mono
        assert app.controls is not None
        app.controls.step()
        await wait_until(pilot, lambda: app.history.last_t_mono != before and bool(frames), "a frame")
        await pilot.pause()
        pipeline = app.pipeline  # the frame painted the stepped record: the panes show its version
        assert app._painter._drawn_version == (pipeline.history.version, pipeline.ledger_version)


def _driver_class() -> Any:
    from jtop_roof.tui.fastpaint import quiet_driver

    class Recorded(quiet_driver()):  # type: ignore[misc,valid-type]
        """Keeps what the input thread parses instead of posting it to an app."""

        def __init__(self) -> None:
            super().__init__(None)  # type: ignore[arg-type]
            self.keys: list[str] = []

        def process_message(self, message: Any) -> None:
            if isinstance(message, events.Key):
                self.keys.append(message.key)

    return Recorded


async def test_the_input_thread_sleeps_until_a_key_comes_and_wakes_to_stop(monkeypatch):
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGTSTP, signal.SIGCONT)}
    master, slave = os.openpty()
    tty.setraw(slave)
    selects = 0
    select = selectors.SelectSelector.select

    def counted(self: selectors.SelectSelector, timeout: float | None = None) -> Any:
        nonlocal selects
        selects += 1
        return select(self, timeout)

    monkeypatch.setattr(selectors.SelectSelector, "select", counted)
    driver = _driver_class()()
    driver.fileno = slave
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    try:
        thread.start()
        _until(lambda: selects >= 1)
        time.sleep(0.5)  # Textual's loop would have woken five times by now
        assert selects == 1
        os.write(master, b"a")
        _until(lambda: driver.keys == ["a"])
        os.write(master, b"\x1b")  # a lone Escape: reported once the escape delay ran out
        _until(lambda: driver.keys == ["a", "escape"])
        driver.exit_event.set()
        thread.join(5.0)
        assert not thread.is_alive()
    finally:
        driver.exit_event.set()
        driver.close()
        os.close(master)
        os.close(slave)
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _until(condition: Any, rounds: int = 250) -> None:
    """Wait for ``condition`` (a bound against hanging, not a timing check)."""
    for _ in range(rounds):
        if condition():
            return
        time.sleep(0.02)
    pytest.fail("the input thread never got there")


async def test_a_batch_of_records_is_taken_in_stream_order_with_one_frame(tmp_path):
    """Power at 5 Hz (and process readings) comes in one message with the next sample (tui.streams'
    Batcher): the handler hands every record to its board in order and asks for one frame."""
    from jtop_roof.model.records import PowerReading
    from jtop_roof.tui.messages import RecordsReceived

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        await wait_until(pilot, lambda: app._frame_due is None, "no frame waiting")
        last = app.history.last_t_mono or 0.0
        batch = tuple(PowerReading(None, last + 0.2 * k, {"VDD_IN": 5000.0 + k}, {}, "INA3221 hwmon", 0.2)
                      for k in (1, 2, 3))
        taken: list[object] = []
        receive = app.boards.receive
        app.boards.receive = lambda index, record: (taken.append(record), receive(index, record))[1]  # type: ignore[method-assign]
        app.on_records_received(RecordsReceived(batch))
        assert taken == list(batch)
        assert app._frame_due is not None


async def test_the_roof_plot_is_drawn_again_only_when_a_roof_moves_by_a_visible_step(tmp_path):
    """A GPU clock jittering by 1 MHz (1016 -> 1017) moves the roof by less than a dot: the roof
    plot is not drawn again; a clock step (1016 -> 1100) is."""
    from dataclasses import replace

    from jtop_roof.tui.panes.roofline import RooflinePane
    from jtop_roof.tui.view import build_view

    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        pane = app.query_one(RooflinePane)
        view = build_view(app.pipeline, thresholds=app.config.thresholds, tz=app._tz, window_s=app.window_s,
                          wall_axis=app.replay, notes=[], precision=app.precision)
        roof = view.roof
        assert roof is not None and roof.current is not None and roof.precision is not None
        draws: list[object] = []
        draw = pane.roof_plot.draw
        pane.roof_plot.draw = lambda state, points=(): (draws.append(state), draw(state, points))[1]  # type: ignore[method-assign]

        def at(scale: float) -> object:
            current = roof.current
            assert current is not None
            peaks = {k: v * scale for k, v in current.peak_flops_per_s.items()}
            ridges = {k: v * scale for k, v in current.ridge_flop_per_byte.items()}
            moved = replace(current, gpu_mhz=current.gpu_mhz * scale, peak_flops_per_s=peaks,
                            ridge_flop_per_byte=ridges)
            return replace(view, roof=replace(roof, current=moved))

        pane.update_readout(at(1.0))
        drawn = len(draws)
        pane.update_readout(at(1017 / 1016))
        assert len(draws) == drawn
        pane.update_readout(at(1100 / 1016))
        assert len(draws) == drawn + 1


@pytest.mark.parametrize("size", [(130, 40), (190, 55)])
async def test_a_plot_resized_in_a_paused_replay_is_drawn_for_its_new_size(tmp_path, size):
    """No record comes while a replay is paused: a resize alone must draw the plots again for
    their new width (time ticks and labels, points), not only lay the old drawing out again."""
    from jtop_roof.tui.widgets.chartview import ChartView

    app = replay_app(tmp_path)
    async with app.run_test(size=(150, 45)) as pilot:
        await park_replay(pilot, app)
        await pilot.resize_terminal(*size)
        for _ in range(10):
            await pilot.pause(0.05)
        plots = [plot for plot in app.screen.query(ChartView) if plot.region.area]
        assert plots
        shown = [plot.rows_text for plot in plots]
        app.redraw_now()
        assert [plot.rows_text for plot in plots] == shown

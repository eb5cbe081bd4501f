"""The monitor driven headless with Pilot: every key, modes, layout sizes, recording, safety."""

from __future__ import annotations

import json
import math
from datetime import timezone
from pathlib import Path

import pytest
from tui_support import (  # each_paint: a fixture (the fast and the stock paint)
    FIXTURE,
    POSITION_S,
    ScriptedSource,
    each_paint,  # noqa: F401
    fixture_sample_times,
    last_sample_before,
    make_config,
    park_replay,
    paused_replay,
    replay_app,
    wait_until,
)

from jtop_roof.analysis.history import History
from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.codec import record_from_json
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Clocked, CpuCore, Event, Gpu, Memory, Rail, Sample
from jtop_roof.model.settings import Thresholds
from jtop_roof.runtime.session import HOST_HINT
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp
from jtop_roof.tui.messages import NOTICE_CHARS, short_notice
from jtop_roof.tui.panes import CpuPane, EventsPane, GpuPane, MemoryPane, PowerPane, TempPane
from jtop_roof.tui.view import View
from jtop_roof.tui.widgets import HelpScreen, PhaseNameScreen


def live_samples(count: int = 5, **extra) -> list[Sample]:
    out = []
    for i in range(count):
        out.append(Sample(
            t_wall=1_700_000_000.0 + i, t_mono=float(i), ram=Memory(1000, 7600),
            cpus=[CpuCore(10.0 * i, 1200), None], gpu=Gpu(50.0, (900,)),
            temps_c={"tj": 50.0}, rails={"VDD_IN": Rail(5000.0, 5000.0)}, **extra,
        ))
    return out


def live_app(tmp_path: Path, records=None, **kwargs) -> JroofApp:
    source = ScriptedSource(live_samples() if records is None else records, info=kwargs.pop("info", None),
                            fail=kwargs.pop("fail", None))
    config = make_config(record_dir=str(tmp_path), **kwargs.pop("config", {}))
    return JroofApp(source, config, user_themes=tmp_path / "themes", **kwargs)


def markers_in(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [obj for obj in lines if obj["type"] == "marker"]


# ------------------------------------------------------------------------------------ replay


@pytest.mark.usefixtures("each_paint")
async def test_replay_fills_every_pane(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        header = app.query_one("#header").plain
        assert "Jetson Orin Nano 8GB Super" in header
        assert "REPLAY ×1 PAUSED" in header
        assert "00:01:00/00:01:12" in header
        assert "▶ resnet50-fp16" in header
        cpu = app.query_one("#cpu", CpuPane)
        assert cpu.readout.plain.count("MHz") == 6
        assert "VDD_IN" in app.query_one("#power").readout.plain
        assert "total" in app.query_one("#power").readout.plain
        assert "tj" in app.query_one("#temps").readout.plain
        assert "APE 200 MHz" in app.query_one("#engines").readout.plain
        events = app.query_one("#events").readout.plain
        assert "gap" in events and "no data for 2.0 s" in events
        assert "phase resnet50-int8" in events and "phase end" in events
        phase = app.pipeline.ledger.phase_at(app.history.last_t_mono)
        assert phase is not None and phase.name == "resnet50-fp16" and phase.energy_j > 0


async def test_readouts_draw_the_same_strips_as_textuals_own_route(tmp_path):
    """Readout builds its lines straight from its chunks: segment for segment (text, colours, the
    offsets selection needs) what Textual makes of its Text, cut lines included, in every theme."""
    from textual.widget import Widget

    from jtop_roof.tui.widgets import Readout

    app = replay_app(tmp_path, device="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        cut = 0
        for _ in range(2):
            app.redraw_now()
            await pilot.pause()
            readouts = [r for r in app.query(Readout) if r.size.area]
            assert len(readouts) >= 8
            # The panes wrap their long lines now: one line longer than any pane, to be cut.
            readouts[0].set_lines([*readouts[0].lines, [("a line wider than the pane " * 8, "label")]])
            await pilot.pause()
            for readout in readouts:
                direct = [readout.render_line(y) for y in range(len(readout.lines))]
                Widget._render_content(readout)  # through render(): Text, Content, strips
                textual = readout._render_cache.lines[: len(readout.lines)]
                assert [list(s) for s in direct] == [list(s) for s in textual]
                assert [s.cell_length for s in direct] == [s.cell_length for s in textual]
                cut += sum(1 for s in direct if s.text.endswith("…"))
            await pilot.press("t")  # another theme: other colours, another base style
        assert cut > 0


@pytest.mark.usefixtures("each_paint")
async def test_pause_and_resume(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        assert app.source.paused
        await pilot.press("space")
        assert not app.source.paused
        await pilot.press("space")
        assert app.source.paused
        app.redraw_now()
        assert "PAUSED" in app.query_one("#header").plain


@pytest.mark.usefixtures("each_paint")
async def test_step_plays_exactly_one_sample(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        times = fixture_sample_times()
        before = app.history.last_t_mono
        expected = times[times.index(before) + 1]
        await pilot.press("full_stop")
        await wait_until(pilot, lambda: app.history.last_t_mono == expected, "one more sample")
        await pilot.pause(0.1)
        assert app.history.last_t_mono == expected
        assert app.source.paused


async def test_speed_keys_step_and_clamp(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("plus")
        assert app.source.speed == 2.0
        await pilot.press("minus", "minus", "minus", "minus")
        assert app.source.speed == 0.25
        for _ in range(10):
            await pilot.press("plus")
        assert app.source.speed == 64.0
        app.redraw_now()
        assert "REPLAY ×64" in app.query_one("#header").plain


@pytest.mark.usefixtures("each_paint")
async def test_seek_keys_move_the_playhead_and_refill_history(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app, 30.0)
        await pilot.press("right")
        assert app.source.position_s == pytest.approx(40.0)
        await pilot.press("left", "left")
        assert app.source.position_s == pytest.approx(20.0)
        await pilot.press("shift+right")
        assert app.source.position_s == pytest.approx(app.source.duration_s)  # clamped at the end
        await pilot.press("shift+left")
        assert app.source.position_s == pytest.approx(app.source.duration_s - 60.0)
        await pilot.press("home")
        assert app.source.position_s == 0.0
        await wait_until(pilot, lambda: app.history.events and app.history.events[-1].kind == "seek"
                         and len(app.history) == 0, "history cleared by the seek to the start")
        await pilot.press("end")
        expected = last_sample_before(app.source.duration_s)
        await wait_until(pilot, lambda: app.history.last_t_mono == expected, "history refilled to the end")


async def test_follow_key_tails_the_file_and_plays_what_is_appended(tmp_path):
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(FIXTURE.read_bytes())
    source = ReplaySource(growing, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app, 10.0)
        await pilot.press("F")
        assert app.source.follow_enabled and not app.source.paused
        end = app.source.duration_s
        await wait_until(pilot, lambda: app.source.position_s == pytest.approx(end), "the end")
        # a line written after F is played: the file is followed, not just jumped to
        last = [json.loads(line) for line in FIXTURE.read_text().splitlines()
                if json.loads(line).get("type") == "sample"][-1]
        last["mono"] += 0.2
        with growing.open("a") as out:
            out.write(json.dumps(last) + "\n")
        await wait_until(pilot, lambda: app.history.last_t_mono == pytest.approx(last["mono"]),
                         "the appended sample")
        await wait_until(pilot, lambda: "FOLLOW" in app.query_one("#header").plain, "the FOLLOW badge")
        await pilot.press("F")
        assert not app.source.follow_enabled


async def test_seeks_in_an_older_recording_do_not_wipe_history(tmp_path):
    """Recordings made before seeks were left out hold the replay viewer's seeks: played back,
    they are notes, not a reason to forget what was played."""
    lines = FIXTURE.read_text().splitlines()
    seek = {"type": "event", "kind": "seek", "detail": "seek to 10.0 s", "t": 1776562310.0, "mono": 40.0}
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("mono", 0) > 40.0)
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(lines[:at] + [json.dumps(seek)] + lines[at:]) + "\n")
    source = ReplaySource(path, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.request_seek_to("end")  # the backfill plays the whole file, recorded seek included
        expected = last_sample_before(app.source.duration_s)
        await wait_until(pilot, lambda: app.history.last_t_mono == expected, "the whole file")
        assert app.history.first_t_mono == 0.0
        assert len(app.history) == len(fixture_sample_times()) - 1
        assert [e.kind for e in app.history.events] == ["seek", "gap", "note"]
        assert app.history.events[-1].detail == "recorded: seek to 10.0 s"


async def test_replay_keys_are_hidden_live_and_record_hidden_in_replay(tmp_path):
    replay = replay_app(tmp_path)
    async with replay.run_test(size=(120, 40)):
        assert replay.check_action("toggle_pause", ()) is True
        assert replay.check_action("seek", (10,)) is True
        assert replay.check_action("toggle_record", ()) is False
        shown = {b.binding.id for b in replay.screen.active_bindings.values()}
        assert "pause" in shown
    live = live_app(tmp_path)
    async with live.run_test(size=(120, 40)) as pilot:
        for action in ("toggle_pause", "step", "speed_up", "speed_down", "seek", "seek_to", "follow"):
            assert live.check_action(action, ()) is False
        assert live.check_action("toggle_record", ()) is True
        await wait_until(pilot, lambda: len(live.history) == 5, "five live samples")
        version = live.history.version
        await pilot.press("space", "right", "plus", "F")  # no replay controls on a live source
        await pilot.pause()
        assert live.is_running
        assert len(live.history) == 5 and live.history.version == version
        assert not any(e.kind == "seek" for e in live.history.events)


# ------------------------------------------------------------------------------------ phases


@pytest.mark.usefixtures("each_paint")
async def test_phase_keys_mark_name_and_end_into_the_recording(tmp_path):
    path = tmp_path / "rec.jsonl"
    recorder = Recorder(path, {"source": "replay"})
    app = JroofApp(paused_replay(), make_config(), recorder=recorder, user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        await pilot.press("m")
        # Unnamed phases are numbered among all phases of the stream: the replay holds three.
        assert app.history.current_phase == "phase 4"
        assert "▶ phase 4" in app.query_one("#header").plain
        await pilot.press("M")
        assert isinstance(app.screen, PhaseNameScreen)
        await pilot.press(*"warm [b]up", "enter")
        assert app.history.current_phase == "warm [b]up"
        assert "▶ warm [b]up" in app.query_one("#header").plain  # shown literally, not as markup
        await pilot.press("M", "escape")  # cancelled: no new phase
        assert app.history.current_phase == "warm [b]up"
        await pilot.press("M", "enter")  # empty name: the automatic one
        assert app.history.current_phase == "phase 6"
        await pilot.press("e")
        assert app.history.current_phase is None
        assert app.check_action("end_phase", ()) is False  # nothing to end: hidden
        assert "end-phase" not in {b.binding.id for b in app.screen.active_bindings.values()}
    markers = [m for m in markers_in(path) if m["origin"] == "key"]  # the replayed file's own are copied too
    assert [(m["kind"], m["name"]) for m in markers] == [
        ("phase_start", "phase 4"), ("phase_start", "warm [b]up"), ("phase_start", "phase 6"),
        ("phase_end", None)]
    expected = last_sample_before(POSITION_S)
    assert all(m["mono"] == expected and m["origin"] == "key" for m in markers)


@pytest.mark.usefixtures("each_paint")
async def test_markers_drawn_on_plots_survive_a_seek(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        await pilot.press("m")
        mark = app.history.markers[-1]
        await pilot.press("left")
        await wait_until(pilot, lambda: app.history.last_t_mono == last_sample_before(POSITION_S - 10),
                         "backfill after the seek")
        assert mark not in app.history.markers  # the replay has not reached it again
        await pilot.press("right")
        await wait_until(pilot, lambda: app.history.last_t_mono == last_sample_before(POSITION_S),
                         "backfill after the second seek")
        await pilot.press("full_stop")
        await wait_until(pilot, lambda: mark in app.history.markers, "our marker back on the timeline")


async def test_live_marker_lands_in_a_toggled_recording(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 5, "five live samples")
        await pilot.press("r")
        path = Path(app.sink.path)
        assert path.parent == tmp_path
        app.redraw_now()
        assert "● REC " + path.name in app.query_one("#header").plain
        await pilot.press("m")
        await pilot.press("r")
        assert app.sink.path is None
    header = json.loads(path.read_text().splitlines()[0])
    assert header["type"] == "header" and header["source"] == "tegrastats"
    assert [m["name"] for m in markers_in(path)] == ["phase 1"]


async def test_recording_started_inside_a_phase_starts_with_that_phase(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 5, "five live samples")
        await pilot.press("M", *"warm", "enter")
        await pilot.press("r")
        path = Path(app.sink.path)
        await pilot.press("e", "r")
    assert [(m["kind"], m["name"], m["origin"]) for m in markers_in(path)] == [
        ("phase_start", "warm", "resume"), ("phase_end", None, "key")]
    assert all(record_from_json(json.loads(line)) for line in path.read_text().splitlines()[1:])


@pytest.mark.usefixtures("each_paint")
async def test_quit_stops_the_source_and_closes_the_recording(tmp_path):
    path = tmp_path / "rec.jsonl"
    app = live_app(tmp_path, recorder=Recorder(path, {"source": "tegrastats"}))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 5, "five live samples")
        await pilot.press("m", "q")
    assert app.source.stop_calls >= 1
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert sum(1 for obj in lines if obj["type"] == "sample") == 5
    assert lines[-1]["type"] == "marker"


# ------------------------------------------------------------------------ view: theme, zoom, focus


@pytest.mark.usefixtures("each_paint")
async def test_theme_key_cycles_the_built_in_themes(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = [app.theme]
        for _ in range(4):
            await pilot.press("t")
            seen.append(app.theme)
    assert seen == ["jroof-dark", "jroof-light", "jroof-high-contrast", "jroof-mono", "jroof-dark"]


async def test_plots_are_drawn_again_whoever_changes_the_theme(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        panes = ("cpu", "gpu", "power")
        await wait_until(pilot, lambda: all(pane in app._painter.plot_drawn for pane in panes), "the plots")
        drawn = dict(app._painter.plot_drawn)
        app.theme = "jroof-light"  # not through the key: a command, a test, a config reload
        await wait_until(pilot, lambda: all(app._painter.plot_drawn[pane] != drawn[pane] for pane in panes),
                         "every plot drawn again in the new theme")


@pytest.mark.usefixtures("each_paint")
async def test_zoom_key_cycles_windows(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = [app.window_s]
        for _ in range(5):
            await pilot.press("z")
            seen.append(app.window_s)
        assert app.query_one("#cpu").border_subtitle == "avg load % · 2 min"
    assert seen == [120.0, 600.0, 3600.0, None, 30.0, 120.0]


@pytest.mark.usefixtures("each_paint")
async def test_focus_key_shows_one_pane_at_a_time(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        await pilot.press("f")
        await pilot.pause()
        assert app.focused_pane == "cpu"
        assert app.query_one("#cpu").region.height > 30
        assert app.query_one("#gpu").region.area == 0
        order = ("gpu", "memory", "power", "temps", "engines", "processes", "roofline", "events", None)
        for expected in order:
            await pilot.press("f")
            assert app.focused_pane == expected
        await pilot.pause()
        assert app.query_one("#gpu").region.area > 0


@pytest.mark.usefixtures("each_paint")
async def test_help_lists_every_binding_with_its_id(tmp_path):
    app = live_app(tmp_path, config={"keymap": {"mark-phase": "x"}})
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        ids = ("mark-phase", "name-phase", "end-phase", "pause", "seek-back", "record", "zoom", "quit")
        for binding_id in ids:
            assert binding_id in text
        assert "  x  " in text  # the remapped key is what help shows
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_help_scrolls_at_80x24_and_says_where_the_ids_are(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        dialog = app.screen.query_one("#help-dialog")
        text = str(app.screen.query_one("#help-text").render())
        assert dialog.region.bottom <= 24 and dialog.region.right <= 80
        assert all(len(line) <= dialog.scrollable_content_region.width for line in text.splitlines())
        assert "(replay) Back 10 s" in text and "seek-back" not in text
        assert "Binding ids: widen the terminal or see config.example.yaml." in text
        assert "Follow the growing file (again: stop)" in text
        assert text.count("Next colour theme") == 1
        assert dialog.max_scroll_y > 0
        await pilot.press("end")
        assert dialog.scroll_y == dialog.max_scroll_y  # the last rows can be reached


@pytest.mark.usefixtures("each_paint")
async def test_80x24_replay_footer_shows_seek_and_fits(tmp_path):
    from textual.widgets import Footer

    app = replay_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await park_replay(pilot, app)  # inside a phase: "e end" is shown too
        shown = {b.binding.id for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"seek-back", "seek-forward", "speed-up", "end-phase", "precision", "focus", "help",
                "quit"} <= shown
        assert "theme" not in shown and "name-phase" not in shown  # still keys, in help
        footer = app.screen.query_one(Footer)
        assert max(child.region.right for child in footer.query("*")) <= 80
        await pilot.press("t")  # out of the footer, still a key
        assert app.theme == "jroof-light"
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert "theme" in {b.binding.id for b in app.screen.active_bindings.values() if b.binding.show}


async def test_keymap_remaps_a_binding(tmp_path):
    app = live_app(tmp_path, config={"keymap": {"mark-phase": "x"}})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 5, "samples")
        await pilot.press("m")
        assert app.history.current_phase is None
        await pilot.press("x")
        assert app.history.current_phase == "phase 1"


@pytest.mark.usefixtures("each_paint")
async def test_resize_from_large_to_80x24_collapses_and_back(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await park_replay(pilot, app)
        main = app.screen
        assert not main.has_class("-compact")
        assert app.query_one("#cpu").plot.size.area > 0
        for size in ((160, 50), (120, 40), (100, 30), (90, 28), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
        app.redraw_now()
        await pilot.pause()
        assert main.has_class("-compact")
        roofline = app.query_one("#roofline")  # one line of the same facts, its plot hidden
        assert roofline.region.height == 1 and roofline.readout.plain.startswith("ROOF")
        cpu = app.query_one("#cpu", CpuPane)
        assert cpu.readout.plain.startswith("CPU")
        assert len(cpu.readout.lines) == 1
        for pane in ("#cpu", "#memory", "#temps", "#gpu", "#power", "#engines"):
            assert app.query_one(pane).region.height >= 1, pane
            assert app.query_one(pane).region.bottom <= 23, pane  # above the footer
        header = app.query_one("#header").plain
        assert len(header) <= 78 and "00:01:00/00:01:12" in header
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        app.redraw_now()
        assert not main.has_class("-compact")
        assert len(cpu.readout.lines) == 6


@pytest.mark.usefixtures("each_paint")
async def test_80x24_shows_rails_in_mw_energy_a_trend_plot_and_events(tmp_path):
    app = replay_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await park_replay(pilot, app)
        power = app.query_one("#power", PowerPane).readout.plain.splitlines()
        # The whole file (the ledger is read from the file) and the phase at the playhead, which
        # the file never ends: as far as the playhead (to the file's end it is 378 J).
        assert power[0].startswith("PWR  21.39 W VDD_IN  energy 866 J  phase 113 J  ")
        assert "VDD_IN 21389 mW  VDD_CPU_GPU_CV 9416 mW  VDD_SOC 5934 mW" in power[1]
        assert all(len(line) <= 78 for line in power)
        trends = app.query_one("#trends")
        assert trends.region.height >= 6 and trends.plot.size.area > 0
        events = app.query_one("#events", EventsPane)
        assert events.region.height >= 4 and events.region.bottom <= 23
        assert events.readout.plain.splitlines()[-1].endswith("seek to 60.0 s")
        assert len(events.readout.lines) == events.size.height  # as many events as rows
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert trends.region.area == 0  # the wide layout has the panes' own plots


async def test_a_board_without_rails_gets_no_empty_power_plot(tmp_path):
    samples = live_samples(3)
    for sample in samples:
        sample.rails = {}
    app = live_app(tmp_path, records=samples)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 3, "samples")
        app.redraw_now()
        await pilot.pause()
        power = app.query_one("#power", PowerPane)
        assert power.readout.plain == "no power rails reported"
        assert power.plot.region.area == 0
        assert app.query_one("#gpu").plot.region.area > 0


async def test_a_host_without_gpu_emc_or_sensors_gets_no_empty_plots(tmp_path):
    samples = live_samples(3)
    for sample in samples:
        sample.gpu, sample.temps_c = None, {}
    app = live_app(tmp_path, records=samples)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 3, "samples")
        app.redraw_now()
        await pilot.pause()
        for pane in ("#gpu", "#memory", "#temps"):
            assert app.query_one(pane).plot.region.area == 0, pane
        assert app.query_one("#cpu").plot.region.area > 0
        assert app.query_one("#power").plot.region.area > 0


async def test_hints_of_a_replayed_recording_say_they_were_recorded(tmp_path):
    path = tmp_path / "rec.jsonl"
    lines = FIXTURE.read_text().splitlines()
    header = json.loads(lines[0])
    header["hints"] = ["No temperature sensors are visible to psutil on this machine"]
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    source = ReplaySource(path, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.notes, "the hint")
        assert app.notes == ["recorded: No temperature sensors are visible to psutil on this machine"]


# -------------------------------------------------------------------------------------- safety


async def test_hints_and_board_text_are_shown_literally(tmp_path):
    samples = live_samples(2)
    samples[-1].rails = {"[b]VDD_X": Rail(1000.0)}
    app = live_app(tmp_path, records=samples, info={"hints": ["run as [bold]root[/] \x1b[31m"],
                                                    "model": "[i]board"})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 2, "samples")
        app.redraw_now()
        assert "[i]board" in app.query_one("#header").plain
        assert "[b]VDD_X" in app.query_one("#power").readout.plain
        events = app.query_one("#events").readout.plain
        assert "run as [bold]root[/] \ufffd[31m" in events
        assert any("[bold]root" in str(n.message) for n in app._notifications)


async def test_why_this_source_was_chosen_is_shown_in_the_ui(tmp_path):
    app = live_app(tmp_path, records=live_samples(1), notices=[HOST_HINT])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 1, "a sample")
        app.redraw_now()
        assert "--source demo" in " ".join(app.query_one("#events").readout.plain.split())
        # the toast is short (the panes stay visible) and points to Events, where all of it is
        assert [str(n.message) for n in app._notifications] == [short_notice(HOST_HINT)]
        assert len(short_notice(HOST_HINT)) <= NOTICE_CHARS < len(HOST_HINT)


async def test_source_failure_is_reported_and_the_data_stays(tmp_path):
    app = live_app(tmp_path, fail="tegrastats exited")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "ENDED" in app.query_one("#header").plain, "the source ended")
        assert len(app.history) == 5
        assert any("tegrastats exited" in str(n.message) for n in app._notifications)


async def test_broken_user_themes_give_a_notice_and_a_fallback(tmp_path):
    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "broken.yaml").write_text("name: [unclosed\n")
    (themes / "badcolour.yaml").write_text("name: badcolour\nprimary: notacolour\n")
    (themes / "mine.yaml").write_text("name: mine\nprimary: '#ff8800'\nvariables:\n  plot-1: '#00ff00'\n")
    app = JroofApp(ScriptedSource(live_samples()), make_config(theme="badcolour"), user_themes=themes)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "jroof-dark"
        messages = " ".join(str(n.message) for n in app._notifications)
        assert "broken.yaml" in messages and "badcolour.yaml" in messages
        assert "mine" in app._theme_cycle
        app.theme = "mine"
        await pilot.pause()
        assert app.theme_variables["plot-1"] == "#00ff00"
        assert app.theme_variables["level-crit"]  # our variables are defaulted for a partial theme


# ------------------------------------------------------------------------------ panes, directly


def _view(sample: Sample, **kwargs) -> View:
    history = History(10)
    history.append(sample)
    return View(history=history, thresholds=Thresholds(), tz=timezone.utc, window_s=120.0, **kwargs)


def test_temperatures_show_off_and_fixed_placeholders():
    sample = Sample(t_mono=0.0, temps_c={"PMIC": 100.0, "GPU": None, "CPU": 88.0, "tj": 60.0})
    view = _view(sample, info=SourceInfo("tegrastats", trips_c={"tj": 99.0}))
    text = "\n".join("".join(t for t, _ in line) for line in TempPane(id="t").lines(view, 60))
    assert "PMIC 100 fixed" in text
    assert "GPU off" in text
    assert "tj 60.0°C  headroom 39.0 to trip 99°C" in text
    styles = {t.strip(): s for line in TempPane(id="t").lines(view, 60) for t, s in line}
    assert styles["100 fixed"] == "fixed"
    assert styles["88.0"] == "crit"  # no trip for CPU: the configured 85 °C level
    assert styles["60.0"] == "ok"


def test_cpu_pane_copes_with_fourteen_cores_and_offline_ones():
    cores = [CpuCore(float(i * 7), 972) for i in range(14)]
    cores[2] = None
    view = _view(Sample(t_mono=0.0, cpus=cores))
    pane = CpuPane(id="c")
    lines = pane.lines(view, 60)
    assert len(lines) == 7  # two columns
    text = "\n".join("".join(t for t, _ in line) for line in lines)
    assert " 2 off" in text and "13 " in text
    assert pane.title(view) == "CPU · 14 cores · 1 off · load %, MHz"  # no room for MHz on each core
    compact = "".join(t for t, _ in pane.compact_lines(view, 80)[0])
    assert compact.count("off") == 1


def test_power_pane_labels_the_total_and_its_source():
    rails = {"VDD_GPU_SOC": Rail(3000.0), "VDD_CPU_CV": Rail(1000.0), "NC": Rail(0.0)}
    view = _view(Sample(t_mono=0.0, rails=rails))
    text = "\n".join("".join(t for t, _ in line) for line in PowerPane(id="p").lines(view, 60))
    assert "VDD_GPU_SOC   3000 mW" in text  # every rail by name, in instantaneous mW
    assert "total         4000 mW\n  = sum(VDD_GPU_SOC+VDD_CPU_CV)" in text
    assert "energy —  phase —" in text  # no ledger in this view: nothing integrated yet


def test_a_gpu_only_host_shows_rail_energy_and_no_made_up_total():
    pipeline = Pipeline(history_s=10.0, interval_s=1.0)
    for t, mw in ((0.0, 100_000.0), (1.0, 700_000.0), (2.0, 700_000.0)):
        pipeline.ingest(Sample(t_mono=t, rails={"NVML_GPU": Rail(mw)}))
    view = View(history=pipeline.history, thresholds=Thresholds(), tz=timezone.utc, window_s=120.0,
                whole=pipeline.ledger.whole)
    pane = PowerPane(id="p")
    text = "\n".join("".join(t for t, _ in line) for line in pane.lines(view, 60))
    assert "NVML_GPU 700000 mW" in text and "mW  total" not in text
    assert "total input power: not measured here" in text
    assert "energy NVML_GPU 1.10 kJ" in text  # (100+700)/2 + (700+700)/2 W over 1 s each = 1100 J
    compact = "\n".join("".join(t for t, _ in line) for line in pane.compact_lines(view, 80))
    assert "no total input power" in compact and "NVML_GPU 700000 mW" in compact
    assert pane.has_plot_data(view)


def test_a_long_sum_source_wraps_between_rail_names():
    rails = {name: Rail(1000.0) for name in ("VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0", "VDDQ_VDD2_1V8AO")}
    view = _view(Sample(t_mono=0.0, rails=rails))
    lines = ["".join(t for t, _ in line) for line in PowerPane(id="p").lines(view, 36)]
    assert all(len(line) <= 36 for line in lines)
    source = "".join(line.strip() for line in lines if line.startswith("  "))
    assert source == "= sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0+VDDQ_VDD2_1V8AO)"


def test_clocks_missing_without_root_say_so_and_leave_the_legend():
    sample = Sample(t_mono=0.0, gpu=Gpu(load_pct=40.0), emc=Clocked(load_pct=5.0, mhz=None))
    view = _view(sample)
    gpu = "\n".join("".join(t for t, _ in line) for line in GpuPane(id="g").lines(view, 40))
    assert "clock — needs root" in gpu and "clock MHz" not in gpu
    memory = "".join(t for t, _ in MemoryPane(id="m").compact_lines(view, 80)[0])
    assert "EMC   5%  clock — needs root" in memory
    with_clock = _view(Sample(t_mono=0.0, gpu=Gpu(load_pct=40.0, gpc_mhz=(612,))))
    compact = "".join(t for t, _ in GpuPane(id="g").compact_lines(with_clock, 80)[0])
    assert compact.startswith("GPU   40% @612 MHz")


def test_compact_cpu_wraps_fourteen_cores_under_the_label():
    view = _view(Sample(t_mono=0.0, cpus=[CpuCore(float(i), 972) for i in range(14)]))
    lines = ["".join(t for t, _ in line) for line in CpuPane(id="c").compact_lines(view, 78)]
    assert len(lines) == 2 and all(len(line) <= 78 for line in lines)
    assert lines[1].startswith(" " * 5) and lines[1].split()[-1] == "13"


def test_events_pane_lists_gaps_and_errors():
    history = History(10)
    history.append(Sample(t_mono=0.0, t_wall=0.0))
    history.add_event(Event("gap", "", 5.0, 5.0, gap_s=3.0))
    history.add_event(Event("source_error", "tegrastats: exit 1", 9.0, 9.0))
    view = View(history=history, thresholds=Thresholds(), tz=timezone.utc, window_s=60)
    text = "\n".join("".join(t for t, _ in line) for line in EventsPane(id="e").lines(view, 60))
    assert "00:00:05 gap no data for 3.0 s" in text
    assert "00:00:09 source_error tegrastats: exit 1" in text


def test_events_pane_shows_the_newest_entry_even_when_it_is_taller_than_the_pane():
    """A restart's detail can hold a whole traceback: its first rows show, cut with an ellipsis,
    rather than nothing (the pane keeps 8 rows when not mounted)."""
    history = History(10)
    history.append(Sample(t_mono=0.0, t_wall=0.0))
    history.add_event(Event("source_restart", "tegrastats exited with status 1: " + "Traceback line " * 60,
                            4.0, 4.0))
    view = View(history=history, thresholds=Thresholds(), tz=timezone.utc, window_s=60)
    text = ["".join(t for t, _ in line) for line in EventsPane(id="e").lines(view, 40)]
    assert len(text) == 8 and text[0].startswith("00:00:04 source_restart")
    assert text[-1].endswith("…") and all(len(line) <= 40 for line in text)


def test_events_pane_builds_only_the_rows_that_fit_and_only_when_the_log_moved():
    history = History(10)
    history.append(Sample(t_mono=0.0, t_wall=0.0))
    for i in range(500):
        history.add_event(Event("note", f"event {i}", float(i), float(i)))
    view = View(history=history, thresholds=Thresholds(), tz=timezone.utc, window_s=60)
    pane = EventsPane(id="e")  # not mounted: 8 rows
    lines = pane.lines(view, 60)
    assert ["".join(t for t, _ in line) for line in lines][-1].endswith("event 499")
    assert len(lines) == 8
    history.append(Sample(t_mono=1.0, t_wall=1.0))
    again = View(history=history, thresholds=Thresholds(), tz=timezone.utc, window_s=60)
    assert pane.lines(again, 60) is lines  # a sample alone changes nothing in the log
    history.add_event(Event("note", "event 500", 500.0, 500.0))
    assert "".join(t for t, _ in pane.lines(again, 60)[-1]).endswith("event 500")


def test_events_pane_shows_whole_notes_or_none():
    history = History(10)
    history.append(Sample(t_mono=0.0, t_wall=0.0))
    for i in range(7):
        history.add_event(Event("note", f"event {i}", float(i), float(i)))
    long_note = "No temperature sensors are visible to psutil on this machine, so nothing."
    view = View(history=history, thresholds=Thresholds(), tz=timezone.utc, window_s=60,
                notes=["short", long_note])
    text = ["".join(t for t, _ in line) for line in EventsPane(id="e").lines(view, 50)]
    assert len(text) == 8 and text[0] == "note short"  # the long note (2 rows) has no room
    assert not any(line.startswith("     ") for line in text)


def test_temperatures_are_classified_once_per_view(monkeypatch):
    import jtop_roof.tui.panes.temps as panes

    calls = []
    real = panes.classify_temp
    monkeypatch.setattr(panes, "classify_temp", lambda *a: calls.append(a) or real(*a))
    view = _view(Sample(t_mono=0.0, temps_c={"tj": 50.0, "cpu": 48.0, "PMIC": 100.0}))
    pane = TempPane(id="t")
    pane.lines(view, 60)
    pane.compact_lines(view, 60)
    pane.series(view)
    pane.has_plot_data(view)
    assert len(calls) == 3


def test_plot_lines_break_at_missing_readings_and_holes_in_time():
    import numpy as np

    from jtop_roof.tui.widgets.timeplot import _max_step, _segments

    xs = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 10.0, 11.0, 12.0])
    ys = np.array([1.0, 1.0, np.nan, 1.0, 1.0, 1.0, 1.0, 1.0])
    runs = [seg[0].tolist() for seg in _segments(xs, ys, _max_step(xs))]
    assert runs == [[0.0, 1.0], [3.0, 4.0], [10.0, 11.0, 12.0]]
    ys[:] = np.nan  # nothing to join; and a lone reading is a run of one point
    assert _segments(xs, ys, _max_step(xs)) == []
    ys[5] = 2.0
    assert [(x.tolist(), y.tolist()) for x, y in _segments(xs, ys, _max_step(xs))] == [([10.0], [2.0])]


def test_phase_labels_are_numbered_with_a_legend_when_a_name_has_no_room():
    """Names that fit before the next boundary are drawn whole; when one does not, every phase
    is numbered on the plot and named in the legend (ends are not labelled)."""
    from jtop_roof.analysis.history import PhaseMark
    from jtop_roof.tui.widgets.timeplot import _phase_labels

    roomy = [PhaseMark(0.0, "phase_start", "warmup"), PhaseMark(10.0, "phase_start", "run")]
    assert _phase_labels(roomy, t_to=20.0, columns_per_s=1.0) == ([(-20.0, "warmup"), (-10.0, "run")], None)
    marks = [PhaseMark(0.0, "phase_start", "warmup-long-name"), PhaseMark(5.0, "phase_start", "b"),
             PhaseMark(5.5, "phase_start", "crowded"), PhaseMark(9.0, "phase_end", None)]
    labels, legend = _phase_labels(marks, t_to=20.0, columns_per_s=1.0, width=80)
    assert labels == [(-20.0, "1"), (-15.0, "2"), (-14.5, "3")]
    assert legend == "phases: 1 warmup-long-name  2 b  3 crowded"


async def test_recording_a_replay_keeps_time_order_across_seeks(tmp_path):
    path = tmp_path / "rec.jsonl"
    app = JroofApp(paused_replay(), make_config(), recorder=Recorder(path, {"source": "replay"}),
                   user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        await pilot.press("left")  # the backfill sends the last 120 s again
        await wait_until(pilot, lambda: app.history.last_t_mono == last_sample_before(POSITION_S - 10),
                         "backfill after the seek")
    written = [json.loads(line) for line in path.read_text().splitlines()]
    monos = [obj["mono"] for obj in written if obj["type"] == "sample"]
    assert monos == sorted(set(monos))
    assert not [obj for obj in written if obj.get("kind") == "seek"]  # the viewer's, not the board's
    assert monos[-1] == last_sample_before(POSITION_S)


async def test_history_is_sized_for_the_stream_interval(tmp_path):
    app = replay_app(tmp_path)  # the header says 100 ms, but the fixture kept every 4th sample
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        assert app.history.interval_s == 0.444  # the samples' own spacing (their lower median)
        assert app.history.capacity == math.ceil(86400 / 0.444) + 1


async def test_markers_from_scripts_are_recorded_with_their_origin(tmp_path):
    import threading

    path = tmp_path / "rec.jsonl"
    app = live_app(tmp_path, recorder=Recorder(path, {"source": "tegrastats"}))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) == 5, "samples")
        thread = threading.Thread(target=app.request_marker, args=("phase_start", "bench [x]"))
        thread.start()
        thread.join()
        await wait_until(pilot, lambda: app.history.current_phase == "bench [x]", "the script's phase")
        app.request_marker("phase_end", None)
        await wait_until(pilot, lambda: app.history.current_phase is None, "the script's end")
    assert [(m["kind"], m["name"], m["origin"]) for m in markers_in(path)] == [
        ("phase_start", "bench [x]", "script"), ("phase_end", None, "script")]


def test_window_labels():
    from jtop_roof.tui.panes.base import window_label

    assert [window_label(w) for w in (30, 120, 600, 3600, None)] == ["30 s", "2 min", "10 min", "1 h", "all"]


def test_key_steps_hold_at_their_ends_and_cycles_come_round():
    from jtop_roof.tui.keys import SPEEDS, ZOOMS, next_focus, next_in_cycle, next_speed, next_zoom

    assert next_speed(SPEEDS[-1], +1) == SPEEDS[-1] and next_speed(SPEEDS[0], -1) == SPEEDS[0]
    assert next_speed(3.0, +1) == 4.0 and next_speed(3.0, -1) == 2.0  # off the steps: the next one
    assert next_zoom(None) == ZOOMS[0] and next_zoom(ZOOMS[-2]) is None and next_zoom(45.0) == 120.0
    assert next_in_cycle(("a", "b"), "b") == "a" and next_in_cycle(("a", "b"), "x") == "a"
    assert next_focus(("a", "b"), None) == "a" and next_focus(("a", "b"), "b") is None


async def test_the_monitor_screen_paints_what_textuals_own_update_paints(tmp_path, monkeypatch):
    """``MonitorScreen`` renders a partial update from the changed lines only; the
    terminal ends up with the cells (characters and colours) Textual's own partial update paints,
    frame after frame (steps, a phase mark, a zoom, a theme). Only cursor moves that paint nothing
    may differ."""
    from textual._compositor import Compositor

    from jtop_roof.tui.fastpaint import LineCompositor, MonitorScreen

    frames: list[tuple[dict[tuple[int, int], tuple[str, str]], dict[tuple[int, int], tuple[str, str]]]] = []
    ours = LineCompositor.render_partial_update

    def both(self: LineCompositor) -> object:
        regions = set(self._dirty_regions)
        update = ours(self)
        self._dirty_regions.update(regions)
        stock = Compositor.render_partial_update(self)
        frames.append((_painted(update, app.console), _painted(stock, app.console)))
        return update

    monkeypatch.setattr(LineCompositor, "render_partial_update", both)
    app = replay_app(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        assert isinstance(app.screen, MonitorScreen)
        await park_replay(pilot, app, 30.0)
        for keys in (["full_stop"], ["full_stop"], ["m"], ["full_stop"], ["z"], ["t"], ["full_stop"]):
            await pilot.press(*keys)
            app.redraw_now()
            await pilot.pause(0.05)  # a key may repaint the whole screen instead: no partial frame
        await wait_until(pilot, lambda: len(frames) >= 5, "partial frames")
    assert len([cells for cells, _ in frames if 0 < len(cells) < 160 * 50]) >= 5  # partial ones
    assert all(cells == stock for cells, stock in frames)


def _painted(update: object, console: object) -> dict[tuple[int, int], tuple[str, str]]:
    """The cells a partial update writes: (row, column) -> (character, its SGR parameters)."""
    import re

    if update is None:
        return {}
    cells: dict[tuple[int, int], tuple[str, str]] = {}
    row = col = 0
    sgr = ""
    text = update.render_segments(console)  # type: ignore[attr-defined]
    for match in re.finditer(r"\x1b\[(\d+);(\d+)H|\x1b\[([\d;]*)m|(\n)|([^\x1b\n])", text):
        if match[1]:
            row, col = int(match[1]) - 1, int(match[2]) - 1
        elif match[3] is not None:
            sgr = match[3]
        elif match[4]:
            row, col = row + 1, 0
        else:
            cells[row, col] = (match[5], sgr)
            col += 1
    return cells


def test_memory_pane_shows_disk_and_network_throughput():
    from jtop_roof.model.records import IoRates
    from jtop_roof.tui.panes.memory import MemoryPane

    view = _view(Sample(t_mono=0.0, io=IoRates(12.25, 0.5, None, 0.04)))
    text = "\n".join("".join(t for t, _ in line) for line in MemoryPane(id="m").lines(view, 60))
    assert "disk r/w 12.2/0.5 MB/s   net rx/tx —/0.0 MB/s" in text
    assert "disk" not in "".join(t for line in MemoryPane(id="m").lines(_view(Sample(t_mono=0.0)), 60)
                                 for t, _ in line)

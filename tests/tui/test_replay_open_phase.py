"""A replay's open phase ends at the play head: the whole file's ledger runs a phase the file
never ends to the file's end, but the monitor shows what has played of it (energy, time and
throttle), not joules the play head has not reached."""

from __future__ import annotations

import pytest
from tui_support import FIXTURE, make_config, park_replay, wait_until

from jtop_roof.analysis.pipeline import build_ledger
from jtop_roof.analysis.replay_ledger import SOUGHT_INTO_NOTE
from jtop_roof.formats.logfile import iter_records
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp
from jtop_roof.tui.view import build_view

#: "resnet50-fp16" starts at 54.5 s of the fixture and is never ended (the file ends at 73 s).
PHASE = "resnet50-fp16"


def shown(app: JroofApp):
    return build_view(app.pipeline, thresholds=app.config.thresholds, tz=app._tz, window_s=app.window_s,
                      wall_axis=app.replay, notes=[], precision=app.precision)


def played_until(head: float):
    """The fixture's ledger as far as ``head``: what a live run would have shown then."""
    records = [r for r in iter_records(FIXTURE.read_text().splitlines(), tz="UTC")
               if r.t_mono is None or r.t_mono <= head]
    return build_ledger(records, 0.1).phase_at(head)


async def test_an_open_phase_shows_its_energy_up_to_the_play_head(tmp_path):
    source = ReplaySource(FIXTURE, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        head = app.history.last_t_mono
        view = shown(app)
    whole_file = app.pipeline.ledger.phase_at(head)
    assert whole_file is not None and whole_file.is_open and whole_file.last_mono > head + 5  # to the end
    expected = played_until(head)
    phase = view.phase
    assert phase is not None and (phase.name, phase.is_open) == (PHASE, True)
    assert (phase.first_mono, phase.last_mono) == (expected.first_mono, head)
    assert phase.energy_j == pytest.approx(expected.energy_j)
    assert phase.energy_j < whole_file.energy_j


async def test_a_seek_past_the_phases_start_shows_no_energy_rather_than_the_files(tmp_path):
    """Only 2 s before the seek's target are played again: what the phase drew before them is not
    known here, so its energy is None, and its time ends at the head."""
    source = ReplaySource(FIXTURE, tz="UTC", hold_at_end=True, backfill_s=2.0)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.request_seek(65.0, relative=False)
        await wait_until(pilot, lambda: (app.history.last_t_mono or 0) > 64.0, "the seek's samples")
        await wait_until(pilot, lambda: not app.pipeline.still_reading, "the whole file's ledger")
        head = app.history.last_t_mono
        phase = shown(app).phase
    assert phase is not None and phase.name == PHASE and phase.last_mono == head
    assert phase.energy_j is None and view_throttle_bounded(app, phase)
    assert phase.energy_note == SOUGHT_INTO_NOTE
    assert (phase.mean_gpu_mhz, phase.energy_total_source) == (None, None)


def view_throttle_bounded(app: JroofApp, phase) -> bool:
    """The phase's throttled seconds are counted over its edges to the head, never past it."""
    return app.pipeline.throttled_s(phase) <= phase.last_mono - phase.first_mono


async def test_between_phases_the_last_ended_phases_point_stays_on_the_roof(tmp_path):
    """Work reported in "resnet50-int8" (39-49 s) keeps its point on the roof at 52 s, after its
    end and before the next phase, labelled as ended; while another phase is shown, that phase's
    own point (none: "idle" reported no work) is what the roof shows."""
    source = ReplaySource(FIXTURE, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER"),
                   user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app, 46.0)
        app.pipeline.work(1_500, 1_500 * 8.2e9, 1_500 * 25e6, "int8", None, app.history.last_t_mono)
        await wait_until(pilot, lambda: shown(app).point is not None, "the work on the roof")
        in_phase = shown(app)
        await park_replay(pilot, app, 52.0)
        between = shown(app)
        await park_replay(pilot, app, 20.0)
        idle = shown(app)
    assert in_phase.point is not None and in_phase.point[0] == "resnet50-int8"
    assert between.phase is None and between.point is not None
    label, placement = between.point
    assert label == "resnet50-int8 (ended)" and placement.achieved_flops_per_s
    assert placement.achieved_flops_per_s <= in_phase.point[1].achieved_flops_per_s  # the whole phase's time
    assert idle.phase is not None and idle.phase.name == "idle" and idle.point is None


def test_live_the_point_of_a_benchmark_that_ended_stays_until_the_next_phase_starts():
    from jtop_roof.analysis.pipeline import Pipeline
    from jtop_roof.model.records import Gpu, Marker, Rail, Sample, Work
    from jtop_roof.runtime.config import Config

    def sample(t):
        return Sample(t_mono=t, rails={"VDD_IN": Rail(5000.0)}, gpu=Gpu(load_pct=99.0, gpc_mhz=(1020,)))

    pipeline = Pipeline(history_s=60, interval_s=1.0, device_id="orin-nano-8gb-super",
                        power_mode="MAXN_SUPER")

    def point():
        view = build_view(pipeline, thresholds=Config().thresholds, tz=None, window_s=None, wall_axis=False,
                          notes=[], precision=None)
        return None if view.point is None else view.point[0]

    for record in (sample(0.0), Marker("phase_start", "bench", None, 0.5), sample(1.0),
                   Work(100, 1e12, 1e10, "int8", None, 1.5), sample(2.0)):
        pipeline.ingest(record)
    assert point() == "bench"
    for record in (Marker("phase_end", None, None, 2.5), sample(3.0),
                   Marker("phase_start", "idle", None, 3.5), sample(4.0),
                   Marker("phase_end", None, None, 4.5), sample(5.0)):
        pipeline.ingest(record)
    assert point() == "bench (ended)"  # after the idle phase too: it reported no work
    pipeline.ingest(Marker("phase_start", "next", None, 5.5))
    pipeline.ingest(sample(6.0))
    assert point() is None  # the phase now shown reported nothing yet

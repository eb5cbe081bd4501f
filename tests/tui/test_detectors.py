"""Throttle and DVFS detection on real sequences (the H200 power cap, Orin Nano Super runs) and on
synthetic ones; the same events live, headless and on replay."""

from __future__ import annotations

import json

import pytest
from paths import REPO
from tui_support import make_config

from jtop_roof.analysis.detector_spec import DetectorConfig
from jtop_roof.analysis.detectors import ThrottleDetector, ThrottleSettings, cause_source
from jtop_roof.formats.logfile import iter_records
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.codec import sample_to_json
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Clocked, CpuCore, Event, Gpu, Rail, Sample
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.headless import run_headless
from jtop_roof.runtime.runtime import build_pipeline
from jtop_roof.sources.replay import ReplaySource

ROOT = REPO
H200 = ROOT / "tests" / "data" / "h200_host_recording.jsonl"
DEMO_LOG = ROOT / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"
SHARED_LOGS = ROOT.parent / "shared" / "tegrastats" / "logs"
SEVEN_W = SHARED_LOGS / "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_7w_run3.log"
needs_shared = pytest.mark.skipif(not SEVEN_W.is_file(), reason="shared/ reference logs not beside the repo")


def events_of(lines, config: Config | None = None, header: dict | None = None) -> list[Event]:
    """The detectors' events over a whole log, as report and replay make them."""
    if header is None and lines and lines[0].startswith("{"):
        header = json.loads(lines[0])  # a recording: its header describes the board
    info = SourceInfo.from_mapping(header or {}, source="replay")
    config = config or Config()
    pipeline = build_pipeline(config, info, interval_s=1.0, history_s=60)
    found: list[Event] = []
    for record in iter_records(lines, tz="UTC"):
        found += pipeline.ingest(record)
    return found + pipeline.finish()


def gpu_samples(clocks_loads, step=0.5, cap_reasons=None, temps=None, power_mw=None,
                mode="MAXN_SUPER") -> list[str]:
    """A synthetic recording (header + samples) of an Orin Nano 8GB Super in ``mode``."""
    header = {"type": "header", "app": "jroof-tui", "schema": 1, "interval_ms": step * 1000,
              "model": "Jetson Orin Nano 8GB Super", "power_mode": mode,
              "thermal_trips": {"tj": [{"type": "passive", "temp_c": 99.0}]}}
    lines = [json.dumps(header)]
    for i, (mhz, load) in enumerate(clocks_loads):
        sample = Sample(t_wall=1000.0 + i * step, t_mono=i * step, gpu=Gpu(load, (mhz,)),
                        emc=Clocked(10.0, 3199), cpus=[CpuCore(5.0, 1728)],
                        temps_c={"tj": 50.0 if temps is None else temps[i]},
                        rails={"VDD_IN": Rail(_power(power_mw, i))},
                        throttle_reasons=cap_reasons)
        obj = {"type": "sample", "t": sample.t_wall, "mono": sample.t_mono}
        body = sample_to_json(sample)
        del body["t"]
        obj.update(body)
        lines.append(json.dumps(obj))
    return lines


def _power(power_mw, i: int) -> float:
    """5 W, one power for every sample, or one per sample (a list)."""
    if power_mw is None:
        return 5000.0
    return float(power_mw[i]) if isinstance(power_mw, list) else float(power_mw)


# ----------------------------------------------------------------------------- real sequences


def test_the_h200_power_cap_is_a_throttle_with_its_nvml_reason():
    lines = H200.read_text().splitlines()
    events = events_of(lines, header=json.loads(lines[0]))
    (event,) = events
    assert (event.kind, event.unit) == ("throttle", "gpu")
    assert event.detail.startswith("NVML: SW power cap") and event.reasons == ("power",)
    # The GEMM phase: the first busy sample below 95 % of 1980 MHz with SwPowerCap, to the last.
    samples = [r for r in iter_records(lines, tz="UTC") if isinstance(r, Sample)]
    held = [s for s in samples if s.gpu.load_pct >= 50 and s.gpu.mhz < 0.95 * 1980]
    assert event.start_mono == held[0].t_mono and event.t_mono == held[-1].t_mono
    assert all("SwPowerCap" in s.throttle_reasons for s in held)


def test_the_demo_log_at_1005_to_1011_mhz_of_1020_is_no_event():
    lines = DEMO_LOG.read_text().splitlines()
    assert events_of(lines, make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")) == []


@needs_shared
def test_a_7w_run_held_at_its_caps_is_no_event_when_the_mode_is_known():
    lines = SEVEN_W.read_text().splitlines()
    assert events_of(lines, make_config(device="orin-nano-8gb-super", power_mode="7W")) == []


@needs_shared
def test_the_same_run_without_its_mode_is_a_mode_cap_never_a_throttle():
    lines = SEVEN_W.read_text().splitlines()
    events = events_of(lines, make_config(device="orin-nano-8gb-super"))
    assert events and {e.kind for e in events} == {"mode_cap"}
    assert all("--power-mode" in e.detail and e.reasons == ("mode_unknown",) for e in events)
    assert any(e.unit == "gpu" and "GPU 4" in e.detail for e in events)  # 40x MHz of 1020


# -------------------------------------------------------------------------- synthetic sequences


def test_idle_and_a_short_governor_ramp_are_no_event():
    idle = [(306, 0.0)] * 20
    ramp = [(306, 0.0)] * 5 + [(153, 99.0), (612, 99.0)] + [(1020, 99.0)] * 10  # 1 s below the cap
    assert events_of(gpu_samples(idle)) == [] and events_of(gpu_samples(ramp)) == []


def test_a_busy_clock_below_the_known_modes_cap_is_a_throttle_from_its_first_to_its_last_sample():
    held = [(1020, 99.0)] * 4 + [(700, 99.0)] * 8 + [(1020, 99.0)] * 6
    (event,) = events_of(gpu_samples(held))
    assert (event.kind, event.unit) == ("throttle", "gpu")
    assert (event.start_mono, event.t_mono) == (2.0, 5.5)
    assert event.detail == "clock below the mode's cap while busy; cause not seen (GPU 700 MHz of 1020)"
    assert event.reasons == ("below_cap",)


def test_the_reason_names_thermal_and_power_evidence():
    held = [(700, 99.0)] * 10
    hot = events_of(gpu_samples(held, temps=[96.0] * 10))
    assert "thermal: tj within 5 °C of its 99 °C trip" in hot[0].detail and hot[0].reasons == ("thermal",)
    free_then_held = [(408, 99.0)] * 4 + [(300, 99.0)] * 10  # 408 MHz: the 7W cap
    budget = events_of(gpu_samples(free_then_held, power_mw=[5_000.0] * 4 + [6_900.0] * 10, mode="7W"))
    assert budget[0].detail == ("power: input at the 7W budget (6.9 of 7 W) while GPU ran at its cap "
                                "elsewhere at up to 5.0 W (GPU 300 MHz of 408)")
    assert budget[0].reasons == ("power",)


def test_power_at_the_budget_is_no_cause_where_the_clock_ran_free_at_that_power():
    """The same log drew the budget's power with the GPU at its cap: the budget did not hold it."""
    free_then_held = [(408, 99.0)] * 4 + [(300, 99.0)] * 10
    (event,) = events_of(gpu_samples(free_then_held, power_mw=6_900.0, mode="7W"))
    assert event.kind == "throttle" and "power" not in event.detail
    assert event.detail == "clock below the mode's cap while busy; cause not seen (GPU 300 MHz of 408)"
    assert cause_source(event) is None


def test_power_at_the_budget_is_no_cause_where_the_clock_never_ran_free():
    """Held from the first sample at the budget: nothing shows the clock could run higher there; the
    mode itself is in doubt (``mode_check``), not a power throttle."""
    (event,) = events_of(gpu_samples([(300, 99.0)] * 10, power_mw=6_900.0, mode="7W"))
    assert event.kind == "mode_check" and "budget" not in event.detail and event.reasons == ("mode_unknown",)


def test_thresholds_come_from_the_config():
    held = [(1020, 99.0)] * 4 + [(700, 99.0)] * 8 + [(1020, 99.0)] * 6
    strict = Config(detectors=DetectorConfig.of(ThrottleSettings(min_duration_s=10.0)))
    assert events_of(gpu_samples(held), strict) == []


def test_an_open_event_is_closed_at_the_end_and_reported_while_active():
    detector = ThrottleDetector()
    lines = gpu_samples([(1020, 99.0)] * 2 + [(700, 99.0)] * 10)  # the cap reached: the mode holds
    pipeline = build_pipeline(Config(), SourceInfo.from_mapping(json.loads(lines[0])), interval_s=0.5,
                              history_s=60)
    pipeline.detectors = [detector]
    records = list(iter_records(lines, tz="UTC"))
    for record in records:
        assert pipeline.ingest(record) == []
    assert [e.kind for e in pipeline.active_events()] == ["throttle"]
    (closed,) = pipeline.finish()
    assert closed.t_mono == 5.5 and pipeline.active_events() == []


# ------------------------------------------------------------------------ live and replay agree


def test_recorded_events_are_recomputed_on_replay_not_shown_twice(tmp_path):
    """Headless record of the H200 run writes the event when it closes; replaying that recording
    gives the same event once (the recorded one is dropped, the detectors make it again)."""
    copy = tmp_path / "copy.jsonl"
    header = json.loads(H200.read_text().splitlines()[0])
    source = ReplaySource(H200, speed=64, tz="UTC")
    assert run_headless(source, Recorder(copy, {k: v for k, v in header.items() if k != "type"}), None,
                        install_signal_handlers=False) == 0
    written = [json.loads(line) for line in copy.read_text().splitlines()]
    recorded = [w for w in written if w.get("type") == "event" and w.get("unit")]
    assert [(w["kind"], w["unit"]) for w in recorded] == [("throttle", "gpu")]
    replayed = events_of(copy.read_text().splitlines(), header=written[0])
    live = events_of(H200.read_text().splitlines(), header=header)
    assert [(e.kind, e.start_mono, e.t_mono, e.detail) for e in replayed] == [
        (e.kind, e.start_mono, e.t_mono, e.detail) for e in live]
    assert recorded[0]["start_mono"] == live[0].start_mono and recorded[0]["mono"] == live[0].t_mono


async def test_the_monitor_flags_a_throttle_where_the_user_looks(tmp_path):
    """Replaying the H200 run, parked inside the power-capped GEMM: the header says THROTTLED with
    the reason, the roofline pane too, and once the GEMM is past, the Events pane lists it."""
    from tui_support import wait_until

    from jtop_roof.tui.app import JroofApp

    source = ReplaySource(H200, tz="UTC", hold_at_end=True, speed=64)
    source.pause()
    app = JroofApp(source, make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        source.seek(40.0 - 24.167, relative=False)  # stream 40 s: the backfill plays all before it
        await wait_until(pilot, lambda: (app.history.last_t_mono or 0) >= 39.0, "the capped GEMM")
        app.redraw_now()
        header = app.query_one("#header").plain
        assert "THROTTLED gpu: NVML: SW power cap" in header
        assert "THROTTLED gpu: NVML: SW power cap" in app.query_one("#roofline").readout.plain
        source.resume()
        await wait_until(pilot, lambda: "ENDED" in app.query_one("#header").plain
                         or (app.history.last_t_mono or 0) >= 60.0, "the end of the run")
        app.redraw_now()
        assert "THROTTLED" not in app.query_one("#header").plain
        events = app.query_one("#events").readout.plain
        # when it started, and for how long, with its reason (wrapped under its text)
        assert "19:46:15 throttle gpu 15 s: NVML: SW power cap" in " ".join(events.split())


def test_an_over_current_counter_that_rises_is_the_reason(tmp_path):
    """Orin's hwmon ``soctherm_oc`` counters (research/jetson_specs.md): read by the board's files,
    recorded with the sample, and a rise during a held clock names it."""
    from jtop_roof.sources.sysfs import BoardFiles

    hwmon = tmp_path / "sys" / "class" / "hwmon" / "hwmon3"
    hwmon.mkdir(parents=True)
    (hwmon / "name").write_text("soctherm_oc\n")
    for n, count in ((1, 0), (2, 4), (3, 0)):
        (hwmon / f"oc{n}_event_cnt").write_text(f"{count}\n")
    sample = Sample(t_mono=0.0, gpu=Gpu(99.0, (700,)))
    BoardFiles(tmp_path).fill(sample)
    assert sample.oc_events == {"oc1": 0, "oc2": 4, "oc3": 0}
    lines = gpu_samples([(700, 99.0)] * 10, mode="MAXN_SUPER")
    records = [json.loads(line) for line in lines]
    for i, record in enumerate(records[1:]):
        record["oc_event_cnt"] = {"oc1": 0, "oc2": 4 if i < 5 else 6, "oc3": 0}
    (event,) = events_of([json.dumps(r) for r in records])
    assert event.detail.startswith("over-current: oc2 (average over-current) count rose")
    assert event.reasons == ("over_current",)

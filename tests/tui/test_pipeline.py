"""One pipeline under every consumer: the TUI, headless ``record`` and ``report`` agree; recordings
with several sessions read back on one timeline everywhere; the detector seam; the replay sink."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_support import jroof as run_cli
from paths import REPO
from tui_support import FIXTURE, make_config, park_replay, paused_replay, wait_until

from jtop_roof.analysis.pipeline import Pipeline, RecordingSink, StreamContext
from jtop_roof.formats.logfile import ReadStats, iter_records
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Clocked, Event, Gpu, Marker, Rail, Sample
from jtop_roof.model.timeline import parse_tz
from jtop_roof.outputs.compare import load_item
from jtop_roof.outputs.report import build_report, report_file
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.headless import run_headless
from jtop_roof.runtime.runtime import Runtime, pump
from jtop_roof.runtime.session import SessionError, make_source
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp

UTC = parse_tz("UTC")
ROOT = REPO


def phase_figures(phases) -> list[tuple]:
    return [(p.name, p.samples, p.gaps, p.duration_s, p.energy_j, dict(p.rails_j), p.peak_mw) for p in phases]


def report_of(path: Path) -> dict:
    def lines():
        with open(path, encoding="utf-8") as f:
            yield from f
    return build_report(lines, source={"file": str(path)}, tz=UTC, interval_s=None)


def test_a_plain_logs_interval_is_learnt_from_its_first_lines_only(tmp_path):
    """report reads a file twice: first for its interval, then through the pipeline. A plain log's
    interval is settled by its first timed lines, so the first pass stops there; it is the interval
    a whole read gives, and the report is the same."""
    body = "RAM 2000/7607MB CPU [1%@1728,2%@1728] EMC_FREQ 0%@3199 GR3D_FREQ 0%@[1018] VDD_IN 5000mW/5000mW"
    log = [f"10-26-2025 00:{i // 120:02d}:{i // 2 % 60:02d} {body}" for i in range(2000)]
    log[1500:1500] = ["10-26-2025 00:30:00 " + body]  # a late gap: it does not move the interval
    path = tmp_path / "half-second.log"
    path.write_text("\n".join(log) + "\n", encoding="utf-8")
    consumed: list[int] = []

    def lines():
        consumed.append(0)
        with open(path, encoding="utf-8") as f:
            for line in f:
                consumed[-1] += 1
                yield line

    stats = ReadStats()
    report = build_report(lines, source={"file": str(path)}, tz=UTC, interval_s=None, stats=stats)
    whole = ReadStats()
    for _ in iter_records(path.read_text(encoding="utf-8").splitlines(), tz=UTC, stats=whole):
        pass
    assert stats.interval_s == whole.interval_s == 0.5
    assert consumed[0] < 100 and consumed[1] == len(log)
    assert report["whole"]["samples"] == len(log) and report["whole"]["gaps"] == 1


# ----------------------------------------------------------------- the same numbers everywhere


async def test_tui_headless_and_report_give_the_same_phase_energies(tmp_path):
    # report: the reader through a pipeline
    report = report_of(FIXTURE)
    # headless record of a replay at full speed, its ledger made record by record as they play
    source = ReplaySource(FIXTURE, speed=64, tz="UTC")
    runtime = Runtime(source, Config(), whole_file=False)
    runtime.apply(runtime.describe())
    headless = runtime.pipeline
    status = run_headless(source, Recorder(tmp_path / "copy.jsonl", {"source": "replay"}), None,
                          install_signal_handlers=False, runtime=runtime)
    assert status == 0
    # the TUI: its pipeline's ledger, read from the whole file (a paused replay, parked: a playing
    # one could move on while the test reads it)
    app = JroofApp(paused_replay(), make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        tui = app.pipeline.ledger
    assert [p["name"] for p in report["phases"]] == ["idle", "resnet50-int8", "resnet50-fp16"]
    assert phase_figures(tui.phases()) == phase_figures(headless.ledger.phases())
    for phase, from_report in zip(tui.phases(), report["phases"], strict=True):
        assert from_report["energy_j"]["total"] == phase.energy_j
        assert from_report["energy_j"]["rails"] == dict(sorted(phase.rails_j.items()))
        assert from_report["samples"] == phase.samples and from_report["gaps"] == phase.gaps
    assert report["whole"]["energy_j"]["total"] == tui.whole.energy_j == headless.ledger.whole.energy_j
    assert report["whole"]["gaps"] == 1  # the fixture's recorded gap: counted, not bridged


# ------------------------------------------------------------------ recordings with two sessions


def two_sessions(path: Path, *, second_wall: float) -> None:
    """Session A: samples at mono 100..104, wall 1000..1004, phase 'a' from 101. Session B (after
    a reboot): the monotonic clock restarted at 5, wall from ``second_wall``."""
    def session(walls_monos, markers=()):
        with Recorder(path, {"source": "tegrastats", "interval_ms": 1000}) as recorder:
            for wall, mono in walls_monos:
                recorder.write(Sample(t_wall=wall, t_mono=mono, rails={"VDD_IN": Rail(1000.0)}))
                for marker in markers:
                    if marker.t_mono == mono:
                        recorder.write(marker)
    session([(1000.0 + i, 100.0 + i) for i in range(5)], [Marker("phase_start", "a", 1001.0, 101.0)])
    session([(second_wall + i, 5.0 + i) for i in range(5)])


@pytest.mark.parametrize(("second_wall", "step"), [(1010.0, 6.0), (900.0, 1.0)])
def test_a_second_session_comes_after_the_first_with_a_gap_everywhere(tmp_path, second_wall, step):
    """B's first sample: A's last + max(B's first wall - A's last wall, one interval), even when
    B's monotonic clock (and, second case, its wall clock) restarted lower."""
    path = tmp_path / "two.jsonl"
    two_sessions(path, second_wall=second_wall)
    expected = [100.0 + i for i in range(5)] + [104.0 + step + i for i in range(5)]
    with open(path, encoding="utf-8") as f:
        read = list(iter_records(f, tz=UTC))
    assert [r.t_mono for r in read if isinstance(r, Sample)] == expected
    gaps = [r for r in read if isinstance(r, Event) and r.kind == "gap"]
    assert [(g.t_mono, g.gap_s) for g in gaps] == [(104.0 + step, step)]
    # replay: the same times, the same gap, in order
    played = list(ReplaySource(path, tz="UTC", speed=64).records())
    assert [r.t_mono for r in played if isinstance(r, Sample)] == expected
    assert [(r.kind, r.t_mono) for r in played if isinstance(r, Event)] == [("gap", 104.0 + step)]
    # the ledger and report: the gap is counted, never integrated
    report = report_of(path)
    whole = report["whole"]
    assert (whole["samples"], whole["gaps"], whole["duration_s"]) == (10, 1, 8.0 + step)
    assert whole["energy_j"]["total"] == pytest.approx(8.0)  # 4 steps of 1 J in each session
    (phase,) = report["phases"]
    assert (phase["name"], phase["samples"], phase["gaps"], phase["open"]) == ("a", 8, 1, True)
    # from its marker, at 101 (made just after the sample there: that sample is the run's alone)
    assert phase["start_s"] == 1.0 and phase["start"] == "1970-01-01T00:16:41.000+00:00"
    # parse prints the gap between the sessions
    out = run_cli("parse", str(path), "--tz", "UTC")
    assert out.returncode == 0
    events = [json.loads(line) for line in out.stdout.splitlines() if '"type":"event"' in line]
    assert [(e["kind"], e["mono"]) for e in events] == [("gap", 104.0 + step)]


@pytest.mark.parametrize("header", [
    {"type": "header", "app": "jroof-tui", "schema": 2},
    {"type": "header", "app": "other-tool", "schema": 1},
])
def test_a_newer_schema_or_another_programs_header_is_refused_by_every_command(tmp_path, header):
    path = tmp_path / "refused.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(
        record_to_json(Sample(t_wall=1.0, t_mono=1.0))) + "\n")
    for command in (["parse", str(path)], ["report", str(path)], ["record", str(tmp_path / "o.jsonl"),
                                                                   "--replay", str(path)]):
        out = run_cli(*command)
        assert out.returncode == 2, command
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
        assert "schema 2" in out.stderr or "not a jroof recording" in out.stderr
    with pytest.raises(SessionError):
        make_source(make_config(), "replay", str(path))


# ----------------------------------------------------------------------------------- report


def test_report_formats_and_errors(tmp_path):
    out = run_cli("report", str(FIXTURE), "--format", "json", "--tz", "UTC")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"source", "device", "power_mode", "device_note", "device_source",
                           "power_mode_source", "device_candidates", "throttle_detection",
                           "throttle_detection_note", "power_mode_check", "power_mode_note", "events",
                           "whole", "phases", "assumptions"}
    span_keys = {"name", "start", "end", "start_s", "end_s", "duration_s", "observed_s", "samples", "gaps",
                 "open", "energy_j", "power_w", "ceilings", "loads", "throttled_s", "workload", "roofline",
                 "energy_source", "energy_total_source", "energy_note", "power_period_s", "processes"}
    assert all(set(span) == span_keys for span in [report["whole"], *report["phases"]])
    fp16 = report["phases"][2]
    assert fp16["duration_s"] == fp16["end_s"] - fp16["start_s"]
    assert fp16["power_w"]["mean"] == pytest.approx(fp16["energy_j"]["total"] / fp16["duration_s"])
    assert fp16["start"].endswith("+00:00")
    md = run_cli("report", str(FIXTURE), "--tz", "UTC")
    assert "| resnet50-fp16 |" in md.stdout and md.returncode == 0
    csv_path = tmp_path / "r.csv"
    assert run_cli("report", str(FIXTURE), "--format", "csv", "--out", str(csv_path)).returncode == 0
    rows = csv_path.read_text().splitlines()
    assert rows[0].startswith("name,start,end,start_s,end_s,duration_s,observed_s,samples,gaps,open,"
                              "throttled_s,energy_j,energy_total_source")
    assert rows[0].endswith(",interval_s,interval_source,device,device_source,power_mode,power_mode_source,"
                            "throttle_detection")
    assert len(rows) == 1 + 1 + 3
    missing = run_cli("report", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_report_uses_a_recording_cut_short_and_says_so(tmp_path):
    lines = FIXTURE.read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[-1][:50])  # a kill -9 mid-line
    out = run_cli("report", str(path), "--format", "json")
    assert out.returncode == 0
    assert "last line is cut short" in out.stderr
    assert json.loads(out.stdout)["whole"]["samples"] == report_of(FIXTURE)["whole"]["samples"]


# -------------------------------------------------------------------- seams: detectors, sink


class BusyGpu:
    """A detector test double: one event when GPU load first reaches 50 %."""

    def __init__(self) -> None:
        self.contexts: list[StreamContext] = []
        self.fired = False

    def observe(self, record, context):
        self.contexts.append(context)
        if isinstance(record, Sample) and record.gpu and (record.gpu.load_pct or 0) >= 50 and not self.fired:
            self.fired = True
            return [Event("note", "GPU busy", record.t_wall, record.t_mono)]
        return []


def test_detectors_see_every_record_and_their_events_are_kept_and_recorded(tmp_path):
    detector = BusyGpu()
    path = tmp_path / "rec.jsonl"
    pipeline = Pipeline(history_s=600, interval_s=0.444, detectors=[detector],
                        sink=RecordingSink(Recorder(path, {"source": "replay"})))
    with open(FIXTURE, encoding="utf-8") as f:
        records = list(iter_records(f, tz=UTC))
    made: list[Event] = []
    pump(records, pipeline.sink, lambda record: made.extend(pipeline.ingest(record)))
    pipeline.sink.stop()
    assert [e.detail for e in made] == ["GPU busy"]
    assert len(detector.contexts) == len(records)  # every record, in order; not its own events
    assert any(e.detail == "GPU busy" for e in pipeline.history.events)
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert [w["detail"] for w in written if w["type"] == "event" and w["kind"] == "note"] == ["GPU busy"]


def test_recording_a_replay_writes_each_marker_and_gap_once_after_seeks_back(tmp_path):
    path = tmp_path / "copy.jsonl"
    sink = RecordingSink(Recorder(path, {"source": "replay"}), forward_only=True)
    with open(FIXTURE, encoding="utf-8") as f:
        records = list(iter_records(f, tz=UTC))
    half = len(records) // 2
    for record in [*records[:half], Event("seek", "seek to 0 s", None, 0.0), *records,
                   Event("seek", "seek to 0 s", None, 0.0), *records]:
        sink.write(record)
    sink.write(Marker("phase_start", "mine", None, 1.0, "key"), from_stream=False)  # made here: kept
    sink.stop()
    written = [json.loads(line) for line in path.read_text().splitlines()][1:]
    source_records = [json.loads(json.dumps(record_to_json(r))) for r in records]
    assert written[:-1] == source_records
    assert written[-1]["name"] == "mine"


async def test_a_recording_that_fails_mid_tui_is_reported_and_the_data_before_kept(tmp_path, monkeypatch):
    from jtop_roof.formats import recorder as recorder_module

    path = tmp_path / "full.jsonl"
    recorder = Recorder(path, {"source": "replay"})
    writes = {"n": 0}
    real_write = os.write

    def disk_fills(fd, data):
        writes["n"] += 1
        if writes["n"] > 20:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(recorder_module.os, "write", disk_fills)
    app = JroofApp(ReplaySource(FIXTURE, tz="UTC", speed=64, hold_at_end=True), make_config(),
                   recorder=recorder, user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: any("No space left" in str(n.message) for n in app._notifications),
                         "the failure notice", rounds=2000)
        await wait_until(pilot, lambda: len(app.history) > 100, "the replay going on", rounds=2000)
        assert app.sink.path is None and "● REC" not in app.query_one("#header").plain
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + 20 and all(json.loads(line) for line in lines)  # header + 20 records


# ------------------------------------------------------------ throttled time: one query, a union


def held_together(path: Path) -> None:
    """A 7W Orin Nano Super recording: busy from 5 to 24 s, the GPU (cap 408 MHz) and the EMC (cap
    2133 MHz) both held down from 10 to 20 s, inside a phase ``bench``."""
    lines = [json_line({"type": "header", "app": "jroof-tui", "schema": 1, "version": "test",
                        "source": "tegrastats", "interval_ms": 1000, "start_wall": 1_000_000.0,
                        "start_mono": 100.0, "device": "orin-nano-8gb-super", "power_mode": "7W"})]
    for i in range(30):
        busy, held = 5 <= i < 25, 10 <= i <= 20
        wall, mono = 1_000_000.0 + i, 100.0 + i
        if i == 5:
            start = Marker("phase_start", "bench", wall, mono - 0.1, "script")
            lines.append(json_line(record_to_json(start)))
        sample = Sample(t_wall=wall, t_mono=mono, raw=f"line {i}",
                        gpu=Gpu(99.0 if busy else 0.0, (300 if held else 408,)),
                        emc=Clocked(90.0 if busy else 5.0, 1600 if held else 2133),
                        rails={"VDD_IN": Rail(5000.0)})
        lines.append(json_line(record_to_json(sample)))
    path.write_text("".join(lines))


async def test_a_gpu_and_an_emc_throttle_over_the_same_10_s_are_10_s_everywhere(tmp_path):
    path = tmp_path / "held.jsonl"
    held_together(path)
    report = report_file(str(path), tz=UTC, interval_s=None, config=Config())
    assert sorted(e["unit"] for e in report["events"] if e["kind"] == "throttle") == ["emc", "gpu"]
    assert report["whole"]["throttled_s"] == pytest.approx(10.0)  # not 20: the union over units
    (bench,) = report["phases"]
    assert bench["throttled_s"] == pytest.approx(10.0)
    assert load_item(str(path), tz=UTC)["throttled_s"] == pytest.approx(10.0)  # compare's row
    app = JroofApp(ReplaySource(str(path), speed=64, tz="UTC", hold_at_end=True), make_config(),
                   user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.history.last_t_mono == 129.0, "the end of the file")
        app.redraw_now()
        await pilot.pause()
        events = app.query_one("#events").readout.plain
        assert "throttled 10 s of the run, 10 s of bench" in " ".join(events.split())

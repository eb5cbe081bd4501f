"""Numbers at the edges: valid but extreme work (its quotients overflow or underflow), integers past a
float's range or Python's 4,300-digit limit in trtexec logs, report JSON, recording headers and
``parse --interval``, and wrong numbers that came without a word: two recorders of one file, clocks
that run back or jump, a marker far in the future, a plain log past the caps, a truncation note
without its times. Each case differs from the examples first reported."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from cli_support import jroof
from paths import REPO
from tui_support import make_config, wait_until

from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.analysis.verdict import place
from jtop_roof.formats.logfile import ReadStats, iter_parse_lines, iter_records
from jtop_roof.formats.recorder import Recorder
from jtop_roof.formats.trtexec import TrtexecError, read_trtexec
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Event, Marker, Sample
from jtop_roof.roofline.board import resolve_board
from jtop_roof.roofline.devices import load_devices
from jtop_roof.sources.fileindex import FileIndex
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp

DATA = REPO / "tests" / "data"
H200_RUN = DATA / "h200_phases.jsonl"
TRT7 = DATA / "trtexec" / "trt7_resnet50_int8_b4_excerpt.log"
HEADER = {"type": "header", "schema": 1, "app": "jroof-tui", "version": "0.1.0", "source": "tegrastats",
          "start_wall": 1.9e9, "start_mono": 7.0, "tz": "UTC", "interval_ms": 500}
BODY = ("RAM 3100/7607MB (lfb 12x4MB) SWAP 0/3803MB (cached 0MB) CPU [7%@1510,4%@1510] EMC_FREQ 3%@2133 "
        "GR3D_FREQ 9%@[624] cpu@51.2C VDD_IN 6120mW/6120mW")


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity (not JSON)."""
    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def finite_numbers(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(finite_numbers(v) for v in value)
    return True


def sample_line(t: float, mono: float, mw: float = 5400.0) -> str:
    rails = {"VDD_IN": {"now": mw, "avg": mw}}
    return json.dumps({"type": "sample", "t": t, "mono": mono, "rails_mw": rails})


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def stamp(unix: float) -> str:
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%m-%d-%Y %H:%M:%S")


# ------------------------------------------------------------------------- valid but extreme work


def extreme_work_recording(path: Path, flops: float, bytes_: float) -> Path:
    """The H200 run with every work report of its GEMM phase replaced by one extreme report."""
    lines = []
    for line in H200_RUN.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "work" and obj["flops"]:
            obj.update(iterations=3, flops=flops, bytes=bytes_)
        lines.append(json.dumps(obj))
    return write(path, lines)


EXTREMES = [(6.5e23, 2.5e-311), (3e-305, 8.5e23)]  # the quotients overflow, underflow


@pytest.mark.parametrize(("flops", "bytes_"), EXTREMES)
def test_extreme_work_gives_finite_rates_or_none(flops, bytes_):
    span = SpanStats("bulk", 1.0, 2.5, None, None, 1.0, 16, 0, None, {}, None, {}, False,
                     mean_gpu_mhz=1700.0, mean_emc_mhz=3201.0, iterations=3, flops=flops, bytes=bytes_,
                     precision="bf16")
    placement = place(span, resolve_board(SourceInfo("replay"), load_devices(), device_id="h200"))
    # Far above the H200's roof: impossible work, its efficiencies null (test_hostile_numbers_out.py).
    assert placement.verdict == "impossible"
    numbers = (placement.achieved_flops_per_s, placement.achieved_bytes_per_s,
               placement.intensity_flop_per_byte, placement.efficiency_current, placement.efficiency_max)
    assert all(n is None or math.isfinite(n) for n in numbers)


@pytest.mark.parametrize(("flops", "bytes_"), EXTREMES)
def test_report_and_plot_of_extreme_work(tmp_path, flops, bytes_):
    recording = extreme_work_recording(tmp_path / "extreme.jsonl", flops, bytes_)
    out = jroof("report", str(recording), "--format", "json")
    assert out.returncode == 0, out.stderr
    report = strict_json(out.stdout)
    assert finite_numbers(report)
    gemm = next(p for p in report["phases"] if p["name"] == "gemm-bf16")
    assert gemm["roofline"]["verdict"] == "impossible"
    pytest.importorskip("matplotlib")  # the plot extra; CI installs the test extras only
    figure = tmp_path / "extreme.png"
    out = jroof("plot", str(recording), "--out", str(figure))
    assert out.returncode == 0, out.stderr
    assert figure.stat().st_size > 0


async def test_the_roofline_pane_draws_extreme_work(tmp_path):
    recording = extreme_work_recording(tmp_path / "extreme.jsonl", 8.0e23, 4.0e-309)
    source = ReplaySource(recording, tz="UTC", hold_at_end=True)
    source.pause()
    app = JroofApp(source, make_config(device="h200"), user_themes=tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        app.request_seek(50.0 - 25.4, relative=False)  # inside the GEMM phase
        await wait_until(pilot, lambda: (app.history.last_t_mono or 0) > 49.0, "the GEMM phase")
        pane = app.query_one("#roofline")

        def placed() -> bool:  # the whole file's ledger (its phases) is read in a thread of its own
            app.redraw_now()
            return "gemm-bf16: " in pane.readout.plain

        await wait_until(pilot, placed, "the GEMM phase placed", rounds=500)
        assert not pane.query_one("RoofPlot").has_class("-empty")


# --------------------------------------------------------------------------------- huge integers


@pytest.mark.parametrize(("old", "new"), [
    ("has 1792 queries", "has " + "6" * 330 + " queries"),
    ("completed 116 queries", "completed " + "2" * 4500 + " queries"),
    ("Batch: 4", "Batch: " + "9" * 5000),
])
def test_trtexec_counts_past_a_float_are_refused(tmp_path, old, new):
    log = tmp_path / "sweep.log"
    log.write_text(TRT7.read_text().replace(old, new))
    with pytest.raises(TrtexecError, match="not a count") as refused:
        read_trtexec(log, "UTC")
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200


def test_a_kept_trtexec_log_past_a_float_is_left_out_with_a_word(tmp_path):
    recording = tmp_path / "kept.jsonl"
    recording.write_text(H200_RUN.read_text())
    Path(f"{recording}.trtexec.log").write_text(
        TRT7.read_text().replace("has 1792 queries", "has " + "4" * 400 + " queries"))
    out = jroof("report", str(recording))
    assert out.returncode == 0 and "not a count; reported without it" in out.stderr
    out = jroof("report", str(H200_RUN), "--trtexec", f"{recording}.trtexec.log")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a count" in out.stderr


def test_compare_refuses_a_report_json_with_a_huge_integer(tmp_path):
    report = json.loads(jroof("report", str(H200_RUN), "--format", "json").stdout)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(report))
    report["whole"]["gaps"] = 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report).replace('"gaps": 0', '"gaps": ' + "3" * 360, 1))
    out = jroof("compare", str(good), str(bad))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "an integer of 360 digits" in out.stderr


def test_a_header_with_huge_integers_is_read_without_them(tmp_path):
    info = SourceInfo.from_mapping({"source": "tegrastats", "interval_ms": 10**500, "power_limit_w": 10**331,
                                    "max_clocks": {"emc_mhz": 10**320, "gpu_mhz": 1300},
                                    "thermal_trips": {"gpu-thermal": 10**350, "cpu-thermal": 97}})
    assert info.interval_ms is None and info.power_limit_w is None
    assert info.max_clocks == {"gpu_mhz": 1300.0} and info.trips_c == {"cpu": 97.0}
    header = json.dumps(HEADER).replace('"interval_ms": 500', '"interval_ms": ' + "8" * 420)
    header = header[:-1] + ', "thermal_trips": {"soc0": ' + "7" * 380 + "}}"
    recording = write(tmp_path / "huge.jsonl", [header] + [sample_line(1.9e9 + i, 7.0 + i) for i in range(6)])
    for command in ("report", "parse"):
        out = jroof(command, str(recording))
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr


def test_parse_refuses_an_interval_of_hundreds_of_digits(tmp_path):
    log = write(tmp_path / "plain.log", [BODY] * 3)
    out = jroof("parse", str(log), "--interval", "5" * 420)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--interval" in out.stderr
    assert len(out.stderr) < 300 and out.stdout == ""


# ------------------------------------------------------------------------- wrong numbers, no word


def test_a_recording_being_recorded_is_refused_to_a_second_recorder(tmp_path):
    path = tmp_path / "shared.jsonl"
    first = Recorder(path, {"source": "demo"}, fsync_every_s=0)
    with pytest.raises(OSError, match="is being recorded by another jroof"):
        Recorder(path, {"source": "demo"}, fsync_every_s=0)
    first.close()
    Recorder(path, {"source": "demo"}, fsync_every_s=0).close()  # free again once closed


def test_a_second_record_of_one_file_exits_2(tmp_path):
    path = tmp_path / "twice.jsonl"
    first = subprocess.Popen([sys.executable, "-m", "jtop_roof", "record", str(path), "--source", "demo",
                              "--duration", "30"], cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (path.exists() and '"type":"sample"' in path.read_text()):
            time.sleep(0.1)
        out = jroof("record", str(path), "--source", "demo", "--duration", "1")
        assert out.returncode == 2 and out.stderr.count("\n") == 1
        assert f"{path}: is being recorded by another jroof" in out.stderr
    finally:
        first.terminate()
        first.wait(30)


def test_a_clock_that_runs_back_splits_the_session_with_a_gap(tmp_path):
    lines = [json.dumps(HEADER)]
    lines += [sample_line(1.9e9 + i, 300.0 + i) for i in range(12)]
    lines += [sample_line(1.9e9 + 12 + i, 240.0 + i) for i in range(12)]  # 71 s back from the last
    recording = write(tmp_path / "back.jsonl", lines)
    records = list(iter_records(recording.read_text().splitlines()))
    samples = [r for r in records if isinstance(r, Sample)]
    assert len(samples) == 24
    monos = [s.t_mono for s in samples]
    assert monos == sorted(monos) and len(set(monos)) == 24
    (gap,) = [r for r in records if isinstance(r, Event) and r.kind == "gap"]
    assert "ran back 71.0 s" in gap.detail
    report = strict_json(jroof("report", str(recording), "--format", "json").stdout)
    assert report["whole"]["samples"] == 24 and report["whole"]["gaps"] == 1
    replay = ReplaySource(recording, tz="UTC")
    assert replay.duration_s == pytest.approx(report["whole"]["duration_s"])
    replay.stop()


def test_a_wall_clock_jump_between_sessions_is_no_time(tmp_path):
    lines = [json.dumps({**HEADER, "start_wall": 2e8})]
    lines += [sample_line(2e8 + i, 40.0 + i) for i in range(8)]  # 1976, a board without RTC
    lines += [json.dumps({**HEADER, "start_wall": 1.95e9})]
    lines += [sample_line(1.95e9 + i, 12.0 + i) for i in range(8)]  # 2031, after NTP
    recording = write(tmp_path / "ntp.jsonl", lines)
    report = strict_json(jroof("report", str(recording), "--format", "json").stdout)
    whole = report["whole"]
    assert whole["samples"] == 16 and whole["duration_s"] < 60
    assert 5.0 < whole["power_w"]["mean"] < 5.5
    gaps = [r for r in iter_records(lines) if isinstance(r, Event) and r.kind == "gap"]
    assert len(gaps) == 1 and "wall clock jumped" in gaps[0].detail


def test_a_plain_log_whose_stamps_jump_decades_is_no_time(tmp_path):
    lines = [f"{stamp(3e7 + i)} {BODY}" for i in range(6)] + [f"{stamp(1.93e9 + i)} {BODY}" for i in range(6)]
    log = write(tmp_path / "ntp.log", lines)
    printed = [json.loads(line) for line in iter_parse_lines(lines, tz="UTC", stats=ReadStats())]
    assert [p.get("kind") for p in printed].count("gap") == 1
    report = strict_json(jroof("report", str(log), "--tz", "UTC", "--format", "json").stdout)
    assert report["whole"]["samples"] == 12 and report["whole"]["duration_s"] < 60
    replay = ReplaySource(log, tz="UTC")
    assert replay.duration_s == pytest.approx(report["whole"]["duration_s"])
    assert sum(1 for i in range(len(replay.index)) if isinstance(replay.index.read(i, set()), Event)) == 1
    replay.stop()


def test_a_marker_far_in_the_future_bounds_the_replay_and_the_report_alike(tmp_path):
    lines = [json.dumps(HEADER)] + [sample_line(1.9e9 + i, 60.0 + i) for i in range(10)]
    lines.append(json.dumps({"type": "marker", "kind": "phase_start", "name": "later", "t": 1.9e9 + 10,
                             "mono": 70.0 + 4.5e8, "origin": "script"}))
    lines += [sample_line(1.9e9 + i, 60.0 + i) for i in range(10, 25)]
    recording = write(tmp_path / "future.jsonl", lines)
    report = strict_json(jroof("report", str(recording), "--format", "json").stdout)
    replay = ReplaySource(recording, tz="UTC")
    assert replay.duration_s < 60
    assert replay.duration_s == pytest.approx(report["whole"]["duration_s"])
    replay.stop()
    markers = [r for r in iter_records(lines) if isinstance(r, Marker)]
    assert markers[0].t_mono is not None and markers[0].t_mono < 100


def test_parse_holds_a_plain_log_to_the_caps_with_a_word(tmp_path):
    short = (f"RAM 1/2MB CPU [{','.join(['2%@900'] * 300)}] " + " ".join(f"t{i}@33C" for i in range(70))
             + " " + " ".join(f"P{i} 9mW/9mW" for i in range(70)))
    long = f"RAM 1/2MB CPU [{','.join(['3%@1100'] * 2600)}] " + " ".join(f"Q{i} 7/7" for i in range(2400))
    log = write(tmp_path / "wide.log", [short, long])
    out = jroof("parse", str(log))
    assert out.returncode == 0
    for row in map(json.loads, out.stdout.splitlines()):
        assert len(row["cpu"]) == 256 and len(row["rails_mw"]) == 64 and len(row["temps_c"]) <= 64
    dropped = (300 - 256) + (70 - 64) * 2 + (2600 - 256) + (2400 - 64)
    assert f"dropped {dropped} entries past 256 cores or 64 rails" in out.stderr


def test_the_truncation_note_has_the_last_records_times(tmp_path):
    log = tmp_path / "followed.log"
    log.write_text("".join(f"{stamp(1.91e9 + i)} {BODY}\n" for i in range(9)))
    index = FileIndex(str(log), tz=timezone.utc, interval_s=None)
    index.index_new_data(final=False)
    log.write_text(f"{stamp(1.91e9 + 20)} {BODY}\n")
    (note,) = list(index.poll())
    index.close()
    assert note.detail == "file truncated"
    assert note.t_wall == 1.91e9 + 8 and note.t_mono == 8.0

"""The board and power mode of a plain log, inferred from its samples, and throttle detection that
is never silently off.

Real logs come from ../shared (skipped where it is absent). Held out: no test had used these logs
for anything the inference reads before this file was written: the AGX Xavier, Jetson Nano (both),
TX2, AGX Orin 64GB and 32GB (Kubism), Xavier NX and Orin Nano lab logs, and the ResNet-18 FP16
MAXN benchlab run; the ResNet-50 benchlab runs are the ones the table was checked against.
"""

from __future__ import annotations

import math
import re
from datetime import timezone
from pathlib import Path

import pytest
from factories import held_at_306
from paths import OUTSIDE
from tui_support import make_config

from jtop_roof.formats.logfile import iter_records, open_text
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import CpuCore, Memory, Sample
from jtop_roof.outputs.report import report_file, to_markdown
from jtop_roof.roofline.board import resolve_board
from jtop_roof.roofline.devices import load_devices
from jtop_roof.roofline.inference import BoardObservation, infer, misfit, observe
from jtop_roof.runtime.runtime import Runtime
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.header import header_line
from jtop_roof.tui.streams import Stream

DB = load_devices()
LOGS = OUTSIDE / "shared" / "tegrastats" / "logs"
needs_shared = pytest.mark.skipif(not LOGS.is_dir(), reason="../shared is absent")
BENCHLAB = "orinnano8gb-super_jp6.2.1_benchlab_"
SEVEN_W = LOGS / f"{BENCHLAB}resnet50_int8_7w_run3.log"
PLAIN = SourceInfo.from_mapping({"source": "replay"})


def observed(path: Path) -> BoardObservation:
    with open_text(path) as stream:
        return observe(iter_records(stream, tz="UTC"))


def report_of(path: Path, **config: str) -> dict:
    return report_file(str(path), tz=timezone.utc, interval_s=None, config=make_config(**config))


def lines_of(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


# ------------------------------------------------------------------------------- real logs


@needs_shared
@pytest.mark.parametrize("path", sorted(LOGS.glob(f"{BENCHLAB}*.log")), ids=lambda p: p.stem[len(BENCHLAB):])
def test_every_orin_nano_super_benchlab_log_infers_its_own_mode(path):
    """The mode is in the file name (the repository's nvpmodel table names them); no flag given."""
    named = {"maxn": "MAXN_SUPER", "15w": "15W", "7w": "7W"}[path.stem.split("_")[-2]]
    report = report_of(path)
    assert (report["power_mode"], report["power_mode_source"]) == (named, "inferred")
    assert report["throttle_detection"] == "full" and named in report["throttle_detection_note"]
    if named == "7W":  # the Orin Nano 8GB and its Super entry have the same 7W: no module is picked
        assert report["device"] is None and report["device_source"] is None
        assert report["device_candidates"] == ["orin-nano-8gb", "orin-nano-8gb-super"]
    else:
        assert (report["device"], report["device_source"]) == ("orin-nano-8gb-super", "inferred")


@needs_shared
@pytest.mark.parametrize(("name", "device", "mode"), [
    ("agxxavier_jp5_moskitootegraparser_1.log", "agx-xavier", "MAXN"),
    ("nano_jp4.6_csc2231_1.log", "nano", "MAXN"),
    ("nano4gb_jp4-ubuntu20-image_nightvisionllie_2.log", "nano", "MAXN"),
    ("tx2_jp4_ssarafftegraparser_1.log", "tx2", "MAXN"),
    ("agxorin_jp6_abdeltegraparser_1.log", "agx-orin-64gb", "MAXN"),
])
def test_held_out_logs_name_the_board_their_sources_say(name, device, mode):
    """SOURCES.md names each board from its repository or its RAM and cores; the mode is the one
    whose caps the clocks reached (MAXN: nothing lower fits the top clocks seen)."""
    inference = infer(observed(LOGS / name), DB.values())
    assert inference.device is not None and inference.device.id == device, inference.note
    assert inference.mode is not None and inference.mode.name == mode


@needs_shared
def test_a_held_out_orin_nano_lab_log_without_gpu_clocks_is_an_orin_nano_8gb():
    """Non-root: no GPU or EMC clock, only 6 cores saturated at 1344 MHz, the Super 25W CPU cap."""
    inference = infer(observed(LOGS / "orinnano8gb_jp6_orinnanolab_1.log"), DB.values())
    assert inference.device is not None and inference.device.id.startswith("orin-nano-8gb")
    assert inference.mode is not None and inference.mode.max_cpu_mhz == 1344


@needs_shared
def test_the_xavier_nx_log_drops_the_orin_nx_boards_its_thermal_zones_rule_out():
    """The Xavier NX burn (non-root, 4 of 6 cores at 1190 MHz) fits a 10 W mode of the Xavier NX and
    of Orin NX modules by RAM, cores, rails and clocks; its zones (AUX, AO, PMIC, thermal) are no
    Orin's. Detection is limited: the log has no GPU or EMC clock."""
    path = LOGS / "xaviernx_jp5_tegraburn_1.log"
    everything = infer(observed(path), DB.values())
    assert everything.device is not None and everything.device.id == "xavier-nx", everything.note
    assert not [d for d in everything.devices if d.startswith("orin")]
    report = report_of(path)
    assert (report["device"], report["device_source"]) == ("xavier-nx", "inferred")
    assert report["device_candidates"] == []
    assert report["throttle_detection"] == "limited"
    assert "no GPU/EMC clock" in report["throttle_detection_note"]


@needs_shared
def test_a_module_missing_from_the_database_is_said_not_forced():
    """Kubism's AGX Orin: 30587 MB with 12 cores; the database's 32 GB module has 8."""
    inference = infer(observed(LOGS / "agxorin32gb_jp5_kubism_1.log"), DB.values())
    assert (inference.device, inference.mode, inference.devices) == (None, None, ())
    assert "12 of 12 CPUs" in inference.note


@needs_shared
def test_the_super_15w_emc_is_not_capped_at_2133():
    """The 15W run's EMC is 3199 in every sample: the mode's roof uses it."""
    seen = observed(LOGS / f"{BENCHLAB}resnet50_int8_15w_run3.log")
    assert seen.max_mhz["emc"] == 3199
    report = report_of(LOGS / f"{BENCHLAB}resnet50_int8_15w_run3.log")
    assert report["whole"]["ceilings"]["emc_mhz"] > 3000


# ------------------------------------------------------- the 7 W throttle, through the runtime


@needs_shared
def test_a_plain_7w_log_without_flags_finds_its_10_s_gpu_throttle(tmp_path):
    lines = lines_of(SEVEN_W)
    busy = next(i for i, line in enumerate(lines) if re.search(r"GR3D_FREQ (9\d|100)%", line))
    path = tmp_path / "7w_held.log"
    path.write_text("\n".join(held_at_306(lines, busy + 30, 91)) + "\n")  # 91 lines, 0.11 s apart
    report = report_of(path)
    assert (report["power_mode"], report["power_mode_source"]) == ("7W", "inferred")
    (event,) = [e for e in report["events"] if e["kind"] == "throttle" and e["unit"] == "gpu"]
    assert 9.5 <= event["duration_s"] <= 10.5 and "306 MHz of 408" in event["reason"]
    assert 9.5 <= report["whole"]["throttled_s"] <= 10.5
    md = to_markdown(report)
    assert "power mode: 7W (inferred)" in md and "Throttle detection: full" in md
    assert "inferred candidates: orin-nano-8gb, orin-nano-8gb-super" in md


@needs_shared
def test_a_replay_infers_the_mode_before_it_plays_and_the_header_says_so():
    runtime = Runtime(ReplaySource(SEVEN_W, tz="UTC"), make_config())
    runtime.apply(runtime.describe())
    board = runtime.pipeline.board
    assert (board.mode_name, board.power_mode_source) == ("7W", "inferred")
    text = "".join(part for part, _ in header_line(200, Stream(runtime)))
    assert "7W inferred" in text and "throttle detection" not in text
    runtime.source.stop()


@needs_shared
def test_a_replay_takes_the_whole_files_board_once_the_ledgers_read_is_done(monkeypatch):
    """The replay plays after its first records were looked at; the whole file is observed by the
    ledger's own read of it (one read for both), and its board taken when that is done."""
    from jtop_roof.runtime import runtime as runtime_module

    monkeypatch.setattr(runtime_module, "FIRST_LOOK", 1)
    runtime = Runtime(ReplaySource(SEVEN_W, tz="UTC"), make_config())
    described = runtime.describe()
    runtime.apply(described)
    assert described.observed is not None and described.observed.samples == 1
    assert described.observed_later is not None
    assert described.observed_later.result(timeout=30) == observed(SEVEN_W)  # the whole file
    board = runtime.pipeline.board
    assert (board.mode_name, board.power_mode_source) == ("7W", "inferred")
    runtime.source.stop()


@needs_shared
def test_a_given_device_gets_its_mode_inferred_and_a_given_mode_is_kept():
    seen = observed(SEVEN_W)
    device_only = resolve_board(PLAIN, DB, device_id="orin-nano-8gb-super", observed=seen)
    assert (device_only.device_source, device_only.mode_name, device_only.power_mode_source) == \
        ("given", "7W", "inferred")
    mode_only = resolve_board(PLAIN, DB, power_mode="7W", observed=seen)
    assert (mode_only.device, mode_only.mode_name, mode_only.power_mode_source) == (None, "7W", "given")
    wrong = resolve_board(PLAIN, DB, power_mode="MAXN_SUPER", observed=seen)  # not a mode of both
    assert wrong.mode is None and wrong.candidates


# --------------------------------------------------------------------------------- attacks


@needs_shared
def test_one_line_is_enough_for_the_7w_mode():
    path = lines_of(SEVEN_W)[0]
    seen = observe(iter_records([path], tz="UTC"))
    assert seen.samples == 1 and seen.saturated == frozenset()
    assert infer(seen, DB.values()).mode.name == "7W"


@needs_shared
def test_a_log_without_rails_still_infers_from_ram_cores_and_clocks():
    lines = [re.sub(r" VDD_\S+ \S+", "", line) for line in lines_of(SEVEN_W)]
    seen = observe(iter_records(lines, tz="UTC"))
    assert seen.rails == frozenset()
    assert infer(seen, DB.values()).mode.name == "7W"


@needs_shared
def test_odd_cpu_counts_and_clocks_above_every_module_fit_nothing():
    line = lines_of(SEVEN_W)[0]
    five = line.replace("CPU [0%@960,0%@960,0%@960,0%@960,off,off]", "CPU [0%@960,0%@960,0%@960,0%@960,off]")
    fast = line.replace("GR3D_FREQ 0%@[407]", "GR3D_FREQ 99%@[2000]")
    assert five != line and fast != line
    for text in (five, fast):
        inference = infer(observe(iter_records([text], tz="UTC")), DB.values())
        assert (inference.device, inference.mode, inference.devices) == (None, None, ())
        board = resolve_board(PLAIN, DB, observed=observe(iter_records([text], tz="UTC")))
        assert board.throttle_detection == "off" and "no module" in (board.problem or "")


def test_why_a_device_cannot_have_made_a_log_is_said_in_its_own_caps():
    """A CPU above every mode's cap is said once of them all; a given mode is said against its own
    caps; a module's own limits (its GPU's maximum) come before its modes'."""
    seen = BoardObservation(samples=10, ram_total_mb=7620, cpu_count=6, cores_online=4,
                            max_mhz={"cpu": 1728.0}, saturated=frozenset({"cpu"}))
    nano = DB["orin-nano-8gb"]
    assert misfit(nano, seen, DB.values()) == "its CPU ran at 1728 MHz, above every mode's cap of that device"
    fifteen = next(mode for mode in nano.power_modes if mode.name == "15W")
    assert misfit(nano, seen, DB.values(), fifteen) == (
        "4 CPUs were online where 15W has 6 and its CPU ran at 1728 MHz, above 15W's cap of 1510")
    fast = BoardObservation(samples=10, ram_total_mb=7620, cpu_count=6, cores_online=6,
                            max_mhz={"gpu": 1018.0})
    assert misfit(nano, fast, DB.values()) == "its GPU ran at 1018 MHz, above that device's maximum of 625"


def test_nothing_seen_infers_nothing_and_detection_is_off_not_silent():
    assert infer(BoardObservation(), DB.values()).note == "no sample to infer the board from"
    board = resolve_board(PLAIN, DB, observed=BoardObservation())
    assert (board.device, board.mode, board.throttle_detection) == (None, None, "off")
    assert board.throttle_detection_note


@pytest.mark.parametrize("total", [math.inf, math.nan, -1.0, 1e300])
def test_a_ram_total_no_module_has_fits_nothing(total):
    sample = Sample(t_mono=0.0, ram=Memory(1.0, total), cpus=[CpuCore(99.0, 960)] * 4 + [None, None])
    seen = observe([sample])
    assert infer(seen, DB.values()).devices == ()


def test_detection_levels_come_from_one_place():
    """Full with a mode (or a dGPU's own reasons), limited with maxima only, off with nothing."""
    full = resolve_board(PLAIN, DB, device_id="orin-nano-8gb-super", power_mode="7W")
    limited = resolve_board(PLAIN, DB, device_id="orin-nano-8gb-super")
    dgpu = resolve_board(PLAIN, DB, device_id="h200")
    sysfs = resolve_board(SourceInfo("replay", max_clocks={"gpu_mhz": 1020.0}), DB)
    off = resolve_board(PLAIN, DB)
    assert [b.throttle_detection for b in (full, limited, dgpu, sysfs, off)] == \
        ["full", "limited", "full", "limited", "off"]
    assert (full.device_source, full.power_mode_source) == ("given", "given")
    assert "mode_cap" in limited.throttle_detection_note and "--device" in off.throttle_detection_note


@needs_shared
@pytest.mark.parametrize("first_look", [1, 20])
def test_the_report_never_depends_on_how_much_of_the_log_was_looked_at_first(monkeypatch, first_look):
    """A plain log's board is inferred from its first records, and the whole log confirms it as it
    plays: read once when they agree (the 7W log's whole fits in the first look), played again
    against the whole's board when they do not. Either way the report is the same."""
    from jtop_roof.outputs.report import run_pipeline
    from jtop_roof.runtime import runtime

    def reported() -> tuple[list[int], dict]:
        reads: list[int] = []

        def records():
            reads.append(1)
            return iter_records(open_text(str(SEVEN_W)), tz=timezone.utc, interval_s=None)

        pipeline, events = run_pipeline(records, 1.0, SourceInfo("replay"), make_config())
        board = pipeline.board
        return reads, {"mode": board.mode_name, "candidates": board.candidates, "events": events,
                       "whole": pipeline.ledger.whole, "detection": board.throttle_detection}

    reads, whole_look = reported()
    assert len(reads) == 1 and whole_look["mode"] == "7W"
    monkeypatch.setattr(runtime, "FIRST_LOOK", first_look)
    reads, short_look = reported()
    assert len(reads) == 2  # the first records alone did not tell 7W: played again
    assert short_look == whole_look


@needs_shared
def test_a_stream_of_mostly_power_readings_is_judged_from_its_first_samples_not_records(monkeypatch):
    """The first look counts samples: where a power stream's readings come 200 to a sample, the
    first 2000 records hold 10 samples, too few to tell the AGX Orin log's board (its 16th sample
    does); the look goes on to its samples, so the stream is read once, not played again."""
    from jtop_roof.model.records import PowerReading
    from jtop_roof.outputs.report import run_pipeline
    from jtop_roof.runtime import runtime

    path = LOGS / "agxorin_jp6_abdeltegraparser_1.log"
    with open_text(path) as stream:
        samples = [record for record in iter_records(stream, tz="UTC") if isinstance(record, Sample)]
    mixed: list[object] = []
    for sample in samples[:20]:  # 200 readings of a board monitor before each of the first samples
        t = sample.t_mono or 0.0
        mixed += [PowerReading(None, t - 1 + i / 200, rails_mw={"VDD_GPU_SOC": 3000.0}, counters_mj={},
                               source="INA3221 hwmon", period_s=0.005) for i in range(200)]
        mixed.append(sample)
    mixed += samples[20:]
    reads: list[int] = []

    def records():
        reads.append(1)
        return iter(mixed)

    pipeline, _ = run_pipeline(records, 1.0, SourceInfo("replay"), make_config())
    assert len(reads) == 1 and pipeline.board.mode_name == "MAXN"
    assert len(list(runtime.first_look(iter(mixed)))) == 20 * 201 + runtime.FIRST_LOOK - 20
    monkeypatch.setattr(runtime, "FIRST_LOOK_RECORDS", 2000)  # held at that many records: played again
    reads.clear()
    again, _ = run_pipeline(records, 1.0, SourceInfo("replay"), make_config())
    assert len(reads) == 2 and again.board == pipeline.board

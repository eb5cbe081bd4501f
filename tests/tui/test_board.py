"""Which device and mode a stream is, the roof at its clocks, and how the monitor and the CLI show it."""

from __future__ import annotations

import json

import pytest
from cli_support import jroof as run_cli
from paths import REPO
from tui_support import make_config, park_replay, paused_replay, replay_app, wait_until

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Clocked, Engine, Gpu, Memory, Sample
from jtop_roof.roofline.board import pick_precision, resolve_board, roof_state
from jtop_roof.roofline.devices import load_devices
from jtop_roof.sources.demo import DemoSource
from jtop_roof.sources.replay import ReplaySource
from jtop_roof.tui.app import JroofApp

ROOT = REPO
DB = load_devices()
DEMO_LOG = ROOT / "jtop_roof" / "sources" / "data" / "demo_orinnano_super.log"
# A real non-root Orin Nano line: no GPU clock (GR3D_FREQ 0%), no EMC_FREQ.
NONROOT = [line for line in (ROOT / "tests" / "data" / "fake_tegrastats_orinnano_nonroot.txt").read_text()
           .splitlines() if line and not line.startswith("#")]


def busy_sample(gpu_mhz=1020, emc_mhz=3199, engines=None) -> Sample:
    return Sample(t_mono=0.0, ram=Memory(1000, 7607), gpu=Gpu(99.0, (gpu_mhz,)),
                  emc=Clocked(40.0, emc_mhz), engines=engines or {})


# ------------------------------------------------------------------------------------ resolution


def test_the_demo_names_its_board_and_mode():
    demo = DemoSource()
    info = demo.describe()
    demo.stop()
    board = resolve_board(info, DB)
    assert board.device is not None and board.device.id == "orin-nano-8gb-super"
    assert board.mode_name == "MAXN_SUPER" and board.problem is None


def test_the_user_says_what_a_plain_log_cannot():
    plain = SourceInfo.from_mapping({"source": "replay", "file": "x.log"})
    unknown = resolve_board(plain, DB)
    assert unknown.device is None and "--device ID" in unknown.problem and "devices:" in unknown.problem
    board = resolve_board(plain, DB, device_id="orin-nano-8gb-super", power_mode="7W")
    assert (board.device.id, board.mode_name) == ("orin-nano-8gb-super", "7W")
    no_mode = resolve_board(plain, DB, device_id="orin-nano-8gb-super")
    assert no_mode.mode is None and "--power-mode" in no_mode.mode_note
    bad_mode = resolve_board(plain, DB, device_id="orin-nano-8gb-super", power_mode="99W")
    assert bad_mode.mode is None and "'99W' is not known" in bad_mode.mode_note
    assert "unknown device" in resolve_board(plain, DB, device_id="nope").problem


def test_a_dgpu_from_nvml_has_no_modes_and_needs_none():
    header = json.loads(ROOT.joinpath("tests/data/h200_host_recording.jsonl").read_text().splitlines()[0])
    board = resolve_board(SourceInfo.from_mapping(header), DB)
    assert board.device.id == "h200" and board.mode is None and board.mode_note is None


def test_an_ambiguous_model_is_said_and_the_ram_size_settles_it():
    info = SourceInfo.from_mapping({"source": "tegrastats", "model": "NVIDIA Jetson AGX Orin"})
    ambiguous = resolve_board(info, DB)
    assert ambiguous.device is None and "agx-orin-32gb" in ambiguous.problem
    assert resolve_board(info, DB, ram_total_mb=62841).device.id == "agx-orin-64gb"


# ----------------------------------------------------------------------------------- roof state


def test_the_roof_follows_the_clocks_and_states_the_gap():
    board = resolve_board(SourceInfo("replay"), DB, device_id="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    full = roof_state(board, busy_sample(), None)
    assert full.precision == "int8_tensor" and full.reason is None  # none asked: the fastest
    assert full.fraction == pytest.approx(1020 / 1020, rel=1e-3)
    half = roof_state(board, busy_sample(gpu_mhz=510), "fp32")
    assert half.precision == "fp32"
    assert half.current.peak_flops_per_s["fp32"] == pytest.approx(full.maximum.peak_flops_per_s["fp32"] / 2,
                                                                 rel=2e-3)
    assert half.fraction == pytest.approx(0.5, rel=2e-3)


def test_the_roof_opens_at_the_workloads_precision_else_the_boards_fastest():
    """The p key's choice, then the workload's, where the device has it; else the fastest: INT8
    on an Orin, FP32 on a Nano or a TX2 (not FP64, the first listed)."""
    orin = resolve_board(SourceInfo("replay"), DB, device_id="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    assert pick_precision(orin, (None, "fp16_tensor")) == "fp16_tensor"
    assert pick_precision(orin, ("fp32", "fp16_tensor")) == "fp32"
    assert pick_precision(orin, ("bf16_tensor", None)) == "int8_tensor"  # no BF16 on an Orin
    for device in ("nano", "tx2"):
        board = resolve_board(SourceInfo("replay"), DB, device_id=device)
        assert pick_precision(board, ()) == "fp32"
    unknown = resolve_board(SourceInfo("replay"), DB, device_id="no-such-board")
    assert pick_precision(unknown, ("fp32",)) is None


def test_missing_clocks_and_busy_accelerators_are_said():
    board = resolve_board(SourceInfo("replay"), DB, device_id="agx-orin-64gb")
    no_clock = Sample(t_mono=0.0, gpu=Gpu(40.0, ()), emc=None)
    state = roof_state(board, no_clock, None)
    assert state.current is None and state.maximum is not None
    assert "root" in state.reason
    dla = roof_state(board, busy_sample(1300, 3199, {"NVDLA0": Engine(80.0, 1600), "NVDLA1": Engine(off=True),
                                                     "PVA0": Engine(None, 1100)}), None)
    assert dla.accelerators == ("NVDLA0", "PVA0")


# ------------------------------------------------------------------------------------------- CLI


def test_devices_and_roof_commands():
    listed = run_cli("devices")
    assert listed.returncode == 0
    line = next(row for row in listed.stdout.splitlines() if row.startswith("orin-nano-8gb-super "))
    assert "8 GB" in line and "Super" in line and "MAXN_SUPER" in line and "7W" in line
    roof = run_cli("roof", "--device", "h200", "--json")
    assert roof.returncode == 0
    data = json.loads(roof.stdout)
    assert set(data) == {"device", "power_mode", "gpu_mhz", "emc_mhz", "sms", "bandwidth_bytes_per_s",
                         "peak_flops_per_s", "ridge_flop_per_byte"}
    assert data["power_mode"] is None and data["emc_mhz"] == 3201
    assert data["bandwidth_bytes_per_s"] == pytest.approx(4.8e12, rel=0.01)  # H200 datasheet: 4.8 TB/s
    over = run_cli("roof", "--device", "orin-nano-8gb", "--gpu-mhz", "2000")
    assert over.returncode == 0 and over.stderr.count("\n") == 1 and "above" in over.stderr
    unknown = run_cli("roof", "--device", "no-such-board")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "devices:" in unknown.stderr


def test_report_names_the_device_and_the_roof_at_each_phases_mean_clocks(tmp_path):
    out = run_cli("report", str(DEMO_LOG), "--tz", "UTC", "--format", "json",
                  "--device", "orin-nano-8gb-super", "--power-mode", "MAXN_SUPER")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["device"] == "orin-nano-8gb-super" and report["power_mode"] == "MAXN_SUPER"
    roof = report["whole"]["ceilings"]
    assert 1000 < roof["gpu_mhz"] <= 1020 and roof["emc_mhz"] == 3199
    assert roof["bandwidth_bytes_per_s"] == pytest.approx(102.4e9, rel=0.001)  # 128-bit LPDDR5 at 3199
    plain = json.loads(run_cli("report", str(DEMO_LOG), "--format", "json").stdout)
    # Without flags the plain log's RAM, rails and clocks tell its board and mode, said as inferred.
    assert (plain["device"], plain["device_source"]) == ("orin-nano-8gb-super", "inferred")
    assert (plain["power_mode"], plain["power_mode_source"]) == ("MAXN_SUPER", "inferred")
    assert plain["whole"]["ceilings"] == report["whole"]["ceilings"]
    assert (report["device_source"], report["power_mode_source"]) == ("given", "given")


# ------------------------------------------------------------------------------------------- TUI


async def test_the_roofline_pane_on_a_known_board_and_its_precision_key(tmp_path):
    config = make_config(device="orin-nano-8gb-super", power_mode="MAXN_SUPER")
    # paused where it is parked: a playing replay (0.1 s a sample) may move the clocks before they are read
    app = JroofApp(paused_replay(), config, user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        pane = app.query_one("#roofline")
        text = " ".join(pane.readout.plain.split())  # long lines wrap
        assert "MAXN_SUPER" in text and "GPU 1007/1020 MHz" in text and "EMC 3199/3199 MHz" in text
        assert "clocks now give 99% of the MAXN_SUPER mode's roof" in text  # 1007/1020 MHz
        # no workload: the board's fastest precision, integer operations said as such
        assert "peak 33 TOP/s" in text and "102 GB/s" in text and "ridge 322 OP/byte" in text
        assert str(pane.border_title) == "Roofline · INT8 tensor"
        await pilot.press("p")
        assert str(pane.border_title) == "Roofline · FP32"
        assert "FLOP/s" in pane.readout.plain
        await pilot.press("p")
        assert str(pane.border_title) == "Roofline · FP16 tensor"


async def test_a_log_without_clocks_says_why_instead_of_a_roof(tmp_path):
    log = tmp_path / "nonroot.log"
    log.write_text("\n".join(NONROOT) + "\n")
    app = JroofApp(ReplaySource(log, tz="UTC", hold_at_end=True), make_config(device="orin-nano-8gb"),
                   user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) >= 2, "samples")
        app.redraw_now()
        text = app.query_one("#roofline").readout.plain
        assert "no GPU clock in the samples" in text and "root" in text
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        app.redraw_now()
        assert "no GPU clock" in app.query_one("#roofline").readout.plain.splitlines()[0]


async def test_an_unknown_board_is_said_with_how_to_add_it(tmp_path):
    app = replay_app(tmp_path, device="no-such-board")
    async with app.run_test(size=(120, 40)) as pilot:
        await park_replay(pilot, app)
        assert "unknown device 'no-such-board'" in " ".join(app.query_one("#roofline").readout.plain.split())

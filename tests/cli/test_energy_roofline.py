"""The energy roofline's arithmetic: E/op = ε_op + ε_byte / I + π0 / attainable(I) per mode, a mode
without its figures gives no line (and says why), and the cheapest mode is read off the lines."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from paths import OUTSIDE, REPO

from jtop_roof.roofline.devices import load_devices
from jtop_roof.roofline.energy import ceilings_at, cheapest_at, energy_roof, mode_energy

#: A made-up board with two calibrated modes and one without ε per byte: the figures are the
#: test's, never a real board's (those live in the device database).
DEVICE = {
    "name": "Test board", "sms": 2, "flop_per_clk_per_sm": {"fp32": 100, "int8_tensor": 1000},
    "max_gpu_mhz": 1000, "bus_width_bits": 64, "max_emc_mhz": 1000, "emc_data_rate_factor": 2,
    "power_modes": [
        {"name": "FAST", "calibration": {
            "pi0_w": {"value": 8.0, "source": "given", "note": "test"},
            "eps_byte_j": {"value": 1e-10, "source": "given", "note": "test"},
            "eps_flop_j": {"int8": {"value": 1e-12, "source": "given", "note": "test"}}}},
        {"name": "SLOW", "max_gpu_mhz": 250, "calibration": {
            "pi0_w": {"value": 3.0, "source": "measured", "note": "test"},
            "eps_byte_j": {"value": 1e-10, "source": "given", "note": "test"},
            "eps_flop_j": {"int8_tensor": {"value": 0.5e-12, "source": "given", "note": "test"}}}},
        {"name": "HALF", "calibration": {
            "pi0_w": {"value": 1.0, "source": "given", "note": "test"},
            "eps_flop_j": {"int8": {"value": 1e-12, "source": "given", "note": "test"}}}},
        {"name": "BARE"},
    ],
}


@pytest.fixture()
def device():
    return load_devices({"testboard": DEVICE})["testboard"]


def _mode(device, name):
    return next(m for m in device.power_modes if m.name == name)


def test_a_line_is_the_sum_of_its_three_terms(device) -> None:
    line = mode_energy(device, _mode(device, "FAST"), "int8_tensor").line
    assert line is not None
    # peak 2 SMs x 1000 OP x 1 GHz = 2e12 OP/s; bandwidth 8 B x 2 x 1 GHz = 16 GB/s; ridge 125
    assert line.peak_ops_per_s == pytest.approx(2e12) and line.bandwidth_bytes_per_s == pytest.approx(16e9)
    # below the ridge, at I = 10: 1e-12 + 1e-10/10 + 8 / (16e9 x 10)
    assert line.j_per_op(10) == pytest.approx(1e-12 + 1e-11 + 8 / 16e10)
    # above it, at I = 1000: the compute flat divides π0
    assert line.j_per_op(1000) == pytest.approx(1e-12 + 1e-13 + 8 / 2e12)
    assert "π0 given" in line.basis


def test_the_slow_modes_peak_follows_its_gpu_cap(device) -> None:
    line = mode_energy(device, _mode(device, "SLOW"), "int8_tensor").line
    assert line is not None and line.peak_ops_per_s == pytest.approx(0.5e12)


def test_a_mode_missing_a_figure_has_no_line_and_says_which(device) -> None:
    half = mode_energy(device, _mode(device, "HALF"), "int8_tensor")
    bare = mode_energy(device, _mode(device, "BARE"), "int8_tensor")
    assert half.line is None and "ε per byte" in (half.note or "")
    assert bare.line is None and "no calibration" in (bare.note or "")
    # FP32 has no ε in any mode: no line anywhere, and the roof says why
    roof = energy_roof(device, _mode(device, "FAST"), "fp32")
    assert roof.lines == () and "fp32" in (roof.reason or "")


def test_towards_zero_intensity_the_cost_grows_without_end(device) -> None:
    line = mode_energy(device, _mode(device, "FAST"), "int8_tensor").line
    assert line is not None
    assert line.j_per_op(1e-6) > line.j_per_op(1e-3) > line.j_per_op(1.0)
    assert line.j_per_op(5e-324) == math.inf  # a float's overflow, said as such


def test_at_huge_intensity_the_cost_meets_its_floor(device) -> None:
    line = mode_energy(device, _mode(device, "FAST"), "int8_tensor").line
    assert line is not None
    assert line.j_per_op(1e300) == pytest.approx(line.floor_j_per_op)
    assert line.floor_j_per_op == pytest.approx(1e-12 + 8 / 2e12)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_an_intensity_that_is_not_one_is_refused(device, bad) -> None:
    line = mode_energy(device, _mode(device, "FAST"), "int8_tensor").line
    assert line is not None
    with pytest.raises(ValueError):
        line.j_per_op(bad)
    roof = energy_roof(device, _mode(device, "FAST"), "int8_tensor")
    assert cheapest_at(roof, bad).power_mode is None
    assert all(row["j_per_op"] is None for row in ceilings_at(roof, bad))


def test_the_cheapest_mode_changes_with_the_intensity(device) -> None:
    roof = energy_roof(device, _mode(device, "FAST"), "int8_tensor")
    # memory-bound (I = 10): both at their bandwidth, SLOW's smaller π0 wins
    low = cheapest_at(roof, 10)
    assert low.power_mode == "SLOW" and "SLOW" in low.text and "HALF, BARE not calibrated" in low.text
    # compute-bound (I = 1e4): FAST's 4x peak outweighs its 2.7x π0 (4e-12 against 6e-12 + ε)
    assert cheapest_at(roof, 1e4).power_mode == "FAST"


def test_a_report_row_per_mode_with_its_source(device) -> None:
    rows = ceilings_at(energy_roof(device, _mode(device, "FAST"), "int8_tensor"), 10)
    by_mode = {row["power_mode"]: row for row in rows}
    assert by_mode["FAST"]["j_per_op"] == pytest.approx(1e-12 + 1e-11 + 8 / 16e10)
    assert by_mode["FAST"]["j_per_op_source"] == "inferred"
    assert by_mode["HALF"]["j_per_op"] is None and by_mode["HALF"]["j_per_op_source"] is None
    assert "ε per byte" in by_mode["HALF"]["j_per_op_note"]


SHARED_RUN = (OUTSIDE / "shared" / "{}"
              / "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_15w_run3.log")


@pytest.mark.skipif(not Path(str(SHARED_RUN).format("tegrastats/logs")).is_file(),
                    reason="shared/ reference logs not beside the repo")
def test_the_report_gives_each_modes_energy_ceiling_at_the_phases_intensity(tmp_path) -> None:
    """The 15W ResNet-50 run with a config's (test) figures: each mode's J/OP at the timed phase's
    intensity, from the same lines the pane draws; the measured J/OP is the phase's energy over its
    OPs; 7W, without figures, is null and says why."""
    from tui_support import CALIBRATED_ORIN

    root = REPO
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"devices": CALIBRATED_ORIN}))
    log, trt = str(SHARED_RUN).format("tegrastats/logs"), str(SHARED_RUN).format("trtexec")
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", log, "--trtexec", trt,
                          "--config", str(config), "--workload", str(root / "examples/resnet50_int8.yaml"),
                          "--tz", "UTC", "--device", "orin-nano-8gb-super", "--format", "json"],
                         capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    timed = next(p for p in json.loads(out.stdout)["phases"] if p["name"] == "timed")
    roof = timed["roofline"]
    device = load_devices(CALIBRATED_ORIN)["orin-nano-8gb-super"]
    rows = {row["power_mode"]: row for row in roof["energy_ceilings"]}
    intensity = roof["intensity_flop_per_byte"]
    for name in ("MAXN_SUPER", "25W", "15W"):
        line = mode_energy(device, _mode(device, name), "int8_tensor").line
        assert line is not None
        assert rows[name]["j_per_op"] == pytest.approx(line.j_per_op(intensity))
        assert rows[name]["j_per_op_source"] == "inferred" and "π0 given" in rows[name]["j_per_op_note"]
    assert rows["7W"]["j_per_op"] is None
    assert rows["7W"]["j_per_op_note"] == "not calibrated: ε per OP (int8), ε per byte"
    cheapest = min(("MAXN_SUPER", "25W", "15W"), key=lambda name: rows[name]["j_per_op"])
    assert roof["energy_cheapest_mode"] == cheapest and roof["energy_ceilings_note"] is None
    flops = timed["workload"]["iterations"] * 2 * 4.1e9
    assert roof["j_per_op"] == pytest.approx(timed["energy_j"]["total"] / flops)

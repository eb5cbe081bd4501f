"""Ceilings against vendors' datasheet figures written here (never against the table the code reads),
clocks that halve their roof, missing clocks that give no roof, and the ``roof``/``devices`` commands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jtop_roof.commands.roof import cmd_devices, cmd_roof
from jtop_roof.roofline.ceilings import (
    attainable,
    ceilings,
    max_ceilings,
    missing_reason,
    roof_fraction,
    to_json,
)
from jtop_roof.roofline.devices import DeviceError, find_mode, load_devices

GB, TB, TFLOP = 1e9, 1e12, 1e12


@pytest.fixture(scope="module")
def db() -> Any:
    return load_devices()


# --- datasheet figures -----------------------------------------------------------------------------


def test_orin_nano_8gb_bandwidth_per_datasheet(db: Any) -> None:
    """Orin Nano 8GB: 68.3 GB/s at 2133 MHz EMC; Super: 102.4 GB/s at 3199 MHz."""
    for device_id in ("orin-nano-8gb", "orin-nano-8gb-super"):
        device = db[device_id]
        assert ceilings(device, 625, 2133).bandwidth_bytes_per_s == pytest.approx(68.3 * GB, rel=1e-3)
        assert ceilings(device, 1020, 3199).bandwidth_bytes_per_s == pytest.approx(102.4 * GB, rel=1e-3)


def test_orin_nano_super_int8_per_announcement(db: Any) -> None:
    """NVIDIA: 67 sparse INT8 TOPS for the Orin Nano 8GB Super (half of it dense), 40 before Super."""
    assert max_ceilings(db["orin-nano-8gb-super"]).peak_flops_per_s["int8_tensor"] * 2 == pytest.approx(
        67 * TFLOP, rel=0.01
    )
    assert max_ceilings(db["orin-nano-8gb"]).peak_flops_per_s["int8_tensor"] * 2 == pytest.approx(
        40 * TFLOP, rel=0.03
    )


def test_h200_per_datasheet(db: Any) -> None:
    """H200: about 4.8 TB/s and 67 TFLOP/s FP32 (34 FP64) at 1980 MHz."""
    roof = ceilings(db["h200"], 1980, 3201)
    assert roof.bandwidth_bytes_per_s == pytest.approx(4.8 * TB, rel=0.01)
    assert roof.peak_flops_per_s["fp32"] == pytest.approx(67 * TFLOP, rel=0.01)
    assert roof.peak_flops_per_s["fp64"] == pytest.approx(34 * TFLOP, rel=0.02)
    assert roof.ridge_flop_per_byte["fp32"] == pytest.approx(67 / 4.8, rel=0.02)


def test_other_datasheets(db: Any) -> None:
    assert ceilings(db["h100-sxm"], 1980, 2619).bandwidth_bytes_per_s == pytest.approx(3.35 * TB, rel=0.01)
    a100 = ceilings(db["a100-sxm-80gb"], 1410, 1593)
    assert a100.bandwidth_bytes_per_s == pytest.approx(2039 * GB, rel=0.01)
    assert a100.peak_flops_per_s["fp32"] == pytest.approx(19.5 * TFLOP, rel=0.01)
    assert a100.peak_flops_per_s["bf16_tensor"] == pytest.approx(312 * TFLOP, rel=0.01)
    a100_40 = ceilings(db["a100-sxm-40gb"], 1410, 1215)
    assert a100_40.bandwidth_bytes_per_s == pytest.approx(1555 * GB, rel=0.01)
    rtx = ceilings(db["rtx-4090"], 2520, 10501)
    assert rtx.bandwidth_bytes_per_s == pytest.approx(1008 * GB, rel=0.01)
    assert rtx.peak_flops_per_s["fp32"] == pytest.approx(82.6 * TFLOP, rel=0.01)
    rtx3090 = ceilings(db["rtx-3090"], 1695, 9751)
    assert rtx3090.peak_flops_per_s["fp32"] == pytest.approx(35.6 * TFLOP, rel=0.01)
    assert rtx3090.bandwidth_bytes_per_s == pytest.approx(936 * GB, rel=0.01)
    assert ceilings(db["l4"], 2040, 6251).bandwidth_bytes_per_s == pytest.approx(300 * GB, rel=0.01)
    assert ceilings(db["nano"], 921.6, 1600).bandwidth_bytes_per_s == pytest.approx(25.6 * GB, rel=1e-3)
    assert ceilings(db["agx-xavier"], 1377, 2133).bandwidth_bytes_per_s == pytest.approx(136.5 * GB, rel=1e-3)
    assert ceilings(db["agx-orin-64gb"], 1300.5, 3199).bandwidth_bytes_per_s == pytest.approx(
        204.8 * GB, rel=1e-3
    )
    assert ceilings(db["thor"], 1575, 4266).bandwidth_bytes_per_s == pytest.approx(273 * GB, rel=1e-3)
    assert ceilings(db["agx-orin-64gb"], 1300.5, 3199).peak_flops_per_s["fp32"] == pytest.approx(
        5.3 * TFLOP, rel=0.01
    )


# --- clocks, modes and missing values ------------------------------------------------------------------


def test_halving_a_clock_halves_its_roof(db: Any) -> None:
    device = db["orin-nano-8gb-super"]
    full, half_gpu = ceilings(device, 1020, 3199), ceilings(device, 510, 3199)
    half_emc = ceilings(device, 1020, 1599.5)
    for precision, peak in full.peak_flops_per_s.items():
        assert half_gpu.peak_flops_per_s[precision] == pytest.approx(peak / 2)
        assert half_emc.peak_flops_per_s[precision] == pytest.approx(peak)
    assert half_emc.bandwidth_bytes_per_s == pytest.approx(full.bandwidth_bytes_per_s / 2)
    assert half_gpu.bandwidth_bytes_per_s == pytest.approx(full.bandwidth_bytes_per_s)
    assert half_gpu.ridge_flop_per_byte["fp32"] == pytest.approx(full.ridge_flop_per_byte["fp32"] / 2)


def test_gated_tpcs_halve_the_compute_roof(db: Any) -> None:
    """Orin Nano Super at 7 W power-gates half the GPU (TPC mask 252); tegrastats never shows it."""
    device = db["orin-nano-8gb-super"]
    seven = find_mode(device, "7W")
    gated, whole = ceilings(device, 408, 2133, seven), ceilings(device, 408, 2133)
    assert gated.sms == 4 and whole.sms == 8
    assert gated.peak_flops_per_s["fp32"] == pytest.approx(whole.peak_flops_per_s["fp32"] / 2)
    top = max_ceilings(device, seven)
    assert (top.gpu_mhz, top.emc_mhz, top.sms) == (408, 2133, 4)


def test_max_ceilings_use_the_device_where_the_mode_caps_nothing(db: Any) -> None:
    device = db["agx-orin-64gb"]
    top = max_ceilings(device, find_mode(device, "MODE_30W"))
    assert (top.gpu_mhz, top.emc_mhz, top.sms) == (612, 3199, 8)


def test_missing_clocks_give_a_reason_not_a_roof(db: Any) -> None:
    device = db["orin-nano-8gb"]
    assert ceilings(device, None, 2133) is None and "GPU" in (missing_reason(device, None, 2133) or "")
    assert ceilings(device, 625, None) is None and "EMC" in (missing_reason(device, 625, None) or "")
    assert ceilings(device, 0, 2133) is None and "0 MHz" in (missing_reason(device, 0, 2133) or "")
    assert ceilings(device, float("nan"), 2133) is None
    assert missing_reason(device, 625, 2133) is None


def test_device_without_a_bus_gives_no_roof() -> None:
    db = load_devices({"bare": {"sms": 2, "flop_per_clk_per_sm": {"fp32": 256}, "max_gpu_mhz": 900}})
    assert ceilings(db["bare"], 900, 2000) is None
    assert "bus" in (missing_reason(db["bare"], 900, 2000) or "")


def test_attainable_is_the_lower_roof(db: Any) -> None:
    roof = ceilings(db["h200"], 1980, 3201)
    ridge = roof.ridge_flop_per_byte["fp32"]
    assert attainable(roof, "fp32", ridge / 10) == pytest.approx(roof.bandwidth_bytes_per_s * ridge / 10)
    assert attainable(roof, "fp32", ridge * 10) == pytest.approx(roof.peak_flops_per_s["fp32"])
    assert attainable(ceilings(db["thor"], 1575, 4266), "fp16_tensor", 10) is None
    with pytest.raises(ValueError):
        attainable(roof, "fp32", 0)


def test_roof_fraction(db: Any) -> None:
    device = db["h200"]
    top, capped = ceilings(device, 1980, 3201), ceilings(device, 1485, 3201)  # the power-capped GEMM
    assert roof_fraction(capped, top, "bf16_tensor") == pytest.approx(0.75)
    assert roof_fraction(capped, top, "bf16_tensor", intensity=1.0) == pytest.approx(1.0)  # memory-bound
    assert roof_fraction(capped, top, "fp8") is None


def test_to_json_has_exactly_the_issue_keys(db: Any) -> None:
    device = db["thor"]
    out = to_json(max_ceilings(device), device, find_mode(device, "MAXN"))
    assert list(out) == [
        "device", "power_mode", "gpu_mhz", "emc_mhz", "sms", "bandwidth_bytes_per_s",
        "peak_flops_per_s", "ridge_flop_per_byte",
    ]
    assert out["device"] == "thor" and out["power_mode"] == "MAXN"
    assert list(out["peak_flops_per_s"]) == ["fp32"] == list(out["ridge_flop_per_byte"])  # absent, not zero
    assert to_json(max_ceilings(device), device, None)["power_mode"] is None
    json.dumps(out)


# --- commands --------------------------------------------------------------------------------------------


def test_cmd_devices(db: Any) -> None:
    lines = cmd_devices(db)
    assert len(lines) == len(db)
    for line, device_id in zip(lines, db, strict=True):
        assert line.split()[0] == device_id and " GB" in line
    super_line = next(line for line in lines if line.startswith("orin-nano-8gb-super "))
    assert "Jetson Orin Nano 8GB" in super_line and "Super" in super_line
    assert super_line.endswith("modes: 15W 25W MAXN_SUPER 7W")


def test_cmd_roof_json_defaults_to_the_mode_maximum(db: Any) -> None:
    out, warnings = cmd_roof(db, "orin-nano-8gb-super", None, None, "7W", True)
    data = json.loads(out)
    assert warnings == []
    assert (data["power_mode"], data["gpu_mhz"], data["emc_mhz"], data["sms"]) == ("7W", 408, 2133, 4)
    assert data["bandwidth_bytes_per_s"] == pytest.approx(68.3 * GB, rel=1e-3)
    assert "bf16_tensor" not in data["peak_flops_per_s"]


def test_cmd_roof_clock_above_maximum_is_used_with_one_warning(db: Any) -> None:
    out, warnings = cmd_roof(db, "h200", 2100, None, None, True)
    assert json.loads(out)["gpu_mhz"] == 2100 and len(warnings) == 1 and "2100" in warnings[0]


def test_cmd_roof_text_states_the_gap(db: Any) -> None:
    out, warnings = cmd_roof(db, "orin-nano-8gb-super", 510, None, "MAXN_SUPER", False)
    assert warnings == []
    assert "50% of the MAXN_SUPER mode's roof" in out and "102 GB/s" in out


@pytest.mark.parametrize(
    ("device_id", "mode", "needle"),
    [("orin-nano-9gb", None, "devices:"), ("orin-nano-8gb-super", "MAXN", "devices:")],
)
def test_cmd_roof_unknown_device_or_mode(db: Any, device_id: str, mode: str | None, needle: str) -> None:
    with pytest.raises(DeviceError) as info:
        cmd_roof(db, device_id, None, None, mode, False)
    assert "\n" not in str(info.value) and needle in str(info.value)


def test_cmd_roof_bad_clock(db: Any) -> None:
    with pytest.raises(DeviceError, match="--emc-mhz"):
        cmd_roof(db, "h200", None, -1, None, False)

"""Device database: the packaged entries are sourced, model strings find the right entry, user entries
merge field by field and bad ones fail with one line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from paths import TESTS

from jtop_roof.roofline.devices import (
    NUMERIC_FIELDS,
    PRECISIONS,
    DeviceError,
    find_mode,
    load_devices,
    match_devices,
)

DATA = TESTS / "data"

ISSUE_DEVICES = {
    "nano", "tx2", "xavier-nx", "agx-xavier", "orin-nano-4gb", "orin-nano-4gb-super", "orin-nano-8gb",
    "orin-nano-8gb-super", "orin-nx-8gb", "orin-nx-16gb", "agx-orin-32gb", "agx-orin-64gb", "thor", "h200",
    "h100-sxm", "l4", "rtx-4090", "rtx-3090",
}


@pytest.fixture(scope="module")
def db() -> Any:
    return load_devices()


def matched_ids(db: Any, model: str, ram_total_mb: float | None = None) -> list[str]:
    """The ids a model string matches; the board takes a device only when there is exactly one."""
    return [device.id for device in match_devices(db, model, ram_total_mb)]


def test_every_listed_device_is_packaged(db: Any) -> None:
    assert ISSUE_DEVICES <= set(db)
    assert any(device_id.startswith("a100") for device_id in db)


def test_every_packaged_number_names_its_source(db: Any) -> None:
    """Each number of each entry is covered by a document; each mode names its conf or document."""
    for device in db.values():
        covered = {field for source in device.sources for field in source.covers}
        present = {f for f in NUMERIC_FIELDS if getattr(device, f) is not None}
        present |= set(device.flop_per_clk_per_sm)
        if device.memory_type is not None:
            present.add("memory_type")
        assert present - covered == set(), device.id
        assert all(source.doc.strip() for source in device.sources), device.id
        for mode in device.power_modes:
            assert mode.source, (device.id, mode.name)


def test_packaged_entries_are_complete_for_a_roof(db: Any) -> None:
    for device in db.values():
        assert device.bus_width_bits and device.max_emc_mhz and device.emc_data_rate_factor, device.id
        assert device.max_gpu_mhz and "fp32" in device.flop_per_clk_per_sm, device.id
        assert all(rate > 0 for rate in device.flop_per_clk_per_sm.values()), device.id
        for mode in device.power_modes:
            assert mode.active_sms is None or mode.active_sms <= device.sms, (device.id, mode.name)


def test_mode_ids_and_names_are_unique(db: Any) -> None:
    for device in db.values():
        ids = [m.id for m in device.power_modes if m.id is not None]
        assert len(ids) == len(set(ids)), device.id


# --- model strings, as real recordings and boards carry them ---------------------------------------


def test_h200_recording_header(db: Any) -> None:
    header = json.loads((DATA / "h200_host_recording.jsonl").read_text().splitlines()[0])
    assert matched_ids(db, header["model"]) == ["h200"]


def test_device_tree_model_of_the_orin_nano_super_dev_kit(db: Any) -> None:
    model = (DATA / "sysfs/proc/device-tree/model").read_text()
    assert model.endswith("\x00")
    assert matched_ids(db, model) == ["orin-nano-8gb-super"]


def test_demo_and_replay_headers(db: Any) -> None:
    assert matched_ids(db, "Jetson Orin Nano 8GB Super (demo recording)") == ["orin-nano-8gb-super"]
    header = json.loads((DATA / "tui/orinnano_super_replay.jsonl").read_text().splitlines()[0])
    assert matched_ids(db, header["model"]) == ["orin-nano-8gb-super"]


@pytest.mark.parametrize(
    ("model", "ram_mb", "expected"),
    [
        ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit", None, "orin-nano-8gb"),
        ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", 7607, "orin-nano-8gb-super"),
        ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", 3964, "orin-nano-4gb-super"),
        ("NVIDIA Jetson Orin NX Engineering Reference Developer Kit Super", 15656, "orin-nx-16gb-super"),
        ("NVIDIA Jetson Orin NX Engineering Reference Developer Kit", 7620, "orin-nx-8gb"),
        ("NVIDIA Jetson AGX Orin", 62841, "agx-orin-64gb"),
        ("NVIDIA Jetson AGX Orin", 30587, "agx-orin-32gb"),
        ("NVIDIA Jetson AGX Thor Developer Kit", 125772, "thor"),
        ("NVIDIA Jetson Xavier NX Developer Kit", None, "xavier-nx"),
        ("NVIDIA Jetson Nano Developer Kit", None, "nano"),
        ("nvidia h100 80gb hbm3", None, "h100-sxm"),
        ("NVIDIA A100-SXM4-80GB", None, "a100-sxm-80gb"),
        ("NVIDIA GeForce RTX 4090", None, "rtx-4090"),
        ("NVIDIA L4", None, "l4"),
    ],
)
def test_model_strings(db: Any, model: str, ram_mb: float | None, expected: str) -> None:
    assert matched_ids(db, model, ram_mb) == [expected]


def test_ambiguous_models_match_several_and_near_names_none(db: Any) -> None:
    assert sorted(matched_ids(db, "NVIDIA Jetson AGX Orin")) == ["agx-orin-32gb", "agx-orin-64gb"]
    # Near names of other products must not borrow a roof.
    for model in ("NVIDIA GeForce RTX 3090 Ti", "NVIDIA H200 NVL", "NVIDIA L40S", "", "Intel(R) Xeon(R)"):
        assert matched_ids(db, model) == [], model


# --- power modes ---------------------------------------------------------------------------------------


def test_find_mode_by_name_and_id(db: Any) -> None:
    nano = db["orin-nano-8gb-super"]
    assert [m.name for m in nano.power_modes] == ["15W", "25W", "MAXN_SUPER", "7W"]
    assert find_mode(nano, "7W").active_sms == 4  # TPC mask 252: 2 of 8 TPCs left
    assert find_mode(nano, "7W").tpc_pg_mask == 252
    assert find_mode(nano, "maxn super").id == 2
    assert find_mode(nano, 2).name == find_mode(nano, "2").name == "MAXN_SUPER"
    assert find_mode(nano, "15W").max_gpu_mhz == 612
    assert find_mode(nano, "MAXN") is None and find_mode(nano, 9) is None
    assert nano.has_super_modes and not db["orin-nano-8gb"].has_super_modes


# --- user entries ----------------------------------------------------------------------------------


def test_user_entry_overrides_field_by_field() -> None:
    db = load_devices({"orin-nano-8gb-super": {"max_gpu_mhz": 1100, "flop_per_clk_per_sm": {"fp64": 4}}})
    device = db["orin-nano-8gb-super"]
    assert device.max_gpu_mhz == 1100 and device.origin == "packaged+config"
    assert device.sms == 8
    assert device.flop_per_clk_per_sm["fp32"] == 256 and device.flop_per_clk_per_sm["fp64"] == 4
    assert len(device.power_modes) == 4


def test_user_mode_overrides_by_name_and_adds_new_ones() -> None:
    extra = {"agx-orin-64gb": {"power_modes": [{"name": "MODE_30W", "max_gpu_mhz": 700}, {"name": "MY_20W"}]}}
    device = load_devices(extra)["agx-orin-64gb"]
    assert find_mode(device, "MODE_30W").max_gpu_mhz == 700
    assert find_mode(device, "MODE_30W").active_sms == 8  # the packaged fields stay
    assert find_mode(device, "my_20w") is not None


def test_user_adds_a_device() -> None:
    entry = {
        "name": "My board", "sms": 4, "flop_per_clk_per_sm": {"fp32": 256}, "max_gpu_mhz": 900,
        "bus_width_bits": 64, "max_emc_mhz": 2000, "emc_data_rate_factor": 2, "match": ["*my board*"],
    }
    db = load_devices({"my-board": entry})
    assert db["my-board"].origin == "config"
    assert matched_ids(db, "ACME My Board rev 2") == ["my-board"]


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"sms": "eight", "flop_per_clk_per_sm": {"fp32": 256}}, "sms"),
        ({"sms": 8.5, "flop_per_clk_per_sm": {"fp32": 256}}, "sms"),
        ({"sms": True, "flop_per_clk_per_sm": {"fp32": 256}}, "sms"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": float("nan")}}, "fp32"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": -256}}, "fp32"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 0}}, "fp32"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp8": 256}}, "fp8"),
        ({"sms": 8, "flop_per_clk_per_sm": {}}, "flop_per_clk_per_sm"),
        ({"sms": 8}, "flop_per_clk_per_sm"),
        ({"flop_per_clk_per_sm": {"fp32": 1}}, "sms"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 256}, "max_emc_mhz": float("inf")}, "max_emc_mhz"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 256}, "max_gpu_mzh": 900}, "max_gpu_mzh"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 2}, "power_modes": [{"name": "7W", "watts": -7}]},
         "watts"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 256}, "power_modes": [{"id": 1}]}, "name"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 256}, "power_modes": "7W"}, "power_modes"),
        ({"sms": 8, "flop_per_clk_per_sm": {"fp32": 256}, "match": "board"}, "match"),
        ("not a mapping", "mapping"),
    ],
)
def test_bad_user_entries_fail_on_one_line(entry: object, needle: str) -> None:
    with pytest.raises(DeviceError) as info:
        load_devices({"my-board": entry})
    message = str(info.value)
    assert "\n" not in message and "my-board" in message and needle in message


def test_bad_override_of_a_packaged_entry_names_the_config() -> None:
    with pytest.raises(DeviceError, match=r"^config devices: h200: sms") as info:
        load_devices({"h200": {"sms": -132}})
    assert "\n" not in str(info.value)


def test_bad_ids_and_shapes() -> None:
    with pytest.raises(DeviceError):
        load_devices({"bad id with spaces": {"sms": 1, "flop_per_clk_per_sm": {"fp32": 1}}})
    with pytest.raises(DeviceError):
        load_devices(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_precisions_are_the_issue_keys() -> None:
    assert PRECISIONS == ("fp64", "fp32", "fp16_tensor", "bf16_tensor", "int8_tensor")

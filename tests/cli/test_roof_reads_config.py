"""``roof`` takes the device and the power mode as every other command does: the flag, else the
config's key, else none (the device's top clocks), never a flag of its own beside ``Config``."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_main


def config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def roof_json(capsys, *args: object) -> dict[str, object]:
    ran = run_main(capsys, "roof", "--json", *args)
    assert ran.returncode == 0, ran.stderr
    data: dict[str, object] = json.loads(ran.stdout)
    return data


def test_the_configs_power_mode_sets_the_roofs_clocks(tmp_path, capsys):
    path = config_file(tmp_path, "power_mode: 7W\n")
    with_mode = roof_json(capsys, "--config", path, "--device", "orin-nano-8gb")
    without = roof_json(capsys, "--config", config_file(tmp_path, "{}\n"), "--device", "orin-nano-8gb")
    assert with_mode["power_mode"] == "7W" and without["power_mode"] is None
    assert with_mode["gpu_mhz"] != without["gpu_mhz"]  # 7W caps the GPU below the device's top


def test_the_flag_wins_over_the_configs_power_mode(tmp_path, capsys):
    path = config_file(tmp_path, "power_mode: 7W\n")
    data = roof_json(capsys, "--config", path, "--device", "orin-nano-8gb", "--power-mode", "15W")
    assert data["power_mode"] == "15W"


def test_the_configs_device_is_the_roofs_device(tmp_path, capsys):
    path = config_file(tmp_path, "device: h200\n")
    assert roof_json(capsys, "--config", path)["device"] == "h200"
    assert roof_json(capsys, "--config", path, "--device", "orin-nano-8gb")["device"] == "orin-nano-8gb"


def test_no_device_anywhere_is_one_line_and_exit_2(tmp_path, capsys):
    ran = run_main(capsys, "roof", "--config", config_file(tmp_path, "{}\n"))
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1 and "--device" in ran.stderr


def test_a_configs_mode_the_device_lacks_is_one_line_and_exit_2(tmp_path, capsys):
    ran = run_main(capsys, "roof", "--config", config_file(tmp_path, "power_mode: MAXN_SUPER\n"),
                   "--device", "orin-nano-8gb")
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1 and "MAXN_SUPER" in ran.stderr

"""A device id the user names (``--device``, the config's ``device:``) is in the device database or
refused in one line (exit 2) naming ``jroof-tui devices`` and the closest ids, never taken and
dropped with only a note in the report."""

from __future__ import annotations

import json

import pytest
from paths import TESTS

from jtop_roof.commands.main import main
from jtop_roof.roofline.devices import load_devices
from jtop_roof.runtime.config import Config, ConfigError, check_device

LOG = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"
MY_BOARD = {"name": "My carrier board", "sms": 16, "flop_per_clk_per_sm": {"fp32": 256},
            "max_gpu_mhz": 1300.5, "bus_width_bits": 256, "max_emc_mhz": 3199, "emc_data_rate_factor": 2}


def refusal(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize("command", [["report", str(LOG)], ["export", str(LOG)], ["plot", str(LOG)],
                                     ["record", "-", "--source", "demo", "--duration", "1"], ["roof"]])
def test_an_unknown_device_flag_is_refused_naming_the_list(capsys, command):
    """Refused before anything is read or started (``record`` is bounded only in case it is not)."""
    err = refusal(capsys, [*command, "--device", "nosuch"])
    assert "--device: unknown device 'nosuch'" in err and "`jroof-tui devices`" in err
    assert "did you mean" not in err  # nothing is close to it


def test_a_near_miss_names_the_closest_ids(capsys):
    err = refusal(capsys, ["report", str(LOG), "--device", "orin-nano-8gb-supr"])
    assert "did you mean orin-nano-8gb-super" in err


def test_a_known_device_is_taken_as_given(capsys):
    assert main(["report", str(LOG), "--device", "orin-nano-8gb-super", "--tz", "UTC", "--format",
                 "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["device"] == "orin-nano-8gb-super"


def test_the_config_files_device_key_is_checked_too(capsys, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("device: orin-nano-8gb-supr\n")
    err = refusal(capsys, ["report", str(LOG), "--config", str(config)])
    assert "config key 'device': unknown device 'orin-nano-8gb-supr'" in err
    assert "did you mean orin-nano-8gb-super" in err
    # The list the refusal points to still answers with that config.
    assert main(["devices", "--config", str(config)]) == 0
    assert "orin-nano-8gb-super" in capsys.readouterr().out


def test_a_board_of_the_users_own_under_devices_is_known(capsys, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"device": "my-board", "devices": {"my-board": MY_BOARD}}))
    assert main(["report", str(LOG), "--config", str(config), "--tz", "UTC", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "my-board"


@pytest.mark.parametrize("device", ["", "x" * 100_000, "orin\x1b[2J", "../etc/passwd"])
def test_odd_ids_are_refused_as_unknown(device):
    with pytest.raises(ConfigError, match="unknown device") as info:
        check_device(Config(device=device), "--device")
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_no_device_named_is_nothing_to_check():
    check_device(Config(), "--device")
    assert "orin-nano-8gb-super" in load_devices()

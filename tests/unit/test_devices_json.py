"""`devices --format json` is the same database as the table, with every entry's fields, its roof at
its top clocks and at each mode's (the numbers `roof --json` gives for it, marked inferred), and the
documents behind them; an entry that cannot give a roof says why instead of a number."""

from __future__ import annotations

import json

from jtop_roof.commands.main import main

MY_BOARD = {"name": "My carrier board", "sms": 16, "flop_per_clk_per_sm": {"fp32": 256},
            "max_gpu_mhz": 1300.5, "bus_width_bits": 256, "max_emc_mhz": 3199, "emc_data_rate_factor": 2}
NO_BUS = {"name": "A board without its bus", "sms": 4, "flop_per_clk_per_sm": {"fp32": 128},
          "max_gpu_mhz": 900}


def output(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_the_json_lists_the_tables_devices_in_its_order(capsys):
    table = [line.split()[0] for line in output(capsys, "devices").splitlines()]
    devices = json.loads(output(capsys, "devices", "--format", "json"))["devices"]
    assert [device["id"] for device in devices] == table
    assert all(device["sources"] and device["origin"] == "packaged" for device in devices)


def test_each_roof_is_roofs_own_and_says_it_is_inferred(capsys):
    devices = {d["id"]: d for d in json.loads(output(capsys, "devices", "--format", "json"))["devices"]}
    super_ = devices["orin-nano-8gb-super"]
    whole = json.loads(output(capsys, "roof", "--device", "orin-nano-8gb-super", "--json"))
    assert super_["ceilings"] == {k: v for k, v in whole.items() if k not in ("device", "power_mode")}
    assert super_["ceilings_source"] == "inferred"
    mode = next(m for m in super_["power_modes"] if m["name"] == "7W")
    at_7w = json.loads(output(capsys, "roof", "--device", "orin-nano-8gb-super", "--power-mode", "7W",
                              "--json"))
    assert mode["ceilings"]["sms"] == at_7w["sms"] < super_["sms"]
    assert mode["ceilings"]["peak_flops_per_s"] == at_7w["peak_flops_per_s"]


def test_the_configs_boards_are_there_and_a_missing_roof_says_why(capsys, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"devices": {"my-board": MY_BOARD, "no-bus": NO_BUS}}))
    devices = {d["id"]: d for d in json.loads(output(capsys, "devices", "--config", str(config),
                                                     "--format", "json"))["devices"]}
    assert devices["my-board"]["origin"] == "config"
    assert devices["my-board"]["ceilings"]["gpu_mhz"] == 1300.5
    assert devices["no-bus"]["ceilings"] is None and devices["no-bus"]["ceilings_source"] is None
    assert "no memory bus width" in devices["no-bus"]["ceilings_note"]

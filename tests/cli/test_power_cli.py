"""``--sysfs-root`` and ``--power-hz`` from the command line: refused in one line (exit 2), or used
by ``record`` (the power readings of a fake board tree reach the recording and its report)."""

from __future__ import annotations

import json

import pytest
from cli_support import jroof
from paths import TESTS
from power_tree import FakeIna3221

COMMANDS = (("record", "out.jsonl", "--source", "demo", "--duration", "1"), ("--source", "demo"),
            ("serve", "--source", "demo"), ("run", "--headless", "--record", "r.jsonl", "--", "true"))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("flags", "needle"), [
    (("--sysfs-root", "/nonexistent/sys"), "--sysfs-root"),
    (("--sysfs-root", "/etc/hostname"), "not a directory"),
    (("--power-hz", "nan"), "--power-hz"),
    (("--power-hz", "inf"), "--power-hz"),
    (("--power-hz", "0"), "above 0"),
    (("--power-hz", "-5"), "--power-hz"),
    (("--power-hz", "1001"), "at most 1000"),
    (("--power-hz", "fast"), "--power-hz"),
])
def test_refusals_are_one_line_and_exit_2(tmp_path, command, flags, needle):
    cut = command.index("--") if "--" in command else len(command)  # flags go before run's workload
    result = jroof(*command[:cut], *flags, *command[cut:], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines
    assert not (tmp_path / "out.jsonl").exists()


def test_record_writes_the_board_trees_power_at_its_rate(tmp_path):
    FakeIna3221(tmp_path / "root", {"VDD_IN": (5000, 1200), "VDD_SOC": (5000, 200)})
    result = jroof("record", "r.jsonl", "--source", "host", "--sysfs-root", str(tmp_path / "root"),
                   "--power-hz", "50", "--duration", "1.5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert lines[0]["power_sampler"] == {"hz": 50.0, "sources": ["INA3221 hwmon"]}
    power = [line for line in lines if line["type"] == "power"]
    assert len(power) >= 10  # 75 due in 1.5 s: a busy machine may take fewer, never none
    assert {json.dumps(line["rails_mw"]) for line in power} == {'{"VDD_IN": 6000, "VDD_SOC": 1000}'}
    assert {line["period_s"] for line in power} == {0.02}
    monos = [line["mono"] for line in power]
    assert monos == sorted(monos)


REPLAYED = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"
WITHOUT_LOCAL_METERS = (("record", "out.jsonl", "--replay", str(REPLAYED)),
                        ("record", "out.jsonl", "--source", "demo", "--duration", "1"),
                        ("--replay", str(REPLAYED)),
                        ("serve", "--source", "demo"),
                        ("run", "--headless", "--record", "r.jsonl", "--replay", str(REPLAYED), "--", "true"))


@pytest.mark.parametrize("command", WITHOUT_LOCAL_METERS)
@pytest.mark.parametrize("flag", ["--power-hz", "--sysfs-root"])
def test_a_source_that_reads_no_local_monitor_refuses_their_flags(tmp_path, command, flag):
    """A replay, the demo: nothing would read the power monitors or sysfs the flag names."""
    value = "10" if flag == "--power-hz" else str(tmp_path)
    cut = command.index("--") if "--" in command else len(command)
    result = jroof(*command[:cut], flag, value, *command[cut:], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "used for nothing" in lines[0], lines
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "r.jsonl").exists()


def test_the_config_files_power_rate_stays_quiet_for_a_replay(tmp_path):
    """A config key is a default for every source, not an input named for this one."""
    config = tmp_path / "config.yaml"
    config.write_text("power_hz: 10\n")
    result = jroof("record", "out.jsonl", "--replay", str(REPLAYED), "--config", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.jsonl").stat().st_size > 0

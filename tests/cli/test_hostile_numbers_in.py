"""A number typed by a user that no int or float holds (5,000 digits, ``10**400``) or that only
looks like one (``²``) is refused in one line and exit 2 on the command line, and as the documented
ValueError from the hook, never a traceback from ``int()`` or ``float()``.

The command-line cases run ``python -m jtop_roof`` in a temporary folder, so that
``PYTHONPATH=<another tree>`` runs them against that tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import cli_support
import pytest

HUGE = "9" * 5000


def jroof(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_support.jroof(*args, cwd=where, errors="backslashreplace")


@pytest.mark.parametrize("args", [
    ["roof", "--device", "orin-nano-8gb-super", "--power-mode", HUGE],
    ["roof", "--device", "orin-nano-8gb-super", "--power-mode", "²"],
    ["serve", "--listen", HUGE],
    ["serve", "--listen", "²"],
    ["serve", "--listen", f"127.0.0.1:{HUGE}"],
    ["serve", "--listen", "[::1]:²"],
    ["record", "out.jsonl", "--source", "demo", "--duration", "1", f"--prometheus={HUGE}"],
    ["record", "out.jsonl", "--source", "demo", "--duration", "1", "--prometheus=127.0.0.1:²"],
], ids=["mode-huge", "mode-superscript", "listen-huge", "listen-superscript", "listen-host-huge",
        "listen-v6-superscript", "prometheus-huge", "prometheus-superscript"])
def test_a_typed_number_no_int_holds_is_one_line_and_exit_2(tmp_path, args):
    done = jroof(tmp_path, *args)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines[0]) < 1200  # the value is cut in the middle, not echoed whole
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("flag", ["--gpu-mhz", "--emc-mhz"])
@pytest.mark.parametrize("value", ["1e300", "250000"])
def test_a_clock_no_chip_runs_at_is_refused_not_turned_into_infinite_roofs(tmp_path, flag, value):
    done = jroof(tmp_path, "roof", "--device", "orin-nano-8gb-super", flag, value)
    assert done.returncode == 2 and done.stdout == "", done.stdout[-2000:]
    assert len(done.stderr.strip("\n").split("\n")) == 1 and "is no clock" in done.stderr


def test_a_clock_above_the_devices_maximum_is_still_used_as_given(tmp_path):
    done = jroof(tmp_path, "roof", "--device", "orin-nano-8gb-super", "--gpu-mhz", "1100")
    assert done.returncode == 0 and "compute 108%" in done.stdout and "used as given" in done.stderr


@pytest.mark.parametrize("address", [HUGE, "127.0.0.1:99999999", "[::1]:²"])
def test_a_bad_prometheus_address_in_the_config_file_is_one_line_and_exit_2(tmp_path, address):
    """As the flag is: before anything starts, not the metrics quietly off."""
    config = tmp_path / "config.yaml"
    config.write_text(f"prometheus: '{address}'\n", encoding="utf-8")
    done = jroof(tmp_path, "record", "out.jsonl", "--source", "demo", "--duration", "1",
                 "--config", str(config))
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and "config key 'prometheus'" in lines[0] and len(lines[0]) < 1200
    assert not (tmp_path / "out.jsonl").exists()


def test_a_power_mode_typed_as_its_number_is_still_found(tmp_path):
    done = jroof(tmp_path, "roof", "--device", "orin-nano-8gb-super", "--power-mode", "0002")
    assert done.returncode == 0 and "power mode MAXN_SUPER (id 2)" in done.stdout, done.stderr


@pytest.mark.parametrize("iterations", [10**400, -(10**400), None, "many", float("nan"), float("inf")],
                         ids=["huge", "huge-negative", "none", "text", "nan", "inf"])
def test_hook_work_refuses_what_no_float_holds_with_value_error(iterations):
    from jtop_roof import hook

    with pytest.raises(ValueError, match="iterations"):
        hook.work(iterations=iterations)


@pytest.mark.parametrize("key", ["flops", "bytes"])
def test_hook_work_refuses_huge_amounts_with_value_error(key):
    from jtop_roof import hook

    with pytest.raises(ValueError, match=key):
        hook.work(iterations=1, **{key: 10**400})

"""Config precedence (defaults < file < env < CLI) and one-line errors naming the key."""

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import yaml
from paths import REPO
from source_support import finishes

from jtop_roof.runtime.config import Config, ConfigError, load_config


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return str(path)


def test_defaults_when_no_file(tmp_path):
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert config == Config()


def test_precedence_defaults_file_env_cli(tmp_path):
    path = write(tmp_path, "interval_ms: 500\ntheme: jroof-light\nsource: host\n")
    env = {"JROOF_INTERVAL_MS": "250", "XDG_CONFIG_HOME": str(tmp_path)}
    config = load_config(path, environ=env, overrides={"source": "demo", "speed": None})
    assert config.theme == "jroof-light"  # file over default
    assert config.interval_ms == 250  # env over file
    assert config.source == "demo"  # CLI over file
    assert config.speed == 1.0  # a CLI value of None means "not given"


def test_file_found_via_env_then_xdg(tmp_path):
    xdg = tmp_path / "xdg"
    (xdg / "jroof").mkdir(parents=True)
    (xdg / "jroof" / "config.yaml").write_text("window_s: 30\n")
    assert load_config(environ={"XDG_CONFIG_HOME": str(xdg)}).window_s == 30
    other = write(tmp_path, "window_s: 600\n")
    env = {"XDG_CONFIG_HOME": str(xdg), "JROOF_CONFIG": other}
    assert load_config(environ=env).window_s == 600


def test_tegrastats_command_string_is_split(tmp_path):
    path = write(tmp_path, "tegrastats_command: sudo -n tegrastats\n")
    assert load_config(path, environ={}).tegrastats_command == ("sudo", "-n", "tegrastats")


def test_thresholds_and_keymap(tmp_path):
    path = write(tmp_path, "thresholds:\n  temp_warn_c: 60\nkeymap:\n  quit: ctrl+q\n")
    config = load_config(path, environ={})
    assert config.thresholds.temp_warn_c == 60.0
    assert config.thresholds.temp_crit_c == 85.0
    assert config.keymap == {"quit": "ctrl+q"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("bogus: 1\n", "'bogus'"),
        ("interval_ms: fast\n", "'interval_ms'"),
        ("interval_ms: 1.5\n", "'interval_ms'"),
        ("speed: 100\n", "'speed'"),
        ("source: jtop\n", "'source'"),
        ("thresholds:\n  nope: 3\n", "'thresholds.nope'"),
        ("keymap: [a]\n", "'keymap'"),
        ("follow: maybe\n", "'follow'"),
        ("key: [unclosed\n", "line"),
        ("interval_ms: .inf\n", "'interval_ms'"),
        ("speed: .nan\n", "'speed'"),
        ("window_s: .nan\n", "'window_s'"),
        ("tegrastats_command: sudo \"x\n", "'tegrastats_command'"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_config_names_the_key(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_config_file_that_is_not_text(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(str(path), environ={})


def test_yaml_tags_are_not_executed(tmp_path):
    path = write(tmp_path, "theme: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigError):
        load_config(path, environ={})


def test_example_config_is_complete_and_valid():
    """config.example.yaml documents every key with its default value."""
    example = yaml.safe_load((REPO / "config.example.yaml").read_text())
    config = load_config(str(REPO / "config.example.yaml"), environ={})
    assert config == Config()
    assert set(example) == set(Config.__dataclass_fields__)


@pytest.mark.parametrize("text", ["bogus: 1\n", "interval_ms: [\n", "speed: -3\n"])
def test_cli_bad_config_exits_2_with_one_line(tmp_path, text):
    path = write(tmp_path, text)
    result = subprocess.run(
        [sys.executable, "-m", "jtop_roof", "--config", path, "record", str(tmp_path / "out.jsonl")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jroof-tui: error:")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_errors_from_env_and_flags_say_where_the_value_came_from(tmp_path):
    with pytest.raises(ConfigError, match=r"\(from JROOF_INTERVAL_MS\)$"):
        load_config(environ={"JROOF_INTERVAL_MS": "abc", "XDG_CONFIG_HOME": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"'interval_ms'.*\(from --interval\)$"):
        load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)}, overrides={"interval_ms": 5})


# --- hostile values and files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("restart_backoff_s: [1.0e+308]\n", "'restart_backoff_s[0]': expected a number from 0.5 to 3600"),
        ("restart_backoff_s: [0]\n", "'restart_backoff_s[0]': expected a number from 0.5 to 3600"),
        ("restart_backoff_s: [" + "1, " * 40 + "1]\n", "list of 1 to 32 seconds"),
        ("window_s: 1.0e+308\n", "'window_s': expected a number from 5 to 604800"),
        ("history_s: 1.0e+308\n", "'history_s': expected a whole number from 60 to 604800"),
        ("history_s: " + "9" * 400 + "\n", "'history_s': expected a whole number from 60 to 604800"),
        ("interval_ms: 99999999999\n", "'interval_ms': expected a whole number from 10 to 3600000"),
        ("redraw_hz: 0\n", "'redraw_hz': expected a number from 0.1 to 10"),
        ("speed: 1.0e+308\n", "'speed': expected a number from 0.25 to 64"),
        ("thresholds: {temp_warn_c: 1.0e+308}\n", "'thresholds.temp_warn_c': expected a number from 0 to 25"),
        ("thresholds: {load_crit_pct: 101}\n", "'thresholds.load_crit_pct': expected a number from 0 to 100"),
        ("thresholds:\n  load_warn_pct: -1\n", "'thresholds.load_warn_pct'"),
    ],
)
def test_every_number_is_bounded_and_the_error_gives_the_bounds(tmp_path, text, bounds):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text), environ={})
    assert bounds in str(info.value)
    assert "\n" not in str(info.value)


def test_bounds_hold_for_env_values_too(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    for value in ("nan", "inf", "1e400", "1" * 5000, "-5"):
        with pytest.raises(ConfigError, match="from 10 to 3600000"):
            load_config(environ={**env, "JROOF_INTERVAL_MS": value})


def test_bad_values_are_shown_cut_short(tmp_path):
    path = write(tmp_path, f"follow: {'x' * 10000}\n{'k' * 5000}: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert len(str(info.value)) < 200


def billion_laughs(last: str) -> str:
    """Nine levels of nine aliases: 9**9 strings once expanded."""
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    for level in range(1, 9):
        prev, cur = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + f"\n{last}\n"


@pytest.mark.parametrize("last", ["follow: *i", "keymap: {quit: *i}", "theme: *i"])
def test_yaml_alias_bomb_is_refused_without_expanding_it(tmp_path, last):
    path = write(tmp_path, billion_laughs(last))
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as info:
            finishes(lambda: load_config(path, environ={}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20  # 9**9 strings expanded would take gigabytes
    assert "values once aliases are expanded" in str(info.value) and len(str(info.value)) < 200


def test_small_aliases_still_work_and_wrong_ones_print_short(tmp_path):
    path = write(tmp_path, "thresholds: &t {temp_warn_c: 60}\nrestart_backoff_s: &b [2, 4]\n")
    config = load_config(path, environ={})
    assert config.thresholds.temp_warn_c == 60 and config.restart_backoff_s == (2.0, 4.0)
    nested = "follow: [&x [[1, 2, 3, 4, 5, 6], [7, 8, 9], [[[[[1]]]]]], *x, *x, *x, *x, *x, *x]\n"
    with pytest.raises(ConfigError, match="'follow'") as info:
        load_config(write(tmp_path, nested), environ={})
    assert len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("follow: &r [*r]\n", "at line 1: an alias refers to a collection that contains it"),
        ("interval_ms: " + "9" * 5000 + "\n", "a value cannot be read"),
        ("tz: 2001-13-45\n", "a value cannot be read: month must be in 1..12"),
        ("follow: " + "[" * 100_000 + "\n", "nested too deeply"),
    ],
)
def test_yaml_values_python_cannot_hold_are_one_line_errors(tmp_path, text, problem):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text), environ={})
    assert problem in str(info.value) and "\n" not in str(info.value) and len(str(info.value)) < 200


def test_special_files_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # nobody writes: opening it for reading would block
    cases = {"/dev/zero": "not a regular file", str(fifo): "not a regular file", str(tmp_path): "a directory"}
    for path, reason in cases.items():
        with pytest.raises(ConfigError, match=f"cannot read config file {path}: {reason}$"):
            finishes(lambda path=path: load_config(path, environ={}))


def test_huge_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as out:
        out.truncate(10 * 2**30)  # sparse: 10 GiB of nothing
    with pytest.raises(ConfigError, match=r"huge.yaml: larger than 1,048,576 bytes$"):
        load_config(str(path), environ={})
    path.write_text("#" * (2**20 + 1))
    with pytest.raises(ConfigError, match="larger than"):
        load_config(str(path), environ={})

"""Config precedence (defaults < file < env < CLI) and one-line errors naming the key."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from jtop_roof.config import Config, ConfigError, load_config

REPO = Path(__file__).resolve().parents[1]


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

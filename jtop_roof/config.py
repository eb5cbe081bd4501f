"""Configuration: defaults < config file < JROOF_* environment < command line.

The file is found via ``--config``, then ``JROOF_CONFIG``, then ``$XDG_CONFIG_HOME/jroof/config.yaml``
(``~/.config/jroof/config.yaml``). It is read with ``yaml.safe_load`` only. Every key is documented in
``config.example.yaml``. Errors raise ``ConfigError`` whose message names the key; the CLI prints it
on one line and exits with code 2.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

SOURCES = ("auto", "tegrastats", "host", "demo")
#: Replay speeds (the speed keys step between them) and the shortest sampling interval.
MIN_SPEED, MAX_SPEED = 0.25, 64.0
MIN_INTERVAL_MS = 10


class ConfigError(ValueError):
    """A bad config value; the message names the key and says what is expected."""


@dataclass(frozen=True)
class Thresholds:
    """Colour levels where the board gives no trip point (sysfs or recording header)."""

    temp_warn_c: float = 70.0
    temp_crit_c: float = 85.0
    load_warn_pct: float = 80.0
    load_crit_pct: float = 95.0


@dataclass(frozen=True)
class Config:
    source: str = "auto"
    interval_ms: int = 1000
    tegrastats_command: tuple[str, ...] = ("tegrastats",)
    tz: str | None = None
    speed: float = 1.0
    follow: bool = False
    record: str | None = None
    record_dir: str = "."
    theme: str = "jroof-dark"
    redraw_hz: float = 2.0
    window_s: float = 120.0
    history_s: int = 86400
    restart_backoff_s: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 30.0)
    keymap: dict[str, str] = field(default_factory=dict)
    thresholds: Thresholds = field(default_factory=Thresholds)


# Environment variables that override file values (strings, converted like file values).
ENV_KEYS = {
    "JROOF_SOURCE": "source",
    "JROOF_INTERVAL_MS": "interval_ms",
    "JROOF_TEGRASTATS_COMMAND": "tegrastats_command",
    "JROOF_TZ": "tz",
    "JROOF_THEME": "theme",
    "JROOF_RECORD_DIR": "record_dir",
}


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "jroof" / "config.yaml"


def config_dir() -> Path:
    """The directory holding the config file and user ``themes/``."""
    return default_config_path().parent


def _expect_number(
    key: str, value: Any, *, minimum: float, maximum: float | None = None, integer: bool = False
) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"config key '{key}': expected a number, got {value!r}") from None
        else:
            raise ConfigError(f"config key '{key}': expected a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ConfigError(f"config key '{key}': expected a finite number, got {value!r}")
    if integer and float(value) != int(value):
        raise ConfigError(f"config key '{key}': expected a whole number, got {value!r}")
    if value < minimum:
        raise ConfigError(f"config key '{key}': must be at least {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"config key '{key}': must be at most {maximum}, got {value!r}")
    return int(value) if integer else float(value)


def _expect_str(key: str, value: Any, *, allow_none: bool = False) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"config key '{key}': expected a string, got {type(value).__name__}")
    return value


def _expect_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return value.lower() in ("1", "true", "yes", "on")
    raise ConfigError(f"config key '{key}': expected true or false, got {value!r}")


def _convert(key: str, value: Any) -> Any:
    """Check and convert one top-level value; raises ConfigError naming the key."""
    if key == "source":
        value = _expect_str(key, value)
        if value not in SOURCES:
            raise ConfigError(f"config key 'source': expected one of {', '.join(SOURCES)}, got {value!r}")
        return value
    if key == "interval_ms":
        return _expect_number(key, value, minimum=MIN_INTERVAL_MS, integer=True)
    if key == "tegrastats_command":
        if isinstance(value, str):
            try:
                parts = shlex.split(value)
            except ValueError as exc:  # an unbalanced quote
                raise ConfigError(f"config key 'tegrastats_command': {exc}") from None
        elif isinstance(value, list) and all(isinstance(p, str) for p in value):
            parts = value
        else:
            raise ConfigError("config key 'tegrastats_command': expected a string or a list of strings")
        if not parts:
            raise ConfigError("config key 'tegrastats_command': must not be empty")
        return tuple(parts)
    if key in ("tz", "record"):
        return _expect_str(key, value, allow_none=True)
    if key in ("theme", "record_dir"):
        return _expect_str(key, value)
    if key == "speed":
        return _expect_number(key, value, minimum=MIN_SPEED, maximum=MAX_SPEED)
    if key == "follow":
        return _expect_bool(key, value)
    if key == "redraw_hz":
        return _expect_number(key, value, minimum=0.1, maximum=10)
    if key == "window_s":
        return _expect_number(key, value, minimum=5)
    if key == "history_s":
        return _expect_number(key, value, minimum=60, integer=True)
    if key == "restart_backoff_s":
        if not isinstance(value, list) or not value:
            raise ConfigError("config key 'restart_backoff_s': expected a non-empty list of seconds")
        return tuple(_expect_number(f"{key}[{i}]", v, minimum=0) for i, v in enumerate(value))
    if key == "keymap":
        if not isinstance(value, dict):
            raise ConfigError("config key 'keymap': expected a mapping of binding id to keys")
        for binding_id, keys in value.items():
            if not isinstance(binding_id, str) or not isinstance(keys, str):
                raise ConfigError(f"config key 'keymap.{binding_id}': expected a string of keys")
        return dict(value)
    if key == "thresholds":
        if not isinstance(value, dict):
            raise ConfigError("config key 'thresholds': expected a mapping")
        known = {f.name for f in fields(Thresholds)}
        for sub in value:
            if sub not in known:
                raise ConfigError(f"config key 'thresholds.{sub}': unknown key")
        return Thresholds(
            **{sub: _expect_number(f"thresholds.{sub}", v, minimum=0) for sub, v in value.items()}
        )
    raise ConfigError(f"config key '{key}': unknown key")


def _apply(config: Config, values: dict[str, Any], origin: Callable[[str], str] | None = None) -> Config:
    """Check and set values; ``origin(key)`` names where a value came from (an env variable, a
    flag) so that an error points at what the user typed."""
    known = {f.name for f in fields(Config)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        try:
            if key not in known:
                raise ConfigError(f"config key '{key}': unknown key")
            changes[key] = _convert(key, value)
        except ConfigError as exc:
            if origin is None:
                raise
            raise ConfigError(f"{exc} (from {origin(key)})") from None
    return replace(config, **changes)


def yaml_error_text(exc: yaml.YAMLError) -> str:
    """``" at line N: problem"``: where a YAML file is broken, for a one-line message."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    return f"{where}: {getattr(exc, 'problem', None) or 'invalid YAML'}"


def read_config_file(path: Path) -> dict[str, Any]:
    """Read a YAML mapping; errors name the file and say what is wrong, on one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path}{yaml_error_text(exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping of keys at the top level")
    return data


def load_config(
    path: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Config:
    """Build the effective config. ``overrides`` are command-line values (None = not given)."""
    env = os.environ if environ is None else environ
    config = Config()
    if path is not None:
        config = _apply(config, read_config_file(Path(path)))
    elif env.get("JROOF_CONFIG"):
        config = _apply(config, read_config_file(Path(env["JROOF_CONFIG"])))
    else:
        default = default_config_path(env)
        if default.is_file():
            config = _apply(config, read_config_file(default))
    env_vars = {key: var for var, key in ENV_KEYS.items() if env.get(var)}
    config = _apply(config, {key: env[var] for key, var in env_vars.items()}, env_vars.__getitem__)
    cli_values = {k: v for k, v in (overrides or {}).items() if v is not None}
    return _apply(config, cli_values, lambda key: "--" + key.removesuffix("_ms").replace("_", "-"))

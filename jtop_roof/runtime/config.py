"""Configuration: defaults < config file < JROOF_* environment < command line.

The file is found via ``--config``, then ``JROOF_CONFIG``, then ``$XDG_CONFIG_HOME/jroof/config.yaml``
(``~/.config/jroof/config.yaml``). It is read with PyYAML's safe loader only. Every key is documented in
``config.example.yaml``. Errors raise ``ConfigError`` whose message names the key, gives the bounds
and shows the value cut short; the CLI prints it on one line and exits with code 2.

The file is hostile input like any other: it is read through ``formats.userfiles`` (a small regular
file only, YAML alias bombs refused before they are built), as themes and workloads are.
"""

from __future__ import annotations

import difflib
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from jtop_roof.analysis.detector_spec import DetectorConfig
from jtop_roof.formats.userfiles import YamlError, load_yaml, read_small_file, shown
from jtop_roof.model.errors import UserError
from jtop_roof.model.settings import MAX_SPEED, MIN_SPEED, Thresholds
from jtop_roof.sources.power import DEFAULT_POWER_HZ, MAX_POWER_HZ

SOURCES = ("auto", "tegrastats", "host", "demo")
#: The shortest sampling interval.
MIN_INTERVAL_MS = 10
#: Bounds of the other numbers (each one's error states them): an hour, a week, far past any use and
#: short of what overflows a timer or makes a loop spin.
MAX_INTERVAL_MS = 3_600_000
MIN_REDRAW_HZ, MAX_REDRAW_HZ = 0.1, 10.0
MIN_WINDOW_S, MAX_HISTORY_S = 5.0, 7 * 86400
MIN_HISTORY_S = 60
#: Tegrastats restarts: at least half a second apart (0 would restart a failing command in a loop).
MIN_BACKOFF_S, MAX_BACKOFF_S, MAX_BACKOFF_STEPS = 0.5, 3600.0, 32
MAX_TEMP_C, MAX_LOAD_PCT = 250.0, 100.0
class ConfigError(UserError):
    """A bad config value; the message names the key and says what is expected."""


@dataclass(frozen=True)
class Config:
    source: str = "auto"
    interval_ms: int = 1000
    tegrastats_command: tuple[str, ...] = ("tegrastats",)
    tz: str | None = None
    speed: float = 1.0
    follow: bool = False
    #: Leave the host name, the command line and paths out of recordings (``--anonymize``).
    anonymize: bool = False
    record: str | None = None
    record_dir: str = "."
    theme: str = "jroof-dark"
    redraw_hz: float = 2.0
    window_s: float = 120.0
    history_s: int = 86400
    restart_backoff_s: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 30.0)
    keymap: dict[str, str] = field(default_factory=dict)
    thresholds: Thresholds = field(default_factory=Thresholds)
    #: The device-database id when the source cannot tell (a plain log): ``--device``.
    device: str | None = None
    #: The nvpmodel mode name (``7W``, ``MAXN_SUPER``) when the source cannot tell: ``--power-mode``.
    power_mode: str | None = None
    #: User device entries: id -> fields, added to or merged over the packaged database.
    devices: dict[str, Any] = field(default_factory=dict)
    #: Each detector's own settings (``analysis.detector_registry``; defaults where not given).
    detectors: DetectorConfig = field(default_factory=DetectorConfig)
    #: Boards watched over ssh (``--ssh HOST``): tegrastats runs there, the monitor here.
    ssh_hosts: tuple[str, ...] = ()
    #: Serve Prometheus metrics while monitoring or recording (``--prometheus=ADDR``).
    prometheus: str | None = None
    #: A ``jroof-tui probe`` result to draw beside the datasheet roofs (``--probe FILE``).
    probe: str | None = None
    #: The workload spec (``--workload FILE``): FLOPs and bytes per iteration for the point.
    workload: str | None = None
    #: trtexec's output of the replayed run (``--trtexec FILE``): its phases and iterations.
    trtexec: str | None = None
    #: Seconds added to trtexec's stamps (``--trtexec-offset``), for clocks that disagree.
    trtexec_offset: float = 0.0
    #: When a replayed log without stamps started (``--log-start``), to place ``trtexec`` on it.
    log_start: str | None = None
    #: Where the board's sysfs is (``--sysfs-root``): every sysfs read goes under it.
    sysfs_root: str = "/"
    #: The power sampler's rate (``--power-hz``): the board's monitors, NVML and RAPL between samples.
    power_hz: float = DEFAULT_POWER_HZ


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


def _plain_number(x: float) -> str:
    """3600000, not 3.6e+06: a bound as the user would type it."""
    return str(int(x)) if float(x).is_integer() else str(x)


def _expect_number(
    key: str, value: Any, *, minimum: float, maximum: float, integer: bool = False
) -> float | int:
    """A number within [minimum, maximum] (a numeric string from the environment too)."""
    what = "a whole number" if integer else "a number"
    bounds = f"{what} from {_plain_number(minimum)} to {_plain_number(maximum)}"
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ConfigError(f"config key '{key}': expected {bounds}, got {shown(value)}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"config key '{key}': expected {bounds}, got {type(value).__name__}")
    # Compared before any conversion: float() of a 400-digit int overflows, and NaN fails both.
    if not minimum <= value <= maximum or (integer and value != int(value)):
        raise ConfigError(f"config key '{key}': expected {bounds}, got {shown(value)}")
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
    raise ConfigError(f"config key '{key}': expected true or false, got {shown(value)}")


def _convert(key: str, value: Any) -> Any:
    """Check and convert one top-level value; raises ConfigError naming the key."""
    if key == "source":
        value = _expect_str(key, value)
        if value not in SOURCES:
            raise ConfigError(
                f"config key 'source': expected one of {', '.join(SOURCES)}, got {shown(value)}"
            )
        return value
    if key == "interval_ms":
        return _expect_number(key, value, minimum=MIN_INTERVAL_MS, maximum=MAX_INTERVAL_MS, integer=True)
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
    if key in ("tz", "record", "device", "power_mode", "probe", "workload", "trtexec", "prometheus",
               "log_start"):
        return _expect_str(key, value, allow_none=True)
    if key == "devices":
        if not isinstance(value, dict):
            raise ConfigError("config key 'devices': expected a mapping of device id to its fields")
        from jtop_roof.roofline.devices import DeviceError, load_devices

        try:
            load_devices(value)  # checked now, so that a bad entry is a one-line error at start
        except DeviceError as exc:
            raise ConfigError(f"config key 'devices': {exc}") from None
        return dict(value)
    if key in ("theme", "record_dir"):
        return _expect_str(key, value)
    if key == "trtexec_offset":
        return _expect_number(key, value, minimum=-86400.0, maximum=86400.0)
    if key == "sysfs_root":
        root = _expect_str(key, value)
        if not root or not os.path.isdir(root):
            raise ConfigError(f"config key 'sysfs_root': not a directory: {shown(root)}")
        return root
    if key == "power_hz":
        try:
            hz = _expect_number(key, value, minimum=0.0, maximum=MAX_POWER_HZ)
        except ConfigError:
            hz = 0.0  # said below, with the bounds as they are: above 0
        if hz <= 0:
            raise ConfigError(f"config key 'power_hz': expected a rate above 0 and at most "
                              f"{_plain_number(MAX_POWER_HZ)} Hz, got {shown(value)}")
        return hz
    if key == "speed":
        return _expect_number(key, value, minimum=MIN_SPEED, maximum=MAX_SPEED)
    if key in ("follow", "anonymize"):
        return _expect_bool(key, value)
    if key == "redraw_hz":
        return _expect_number(key, value, minimum=MIN_REDRAW_HZ, maximum=MAX_REDRAW_HZ)
    if key == "window_s":
        return _expect_number(key, value, minimum=MIN_WINDOW_S, maximum=MAX_HISTORY_S)
    if key == "history_s":
        return _expect_number(key, value, minimum=MIN_HISTORY_S, maximum=MAX_HISTORY_S, integer=True)
    if key == "restart_backoff_s":
        if not isinstance(value, list) or not 0 < len(value) <= MAX_BACKOFF_STEPS:
            raise ConfigError(
                f"config key 'restart_backoff_s': expected a list of 1 to {MAX_BACKOFF_STEPS} seconds"
            )
        return tuple(
            _expect_number(f"{key}[{i}]", v, minimum=MIN_BACKOFF_S, maximum=MAX_BACKOFF_S)
            for i, v in enumerate(value)
        )
    if key == "keymap":
        if not isinstance(value, dict):
            raise ConfigError("config key 'keymap': expected a mapping of binding id to keys")
        for binding_id, keys in value.items():
            if not isinstance(binding_id, str) or not isinstance(keys, str):
                raise ConfigError(f"config key 'keymap.{shown(binding_id)[1:-1]}': expected a string of keys")
        return dict(value)
    if key == "thresholds":
        if not isinstance(value, dict):
            raise ConfigError("config key 'thresholds': expected a mapping")
        known = {f.name for f in fields(Thresholds)}
        for sub in value:
            if sub not in known:
                raise ConfigError(f"config key 'thresholds.{shown(sub)[1:-1]}': unknown key")
        return Thresholds(**{
            sub: _expect_number(f"thresholds.{sub}", v, minimum=0,
                                maximum=MAX_TEMP_C if sub.startswith("temp") else MAX_LOAD_PCT)
            for sub, v in value.items()
        })
    if key == "ssh_hosts":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
            raise ConfigError("config key 'ssh_hosts': expected a host or a list of hosts")
        for host in value:
            if not host or host.startswith("-") or any(c.isspace() for c in host):
                raise ConfigError(f"config key 'ssh_hosts': not an ssh host: {shown(host)}")
        return tuple(dict.fromkeys(value))
    if key == "detectors":
        return _detectors(value)
    raise ConfigError(f"config key '{shown(key)[1:-1]}': unknown key")


def _detectors(value: Any) -> DetectorConfig:
    """``detectors:``: each detector's settings through its own declaration (``detector_registry``),
    under its name (``throttle: {busy_pct: 60}``) or flat, a setting naming its detector
    (``busy_pct: 60``); checked against the bounds the detector declares."""
    from jtop_roof.analysis.detector_registry import DETECTORS, detector_named, setting_owner

    if not isinstance(value, dict):
        raise ConfigError("config key 'detectors': expected a mapping")
    given: dict[str, dict[str, Any]] = {}
    for sub, v in value.items():
        named = detector_named(sub) if isinstance(sub, str) else None
        if named is not None and isinstance(v, dict):
            bounds = named.bounds()
            for name, x in v.items():
                where = f"detectors.{sub}.{shown(name)[1:-1]}"
                if name not in bounds:
                    raise ConfigError(f"config key '{where}': unknown key")
                given.setdefault(sub, {})[name] = _bounded(where, x, bounds[name])
            continue
        owner = setting_owner(sub) if isinstance(sub, str) else None
        if owner is None:
            raise ConfigError(f"config key 'detectors.{shown(sub)[1:-1]}': unknown key")
        given.setdefault(owner[0].name, {})[sub] = _bounded(f"detectors.{sub}", v, owner[1])
    return DetectorConfig.of(*(spec.settings(**given[spec.name]) for spec in DETECTORS if spec.name in given))


def _bounded(key: str, value: Any, bounds: Any) -> float | int:
    return _expect_number(key, value, minimum=bounds.low, maximum=bounds.high, integer=bounds.integer)


def _apply(config: Config, values: dict[str, Any], origin: Callable[[str], str] | None = None) -> Config:
    """Check and set values; ``origin(key)`` names where a value came from (an env variable, a
    flag) so that an error points at what the user typed."""
    known = {f.name for f in fields(Config)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        try:
            if key not in known:
                raise ConfigError(f"config key '{shown(key)[1:-1]}': unknown key")
            changes[key] = _convert(key, value)
        except ConfigError as exc:
            if origin is None:
                raise
            raise ConfigError(f"{exc} (from {origin(key)})") from None
    return replace(config, **changes)


def check_device(config: Config, given_as: str) -> None:
    """The device id the user named (``given_as``: ``--device``, or the config file's key) must be
    in the database, the packaged one with the config's ``devices:``; else the board would be
    unknown and every number that needs it (ceilings, the mode's caps, throttle detection) would go
    missing with only a note. ConfigError naming the closest ids."""
    if config.device is None:
        return
    from jtop_roof.roofline.devices import load_devices

    known = load_devices(config.devices)
    if config.device in known:
        return
    close = difflib.get_close_matches(config.device, list(known), n=3)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ConfigError(f"{given_as}: unknown device {shown(config.device)} (`jroof-tui devices` lists the "
                      f"ids; a board of your own goes under `devices:` in the config){hint}")


def read_config_file(path: Path) -> dict[str, Any]:
    """Read a YAML mapping; errors name the file and say what is wrong, on one line."""
    try:
        text = read_small_file(path)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path}: not UTF-8 text") from None
    try:
        data = load_yaml(text)
    except YamlError as exc:
        raise ConfigError(f"config file {path}{exc}") from None
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
    flags: Mapping[str, str] | None = None,
) -> Config:
    """Build the effective config. ``overrides`` are command-line values (None = not given);
    ``flags`` names the flag that gave each (``ssh_hosts``: ``--ssh``), so that an error blames what
    the user typed (without it, the flag is guessed from the key)."""
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
    typed = flags or {}
    return _apply(config, cli_values,
                  lambda key: typed.get(key) or "--" + key.removesuffix("_ms").replace("_", "-"))

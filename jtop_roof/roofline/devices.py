"""The device database behind the roofline: SM counts, per-clock rates, memory buses and nvpmodel modes.

The packaged ``data/devices.yaml`` holds one sourced entry per device; a user's config may add devices or
override fields of packaged ones (``devices:`` mapping id -> entry, merged field by field). Every value is
checked here so that a bad entry fails with one line naming the device and the field, never later as a
wrong roof. This module imports no UI code.
"""

from __future__ import annotations

import fnmatch
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from jtop_roof.model.errors import UserError
from jtop_roof.roofline.calibration import ModeCalibration, parse_calibration

#: The precisions a roof can be drawn for, in display order.
PRECISIONS = ("fp64", "fp32", "fp16_tensor", "bf16_tensor", "int8_tensor")


def rate_word(precision: str | None) -> str:
    """What a precision's rate counts: ``OP`` for integer precisions (int8 counts integer
    operations), ``FLOP`` for the others (and for none named); ``OP/s``, ``OP/byte`` follow."""
    return "OP" if precision is not None and precision.lower().startswith("int") else "FLOP"


#: Fields of an entry that hold numbers a source must back (the packaged-data test checks them).
NUMERIC_FIELDS = ("memory_gb", "sms", "max_gpu_mhz", "bus_width_bits", "max_emc_mhz", "emc_data_rate_factor")

_ENTRY_KEYS = frozenset(
    {"name", "memory_type", "flop_per_clk_per_sm", "match", "rails", "sensors", "power_modes", "sources",
     *NUMERIC_FIELDS}
)
_MODE_KEYS = frozenset(
    {
        "id", "name", "watts", "cpu_cores_online", "max_cpu_mhz", "max_gpu_mhz", "max_emc_mhz",
        "tpc_pg_mask", "active_sms", "source", "calibration",
    }
)
_SHOWN_CHARS = 40


class DeviceError(UserError):
    """A bad or unknown device entry; the message is one line naming the device and the field."""


@dataclass(frozen=True, slots=True)
class PowerMode:
    """One nvpmodel mode. A clock left as None is not capped by the mode: the device maximum applies."""

    name: str
    id: int | None = None
    watts: float | None = None
    cpu_cores_online: int | None = None
    max_cpu_mhz: float | None = None
    max_gpu_mhz: float | None = None
    max_emc_mhz: float | None = None
    #: TPC_PG_MASK bits set are power-gated TPCs; tegrastats never shows this.
    tpc_pg_mask: int | None = None
    #: SMs left running by the mode; None means all of the device's SMs.
    active_sms: int | None = None
    source: str | None = None
    #: What the mode costs in energy (idle per rail, ε, π0); None: the database has none for it.
    calibration: ModeCalibration | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """A document and the fields whose numbers it backs."""

    doc: str
    covers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Device:
    """One GPU (a Jetson module or a dGPU). Optional fields are None where no document gives them."""

    id: str
    name: str
    sms: int
    #: Dense FLOP (int8: OP) per GPU clock per SM; a precision the device lacks is absent.
    flop_per_clk_per_sm: Mapping[str, float]
    memory_gb: float | None = None
    memory_type: str | None = None
    max_gpu_mhz: float | None = None
    bus_width_bits: int | None = None
    #: tegrastats' EMC_FREQ on Jetsons, NVML's memory clock on dGPUs.
    max_emc_mhz: float | None = None
    #: Bytes per bus byte per EMC clock: bandwidth = bus bytes x factor x EMC Hz.
    emc_data_rate_factor: float | None = None
    match: tuple[str, ...] = ()
    #: The power rails tegrastats prints for this module (its on-module monitor), every JetPack's
    #: names: a plain log's rails tell the module family (``roofline.inference``).
    rails: tuple[str, ...] = ()
    #: The thermal-zone names tegrastats prints for this module (any case), where they tell its
    #: family from another with the same rails (``roofline.inference``); empty: not used.
    sensors: tuple[str, ...] = ()
    power_modes: tuple[PowerMode, ...] = ()
    sources: tuple[Source, ...] = ()
    #: "packaged", "config" or "packaged+config": where the entry's values came from.
    origin: str = "packaged"

    @property
    def has_super_modes(self) -> bool:
        """Whether the entry carries the JetPack 6.2 "Super" modes (MAXN_SUPER)."""
        return any("SUPER" in mode.name.upper() for mode in self.power_modes)

    @property
    def cpu_cores(self) -> int | None:
        """The module's CPU cores: the most any of its modes puts online (None without modes)."""
        counts = [mode.cpu_cores_online for mode in self.power_modes if mode.cpu_cores_online is not None]
        return max(counts) if counts else None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _number(where: str, key: str, value: object, *, integer: bool = False, zero_ok: bool = False) -> float:
    """A finite positive number (or non-negative where zero is meaningful), bools refused."""
    kind = "an integer" if integer else "a number"
    bound = ">= 0" if zero_ok else "> 0"
    wrong_type = integer and not isinstance(value, int)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or wrong_type:
        raise DeviceError(f"{where}: {key} must be {kind} {bound}, got {_short(value)}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or (number == 0 and not zero_ok):
        raise DeviceError(f"{where}: {key} must be {kind} {bound}, got {_short(value)}")
    return number


def _opt_number(where: str, raw: Mapping[str, Any], key: str) -> float | None:
    if raw.get(key) is None:
        return None
    return _number(where, key, raw[key])


def _opt_int(where: str, raw: Mapping[str, Any], key: str, *, zero_ok: bool = False) -> int | None:
    if raw.get(key) is None:
        return None
    return int(_number(where, key, raw[key], integer=True, zero_ok=zero_ok))


def _text(where: str, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DeviceError(f"{where}: {key} must be a non-empty string, got {_short(value)}")
    return value.strip()


def _opt_text(where: str, raw: Mapping[str, Any], key: str) -> str | None:
    return None if raw.get(key) is None else _text(where, key, raw[key])


def _mapping(where: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DeviceError(f"{where}: must be a mapping, got {_short(value)}")
    for key in value:
        if not isinstance(key, str):
            raise DeviceError(f"{where}: keys must be strings, got {_short(key)}")
    return value


def _check_keys(where: str, raw: Mapping[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise DeviceError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")


def _rates(where: str, value: object) -> Mapping[str, float]:
    raw = _mapping(f"{where}: flop_per_clk_per_sm", value)
    rates: dict[str, float] = {}
    for key in PRECISIONS:
        if raw.get(key) is not None:
            rates[key] = _number(where, f"flop_per_clk_per_sm.{key}", raw[key])
    unknown = sorted(set(raw) - set(PRECISIONS))
    if unknown:
        known = "known: " + ", ".join(PRECISIONS)
        raise DeviceError(f"{where}: unknown precision {unknown[0]!r} in flop_per_clk_per_sm ({known})")
    if not rates:
        raise DeviceError(f"{where}: flop_per_clk_per_sm needs at least one of {', '.join(PRECISIONS)}")
    return MappingProxyType(rates)


def _strings(where: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise DeviceError(f"{where}: {key} must be a list of strings, got {_short(value)}")
    return tuple(_text(where, f"{key}[{i}]", item) for i, item in enumerate(value))


def _mode(where: str, value: object) -> PowerMode:
    raw = _mapping(where, value)
    _check_keys(where, raw, _MODE_KEYS)
    name = _text(where, "name", raw.get("name"))
    where = f"{where} ({name})"
    return PowerMode(
        name=name,
        id=_opt_int(where, raw, "id", zero_ok=True),
        watts=_opt_number(where, raw, "watts"),
        cpu_cores_online=_opt_int(where, raw, "cpu_cores_online"),
        max_cpu_mhz=_opt_number(where, raw, "max_cpu_mhz"),
        max_gpu_mhz=_opt_number(where, raw, "max_gpu_mhz"),
        max_emc_mhz=_opt_number(where, raw, "max_emc_mhz"),
        tpc_pg_mask=_opt_int(where, raw, "tpc_pg_mask", zero_ok=True),
        active_sms=_opt_int(where, raw, "active_sms"),
        source=_opt_text(where, raw, "source"),
        calibration=parse_calibration(where, raw["calibration"]) if raw.get("calibration") is not None
        else None,
    )


def _source(where: str, value: object) -> Source:
    raw = _mapping(where, value)
    _check_keys(where, raw, frozenset({"doc", "covers"}))
    covers = _strings(where, "covers", raw.get("covers", []))
    return Source(doc=_text(where, "doc", raw.get("doc")), covers=covers)


def _device(device_id: str, raw: Mapping[str, Any], where: str, origin: str) -> Device:
    _check_keys(where, raw, _ENTRY_KEYS)
    modes_raw = raw.get("power_modes") or []
    if not isinstance(modes_raw, list):
        raise DeviceError(f"{where}: power_modes must be a list, got {_short(modes_raw)}")
    modes = tuple(_mode(f"{where}: power_modes[{i}]", m) for i, m in enumerate(modes_raw))
    names = [mode.name.upper() for mode in modes]
    if len(set(names)) != len(names):
        raise DeviceError(f"{where}: power_modes has two modes of the same name")
    sources_raw = raw.get("sources") or []
    if not isinstance(sources_raw, list):
        raise DeviceError(f"{where}: sources must be a list, got {_short(sources_raw)}")
    if "sms" not in raw:
        raise DeviceError(f"{where}: sms is missing (the number of streaming multiprocessors)")
    if "flop_per_clk_per_sm" not in raw:
        raise DeviceError(f"{where}: flop_per_clk_per_sm is missing (FLOP per clock per SM per precision)")
    return Device(
        id=device_id,
        name=_text(where, "name", raw.get("name", device_id)),
        sms=int(_number(where, "sms", raw["sms"], integer=True)),
        flop_per_clk_per_sm=_rates(where, raw["flop_per_clk_per_sm"]),
        memory_gb=_opt_number(where, raw, "memory_gb"),
        memory_type=_opt_text(where, raw, "memory_type"),
        max_gpu_mhz=_opt_number(where, raw, "max_gpu_mhz"),
        bus_width_bits=_opt_int(where, raw, "bus_width_bits"),
        max_emc_mhz=_opt_number(where, raw, "max_emc_mhz"),
        emc_data_rate_factor=_opt_number(where, raw, "emc_data_rate_factor"),
        match=_strings(where, "match", raw.get("match") or []),
        rails=_strings(where, "rails", raw.get("rails") or []),
        sensors=_strings(where, "sensors", raw.get("sensors") or []),
        power_modes=modes,
        sources=tuple(_source(f"{where}: sources[{i}]", s) for i, s in enumerate(sources_raw)),
        origin=origin,
    )


def _merge_modes(packaged: object, user: object, where: str) -> list[Any]:
    """User modes override packaged ones of the same name field by field; new names are appended."""
    if not isinstance(user, list):
        raise DeviceError(f"{where}: power_modes must be a list, got {_short(user)}")
    merged: list[Any] = list(packaged) if isinstance(packaged, list) else []
    index = {
        str(m.get("name", "")).upper(): i for i, m in enumerate(merged) if isinstance(m, Mapping)
    }
    for i, mode in enumerate(user):
        mode = _mapping(f"{where}: power_modes[{i}]", mode)
        key = str(mode.get("name", "")).upper()
        if key in index:
            merged[index[key]] = {**merged[index[key]], **mode}
        else:
            merged.append(dict(mode))
    return merged


def _merge(packaged: Mapping[str, Any], user: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A user entry over a packaged one, field by field (rates per precision, modes per name)."""
    out = {**packaged, **user}
    if isinstance(packaged.get("flop_per_clk_per_sm"), Mapping) and "flop_per_clk_per_sm" in user:
        out["flop_per_clk_per_sm"] = {
            **packaged["flop_per_clk_per_sm"],
            **_mapping(f"{where}: flop_per_clk_per_sm", user["flop_per_clk_per_sm"]),
        }
    if "power_modes" in user:
        out["power_modes"] = _merge_modes(packaged.get("power_modes"), user["power_modes"], where)
    return out


@functools.cache
def _packaged_entries() -> Mapping[str, Any]:
    """The packaged database: our own file, read with libyaml's safe loader where PyYAML has it
    (about 15 ms instead of 190), once a process (a start with ``--device`` loads the database
    three times). Shared: what reads it copies before it changes anything."""
    text = resources.files("jtop_roof.roofline").joinpath("data/devices.yaml").read_text(encoding="utf-8")
    data = _mapping("devices.yaml", yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    return _mapping("devices.yaml: devices", data.get("devices"))


def load_devices(extra: Mapping[str, Any] | None = None) -> dict[str, Device]:
    """The packaged database, with ``extra`` (the config's ``devices:`` mapping) merged over it."""
    packaged = _packaged_entries()
    user = {} if extra is None else _mapping("config devices", extra)
    db: dict[str, Device] = {}
    for device_id in [*packaged, *(i for i in user if i not in packaged)]:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", device_id):
            raise DeviceError(f"device id {_short(device_id)} must be letters, digits, '.', '_' or '-'")
        if device_id in user:
            where = f"config devices: {device_id}"
            entry = _mapping(where, user[device_id])
            if device_id in packaged:
                raw, origin = _merge(_mapping(where, packaged[device_id]), entry, where), "packaged+config"
            else:
                raw, origin = dict(entry), "config"
        else:
            where = f"devices.yaml: {device_id}"
            raw, origin = dict(_mapping(where, packaged[device_id])), "packaged"
        db[device_id] = _device(device_id, raw, where, origin)
    return db


def _normalise(text: str) -> str:
    return " ".join(text.replace("\x00", " ").split()).lower()


def _specificity(pattern: str) -> int:
    return len(pattern.replace("*", "").replace("?", ""))


def ram_fits(device: Device, ram_total_mb: float) -> bool:
    """Whether a RAM total seen by the OS fits the module size (the OS sees 80-100% of it)."""
    if device.memory_gb is None:
        return False
    size_mb = device.memory_gb * 1024
    return 0.8 * size_mb <= ram_total_mb <= 1.02 * size_mb


def match_devices(
    db: Mapping[str, Device], model_text: str, ram_total_mb: float | None = None
) -> tuple[Device, ...]:
    """The most specific matches of a model string: one device, several (ambiguous) or none.

    Where a model string names no memory size (``NVIDIA Jetson AGX Orin``), ``ram_total_mb`` (the RAM
    total of a sample) keeps only the entries whose memory fits it.
    """
    text = _normalise(model_text)
    if not text:
        return ()
    scored: list[tuple[int, Device]] = []
    for device in db.values():
        hits = [_specificity(p) for p in device.match if fnmatch.fnmatchcase(text, _normalise(p))]
        if hits:
            scored.append((max(hits), device))
    if ram_total_mb is not None:
        fitting = [(score, device) for score, device in scored if ram_fits(device, ram_total_mb)]
        scored = fitting or scored
    if not scored:
        return ()
    best = max(score for score, _ in scored)
    return tuple(device for score, device in scored if score == best)


def _mode_key(name: str) -> str:
    return re.sub(r"[\s-]+", "_", name.strip()).upper()


def find_mode(device: Device, name_or_id: str | int) -> PowerMode | None:
    """The mode named (``7W``, ``MAXN_SUPER``, ``maxn super``) or numbered (2, ``"2"``) as nvpmodel does."""
    if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
        return next((m for m in device.power_modes if m.id == name_or_id), None)
    if not isinstance(name_or_id, str):
        return None
    key = _mode_key(name_or_id)
    by_name = next((m for m in device.power_modes if _mode_key(m.name) == key), None)
    if by_name is not None or not (key.isascii() and key.isdigit()):
        return by_name
    # Compared as text: int() of a typed number refuses "²" and anything past 4,300 digits.
    digits = key.lstrip("0") or "0"
    return next((m for m in device.power_modes if m.id is not None and str(m.id) == digits), None)

"""``jroof-tui roof``: a device's roofline ceilings at given clocks; and the text of ``roof`` and
``devices`` as plain functions: text in, text out, no argument parsing.

Both take the loaded database (packaged entries plus the config's ``devices:``) so that the command
owns config loading and printing; an unknown device or mode raises ``DeviceError`` with one line that
says how to add it. The roofline modules are imported when a command runs: every command imports
this module, and the device database's YAML must not slow ``parse`` or ``mark``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jtop_roof.commands.base import Command, fail, warn
from jtop_roof.runtime.config import Config

if TYPE_CHECKING:
    from jtop_roof.roofline.devices import Device, PowerMode

_ADD_DEVICE = (
    "add it in your config under a `devices:` key (id -> name, sms, flop_per_clk_per_sm, max_gpu_mhz, "
    "bus_width_bits, max_emc_mhz, emc_data_rate_factor, power_modes)"
)


def _title(device: Device) -> str:
    if device.has_super_modes and "super" not in device.name.lower():
        return f"{device.name} (Super modes)"
    return device.name


def _memory(device: Device) -> str:
    if device.memory_gb is None:
        return "memory size unknown"
    return " ".join(part for part in (f"{device.memory_gb:g} GB", device.memory_type) if part)


def _modes(device: Device) -> str:
    if not device.power_modes:
        return "no nvpmodel modes"
    return "modes: " + " ".join(mode.name for mode in device.power_modes)


def cmd_devices(db: Mapping[str, Device]) -> list[str]:
    """One line per device, its id first, naming the memory size and the Super modes."""
    width = max((len(device_id) for device_id in db), default=0)
    lines = []
    for device in db.values():
        parts = [device.id.ljust(width), _title(device), _memory(device), _modes(device)]
        if device.origin != "packaged":
            parts.append(f"({device.origin})")
        lines.append("  ".join(parts))
    return lines


def devices_json(db: Mapping[str, Device]) -> dict[str, Any]:
    """``devices --format json``: every entry as the database holds it, with the roof at its top
    clocks and at each mode's (derived from the entry: ``inferred``; null with a note where the
    entry cannot give one) and the documents each number rests on (``sources``: what each covers)."""
    from jtop_roof.model.info import INFERRED

    def roof(device: Device, mode: PowerMode | None) -> dict[str, Any]:
        from jtop_roof.roofline.ceilings import max_ceilings, max_clocks, missing_reason, to_json

        top = max_ceilings(device, mode)
        scope = "the device's top clocks" if mode is None else f"the {mode.name} mode's top clocks"
        if top is None:
            why = missing_reason(device, *max_clocks(device, mode))
            return {"ceilings": None, "ceilings_source": None, "ceilings_note": f"no roof at {scope}: {why}"}
        shown = {key: value for key, value in to_json(top, device, mode).items()
                 if key not in ("device", "power_mode")}
        return {"ceilings": shown, "ceilings_source": INFERRED,
                "ceilings_note": f"at {scope}, from the entry's SMs, FLOP per clock and memory bus"}

    def mode_json(device: Device, mode: PowerMode) -> dict[str, Any]:
        return {"name": mode.name, "id": mode.id, "watts": mode.watts,
                "cpu_cores_online": mode.cpu_cores_online, "max_cpu_mhz": mode.max_cpu_mhz,
                "max_gpu_mhz": mode.max_gpu_mhz, "max_emc_mhz": mode.max_emc_mhz,
                "tpc_pg_mask": mode.tpc_pg_mask, "active_sms": mode.active_sms, "source": mode.source,
                **roof(device, mode)}

    return {"devices": [{
        "id": device.id, "name": device.name, "origin": device.origin,
        "memory_gb": device.memory_gb, "memory_type": device.memory_type, "sms": device.sms,
        "flop_per_clk_per_sm": dict(device.flop_per_clk_per_sm), "max_gpu_mhz": device.max_gpu_mhz,
        "bus_width_bits": device.bus_width_bits, "max_emc_mhz": device.max_emc_mhz,
        "emc_data_rate_factor": device.emc_data_rate_factor, "match": list(device.match),
        "rails": list(device.rails), "sensors": list(device.sensors), **roof(device, None),
        "power_modes": [mode_json(device, mode) for mode in device.power_modes],
        "sources": [{"doc": source.doc, "covers": list(source.covers)} for source in device.sources],
    } for device in db.values()]}


#: No processor or memory clock comes near 100 GHz: past it a typed clock is a slip (1e300), and
#: every ceiling it gives would be infinite.
MAX_CLOCK_MHZ = 100_000.0


def _clock(
    flag: str, given: float | None, top: float | None, scope: str, device: Device, warnings: list[str]
) -> float:
    """The clock to use: as given (warned above the maximum), else the maximum."""
    from jtop_roof.roofline.devices import DeviceError

    if given is None:
        if top is None:
            what = flag[2:5].upper()
            raise DeviceError(f"{device.id} has no maximum {what} clock in the device database: pass {flag}")
        return top
    if not math.isfinite(given) or given <= 0:
        raise DeviceError(f"{flag} must be a positive number of MHz, got {given!r}")
    if given > MAX_CLOCK_MHZ:
        raise DeviceError(f"{flag} {given:g} MHz is no clock (at most {MAX_CLOCK_MHZ:g} MHz, 100 GHz)")
    if top is not None and given > top:
        warnings.append(f"warning: {flag} {given:g} is above {scope} maximum of {top:g} MHz; used as given")
    return given


def _mode(device: Device, power_mode: str | None) -> PowerMode | None:
    from jtop_roof.roofline.devices import DeviceError, find_mode

    if power_mode is None:
        return None
    mode = find_mode(device, power_mode)
    if mode is None:
        known = " ".join(m.name for m in device.power_modes) or "none"
        raise DeviceError(
            f"unknown power mode {power_mode!r} for {device.id} (known: {known}); add it in your config "
            f"under a `devices:` key, as {device.id} -> power_modes (name, id, max_gpu_mhz, max_emc_mhz, "
            "active_sms)"
        )
    return mode


def cmd_roof(
    db: Mapping[str, Device],
    device_id: str,
    gpu_mhz: float | None,
    emc_mhz: float | None,
    power_mode: str | None,
    as_json: bool,
) -> tuple[str, list[str]]:
    """(stdout text, stderr warnings) for ``roof``: the ceilings at the given clocks, else the maxima."""
    from jtop_roof.model.metrics import fmt_si_unit
    from jtop_roof.roofline.ceilings import (
        ceilings,
        max_ceilings,
        max_clocks,
        missing_reason,
        roof_fraction,
        to_json,
    )
    from jtop_roof.roofline.devices import PRECISIONS, DeviceError, rate_word

    device = db.get(device_id)
    if device is None:
        raise DeviceError(f"unknown device {device_id!r} (`jroof-tui devices` lists the ids); {_ADD_DEVICE}")
    mode = _mode(device, power_mode)
    top_gpu, top_emc = max_clocks(device, mode)
    scope = f"the {mode.name} mode's" if mode is not None else f"{device.id}'s"
    warnings: list[str] = []
    gpu = _clock("--gpu-mhz", gpu_mhz, top_gpu, scope, device, warnings)
    emc = _clock("--emc-mhz", emc_mhz, top_emc, scope, device, warnings)
    roof = ceilings(device, gpu, emc, mode)
    if roof is None:
        raise DeviceError(f"no roof for {device.id}: {missing_reason(device, gpu, emc)}")
    if as_json:
        return json.dumps(to_json(roof, device, mode), indent=2), warnings

    mode_text = "no power mode given" if mode is None else f"power mode {mode.name}"
    if mode is not None and mode.id is not None:
        mode_text += f" (id {mode.id})"
    lines = [
        f"{_title(device)} [{device.id}], {mode_text}: {roof.sms} of {device.sms} SMs active",
        f"clocks: GPU {gpu:g} MHz, EMC {emc:g} MHz",
        f"memory bandwidth: {fmt_si_unit(roof.bandwidth_bytes_per_s, 'B/s')}",
    ]
    for precision, peak in roof.peak_flops_per_s.items():
        unit = rate_word(precision)
        ridge = roof.ridge_flop_per_byte[precision]
        lines.append(f"  {precision:<12} {fmt_si_unit(peak, unit + '/s')}  ridge {ridge:.3g} {unit}/B")
    absent = [p for p in PRECISIONS if p not in roof.peak_flops_per_s]
    if absent:
        lines.append(f"not in the database for this device: {', '.join(absent)}")
    top = max_ceilings(device, mode)
    first = next(iter(roof.peak_flops_per_s))
    fraction = None if top is None else roof_fraction(roof, top, first)
    if top is not None and fraction is not None and (gpu, emc) != (top.gpu_mhz, top.emc_mhz):
        compute = roof.peak_flops_per_s[first] / top.peak_flops_per_s[first]
        bandwidth = roof.bandwidth_bytes_per_s / top.bandwidth_bytes_per_s
        lines.append(
            f"these clocks give {fraction:.0%} of {scope} roof "
            f"(compute {compute:.0%}, bandwidth {bandwidth:.0%})"
        )
    return "\n".join(lines), warnings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", metavar="ID", default=argparse.SUPPRESS,
                        help="device-database id (default: the config's `device`)")
    parser.add_argument("--gpu-mhz", metavar="F", type=float, dest="gpu_mhz", default=None)
    parser.add_argument("--emc-mhz", metavar="F", type=float, dest="emc_mhz", default=None,
                        help="memory clock (tegrastats' EMC_FREQ; NVML's memory clock on a dGPU)")
    parser.add_argument("--power-mode", metavar="NAME", dest="power_mode", default=argparse.SUPPRESS,
                        help="the nvpmodel mode whose top clocks are the default (default: the config's "
                        "`power_mode`, else the device's top clocks)")
    parser.add_argument("--json", action="store_true", help="JSON with the documented keys")
    parser.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS, help="config file")


def run(args: argparse.Namespace, config: Config) -> int:
    """The device and mode as every command takes them (flag > config > none: ``Config``)."""
    from jtop_roof.roofline.devices import load_devices

    if config.device is None:
        return fail("roof needs a device: --device ID, or the config key 'device' "
                    "(`jroof-tui devices` lists the ids)")
    db = load_devices(config.devices)
    text, warnings = cmd_roof(db, config.device, args.gpu_mhz, args.emc_mhz, config.power_mode, args.json)
    for warning in warnings:
        warn(warning)
    print(text)
    return 0


COMMAND = Command(
    name="roof",
    help="the roofline ceilings of a device at given clocks",
    description="Peak FLOP/s per precision, memory bandwidth and ridge points at the given clocks "
    "(default: the power mode's maximum, else the device's).",
    epilog="example: jroof-tui roof --device orin-nano-8gb-super --gpu-mhz 612 --emc-mhz 2133",
    add_arguments=add_arguments,
    run=run,
)

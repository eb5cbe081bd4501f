"""A measured roof read back: what ``jroof-tui probe`` wrote, checked and typed as a frozen
:class:`Probe` for the roofline pane and reports. A bad file is one line (:class:`ProbeError`),
never a traceback. Measuring lives in ``jtop_roof.probe``; reading lives here, so the board and the
panes never import the measuring code."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from jtop_roof.formats.userfiles import read_small_file
from jtop_roof.model.codec import encodable_tree
from jtop_roof.model.errors import UserError
from jtop_roof.roofline.calibration import CalibrationError, Figure, ModeCalibration, parse_figure

FORMAT = "jroof-probe"
SCHEMA = 1
MAX_PROBE_BYTES = 1 << 20
BANDWIDTH_KINDS = ("copy", "triad")


class ProbeError(UserError):
    """A probe that cannot run, or a probe file that cannot be used; the message is one line."""


@dataclass(frozen=True, slots=True)
class Range:
    """Mean, minimum and maximum of a clock (MHz) over a measurement's samples."""

    mean: float
    min: float
    max: float


@dataclass(frozen=True, slots=True)
class MeasuredCeiling:
    """One measured ceiling: bytes/s (bandwidth) or FLOP/s (compute; OP/s for int8)."""

    name: str
    kind: str  # "bandwidth" | "compute"
    value: float
    #: value per MHz of ``clock`` (``emc``, ``gpu`` or ``cpu``); None where no clock was seen.
    per_mhz: float | None
    clock: str
    size: int
    seconds: float
    repeats: int
    gpu_mhz: Range | None = None
    emc_mhz: Range | None = None
    cpu_mhz: Range | None = None
    power_w_mean: float | None = None
    power_w_max: float | None = None
    #: ε per FLOP (compute) or per byte (bandwidth) over the timed runs; None in a file from before
    #: the probe measured energy.
    eps_j: Figure | None = None

    def at(self, mhz: float | None, clock: str | None = None) -> float | None:
        """The ceiling at another clock of its kind (``clock``: which one ``mhz`` is, checked
        against the entry's), where the per-MHz figure is known."""
        if self.per_mhz is None or mhz is None or not mhz > 0 or (clock is not None and clock != self.clock):
            return None
        return self.per_mhz * mhz


@dataclass(frozen=True, slots=True)
class Probe:
    """A probe result read back: what the roofline pane draws beside the datasheet roofs, labelled
    ``measured`` (verdicts stay on the datasheet roofs)."""

    device: str | None
    power_mode: str | None
    backend: str
    device_kind: str
    quick: bool
    measured_at: str | None
    bandwidth: Mapping[str, MeasuredCeiling]
    compute: Mapping[str, MeasuredCeiling]
    device_name: str | None = None
    note: str | None = None
    path: str | None = None
    label: str = field(default="measured")
    #: The power with the device idle before the kernels (π0) and each rail's; None / empty in a
    #: file from before the probe measured energy.
    pi0_w: Figure | None = None
    idle_w: Mapping[str, Figure] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def best_bandwidth(self) -> MeasuredCeiling | None:
        """The higher of copy and triad (ERT keeps the best plateau)."""
        return max(self.bandwidth.values(), key=lambda c: c.value, default=None)

    @property
    def bandwidth_bytes_per_s(self) -> float | None:
        best = self.best_bandwidth
        return None if best is None else best.value

    def summary(self) -> str:
        """One line: where the roofs come from."""
        where = self.device_name or self.device_kind.upper()
        mode = f" {self.power_mode}" if self.power_mode else ""
        quick = ", quick" if self.quick else ""
        return f"measured ({self.backend} on {where}{mode}, {self.measured_at or 'undated'}{quick})"


_NAME = re.compile(r"[a-z0-9_]{1,32}")
_MAX_ENTRIES = 16
_LIMITS = {"bytes_per_s": 1e16, "flops_per_s": 1e19, "mhz": 1e5, "power": 1e5, "size": 1e15,
           "seconds": 1e6, "repeats": 1e6}


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, what: str, value: object) -> ProbeError:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return ProbeError(f"{self.where}: {key}: expected {what}, got {shown}")

    def number(self, obj: Mapping[str, Any], key: str, where: str, limit: float, *, optional: bool = False,
               zero_ok: bool = False) -> float | None:
        value = obj.get(key)
        if value is None and optional:
            return None
        # Bounds before isfinite: an int of 400 digits overflows a float, but compares exactly.
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value > limit
                or not math.isfinite(value) or (value == 0 and not zero_ok)):
            raise self.fail(f"{where}.{key}", f"a positive number up to {limit:g}", value)
        return float(value)

    def text(self, obj: Mapping[str, Any], key: str, *, limit: int = 200) -> str | None:
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(key, "a string or null", value)
        return value[:limit]

    def range(self, obj: Mapping[str, Any], key: str, where: str) -> Range | None:
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(f"{where}.{key}", "{mean, min, max} or null", value)
        lim = _LIMITS["mhz"]
        mean, low, high = (self.number(value, k, f"{where}.{key}", lim, zero_ok=True)
                           for k in ("mean", "min", "max"))
        assert mean is not None and low is not None and high is not None
        if not low <= mean <= high:
            raise self.fail(f"{where}.{key}", "min <= mean <= max", value)
        return Range(mean, low, high)

    def ceiling(self, name: str, raw: object, kind: str) -> MeasuredCeiling:
        group = "bandwidth" if kind == "bandwidth" else "compute"
        where = f"{group}.{name}"
        if not isinstance(raw, Mapping):
            raise self.fail(where, "an object", raw)
        unit, clock_default = ("bytes_per_s", "emc") if kind == "bandwidth" else ("flops_per_s", "gpu")
        value = self.number(raw, unit, where, _LIMITS[unit])
        assert value is not None
        per_mhz = None
        clock = clock_default
        for candidate in ("emc", "gpu", "cpu"):
            found = self.number(raw, f"{unit}_per_{candidate}_mhz", where, _LIMITS[unit], optional=True)
            if found is not None:
                per_mhz, clock = found, candidate
                break
        size = self.number(raw, "size", where, _LIMITS["size"])
        seconds = self.number(raw, "seconds", where, _LIMITS["seconds"])
        repeats = self.number(raw, "repeats", where, _LIMITS["repeats"])
        assert size is not None and seconds is not None and repeats is not None
        clocks = raw.get("clocks") or {}
        if not isinstance(clocks, Mapping):
            raise self.fail(f"{where}.clocks", "an object", clocks)
        power = raw.get("power_w")
        if power is not None and not isinstance(power, Mapping):
            raise self.fail(f"{where}.power_w", "{mean, max} or null", power)
        power_mean = power_max = None
        if power is not None:
            power_mean = self.number(power, "mean", f"{where}.power_w", _LIMITS["power"], zero_ok=True)
            power_max = self.number(power, "max", f"{where}.power_w", _LIMITS["power"], zero_ok=True)
        where_clocks = f"{where}.clocks"
        eps_key = "eps_byte_j" if kind == "bandwidth" else "eps_flop_j"
        return MeasuredCeiling(
            name=name, kind=kind, value=value, per_mhz=per_mhz, clock=clock, size=int(size), seconds=seconds,
            repeats=int(repeats), gpu_mhz=self.range(clocks, "gpu_mhz", where_clocks),
            emc_mhz=self.range(clocks, "emc_mhz", where_clocks),
            cpu_mhz=self.range(clocks, "cpu_mhz", where_clocks),
            power_w_mean=power_mean, power_w_max=power_max,
            eps_j=self.figure(raw, eps_key, where),
        )

    def figure(self, obj: Mapping[str, Any], key: str, where: str) -> Figure | None:
        """A ``{value, source, note}`` figure (``calibration.parse_figure``), or None where absent."""
        value = obj.get(key)
        if value is None:
            return None
        try:
            return parse_figure(f"{self.where}: {where}.{key}", value)
        except CalibrationError as exc:
            raise ProbeError(str(exc)) from None

    def idle(self, raw: Mapping[str, Any]) -> tuple[Figure | None, Mapping[str, Figure]]:
        block = raw.get("idle")
        if block is None:
            return None, MappingProxyType({})
        if not isinstance(block, Mapping):
            raise self.fail("idle", "an object or null", block)
        rails = block.get("idle_w") or {}
        if not isinstance(rails, Mapping) or len(rails) > _MAX_ENTRIES:
            raise self.fail("idle.idle_w", f"an object of at most {_MAX_ENTRIES} rails", rails)
        figures = {}
        for name in rails:
            figure = self.figure(rails, name, "idle.idle_w") if isinstance(name, str) else None
            if figure is not None:
                figures[name[:32]] = figure
        return self.figure(block, "pi0_w", "idle"), MappingProxyType(figures)

    def group(self, raw: Mapping[str, Any], key: str, kind: str) -> Mapping[str, MeasuredCeiling]:
        entries = raw.get(key)
        if entries is None:
            entries = {}
        if not isinstance(entries, Mapping):
            raise self.fail(key, "an object", entries)
        if len(entries) > _MAX_ENTRIES:
            raise ProbeError(f"{self.where}: {key}: more than {_MAX_ENTRIES} entries")
        out = {}
        for name, value in entries.items():
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise self.fail(key, "entry names of a-z, 0-9 and _", name)
            if kind == "bandwidth" and name not in BANDWIDTH_KINDS:
                continue  # a later kind this version does not draw
            out[name] = self.ceiling(name, value, kind)
        return MappingProxyType(out)


def parse_probe(raw: object, where: str = "probe") -> Probe:
    """Check and type a probe result (a parsed JSON object); ProbeError names the bad field."""
    reader = _Reader(where)
    if not isinstance(raw, Mapping) or raw.get("format") != FORMAT:
        raise ProbeError(f"{where}: not a jroof probe result (no \"format\": \"{FORMAT}\")")
    schema = raw.get("schema")
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 1:
        raise reader.fail("schema", "a positive integer", schema)
    if schema > SCHEMA:
        raise ProbeError(f"{where}: written by a newer jroof (probe schema {schema}; "
                         f"this one reads {SCHEMA})")
    backend = reader.text(raw, "backend", limit=32)
    kind = raw.get("device_kind")
    if backend is None:
        raise reader.fail("backend", "a string", None)
    if kind not in ("gpu", "cpu"):
        raise reader.fail("device_kind", "\"gpu\" or \"cpu\"", kind)
    quick = raw.get("quick", False)
    if not isinstance(quick, bool):
        raise reader.fail("quick", "true or false", quick)
    bandwidth = reader.group(raw, "bandwidth", "bandwidth")
    compute = reader.group(raw, "compute", "compute")
    if not bandwidth and not compute:
        raise ProbeError(f"{where}: no measured ceiling (bandwidth and compute are empty)")
    pi0_w, idle_w = reader.idle(raw)
    return Probe(
        device=reader.text(raw, "device", limit=64), power_mode=reader.text(raw, "power_mode", limit=64),
        backend=backend, device_kind=str(kind), quick=quick,
        measured_at=reader.text(raw, "measured_at", limit=64),
        bandwidth=bandwidth, compute=compute, device_name=reader.text(raw, "device_name", limit=120),
        note=reader.text(raw, "note", limit=2000), pi0_w=pi0_w, idle_w=idle_w,
    )


def probe_calibration(probe: Probe) -> ModeCalibration | None:
    """The probe's energy terms as its mode's calibration (π0, idle per rail, ε per precision, ε per
    byte of its best bandwidth entry), or None where it measured no π0 (a file from before the probe
    measured energy, or a machine whose power it could not read)."""
    if probe.pi0_w is None or probe.pi0_w.value is None:
        return None
    best = probe.best_bandwidth
    eps_byte = None if best is None else best.eps_j
    if eps_byte is None:
        eps_byte = Figure(None, None, "the probe measured no ε per byte")
    eps_flop = {name: ceiling.eps_j for name, ceiling in probe.compute.items() if ceiling.eps_j is not None}
    where = f" {probe.path}" if probe.path else ""
    return ModeCalibration(
        idle_w=probe.idle_w, pi0_w=probe.pi0_w, eps_flop_j=MappingProxyType(eps_flop), eps_byte_j=eps_byte,
        note=f"measured by jroof-tui probe{where} ({probe.measured_at or 'undated'}"
             f"{', ε per byte from ' + best.name if best is not None else ''})")


def load_probe(path: str | os.PathLike[str]) -> Probe:
    """Read a probe file (a regular file of at most 1 MiB, opened without blocking: a FIFO is
    refused at once); ProbeError with one line for anything wrong."""
    name = os.fspath(path)
    try:
        text = read_small_file(Path(name), MAX_PROBE_BYTES)
    except OSError as exc:
        raise ProbeError(f"cannot read probe {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProbeError(f"{name}: not JSON ({exc.reason} at byte {exc.start})") from None
    try:
        raw = encodable_tree(json.loads(text, parse_constant=_no_constant))
    except (ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProbeError(f"{name}: not JSON ({first[:120]})") from None
    return replace(parse_probe(raw, name), path=name)


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not a number")

"""The workload spec (``--workload FILE``): what one iteration of the profiled workload does.

A small YAML mapping::

    name: resnet50 int8 b1        # shown as the point's label
    precision: int8               # the roof it is judged against (see PRECISION_ALIASES)
    macs_per_iter: 4.1e+9         # or flops_per_iter: 8.2e+9 (FLOPs = 2 x MACs); exactly one
    bytes_per_iter: [2.6e+7, 1.2e+8]   # DRAM bytes: one number, or [low, high]
    notes: weights + I/O (low), every tensor unfused (high)   # optional, free text

Numbers may be written as YAML numbers or as strings Python reads as a float (``"8.2e9"``: plain
YAML reads ``8.2e9`` without a sign in the exponent as text). Model tools mostly count MACs (fvcore's
"flops", thop, ptflops): write ``macs_per_iter`` for them and the FLOPs are doubled here, never
guessed. ``flops_per_iter`` may be 0 (a copy: memory-bound, judged by bytes/s); bytes must be
positive. Either may be left out (FLOPs without bytes place the rate but no intensity; bytes without
FLOPs are a copy), not both. DRAM bytes are a range because TensorRT fusion puts the real traffic
between ``weights + inputs + outputs`` and every tensor unfused; the point is drawn as an interval
``[FLOPs / high, FLOPs / low]`` when the bounds differ.

The file is hostile input: read with ``userfiles.read_small_file`` (a regular file of at most 1 MiB)
and ``userfiles.load_yaml`` (safe loader, alias bombs refused); every field is checked, and every error
is a ``WorkloadError`` of one line naming the file and the field. This module imports no UI code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jtop_roof.formats.userfiles import YamlError, load_yaml, read_small_file, shown
from jtop_roof.model.errors import UserError
from jtop_roof.roofline.devices import PRECISIONS

#: Names a spec may use for the device database's precisions. TensorRT runs fp16/bf16/int8 on the
#: tensor cores, so the short names mean the tensor roof; write fp32 for CUDA-core work.
PRECISION_ALIASES: Mapping[str, str] = {
    **{p: p for p in PRECISIONS},
    "fp16": "fp16_tensor",
    "half": "fp16_tensor",
    "bf16": "bf16_tensor",
    "int8": "int8_tensor",
    "float": "fp32",
    "float32": "fp32",
    "double": "fp64",
    "float64": "fp64",
}
#: Far beyond any single iteration (a trillion-parameter model's forward pass is ~2e12 FLOPs per
#: token; an exaFLOP per iteration or a petabyte of traffic is a typo or a unit error).
MAX_FLOPS_PER_ITER = 1e18
MAX_BYTES_PER_ITER = 1e15
MAX_NAME_CHARS = 120
MAX_NOTES_CHARS = 2000
_KEYS = ("name", "precision", "flops_per_iter", "macs_per_iter", "bytes_per_iter", "notes")


class WorkloadError(UserError):
    """A workload spec that cannot be used; the message is one line naming the file and the field."""


@dataclass(frozen=True, slots=True)
class Workload:
    """One iteration's work. ``flops_per_iter`` is in FLOPs (MACs were doubled: ``counted_as`` says
    which the file gave); bytes are DRAM bytes per iteration, ``low == high`` for a single figure.
    Intensities are FLOP per byte: ``intensity_low = flops / bytes_high``, ``intensity_high = flops
    / bytes_low``; None without both."""

    name: str
    precision: str
    flops_per_iter: float | None
    counted_as: str | None  # "flops" or "macs": what the spec gave
    bytes_per_iter_low: float | None
    bytes_per_iter_high: float | None
    notes: str | None = None

    @property
    def intensity_low(self) -> float | None:
        if self.flops_per_iter is None or self.bytes_per_iter_high is None:
            return None
        return self.flops_per_iter / self.bytes_per_iter_high

    @property
    def intensity_high(self) -> float | None:
        if self.flops_per_iter is None or self.bytes_per_iter_low is None:
            return None
        return self.flops_per_iter / self.bytes_per_iter_low


@dataclass(frozen=True, slots=True)
class Point:
    """The workload on the roofline over a window: FLOP/s achieved and the intensity range.

    ``achieved_flops_per_s`` = FLOPs per iteration x iterations / seconds; ``bytes_per_s_*`` the DRAM
    traffic rate the spec implies (what a copy's efficiency is judged by). None where the spec lacks
    the FLOPs or the bytes."""

    iterations_per_s: float
    achieved_flops_per_s: float | None
    intensity_low: float | None
    intensity_high: float | None
    bytes_per_s_low: float | None
    bytes_per_s_high: float | None

    @property
    def intensity(self) -> tuple[float, float] | None:
        if self.intensity_low is None or self.intensity_high is None:
            return None
        return (self.intensity_low, self.intensity_high)


def point(workload: Workload, iterations: float, seconds: float) -> Point:
    """Place ``workload`` after ``iterations`` in ``seconds`` (the timed window, never warm-up).

    WorkloadError when iterations is negative or not finite or seconds is not a positive finite number."""
    if isinstance(iterations, bool) or not isinstance(iterations, (int, float)) or not (
        math.isfinite(iterations) and iterations >= 0
    ):
        raise WorkloadError(
            f"workload {workload.name!r}: iterations must be a number >= 0, got {iterations!r}"
        )
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (
        math.isfinite(seconds) and seconds > 0
    ):
        raise WorkloadError(f"workload {workload.name!r}: seconds must be a number > 0, got {seconds!r}")
    rate = iterations / seconds
    flops = None if workload.flops_per_iter is None else workload.flops_per_iter * rate
    low = None if workload.bytes_per_iter_low is None else workload.bytes_per_iter_low * rate
    high = None if workload.bytes_per_iter_high is None else workload.bytes_per_iter_high * rate
    return Point(
        iterations_per_s=rate,
        achieved_flops_per_s=flops,
        intensity_low=workload.intensity_low,
        intensity_high=workload.intensity_high,
        bytes_per_s_low=low,
        bytes_per_s_high=high,
    )


def _number(where: str, key: str, value: Any, *, maximum: float, allow_zero: bool) -> float:
    bound = f"a number {'>= 0' if allow_zero else '> 0'} and at most {maximum:g}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise WorkloadError(f"{where}: '{key}': expected {bound}, got {type(value).__name__}")
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise WorkloadError(f"{where}: '{key}': expected {bound}, got {shown(value)}") from None
    else:
        try:
            number = float(value)
        except OverflowError:  # an int of 400 digits
            raise WorkloadError(f"{where}: '{key}': expected {bound}, got a number too large") from None
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero) or number > maximum:
        raise WorkloadError(f"{where}: '{key}': expected {bound}, got {shown(value)}")
    return number


def _text(where: str, key: str, value: Any, limit: int, *, lines: bool = False) -> str:
    if not isinstance(value, str):
        raise WorkloadError(f"{where}: '{key}': expected text, got {type(value).__name__}")
    text = value.strip()
    allowed = "\t\n" if lines else "\t"
    control = any((ord(c) < 32 or ord(c) == 127) and c not in allowed for c in text)
    if not text or len(text) > limit or control:
        kind = "text" if lines else "one line"
        raise WorkloadError(
            f"{where}: '{key}': expected {kind} of 1 to {limit} characters, got {shown(value)}"
        )
    return text


def workload_from_mapping(data: Any, where: str = "workload") -> Workload:
    """Check and convert a parsed spec; ``where`` names it in errors (``workload file PATH``)."""
    if not isinstance(data, dict):
        raise WorkloadError(f"{where}: expected a mapping with name, precision, flops_per_iter or "
                            "macs_per_iter, bytes_per_iter")
    for key in data:
        if key not in _KEYS:
            raise WorkloadError(f"{where}: {shown(key)}: unknown key (known: {', '.join(_KEYS)})")
    if "name" not in data:
        raise WorkloadError(f"{where}: 'name': missing")
    name = _text(where, "name", data["name"], MAX_NAME_CHARS)
    if "precision" not in data:
        raise WorkloadError(f"{where}: 'precision': missing (one of {', '.join(PRECISION_ALIASES)})")
    raw_precision = data["precision"]
    canonical = (
        PRECISION_ALIASES.get(raw_precision.strip().lower()) if isinstance(raw_precision, str) else None
    )
    if canonical is None:
        known = ", ".join(PRECISION_ALIASES)
        raise WorkloadError(f"{where}: 'precision': expected one of {known}, got {shown(raw_precision)}")
    if "flops_per_iter" in data and "macs_per_iter" in data:
        raise WorkloadError(
            f"{where}: 'flops_per_iter' and 'macs_per_iter' both given: give one (FLOPs = 2 x MACs)"
        )
    flops: float | None = None
    counted_as: str | None = None
    if "flops_per_iter" in data:
        flops = _number(
            where, "flops_per_iter", data["flops_per_iter"], maximum=MAX_FLOPS_PER_ITER, allow_zero=True
        )
        counted_as = "flops"
    elif "macs_per_iter" in data:
        macs = _number(where, "macs_per_iter", data["macs_per_iter"], maximum=MAX_FLOPS_PER_ITER / 2,
                       allow_zero=True)
        flops, counted_as = 2.0 * macs, "macs"
    low: float | None = None
    high: float | None = None
    if "bytes_per_iter" in data:
        raw = data["bytes_per_iter"]
        if isinstance(raw, list):
            if len(raw) != 2:
                raise WorkloadError(f"{where}: 'bytes_per_iter': expected one number or [low, high], "
                                    f"got a list of {len(raw)}")
            low = _number(where, "bytes_per_iter[0]", raw[0], maximum=MAX_BYTES_PER_ITER, allow_zero=False)
            high = _number(where, "bytes_per_iter[1]", raw[1], maximum=MAX_BYTES_PER_ITER, allow_zero=False)
            if low > high:
                raise WorkloadError(f"{where}: 'bytes_per_iter': low {low:g} is above high {high:g}")
        else:
            low = high = _number(where, "bytes_per_iter", raw, maximum=MAX_BYTES_PER_ITER, allow_zero=False)
    if flops is None and low is None:
        raise WorkloadError(f"{where}: give flops_per_iter (or macs_per_iter), bytes_per_iter, or both")
    notes = None
    if data.get("notes") is not None:
        notes = _text(where, "notes", data["notes"], MAX_NOTES_CHARS, lines=True)
    return Workload(
        name=name,
        precision=canonical,
        flops_per_iter=flops,
        counted_as=counted_as,
        bytes_per_iter_low=low,
        bytes_per_iter_high=high,
        notes=notes,
    )


def load_workload(path: str | Path) -> Workload:
    """Read a workload spec file; every error is one line naming the file (and the field)."""
    where = f"workload file {path}"
    try:
        text = read_small_file(Path(path))
    except OSError as exc:
        raise WorkloadError(f"cannot read workload file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise WorkloadError(f"{where}: not UTF-8 text") from None
    try:
        data = load_yaml(text)
    except YamlError as exc:
        raise WorkloadError(f"{where}{exc}") from None
    if data is None:
        raise WorkloadError(f"{where}: empty")
    return workload_from_mapping(data, where)

"""Nsight Compute CSV exports (``ncu --csv``) -> one roofline point per profiled kernel launch.

Both layouts are read (real exports in ``../shared/research/h200_probe``):

* long (the default page): identity columns, then ``Metric Name``, ``Metric Unit``, ``Metric Value``,
  one row per kernel x metric; with or without ``Block Size``/``Grid Size``/``Device``/``CC`` (ncu
  2025) or a ``Kernel Time`` column (ncu 2020), and with or without the five rule columns
  ``--section`` adds;
* raw (``--page raw``): one row per kernel, one column per metric instance (``dram__bytes.sum``,
  ``.avg``, ...), the second row holding the units.

Progress lines (``==PROF==``, ``==WARNING==``, the command echo) before the header are skipped. Values
carry thousands separators (``"2,214,592,512"``; a file written in a decimal-comma locale,
``"1.976.713.263,33"``, is recognised as a whole); ``n/a`` is a metric ncu could not collect. Units
are converted to base units from what the file says: ``nsecond``/``usecond``/``msecond``/``second``
(and ``ns``/``us``/``ms``/``s``), ``byte``/``Kbyte``/``Mbyte``/``Gbyte``/``Tbyte`` (decimal, as
Nsight prints them; ``KiB``/``Kibyte`` binary), ``hz``/``Khz``/``Mhz``/``Ghz``, rates ``X/second``
or ``X/nsecond``..., ``inst``, ``cycle``, and counts with a K/M/G/T prefix.

What counts, per kernel (``roofline.md`` section 1.2 and 1.3: the NERSC recipe and Nsight's own
Speed-of-Light roofline):

* duration: ``gpu__time_duration.sum``; else ``Duration`` (the display name a ``--section``/``--set``
  export prints; such an export has no metric names to count FLOPs or bytes from, so those stay None);
  else ``sm__cycles_elapsed.avg`` / ``sm__cycles_elapsed.avg.per_second``.
* FLOPs: the CUDA-core part is, for each of ``d`` (fp64), ``f`` (fp32) and ``h`` (fp16),
  ``{p}add + {p}mul + 2 x {p}fma`` over ``sm__sass_thread_inst_executed_op_{p}{add,mul,fma}_pred_on.sum``
  (thread-level instructions, predicated-off threads excluded; an FMA is two FLOPs; the ``smsp__``
  metric of the same name is used where the ``sm__`` one is absent). The tensor-core part is the sum of
  the ``sm__ops_path_tensor_*.sum`` metrics, which count operations (an FMA is two), so a dense bf16
  GEMM of N^3 shows about 2 N^3 (1.6 % more on the H200 export: tile padding). A coarser tensor metric
  (``sm__ops_path_tensor_src_bf16``) replaces the finer ones it covers
  (``..._op_hgmma_src_bf16_dst_fp32_sparsity_off``) so nothing is counted twice. Without those
  metrics, ``512 x sm__inst_executed_pipe_tensor.sum`` counts tensor work on Volta (CC 7.0 and 7.2)
  only, the parts the recipe was written for; elsewhere executed tensor instructions leave the FLOPs
  unknown (None, with ``flops_note`` saying why) rather than undercounted. An export with no tensor
  metric at all gives the CUDA-core FLOPs and a note that tensor work, if any, is not in them. Integer
  (int8) tensor operations are counted the same way, as operations.
* DRAM bytes: ``dram__bytes.sum``; else ``dram__bytes_read.sum + dram__bytes_write.sum``. Jetson Orin
  and Thor have no ``dram__`` metrics (ncu lists none for ga10b): their bytes are None.
* achieved FLOP/s = FLOPs / duration; intensity = FLOPs / DRAM bytes.

Bad input (no header, a value that is not a number, a unit that cannot be the metric's, a negative
count) raises ``NcuError`` with one line naming the file. This module imports no UI code.
"""

from __future__ import annotations

import csv
import errno
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from jtop_roof.model.errors import UserError

#: Bounds on an export (a report puts every kernel on the roof): past them it is refused in one
#: line before it takes much memory or time. Reading holds about 200 bytes per metric value.
MAX_CSV_BYTES = 128 << 20
MAX_KERNELS = 10_000
MAX_METRIC_VALUES = 500_000
MAX_LINE_CHARS = 1 << 20
_FEWER = "profile fewer launches (ncu --launch-count or --kernel-name)"

DURATION = "gpu__time_duration.sum"
DRAM_BYTES = "dram__bytes.sum"
DRAM_READ, DRAM_WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"
PIPE_TENSOR = "sm__inst_executed_pipe_tensor.sum"
#: FLOPs per tensor-pipe warp instruction on Volta (HMMA.884), the NERSC recipe's factor.
VOLTA_TENSOR_FLOPS_PER_INST = 512
_VOLTA_CC = ("7.0", "7.2")
_SASS = "sass_thread_inst_executed_op_{op}_pred_on.sum"
#: CUDA-core FLOP weights: precision -> (metric op, FLOPs per thread instruction).
_SASS_OPS: Mapping[str, tuple[tuple[str, int], ...]] = {
    "fp64": (("dadd", 1), ("dmul", 1), ("dfma", 2)),
    "fp32": (("fadd", 1), ("fmul", 1), ("ffma", 2)),
    "fp16": (("hadd", 1), ("hmul", 1), ("hfma", 2)),
}
_TENSOR = re.compile(r"sm__ops_path_tensor_(\w+?)\.sum")
_IDENTITY = frozenset({
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "CC", "Section Name", "Rule Name", "Rule Type",
    "Rule Description", "Estimated Speedup Type", "Estimated Speedup", "Metric Name", "Metric Unit",
    "Metric Value", "Function Name", "Demangled Name", "Mangled Name",
})


class NcuError(UserError):
    """An export that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True, slots=True)
class Kernel:
    """One profiled kernel launch, every quantity in base units (s, FLOP, byte, Hz).

    ``flops_parts`` splits ``flops`` into ``fp64``, ``fp32``, ``fp16`` (CUDA cores) and ``tensor``,
    only the parts the export measured. ``metrics`` holds every numeric metric of the kernel in base
    units (those with a unit not understood are left out of it)."""

    id: str
    name: str
    device: str | None
    cc: str | None
    duration_s: float | None
    flops: float | None
    flops_parts: Mapping[str, float]
    #: Why ``flops`` is None or may be incomplete; None when every FLOP source was measured.
    flops_note: str | None
    dram_bytes: float | None
    #: SM clock measured while the kernel ran (``sm__cycles_elapsed.avg.per_second``), Hz.
    sm_hz: float | None
    metrics: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def achieved_flops_per_s(self) -> float | None:
        if self.flops is None or not self.duration_s:
            return None
        return self.flops / self.duration_s

    @property
    def intensity(self) -> float | None:
        """FLOP per DRAM byte; None without both (or with 0 bytes)."""
        if self.flops is None or not self.dram_bytes:
            return None
        return self.flops / self.dram_bytes


# -- units -------------------------------------------------------------------------------------------
_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}
_TIME = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
         "second": 1.0, "sec": 1.0, "s": 1.0}
_COUNTS = ("inst", "cycle", "sector", "request", "warp", "thread", "block", "wavefront", "op", "ops",
           "transaction", "instruction", "count")


def _unit_scale(unit: str) -> tuple[float, str] | None:
    """(factor to base units, kind) for a unit string; kind is ``time``, ``byte``, ``hz``, ``count``,
    ``byte/s``, ``count/s``, ``ratio``... None when not understood."""
    u = unit.strip()
    if u in ("", "%", "percent"):
        return 1.0, "count" if u == "" else "ratio"
    if "/" in u:
        num, _, den = u.partition("/")
        top = _unit_scale(num)
        if den in _TIME:
            if top is None:
                return None
            return top[0] / _TIME[den], f"{top[1]}/s"
        bottom = _unit_scale(den)
        if top is None or bottom is None:
            return None
        return top[0] / bottom[0], f"{top[1]}/{bottom[1]}"
    if u in _TIME:
        return _TIME[u], "time"
    lower = u.lower()
    if lower.endswith("hz"):
        prefix = u[: -2]
        scale = _PREFIX.get(prefix) or _PREFIX.get(prefix.upper())
        return (scale, "hz") if scale is not None else None
    for suffix in ("byte", "B"):
        if u.endswith(suffix) and (suffix == "byte" or len(u) <= 3):
            prefix = u[: -len(suffix)]
            if prefix in _BINARY:
                return _BINARY[prefix], "byte"
            if prefix in _PREFIX:
                return _PREFIX[prefix], "byte"
            return None
    for word in _COUNTS:
        if u.endswith(word):
            prefix = u[: -len(word)]
            if prefix in _PREFIX:
                return _PREFIX[prefix], "count"
    return None


# -- numbers -----------------------------------------------------------------------------------------
# Only one reading possible: "1,234.5", "2,214,592,512", "0.25" (US) / "1.234,5", "2.214.592.512", "0,25"
# (decimal comma). "1,504" and "1.504" (one separator, three digits after it) could be either.
_US_ONLY = re.compile(r"-?\d{1,3}(,\d{3})+\.\d+|-?\d{1,3}(,\d{3}){2,}|-?\d+\.(\d{1,2}|\d{4,})")
_EU_ONLY = re.compile(r"-?\d{1,3}(\.\d{3})+,\d+|-?\d{1,3}(\.\d{3}){2,}|-?\d+,(\d{1,2}|\d{4,})")


def _decimal_comma(values: Iterable[str]) -> bool:
    """Whether the file's numbers use ``,`` for decimals: decided once for the whole file, from the
    values that can only be read one way (``1.234.567``, ``3,5``) against those that can only be
    read the other (``1,234.5``, ``0.25``). ``1,504`` alone reads as 1504 (ncu's default)."""
    eu = us = False
    for v in values:
        s = v.strip()
        if _EU_ONLY.fullmatch(s):
            eu = True
        elif _US_ONLY.fullmatch(s):
            us = True
        if eu and us:
            raise ValueError("numbers written in two locales (1,234.5 and 1.234,5)")
    return eu


def _to_float(text: str, decimal_comma: bool) -> float | None:
    """The number in a cell; None for ``n/a`` and empty cells; ValueError for anything else."""
    s = text.strip().replace("\u202f", "").replace("\xa0", "").replace(" ", "")
    if s in ("", "n/a", "N/A", "-"):
        return None
    if decimal_comma:
        s = s.replace(".", "").replace(",", ".")
    else:
        s = s.replace(",", "")
    value = float(s)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


# -- reading -----------------------------------------------------------------------------------------
def _open_lines(path: Path) -> Iterator[str]:
    """Lines of a regular file of at most MAX_CSV_BYTES (checked again as it is read: it may grow),
    each of at most MAX_LINE_CHARS, opened without blocking (a FIFO or a device is refused at once)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file")
        fh = os.fdopen(fd, "r", encoding="utf-8", errors="strict", newline="")
    except BaseException:
        os.close(fd)
        raise
    too_big = OSError(errno.EFBIG, f"larger than {MAX_CSV_BYTES:,} bytes")
    with fh:
        if info.st_size > MAX_CSV_BYTES:
            raise too_big
        read = 0
        while line := fh.readline(MAX_LINE_CHARS + 1):
            if len(line) > MAX_LINE_CHARS:
                raise ValueError(f"a line longer than {MAX_LINE_CHARS:,} characters: not an ncu export")
            read += len(line)
            if read > MAX_CSV_BYTES:
                raise too_big
            yield line


def _rows(lines: Iterable[str]) -> Iterator[list[str]]:
    """CSV rows from the first header (a row naming ``ID`` and ``Kernel Name``) on."""
    it = iter(lines)
    for line in it:
        if line.startswith('"ID"') or line.startswith("ID,"):
            body: Iterator[str] = _chain(line, it)
            yield from csv.reader(body)
            return


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    for line in rest:
        if line.startswith("==PROF==") or line.startswith("==WARNING==") or line.startswith("==ERROR=="):
            continue  # ncu interleaves progress lines when the CSV goes to stdout
        yield line


@dataclass
class _Draft:
    id: str
    name: str
    device: str | None
    cc: str | None
    raw: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric -> (value, unit)


def _collect(rows: Iterator[list[str]]) -> list[_Draft]:
    header = next(rows, None)
    if header is None:
        raise ValueError("no ncu CSV header (a row with \"ID\" and \"Kernel Name\") found")
    col = {name: i for i, name in enumerate(header)}
    for needed in ("ID", "Kernel Name"):
        if needed not in col:
            raise ValueError(f"no {needed!r} column in the header")
    long = "Metric Name" in col and "Metric Value" in col
    drafts: dict[str, _Draft] = {}
    names: dict[str, str] = {}  # one string per metric name and unit, shared by every kernel
    values = 0

    def keep(d: _Draft, metric: str, value: str, unit: str) -> None:
        nonlocal values
        if metric in d.raw:
            return
        values += 1
        if values > MAX_METRIC_VALUES:
            raise ValueError(f"more than {MAX_METRIC_VALUES:,} metric values: {_FEWER}, or fewer metrics")
        d.raw[names.setdefault(metric, metric)] = (value, names.setdefault(unit, unit))

    def cell(row: list[str], name: str) -> str | None:
        i = col.get(name)
        return row[i] if i is not None and i < len(row) else None

    def draft(row: list[str]) -> _Draft:
        kid = (cell(row, "ID") or "").strip()
        pid = (cell(row, "Process ID") or "").strip()
        key = f"{pid}:{kid}"
        d = drafts.get(key)
        if d is None:
            if len(drafts) >= MAX_KERNELS:
                raise ValueError(f"more than {MAX_KERNELS:,} kernels: {_FEWER}")
            d = _Draft(kid, (cell(row, "Kernel Name") or "").strip(), _blank(cell(row, "Device")),
                       _blank(cell(row, "CC")))
            drafts[key] = d
        return d

    if long:
        for row in rows:
            if not row or not (cell(row, "ID") or "").strip():
                continue
            metric = (cell(row, "Metric Name") or "").strip()
            if not metric:
                continue  # a rule row
            keep(draft(row), metric, cell(row, "Metric Value") or "", cell(row, "Metric Unit") or "")
        return list(drafts.values())
    metric_cols = [
        (i, name.strip()) for i, name in enumerate(header) if name not in _IDENTITY and "__" in name
    ]
    units: dict[int, str] = {}
    for row in rows:
        if not row:
            continue
        if not (cell(row, "ID") or "").strip():
            if not units:  # the units row under the header
                units = {i: row[i] for i, _ in metric_cols if i < len(row)}
            continue
        d = draft(row)
        for i, name in metric_cols:
            if i < len(row):
                keep(d, name, row[i], units.get(i, ""))
    return list(drafts.values())


def _blank(text: str | None) -> str | None:
    return text.strip() or None if text is not None else None


#: The display name ``--section``/``--set`` exports print for ``gpu__time_duration.sum``.
DISPLAY_DURATION = "Duration"
_EXPECTED_KIND = {
    DURATION: "time", DISPLAY_DURATION: "time", DRAM_BYTES: "byte", DRAM_READ: "byte", DRAM_WRITE: "byte",
    "sm__cycles_elapsed.avg.per_second": "hz", "sm__cycles_elapsed.avg": "count",
}


def _convert(d: _Draft, decimal_comma: bool) -> dict[str, float]:
    """Every metric of a kernel in base units; ValueError (one line) for a value that is not a number,
    a needed metric whose unit is unknown or of the wrong kind, or a negative count."""
    out: dict[str, float] = {}
    for name, (value_text, unit) in d.raw.items():
        try:
            value = _to_float(value_text, decimal_comma)
        except ValueError:
            raise ValueError(f"kernel {d.id}: {name}: {value_text[:40]!r} is not a number") from None
        if value is None:
            continue
        scale = _unit_scale(unit)
        needed = name in _EXPECTED_KIND or name.startswith(("sm__sass", "smsp__sass", "sm__ops_path_tensor",
                                                             "sm__inst_executed_pipe_tensor"))
        if scale is None:
            if needed:
                raise ValueError(f"kernel {d.id}: {name}: unit {unit[:20]!r} not understood")
            continue
        kind = _EXPECTED_KIND.get(name)
        if name == "sm__cycles_elapsed.avg.per_second" and scale[1] == "count/s":
            scale = (scale[0], "hz")  # cycle/second
        if needed and kind is None and name.endswith(".sum"):
            kind = "count"  # instruction and operation counts (rates and peaks are not checked)
        if kind is not None and scale[1] != kind:
            raise ValueError(f"kernel {d.id}: {name}: unit {unit!r} is not a {kind} unit")
        if needed and value < 0:
            raise ValueError(f"kernel {d.id}: {name}: negative value {value_text!r}")
        out[name] = value * scale[0]
    return out


def _tensor_flops(metrics: Mapping[str, float]) -> float | None:
    """Sum of the ``sm__ops_path_tensor_*.sum`` operation counts, coarser metrics replacing the finer
    ones they cover; None when there are none."""
    found: dict[str, dict[str, str]] = {}
    for name in metrics:
        m = _TENSOR.fullmatch(name)
        if m is not None:
            found[name] = _tensor_fields(m.group(1))
    if not found:
        return None
    kept = [
        name for name, fields in found.items()
        if not any(other != name and _covers(found[other], fields) for other in found)
    ]
    return sum(metrics[name] for name in kept)


def _tensor_fields(tail: str) -> dict[str, str]:
    """``op_hgmma_src_bf16_dst_fp32_sparsity_off`` -> {op: hgmma, src: bf16, dst: fp32, sparsity: off}."""
    fields: dict[str, str] = {}
    tokens = tail.split("_")
    key: str | None = None
    for token in tokens:
        if token in ("op", "src", "dst", "sparsity"):
            key = token
            fields[key] = ""
        elif key is not None:
            fields[key] = f"{fields[key]}_{token}" if fields[key] else token
        else:
            fields.setdefault("other", "")
            fields["other"] = f"{fields['other']}_{token}" if fields["other"] else token
    return fields


def _covers(coarse: dict[str, str], fine: dict[str, str]) -> bool:
    """True when every field the coarse metric fixes is fixed the same in the fine one, and the fine
    one fixes more (so the coarse count includes the fine one's)."""
    return len(coarse) < len(fine) and all(fine.get(k) == v for k, v in coarse.items())


def _sass(metrics: Mapping[str, float], op: str) -> float | None:
    for unit in ("sm__", "smsp__"):
        value = metrics.get(unit + _SASS.format(op=op))
        if value is not None:
            return value
    return None


def _kernel(d: _Draft, metrics: dict[str, float]) -> Kernel:
    duration = metrics.get(DURATION)
    if duration is None:
        duration = metrics.get(DISPLAY_DURATION)
    if duration is None:
        cycles, rate = metrics.get("sm__cycles_elapsed.avg"), metrics.get("sm__cycles_elapsed.avg.per_second")
        if cycles is not None and rate:
            duration = cycles / rate
    parts: dict[str, float] = {}
    for precision, ops in _SASS_OPS.items():
        counts = [(_sass(metrics, op), weight) for op, weight in ops]
        if any(c is not None for c, _ in counts):
            parts[precision] = sum(c * w for c, w in counts if c is not None)
    notes: list[str] = []
    tensor = _tensor_flops(metrics)
    pipe = metrics.get(PIPE_TENSOR)
    unknown = False
    if tensor is None and pipe is not None:
        if pipe == 0:
            tensor = 0.0
        elif d.cc in _VOLTA_CC:
            tensor = VOLTA_TENSOR_FLOPS_PER_INST * pipe
            notes.append("tensor FLOPs = 512 x tensor-pipe instructions (Volta)")
        else:
            unknown = True
            notes.append(f"{pipe:,.0f} tensor-pipe instructions but no sm__ops_path_tensor_* metric to "
                         "count their FLOPs on this chip")
    cuda_core = bool(parts)
    if tensor is not None:
        parts["tensor"] = tensor
    flops: float | None = sum(parts.values()) if parts and not unknown else None
    if not parts and not unknown:
        notes.append("no FLOP metric exported")
    elif flops is not None and tensor is None:
        notes.append("no tensor metric exported: tensor-core work, if any, is not counted")
    elif flops is not None and not cuda_core:
        notes.append("no sm__sass_thread_inst_executed_op_* metric exported: CUDA-core FLOPs not counted")
    note = "; ".join(notes) or None
    dram = metrics.get(DRAM_BYTES)
    if dram is None and DRAM_READ in metrics and DRAM_WRITE in metrics:
        dram = metrics[DRAM_READ] + metrics[DRAM_WRITE]
    return Kernel(
        id=d.id,
        name=d.name,
        device=d.device,
        cc=d.cc,
        duration_s=duration,
        flops=flops,
        flops_parts=MappingProxyType(parts),
        flops_note=note,
        dram_bytes=dram,
        sm_hz=metrics.get("sm__cycles_elapsed.avg.per_second"),
        metrics=MappingProxyType(metrics),
    )


def parse_ncu_lines(lines: Iterable[str], where: str = "ncu export") -> tuple[Kernel, ...]:
    """Kernels of an ``ncu --csv`` export given as lines; NcuError (one line naming ``where``)."""
    try:
        drafts = _collect(_rows(lines))
        values = [v for d in drafts for v, _ in d.raw.values()]
        decimal_comma = _decimal_comma(values)
        kernels = tuple(_kernel(d, _convert(d, decimal_comma)) for d in drafts)
    except csv.Error as exc:
        raise NcuError(f"{where}: not a readable CSV: {exc}") from None
    except UnicodeDecodeError:
        raise NcuError(f"{where}: not UTF-8 text") from None
    except ValueError as exc:
        raise NcuError(f"{where}: {exc}") from None
    if not kernels:
        raise NcuError(f"{where}: no kernels in the export")
    return kernels


def read_ncu_csv(path: str | Path) -> tuple[Kernel, ...]:
    """Kernels of an ``ncu --csv`` export file; every error is one NcuError line naming the file."""
    where = f"ncu export {path}"
    try:
        return parse_ncu_lines(_open_lines(Path(path)), where)
    except OSError as exc:
        raise NcuError(f"cannot read ncu export {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise NcuError(f"{where}: not UTF-8 text") from None

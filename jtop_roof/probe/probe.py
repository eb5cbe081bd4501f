"""``jroof-tui probe``: the achievable ceilings of this machine, measured the way the Empirical
Roofline Toolkit does (research/roofline.md 1.5), stored per device and power mode.

Bandwidth: a large device-to-device copy and a triad (``a = b + s*c``), counting bytes read +
written (copy 2 x size, triad 3 x size, the STREAM convention: write-allocate traffic on a CPU is
not counted), over arrays far larger than the last-level cache. Compute: matrix products per
precision (FP32; BF16/FP16 on the tensor cores and INT8 where the library has them), FLOPs = 2 N^3
per product. Each measurement warms up, then times ``repeats`` runs of ``calls_per_run`` calls,
the device synchronised around each run, and reports the best run (ERT's "max" stage) with the
spread of all runs.

Backends: PyTorch (CUDA), else CuPy, else numpy on the CPU, said plainly in the result
(``backend``, ``device_kind``, ``note``). torch and cupy are imported inside functions only, so
``import jtop_roof.probe.probe`` stays light (no Textual either).

While it measures, one of the monitor's own sources (tegrastats on a Jetson, else the host source:
NVML, psutil) runs in a background thread; each entry keeps the GPU, EMC (NVML's memory clock on a
dGPU) and CPU clocks and the power seen during its timed runs, and the ceiling per MHz of the
clock that bounds it (bandwidth per EMC MHz, FLOP/s per GPU MHz; per CPU MHz for numpy), taken at
the clocks seen during the best run where a sample fell in it, so the roof can follow the clocks.

``load_probe`` reads a result back as a frozen :class:`Probe` for the roofline pane and reports;
a bad file is one line (:class:`ProbeError`), never a traceback.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import importlib
import json
import os
import re
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from jtop_roof.model.metrics import fmt_si_unit
from jtop_roof.model.records import DEVICE_ONLY_RAIL_PREFIX, Sample, total_power
from jtop_roof.roofline.measured import BANDWIDTH_KINDS, FORMAT, SCHEMA, ProbeError
from jtop_roof.sources.base import Source

BACKENDS = ("auto", "torch", "cupy", "numpy")
#: Compute entries, in the device database's names (``devices.PRECISIONS``), in measuring order.
COMPUTE_ORDER = ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor", "fp64")
#: Bytes moved per array byte: copy reads one array and writes one, triad reads two and writes one.
BYTES_PER_ARRAY_BYTE = {"copy": 2, "triad": 3}
TRIAD_SCALAR = 3.0

_MIB = 1 << 20
_GIB = 1 << 30




# ---------------------------------------------------------------------------------------------
# sizes


@dataclass(frozen=True, slots=True)
class ProbeSizes:
    """How big and how long. ``bandwidth_bytes``: bytes of each array (None: sized from the
    device's memory); ``matmul_n``: N of the N x N products (None: per device kind)."""

    bandwidth_bytes: int | None = None
    matmul_n: int | None = None
    #: Run before the first measurement, so a cold GPU has reached its clocks (about a second).
    device_warmup_s: float = 2.0
    warmup_s: float = 1.0
    run_s: float = 1.0
    repeats: int = 5

    @classmethod
    def defaults(cls, quick: bool, device_kind: str) -> ProbeSizes:
        gpu = device_kind == "gpu"
        if quick:
            return cls(device_warmup_s=1.5 if gpu else 0.2, warmup_s=0.2 if gpu else 0.1,
                       run_s=0.2 if gpu else 0.1, repeats=3)
        return cls(device_warmup_s=2.0 if gpu else 0.5, warmup_s=1.0 if gpu else 0.3,
                   run_s=1.0 if gpu else 0.5, repeats=5)

    def merged(self, override: ProbeSizes | Mapping[str, Any] | None) -> ProbeSizes:
        """These sizes with what ``override`` sets (a ProbeSizes' non-default fields, or a mapping)."""
        if override is None:
            return self
        if isinstance(override, ProbeSizes):
            base = ProbeSizes()
            changes = {f.name: getattr(override, f.name) for f in fields(ProbeSizes)
                       if getattr(override, f.name) != getattr(base, f.name)}
        else:
            known = {f.name for f in fields(ProbeSizes)}
            unknown = sorted(set(override) - known)
            if unknown:
                raise ProbeError(f"unknown probe size {unknown[0]!r} (known: {', '.join(sorted(known))})")
            changes = dict(override)
        out = replace(self, **changes)
        if out.repeats < 1 or out.run_s < 0 or out.warmup_s < 0 or out.device_warmup_s < 0:
            raise ProbeError("probe sizes: repeats must be at least 1 and times not negative")
        if (out.bandwidth_bytes is not None and out.bandwidth_bytes < 1024) or (
                out.matmul_n is not None and out.matmul_n < 16):
            raise ProbeError("probe sizes: bandwidth_bytes must be at least 1024 and matmul_n at least 16")
        return out


def _cpu_llc_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """The largest cache of CPU 0 (sysfs ``index*/size``: ``32K``, ``8192K``, ``2M``)."""
    best = None
    try:
        entries = list(Path(root).glob("index*/size"))
    except OSError:
        return None
    for entry in entries:
        try:
            text = entry.read_text().strip().upper()
        except OSError:
            continue
        match = re.fullmatch(r"(\d+)([KMG]?)", text)
        if match:
            value = int(match.group(1)) * {"": 1, "K": 1024, "M": _MIB, "G": _GIB}[match.group(2)]
            best = value if best is None else max(best, value)
    return best


def _cpu_array_bytes(quick: bool) -> tuple[int, str | None]:
    """Each CPU array: a sixteenth of available RAM, 32 MiB..512 MiB (64 MiB quick), and at
    least 8 x the last-level cache where memory allows."""
    import psutil

    try:
        available = int(psutil.virtual_memory().available)
    except Exception:  # psutil may lack it on an odd platform
        available = 2 * _GIB
    llc = _cpu_llc_bytes()
    size = max(32 * _MIB, min(64 * _MIB if quick else 512 * _MIB, available // 16))
    if llc is not None:
        size = max(size, min(8 * llc, available // 8))
    note = None
    if llc is not None and size < 8 * llc:
        note = f"arrays of {size // _MIB} MiB are less than 8x the {llc // _MIB} MiB last-level cache"
    return size, note


# ---------------------------------------------------------------------------------------------
# backends


@dataclass
class _Kernel:
    """One thing to time: ``fn`` does ``work`` bytes or FLOPs per call; ``release`` frees it."""

    fn: Callable[[], object]
    work: float
    size: int
    release: Callable[[], None] = lambda: None


class _Backend:
    name = ""
    device_kind = ""
    device_name: str | None = None
    library: str | None = None
    notes: list[str]

    def __init__(self) -> None:
        self.notes = []

    def sync(self) -> None:
        """Wait for the device's queued work."""

    def default_bandwidth_bytes(self, quick: bool) -> int:
        raise NotImplementedError

    def default_matmul_n(self, quick: bool) -> int:
        raise NotImplementedError

    def bandwidth(self, kind: str, array_bytes: int) -> _Kernel:
        raise NotImplementedError

    def matmul(self, precision: str, n: int) -> _Kernel:
        """Raises ``_Unsupported`` (with the reason) where the library lacks the precision."""
        raise NotImplementedError

    def precisions(self) -> tuple[str, ...]:
        raise NotImplementedError

    def close(self) -> None:
        """Free what the backend holds."""


class _Unsupported(Exception):
    """A precision this backend cannot measure; the message says why."""


def _matmul_kernel(c: Any, a: Any, b: Any, mm: Callable[[Any, Any, Any], object], n: int) -> _Kernel:
    holder = [a, b, c]

    def release() -> None:
        holder.clear()

    return _Kernel(lambda: mm(holder[0], holder[1], holder[2]), 2.0 * n ** 3, n, release)


class _NumpyBackend(_Backend):
    name = "numpy"
    device_kind = "cpu"

    def __init__(self) -> None:
        super().__init__()
        import numpy as np

        from jtop_roof.sources.host import cpu_model

        self.np = np
        self.device_name = cpu_model()
        self.library = f"numpy {np.__version__}"
        self._quick = False

    def default_bandwidth_bytes(self, quick: bool) -> int:
        size, note = _cpu_array_bytes(quick)
        if note:
            self.notes.append(note)
        return size

    def default_matmul_n(self, quick: bool) -> int:
        return 1024 if quick else 2048

    def bandwidth(self, kind: str, array_bytes: int) -> _Kernel:
        np = self.np
        count = max(1, array_bytes // 4)
        arrays = [np.zeros(count, dtype=np.float32), np.full(count, 1.0, dtype=np.float32)]
        release = arrays.clear  # the kernel is never called after its release
        if kind == "copy":
            return _Kernel(lambda: np.copyto(arrays[0], arrays[1]), 2.0 * count * 4, count * 4, release)
        arrays.append(np.full(count, 2.0, dtype=np.float32))
        # numpy has no fused a = b + s*c: done in cache-sized blocks through a small buffer, so
        # DRAM sees b and c read and a written once, as the bytes counted say.
        block = 1 << 16
        tmp = np.empty(block, dtype=np.float32)
        scalar = np.float32(TRIAD_SCALAR)

        def triad() -> None:
            a, b, c = arrays
            for start in range(0, count, block):
                stop = min(start + block, count)
                part = tmp[: stop - start]
                np.multiply(c[start:stop], scalar, out=part)
                np.add(b[start:stop], part, out=a[start:stop])

        return _Kernel(triad, 3.0 * count * 4, count * 4, release)

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor", "fp64")

    def matmul(self, precision: str, n: int) -> _Kernel:
        np = self.np
        dtype = {"fp32": np.float32, "fp64": np.float64}.get(precision)
        if dtype is None:
            raise _Unsupported("numpy has no BLAS product for it on the CPU")
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        c = np.empty((n, n), dtype=dtype)
        return _matmul_kernel(c, a, b, lambda x, y, out: np.matmul(x, y, out=out), n)


class _TorchBackend(_Backend):
    name = "torch"
    device_kind = "gpu"

    def __init__(self, torch: Any) -> None:
        super().__init__()
        self.torch = torch
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.device_name = str(torch.cuda.get_device_name(self.device))
        self.library = f"torch {torch.__version__} (CUDA {torch.version.cuda})"

    def sync(self) -> None:
        self.torch.cuda.synchronize(self.device)

    def _free_bytes(self) -> int | None:
        try:
            free, _total = self.torch.cuda.mem_get_info(self.device)
            return int(free)
        except Exception:
            return None

    def default_bandwidth_bytes(self, quick: bool) -> int:
        return _gpu_array_bytes(quick, self._free_bytes(), self.notes)

    def default_matmul_n(self, quick: bool) -> int:
        return 4096 if quick else 8192

    def bandwidth(self, kind: str, array_bytes: int) -> _Kernel:
        torch = self.torch
        count = max(1, array_bytes // 4)
        a = torch.zeros(count, dtype=torch.float32, device=self.device)
        b = torch.full((count,), 1.0, dtype=torch.float32, device=self.device)
        holder = [a, b]
        if kind == "copy":
            kernel = _Kernel(lambda: holder[0].copy_(holder[1]), 2.0 * count * 4, count * 4)
        else:
            holder.append(torch.full((count,), 2.0, dtype=torch.float32, device=self.device))
            kernel = _Kernel(lambda: torch.add(holder[1], holder[2], alpha=TRIAD_SCALAR, out=holder[0]),
                             3.0 * count * 4, count * 4)
        del a, b
        kernel.release = self._releaser(holder)
        return kernel

    def _releaser(self, holder: list[Any]) -> Callable[[], None]:
        def release() -> None:
            holder.clear()
            self.torch.cuda.empty_cache()

        return release

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor")

    def matmul(self, precision: str, n: int) -> _Kernel:
        torch = self.torch
        gen = torch.Generator(device=self.device)
        gen.manual_seed(0)
        if precision == "int8_tensor":
            int_mm = getattr(torch, "_int_mm", None)
            if int_mm is None:
                raise _Unsupported(f"torch {torch.__version__} has no torch._int_mm")
            a = torch.randint(-128, 128, (n, n), dtype=torch.int8, device=self.device, generator=gen)
            # B column-major (the transposed view of a row-major tensor): cuBLASLt's int8 "TN"
            # layout. Row-major B took 128 TOP/s on an H200 against 959 TOP/s this way.
            b = torch.randint(-128, 128, (n, n), dtype=torch.int8, device=self.device, generator=gen).t()
            c = torch.empty((n, n), dtype=torch.int32, device=self.device)
            def into(x: Any, y: Any, out: Any) -> object:
                return int_mm(x, y, out=out)

            def allocating(x: Any, y: Any, _out: Any) -> object:
                return int_mm(x, y)

            try:
                into(a, b, c)
            except (TypeError, RuntimeError):  # an older torch without out=: the result is allocated
                return self._kernel(c, a, b, allocating, n)
            return self._kernel(c, a, b, into, n)
        dtypes = {"fp32": torch.float32, "bf16_tensor": torch.bfloat16, "fp16_tensor": torch.float16}
        dtype = dtypes.get(precision)
        if dtype is None:
            raise _Unsupported("not measured with torch")
        if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
            raise _Unsupported("this GPU has no bf16 (torch.cuda.is_bf16_supported() is False)")
        a = torch.randn((n, n), dtype=dtype, device=self.device, generator=gen)
        b = torch.randn((n, n), dtype=dtype, device=self.device, generator=gen)
        c = torch.empty((n, n), dtype=dtype, device=self.device)
        if precision != "fp32":
            return self._kernel(c, a, b, lambda x, y, out: torch.matmul(x, y, out=out), n)
        # Real FP32 (not TF32 on the tensor cores), whatever the process's setting was.
        matmul_settings = torch.backends.cuda.matmul

        def fp32(x: Any, y: Any, out: Any) -> object:
            before = matmul_settings.allow_tf32
            matmul_settings.allow_tf32 = False
            try:
                return torch.matmul(x, y, out=out)
            finally:
                matmul_settings.allow_tf32 = before

        return self._kernel(c, a, b, fp32, n)

    def _kernel(self, c: Any, a: Any, b: Any, mm: Callable[[Any, Any, Any], object], n: int) -> _Kernel:
        kernel = _matmul_kernel(c, a, b, mm, n)
        inner = kernel.release

        def release() -> None:
            inner()
            self.torch.cuda.empty_cache()

        kernel.release = release
        return kernel


class _CupyBackend(_Backend):
    name = "cupy"
    device_kind = "gpu"

    def __init__(self, cupy: Any) -> None:
        super().__init__()
        self.cupy = cupy
        self.dev = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(self.dev.id)
        name = props.get("name", b"")
        self.device_name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        self.library = f"cupy {cupy.__version__} (CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()})"
        self._triad_kernel: Any = None

    def sync(self) -> None:
        self.dev.synchronize()

    def default_bandwidth_bytes(self, quick: bool) -> int:
        try:
            free = int(self.cupy.cuda.runtime.memGetInfo()[0])
        except Exception:
            free = None
        return _gpu_array_bytes(quick, free, self.notes)

    def default_matmul_n(self, quick: bool) -> int:
        return 4096 if quick else 8192

    def _releaser(self, holder: list[Any]) -> Callable[[], None]:
        def release() -> None:
            holder.clear()
            self.cupy.get_default_memory_pool().free_all_blocks()

        return release

    def bandwidth(self, kind: str, array_bytes: int) -> _Kernel:
        cp = self.cupy
        count = max(4, array_bytes // 16 * 4)  # whole float4s
        holder = [cp.zeros(count, dtype=cp.float32), cp.full(count, 1.0, dtype=cp.float32)]
        if kind == "copy":
            kernel = _Kernel(lambda: cp.copyto(holder[0], holder[1]), 2.0 * count * 4, count * 4)
        else:
            holder.append(cp.full(count, 2.0, dtype=cp.float32))
            if self._triad_kernel is None:
                # CuPy's elementwise kernels (and cp.add) reached 2.5 TB/s on an H200, this 4.4.
                self._triad_kernel = cp.RawKernel(_CUDA_TRIAD, "jroof_triad4")
            fused = self._triad_kernel
            scalar, quads = cp.float32(TRIAD_SCALAR), cp.int64(count // 4)
            grid = (min((count // 4 + 255) // 256, 2 ** 31 - 1),)
            kernel = _Kernel(lambda: fused(grid, (256,), (holder[0], holder[1], holder[2], scalar, quads)),
                             3.0 * count * 4, count * 4)
        kernel.release = self._releaser(holder)
        return kernel

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor")

    def matmul(self, precision: str, n: int) -> _Kernel:
        cp = self.cupy
        if precision == "bf16_tensor":
            raise _Unsupported("CuPy has no bfloat16 (install PyTorch for it)")
        if precision == "int8_tensor":
            raise _Unsupported("CuPy's int8 matmul is not a cuBLAS tensor-core product (install PyTorch)")
        dtype = {"fp32": cp.float32, "fp16_tensor": cp.float16}.get(precision)
        if dtype is None:
            raise _Unsupported("not measured with CuPy")
        rng = cp.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=cp.float32).astype(dtype)
        b = rng.standard_normal((n, n), dtype=cp.float32).astype(dtype)
        c = cp.empty((n, n), dtype=dtype)
        kernel = _matmul_kernel(c, a, b, lambda x, y, out: cp.matmul(x, y, out=out), n)
        inner = kernel.release

        def release() -> None:
            inner()
            cp.get_default_memory_pool().free_all_blocks()

        kernel.release = release
        return kernel


_CUDA_TRIAD = r"""
extern "C" __global__ void jroof_triad4(float4* a, const float4* __restrict__ b,
                                        const float4* __restrict__ c, float s, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}
"""


def _gpu_array_bytes(quick: bool, free: int | None, notes: list[str]) -> int:
    """1 GiB per array (256 MiB quick), less where three arrays would not fit in 3/4 of free memory."""
    want = 256 * _MIB if quick else _GIB
    if free is None:
        return want
    fits = (free * 3 // 4) // 3 // _MIB * _MIB
    if fits < want:
        notes.append(f"arrays cut to {fits // _MIB} MiB each: {free // _MIB} MiB of device memory is free")
        return max(_MIB, fits)
    return want


def _import(name: str) -> Any:
    """An optional library, imported only here (``python -m jtop_roof`` never pays for it)."""
    return importlib.import_module(name)


def _torch_cuda() -> tuple[Any | None, str]:
    try:
        torch = _import("torch")
    except Exception as exc:  # ImportError, or a broken CUDA library that fails on import
        return None, f"PyTorch is not usable ({type(exc).__name__}: {str(exc)[:80]})"
    try:
        if torch.cuda.is_available():
            return torch, ""
    except Exception as exc:
        return None, f"PyTorch sees no CUDA device ({exc})"
    return None, f"PyTorch {torch.__version__} sees no CUDA device"


def _cupy_cuda() -> tuple[Any | None, str]:
    try:
        cupy = _import("cupy")
    except Exception as exc:
        return None, f"CuPy is not usable ({type(exc).__name__}: {str(exc)[:80]})"
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy, ""
    except Exception as exc:  # CUDARuntimeError without a driver
        return None, f"CuPy sees no CUDA device ({str(exc)[:80]})"
    return None, "CuPy sees no CUDA device"


def pick_backend(backend: str = "auto") -> _Backend:
    """The backend asked for; ``auto``: torch on CUDA, else CuPy, else numpy (notes say why)."""
    if backend not in BACKENDS:
        raise ProbeError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if backend == "numpy":
        return _NumpyBackend()
    reasons = []
    if backend in ("auto", "torch"):
        torch, why = _torch_cuda()
        if torch is not None:
            return _TorchBackend(torch)
        if backend == "torch":
            raise ProbeError(f"--backend torch: {why}")
        reasons.append(why)
    cupy, why = _cupy_cuda()
    if cupy is not None:
        found = _CupyBackend(cupy)
        found.notes.extend(reasons)
        return found
    if backend == "cupy":
        raise ProbeError(f"--backend cupy: {why}")
    reasons.append(why)
    fallback = _NumpyBackend()
    fallback.notes.append("no CUDA library: " + "; ".join(reasons) + " (pip install 'jroof-tui[gpu]')")
    return fallback


# ---------------------------------------------------------------------------------------------
# the monitor's source, in a background thread


#: How long the probe waits for the source's first sample before it measures (tegrastats' default
#: interval is 1 s).
FIRST_SAMPLE_WAIT_S = 3.0


class _Sampler:
    """Runs a source in a thread; keeps each sample with its arrival time (``time.monotonic``)."""

    def __init__(self, source: Source, mono: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self._mono = mono
        self._lock = threading.Lock()
        self._samples: list[tuple[float, Sample]] = []
        self.info_header: dict[str, Any] = {}
        self.error: str | None = None
        self._described = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jroof-probe-source", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            self.info_header = dict(self.source.describe().header)
        except Exception as exc:  # a source that cannot describe itself still samples
            self.error = f"describe failed: {type(exc).__name__}: {exc}"
        finally:
            self._described.set()
        try:
            for record in self.source.records():
                if isinstance(record, Sample) and record.is_sample:
                    with self._lock:
                        self._samples.append((self._mono(), record))
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def wait_described(self, timeout: float) -> bool:
        return self._described.wait(timeout)

    def wait_first_sample(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.count() == 0 and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)

    def between(self, t0: float, t1: float) -> list[Sample]:
        with self._lock:
            return [s for t, s in self._samples if t0 <= t <= t1]

    def count(self) -> int:
        with self._lock:
            return len(self._samples)

    def stop(self, timeout: float = 5.0) -> None:
        self.source.stop()
        self._thread.join(timeout)


# ---------------------------------------------------------------------------------------------
# statistics of samples


def _stat(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def _gpu_mhz(sample: Sample) -> float | None:
    return None if sample.gpu is None or sample.gpu.mhz is None else float(sample.gpu.mhz)


def _emc_mhz(sample: Sample) -> float | None:
    return None if sample.emc is None or sample.emc.mhz is None else float(sample.emc.mhz)


def _cpu_mhz(sample: Sample) -> float | None:
    clocks = [c.mhz for c in sample.cpus or () if c is not None and c.mhz]
    return statistics.fmean(clocks) if clocks else None


def _power(sample: Sample) -> tuple[float, str] | None:
    """The board's input power where a rail measures it, else the GPU's own (NVML) power."""
    total = total_power(sample.rails)
    if total is not None:
        return total.mw / 1000.0, total.source
    rail = sample.rails.get(f"{DEVICE_ONLY_RAIL_PREFIX}GPU")
    return None if rail is None else (rail.now_mw / 1000.0, f"{DEVICE_ONLY_RAIL_PREFIX}GPU")


_CLOCKS: dict[str, Callable[[Sample], float | None]] = {"gpu_mhz": _gpu_mhz, "emc_mhz": _emc_mhz,
                                                        "cpu_mhz": _cpu_mhz}


def _clocks(samples: list[Sample]) -> dict[str, dict[str, float] | None]:
    out = {}
    for key, read in _CLOCKS.items():
        out[key] = _stat([v for v in (read(s) for s in samples) if v is not None])
    return out


def _power_stats(samples: list[Sample]) -> dict[str, Any] | None:
    seen = [p for p in (_power(s) for s in samples) if p is not None]
    if not seen:
        return None
    values = [w for w, _ in seen]
    return {"mean": statistics.fmean(values), "max": max(values), "rail": seen[-1][1]}


# ---------------------------------------------------------------------------------------------
# timing


def _timed_runs(kernel: _Kernel, backend: _Backend, sizes: ProbeSizes,
                perf: Callable[[], float]) -> tuple[int, list[tuple[float, float]]]:
    """Warm up for ``warmup_s`` (at least two calls), size a run to ``run_s``, time ``repeats`` runs.
    Returns the calls per run and each run's (start, end) on ``perf``'s clock."""
    durations = []
    start = perf()
    while True:
        backend.sync()
        t0 = perf()
        kernel.fn()
        backend.sync()
        durations.append(perf() - t0)
        if len(durations) >= 2 and perf() - start >= sizes.warmup_s:
            break
    per_call = max(statistics.median(durations[len(durations) // 2:]), 1e-9)
    calls = max(1, min(1_000_000, round(sizes.run_s / per_call)))
    runs = []
    for _ in range(sizes.repeats):
        backend.sync()
        t0 = perf()
        for _ in range(calls):
            kernel.fn()
        backend.sync()
        runs.append((t0, perf()))
    return calls, runs


def _entry(kind: str, kernel: _Kernel, calls: int, runs: list[tuple[float, float]], sampler: _Sampler | None,
           per_mhz_clock: str | None) -> dict[str, Any]:
    """One JSON entry; ``kind`` is "bandwidth" or "compute"; ``per_mhz_clock`` the clock key that
    bounds this ceiling on this device (None: no clock does)."""
    work = kernel.work * calls
    durations = [max(t1 - t0, 1e-12) for t0, t1 in runs]
    rates = [work / d for d in durations]
    best = min(range(len(runs)), key=lambda i: durations[i])
    samples = [] if sampler is None else sampler.between(runs[0][0], runs[-1][1])
    best_samples = [] if sampler is None else sampler.between(*runs[best])
    unit, per = ("bytes_per_s", "bytes") if kind == "bandwidth" else ("flops_per_s", "flops")
    entry: dict[str, Any] = {
        unit: rates[best],
        "size": kernel.size,
        f"{per}_per_call": kernel.work,
        "calls_per_run": calls,
        "seconds": durations[best],
        "repeats": len(runs),
        "spread": {"min": min(rates), "median": statistics.median(rates), "max": max(rates)},
        "samples": len(samples),
        "clocks": _clocks(samples),
        "power_w": _power_stats(samples),
    }
    # The device clock's key is always there (null without a clock, or on a CPU); a CPU's products
    # get their figure per CPU MHz besides.
    entry[f"{unit}_per_{'emc' if kind == 'bandwidth' else 'gpu'}_mhz"] = None
    clock_key = per_mhz_clock or ("emc_mhz" if kind == "bandwidth" else "gpu_mhz")
    name = f"{unit}_per_{clock_key.removesuffix('_mhz')}_mhz"
    basis = None
    mhz = None
    if per_mhz_clock is not None:
        for over, group in (("best run", best_samples), ("measurement", samples)):
            stat = _clocks(group)[per_mhz_clock]
            if stat is not None and stat["mean"] > 0:
                mhz, basis = stat["mean"], over
                break
    entry[name] = None if mhz is None else rates[best] / mhz
    entry["per_mhz_clock"] = None if mhz is None else {"key": per_mhz_clock, "mhz": mhz, "over": basis}
    return entry


# ---------------------------------------------------------------------------------------------
# the probe


def _sourced_device(header: Mapping[str, Any], device: str | None, power_mode: str | None,
                    devices: Mapping[str, Any] | None) -> tuple[str | None, str | None, str | None]:
    """(device id, power mode name, why unknown) as the monitor would resolve them."""
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.roofline.board import resolve_board
    from jtop_roof.roofline.devices import load_devices

    db = devices if devices is not None else load_devices()
    info = SourceInfo.from_mapping(header)
    board = resolve_board(info, db, device_id=device, power_mode=power_mode)
    if device is not None and board.device is None:
        raise ProbeError(board.problem or f"unknown device {device!r}")
    # A mode the database does not know keeps the name it was given by.
    mode = board.mode_name or power_mode or info.power_mode
    return (None if board.device is None else board.device.id), mode, board.problem or board.mode_note



def run_probe(
    quick: bool,
    backend: str = "auto",
    sizes: ProbeSizes | Mapping[str, Any] | None = None,
    *,
    source_factory: Callable[[], Source],
    device: str | None = None,
    power_mode: str | None = None,
    devices: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    perf: Callable[[], float] = time.monotonic,
    now: Callable[[], _dt.datetime] | None = None,
) -> dict[str, Any]:
    """Measure this machine's ceilings; returns the JSON-ready result (see the module docstring).

    ``source_factory``: makes the source sampled during the measurements (the command passes
    ``runtime.session.probe_source_factory``: this machine's, as the monitor picks it); ``sizes``:
    overrides of :class:`ProbeSizes` (tests use tiny ones). ``device``/``power_mode``: the database
    id and mode name (``--device``, ``--power-mode``), else what the source says, as the monitor
    resolves them. ``progress`` gets a line per step. ``perf`` must be ``time.monotonic``'s clock
    (sample times are matched on it)."""
    say = progress or (lambda _line: None)
    chosen = pick_backend(backend)
    plan = ProbeSizes.defaults(quick, chosen.device_kind).merged(sizes)
    factory = source_factory
    sampler = _Sampler(factory(), mono=perf)
    started = perf()
    stamp = (now or (lambda: _dt.datetime.now().astimezone()))()
    sampler.start()
    result: dict[str, Any] = {}
    try:
        if not sampler.wait_described(30.0):
            chosen.notes.append("the source did not describe itself within 30 s")
        # The first measurement is short: it starts once the source has sampled the board, so that
        # its clocks are seen (a source that never samples costs this wait once).
        sampler.wait_first_sample(FIRST_SAMPLE_WAIT_S)
        source_kind = sampler.source.kind or "unknown"
        device_id, mode, device_note = _sourced_device(sampler.info_header, device, power_mode, devices)
        # On a CPU, the EMC clock bounds bandwidth only where the CPU shares the SoC's memory.
        unified = source_kind == "tegrastats"
        bw_clock = ("emc_mhz" if unified else None) if chosen.device_kind == "cpu" else "emc_mhz"
        fl_clock = "cpu_mhz" if chosen.device_kind == "cpu" else "gpu_mhz"
        bandwidth: dict[str, Any] = {}
        compute: dict[str, Any] = {}
        skipped: dict[str, str] = {}
        array_bytes = plan.bandwidth_bytes or chosen.default_bandwidth_bytes(quick)
        matmul_n = plan.matmul_n or chosen.default_matmul_n(quick)
        precisions = [p for p in COMPUTE_ORDER if p in chosen.precisions()]
        say(f"probe: {chosen.name} on {chosen.device_name or chosen.device_kind}; source {source_kind}")
        if plan.device_warmup_s > 0:
            say(f"warming the {chosen.device_kind} up for {plan.device_warmup_s:g} s")
            _device_warmup(chosen, precisions, matmul_n, plan.device_warmup_s, perf)
        for kind in BANDWIDTH_KINDS:
            kernel = _make(functools.partial(chosen.bandwidth, kind, array_bytes), kind, skipped)
            if kernel is None:  # said with the results, not announced as measured
                continue
            say(f"bandwidth: {kind}, arrays of {array_bytes / _MIB:.0f} MiB")
            try:
                calls, runs = _timed_runs(kernel, chosen, plan, perf)
            finally:
                kernel.release()
            bandwidth[kind] = _entry("bandwidth", kernel, calls, runs, sampler, bw_clock)
        for precision in precisions:
            kernel = _make(functools.partial(chosen.matmul, precision, matmul_n), precision, skipped)
            if kernel is None:
                continue
            say(f"compute: {precision}, N = {matmul_n}")
            try:
                calls, runs = _timed_runs(kernel, chosen, plan, perf)
            except Exception as exc:  # e.g. torch._int_mm refusing a shape on this GPU
                skipped[precision] = _one_line(exc)
                continue
            finally:
                kernel.release()
            compute[precision] = _entry("compute", kernel, calls, runs, sampler, fl_clock)
        result = {
            "format": FORMAT,
            "schema": SCHEMA,
            "device": device_id,
            "power_mode": mode,
            "backend": chosen.name,
            "device_kind": chosen.device_kind,
            "device_name": chosen.device_name,
            "library": chosen.library,
            "quick": bool(quick),
            "measured_at": stamp.isoformat(timespec="seconds"),
            "duration_s": None,
            "source": {"kind": source_kind, "interval_ms": getattr(sampler.source, "interval_ms", None),
                       "samples": sampler.count(), "error": sampler.error},
            "device_note": device_note,
            "note": _note(chosen, source_kind, bw_clock, sampler),
            "bandwidth": bandwidth,
            "compute": compute,
            "skipped": skipped,
        }
    finally:
        sampler.stop()
        chosen.close()
    result["duration_s"] = perf() - started
    return result


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:200]}"


def _make(build: Callable[[], _Kernel], name: str, skipped: dict[str, str]) -> _Kernel | None:
    try:
        return build()
    except _Unsupported as exc:
        skipped[name] = str(exc)
    except MemoryError:
        skipped[name] = "out of memory"
    except Exception as exc:  # a CUDA out-of-memory or a library refusing the dtype
        skipped[name] = _one_line(exc)
    return None


def _device_warmup(backend: _Backend, precisions: list[str], n: int, seconds: float,
                   perf: Callable[[], float]) -> None:
    """Matrix products for ``seconds``, so that a cold GPU is at its clocks before the first timing."""
    for precision in ("bf16_tensor", "fp16_tensor", "fp32"):
        if precision not in precisions:
            continue
        try:
            kernel = backend.matmul(precision, n)
        except Exception:
            continue
        try:
            end = perf() + seconds
            while perf() < end:
                kernel.fn()
                backend.sync()
        finally:
            kernel.release()
        return


def _note(backend: _Backend, source_kind: str, bw_clock: str | None, sampler: _Sampler) -> str:
    parts = []
    if backend.device_kind == "gpu":
        parts.append(f"measured on the GPU ({backend.device_name}) with {backend.library}")
    else:
        parts.append(f"measured on the CPU ({backend.device_name or 'unknown'}) with {backend.library}: "
                     "these are the CPU's ceilings, not the GPU's; copy and triad use one thread, "
                     "matrix products numpy's BLAS threads")
        if bw_clock is None:
            parts.append("no bandwidth per MHz: the memory clock this source reports is not the CPU's")
    parts.extend(backend.notes)
    if sampler.error:
        parts.append(f"source {source_kind}: {sampler.error}")
    if sampler.count() == 0:
        parts.append(f"the {source_kind} source gave no samples: no clocks or power")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# files


def default_probe_path(
    device: str | None, mode: str | None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """``$XDG_DATA_HOME/jroof/probe/<device>/<mode>.json`` (``~/.local/share`` when unset);
    ``unknown`` device and ``default`` mode where they are not known."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or ""
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "jroof" / "probe" / _file_part(device, "unknown") / f"{_file_part(mode, 'default')}.json"


def _file_part(text: str | None, default: str) -> str:
    if not text:
        return default
    cleaned = re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._") or default
    return cleaned[:64]


def save_probe(result: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the result as JSON (parents made; written whole through a temporary file)."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


# ---------------------------------------------------------------------------------------------
# text


def summary_lines(result: Mapping[str, Any]) -> Iterator[str]:
    """What ``jroof-tui probe`` prints: one line per ceiling, then the notes."""
    device = result.get("device") or "unknown device"
    mode = result.get("power_mode") or "no power mode"
    yield (f"{result.get('backend')} on {result.get('device_name') or result.get('device_kind')} "
           f"({device}, {mode}){', quick' if result.get('quick') else ''}")
    for group, unit, rate in (("bandwidth", "B/s", "bytes_per_s"), ("compute", "FLOP/s", "flops_per_s")):
        for name, entry in (result.get(group) or {}).items():
            shown_unit = "OP/s" if name.startswith("int8") else unit
            clocks = entry.get("clocks") or {}
            seen = [f"{k.removesuffix('_mhz')} {v['mean']:.0f} MHz" for k, v in clocks.items() if v]
            power = entry.get("power_w")
            if power:
                seen.append(f"{power['mean']:.0f} W")
            per = next((v for k, v in entry.items() if k.startswith(f"{rate}_per_") and v), None)
            per_text = f", {fmt_si_unit(per, shown_unit)}/MHz" if per else ""
            size = entry["size"]
            size_text = f"{size / _MIB:.0f} MiB" if group == "bandwidth" else f"N={size}"
            yield (f"  {group} {name:<12} {fmt_si_unit(entry[rate], shown_unit):>12}{per_text} "
                   f"({size_text}; {', '.join(seen) or 'no clocks seen'})")
    for name, why in (result.get("skipped") or {}).items():
        yield f"  skipped {name}: {why}"
    if result.get("device_note"):
        yield f"  device: {result['device_note']}"
    if result.get("note"):
        yield f"  note: {result['note']}"

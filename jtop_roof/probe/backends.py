"""The probe's backends: what times a copy, a triad and a matrix product on this machine.

PyTorch (CUDA), else CuPy, else numpy on the CPU (:func:`pick_backend`); each sizes its arrays
from the device's memory, far larger than the last-level cache. torch and cupy are imported inside
functions only, so importing the probe stays light (no Textual either).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jtop_roof.model.extras import install_hint
from jtop_roof.roofline.measured import ProbeError

BACKENDS = ("auto", "torch", "cupy", "numpy")
TRIAD_SCALAR = 3.0

MIB = 1 << 20
_GIB = 1 << 30


# ---------------------------------------------------------------------------------------------
# array sizes


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
            value = int(match.group(1)) * {"": 1, "K": 1024, "M": MIB, "G": _GIB}[match.group(2)]
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
    size = max(32 * MIB, min(64 * MIB if quick else 512 * MIB, available // 16))
    if llc is not None:
        size = max(size, min(8 * llc, available // 8))
    note = None
    if llc is not None and size < 8 * llc:
        note = f"arrays of {size // MIB} MiB are less than 8x the {llc // MIB} MiB last-level cache"
    return size, note


def _gpu_array_bytes(quick: bool, free: int | None, notes: list[str]) -> int:
    """1 GiB per array (256 MiB quick), less where three arrays would not fit in 3/4 of free memory."""
    want = 256 * MIB if quick else _GIB
    if free is None:
        return want
    fits = (free * 3 // 4) // 3 // MIB * MIB
    if fits < want:
        notes.append(f"arrays cut to {fits // MIB} MiB each: {free // MIB} MiB of device memory is free")
        return max(MIB, fits)
    return want


# ---------------------------------------------------------------------------------------------
# backends


@dataclass
class Kernel:
    """One thing to time: ``fn`` does ``work`` bytes or FLOPs per call; ``release`` frees it."""

    fn: Callable[[], object]
    work: float
    size: int
    release: Callable[[], None] = lambda: None


class Backend:
    """What the probe times with: a library on one device, said plainly in the result (``name``,
    ``device_kind``, ``device_name``, ``library``; ``notes`` joins the result's note)."""

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

    def bandwidth(self, kind: str, array_bytes: int) -> Kernel:
        raise NotImplementedError

    def matmul(self, precision: str, n: int) -> Kernel:
        """Raises ``Unsupported`` (with the reason) where the library lacks the precision."""
        raise NotImplementedError

    def precisions(self) -> tuple[str, ...]:
        raise NotImplementedError

    def close(self) -> None:
        """Free what the backend holds."""


class Unsupported(Exception):
    """A precision this backend cannot measure; the message says why."""


def _matmul_kernel(c: Any, a: Any, b: Any, mm: Callable[[Any, Any, Any], object], n: int) -> Kernel:
    holder = [a, b, c]

    def release() -> None:
        holder.clear()

    return Kernel(lambda: mm(holder[0], holder[1], holder[2]), 2.0 * n ** 3, n, release)


class _NumpyBackend(Backend):
    name = "numpy"
    device_kind = "cpu"

    def __init__(self) -> None:
        super().__init__()
        import numpy as np

        from jtop_roof.sources.host import cpu_model

        self.np = np
        self.device_name = cpu_model()
        self.library = f"numpy {np.__version__}"

    def default_bandwidth_bytes(self, quick: bool) -> int:
        size, note = _cpu_array_bytes(quick)
        if note:
            self.notes.append(note)
        return size

    def default_matmul_n(self, quick: bool) -> int:
        return 1024 if quick else 2048

    def bandwidth(self, kind: str, array_bytes: int) -> Kernel:
        np = self.np
        count = max(1, array_bytes // 4)
        arrays = [np.zeros(count, dtype=np.float32), np.full(count, 1.0, dtype=np.float32)]
        release = arrays.clear  # the kernel is never called after its release
        if kind == "copy":
            return Kernel(lambda: np.copyto(arrays[0], arrays[1]), 2.0 * count * 4, count * 4, release)
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

        return Kernel(triad, 3.0 * count * 4, count * 4, release)

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor", "fp64")

    def matmul(self, precision: str, n: int) -> Kernel:
        np = self.np
        dtype = {"fp32": np.float32, "fp64": np.float64}.get(precision)
        if dtype is None:
            raise Unsupported("numpy has no BLAS product for it on the CPU")
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        c = np.empty((n, n), dtype=dtype)
        return _matmul_kernel(c, a, b, lambda x, y, out: np.matmul(x, y, out=out), n)


class _TorchBackend(Backend):
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

    def bandwidth(self, kind: str, array_bytes: int) -> Kernel:
        torch = self.torch
        count = max(1, array_bytes // 4)
        a = torch.zeros(count, dtype=torch.float32, device=self.device)
        b = torch.full((count,), 1.0, dtype=torch.float32, device=self.device)
        holder = [a, b]
        if kind == "copy":
            kernel = Kernel(lambda: holder[0].copy_(holder[1]), 2.0 * count * 4, count * 4)
        else:
            holder.append(torch.full((count,), 2.0, dtype=torch.float32, device=self.device))
            kernel = Kernel(lambda: torch.add(holder[1], holder[2], alpha=TRIAD_SCALAR, out=holder[0]),
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

    def matmul(self, precision: str, n: int) -> Kernel:
        torch = self.torch
        gen = torch.Generator(device=self.device)
        gen.manual_seed(0)
        if precision == "int8_tensor":
            int_mm = getattr(torch, "_int_mm", None)
            if int_mm is None:
                raise Unsupported(f"torch {torch.__version__} has no torch._int_mm")
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
            raise Unsupported("not measured with torch")
        if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
            raise Unsupported("this GPU has no bf16 (torch.cuda.is_bf16_supported() is False)")
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

    def _kernel(self, c: Any, a: Any, b: Any, mm: Callable[[Any, Any, Any], object], n: int) -> Kernel:
        kernel = _matmul_kernel(c, a, b, mm, n)
        inner = kernel.release

        def release() -> None:
            inner()
            self.torch.cuda.empty_cache()

        kernel.release = release
        return kernel


class _CupyBackend(Backend):
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

    def bandwidth(self, kind: str, array_bytes: int) -> Kernel:
        cp = self.cupy
        count = max(4, array_bytes // 16 * 4)  # whole float4s
        holder = [cp.zeros(count, dtype=cp.float32), cp.full(count, 1.0, dtype=cp.float32)]
        if kind == "copy":
            kernel = Kernel(lambda: cp.copyto(holder[0], holder[1]), 2.0 * count * 4, count * 4)
        else:
            holder.append(cp.full(count, 2.0, dtype=cp.float32))
            if self._triad_kernel is None:
                # CuPy's elementwise kernels (and cp.add) reached 2.5 TB/s on an H200, this 4.4.
                self._triad_kernel = cp.RawKernel(_CUDA_TRIAD, "jroof_triad4")
            fused = self._triad_kernel
            scalar, quads = cp.float32(TRIAD_SCALAR), cp.int64(count // 4)
            grid = (min((count // 4 + 255) // 256, 2 ** 31 - 1),)
            kernel = Kernel(lambda: fused(grid, (256,), (holder[0], holder[1], holder[2], scalar, quads)),
                             3.0 * count * 4, count * 4)
        kernel.release = self._releaser(holder)
        return kernel

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", "bf16_tensor", "fp16_tensor", "int8_tensor")

    def matmul(self, precision: str, n: int) -> Kernel:
        cp = self.cupy
        if precision == "bf16_tensor":
            raise Unsupported("CuPy has no bfloat16 (install PyTorch for it)")
        if precision == "int8_tensor":
            raise Unsupported("CuPy's int8 matmul is not a cuBLAS tensor-core product (install PyTorch)")
        dtype = {"fp32": cp.float32, "fp16_tensor": cp.float16}.get(precision)
        if dtype is None:
            raise Unsupported("not measured with CuPy")
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


def pick_backend(backend: str = "auto") -> Backend:
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
    hint = install_hint("gpu", "torch nvidia-ml-py")
    fallback.notes.append(f"no CUDA library: {'; '.join(reasons)} ({hint})")
    return fallback


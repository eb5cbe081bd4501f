"""Samples of this machine (no tegrastats): psutil for CPU, memory and sensors, NVML for NVIDIA GPUs.

Lets the monitor run on a workstation or a dGPU server (and on a Jetson from JetPack 7, which ships
NVML). GPU 0 fills ``sample.gpu`` (load %, SM clock), ``sample.emc`` (memory clock and NVML's memory
utilisation, the nearest thing to EMC load), ``rails["NVML_GPU"]`` (``nvmlDeviceGetPowerUsage``: the
GPU board's power, averaged over about 1 s on Ampere and newer; not the machine's input power, so
the model never counts it as total power),
``temps_c["gpu"]`` and ``throttle_reasons`` (NVML clock-event reasons, research/roofline.md 3.4).
``power_meters`` gives what the power sampler reads between samples (``sources.power``): NVML's
total-energy counters and instantaneous power, and the CPU's RAPL counters.
GPU ``i`` > 0 appears as engine ``GPU<i>``, rail ``NVML_GPU<i>``, temperature ``gpu<i>`` and reasons
prefixed ``GPU<i>:``. Anything a machine does not report is ``None``; an NVML that is missing or
fails to start leaves every GPU field ``None``.
"""

from __future__ import annotations

import os
import platform
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil as psutil_module

from jtop_roof.model.extras import install_hint
from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import (
    DEVICE_ONLY_RAIL_PREFIX,
    Clocked,
    CpuCore,
    Engine,
    Gpu,
    Memory,
    Rail,
    Record,
    Sample,
)
from jtop_roof.sources.base import Source
from jtop_roof.sources.power import MeterSet, board_meters, read_value
from jtop_roof.sources.processes import IoMeter, io_counters
from jtop_roof.sources.sysfs import find_fans, open_regular_file, read_fans, read_int, read_text, unique_name

_MIB = 1024 * 1024

# nvmlClocksEventReason* bits (nvidia-ml-py 13.615.71; research/roofline.md section 3.4).
CLOCK_EVENT_REASONS = (
    (0x1, "GpuIdle"),
    (0x2, "ApplicationsClocksSetting"),
    (0x4, "SwPowerCap"),
    (0x8, "HwSlowdown"),
    (0x10, "SyncBoost"),
    (0x20, "SwThermalSlowdown"),
    (0x40, "HwThermalSlowdown"),
    (0x80, "HwPowerBrakeSlowdown"),
    (0x100, "DisplayClockSetting"),
    (0x200, "BoardLimit"),
    (0x400, "Reliability"),
)
# The current name first; the deprecated one ("removed in CUDA 14.0") for older drivers/bindings.
_REASON_CALLS = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")


def decode_clock_event_reasons(mask: int) -> list[str]:
    """Names of the set bits, lowest first; bits NVML may add later are kept as hex."""
    names = [name for bit, name in CLOCK_EVENT_REASONS if mask & bit]
    unknown = mask & ~sum(bit for bit, _ in CLOCK_EVENT_REASONS)
    bit = 1
    while unknown >= bit:
        if unknown & bit:
            names.append(hex(bit))
        bit <<= 1
    return names


def _call(fn: Callable[..., Any] | None, *args: Any, **kwargs: Any) -> Any:
    """One query; ``None`` when the function is missing or fails (NVMLError, not supported, a
    psutil call this platform lacks)."""
    if fn is None:
        return None
    try:
        return fn(*args, **kwargs)
    except Exception:  # NVML raises its own NVMLError subclasses per status; any failure is "unknown"
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's marketing name (x86 ``model name``; ARM ``Model``/``Hardware``), else the platform."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        text = ""
    for key in ("model name", "Model", "Hardware"):
        for line in text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or None


class HostSource(Source):
    """Polls psutil (and NVML when it starts) every ``interval_ms`` until ``stop()``."""

    kind = "host"

    def __init__(
        self,
        interval_ms: int,
        *,
        nvml: Any = None,
        psutil: Any = psutil_module,
        clock: Callable[[], float] = time.time,
        mono: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] | None = None,
        sysfs_root: str | Path = "/",
        io: IoMeter | None = None,
    ) -> None:
        """``nvml``: a pynvml-like module; ``None`` imports nvidia-ml-py if installed, ``False``
        turns NVML off. ``sleep`` defaults to a wait that ``stop()`` interrupts. ``sysfs_root``:
        where the fans are (``--sysfs-root``); ``io``: the disk and network counters."""
        self.interval_ms = int(interval_ms)
        self._fans = find_fans(sysfs_root)
        self._io = io if io is not None else IoMeter(counters=lambda: io_counters(psutil))
        self._psutil = psutil
        self._clock = clock
        self._mono = mono
        self._stop = threading.Event()
        self._sleep = sleep if sleep is not None else self._stop.wait
        self._nvml_lock = threading.Lock()
        self._nvml_problem: str | None = None
        self._handles: list[Any] | None = None  # None: not started yet
        if nvml is None:
            try:
                import pynvml

                nvml = pynvml
            except ImportError:
                nvml = False
                self._nvml_problem = f"nvidia-ml-py is not installed ({install_hint('nvml', 'nvidia-ml-py')})"
        elif nvml is False:
            self._nvml_problem = "NVML turned off"
        self._nvml = nvml or None

    # -- control -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Thread-safe, no waiting; safe from a signal handler. ``records()`` ends at its next wake."""
        self._stop.set()

    # -- NVML lifecycle ------------------------------------------------------------------------

    def _gpu_handles(self) -> list[Any]:
        """Device handles, starting NVML on first use; empty when there is no usable NVML."""
        with self._nvml_lock:
            if self._handles is None:
                self._handles = []
                if self._nvml is not None:
                    try:
                        self._nvml.nvmlInit()
                        count = self._nvml.nvmlDeviceGetCount()
                        self._handles = [self._nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
                    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
                        self._nvml_problem = f"NVML did not start: {exc or type(exc).__name__}"
                        self._handles = []
            return self._handles

    def _release_nvml(self) -> None:
        with self._nvml_lock:
            if self._handles and self._nvml is not None:
                _call(getattr(self._nvml, "nvmlShutdown", None))
                self._handles = None

    def _fn(self, name: str) -> Callable[..., Any] | None:
        return getattr(self._nvml, name, None)

    def _const(self, name: str, default: int) -> int:
        return getattr(self._nvml, name, default)

    # -- the stream ----------------------------------------------------------------------------

    def records(self) -> Iterator[Record]:
        # psutil's first per-core figures cover the time since boot (or nothing): discard them.
        _call(self._psutil.cpu_percent, percpu=True)
        try:
            while not self._stop.is_set():
                self._sleep(self.interval_ms / 1000)
                if self._stop.is_set():
                    return
                yield self.sample()
        finally:
            self._release_nvml()

    def sample(self) -> Sample:
        """One reading of the machine now."""
        sample = Sample(t_wall=self._clock(), t_mono=self._mono())
        sample.cpus = self._cpus()
        vm = _call(self._psutil.virtual_memory)
        if vm is not None:
            sample.ram = Memory(round((vm.total - vm.available) / _MIB, 1), round(vm.total / _MIB, 1))
        swap = _call(self._psutil.swap_memory)
        if swap is not None:
            sample.swap = Memory(round(swap.used / _MIB, 1), round(swap.total / _MIB, 1))
        seen: set[str] = set()
        self._add_gpus(sample, seen)
        for name, entry in self._sensors(seen):
            sample.temps_c[name] = None if entry.current is None else float(entry.current)
        sample.fans = read_fans(self._fans) if self._fans else None
        sample.io = self._io.read()
        return sample

    def gpu_process_memory(self) -> dict[int, float]:
        """MB of GPU memory by pid, over every GPU, from NVML's compute and graphics process lists
        (empty where NVML gives none: no GPU, or a driver that hides other users' processes)."""
        used: dict[int, float] = {}
        for handle in self._gpu_handles():
            for call in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                for process in _call(self._fn(call), handle) or ():
                    pid = getattr(process, "pid", None)
                    memory = _number(getattr(process, "usedGpuMemory", None))
                    if isinstance(pid, int) and memory is not None:
                        used[pid] = round(used.get(pid, 0.0) + memory / _MIB, 1)
        return used

    def _cpus(self) -> list[CpuCore | None] | None:
        loads = _call(self._psutil.cpu_percent, percpu=True)
        if not loads:
            return None
        freqs = _call(self._psutil.cpu_freq, percpu=True)
        if freqs and len(freqs) == len(loads):
            mhz = [round(f.current) if f.current and f.current > 0 else None for f in freqs]
        else:  # no cpufreq, or one aggregate figure that belongs to no core in particular
            mhz = [None] * len(loads)
        return [CpuCore(float(load), clock) for load, clock in zip(loads, mhz, strict=True)]

    def _sensors(self, seen: set[str]) -> list[tuple[str, Any]]:
        """psutil sensors as (lower-case unique name, entry): ``chip`` or ``chip_label``."""
        readings = _call(getattr(self._psutil, "sensors_temperatures", None)) or {}
        out = []
        for chip, entries in readings.items():
            for entry in entries:
                label = f"{chip}_{entry.label}" if entry.label else chip
                out.append((unique_name("_".join(label.lower().split()), seen), entry))
        return out

    def _add_gpus(self, sample: Sample, seen: set[str]) -> None:
        for index, handle in enumerate(self._gpu_handles()):
            util = _call(self._fn("nvmlDeviceGetUtilizationRates"), handle)
            load = None if util is None else float(util.gpu)
            sm_mhz = _call(self._fn("nvmlDeviceGetClockInfo"), handle, self._const("NVML_CLOCK_SM", 1))
            power_mw = _call(self._fn("nvmlDeviceGetPowerUsage"), handle)
            temp = _call(self._fn("nvmlDeviceGetTemperature"), handle, self._const("NVML_TEMPERATURE_GPU", 0))
            reasons = self._reasons(handle)
            suffix = "" if index == 0 else str(index)
            if index == 0:
                sample.gpu = Gpu(load, (int(sm_mhz),) if sm_mhz else ())
                mem_mhz = _call(self._fn("nvmlDeviceGetClockInfo"), handle, self._const("NVML_CLOCK_MEM", 2))
                mem_load = None if util is None else float(util.memory)
                if mem_mhz is not None or mem_load is not None:
                    sample.emc = Clocked(mem_load, None if mem_mhz is None else int(mem_mhz))
                sample.throttle_reasons = reasons
            else:
                sample.engines[f"GPU{index}"] = Engine(load, None if sm_mhz is None else int(sm_mhz))
                if reasons is not None:
                    sample.throttle_reasons = (sample.throttle_reasons or []) + [
                        f"GPU{index}:{name}" for name in reasons
                    ]
            if power_mw is not None:
                sample.rails[f"{DEVICE_ONLY_RAIL_PREFIX}GPU{suffix}"] = Rail(float(power_mw))
            sample.temps_c[unique_name(f"gpu{suffix}", seen)] = None if temp is None else float(temp)

    def _reasons(self, handle: Any) -> list[str] | None:
        for name in _REASON_CALLS:
            mask = _call(self._fn(name), handle)
            if mask is not None:
                return decode_clock_event_reasons(int(mask))
        return None

    # -- power between samples -----------------------------------------------------------------

    def power_meters(self, root: str | Path) -> MeterSet:
        """What the power sampler reads here: the board's monitors under ``root`` (a Jetson with
        NVML), each GPU's NVML energy counter and power, and the CPU's RAPL counters."""
        found = board_meters(root)
        handles = self._gpu_handles()
        if handles and self._nvml is not None:
            meter = NvmlMeter(self._nvml, handles)
            if meter.gpus:
                found += MeterSet((meter,))
        return found + rapl_meters(root)

    # -- identity ------------------------------------------------------------------------------

    def describe(self) -> SourceInfo:
        """Host and GPU identity; every listed header key is present, ``None`` when unknown."""
        handles = self._gpu_handles()
        first = handles[0] if handles else None
        names = [_text(_call(self._fn("nvmlDeviceGetName"), h)) for h in handles]
        cpu = cpu_model()
        freq = _call(self._psutil.cpu_freq)
        max_clocks: dict[str, Any] = {
            "gpu_mhz": None,
            "emc_mhz": None,
            "cpu_mhz": round(freq.max) if freq is not None and freq.max else None,
        }
        limit_mw = None
        if first is not None:
            max_info = self._fn("nvmlDeviceGetMaxClockInfo")
            max_clocks["gpu_mhz"] = _call(max_info, first, self._const("NVML_CLOCK_SM", 1))
            max_clocks["emc_mhz"] = _call(max_info, first, self._const("NVML_CLOCK_MEM", 2))
            limit_mw = _call(self._fn("nvmlDeviceGetEnforcedPowerLimit"), first)
        sensors = self._sensors(set())
        trips: dict[str, list[dict[str, Any]]] = {}
        for name, entry in sensors:
            points = [
                {"type": kind, "temp_c": float(value)}
                for kind, value in (("high", entry.high), ("critical", entry.critical))
                if value is not None and value > 0
            ]
            if points:
                trips[name] = points
        return SourceInfo.from_mapping({
            "source": self.kind,
            "interval_ms": self.interval_ms,
            "host": socket.gethostname() or None,
            "model": (names[0] if names else None) or cpu,
            "cpu_model": cpu,
            "gpu": names[0] if names else None,
            "gpus": names,
            "max_clocks": max_clocks,
            "power_limit_w": None if limit_mw is None else limit_mw / 1000,
            "driver_version": _text(_call(self._fn("nvmlSystemGetDriverVersion"))) if handles else None,
            "thermal_trips": trips,
            "hints": self._hints(bool(handles), bool(sensors)),
        })

    def _hints(self, has_gpu: bool, has_sensors: bool) -> list[str]:
        hints = []
        if not has_gpu:
            why = self._nvml_problem or "NVML reports no GPU"
            hints.append(f"No GPU readings: {why}.")
        else:
            hints.append(
                "GPU power (NVML_GPU) is the GPU board's power alone: this machine's total input "
                "power is not measured, so no total is shown."
            )
        if not has_sensors:
            hints.append("No temperature sensors are visible to psutil on this machine.")
        return hints


#: ``NVML_FI_DEV_POWER_INSTANT`` (nvml.h): the board's power now, mW (research/power_measurement.md).
NVML_FI_DEV_POWER_INSTANT = 186
#: The member of NVML's value union for each ``nvmlValueType_t``.
_NVML_VALUE_MEMBERS = ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal", "usVal")


class NvmlMeter:
    """Each GPU's total-energy counter (mJ since the driver loaded) where it has one, and its power
    for plots: the instantaneous field where the driver offers it, else power usage, which recent
    GPUs average over about 1 s (the source then says so). Rails and counters are named as the
    host source's rails (``NVML_GPU``, ``NVML_GPU1``...)."""

    def __init__(self, nvml: Any, handles: list[Any]) -> None:
        self._nvml = nvml
        #: (name, handle, has a counter, has the instantaneous field) per GPU that gives either
        self.gpus: list[tuple[str, Any, bool, bool]] = []
        for index, handle in enumerate(handles):
            counter = self._energy_mj(handle) is not None
            instant = self._instant_mw(handle) is not None
            usage = _call(getattr(nvml, "nvmlDeviceGetPowerUsage", None), handle)
            if counter or instant or usage is not None:
                suffix = "" if index == 0 else str(index)
                self.gpus.append((f"{DEVICE_ONLY_RAIL_PREFIX}GPU{suffix}", handle, counter, instant))
        averaged = any(not instant for _, _, _, instant in self.gpus)
        self.source = "NVML, power averaged over about 1 s" if averaged else "NVML"

    def read(self) -> tuple[dict[str, float], dict[str, float]] | None:
        rails: dict[str, float] = {}
        counters: dict[str, float] = {}
        for name, handle, counter, instant in self.gpus:
            if counter and (mj := self._energy_mj(handle)) is not None:
                counters[name] = mj
            mw = self._instant_mw(handle) if instant else _number(
                _call(getattr(self._nvml, "nvmlDeviceGetPowerUsage", None), handle))
            if mw is not None:
                rails[name] = mw
        return (rails, counters) if rails or counters else None

    def close(self) -> None:
        """NVML is the host source's, shut down when its stream ends."""

    def _energy_mj(self, handle: Any) -> float | None:
        return _number(_call(getattr(self._nvml, "nvmlDeviceGetTotalEnergyConsumption", None), handle))

    def _instant_mw(self, handle: Any) -> float | None:
        values = _call(getattr(self._nvml, "nvmlDeviceGetFieldValues", None), handle,
                       [NVML_FI_DEV_POWER_INSTANT])
        if not values or getattr(values[0], "nvmlReturn", 1) != 0:
            return None
        kind = getattr(values[0], "valueType", None)
        if not isinstance(kind, int) or not 0 <= kind < len(_NVML_VALUE_MEMBERS):
            return None
        return _number(getattr(values[0].value, _NVML_VALUE_MEMBERS[kind], None))


def _number(value: Any) -> float | None:
    """A finite, non-negative reading below 1e18 (NVML's counters are u64 mJ), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < 1e18 else None


#: RAPL's root-only counters (CVE-2020-8694): said once, as a hint.
RAPL_ROOT_ONLY = ("RAPL energy counters are readable by root only here (since CVE-2020-8694): "
                  "the CPU's energy is not measured")


class RaplMeter:
    """The CPU's RAPL energy counters (powercap ``energy_uj``, µJ), one per top-level domain
    (``package-0``, ``psys``...; their sub-domains are inside them), as ``RAPL_<name>`` in mJ,
    unwrapped: a counter wraps to 0 at ``max_energy_range_uj``."""

    source = "RAPL"

    def __init__(self, zones: list[tuple[str, int, int]]) -> None:
        """``zones``: (counter name, open ``energy_uj``, its range in µJ)."""
        self._zones = zones
        self._last: dict[str, int] = {}
        self._total_uj: dict[str, float] = {}

    def read(self) -> tuple[dict[str, float], dict[str, float]] | None:
        counters: dict[str, float] = {}
        for name, fd, range_uj in self._zones:
            raw = read_value(fd)
            if raw is None or not 0 <= raw <= range_uj:
                continue
            last = self._last.get(name)
            step = 0 if last is None else raw - last
            if step < 0:
                step += range_uj
            self._last[name] = raw
            total = self._total_uj[name] = self._total_uj.get(name, float(raw)) + step
            counters[name] = total / 1000
        return ({}, counters) if counters else None

    def close(self) -> None:
        for _, fd, _ in self._zones:
            os.close(fd)
        self._zones = []


def rapl_meters(root: str | Path) -> MeterSet:
    """The RAPL meter of the domains readable under ``root``; where the counters exist but are
    root-only, that is the problem said."""
    base = Path(root) / "sys/class/powercap"
    try:
        zones = sorted(p for p in base.glob("intel-rapl:*") if p.name.count(":") == 1)[:64]
    except OSError:
        return MeterSet()
    found: list[tuple[str, int, int]] = []
    seen: set[str] = set()
    denied = False
    for zone in zones:
        range_uj = read_int(zone / "max_energy_range_uj")
        name = read_text(zone / "name", 64) or zone.name
        if range_uj is None or range_uj <= 0:
            continue
        fd = open_regular_file(zone / "energy_uj")
        if fd is None or read_value(fd) is None:
            denied = denied or _root_only(zone / "energy_uj")
            if fd is not None:
                os.close(fd)
            continue
        found.append((unique_name(f"RAPL_{name}", seen), fd, range_uj))
    if found:
        return MeterSet((RaplMeter(found),))
    return MeterSet(problems=(RAPL_ROOT_ONLY,) if denied else ())


def _root_only(path: Path) -> bool:
    """The file is there but not world-readable (RAPL's ``energy_uj`` is 0400 since the CVE)."""
    try:
        return not path.stat().st_mode & stat.S_IROTH
    except OSError:
        return False

"""What world-readable sysfs tells about a Jetson board, for the live tegrastats source.

Without root, tegrastats prints no GPU or EMC clock on most boards (research/tegrastats_fields.md
section 1): its own readers are debugfs files (section 7). Devfreq and cpufreq are readable by
anyone, so ``BoardFiles.fill`` puts their clocks into a sample where tegrastats left ``None``, and
``BoardFiles.describe`` gives the board's identity for the recording header and the UI header.

Every path is read relative to an injectable root, so tests use a fake tree (tests/data/sysfs).
Paths (research/jetson_specs.md section 3.3 and the nvpmodel confs cited there):

* GPU devfreq ``/sys/class/devfreq/<node>/{cur_freq,max_freq}`` in Hz: ``17000000.gpu`` (Orin, JP6),
  ``17000000.ga10b`` (Orin, JP5), ``17000000.gp10b`` (TX2), ``57000000.gpu`` (Nano),
  ``gpu-gpc-0`` (Thor). ``cur_freq`` is the DVFS governor's set point, not the measured clock root
  tegrastats prints, and it does not show millisecond over-current dips (jetson_specs.md 3.2).
* EMC: ``/sys/class/devfreq/bwmgr/{cur,max}_freq`` (Thor, jetson_stats PR #825); the debugfs
  ``/sys/kernel/debug/bpmp/debug/clk/emc/{rate,max_rate}`` (root only); nvpmodel's EMC cap
  ``/sys/kernel/nvpmodel_clk_cap/emc`` (JP6) or ``/sys/kernel/nvpmodel_emc_cap/emc_iso_cap`` (JP5), Hz.
* CPU ``/sys/devices/system/cpu/cpuN/cpufreq/{scaling_cur_freq,cpuinfo_max_freq}`` in kHz.
* Thermal ``/sys/class/thermal/thermal_zone*/{type,temp,trip_point_N_temp,trip_point_N_type}``, m°C.
* Model ``/proc/device-tree/model`` (NUL-terminated).
* Power mode: ``nvpmodel -q`` (``NV Power Mode: NAME`` then the id), else ``/var/lib/nvpmodel/status``
  (``pmode:0002``) with the names from ``/etc/nvpmodel.conf`` (``< POWER_MODEL ID=2 NAME=MAXN_SUPER >``).
* Fans: the Linux pwm-fan driver's hwmon, ``/sys/class/hwmon/hwmon*`` whose ``name`` is ``pwmfan``
  (drivers/hwmon/pwm-fan.c; docs.kernel.org/hwmon/pwm-fan.html): ``pwm1`` is the duty, 0-255
  (255 = full speed), ``fan1_input`` the tachometer's rpm where one is wired. Jetson kernels give the
  tachometer a hwmon of its own with an ``rpm`` file (jetson_stats, jtop/core/fan.py, pairs these
  with the fans in order, as is done here for a fan without ``fan1_input``).
* TPC gating: ``/sys/devices/gpu.0/tpc_pg_mask`` or ``/sys/devices/platform/gpu.0/tpc_pg_mask`` (paths
  from the nvpmodel conf), else the ``TPC_POWER_GATING TPC_PG_MASK n`` line of the current mode.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jtop_roof.model.codec import MAX_RPM
from jtop_roof.model.records import Clocked, CpuCore, Fan, Gpu, Sample
from jtop_roof.sources.children import run_bounded
from jtop_roof.sources.processes import IoMeter

# Devfreq node names of Jetson GPUs; a "gpc" node (Thor's gpu-gpc-0) is the graphics clock.
_GPU_DEVFREQ = re.compile(r"gpu|ga10b|gv11b|gp10b|gm20b")
_EMC_DEVFREQ = ("bwmgr",)
_EMC_DEBUGFS = "sys/kernel/debug/bpmp/debug/clk/emc"
_EMC_CAPS = ("sys/kernel/nvpmodel_clk_cap/emc", "sys/kernel/nvpmodel_emc_cap/emc_iso_cap")
_TPC_PG_MASKS = ("sys/devices/gpu.0/tpc_pg_mask", "sys/devices/platform/gpu.0/tpc_pg_mask")
# nvpmodel writes INT_MAX-like values for "no cap"; no Jetson clock is anywhere near this.
_PLAUSIBLE_MAX_HZ = 20e9

Runner = Callable[[list[str]], "str | None"]


#: The most of one board file read (an nvpmodel conf is tens of kB; a sysfs value a few bytes).
MAX_FILE_BYTES = 1 << 20


def open_regular_file(path: Path | str) -> int | None:
    """A descriptor of ``path`` when it is a regular file (sysfs and procfs values are), else None:
    opened without blocking, so a FIFO planted in a tree never waits for a writer, and a device
    such as ``/dev/zero`` behind a symlink is refused rather than read forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def read_bounded(path: Path | str, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """At most ``limit`` bytes of a regular file (``open_regular_file``); None when unreadable."""
    fd = open_regular_file(path)
    if fd is None:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> str | None:
    """File contents stripped of whitespace and NULs; ``None`` when unreadable (permission, EINVAL
    from a disabled thermal sensor, absent file, not a regular file)."""
    data = read_bounded(path, limit)
    return None if data is None else data.decode("utf-8", "replace").strip().strip("\x00").strip()


#: A board's integer of at most 64 bits, in ASCII decimal or 0x hex. Anything longer is a bad value:
#: a 5,000-digit one is past Python's int-conversion limit, a 400-digit one overflows every float.
_SMALL_INT = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]{1,16}|[0-9]{1,20})")


def small_int(text: str) -> int | None:
    """The integer ``text`` holds (surrounding whitespace allowed), or None for anything else."""
    text = text.strip()
    if not _SMALL_INT.fullmatch(text):
        return None
    return int(text, 16 if text.lstrip("+-")[:2] in ("0x", "0X") else 10)


def read_int(path: Path) -> int | None:
    """An integer file (decimal, or hex with 0x); ``None`` when unreadable or not such a number."""
    text = read_text(path)
    return None if text is None else small_int(text)


def _hz_to_mhz(hz: int | None) -> float | None:
    if hz is None or hz <= 0 or hz > _PLAUSIBLE_MAX_HZ:
        return None
    return round(hz / 1e6, 1)


def _number(value: float) -> float | int:
    """921.6 stays 921.6; 1020.0 becomes 1020 (as tegrastats prints it)."""
    return int(value) if float(value).is_integer() else value


def run_quietly(command: list[str]) -> str | None:
    """Stdout of a short command, or ``None`` when it is missing, fails or takes over 3 s (run as
    the sources' children are: it never outlives the monitor)."""
    try:
        code, out, _ = run_bounded(command, 3.0, 1 << 16)
    except OSError:
        return None
    return out.decode("utf-8", "replace") if code == 0 else None


@dataclass(frozen=True)
class ThermalZone:
    name: str  # type without "-thermal", lower-case: matches tegrastats' "cpu@", "gpu@", "tj@"
    path: Path


#: The pwm-fan driver's hwmon name, its duty's full scale, and the hwmon nodes looked at.
FAN_HWMON, PWM_FULL, MAX_HWMON_NODES = "pwmfan", 255, 64


@dataclass(frozen=True)
class FanFiles:
    """A fan's duty file and its tachometer's rpm file (None: no tachometer)."""

    name: str
    pwm: Path
    rpm: Path | None


def find_fans(root: str | Path) -> list[FanFiles]:
    """The pwm-fan hwmons under ``root`` (see the module doc), named by their hwmon name."""
    try:
        nodes = sorted((Path(root) / "sys/class/hwmon").iterdir())[:MAX_HWMON_NODES]
    except OSError:
        return []
    tachometers = [node / "rpm" for node in nodes if (node / "rpm").is_file()]
    fans: list[FanFiles] = []
    seen: set[str] = set()
    for node in nodes:
        if read_text(node / "name", 64) == FAN_HWMON and (node / "pwm1").is_file():
            own = node / "fan1_input"
            fans.append(FanFiles(unique_name(FAN_HWMON, seen), node / "pwm1", own if own.is_file() else None))
    spare = iter(tachometers)
    return [fan if fan.rpm is not None else FanFiles(fan.name, fan.pwm, next(spare, None)) for fan in fans]


def read_fans(fans: list[FanFiles]) -> dict[str, Fan] | None:
    """Each fan's duty in % of full and its rpm; None when no fan gave either."""
    out: dict[str, Fan] = {}
    for fan in fans:
        duty = read_int(fan.pwm)
        rpm = None if fan.rpm is None else read_int(fan.rpm)
        pct = round(duty / PWM_FULL * 100, 1) if duty is not None and 0 <= duty <= PWM_FULL else None
        speed = float(rpm) if rpm is not None and 0 <= rpm <= MAX_RPM else None
        if pct is not None or speed is not None:
            out[fan.name] = Fan(pct, speed)
    return out or None


class BoardFiles:
    """The board's readable files under ``root``; devfreq, thermal and fan nodes are found once.
    ``io``: this machine's disk and network counters (psutil; by default the real ones)."""

    def __init__(self, root: str | Path = "/", *, run: Runner | None = None,
                 io: IoMeter | None = None) -> None:
        self.root = Path(root)
        self.fans = find_fans(self.root)
        self._io = io if io is not None else IoMeter()
        # Running the real nvpmodel only makes sense for the real filesystem.
        self._run = run if run is not None else (run_quietly if self.root == Path("/") else lambda _c: None)
        self.gpu_devfreq = self._find_gpu_devfreq()
        self.emc_devfreq = self._find_emc_devfreq()
        self.zones = self._find_thermal_zones()
        self.oc_hwmon = self._find_oc_hwmon()

    # -- discovery -----------------------------------------------------------------------------

    def _devfreq_nodes(self) -> list[Path]:
        base = self.root / "sys/class/devfreq"
        try:
            return sorted(p for p in base.iterdir() if (p / "cur_freq").exists())
        except OSError:
            return []

    def _find_gpu_devfreq(self) -> Path | None:
        nodes = [p for p in self._devfreq_nodes() if _GPU_DEVFREQ.search(p.name)]
        nodes.sort(key=lambda p: ("gpc" not in p.name, p.name))
        return nodes[0] if nodes else None

    def _find_oc_hwmon(self) -> Path | None:
        """The ``soctherm_oc`` hwmon device (Orin, Thor): its over-current event counters."""
        base = self.root / "sys/class/hwmon"
        try:
            nodes = sorted(base.iterdir())
        except OSError:
            return None
        return next((p for p in nodes if read_text(p / "name") == "soctherm_oc"), None)

    def oc_events(self) -> dict[str, int] | None:
        """``oc1``..``oc3`` event counts (under-voltage, average and instantaneous over-current)."""
        if self.oc_hwmon is None:
            return None
        counts = {f"oc{n}": read_int(self.oc_hwmon / f"oc{n}_event_cnt") for n in (1, 2, 3)}
        found = {name: count for name, count in counts.items() if count is not None}
        return found or None

    def _find_emc_devfreq(self) -> Path | None:
        return next((p for p in self._devfreq_nodes() if p.name in _EMC_DEVFREQ), None)

    def _find_thermal_zones(self) -> list[ThermalZone]:
        base = self.root / "sys/class/thermal"
        try:
            paths = sorted(base.glob("thermal_zone*"), key=lambda p: _trailing_int(p.name))
        except OSError:
            return []
        zones: list[ThermalZone] = []
        seen: set[str] = set()
        for path in paths:
            kind = read_text(path / "type")
            if not kind:
                continue
            name = unique_name(zone_name(kind), seen)
            zones.append(ThermalZone(name, path))
        return zones

    # -- live readings -------------------------------------------------------------------------

    def gpu_mhz(self) -> int | None:
        """GPU devfreq set point in MHz (see the module docstring for what it is not)."""
        if self.gpu_devfreq is None:
            return None
        mhz = _hz_to_mhz(read_int(self.gpu_devfreq / "cur_freq"))
        return None if mhz is None else round(mhz)

    def emc_mhz(self) -> int | None:
        """EMC clock in MHz from the EMC devfreq node (Thor) or, as root, BPMP debugfs."""
        hz = read_int(self.emc_devfreq / "cur_freq") if self.emc_devfreq is not None else None
        if hz is None:
            hz = read_int(self.root / _EMC_DEBUGFS / "rate")
        mhz = _hz_to_mhz(hz)
        return None if mhz is None else round(mhz)

    def cpu_mhz(self, index: int) -> int | None:
        khz = read_int(self.root / f"sys/devices/system/cpu/cpu{index}/cpufreq/scaling_cur_freq")
        return None if khz is None or khz <= 0 else round(khz / 1000)

    def fill(self, sample: Sample) -> None:
        """Put sysfs clocks where tegrastats printed none (non-root runs). Never overwrites a value
        tegrastats printed: the measured root clock is better than the governor's set point."""
        if not sample.is_sample:
            return
        if sample.gpu is None or not sample.gpu.gpc_mhz:
            mhz = self.gpu_mhz()
            if mhz is not None:
                load = sample.gpu.load_pct if sample.gpu is not None else None
                sample.gpu = Gpu(load, (mhz,))
        if sample.emc is None or sample.emc.mhz is None:
            mhz = self.emc_mhz()
            if mhz is not None:
                load = sample.emc.load_pct if sample.emc is not None else None
                sample.emc = Clocked(load, mhz)
        if sample.cpus:
            for index, core in enumerate(sample.cpus):
                if core is not None and core.mhz is None:
                    sample.cpus[index] = CpuCore(core.load_pct, self.cpu_mhz(index))
        if sample.oc_events is None:
            sample.oc_events = self.oc_events()
        if sample.fans is None and self.fans:
            sample.fans = read_fans(self.fans)
        if sample.io is None:
            sample.io = self._io.read()

    # -- identity for the header ---------------------------------------------------------------

    def model(self) -> str | None:
        return read_text(self.root / "proc/device-tree/model") or None

    def max_clocks(self) -> dict[str, float | int]:
        """``gpu_mhz``: devfreq max_freq, i.e. the cap of the current power mode; ``emc_mhz``: EMC
        maximum where readable; ``emc_cap_mhz``: nvpmodel's EMC cap; ``cpu_mhz``: highest
        cpuinfo_max_freq. Absent keys are unknown."""
        out: dict[str, float | int] = {}
        if self.gpu_devfreq is not None:
            gpu = _hz_to_mhz(read_int(self.gpu_devfreq / "max_freq"))
            if gpu is not None:
                out["gpu_mhz"] = _number(gpu)
        emc_hz = read_int(self.emc_devfreq / "max_freq") if self.emc_devfreq is not None else None
        if emc_hz is None:
            emc_hz = read_int(self.root / _EMC_DEBUGFS / "max_rate")
        emc = _hz_to_mhz(emc_hz)
        if emc is not None:
            out["emc_mhz"] = _number(emc)
        for cap_path in _EMC_CAPS:
            cap = _hz_to_mhz(read_int(self.root / cap_path))
            if cap is not None:
                out["emc_cap_mhz"] = _number(cap)
                break
        cpu_khz = [
            khz
            for path in (self.root / "sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq")
            if (khz := read_int(path)) is not None and khz > 0
        ]
        if cpu_khz:
            out["cpu_mhz"] = _number(round(max(cpu_khz) / 1000, 1))
        return out

    def thermal_trips(self) -> dict[str, list[dict[str, Any]]]:
        """``{zone: [{"type": "passive", "temp_c": 99.0}, ...]}`` sorted by temperature; zones
        without readable trip points are left out."""
        trips: dict[str, list[dict[str, Any]]] = {}
        for zone in self.zones:
            points = []
            for temp_path in zone.path.glob("trip_point_*_temp"):
                milli = read_int(temp_path)
                if milli is None:
                    continue
                kind = read_text(temp_path.with_name(temp_path.name.replace("_temp", "_type"))) or "unknown"
                points.append({"type": kind, "temp_c": _number(milli / 1000)})
            if points:
                trips[zone.name] = sorted(points, key=lambda p: p["temp_c"])
        return trips

    def power_mode(self) -> tuple[int | None, str | None]:
        """(id, name) of the nvpmodel mode: ``nvpmodel -q`` first, then nvpmodel's status file."""
        output = self._run(["nvpmodel", "-q"])
        if output:
            mode_id, name = parse_nvpmodel_query(output)
            if name is not None:
                return mode_id, name
        status = read_text(self.root / "var/lib/nvpmodel/status") or ""
        match = re.search(r"pmode:([0-9]+)", status)
        mode_id = None if match is None else small_int(match.group(1))
        if mode_id is None:
            return None, None
        return mode_id, self._conf_modes().get(mode_id, {}).get("name")

    def _conf_modes(self) -> dict[int, dict[str, Any]]:
        text = read_text(self.root / "etc/nvpmodel.conf")
        return parse_nvpmodel_conf(text) if text else {}

    def gpu_tpcs(self, mode_id: int | None) -> dict[str, Any] | None:
        """TPC power-gating mask (bit set = TPC gated) and how many TPCs it gates. The active count
        needs the module's TPC total, which no readable file gives (jetson_specs.md section 2)."""
        for rel in _TPC_PG_MASKS:
            mask = read_int(self.root / rel)
            if mask is not None:
                return {"tpc_pg_mask": mask, "gated_tpcs": bin(mask).count("1"), "from": "/" + rel}
        if mode_id is not None:
            mask = self._conf_modes().get(mode_id, {}).get("tpc_pg_mask")
            if mask is not None:
                return {"tpc_pg_mask": mask, "gated_tpcs": bin(mask).count("1"), "from": "/etc/nvpmodel.conf"}
        return None

    def describe(self) -> dict[str, Any]:
        """Header keys: model, power_mode (name), power_mode_id, max_clocks, gpu_tpcs, thermal_trips.
        Unknown keys are left out."""
        out: dict[str, Any] = {}
        model = self.model()
        if model:
            out["model"] = model
        mode_id, mode_name = self.power_mode()
        if mode_name is not None:
            out["power_mode"] = mode_name
        if mode_id is not None:
            out["power_mode_id"] = mode_id
        clocks = self.max_clocks()
        if clocks:
            out["max_clocks"] = clocks
        tpcs = self.gpu_tpcs(mode_id)
        if tpcs is not None:
            out["gpu_tpcs"] = tpcs
        trips = self.thermal_trips()
        if trips:
            out["thermal_trips"] = trips
        return out


def zone_name(kind: str) -> str:
    """``cpu-thermal`` -> ``cpu``: the name tegrastats prints for the same sensor."""
    name = kind.strip().lower()
    return name[: -len("-thermal")] if name.endswith("-thermal") and len(name) > len("-thermal") else name


def unique_name(name: str, seen: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... when taken; records the result in ``seen``."""
    candidate, n = name, 1
    while candidate in seen:
        n += 1
        candidate = f"{name}_{n}"
    seen.add(candidate)
    return candidate


def _trailing_int(text: str) -> int:
    match = re.search(r"(\d+)$", text)
    return int(match.group(1)) if match else -1


def parse_nvpmodel_query(text: str) -> tuple[int | None, str | None]:
    """``nvpmodel -q`` prints ``NV Power Mode: MAXN_SUPER`` and the id on the next line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("NV Power Mode:"):
            name = line.split(":", 1)[1].strip() or None
            mode_id = small_int(lines[i + 1]) if i + 1 < len(lines) else None
            return mode_id, name
    return None, None


_POWER_MODEL = re.compile(r"<\s*POWER_MODEL\s+ID=(\d+)\s+NAME=(\S+?)\s*>")
_TPC_LINE = re.compile(r"^TPC_POWER_GATING\s+TPC_PG_MASK\s+(-?\d+)\s*$")


def parse_nvpmodel_conf(text: str) -> dict[int, dict[str, Any]]:
    """``{id: {"name": ..., "tpc_pg_mask": ...}}`` from an nvpmodel conf's POWER_MODEL sections."""
    modes: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("<"):
            match = _POWER_MODEL.match(line)
            mode_id = None if match is None else small_int(match.group(1))
            current = None
            if match is not None and mode_id is not None:
                current = modes.setdefault(mode_id, {"name": match.group(2)})
            continue
        if current is not None:
            tpc = _TPC_LINE.match(line)
            mask = None if tpc is None else small_int(tpc.group(1))
            if mask is not None:
                current["tpc_pg_mask"] = mask
    return modes

"""The one sample model every source produces and every pane, report and detector reads.

Honest gaps: a field a board does not report is ``None`` (not 0). Units are in the names.
Times: ``t_wall`` is unix seconds (wall clock, may step under NTP) and ``t_mono`` is seconds on a
monotonic timeline of the stream; durations and energy always use ``t_mono``.

The JSON form (what ``jroof-tui parse`` prints and a recording stores) is ``model.codec`` (the dict
form) and ``model.schema`` (the typed lines a recording is read by).

The leaf values (CpuCore, Memory, Iram, Gpu, Clocked, Engine, Rail, Fan, IoRates, ProcessRow) are
frozen msgspec Structs, named as their JSON keys where these differ (``Rail.now_mw`` is ``now``):
a recording's decoder builds them straight from its lines. They are frozen because the parser
shares cached ones between samples: to change one, put a new one in its place. The lists and dicts
of a Sample are its own, so a source may fill them in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Annotated

from msgspec import Meta, Struct
from msgspec import field as wire

from jtop_roof.model.bounds import MAX_DETAIL_CHARS as MAX_DETAIL_CHARS
from jtop_roof.model.bounds import MAX_GPCS, Amount, Name, Percent, Pid, Reading, Rpm, Whole
from jtop_roof.model.bounds import MAX_WORK_AMOUNT as MAX_WORK_AMOUNT
from jtop_roof.model.bounds import MAX_WORK_ITERATIONS as MAX_WORK_ITERATIONS

SCHEMA_VERSION = 1

# Rails that measure the whole board/module input, best first. AGX Orin's VIN_SYS_5V0 is not one
# of them: it feeds only the 5 V system rail (research/tegrastats_fields.md section 5).
INPUT_RAILS = ("VIN", "VDD_IN", "POM_5V_IN")
# Channels wired to nothing on AGX Orin; never part of a sum.
UNCONNECTED_RAILS = ("NC",)
# Rails that measure one device, not the board: NVML's GPU board power on a host ("NVML_GPU").
# They are shown and integrated per rail, but a sum of them is not the machine's input power.
DEVICE_ONLY_RAIL_PREFIX = "NVML_"
#: The first GPU's board power on a host: the energy charged to work where no rail reads the input.
GPU_BOARD_RAIL = f"{DEVICE_ONLY_RAIL_PREFIX}GPU"
# So are a host CPU's RAPL domains ("RAPL_package-0"): the CPU package, not the machine.
DEVICE_ONLY_PREFIXES = (DEVICE_ONLY_RAIL_PREFIX, "RAPL_")

MARKER_KINDS = ("phase_start", "phase_end")


def auto_phase_name(number: int) -> str:
    """The name of an unnamed phase, by its number among the session's phases (keys and scripts)."""
    return f"phase {number}"


class CpuCore(Struct, frozen=True, gc=False):
    """One online core. An offline (``off``) core is ``None`` in ``Sample.cpus``."""

    load_pct: Reading | None
    mhz: Whole | None


class Memory(Struct, frozen=True, gc=False, omit_defaults=True):
    """RAM or SWAP in MB. ``lfb_*`` is tegrastats' largest free block (count x size)."""

    used_mb: Amount = wire(name="used")
    total_mb: Amount = wire(name="total")
    cached_mb: Amount | None = wire(default=None, name="cached")
    lfb_count: Whole | None = None
    lfb_size_kb: Amount | None = None


class Iram(Struct, frozen=True, gc=False, omit_defaults=True):
    """IRAM of the audio/video hardware (TX1, Nano), in kB."""

    used_kb: Amount = wire(name="used")
    total_kb: Amount = wire(name="total")
    lfb_kb: Amount | None = wire(default=None, name="lfb")


class Gpu(Struct, frozen=True, gc=False):
    """GPU load and per-GPC clocks. Thor prints clocks with no load (``load_pct`` None). Its JSON
    form also says ``mhz`` (derived: not read back)."""

    load_pct: Reading | None
    gpc_mhz: Annotated[tuple[Whole, ...], Meta(max_length=MAX_GPCS)] = ()

    @property
    def mhz(self) -> int | None:
        """The effective GPU clock: the highest GPC clock (a gated GPC reads 0)."""
        return max(self.gpc_mhz) if self.gpc_mhz else None


class Clocked(Struct, frozen=True, gc=False):
    """A load-and-clock pair such as EMC: load % of the bandwidth at the current clock."""

    load_pct: Reading | None
    mhz: Whole | None


class Engine(Struct, frozen=True, gc=False):
    """A hardware engine (NVENC, VIC, APE, MTS_FG...). ``off`` means printed as ``off`` (its JSON
    form is then the string ``"off"``, not an object)."""

    load_pct: Reading | None = None
    mhz: Whole | None = None
    off: bool = False


class Rail(Struct, frozen=True, gc=False, omit_defaults=True):
    """A power rail in mW: instantaneous, tegrastats' running average, and JetPack 7's third value."""

    now_mw: Reading = wire(name="now")
    avg_mw: Reading | None = wire(default=None, name="avg")
    peak_mw: Reading | None = wire(default=None, name="peak")


class Fan(Struct, frozen=True, gc=False):
    """A fan: its PWM duty as % of full (hwmon ``pwm1``, 0-255) and its tachometer's rpm, each None
    where the board does not report it."""

    speed_pct: Percent | None
    rpm: Rpm | None = None


class IoRates(Struct, frozen=True, gc=False):
    """This machine's disk and network throughput since the previous sample, in MB/s (2^20 bytes,
    as RAM's MB), from the kernel's counters (psutil); None where a counter is not readable."""

    disk_read_mb_s: Amount | None = wire(name="disk_read")
    disk_write_mb_s: Amount | None = wire(name="disk_write")
    net_rx_mb_s: Amount | None = wire(name="net_rx")
    net_tx_mb_s: Amount | None = wire(name="net_tx")


@dataclass(slots=True)
class PowerTotal:
    """Total input power and where it comes from (a rail name, or ``sum(A+B+...)``)."""

    mw: float
    source: str


@dataclass(slots=True)
class Sample:
    """One observation of the board. Every field a source cannot know is ``None``."""

    t_wall: float | None = None
    t_mono: float | None = None
    raw: str | None = None
    is_sample: bool = True  # False for a line that is not a tegrastats sample (e.g. `date` output)
    ram: Memory | None = None
    swap: Memory | None = None
    iram: Iram | None = None
    cpus: list[CpuCore | None] | None = None
    gpu: Gpu | None = None
    emc: Clocked | None = None
    engines: dict[str, Engine] = field(default_factory=dict)
    temps_c: dict[str, float | None] = field(default_factory=dict)
    temps_max_c: dict[str, float] = field(default_factory=dict)
    rails: dict[str, Rail] = field(default_factory=dict)
    # Clock-event (throttle) reasons reported by the device itself (NVML); None where nobody says.
    throttle_reasons: list[str] | None = None
    # Over-current event counters of the SoC (Orin, Thor: hwmon ``soctherm_oc``, ``oc1``..``oc3``);
    # a counter that rises says the hardware throttled for power. None where unreadable.
    oc_events: dict[str, int] | None = None
    # The line's stamp as written (tegrastats' "MM-DD-YYYY HH:MM:SS", or another form the Timeline reads).
    stamp: str | None = None
    unknown: list[str] = field(default_factory=list)
    # Fans by hwmon name (``pwmfan``); None where no fan is readable (and for tegrastats logs).
    fans: dict[str, Fan] | None = None
    # Disk and network throughput of the machine that sampled (not in tegrastats logs).
    io: IoRates | None = None

    @property
    def power_total(self) -> PowerTotal | None:
        """The one definition of total input power used by every pane, report and detector."""
        return total_power(self.rails)


def total_power(rails: dict[str, Rail]) -> PowerTotal | None:
    """Board input rail where there is one, else the sum of the module rails, labelled as a sum.

    None when nothing measures the board: no rails, or only device rails (a dGPU's NVML power)."""
    if not rails:
        return None
    plan = power_plan(tuple(rails))
    if plan is None:
        return None
    if not plan.summed:  # the input rail's own reading (``PowerPlan.total``), read by its name
        return PowerTotal(rails[plan.source].now_mw, plan.source)
    if len(plan.places) == len(rails):  # every rail, in their order: the plan's sum without places
        return PowerTotal(sum(map(_NOW_MW, rails.values())), plan.source)
    return plan.total(list(rails.values()))


@dataclass(frozen=True, slots=True)
class PowerPlan:
    """Which of a sample's rails make its total (``total_power``), by their places among its rails:
    rail names repeat from sample to sample, so the choice is made once per set of names."""

    source: str  # the input rail's name, or "sum(A+B+...)"
    places: tuple[int, ...]
    summed: bool  # False: the input rail's reading itself

    def total(self, rails: Sequence[Rail]) -> PowerTotal:
        """The total of rails listed in the order of the names the plan was made for."""
        if not self.summed:
            return PowerTotal(rails[self.places[0]].now_mw, self.source)
        return PowerTotal(sum([rails[place].now_mw for place in self.places]), self.source)


_NOW_MW = attrgetter("now_mw")
# Bounded: a hostile log may name rails anew on every line.
_POWER_PLAN_LIMIT, _POWER_PLAN_KEY_CHARS = 1024, 1024
_power_plans: dict[tuple[str, ...], PowerPlan | None] = {}
_UNPLANNED = object()


def power_plan(names: tuple[str, ...]) -> PowerPlan | None:
    """The plan for rails of these names (distinct, as a sample's are), in this order; None when none
    of them measures the board."""
    plan = _power_plans.get(names, _UNPLANNED)
    if plan is not _UNPLANNED:
        return plan  # type: ignore[return-value]
    plan = _make_power_plan(names)
    if sum(map(len, names)) <= _POWER_PLAN_KEY_CHARS:  # hostile names are planned, not kept
        if len(_power_plans) >= _POWER_PLAN_LIMIT:
            _power_plans.clear()
        _power_plans[names] = plan
    return plan


def _make_power_plan(names: tuple[str, ...]) -> PowerPlan | None:
    for name in INPUT_RAILS:
        if name in names:
            return PowerPlan(name, (names.index(name),), False)
    summed = [
        (place, name)
        for place, name in enumerate(names)
        if _base_rail_name(name) not in UNCONNECTED_RAILS and not name.startswith(DEVICE_ONLY_PREFIXES)
    ]
    if not summed:
        return None
    source = "sum(" + "+".join(name for _, name in summed) + ")"
    return PowerPlan(source, tuple(place for place, _ in summed), True)


def _base_rail_name(name: str) -> str:
    """``NC_2`` -> ``NC``: repeated names get a numeric suffix when parsed."""
    base, sep, suffix = name.rpartition("_")
    return base if sep and suffix.isdigit() and base else name


# ---------------------------------------------------------------------------------------------
# Records that are not samples: phase markers and stream events. They share the sample's clocks.


@dataclass(slots=True)
class Marker:
    """A phase boundary. ``kind`` is ``phase_start`` (with a name) or ``phase_end``."""

    kind: str
    name: str | None
    t_wall: float | None
    t_mono: float | None
    origin: str = "key"  # "key" (a keybinding), "script" (a benchmark script), ...


@dataclass(slots=True)
class Event:
    """Something about the stream itself: ``gap`` (no data for ``gap_s`` seconds up to ``t_mono``,
    written just before the first sample after it), ``source_restart``, ``source_error``, ``seek``
    (a replay jumped: the UI clears its history), ``note``. A gap is recorded, never papered over.

    Detector events (``throttle``, ``mode_cap``) span time: ``unit`` (``gpu``, ``cpu``, ``emc``),
    ``detail`` is the reason, ``start_*`` its first sample and ``t_*`` its last; ``reasons`` are the
    same reasons as short codes (``detectors.REASON_CODES``) for metric labels. They are not recorded:
    a replay's detectors make them again."""

    kind: str
    detail: str
    t_wall: float | None
    t_mono: float | None
    gap_s: float | None = None
    unit: str | None = None
    start_wall: float | None = None
    start_mono: float | None = None
    reasons: tuple[str, ...] = ()



@dataclass(slots=True)
class Work:
    """Work a workload reported doing (``jroof-tui mark --work``, ``jtop_roof.hook.work``): so many
    iterations, and optionally their FLOPs and DRAM bytes in total and their precision. The
    roofline point comes from these, never from load %."""

    iterations: float
    flops: float | None
    bytes: float | None
    precision: str | None
    t_wall: float | None
    t_mono: float | None
    origin: str = "script"


@dataclass(slots=True)
class PowerReading:
    """Power read at its source between samples (the board's monitors, NVML, RAPL): the finest power
    stream, from which energy is integrated. Additive in recordings: older readers skip it."""

    t_wall: float | None
    t_mono: float | None
    rails_mw: dict[str, float]  # instantaneous power by rail, named as tegrastats names them (VDD_IN, ...)
    counters_mj: dict[str, float]  # cumulative energy counters by rail/domain (NVML total energy, RAPL), mJ
    source: str  # what measured it: "INA3221 hwmon", "INA238 hwmon", "ina3221x iio", "NVML", "RAPL"
    period_s: float  # the sampler's period


class ProcessRow(Struct, frozen=True, gc=False, omit_defaults=True):
    """One process in a process reading. ``cpu_pct`` is % of one core since the previous reading
    (as psutil's ``Process.cpu_percent``; over its life for one started since), None in the first
    reading, which only primes; ``benchmark``: in the process tree of the benchmark that ``run``
    started or whose hook reported."""

    pid: Pid
    name: Name = "?"  # the kernel's name of it (``comm``), as read
    cpu_pct: Amount | None = None
    rss_mb: Amount | None = None
    gpu_mem_mb: Amount | None = None  # NVML's per-process GPU memory, where it gives it
    benchmark: bool = False


@dataclass(slots=True)
class ProcessReading:
    """Who else ran: this machine's busiest processes, read at a low rate beside the main source.
    Only processes that matter are kept (``sources.processes`` says which); one left out used less
    than ``floor_pct`` of a core. Additive in recordings: older readers skip it."""

    t_wall: float | None
    t_mono: float | None
    processes: list[ProcessRow]
    source: str  # what read them: "/proc", "/proc + NVML"
    period_s: float
    priming: bool = False  # the first reading: no CPU figures yet
    floor_pct: float = 1.0


Record = Sample | Marker | Event | Work | PowerReading | ProcessReading

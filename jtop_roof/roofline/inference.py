"""Which Jetson and which nvpmodel mode a plain log comes from, from what its samples show.

A plain ``tegrastats --logfile`` capture names neither its board nor its power mode, yet its lines
tell both: the RAM total, the number of CPUs and the rail names narrow the module (``devices.yaml``
lists each module's rails), and clocks above a module's maximum rule it out; then the online cores
and the top clocks seen select the mode among the module's modes:

* a mode whose cap a clock went above, or whose online cores differ, is ruled out;
* a unit that was saturated (load >= ``SATURATED_PCT`` for ``MIN_SATURATED_SAMPLES`` samples) and
  never came near a mode's cap rules that mode out: a saturated unit runs at its cap;
* of the modes left, those whose caps were reached by the most units are kept.

Nothing is guessed: where the modes kept differ, ``Inference`` names the candidates and gives no
mode. One exception: where every candidate is the same mode with the same caps on several modules
(the Orin Nano 8GB and its Super entry at 7 W), the mode is inferred and its caps used, the module
left open with its candidates named. Clocks match a cap within ``CLOCK_TOLERANCE`` (tegrastats
prints 1018 for a 1020 MHz cap, 1497 for 1497.6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from jtop_roof.model.records import Record, Sample
from jtop_roof.roofline.ceilings import max_clocks
from jtop_roof.roofline.devices import Device, PowerMode, ram_fits

#: A unit at this load wants its top clock: the governor gives it the mode's cap.
SATURATED_PCT = 90.0
#: Saturated samples a unit needs before its clock says anything about its cap (one sample can be
#: a governor still ramping up).
MIN_SATURATED_SAMPLES = 3
#: How far a clock may sit from a cap and still be at it (tegrastats rounds, GPCs differ by 1-2 MHz).
CLOCK_TOLERANCE = 0.02
#: Candidates named in a note before "..." (the whole list is in ``Inference``).
NAMED_CANDIDATES = 6
UNITS = ("gpu", "emc", "cpu")


@dataclass(frozen=True, slots=True)
class BoardObservation:
    """What a stream's samples show of its board (``BoardObserver``). None: never shown."""

    samples: int = 0
    ram_total_mb: float | None = None
    #: CPUs in the CPU list, offline ones included.
    cpu_count: int | None = None
    #: The most CPUs online in one sample.
    cores_online: int | None = None
    rails: frozenset[str] = frozenset()
    #: The top clock seen per unit (``gpu``, ``emc``, ``cpu``), at any load.
    max_mhz: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Units seen saturated for ``MIN_SATURATED_SAMPLES`` samples.
    saturated: frozenset[str] = frozenset()


class BoardObserver:
    """Takes a stream's samples one by one and says what they showed (``observation``)."""

    def __init__(self) -> None:
        self._samples = 0
        self._ram: float | None = None
        self._cpus: int | None = None
        self._online: int | None = None
        self._rails: set[str] = set()
        self._max: dict[str, float] = {}
        self._saturated: dict[str, int] = {}

    def add(self, record: Record) -> None:
        if not isinstance(record, Sample) or not record.is_sample:
            return
        self._samples += 1
        ram = record.ram
        if ram is not None and (self._ram is None or ram.total_mb > self._ram):
            self._ram = ram.total_mb
        if not self._rails.issuperset(record.rails):
            self._rails.update(record.rails)
        cpus = record.cpus
        if cpus:
            online, top_mhz, top_load = 0, 0, 0.0  # a loop, not max() over generators: every sample
            for core in cpus:
                if core is not None:
                    online += 1
                    if core.mhz is not None and core.mhz > top_mhz:
                        top_mhz = core.mhz
                    if core.load_pct is not None and core.load_pct > top_load:
                        top_load = core.load_pct
            if self._cpus is None or len(cpus) > self._cpus:
                self._cpus = len(cpus)
            if self._online is None or online > self._online:
                self._online = online
            self._clock("cpu", top_mhz, top_load)
        gpu, emc = record.gpu, record.emc
        if gpu is not None:
            self._clock("gpu", gpu.mhz or 0, gpu.load_pct or 0.0)
        if emc is not None:
            self._clock("emc", emc.mhz or 0, emc.load_pct or 0.0)

    def _clock(self, unit: str, mhz: float, load_pct: float) -> None:
        if mhz > self._max.get(unit, 0.0):
            self._max[unit] = float(mhz)
        if load_pct >= SATURATED_PCT:
            self._saturated[unit] = self._saturated.get(unit, 0) + 1

    def observation(self) -> BoardObservation:
        return BoardObservation(
            samples=self._samples, ram_total_mb=self._ram, cpu_count=self._cpus, cores_online=self._online,
            rails=frozenset(self._rails), max_mhz=MappingProxyType(dict(self._max)),
            saturated=frozenset(u for u, n in self._saturated.items() if n >= MIN_SATURATED_SAMPLES),
        )


def observe(records: Iterable[Record]) -> BoardObservation:
    """What a whole stream shows of its board."""
    observer = BoardObserver()
    for record in records:
        observer.add(record)
    return observer.observation()


@dataclass(frozen=True, slots=True)
class Inference:
    """The module and mode the observation points to; ``device``/``mode`` None where it cannot
    tell, with the candidates it could not tell apart (device ids, ``id mode`` pairs)."""

    device: Device | None
    mode: PowerMode | None
    devices: tuple[str, ...]
    modes: tuple[str, ...]
    #: Why, in words: what ruled candidates in and out, or why nothing could be inferred.
    note: str


def infer(observation: BoardObservation, devices: Iterable[Device]) -> Inference:
    """The module and mode among ``devices`` (the database, or the devices a model string
    matched) that fit ``observation``; see the module docstring. Only modules with power modes
    are candidates: a plain log comes from a Jetson."""
    if observation.samples == 0:
        return Inference(None, None, (), (), "no sample to infer the board from")
    pool = [device for device in devices if device.power_modes]
    known_rails = frozenset(rail for device in pool for rail in device.rails)
    fitting = [device for device in pool if _device_fits(device, observation, known_rails)]
    if not fitting:
        return Inference(None, None, (), (),
                         f"no module in the device database fits the log ({_facts(observation)})")
    scored = [(score, device, mode) for device in fitting for mode in device.power_modes
              if (score := _mode_score(device, mode, observation)) is not None]
    if not scored:
        device = fitting[0] if len(fitting) == 1 else None
        return Inference(device, None, _ids(fitting), (),
                         f"{_named(_ids(fitting))} fit the log ({_facts(observation)}) but none of their "
                         "modes does")
    best = max(score for score, _, _ in scored)
    kept = [(device, mode) for score, device, mode in scored if score == best]
    ids = tuple(dict.fromkeys(device.id for device, _ in kept))
    pairs = tuple(f"{device.id} {mode.name}" for device, mode in kept)
    device = next(d for d, _ in kept) if len(ids) == 1 else None
    mode = one_mode(kept)
    if mode is not None and device is not None:
        note = f"{device.id} in mode {mode.name}: {_facts(observation)}"
    elif mode is not None:
        note = f"mode {mode.name}, the same caps on {_named(ids)}: {_facts(observation)}"
    else:
        note = f"could be {_named(pairs)}: {_facts(observation)}"
    return Inference(device, mode, ids, pairs, note)


def _device_fits(device: Device, seen: BoardObservation, known_rails: frozenset[str]) -> bool:
    """The module's RAM, CPU count, rails and top clocks allow what was seen."""
    if seen.ram_total_mb is not None and not ram_fits(device, seen.ram_total_mb):
        return False
    cores = device.cpu_cores
    if cores is not None and seen.cpu_count is not None and seen.cpu_count != cores:
        return False
    if device.rails and (seen.rails & known_rails) - set(device.rails):
        return False  # a rail of another module family
    return not any(_above(seen.max_mhz.get(unit), top)
                   for unit, top in (("gpu", device.max_gpu_mhz), ("emc", device.max_emc_mhz)))


def _mode_caps(device: Device, mode: PowerMode) -> dict[str, float | None]:
    gpu, emc = max_clocks(device, mode)
    return {"gpu": gpu, "emc": emc, "cpu": mode.max_cpu_mhz}


def _mode_score(device: Device, mode: PowerMode, seen: BoardObservation) -> int | None:
    """How many units' caps the clocks reached; None where the mode is ruled out."""
    if mode.cpu_cores_online is not None and seen.cores_online is not None \
            and seen.cores_online != mode.cpu_cores_online:
        return None
    reached = 0
    for unit, cap in _mode_caps(device, mode).items():
        top = seen.max_mhz.get(unit)
        if cap is None or top is None:
            continue
        if _above(top, cap):
            return None
        if top >= cap * (1 - CLOCK_TOLERANCE):
            reached += 1
        elif unit in seen.saturated:
            return None  # saturated yet never near this cap: the cap is lower
    return reached


def one_mode(pairs: Sequence[tuple[Device, PowerMode]]) -> PowerMode | None:
    """The mode, where every (module, mode) pair is the same mode with the same caps (what the
    detectors and the roof at the mode use of it), else None."""
    keys = {(mode.name.upper(), mode.cpu_cores_online, mode.active_sms, mode.watts,
             *_mode_caps(device, mode).values()) for device, mode in pairs}
    return pairs[0][1] if len(keys) == 1 else None


def _above(seen: float | None, cap: float | None) -> bool:
    return seen is not None and cap is not None and seen > cap * (1 + CLOCK_TOLERANCE)


def _ids(devices: Sequence[Device]) -> tuple[str, ...]:
    return tuple(device.id for device in devices)


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED_CANDIDATES])
    return shown + (f" and {len(names) - NAMED_CANDIDATES} more" if len(names) > NAMED_CANDIDATES else "")


def _facts(seen: BoardObservation) -> str:
    """What the inference went by, in words."""
    parts = []
    if seen.ram_total_mb is not None:
        parts.append(f"RAM {seen.ram_total_mb:.0f} MB")
    if seen.cpu_count is not None:
        parts.append(f"{seen.cores_online} of {seen.cpu_count} CPUs online")
    for unit in UNITS:
        top = seen.max_mhz.get(unit)
        if top is not None:
            busy = " saturated" if unit in seen.saturated else ""
            parts.append(f"{unit.upper()} up to {top:.0f} MHz{busy}")
    if seen.rails:
        parts.append("rails " + " ".join(sorted(seen.rails)[:8]))
    return ", ".join(parts) or "no RAM, CPU, clock or rail in the log"

"""Which Jetson and which nvpmodel mode a plain log comes from, from what its samples show.

A plain ``tegrastats --logfile`` capture names neither its board nor its power mode, yet its lines
tell both: the RAM total, the number of CPUs and the rail names narrow the module (``devices.yaml``
lists each module's rails), and clocks above a module's maximum rule it out; then the online cores
and the top clocks seen select the mode among the module's modes:

* a mode whose cap a clock went above, or whose online cores differ, is ruled out;
* a unit that was saturated (load >= ``SATURATED_PCT`` for ``MIN_SATURATED_SAMPLES`` samples) and
  never came near a mode's cap rules that mode out: a saturated unit runs at its cap; except
  where that unit is the only one below the mode's caps and another unit reached its cap: then
  the mode stays a candidate, "held below the caps the whole run" (a whole-run throttle of one
  unit looks like a lower cap), and no mode is named. Such a mode of a module is kept only where
  no module fits cleanly or the module itself does (else every Orin Nano run would also be an
  Orin NX held below its GPU cap);
* of the modes left, those whose caps were reached by the most units are kept.

Thermal-zone names rule out modules as rail names do (a Xavier NX's ``AUX``/``AO`` zones are no
Orin's). Where the online cores change within the log (``MIN_SATURATED_SAMPLES`` samples in a row),
the log is cut there and each part's mode is inferred on its own (``Inference.spans``): a change
of power mode, each part judged against its own mode's caps.

A given device or mode the log contradicts is said in plain words (``misfit``: what the log showed
that the module or mode does not allow, in its own caps; ``fits_said``: what the log fits without
the flag). Nothing is guessed: where the modes kept differ, ``Inference`` names the candidates and gives no
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
class ObservedSpan:
    """A part of a stream with one count of online cores (a power mode), from its first sample."""

    start_mono: float | None
    samples: int
    cores_online: int | None
    max_mhz: Mapping[str, float]
    saturated: frozenset[str]


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
    #: Thermal-zone names seen, lower case.
    zones: frozenset[str] = frozenset()
    #: The parts of a stream whose online cores changed (empty where they never did).
    spans: tuple[ObservedSpan, ...] = ()


class _Part:
    """Top clocks, saturation and online cores of a run of samples."""

    def __init__(self, start_mono: float | None, online: int | None) -> None:
        self.start_mono = start_mono
        self.online = online
        self.samples = 0
        self.max: dict[str, float] = {}
        self.saturated: dict[str, int] = {}

    def clock(self, unit: str, mhz: float, load_pct: float) -> None:
        if mhz > self.max.get(unit, 0.0):
            self.max[unit] = float(mhz)
        if load_pct >= SATURATED_PCT:
            self.saturated[unit] = self.saturated.get(unit, 0) + 1

    def take(self, other: _Part) -> None:
        self.samples += other.samples
        for unit, mhz in other.max.items():
            self.max[unit] = max(self.max.get(unit, 0.0), mhz)
        for unit, count in other.saturated.items():
            self.saturated[unit] = self.saturated.get(unit, 0) + count

    def span(self) -> ObservedSpan:
        return ObservedSpan(self.start_mono, self.samples, self.online, MappingProxyType(dict(self.max)),
                            frozenset(u for u, n in self.saturated.items() if n >= MIN_SATURATED_SAMPLES))


class BoardObserver:
    """Takes a stream's samples one by one and says what they showed (``observation``)."""

    def __init__(self) -> None:
        self._samples = 0
        self._ram: float | None = None
        self._cpus: int | None = None
        self._online: int | None = None
        self._rails: set[str] = set()
        self._zones: set[str] = set()
        self._parts: list[_Part] = []  # by online cores; the last is the current one
        self._pending: _Part | None = None  # another count of online cores, not yet for long

    def add(self, record: Record) -> None:
        if not isinstance(record, Sample) or not record.is_sample:
            return
        self._samples += 1
        ram = record.ram
        if ram is not None and (self._ram is None or ram.total_mb > self._ram):
            self._ram = ram.total_mb
        if not self._rails.issuperset(record.rails):
            self._rails.update(record.rails)
        if not self._zones.issuperset(record.temps_c):
            self._zones.update(record.temps_c)
        cpus = record.cpus
        online: int | None = None
        top_mhz, top_load = 0, 0.0
        if cpus:
            online = 0  # a loop, not max() over generators: every sample
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
        parts = self._parts
        if parts and self._pending is None and (online is None or online == parts[-1].online):
            part = parts[-1]  # ``_part``'s usual answer, without the call
        else:
            part = self._part(online, record.t_mono)
        part.samples += 1
        top, saturated = part.max, part.saturated  # ``_Part.clock`` of each unit, inline
        if cpus:  # into its part only: the whole's are the parts' together (``observation``)
            if top_mhz > top.get("cpu", 0.0):
                top["cpu"] = float(top_mhz)
            if top_load >= SATURATED_PCT:
                saturated["cpu"] = saturated.get("cpu", 0) + 1
        gpu, emc = record.gpu, record.emc
        if gpu is not None:
            gpc = gpu.gpc_mhz
            mhz = (max(gpc) if gpc else None) or 0  # ``Gpu.mhz``
            if mhz > top.get("gpu", 0.0):
                top["gpu"] = float(mhz)
            if (gpu.load_pct or 0.0) >= SATURATED_PCT:
                saturated["gpu"] = saturated.get("gpu", 0) + 1
        if emc is not None:
            mhz = emc.mhz or 0
            if mhz > top.get("emc", 0.0):
                top["emc"] = float(mhz)
            if (emc.load_pct or 0.0) >= SATURATED_PCT:
                saturated["emc"] = saturated.get("emc", 0) + 1

    def _part(self, online: int | None, t_mono: float | None) -> _Part:
        """The part this sample belongs to: the current one, or another count of online cores
        (kept as its own part once ``MIN_SATURATED_SAMPLES`` samples in a row had it)."""
        parts = self._parts
        if not parts:
            parts.append(_Part(t_mono, online))
            return parts[0]
        current, pending = parts[-1], self._pending
        if online is None or online == current.online:
            if pending is not None:  # a blip: its samples belong to the current part
                current.take(pending)
                self._pending = None
            return current
        if pending is None or pending.online != online:
            if pending is not None:
                current.take(pending)
            pending = self._pending = _Part(t_mono, online)
        if pending.samples + 1 >= MIN_SATURATED_SAMPLES:
            parts.append(pending)
            self._pending = None
        return pending

    def observation(self) -> BoardObservation:
        parts = list(self._parts)
        if self._pending is not None and parts:
            merged = _Part(parts[-1].start_mono, parts[-1].online)
            merged.take(parts[-1])
            merged.take(self._pending)
            parts[-1] = merged
        together = _Part(None, None)  # every sample is in one part (a pending one merged in above)
        for part in parts:
            together.take(part)
        whole = together.span()
        return BoardObservation(
            samples=self._samples, ram_total_mb=self._ram, cpu_count=self._cpus, cores_online=self._online,
            rails=frozenset(self._rails), max_mhz=whole.max_mhz, saturated=whole.saturated,
            zones=frozenset(zone.lower() for zone in self._zones),
            spans=tuple(part.span() for part in parts) if len(parts) > 1 else (),
        )


def observe(records: Iterable[Record]) -> BoardObservation:
    """What a whole stream shows of its board."""
    observer = BoardObserver()
    for record in records:
        observer.add(record)
    return observer.observation()


@dataclass(frozen=True, slots=True)
class InferredSpan:
    """One part of a log whose mode changed: from ``start_mono`` (its first sample), ``mode``
    (None where the part does not tell it), and why, in words."""

    start_mono: float | None
    mode: PowerMode | None
    note: str


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
    #: ``id mode`` pairs kept only as "held below the caps the whole run" (among ``modes``).
    held: tuple[str, ...] = ()
    #: Where the mode changed within the log: each part and its mode (empty where it did not).
    spans: tuple[InferredSpan, ...] = ()


_Pair = tuple[Device, PowerMode]


def infer(observation: BoardObservation, devices: Iterable[Device]) -> Inference:
    """The module and mode among ``devices`` (the database, or the devices a model string
    matched) that fit ``observation``; see the module docstring. Only modules with power modes
    are candidates: a plain log comes from a Jetson."""
    if observation.samples == 0:
        return Inference(None, None, (), (), "no sample to infer the board from")
    pool = [device for device in devices if device.power_modes]
    known_rails = frozenset(rail for device in pool for rail in device.rails)
    known_zones = frozenset(zone.lower() for device in pool for zone in device.sensors)
    fitting = [device for device in pool if _device_fits(device, observation, known_rails, known_zones)]
    if not fitting:
        return Inference(None, None, (), (),
                         f"no module in the device database fits the log ({_facts(observation)})")
    if observation.spans:
        changed = _infer_spans(observation, fitting)
        if changed is not None:
            return changed
    whole = ObservedSpan(None, observation.samples, observation.cores_online, observation.max_mhz,
                         observation.saturated)
    kept, held = _kept(fitting, whole)
    if not kept and not held:
        device = fitting[0] if len(fitting) == 1 else None
        return Inference(device, None, _ids(fitting), (),
                         f"{_named(_ids(fitting))} fit the log ({_facts(observation)}) but none of their "
                         "modes does")
    both = [*kept, *held]
    ids = tuple(dict.fromkeys(device.id for device, _ in both))
    pairs = tuple(f"{device.id} {mode.name}" for device, mode in both)
    held_pairs = tuple(f"{device.id} {mode.name}" for device, mode in held)
    device = both[0][0] if len(ids) == 1 else None
    mode = one_mode(kept) if kept and not held else None
    if mode is not None and device is not None:
        note = f"{device.id} in mode {mode.name}: {_facts(observation)}"
    elif mode is not None:
        note = f"mode {mode.name}, the same caps on {_named(ids)}: {_facts(observation)}"
    else:
        fit = [f"{d.id} {m.name}" for d, m in kept]
        said = f"could be {_named(fit)}" if fit else "no mode fits the clocks as they are"
        if held:
            said += (f"; {_named(held_pairs)} if held below the caps the whole run "
                     f"({_held_facts(held, whole)})")
        note = f"{said}: {_facts(observation)}"
    return Inference(device, mode, ids, pairs, note, held_pairs)


def _infer_spans(seen: BoardObservation, fitting: Sequence[Device]) -> Inference | None:
    """A log whose online cores changed: the modules that fit every part, and each part's mode;
    None where no module fits them all (the whole log is then judged as one)."""
    per_part = [_kept(fitting, part) for part in seen.spans]
    common = [device for device in fitting
              if all(any(d is device for d, _ in [*kept, *held]) for kept, held in per_part)]
    if not common:
        return None
    spans = []
    for part, (kept, held) in zip(seen.spans, per_part, strict=True):
        kept = [(d, m) for d, m in kept if d in common]
        held = [(d, m) for d, m in held if d in common]
        mode = one_mode(kept) if kept and not held else None
        names = _named(tuple(dict.fromkeys(m.name for _, m in [*kept, *held])))
        spans.append(InferredSpan(part.start_mono, mode,
                                  f"{part.cores_online} CPUs online, " + (f"mode {mode.name}" if mode
                                                                            else f"could be {names}")))
    ids = _ids(common)
    device = common[0] if len(common) == 1 else None
    told = ", then ".join(span.note for span in spans)
    note = f"the power mode changed within the log: {told}; {_facts(seen)}"
    return Inference(device, None, ids, (), note, (), tuple(spans))


def _kept(fitting: Sequence[Device], part: ObservedSpan) -> tuple[list[_Pair], list[_Pair]]:
    """The (module, mode) pairs that fit ``part`` best, and those kept only as held below their
    caps the whole run."""
    scored: list[tuple[int, Device, PowerMode]] = []
    held: list[_Pair] = []
    for device in fitting:
        for mode in device.power_modes:
            score, is_held = _mode_score(device, mode, part)
            if is_held:
                held.append((device, mode))
            elif score is not None:
                scored.append((score, device, mode))
    if not scored:
        return [], held
    best = max(score for score, _, _ in scored)
    kept = [(device, mode) for score, device, mode in scored if score == best]
    # a module whose clocks fit one of its modes is not another module held below its caps
    return kept, [(device, mode) for device, mode in held if any(d is device for d, _ in kept)]


def _device_fits(device: Device, seen: BoardObservation, known_rails: frozenset[str],
                 known_zones: frozenset[str]) -> bool:
    """The module's RAM, CPU count, rails, thermal zones and top clocks allow what was seen."""
    return not _device_misfits(device, seen, known_rails, known_zones)


def _device_misfits(device: Device, seen: BoardObservation, known_rails: frozenset[str],
                    known_zones: frozenset[str]) -> list[str]:
    """What the log showed that the module's RAM, CPU count, rails, thermal zones or top clocks do
    not allow, in plain words (empty where it allows all of it)."""
    said = []
    if seen.ram_total_mb is not None and not ram_fits(device, seen.ram_total_mb):
        size = "no" if device.memory_gb is None else f"{device.memory_gb:g} GB of"
        said.append(f"its RAM total of {seen.ram_total_mb:.0f} MB does not fit that device's {size} memory")
    cores = device.cpu_cores
    if cores is not None and seen.cpu_count is not None and seen.cpu_count != cores:
        said.append(f"it lists {seen.cpu_count} CPUs where that device has {cores}")
    other = sorted((seen.rails & known_rails) - set(device.rails)) if device.rails else []
    if other:  # a rail of another module family
        said.append(f"its rails {' '.join(other[:4])} are another module's")
    zones = sorted((seen.zones & known_zones) - {zone.lower() for zone in device.sensors}) \
        if device.sensors else []
    if zones:  # a thermal zone of another module family
        said.append(f"its thermal zones {' '.join(zones[:4])} are another module's")
    for unit, top in (("gpu", device.max_gpu_mhz), ("emc", device.max_emc_mhz)):
        seen_mhz = seen.max_mhz.get(unit)
        if seen_mhz is not None and top is not None and _above(seen_mhz, top):
            said.append(f"its {unit.upper()} ran at {seen_mhz:.0f} MHz, above that device's maximum of "
                        f"{top:.0f}")
    return said


def misfit(device: Device, seen: BoardObservation, devices: Iterable[Device],
           mode: PowerMode | None = None) -> str:
    """Why ``device`` (``mode`` of it, where given) cannot have made the log, in plain words, for a
    given device or mode the log contradicts: the module's own limits first, then the caps and
    online cores of its modes (one reason said of every mode where they share it, else each
    mode's first). ``devices``: the database (another family's rails and zones rule a module out)."""
    pool = [d for d in devices if d.power_modes]
    rails = frozenset(rail for d in pool for rail in d.rails)
    zones = frozenset(zone.lower() for d in pool for zone in d.sensors)
    own = [] if mode is not None else _device_misfits(device, seen, rails, zones)
    if own:
        return _and(own)
    whole = ObservedSpan(None, seen.samples, seen.cores_online, seen.max_mhz, seen.saturated)
    modes = (mode,) if mode is not None else device.power_modes
    per_mode = [(m, said) for m in modes if (said := _mode_misfits(device, m, whole))]
    if not per_mode:
        return "its clocks and online cores fit none of that device's modes"
    if mode is not None:
        return _and([reason.said(f"{mode.name}'s") for reason in per_mode[0][1]])
    first = per_mode[0][1]
    shared = [reason for reason in first if len(per_mode) == len(modes) > 1
              and all(any(r.key == reason.key for r in said) for _, said in per_mode)]
    if shared:
        return shared[0].said(None)
    return _and([said[0].said(f"{m.name}'s") for m, said in per_mode])


def _and(said: Sequence[str]) -> str:
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


@dataclass(frozen=True, slots=True)
class _Misfit:
    """One thing a log showed that a mode does not allow: ``key`` (the same for every mode),
    ``head`` (what the log showed) and the mode's ``cap`` it went against (None: online cores)."""

    key: str
    head: str
    cap: float | None = None
    tail: str = ""

    def said(self, whose: str | None) -> str:
        """In words, against ``whose`` cap (``15W's``), or every mode's of the device (None)."""
        if self.cap is None:
            if whose is not None:
                return self.head
            return f"{self.head.split(' where ')[0]}, as no mode of that device has"
        against = "every mode's cap of that device" if whose is None else f"{whose} cap of {self.cap:.0f}"
        return f"{self.head} {against}{self.tail}"


def _mode_misfits(device: Device, mode: PowerMode, seen: ObservedSpan) -> list[_Misfit]:
    """Each thing ``seen`` showed that ``mode`` does not allow, as ``_mode_score`` rules it out;
    empty where it fits or is kept as held below its caps."""
    score, held = _mode_score(device, mode, seen)
    if score is not None or held:
        return []
    said = []
    if mode.cpu_cores_online is not None and seen.cores_online is not None \
            and seen.cores_online != mode.cpu_cores_online:
        said.append(_Misfit("cores", f"{seen.cores_online} CPUs were online where {mode.name} has "
                                     f"{mode.cpu_cores_online}"))
    for unit, cap in _mode_caps(device, mode).items():
        top = seen.max_mhz.get(unit)
        if cap is None or top is None:
            continue
        if _above(top, cap):
            said.append(_Misfit(f"{unit} above", f"its {unit.upper()} ran at {top:.0f} MHz, above", cap))
        elif top < cap * (1 - CLOCK_TOLERANCE) and unit in seen.saturated:
            said.append(_Misfit(f"{unit} below", f"its {unit.upper()} was saturated at {top:.0f} MHz, below",
                                cap, " (a saturated unit runs at its cap)"))
    return said


def _mode_caps(device: Device, mode: PowerMode) -> dict[str, float | None]:
    gpu, emc = max_clocks(device, mode)
    return {"gpu": gpu, "emc": emc, "cpu": mode.max_cpu_mhz}


def _mode_score(device: Device, mode: PowerMode, seen: ObservedSpan) -> tuple[int | None, bool]:
    """How many units' caps the clocks reached (None where the mode is ruled out), and whether the
    mode is kept only as held below its caps the whole run (see the module docstring)."""
    if mode.cpu_cores_online is not None and seen.cores_online is not None \
            and seen.cores_online != mode.cpu_cores_online:
        return None, False
    reached, below_saturated, below = 0, 0, 0
    for unit, cap in _mode_caps(device, mode).items():
        top = seen.max_mhz.get(unit)
        if cap is None or top is None:
            continue
        if _above(top, cap):
            return None, False
        if top >= cap * (1 - CLOCK_TOLERANCE):
            reached += 1
        else:
            below += 1
            below_saturated += unit in seen.saturated
    if not below_saturated:
        return reached, False
    return None, below_saturated == below == 1 and reached > 0


def mode_fits(device: Device, mode: PowerMode, seen: BoardObservation) -> bool:
    """Whether ``mode`` of ``device`` allows what ``seen`` showed (of one of its parts, where its
    mode changed): no clock above its caps, its online cores, no saturated unit far below a cap
    (unless held below it the whole run)."""
    parts = seen.spans or (ObservedSpan(None, seen.samples, seen.cores_online, seen.max_mhz, seen.saturated),)
    for part in parts:
        score, held = _mode_score(device, mode, part)
        if score is not None or held:
            return True
    return False


def _held_facts(held: Sequence[_Pair], seen: ObservedSpan) -> str:
    """The unit that held each held mode below its cap, in words: each against its own module's
    cap, that module named where several are (their caps differ)."""
    said = []
    several = len({device.id for device, _ in held}) > 1
    for device, mode in held:
        for unit, cap in _mode_caps(device, mode).items():
            top = seen.max_mhz.get(unit)
            if cap is not None and top is not None and top < cap * (1 - CLOCK_TOLERANCE):
                said.append(("" if not several else f"{device.id}: ") + f"{unit.upper()} saturated, never "
                            f"above {top:.0f} MHz of {mode.name}'s {cap:.0f}")
    return "; ".join(dict.fromkeys(said))


def fits_said(inference: Inference) -> str:
    """What a log fits, in words, for a note that a given device or mode contradicts it: the
    modules and modes an inference over the database kept (those kept only as held below their
    caps said so), or none."""
    if inference.spans:
        return f"it fits {_named(inference.devices)}, its power mode changing within the log"
    kept = tuple(pair for pair in inference.modes if pair not in inference.held)
    held = f"{_named(inference.held)} if held below the caps the whole run" if inference.held else ""
    if kept:
        return f"it fits {_named(kept)}" + (f", or {held}" if held else "")
    if held:
        return f"it fits {held}"
    if inference.devices:
        return f"it fits {_named(inference.devices)} but none of their modes"
    return "it fits no module in the device database"


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

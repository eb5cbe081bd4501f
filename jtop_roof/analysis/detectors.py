"""Throttle and DVFS detection: a clock held below its cap while the unit wants more.

Pure functions of the sample stream and its context (device, power-mode caps, trip points), plugged
into the pipeline, so live, replay, headless ``record`` and ``report`` give the same events for the
same samples.

The rule, from the shared real logs: an AGX Orin GPU ramping 305 -> 407 -> 508 -> 611 MHz at
68-86 % load under DVFS (no throttle); Nano and AGX Orin CPU governors hopping between clocks
(102 <-> 1479 MHz, 729 <-> 1190 MHz) from one sample to the next with one core at 40-90 % (none);
the H200's power cap, 1395-1575 MHz of 1980 at 94-100 % load with NVML's SwPowerCap (a throttle);
inference phases at 90-99 % GPU load, engine builds at 50-70 % (benchlab Orin Nano Super runs).
Per unit (``gpu``, ``emc``, ``cpu``) and sample:

* its clock and load: the GPU's, the EMC's, the CPU's busiest core's (the fastest of them);
* the cap: the known power mode's, else the source's maximum clock (sysfs or NVML), else the device
  database's maximum; below it: clock < ``below_cap_ratio`` x the cap;
* wants more: saturated (load >= ``SATURATED_PCT``), or busy (load >= ``busy_pct``) while the
  device itself says the clock is held (an NVML reason other than idle or set clocks);
* held: wants more, below the cap, and no more than ``HOLD_BAND`` x the cap above the lowest clock
  of the hold so far (a throttle steps the clock down, never up); with the device's own reason,
  whatever the clock's shape.

A hold opens at its first held sample and ends at its last: at once when the clock reaches the cap
or rises out of the band (the governor raising it: a ramp or a hop, not a hold; the rising sample
may open the next hold), or after ``close_after_s`` of samples neither held nor released (the load
dipped with the clock still down; no reading). A hold of >= ``min_duration_s`` and >= ``min_samples``
samples is an event: a ramp (each step a new, short hold) and hopping (each hop up ends the hold)
are none, a clock held flat at saturation is one after a few seconds.

Kind: ``throttle`` when the mode is known (the clock is below the mode's cap; where the mode
changed within the log, the cap of the mode of the sample's part, ``Board.mode_at``) or the
evidence says so. Evidence names the cause, and nothing else does (``cause_source``): NVML
clock-event reasons and an over-current counter ``oc1..3`` that rose (measured: the device says
so); a temperature within ``thermal_margin_c`` of its zone's trip point, placeholders never
(inferred); input power at the mode's budget during the hold, where the same unit ran free at its
cap elsewhere in the run (so far) and never while the input was at the budget (inferred: a log that
drew the budget's power with the clock at its cap shows the budget did not hold it). Without
evidence the reason says "cause not seen".
otherwise ``mode_cap``: information (the mode is unknown, so a low clock may just be a low mode's
cap, which ``--power-mode`` would tell). Mode sanity: where no unit has yet been at its stated
mode's cap while busy (within the band above it: a clock far above a cap says that cap is not this
board's), a hold no evidence explains says more about the mode than about a throttle: the first
such hold is one ``mode_check`` event (``MODE_CHECK``), the next ones nothing, until a unit reaches
its cap (holds closing after that are throttles). A dGPU has no modes: its cap is its maximum clock and only
NVML's reasons make an event. The reason names the evidence, else "clock below the mode's cap while
busy". The stream is taken forward only (a replay's seek back plays samples again).

Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jtop_roof.analysis.detector_spec import DetectorSpec, bounded
from jtop_roof.analysis.pipeline import StreamContext
from jtop_roof.model.info import INFERRED, MEASURED
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.model.thermal import is_placeholder
from jtop_roof.roofline.devices import PowerMode

#: The kinds of event this detector makes (each declared in ``model.event_kinds``).
KINDS = ("throttle", "mode_cap", "mode_check")
UNITS = ("gpu", "emc", "cpu")
_NO_CAPS = (None, None, None)
#: How far (a fraction of the cap) a held clock may rise above its lowest: the H200's power-capped
#: clock moves 15-105 MHz (at most 5 % of 1980) from one sample to the next, and a Jetson governor's
#: step up is 77 MHz of a 1.7-2.2 GHz CPU (3.5-4.5 %) and 100 MHz of a 1-1.3 GHz GPU (8-10 %): two
#: CPU steps or one GPU step leave the band, a capped clock's jitter does not.
HOLD_BAND = 0.05
#: Load at which a unit wants more clock than it has: schedutil asks a core's maximum from 80 %
#: (its 1.25 headroom), the GPU's governor raises its clock above its load target. The shared logs'
#: inference phases run at 90-99 %, their engine builds at 50-70 %, a hopping CPU core at 40-90 %
#: for a sample at a time.
SATURATED_PCT = 80.0
#: What a throttle without evidence says of its cause.
CAUSE_NOT_SEEN = "cause not seen"
#: Where a throttle's cause came from (``cause_source``): the device's own word, or the data's.
MEASURED_CAUSES = ("NVML:", "over-current:")
#: What a ``mode_check`` event says, once (``ClockEvents.mode_check`` for the report's note).
MODE_CHECK = "the stated mode's caps were never reached: is the power mode right?"
#: NVML reasons that are not a throttle: an idle GPU, or clocks someone set on purpose.
_BENIGN_REASONS = ("GpuIdle", "ApplicationsClocksSetting", "DisplayClockSetting", "SyncBoost")
#: Every reason as a short code (the ``reason`` label of ``jroof_throttle_active``): ``below_cap``
#: (no evidence but a known mode's cap), ``mode_unknown`` (a ``mode_cap`` or ``mode_check``
#: event), else the evidence.
REASON_CODES = ("thermal", "power", "over_current", "hw_slowdown", "board_limit", "reliability", "other",
                "below_cap", "mode_unknown")
#: NVML's throttle reasons: (in words, code); an unlisted one is itself in words and ``other``.
_NVML_REASONS = {
    "SwPowerCap": ("SW power cap", "power"),
    "HwSlowdown": ("HW slowdown", "hw_slowdown"),
    "SwThermalSlowdown": ("SW thermal slowdown", "thermal"),
    "HwThermalSlowdown": ("HW thermal slowdown", "thermal"),
    "HwPowerBrakeSlowdown": ("HW power brake", "power"),
    "BoardLimit": ("board limit", "board_limit"),
    "Reliability": ("reliability limit", "reliability"),
}


@dataclass(frozen=True)
class ThrottleSettings:
    """When a clock counts as held down (``ThrottleDetector``), with the bounds the config allows
    (``detectors:`` in the config file); these are the defaults."""

    busy_pct: float = bounded(50.0, 1.0, 100.0)
    below_cap_ratio: float = bounded(0.95, 0.1, 1.0)
    min_duration_s: float = bounded(2.0, 0.0, 3600.0)
    min_samples: int = bounded(2, 1, 100_000)
    close_after_s: float = bounded(1.0, 0.0, 3600.0)
    thermal_margin_c: float = bounded(5.0, 0.0, 100.0)
    power_budget_ratio: float = bounded(0.95, 0.1, 2.0)


@dataclass(slots=True)
class _Hold:
    """A run of held samples of one unit, and the evidence seen during it."""

    start_wall: float | None
    start_mono: float
    last_wall: float | None
    last_mono: float
    lowest_mhz: float
    cap_mhz: float
    samples: int = 1
    evidence: dict[str, str] = field(default_factory=dict)  # reason in words -> its code, in order
    #: The highest input power (mW) at the budget during the hold, and the budget (W): a cause only
    #: where the unit ran free elsewhere (``ThrottleDetector._power_cause``).
    budget_mw: float | None = None
    budget_w: float | None = None
    budget_mode: str = ""


class ThrottleDetector:
    """One hold per unit over the sample stream; see the module docstring."""

    def __init__(self, settings: ThrottleSettings | None = None) -> None:
        self.settings = settings or ThrottleSettings()
        self._open: dict[str, _Hold] = {}
        self._last_mono: float | None = None
        self._last_oc: dict[str, int] | None = None  # the over-current counters of the last sample
        #: (board, info, part of a log whose mode changed, caps)
        self._caps: tuple[object, object, int, tuple[float | None, ...]] | None = None
        #: Units seen busy at their cap, and the highest input power (mW) while they were.
        self._free_mw: dict[str, float | None] = {}
        #: Units seen busy at their cap with the input at the mode's budget: power does not hold them.
        self._free_at_budget: set[str] = set()
        self._cap_reached = False  # a unit was at its cap while busy: the caps are reachable
        self._mode_checked = False  # the ``mode_check`` event was made
        #: Below this load a unit without a hold is neither busy nor wanting more: its sample
        #: changes nothing, so it is not read nor stepped (most samples of a long log).
        self._quiet_below = min(self.settings.busy_pct, SATURATED_PCT)

    def observe(self, record: Record, context: StreamContext) -> Sequence[Event]:
        if not isinstance(record, Sample) or not record.is_sample or record.t_mono is None:
            return ()
        now = record.t_mono
        if self._last_mono is not None and now <= self._last_mono:
            return ()
        self._last_mono = now
        over_current = _oc_rose(self._last_oc, record.oc_events)
        if record.oc_events is not None:
            self._last_oc = record.oc_events
        caps = self._unit_caps(context, now)
        held = self._open
        if not held and caps == _NO_CAPS:
            return ()  # no unit has a cap to be below (device unknown) and none is open: as below
        closed: list[Event] = []
        for unit, cap in zip(UNITS, caps, strict=True):
            if unit not in held and (cap is None or _quiet(unit, record, self._quiet_below)):
                continue  # no hold to go on or end, none to open, no cap reached while busy
            reading = None if cap is None else _read(unit, record)
            closed += self._step(unit, record, now, reading, cap, context, over_current)
        return closed

    def active(self, context: StreamContext) -> list[Event]:
        """Holds long enough to be events that have not closed yet (the header's flag)."""
        out = []
        for unit, hold in self._open.items():
            event = self._event(unit, hold, context)
            if event is not None:
                out.append(event)
        return out

    def finish(self, context: StreamContext) -> list[Event]:
        """The stream ended: close what is open (written to the recording at stop)."""
        return [event for unit in list(self._open) for event in self._close(unit, context)]

    # ------------------------------------------------------------------------------ internals

    def _step(self, unit: str, sample: Sample, now: float, reading: tuple[float, float] | None,
              cap: float | None, context: StreamContext, over_current: list[tuple[str, str]]) -> list[Event]:
        """One unit in one sample (``reading``: its clock and load, ``_read``; ``cap``: its cap, set
        where there is a reading): its hold goes on, opens, or ends (its event, if it is one)."""
        settings, hold = self.settings, self._open.get(unit)
        if reading is None or cap is None:  # no clock: a hold waits ``close_after_s`` for one
            if hold is not None and now - hold.last_mono > settings.close_after_s:
                return self._close(unit, context)
            return []
        mhz, load_pct = reading
        told = _device_says_held(unit, sample)
        limit = settings.below_cap_ratio * cap
        busy = load_pct >= settings.busy_pct
        if busy and limit <= mhz <= cap * (1 + HOLD_BAND):
            self._cap_reached = True  # at its cap (not above it: that cap is not this board's)
            self._ran_free(unit, sample, context)
        closed: list[Event] = []
        rising = hold is not None and not told and mhz > hold.lowest_mhz + HOLD_BAND * cap
        if hold is not None and (mhz >= limit or rising):
            closed, hold = self._close(unit, context), None  # released: at the cap, or rising
        wants_more = load_pct >= SATURATED_PCT or (busy and bool(told))
        if wants_more and 0 < mhz < limit:
            if hold is None:
                hold = _Hold(sample.t_wall, now, sample.t_wall, now, lowest_mhz=mhz, cap_mhz=cap)
                self._open[unit] = hold
            else:
                hold.last_wall, hold.last_mono = sample.t_wall, now
                hold.samples += 1
                hold.lowest_mhz = min(hold.lowest_mhz, mhz)
            for words, code in told + _evidence(unit, sample, context, settings) + over_current:
                hold.evidence.setdefault(words, code)
            budget = _at_budget(sample, context, settings)
            if budget is not None and (hold.budget_mw is None or budget[0] > hold.budget_mw):
                hold.budget_mw, hold.budget_w, hold.budget_mode = budget
        elif hold is not None and now - hold.last_mono > settings.close_after_s:
            closed += self._close(unit, context)  # the load stayed down with the clock
        return closed

    def _close(self, unit: str, context: StreamContext) -> list[Event]:
        """End ``unit``'s hold: its event, if it is one."""
        event = self._event(unit, self._open.pop(unit), context)
        if event is None:
            return []
        self._mode_checked |= event.kind == "mode_check"
        return [event]

    def _ran_free(self, unit: str, sample: Sample, context: StreamContext) -> None:
        """``unit`` is busy at its cap in ``sample``: the input power then, and whether it was at
        the budget (then power does not explain a hold of it)."""
        total = sample.power_total
        mw = None if total is None else total.mw
        before = self._free_mw.get(unit)
        self._free_mw[unit] = mw if before is None else before if mw is None else max(before, mw)
        if _at_budget(sample, context, self.settings) is not None:
            self._free_at_budget.add(unit)

    def _power_cause(self, unit: str, hold: _Hold) -> list[tuple[str, str]]:
        """Power as the cause of ``hold``: the input at the budget during it, where the unit ran free
        at its cap elsewhere and never with the input at the budget."""
        if hold.budget_mw is None or hold.budget_w is None or unit not in self._free_mw \
                or unit in self._free_at_budget:
            return []
        free = self._free_mw[unit]
        elsewhere = "less" if free is None else f"up to {free / 1000:.1f} W"
        said = (f"power: input at the {hold.budget_mode} budget ({hold.budget_mw / 1000:.1f} of "
                f"{hold.budget_w:g} W) while {unit.upper()} ran at its cap elsewhere at {elsewhere}")
        return [(said, "power")]

    def _unit_caps(self, context: StreamContext, t_mono: float | None) -> tuple[float | None, ...]:
        """``_cap`` of each unit, asked again only when the board, the description or the part of
        a log whose mode changed did."""
        cached, part = self._caps, context.board.span_at(t_mono)
        if cached is not None and cached[0] is context.board and cached[1] is context.info \
                and cached[2] == part:
            return cached[3]
        mode = context.board.mode_at(t_mono)
        caps = tuple(_cap(unit, context, mode) for unit in UNITS)
        self._caps = (context.board, context.info, part, caps)
        return caps

    def _event(self, unit: str, hold: _Hold, context: StreamContext) -> Event | None:
        settings = self.settings
        if hold.samples < settings.min_samples or hold.last_mono - hold.start_mono < settings.min_duration_s:
            return None
        board = context.board
        found = {**hold.evidence, **dict(self._power_cause(unit, hold))}
        evidence = list(found)
        codes = tuple(dict.fromkeys(found.values()))
        dgpu = board.device is not None and not board.device.power_modes
        if dgpu and not evidence:
            return None  # NVML's reasons decide on a dGPU
        kind = "throttle" if board.mode_at(hold.start_mono) is not None or evidence else "mode_cap"
        clock = f"{unit.upper()} {hold.lowest_mhz:.0f} MHz of {hold.cap_mhz:.0f}"
        if evidence:
            reason = "; ".join(evidence)
        elif kind == "throttle" and not self._cap_reached:
            if self._mode_checked:
                return None  # said once
            kind, reason, codes = "mode_check", MODE_CHECK, ("mode_unknown",)
        elif kind == "throttle":
            reason, codes = f"clock below the mode's cap while busy; {CAUSE_NOT_SEEN}", ("below_cap",)
        else:
            reason = ("clock below the device's maximum while busy (power mode unknown: --power-mode would "
                      "tell a mode cap from a throttle)")
            codes = ("mode_unknown",)
        return Event(kind, f"{reason} ({clock})", hold.last_wall, hold.last_mono, unit=unit,
                     start_wall=hold.start_wall, start_mono=hold.start_mono, reasons=codes)


def _quiet(unit: str, sample: Sample, below: float) -> bool:
    """True where the unit's load in ``sample`` is surely under ``below`` (or not read): then so is
    its reading's (``_read``: a core's, for the CPU), or it is NaN. False where unsure (a core
    without a load): the unit is read."""
    if unit == "cpu":
        for core in sample.cpus or ():
            if core is not None and not (core.load_pct is not None and core.load_pct < below):
                return False
        return True
    clocked = sample.gpu if unit == "gpu" else sample.emc
    return clocked is None or clocked.load_pct is None or clocked.load_pct < below


def _read(unit: str, sample: Sample) -> tuple[float, float] | None:
    """The unit's clock and load in ``sample`` (the CPU's: its busiest core's, the fastest of the
    busiest); None without both. A plain tuple: three are read for every sample."""
    if unit == "cpu":
        busiest: tuple[float, int] | None = None
        for core in sample.cpus or ():
            if core is not None:
                load, mhz = core.load_pct, core.mhz
                if load is not None and mhz is not None and (busiest is None or (load, mhz) > busiest):
                    busiest = (load, mhz)
        return None if busiest is None else (float(busiest[1]), busiest[0])
    clocked = sample.gpu if unit == "gpu" else sample.emc
    if clocked is None:
        return None
    load, mhz = clocked.load_pct, clocked.mhz
    return None if load is None or mhz is None else (float(mhz), load)


def _device_says_held(unit: str, sample: Sample) -> list[tuple[str, str]]:
    """NVML's own reasons for holding the GPU's clock in this sample: (in words, code)."""
    if unit != "gpu" or not sample.throttle_reasons:
        return []
    named = [_NVML_REASONS.get(r, (r, "other")) for r in sample.throttle_reasons if r not in _BENIGN_REASONS]
    return [(f"NVML: {words}", code) for words, code in named]


def cause_source(event: Event) -> str | None:
    """Where a detector event's cause came from: ``measured`` (NVML's reasons, an over-current
    counter), ``inferred`` (a trip point neared, power at the budget), None (no cause seen)."""
    if event.kind not in KINDS or not set(event.reasons) - {"below_cap", "mode_unknown"}:
        return None
    parts = event.detail.split("; ")
    return MEASURED if any(part.startswith(MEASURED_CAUSES) for part in parts) else INFERRED


def _cap(unit: str, context: StreamContext, mode: PowerMode | None) -> float | None:
    """The unit's clock cap: the mode's, else the source's maximum, else the device's."""
    device = context.board.device
    mode_cap = None
    if mode is not None:
        mode_cap = {"gpu": mode.max_gpu_mhz, "emc": mode.max_emc_mhz, "cpu": mode.max_cpu_mhz}[unit]
    if mode_cap is not None:
        return mode_cap
    source_cap = context.info.max_clocks.get(f"{unit}_mhz")
    if source_cap is not None:
        return source_cap
    if device is not None:
        return {"gpu": device.max_gpu_mhz, "emc": device.max_emc_mhz, "cpu": None}[unit]
    return None


_OC_MEANING = {"oc1": "under-voltage", "oc2": "average over-current", "oc3": "instantaneous over-current"}


def _oc_rose(before: dict[str, int] | None, now: dict[str, int] | None) -> list[tuple[str, str]]:
    """Over-current counters (hwmon ``soctherm_oc``) that rose since the previous sample."""
    if before is None or now is None:
        return []
    return [(f"over-current: {name} ({_OC_MEANING.get(name, 'event')}) count rose", "over_current")
            for name, count in now.items() if count > before.get(name, count)]


def _evidence(unit: str, sample: Sample, context: StreamContext,
              settings: ThrottleSettings) -> list[tuple[str, str]]:
    """Reasons the board's data gives for a low clock, besides NVML's: (in words, its code)."""
    out = []
    for zone, value in sample.temps_c.items():
        trip = context.info.trips_c.get(zone.lower())
        if value is None or trip is None or is_placeholder(zone, value):
            continue
        if trip - value <= settings.thermal_margin_c:
            out.append((f"thermal: {zone} within {settings.thermal_margin_c:g} °C of its {trip:g} °C trip",
                        "thermal"))
    return out


def _at_budget(sample: Sample, context: StreamContext, settings: ThrottleSettings
               ) -> tuple[float, float, str] | None:
    """(input mW, the budget's W, the mode's name) where the input power is at the budget of the
    sample's mode; else None."""
    mode, total = context.board.mode_at(sample.t_mono), sample.power_total
    if mode is None or mode.watts is None or total is None:
        return None
    if total.mw >= settings.power_budget_ratio * mode.watts * 1000:
        return total.mw, mode.watts, mode.name
    return None


#: Its declaration (``analysis.detector_registry``): ``detectors:`` in the config gives its settings.
DETECTOR = DetectorSpec("throttle", ThrottleSettings, ThrottleDetector)

"""Throttle and DVFS detection: a clock held below what the power mode allows while the unit is busy.

Pure functions of the sample stream and its context (device, power-mode caps, trip points), plugged
into the pipeline, so live, replay, headless ``record`` and ``report`` give the same events for the
same samples. Per unit (``gpu``, ``emc``, ``cpu``):

* busy: load >= ``busy_pct`` (the GPU's load; any online CPU core's; the EMC's);
* below cap: clock < ``below_cap_ratio`` x the cap. The cap is the known power mode's, else the
  source's maximum clock (sysfs or NVML), else the device database's maximum;
* an event opens when both hold for >= ``min_duration_s`` and >= ``min_samples`` samples, starting
  at the first such sample, and closes after ``close_after_s`` without them, ending at the last such
  sample. A governor ramp or an idle clock is too short or not busy: neither.

Kind: ``throttle`` when the mode is known (the clock is below the mode's cap) or the evidence says
so (NVML clock-event reasons; a temperature within ``thermal_margin_c`` of its zone's trip point,
placeholders never; input power at the mode's budget; an over-current counter ``oc1..3`` that rose);
otherwise ``mode_cap``: information (the mode
is unknown, so a low clock may just be a low mode's cap, which ``--power-mode`` would tell). A dGPU
has no modes: its cap is its maximum clock and only NVML's reasons make an event. The reason names
the evidence, else "clock below the mode's cap while busy". The stream is taken forward only (a
replay's seek back plays samples again).

Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jtop_roof.analysis.pipeline import StreamContext
from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.model.settings import DetectorSettings
from jtop_roof.model.thermal import is_placeholder

#: The kinds of event detectors make; a recording's own are dropped on replay (recomputed instead).
DETECTOR_KINDS = ("throttle", "mode_cap")
UNITS = ("gpu", "emc", "cpu")
_NO_CAPS = (None, None, None)
#: NVML reasons that are not a throttle: an idle GPU, or clocks someone set on purpose.
_BENIGN_REASONS = ("GpuIdle", "ApplicationsClocksSetting", "DisplayClockSetting", "SyncBoost")
#: Every reason as a short code (the ``reason`` label of ``jroof_throttle_active``): ``below_cap``
#: (no evidence but a known mode's cap), ``mode_unknown`` (a ``mode_cap`` event), else the evidence.
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


@dataclass(slots=True)
class _Episode:
    """A run of busy-and-below-cap samples of one unit, and the evidence seen during it."""

    start_wall: float | None
    start_mono: float
    last_wall: float | None
    last_mono: float
    samples: int = 1
    lowest_mhz: float = 0.0
    cap_mhz: float = 0.0
    evidence: dict[str, str] = field(default_factory=dict)  # reason in words -> its code, in order


class ThrottleDetector:
    """One state machine per unit over the sample stream; see the module docstring."""

    def __init__(self, settings: DetectorSettings | None = None) -> None:
        self.settings = settings or DetectorSettings()
        self._open: dict[str, _Episode] = {}
        self._last_mono: float | None = None
        self._last_oc: dict[str, int] | None = None  # the over-current counters of the last sample
        self._caps: tuple[object, object, tuple[float | None, ...]] | None = None  # (board, info, caps)

    def observe(self, record: Record, context: StreamContext) -> Sequence[Event]:
        if not isinstance(record, Sample) or not record.is_sample or record.t_mono is None:
            return ()
        if self._last_mono is not None and record.t_mono <= self._last_mono:
            return ()
        self._last_mono = record.t_mono
        over_current = _oc_rose(self._last_oc, record.oc_events)
        if record.oc_events is not None:
            self._last_oc = record.oc_events
        caps = self._unit_caps(context)
        if not self._open and caps == _NO_CAPS:
            return ()  # no unit has a cap to be below (device unknown) and none is open: as below
        closed: list[Event] = []
        for unit, cap in zip(UNITS, caps, strict=True):
            reading = None if cap is None else self._reading(unit, record, context, cap)
            episode = self._open.get(unit)
            if reading is not None:
                mhz, cap = reading
                if episode is None:
                    episode = _Episode(record.t_wall, record.t_mono, record.t_wall, record.t_mono,
                                       lowest_mhz=mhz, cap_mhz=cap)
                    self._open[unit] = episode
                else:
                    episode.last_wall, episode.last_mono = record.t_wall, record.t_mono
                    episode.samples += 1
                    episode.lowest_mhz = min(episode.lowest_mhz, mhz)
                for words, code in _evidence(unit, record, context, self.settings) + over_current:
                    episode.evidence.setdefault(words, code)
            elif episode is not None and record.t_mono - episode.last_mono > self.settings.close_after_s:
                del self._open[unit]
                event = self._event(unit, episode, context)
                if event is not None:
                    closed.append(event)
        return closed

    def active(self, context: StreamContext) -> list[Event]:
        """Episodes long enough to be events that have not closed yet (the header's flag)."""
        out = []
        for unit, episode in self._open.items():
            event = self._event(unit, episode, context)
            if event is not None:
                out.append(event)
        return out

    def finish(self, context: StreamContext) -> list[Event]:
        """The stream ended: close what is open (written to the recording at stop)."""
        out = self.active(context)
        self._open.clear()
        return out

    # ------------------------------------------------------------------------------ internals

    def _unit_caps(self, context: StreamContext) -> tuple[float | None, ...]:
        """``_cap`` of each unit, asked again only when the board or the description changed."""
        cached = self._caps
        if cached is not None and cached[0] is context.board and cached[1] is context.info:
            return cached[2]
        caps = tuple(_cap(unit, context) for unit in UNITS)
        self._caps = (context.board, context.info, caps)
        return caps

    def _reading(self, unit: str, sample: Sample, context: StreamContext,
                 cap: float) -> tuple[float, float] | None:
        """(clock, cap) when the unit is busy and below its cap, else None."""
        limit = self.settings.below_cap_ratio * cap
        busy = self.settings.busy_pct
        if unit == "gpu":
            gpu = sample.gpu
            if gpu is None or gpu.load_pct is None or gpu.mhz is None:
                return None
            return (gpu.mhz, cap) if gpu.load_pct >= busy and 0 < gpu.mhz < limit else None
        if unit == "emc":
            emc = sample.emc
            if emc is None or emc.load_pct is None or emc.mhz is None:
                return None
            return (emc.mhz, cap) if emc.load_pct >= busy and 0 < emc.mhz < limit else None
        low = [core.mhz for core in sample.cpus or () if core is not None and core.load_pct is not None
               and core.mhz is not None and core.load_pct >= busy and 0 < core.mhz < limit]
        return (min(low), cap) if low else None

    def _event(self, unit: str, episode: _Episode, context: StreamContext) -> Event | None:
        settings = self.settings
        if (episode.samples < settings.min_samples
                or episode.last_mono - episode.start_mono < settings.min_duration_s):
            return None
        board = context.board
        evidence = list(episode.evidence)
        codes = tuple(dict.fromkeys(episode.evidence.values()))
        dgpu = board.device is not None and not board.device.power_modes
        if dgpu and not evidence:
            return None  # NVML's reasons decide on a dGPU
        kind = "throttle" if board.mode is not None or evidence else "mode_cap"
        clock = f"{unit.upper()} {episode.lowest_mhz:.0f} MHz of {episode.cap_mhz:.0f}"
        if evidence:
            reason = "; ".join(evidence)
        elif kind == "throttle":
            reason, codes = "clock below the mode's cap while busy", ("below_cap",)
        else:
            reason = ("clock below the device's maximum while busy (power mode unknown: --power-mode would "
                      "tell a mode cap from a throttle)")
            codes = ("mode_unknown",)
        return Event(kind, f"{reason} ({clock})", episode.last_wall, episode.last_mono, unit=unit,
                     start_wall=episode.start_wall, start_mono=episode.start_mono, reasons=codes)


def _cap(unit: str, context: StreamContext) -> float | None:
    """The unit's clock cap: the known mode's, else the source's maximum, else the device's."""
    mode, device = context.board.mode, context.board.device
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
              settings: DetectorSettings) -> list[tuple[str, str]]:
    """Reasons the data gives for a low clock: (in words, its code)."""
    out = []
    if unit == "gpu" and sample.throttle_reasons:
        named = [_NVML_REASONS.get(r, (r, "other")) for r in sample.throttle_reasons
                 if r not in _BENIGN_REASONS]
        out += [(f"NVML: {words}", code) for words, code in named]
    for zone, value in sample.temps_c.items():
        trip = context.info.trips_c.get(zone.lower())
        if value is None or trip is None or is_placeholder(zone, value):
            continue
        if trip - value <= settings.thermal_margin_c:
            out.append((f"thermal: {zone} within {settings.thermal_margin_c:g} °C of its {trip:g} °C trip",
                        "thermal"))
    mode = context.board.mode
    total = sample.power_total
    if mode is not None and mode.watts is not None and total is not None:
        if total.mw >= settings.power_budget_ratio * mode.watts * 1000:
            out.append((f"power: input at the {mode.name} budget ({total.mw / 1000:.1f} of {mode.watts:g} W)",
                        "power"))
    return out

"""Phases and their energy: what the monitor, headless ``record`` and ``report`` all compute alike.

The ledger takes samples, power readings, phase markers and stream breaks in stream order and
keeps, for the whole run and for every phase (finished phases are kept, not forgotten), its bounds,
samples, energy per rail and in total, and peak power.

A phase starts and ends at its markers' own times, never at the samples next to them. Its energy
is the integral of the finest power stream between those edges (``analysis.energy``): an energy
counter where there is one, else the fastest instantaneous readings (a board monitor read at
``--power-hz``), else the samples' rails (never tegrastats' running average), interpolated at the
edges. A span's bounds (``first_mono``..``last_mono``) are exactly what its energy is integrated
over: its edges, or the first and last reading of that stream inside them where the stream
starts later or stops earlier (the run's are its stream's first and last reading). So ``mean =
energy ÷ duration`` holds, duration edge to edge. Nothing is integrated across a break (a ``gap``,
``source_restart``, ``source_error`` or ``seek`` event), across a step of the samples of at least
``gap_step_for`` their interval (3 intervals) or of a power stream longer than ``max_step_for``
its period, or where a counter went backwards: such a step inside a span is counted as a gap of
it, and its time is not observed time (``observed_s``; ``mean = energy ÷ observed_s``).

Streams arrive interleaved (samples, readings), each in its own order: a step is shared among the
spans by time, whenever it arrives. A marker stamped before a reading already taken (it came late)
is placed at that reading: an edge never moves energy already counted.

Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from jtop_roof.analysis.energy import COUNTER, POWER, Channel, Coverage, Point, Step, finite, point
from jtop_roof.analysis.processes import ProcessStats, ProcessTally
from jtop_roof.model.codec import MAX_NAMED
from jtop_roof.model.records import PowerReading, ProcessReading, auto_phase_name
from jtop_roof.model.timeline import gap_step_for

#: Event kinds that break the stream: no energy is integrated across them.
BREAK_EVENTS = ("gap", "source_restart", "source_error", "seek")
#: Phase starts with this origin continue the phase already open (a new recording of a running
#: phase, or a session appended after a restart), rather than starting a new one.
RESUME_ORIGIN = "resume"
#: A phase started with this origin is ``jroof-tui run``'s, named after its command: it stands only
#: while the command marks nothing. A phase the command (or the user) starts replaces it: the open
#: command phase is dropped, its samples stay in the whole run, and it is not counted in ``phase N``.
COMMAND_ORIGIN = "run"
#: Power streams kept apart (sources x kinds); a hostile recording naming a new one on every line
#: has the rest left out.
MAX_CHANNELS = 16
_SAMPLES = ("samples", POWER)


@dataclass(frozen=True, slots=True)
class SpanStats:
    """One phase, or the whole run. ``first_mono``..``last_mono`` (stream seconds; ``*_wall`` unix
    seconds) are the bounds its energy is integrated over; None before anything measured it.
    Energy in joules, power in milliwatts. ``energy_j`` is None when nothing measured total input
    power (a dGPU host: per rail only). ``energy_source`` says what measured it ("INA3221 hwmon,
    50 Hz", "NVML energy counter", "tegrastats VDD_IN, 1000 ms"), read every ``power_period_s``."""

    name: str
    first_mono: float | None
    last_mono: float | None
    first_wall: float | None
    last_wall: float | None
    start_mono: float | None  # the edge that opened the phase (the run: its first bound)
    samples: int
    gaps: int
    energy_j: float | None
    rails_j: Mapping[str, float]
    peak_mw: float | None
    rail_peak_mw: Mapping[str, float]
    is_open: bool
    #: Mean GPU and EMC clocks over the samples that report them (the roof at the span's clocks).
    mean_gpu_mhz: float | None = None
    mean_emc_mhz: float | None = None
    #: Work the workload reported in the span (None: no report); FLOPs and bytes where given.
    iterations: float | None = None
    flops: float | None = None
    bytes: float | None = None
    precision: str | None = None
    energy_source: str | None = None
    power_period_s: float | None = None
    #: Who else ran: the processes that mattered (``analysis.processes``); empty without readings.
    processes: tuple[ProcessStats, ...] = ()
    #: Seconds of the ``gaps`` inside the bounds: neither integrated nor observed.
    gap_s: float = 0.0

    @property
    def duration_s(self) -> float:
        """Edge to edge: the time the energy is integrated over (0 before two readings)."""
        if self.first_mono is None or self.last_mono is None:
            return 0.0
        return self.last_mono - self.first_mono

    @property
    def observed_s(self) -> float:
        """The duration less its gaps: the time the energy was measured over."""
        return max(self.duration_s - self.gap_s, 0.0)

    @property
    def mean_mw(self) -> float | None:
        """Energy ÷ observed time; None without total power or an observed time."""
        if self.energy_j is None or self.observed_s <= 0:
            return None
        return self.energy_j / self.observed_s * 1e3

    def rail_mean_mw(self, name: str) -> float | None:
        joules = self.rails_j.get(name)
        if joules is None or self.observed_s <= 0:
            return None
        return joules / self.observed_s * 1e3


@dataclass(slots=True)
class _Span:
    """One span's edges and running sums; frozen into ``SpanStats`` when asked. ``start``/``end``
    are its edges (-inf/inf: open that way)."""

    name: str
    start: float
    end: float = math.inf
    start_mono: float | None = None
    coverage: dict[tuple[str, str], Coverage] = field(default_factory=dict)
    samples: int = 0
    peak_mw: float | None = None
    rail_peak_mw: dict[str, float] = field(default_factory=dict)
    gpu_mhz_sum: float = 0.0
    gpu_mhz_n: int = 0
    emc_mhz_sum: float = 0.0
    emc_mhz_n: int = 0
    iterations: float | None = None
    flops: float | None = None
    bytes: float | None = None
    precision: str | None = None
    processes: ProcessTally = field(default_factory=ProcessTally)

    def covered(self, key: tuple[str, str]) -> Coverage:
        found = self.coverage.get(key)
        if found is None:
            found = self.coverage[key] = Coverage()
        return found

    def freeze(self, channels: Mapping[tuple[str, str], Channel], *, is_open: bool) -> SpanStats:
        covered = sorted(((channels[key], cov) for key, cov in self.coverage.items()
                          if cov.start is not None), key=lambda item: item[0].rank)
        totalled = [item for item in covered if item[1].total_j is not None]
        rails_j: dict[str, float] = {}
        measured: list[str] = []  # what gave the rails their energy, finest first
        for channel, cov in covered:  # each rail from the finest stream that measured it
            taken = {name: joules for name, joules in cov.rails_j.items() if name not in rails_j}
            if taken:
                rails_j.update(taken)
                measured.append(channel.label(channel.total_source(), taken))
        label = period = None
        bounds = Coverage()
        candidates = totalled or [item for item in covered if item[1].rails_j] or covered
        if candidates:  # the bounds: the finest stream of the total, else of a rail
            channel, bounds = candidates[0]
            if bounds.total_j is not None:
                label = channel.label(channel.total_source(), bounds.rails_j)
            elif measured:  # no total: every stream that measured a rail (NVML's and RAPL's counters)
                label = " + ".join(measured)
            period = channel.period_s if label is not None else None
        start_mono = self.start_mono if self.start_mono is not None else bounds.start
        return SpanStats(
            name=self.name,
            first_mono=bounds.start,
            last_mono=bounds.end,
            first_wall=bounds.start_wall,
            last_wall=bounds.end_wall,
            start_mono=start_mono,
            samples=self.samples,
            gaps=bounds.gaps,
            energy_j=bounds.total_j,
            rails_j=rails_j,
            peak_mw=self.peak_mw,
            rail_peak_mw=dict(self.rail_peak_mw),
            is_open=is_open,
            mean_gpu_mhz=self.gpu_mhz_sum / self.gpu_mhz_n if self.gpu_mhz_n else None,
            mean_emc_mhz=self.emc_mhz_sum / self.emc_mhz_n if self.emc_mhz_n else None,
            iterations=self.iterations,
            flops=self.flops,
            bytes=self.bytes,
            precision=self.precision,
            energy_source=label,
            power_period_s=period,
            processes=self.processes.summary(),
            gap_s=bounds.gap_s,
        )


class EnergyLedger:
    """Phases (auto-named, resumable) and energy for the run and every phase; see the module doc."""

    def __init__(self, interval_s: float = 1.0, samples_source: str = "tegrastats") -> None:
        self.max_step_s = gap_step_for(interval_s)
        self._channels: dict[tuple[str, str], Channel] = {
            _SAMPLES: Channel(samples_source, POWER, interval_s, of_samples=True)}
        self._whole = _Span("whole run", -math.inf)
        self._open: _Span | None = None
        self._open_origin = ""
        self._finished: list[_Span] = []
        self._phases_started = 0
        self._last_mono: float | None = None  # the newest reading of any stream
        self._last_edge = -math.inf  # edges never run backwards: phases stay in time order

    @property
    def samples_source(self) -> str:
        """What gave the samples (``tegrastats``, ``host``): it names their energy."""
        return self._channels[_SAMPLES].name

    @samples_source.setter
    def samples_source(self, name: str) -> None:
        self._channels[_SAMPLES].name = name

    # ------------------------------------------------------------------------------- input

    def add_sample(
        self,
        t_mono: float,
        t_wall: float | None,
        total_mw: float | None,
        rails_mw: Mapping[str, float],
        *,
        gpu_mhz: float | None = None,
        emc_mhz: float | None = None,
    ) -> None:
        """One sample, in stream order. Forward only: a sample not later than the last one taken
        (a replay played it again after a seek back) is ignored, so nothing counts twice."""
        channel = self._channels[_SAMPLES]
        last = channel.last
        if last is not None and t_mono <= last.t:
            return
        total = total_mw if total_mw is not None and math.isfinite(total_mw) else None
        reading = Point(t_mono, t_wall, finite(rails_mw), total)
        self._take(_SAMPLES, channel, reading)
        for span in self._holding(t_mono):
            span.samples += 1
            _peaks(span, reading)
            if gpu_mhz is not None:
                span.gpu_mhz_sum += gpu_mhz
                span.gpu_mhz_n += 1
            if emc_mhz is not None:
                span.emc_mhz_sum += emc_mhz
                span.emc_mhz_n += 1

    def add_power(self, reading: PowerReading) -> None:
        """A reading of a power stream (its rails in mW, its counters in mJ), in its stream's order;
        one not later than its stream's last is ignored, as a sample is."""
        t_mono = reading.t_mono
        if t_mono is None or not math.isfinite(t_mono):
            return
        period = reading.period_s if math.isfinite(reading.period_s) and reading.period_s > 0 \
            else self._channels[_SAMPLES].period_s
        for kind, values in ((POWER, reading.rails_mw), (COUNTER, reading.counters_mj)):
            if not values:
                continue
            key = (reading.source, kind)
            channel = self._channels.get(key)
            if channel is None:
                if len(self._channels) >= MAX_CHANNELS:
                    continue
                channel = self._channels[key] = Channel(reading.source, kind, period)
            if channel.last is not None and t_mono <= channel.last.t:
                continue
            taken = point(t_mono, reading.t_wall, values)
            self._take(key, channel, taken)
            if kind == POWER:
                for span in self._holding(t_mono):
                    _peaks(span, taken)

    def add_processes(self, reading: ProcessReading) -> None:
        """A process reading, to the run and the phase holding its time."""
        if reading.t_mono is not None and math.isfinite(reading.t_mono):
            for span in self._holding(reading.t_mono):
                span.processes.add(reading)

    def add_break(self) -> None:
        """The stream broke (gap, restart, error, seek): the next step of every stream is not
        integrated."""
        for channel in self._channels.values():
            channel.broken = True

    @property
    def last_mono(self) -> float | None:
        """Stream time of the newest reading taken, of any stream (an edge is never earlier)."""
        return self._last_mono

    def add_work(self, iterations: float, flops: float | None, bytes_: float | None,
                 precision: str | None) -> None:
        """Work the workload reported, added to the run and to the open phase."""
        spans = [self._whole] if self._open is None else [self._whole, self._open]
        for span in spans:
            span.iterations = (span.iterations or 0.0) + iterations
            if flops is not None:
                span.flops = (span.flops or 0.0) + flops
            if bytes_ is not None:
                span.bytes = (span.bytes or 0.0) + bytes_
            if precision is not None:
                span.precision = precision

    def start_phase(self, name: str | None, t_mono: float | None, *, origin: str = "key") -> str:
        """Open a phase at ``t_mono`` (ending the open one there); returns its name. ``name`` None:
        ``phase N``. A start with ``origin == "resume"`` and the open phase's name continues that
        phase. ``t_mono`` None: at the newest reading."""
        if origin == RESUME_ORIGIN and self._open is not None and (name or "") == self._open.name:
            return self._open.name
        if self._open is not None and self._open_origin == COMMAND_ORIGIN \
                and origin not in (COMMAND_ORIGIN, RESUME_ORIGIN):
            self._open = None  # the command marks its own phases: its catch-all phase gives way
            self._phases_started -= 1
        edge = self._edge(t_mono)
        self.end_phase(edge)
        self._phases_started += 1
        phase_name = name if name else auto_phase_name(self._phases_started)
        self._open = _Span(phase_name, edge, start_mono=None if math.isinf(edge) else edge)
        self._open_origin = origin
        return phase_name

    def end_phase(self, t_mono: float | None = None) -> None:
        """End the open phase at ``t_mono`` (None: at the newest reading)."""
        if self._open is not None:
            self._open.end = self._edge(t_mono)
            self._finished.append(self._open)
            self._open = None

    # ------------------------------------------------------------------------------ output

    @property
    def next_auto_name(self) -> str:
        """What ``start_phase(None, ...)`` would call the next phase."""
        return auto_phase_name(self._phases_started + 1)

    @property
    def current_phase(self) -> str | None:
        return None if self._open is None else self._open.name

    @property
    def whole(self) -> SpanStats:
        return self._whole.freeze(self._channels, is_open=False)

    @property
    def current(self) -> SpanStats | None:
        return None if self._open is None else self._open.freeze(self._channels, is_open=True)

    def phases(self) -> list[SpanStats]:
        """Every phase in order, the open one last (marked ``is_open``)."""
        out = [span.freeze(self._channels, is_open=False) for span in self._finished]
        if self._open is not None:
            out.append(self._open.freeze(self._channels, is_open=True))
        return out

    def phase_at(self, t_mono: float) -> SpanStats | None:
        """The phase whose edges hold ``t_mono`` (the open one from its start on)."""
        spans = self._finished if self._open is None else [*self._finished, self._open]
        for span in reversed(spans):
            if t_mono < span.start:
                continue
            if t_mono <= span.end:
                return span.freeze(self._channels, is_open=span is self._open)
            return None
        return None

    # ---------------------------------------------------------------------------- internals

    def _edge(self, t_mono: float | None) -> float:
        """A marker's time as an edge: not before the newest reading (its energy is counted), nor
        before the last edge (a marker stamped out of order); None: at the newest reading."""
        last = self._last_mono
        if t_mono is None or not math.isfinite(t_mono):
            t_mono = -math.inf if last is None else last
        elif last is not None and t_mono < last:
            t_mono = last
        self._last_edge = max(self._last_edge, t_mono)
        return self._last_edge

    def _take(self, key: tuple[str, str], channel: Channel, reading: Point) -> None:
        before = channel.last
        if before is None:  # a stream's first reading: the spans holding it are observed from it
            for span in self._spans_between(reading.t, reading.t):
                if span.start <= reading.t:
                    span.covered(key).reach(reading.t, reading, reading)
        else:
            step = Step(channel, before, reading)
            for span in self._spans_between(before.t, reading.t):
                step.add_to(span.covered(key), span.start, span.end)
        channel.last = reading
        channel.broken = False
        if self._last_mono is None or reading.t > self._last_mono:
            self._last_mono = reading.t

    def _spans_between(self, a: float, b: float) -> list[_Span]:
        """The run and every phase whose edges overlap ``[a, b]`` (phases are in time order)."""
        spans = [self._whole]
        if self._open is not None and self._open.start <= b:
            spans.append(self._open)
        for span in reversed(self._finished):
            if span.end < a:
                break
            if span.start <= b:
                spans.append(span)
        return spans

    def _holding(self, t: float) -> tuple[_Span, ...]:
        """The run and the phase a reading at ``t`` belongs to: the latest whose edges hold it (one
        at an edge is the phase's that was open when it came)."""
        whole = self._whole
        for span in self._spans_between(t, t):
            if span is not whole and span.start <= t <= span.end:
                return whole, span
        return (whole,)


def _peaks(span: _Span, reading: Point) -> None:
    total = reading.total
    if total is not None and (span.peak_mw is None or total > span.peak_mw):
        span.peak_mw = total
    peaks = span.rail_peak_mw
    for name, mw in reading.values.items():
        peak = peaks.get(name)
        if peak is None:
            if len(peaks) < MAX_NAMED:  # a hostile stream naming new rails every line stays bounded
                peaks[name] = mw
        elif mw > peak:
            peaks[name] = mw

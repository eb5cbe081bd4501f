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

Power at its source is not taken on trust (``analysis.energy.judge``): a rail read negative or past
2 kW is refused; a power stream's total is refused for a stretch between two samples where its
input rail was, where it read no input rail while the samples have one, or where it disagrees
with the samples' input rail by more than 20% at a sample at either end. That stretch's total then
comes from the samples (tegrastats' VDD_IN; a stretch is judged one sample late, ``_settle``), the
whole span's where every stretch of it was refused, and ``energy_total_source``/``energy_note``
say so: what a span's total came from is what the readings inside it read (``Coverage.sources``),
never the stream's last. A sample whose own input rail was refused or not read costs only the
stretches either side of it, gaps said in ``energy_note``, where the samples read that rail
elsewhere (a sum of the other rails is no input on an Orin). The main source's restart
(``source_restart`` and the ``gap`` it ends with) breaks the samples only: a power stream that kept
reading meanwhile keeps its energy (its own steps say where it broke), whenever its thread last read.

Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from jtop_roof.analysis.energy import (
    COUNTER,
    POWER,
    Channel,
    Coverage,
    Point,
    Step,
    Verdict,
    finite,
    has_input,
    judge,
    point,
    read_input,
)
from jtop_roof.analysis.energy_said import span_peaks, span_total_source
from jtop_roof.analysis.processes import ProcessStats, ProcessTally
from jtop_roof.model.records import INPUT_RAILS, PowerReading, ProcessReading, auto_phase_name, power_plan
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
#: Sample times kept to place a power stream's readings among the stretches between samples.
STRETCHES_KEPT = 8


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
    #: How the total was had: "measured" (an input rail or counter read it, tegrastats' VDD_IN where
    #: a stream's input was refused included), "inferred" (a sum of rails, in part at least), None
    #: (nothing measured the input);
    #: ``energy_note`` says why, in one line, where there is something to say.
    energy_total_source: str | None = None
    energy_note: str | None = None
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
            if key == _SAMPLES:
                found.stretch_j = {}
            elif key[1] == POWER:
                found.judged = True
        return found

    def freeze(self, channels: Mapping[tuple[str, str], Channel], *, is_open: bool) -> SpanStats:
        coverage = dict(self.coverage)
        samples = coverage.get(_SAMPLES)
        if samples is not None:  # where the samples read no input rail (see Coverage.as_read)
            samples = coverage[_SAMPLES] = samples.as_read(channels[_SAMPLES])
        verdicts = {key: cov.verdict(channels[key], samples) for key, cov in coverage.items()}
        judged = sorted(((channels[key], cov, verdicts[key].why) for key, cov in coverage.items()),
                        key=lambda item: item[0].rank)
        verdict_of = {id(cov): verdicts[key] for key, cov in coverage.items()}
        covered = [item for item in judged if item[1].start is not None]
        totalled = [(channel, cov) for channel, cov, why in covered
                    if verdict_of[id(cov)].total_j is not None and why is None]
        rails_j: dict[str, float] = {}
        measured: list[str] = []  # what gave the rails their energy, finest first
        for channel, cov, why in covered:  # each rail from the finest stream that measured it, unrefused
            distrusted = why is not None or verdict_of[id(cov)].reasons  # its input, in part at least
            skip = (*cov.refused, *INPUT_RAILS) if distrusted else tuple(cov.refused)
            if cov.unread_note is not None:  # the samples' refused input: its stretches are gaps
                skip = tuple(name for name in skip if name != channel.input_rail)
            taken = {name: joules for name, joules in cov.rails_j.items()
                     if name not in rails_j and name not in skip}
            if taken:
                rails_j.update(taken)
                measured.append(channel.label(cov.source, taken))
        label = period = energy = None
        bounds = Coverage()
        candidates = totalled or [(c, cov) for c, cov, _ in covered if cov.rails_j] \
            or [(c, cov) for c, cov, _ in covered]
        verdict = Verdict(None, None)
        if candidates:  # the bounds: the finest stream of the total, else of a rail
            channel, bounds = candidates[0]
            verdict = verdict_of[id(bounds)]
            if totalled:
                energy = verdict.total_j
                label = channel.label(bounds.source, bounds.rails_j)
            elif measured:  # no total: every stream that measured a rail (NVML's and RAPL's counters)
                label = " + ".join(measured)
            period = channel.period_s if label is not None else None
        total_source, note = span_total_source(totalled[0] if totalled else None, judged,
                                           verdict, samples, channels[_SAMPLES])
        peak, rail_peak = span_peaks(judged)
        start_mono = self.start_mono if self.start_mono is not None else bounds.start
        return SpanStats(
            name=self.name,
            first_mono=bounds.start,
            last_mono=bounds.end,
            first_wall=bounds.start_wall,
            last_wall=bounds.end_wall,
            start_mono=start_mono,
            samples=self.samples,
            gaps=bounds.gaps + verdict.unmeasured,
            energy_j=energy,
            rails_j=rails_j,
            peak_mw=peak,
            rail_peak_mw=rail_peak,
            is_open=is_open,
            mean_gpu_mhz=self.gpu_mhz_sum / self.gpu_mhz_n if self.gpu_mhz_n else None,
            mean_emc_mhz=self.emc_mhz_sum / self.emc_mhz_n if self.emc_mhz_n else None,
            iterations=self.iterations,
            flops=self.flops,
            bytes=self.bytes,
            precision=self.precision,
            energy_source=label,
            power_period_s=period,
            energy_total_source=total_source,
            energy_note=note,
            processes=self.processes.summary(),
            gap_s=bounds.gap_s + verdict.unmeasured_s,
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
        self._samples_input: str | None = None  # the samples' input rail, once one came
        self._restarting = False  # the main source restarts: its resume gap is the samples' alone
        #: Samples taken, and the times of the last few: stretch ``i`` lies from sample ``i`` on.
        self._samples_taken = 0
        self._sample_times: deque[float] = deque(maxlen=STRETCHES_KEPT)
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
        values, refused, why = judge(finite(rails_mw), None)
        if refused:  # the total again, without them (None where it was the input rail's)
            total = None if why is not None else point(t_mono, t_wall, values).total
        plan = power_plan(tuple(values)) if values else None
        reading = Point(t_mono, t_wall, values, total, None if plan is None or total is None else plan.source)
        # the rails as given: ``values`` where none was dropped (the same names in the same order)
        given = plan if len(values) == len(rails_mw) else power_plan(tuple(rails_mw)) if rails_mw else None
        inputs = given is not None and not given.summed  # ``has_input(rails_mw)``
        if given is not None and inputs:  # it reads an input rail: a stretch without one is a gap
            channel.input_rail = given.source  # (Coverage.as_read)
        read = read_input(reading)
        self._take(_SAMPLES, channel, reading)
        self._samples_taken += 1
        self._sample_times.append(t_mono)
        holding = self._holding(t_mono)
        for span in holding:
            span.samples += 1
            covered = span.covered(_SAMPLES)
            covered.peaks(reading, read=read or reading.source is None)
            if refused:
                covered.refuse(refused, why)
            if not read and why is None:
                covered.no_input += 1
            if gpu_mhz is not None:
                span.gpu_mhz_sum += gpu_mhz
                span.gpu_mhz_n += 1
            if emc_mhz is not None:
                span.emc_mhz_sum += emc_mhz
                span.emc_mhz_n += 1
        if inputs:
            self._samples_input = channel.input_rail
            if total is not None and total > 0:
                self._compare(t_mono, total, holding)
        self._settle()

    def _compare(self, t_mono: float, total: float, holding: tuple[_Span, ...]) -> None:
        """The samples' input at ``t_mono`` against every power stream's readings near it: where
        they disagree, the stretches on either side of the sample are the stream's refused ones."""
        sample = self._samples_taken - 1
        for key, channel in self._channels.items():
            if key[1] != POWER or channel.of_samples or not channel.recent:
                continue
            near, ratio = channel.compare(t_mono, total)
            if near:
                if ratio is not None:
                    channel.bad.update((sample - 1, sample))
                for span in holding:
                    span.covered(key).compare(ratio)

    def _settle(self) -> None:
        """Judge the stretches before the one that ended at the last sample: both their samples have
        been compared, and the readings inside them have come (a stretch is judged one sample late,
        so readings that arrive just after the sample that ends it still count in it)."""
        last = self._samples_taken - 3  # stretch i - 2 ended at sample i - 1: i - 2 and before
        times = self._sample_times
        if last < -1 or len(times) < 2:
            return
        judged = [(key, channel) for key, channel in self._channels.items()
                  if key[1] == POWER and not channel.of_samples]
        for span in self._spans_between(times[0], times[-1]):
            samples = span.coverage.get(_SAMPLES)
            stretch_j = {} if samples is None or samples.stretch_j is None else samples.stretch_j
            for key, channel in judged:
                cov = span.coverage.get(key)
                if cov is None or not cov.open:
                    continue
                for stretch in [stretch for stretch in cov.open if stretch <= last]:
                    cov.settle(stretch, stretch in channel.bad, stretch_j.get(stretch))
            for stretch in [stretch for stretch in stretch_j if stretch <= last]:
                del stretch_j[stretch]
        for _, channel in judged:
            if channel.bad:
                channel.bad = {stretch for stretch in channel.bad if stretch > last}

    def _stretch_of(self, t: float) -> int:
        """The stretch (between samples) stream time ``t`` lies in: the last sample at or before it
        (among the last few; before the first sample: -1)."""
        stretch = self._samples_taken - 1
        for time in reversed(self._sample_times):
            if time <= t:
                break
            stretch -= 1
        return stretch

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
            if kind == COUNTER:
                self._take(key, channel, point(t_mono, reading.t_wall, values))
                continue
            kept, refused, why = judge(finite(values), self._samples_input)
            taken = point(t_mono, reading.t_wall, kept)
            stretch = self._stretch_of(t_mono)
            if why is not None:  # refused: the stretches of the steps on either side of it
                taken = taken._replace(total=None)
                channel.bad.update((stretch, channel.stretch))
            elif taken.total is not None and has_input(kept):
                channel.input_rail = power_plan(tuple(kept)).source  # type: ignore[union-attr]
            self._take(key, channel, taken)
            channel.stretch = stretch
            channel.recent.append(taken)
            for span in self._holding(t_mono):
                covered = span.covered(key)
                covered.peaks(taken, stretch)
                if refused or why is not None:
                    covered.refuse(refused, why)

    def add_processes(self, reading: ProcessReading) -> None:
        """A process reading, to the run and the phase holding its time."""
        if reading.t_mono is not None and math.isfinite(reading.t_mono):
            for span in self._holding(reading.t_mono):
                span.processes.add(reading)

    def add_break(self, kind: str = "gap", t_mono: float | None = None) -> None:
        """The stream broke (an event of ``kind``): the next step of every stream is not integrated,
        except where the main source restarted (``source_restart``, then the ``gap`` its samples
        resume with): that breaks its samples only. A power stream read by its own thread goes on
        through the restart, and its own steps say where it broke (one longer than ``max_step_for``
        its period is a gap), however late its last reading before the restart came."""
        samples = self._channels[_SAMPLES]
        samples.broken = True
        if kind == "source_restart":
            self._restarting = True
            return
        restarted, self._restarting = self._restarting and kind == "gap", False
        if not restarted:
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
            # the samples': the sample before (this one is not yet counted); a stream's: its last's
            stretch = self._samples_taken - 1 if key == _SAMPLES else channel.stretch
            step = Step(channel, before, reading, stretch)
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

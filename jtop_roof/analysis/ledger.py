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

import bisect
import math
from collections import deque
from collections.abc import Mapping

from jtop_roof.analysis.energy import (
    COUNTER,
    MAX_RAIL_MW,
    POWER,
    Channel,
    Point,
    Step,
    finite,
    has_input,
    judge,
    point,
    read_input,
)
from jtop_roof.analysis.spans import SAMPLES as _SAMPLES
from jtop_roof.analysis.spans import Span
from jtop_roof.analysis.spans import SpanStats as SpanStats  # where it was: its consumers import it here
from jtop_roof.model.codec import MAX_NAMED
from jtop_roof.model.records import INPUT_RAILS, PowerReading, ProcessReading, auto_phase_name, power_plan
from jtop_roof.model.timeline import gap_step_for

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
#: Sample times kept to place a power stream's readings among the stretches between samples.
STRETCHES_KEPT = 8



def _span_end(span: Span) -> float:
    return span.end


class EnergyLedger:
    """Phases (auto-named, resumable) and energy for the run and every phase; see the module doc."""

    def __init__(self, interval_s: float = 1.0, samples_source: str = "tegrastats") -> None:
        self.max_step_s = gap_step_for(interval_s)
        self._channels: dict[tuple[str, str], Channel] = {
            _SAMPLES: Channel(samples_source, POWER, interval_s, of_samples=True)}
        self._whole = Span("whole run", -math.inf)
        self._open: Span | None = None
        self._open_origin = ""
        self._finished: list[Span] = []
        #: Per finished phase, the index of the latest finished phase up to it that reported work
        #: (-1: none): ``last_worked`` in one search, however many phases reported none.
        self._worked_upto: list[int] = []
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
        gpu_load: float | None = None,
        emc_load: float | None = None,
    ) -> None:
        """One sample, in stream order. Forward only: a sample not later than the last one taken
        (a replay played it again after a seek back) is ignored, so nothing counts twice.

        The usual sample goes a short way: the samples are the only stream, no phase holds it or
        the last few, the step from the last sample is whole and not a gap (no break, not too
        long, a total at both ends) and no value is refused. It is ``any_sample``'s arithmetic in
        its order, without the spans, steps and streams that cannot be there; anything else goes
        that way."""
        channel = self._channels[_SAMPLES]
        before, times, finished = channel.last, self._sample_times, self._finished
        cov = self._whole.coverage.get(_SAMPLES)
        if (before is None or total_mw is None or not rails_mw or cov is None or cov.start is None
                or cov.total_j is None or cov.stretch_j is None or len(self._channels) > 1
                or self._open is not None or len(times) < STRETCHES_KEPT
                or (finished and finished[-1].end >= times[0]) or channel.broken or before.total is None
                or not 0.0 < t_mono - before.t < channel.max_step_s or not math.isfinite(total_mw)):
            self.any_sample(t_mono, t_wall, total_mw, rails_mw, gpu_mhz=gpu_mhz, emc_mhz=emc_mhz,
                            gpu_load=gpu_load, emc_load=emc_load)
            return
        given = rails_mw.values()  # none refused, none dropped (``judge``, ``finite``)
        plan = power_plan(tuple(rails_mw))
        if (plan is None or not math.isfinite(sum(given)) or min(given) < 0.0
                or max(given) > MAX_RAIL_MW):
            self.any_sample(t_mono, t_wall, total_mw, rails_mw, gpu_mhz=gpu_mhz, emc_mhz=emc_mhz,
                            gpu_load=gpu_load, emc_load=emc_load)
            return
        values = dict(rails_mw)
        source, read = plan.source, not plan.summed  # its total is its input rail's, or a sum
        if read:  # it reads an input rail: a stretch without one is a gap (``Coverage.as_read``)
            channel.input_rail = source
        reading = Point(t_mono, t_wall, values, total_mw, source)
        # ``_take``: the step from the last sample, whole inside the run (``Step.add_to``, ``_joules``)
        stretch = self._samples_taken - 1
        seconds = t_mono - before.t
        scale = seconds * 1e-3
        x0 = before.total
        joules = (x0 + (total_mw - x0) * 0.5) * scale
        unread = not (read and before.source in INPUT_RAILS)  # an end read no input rail
        cov.end, cov.end_near = t_mono, reading  # ``Coverage.reach``
        sources, rails_j = cov.sources, cov.rails_j
        if source not in sources and len(sources) < 4:
            sources.append(source)
        if len(rails_j) != len(values):
            for name in values:
                if name not in rails_j and len(rails_j) < MAX_NAMED:
                    rails_j[name] = 0.0
        cov.total_j += joules  # ``Step._add``
        stretch_j = cov.stretch_j
        if not unread or channel.input_rail is None:  # the stretch's fallback (``Step.fallback``)
            stretch_j[stretch] = stretch_j.get(stretch, 0.0) + joules
        if unread:
            cov.unread_j += joules
            cov.unread += 1
            cov.unread_s += seconds
        # each rail's joules, and its peak (``Coverage.peaks``), in one pass
        earlier, peaks, unread_j = before.values, cov.rail_peak_mw, cov.unread_rails_j
        for name, y in values.items():
            x = earlier.get(name)
            if x is not None and (kept := rails_j.get(name)) is not None:
                rail_j = (x + (y - x) * 0.5) * scale
                rails_j[name] = kept + rail_j
                if unread:
                    unread_j[name] = unread_j.get(name, 0.0) + rail_j
            peak = peaks.get(name)
            if peak is None:
                if len(peaks) < MAX_NAMED:
                    peaks[name] = y
            elif y > peak:
                peaks[name] = y
        if not read:  # a sum of rails: a peak apart, a peak only where no input is read
            if cov.sum_peak_mw is None or total_mw > cov.sum_peak_mw:
                cov.sum_peak_mw = total_mw
            cov.no_input += 1
        elif cov.peak_mw is None or total_mw > cov.peak_mw:
            cov.peak_mw = total_mw
        channel.last = reading
        if self._last_mono is None or t_mono > self._last_mono:
            self._last_mono = t_mono
        self._samples_taken += 1
        times.append(t_mono)
        whole = self._whole  # the one span holding it
        whole.samples += 1
        whole.levels(gpu_mhz, emc_mhz, gpu_load, emc_load)
        if read:
            self._samples_input = source
        if len(stretch_j) > 1 or stretch not in stretch_j:  # ``_settle``, no stream to judge: older go
            last = self._samples_taken - 3
            for old in [old for old in stretch_j if old <= last]:
                del stretch_j[old]

    def any_sample(
        self,
        t_mono: float,
        t_wall: float | None,
        total_mw: float | None,
        rails_mw: Mapping[str, float],
        *,
        gpu_mhz: float | None = None,
        emc_mhz: float | None = None,
        gpu_load: float | None = None,
        emc_load: float | None = None,
    ) -> None:
        """``add_sample`` the long way: any sample, whatever the streams, spans and values."""
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
            span.levels(gpu_mhz, emc_mhz, gpu_load, emc_load)
        if inputs:
            self._samples_input = channel.input_rail
            if total is not None and total > 0:
                self._compare(t_mono, total, holding)
        self._settle()

    def _compare(self, t_mono: float, total: float, holding: tuple[Span, ...]) -> None:
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
        self._open = Span(phase_name, edge, start_mono=None if math.isinf(edge) else edge)
        self._open_origin = origin
        return phase_name

    def end_phase(self, t_mono: float | None = None) -> None:
        """End the open phase at ``t_mono`` (None: at the newest reading)."""
        if self._open is not None:
            self._open.end = self._edge(t_mono)
            worked = self._worked_upto[-1] if self._worked_upto else -1
            self._worked_upto.append(len(self._finished) if self._open.iterations else worked)
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

    def last_worked(self, t_mono: float | None = None) -> SpanStats | None:
        """The latest phase that ended by ``t_mono`` (None: the latest that ended) and reported
        work: the phases end in time order, as their edges never run backwards, and a phase's work
        is all in once it ends (work goes to the open phase)."""
        finished = self._finished
        at = len(finished) if t_mono is None else bisect.bisect_right(finished, t_mono, key=_span_end)
        worked = self._worked_upto[at - 1] if at else -1
        return None if worked < 0 else finished[worked].freeze(self._channels, is_open=False)

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

    def _spans_between(self, a: float, b: float) -> list[Span]:
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

    def _holding(self, t: float) -> tuple[Span, ...]:
        """The run and the phase a reading at ``t`` belongs to: the latest whose edges hold it (one
        at an edge is the phase's that was open when it came)."""
        whole = self._whole
        for span in self._spans_between(t, t):
            if span is not whole and span.start <= t <= span.end:
                return whole, span
        return (whole,)

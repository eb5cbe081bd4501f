"""Phases and their energy: what the monitor, headless ``record`` and ``report`` all compute alike.

The ledger takes samples, phase markers and stream breaks in stream order and keeps, for the whole
run and for every phase (finished phases are kept, not forgotten), the first and last sample, the
energy per rail and in total, and the peak power.

Energy is the trapezoid rule over ``t_mono`` of instantaneous readings only (never tegrastats'
running average). A step between two samples counts for a span only when both samples belong to
it, so a phase's energy covers exactly its duration (first sample to last) and ``mean = energy ÷
duration`` holds. Nothing is integrated across a break (a ``gap``, ``source_restart``,
``source_error`` or ``seek`` event) or across a step longer than ``max_step_s``: energy over time
nobody observed is not made up; such a step is counted as a gap of the spans it falls in.

Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from jtop_roof.model.codec import MAX_NAMED
from jtop_roof.model.records import auto_phase_name
from jtop_roof.model.timeline import max_step_for

#: Event kinds that break the stream: no energy is integrated across them.
BREAK_EVENTS = ("gap", "source_restart", "source_error", "seek")
#: Phase starts with this origin continue the phase already open (a new recording of a running
#: phase, or a session appended after a restart), rather than starting a new one.
RESUME_ORIGIN = "resume"
#: A phase started with this origin is ``jroof-tui run``'s, named after its command: it stands only
#: while the command marks nothing. A phase the command (or the user) starts replaces it: the open
#: command phase is dropped, its samples stay in the whole run, and it is not counted in ``phase N``.
COMMAND_ORIGIN = "run"


@dataclass(frozen=True, slots=True)
class SpanStats:
    """One phase, or the whole run. Times are stream seconds (``t_mono``) and unix seconds; a
    span without samples has ``first_mono`` None. Energy in joules, power in milliwatts.
    ``energy_j`` is None when nothing measured total input power (a dGPU host: per rail only)."""

    name: str
    first_mono: float | None
    last_mono: float | None
    first_wall: float | None
    last_wall: float | None
    start_mono: float | None  # the marker that opened the phase (the first sample for the run)
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

    @property
    def duration_s(self) -> float:
        """First sample to last sample (0 for fewer than two samples)."""
        if self.first_mono is None or self.last_mono is None:
            return 0.0
        return self.last_mono - self.first_mono

    @property
    def mean_mw(self) -> float | None:
        """Energy ÷ duration; None without total power or a duration."""
        if self.energy_j is None or self.duration_s <= 0:
            return None
        return self.energy_j / self.duration_s * 1e3

    def rail_mean_mw(self, name: str) -> float | None:
        joules = self.rails_j.get(name)
        if joules is None or self.duration_s <= 0:
            return None
        return joules / self.duration_s * 1e3


@dataclass(slots=True)
class _Span:
    """The running sums of one span; frozen into ``SpanStats`` when asked."""

    name: str
    start_mono: float | None
    first_mono: float | None = None
    last_mono: float | None = None
    first_wall: float | None = None
    last_wall: float | None = None
    samples: int = 0
    gaps: int = 0
    energy_j: float | None = None
    rails_j: dict[str, float] = field(default_factory=dict)
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

    def freeze(self, *, is_open: bool) -> SpanStats:
        return SpanStats(
            name=self.name,
            first_mono=self.first_mono,
            last_mono=self.last_mono,
            first_wall=self.first_wall,
            last_wall=self.last_wall,
            start_mono=self.start_mono,
            samples=self.samples,
            gaps=self.gaps,
            energy_j=self.energy_j,
            rails_j=dict(self.rails_j),
            peak_mw=self.peak_mw,
            rail_peak_mw=dict(self.rail_peak_mw),
            is_open=is_open,
            mean_gpu_mhz=self.gpu_mhz_sum / self.gpu_mhz_n if self.gpu_mhz_n else None,
            mean_emc_mhz=self.emc_mhz_sum / self.emc_mhz_n if self.emc_mhz_n else None,
            iterations=self.iterations,
            flops=self.flops,
            bytes=self.bytes,
            precision=self.precision,
        )


@dataclass(frozen=True, slots=True)
class _Reading:
    t_mono: float
    t_wall: float | None
    total_mw: float | None
    rails_mw: Mapping[str, float]
    gpu_mhz: float | None = None
    emc_mhz: float | None = None


class EnergyLedger:
    """Phases (auto-named, resumable) and energy for the run and every phase; see the module doc."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.max_step_s = max_step_for(interval_s)
        self._whole = _Span("whole run", None)
        self._open: _Span | None = None
        self._open_origin = ""
        self._finished: list[SpanStats] = []
        self._previous: _Reading | None = None  # the last sample, unless a break came after it
        self._broken = False  # a break since the previous sample: the next step is a gap
        self._phases_started = 0

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
        previous = self._previous
        if previous is not None and t_mono <= previous.t_mono:
            return
        spans = [self._whole] if self._open is None else [self._whole, self._open]
        if previous is not None:
            step = t_mono - previous.t_mono
            for span in spans:
                if not span.samples:
                    continue  # the step leads into the span's first sample: not the span's
                if self._broken or step > self.max_step_s:
                    span.gaps += 1
                else:
                    _integrate(span, previous, total_mw, rails_mw, step)
        self._broken = False
        reading = _Reading(t_mono, t_wall, total_mw, dict(rails_mw), gpu_mhz, emc_mhz)
        for span in spans:
            _count(span, reading)
        self._previous = reading

    def add_break(self) -> None:
        """The stream broke (gap, restart, error, seek): the next step is not integrated."""
        self._broken = True

    @property
    def last_mono(self) -> float | None:
        """Stream time of the last sample taken (markers before it come too late for the ledger)."""
        return None if self._previous is None else self._previous.t_mono

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
        """Open a phase (ending the open one); returns its name. ``name`` None: ``phase N``. A
        start with ``origin == "resume"`` and the open phase's name continues that phase."""
        if origin == RESUME_ORIGIN and self._open is not None and (name or "") == self._open.name:
            return self._open.name
        if self._open is not None and self._open_origin == COMMAND_ORIGIN \
                and origin not in (COMMAND_ORIGIN, RESUME_ORIGIN):
            self._open = None  # the command marks its own phases: its catch-all phase gives way
            self._phases_started -= 1
        self.end_phase()
        self._phases_started += 1
        phase_name = name if name else auto_phase_name(self._phases_started)
        self._open = _Span(phase_name, t_mono)
        self._open_origin = origin
        return phase_name

    def end_phase(self) -> None:
        if self._open is not None:
            self._finished.append(self._open.freeze(is_open=False))
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
        return self._whole.freeze(is_open=False)

    @property
    def current(self) -> SpanStats | None:
        return None if self._open is None else self._open.freeze(is_open=True)

    def phases(self) -> list[SpanStats]:
        """Every phase in order, the open one last (marked ``is_open``)."""
        out = list(self._finished)
        if self._open is not None:
            out.append(self._open.freeze(is_open=True))
        return out

    def phase_at(self, t_mono: float) -> SpanStats | None:
        """The phase whose first..last samples hold ``t_mono`` (or the open one from its start)."""
        for phase in reversed(self.phases()):
            start = phase.start_mono if phase.start_mono is not None else phase.first_mono
            if start is None or t_mono < start:
                continue
            if phase.is_open or (phase.last_mono is not None and t_mono <= phase.last_mono):
                return phase
            return None
        return None


def _integrate(
    span: _Span, previous: _Reading, total_mw: float | None, rails_mw: Mapping[str, float], step: float
) -> None:
    if total_mw is not None and previous.total_mw is not None:
        span.energy_j = (span.energy_j or 0.0) + (total_mw + previous.total_mw) * 0.5e-3 * step
    rails_j, before_mw = span.rails_j, previous.rails_mw
    for name, mw in rails_mw.items():
        before = before_mw.get(name)
        joules = rails_j.get(name)  # None for a rail past MAX_NAMED (not counted)
        if before is not None and joules is not None:
            rails_j[name] = joules + (mw + before) * 0.5e-3 * step


def _count(span: _Span, reading: _Reading) -> None:
    t_mono, t_wall, total_mw = reading.t_mono, reading.t_wall, reading.total_mw
    if span.first_mono is None:
        span.first_mono, span.first_wall = t_mono, t_wall
        if span.start_mono is None:
            span.start_mono = t_mono
    span.last_mono, span.last_wall = t_mono, t_wall
    span.samples += 1
    if total_mw is not None:
        peak_mw = span.peak_mw
        if peak_mw is None or total_mw > peak_mw:  # max(peak, total): the same float
            span.peak_mw = total_mw
        if span.energy_j is None:
            span.energy_j = 0.0
    peaks = span.rail_peak_mw  # a rail has a peak exactly when it has joules (set together here)
    for name, mw in reading.rails_mw.items():
        peak = peaks.get(name)
        if peak is None:
            if len(peaks) >= MAX_NAMED:
                continue  # a hostile stream naming new rails every line must not grow the ledger
            peaks[name] = mw
            span.rails_j.setdefault(name, 0.0)
        elif mw > peak:
            peaks[name] = mw
    if reading.gpu_mhz is not None:
        span.gpu_mhz_sum += reading.gpu_mhz
        span.gpu_mhz_n += 1
    if reading.emc_mhz is not None:
        span.emc_mhz_sum += reading.emc_mhz
        span.emc_mhz_n += 1

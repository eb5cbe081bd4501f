"""A span (the whole run, or one phase) of the ledger: its running sums, and what it freezes to.

``Span`` keeps a span's edges and, per power stream (``Coverage``), what was integrated inside
them; ``Span.freeze`` judges the streams against each other and gives the ``SpanStats`` every
consumer reads: the finest stream that measured the total, each rail from the finest stream that
measured it unrefused, and what the total rests on (``analysis.energy_said``). ``analysis.ledger``
feeds the spans.

Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from jtop_roof.analysis.energy import POWER, Channel, Coverage, Verdict
from jtop_roof.analysis.energy_said import span_peaks, span_total_source
from jtop_roof.analysis.processes import ProcessStats, ProcessTally
from jtop_roof.model.records import GPU_BOARD_RAIL, INPUT_RAILS

#: The samples' own rails: the channel every ledger has.
SAMPLES = ("samples", POWER)


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
    #: Mean GPU load and EMC load (% of the bandwidth at the current clock) over the samples that
    #: report them: how busy the run kept each unit (``analysis.prediction`` splits time with them).
    mean_gpu_load_pct: float | None = None
    mean_emc_load_pct: float | None = None
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

    def work_energy(self) -> tuple[float | None, str | None]:
        """(joules, what they measure) charged to the span's work, per iteration and per operation:
        the total input energy, else (a dGPU host: device rails only) the GPU board's, the rail the
        probe's idle power and ε are measured on too; (None, None) where neither was measured."""
        if self.energy_j is not None:
            return self.energy_j, "total input"
        gpu = self.rails_j.get(GPU_BOARD_RAIL)
        return (gpu, f"{GPU_BOARD_RAIL} rail (GPU board power only)") if gpu is not None else (None, None)

    def rail_mean_mw(self, name: str) -> float | None:
        joules = self.rails_j.get(name)
        if joules is None or self.observed_s <= 0:
            return None
        return joules / self.observed_s * 1e3


@dataclass(slots=True)
class Span:
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
    gpu_load_sum: float = 0.0
    gpu_load_n: int = 0
    emc_load_sum: float = 0.0
    emc_load_n: int = 0
    iterations: float | None = None
    flops: float | None = None
    bytes: float | None = None
    precision: str | None = None
    processes: ProcessTally = field(default_factory=ProcessTally)

    def levels(self, gpu_mhz: float | None, emc_mhz: float | None, gpu_load: float | None,
               emc_load: float | None) -> None:
        """One sample's GPU and EMC clocks (MHz) and loads (%), into the span's means (each None
        where the sample has none)."""
        if gpu_mhz is not None:
            self.gpu_mhz_sum += gpu_mhz
            self.gpu_mhz_n += 1
        if emc_mhz is not None:
            self.emc_mhz_sum += emc_mhz
            self.emc_mhz_n += 1
        if gpu_load is not None:
            self.gpu_load_sum += gpu_load
            self.gpu_load_n += 1
        if emc_load is not None:
            self.emc_load_sum += emc_load
            self.emc_load_n += 1

    def covered(self, key: tuple[str, str]) -> Coverage:
        found = self.coverage.get(key)
        if found is None:
            found = self.coverage[key] = Coverage()
            if key == SAMPLES:
                found.stretch_j = {}
            elif key[1] == POWER:
                found.judged = True
        return found

    def freeze(self, channels: Mapping[tuple[str, str], Channel], *, is_open: bool) -> SpanStats:
        coverage = dict(self.coverage)
        samples = coverage.get(SAMPLES)
        if samples is not None:  # where the samples read no input rail (see Coverage.as_read)
            samples = coverage[SAMPLES] = samples.as_read(channels[SAMPLES])
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
                                           verdict, samples, channels[SAMPLES])
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
            mean_gpu_load_pct=self.gpu_load_sum / self.gpu_load_n if self.gpu_load_n else None,
            mean_emc_load_pct=self.emc_load_sum / self.emc_load_n if self.emc_load_n else None,
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

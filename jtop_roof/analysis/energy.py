"""Energy between exact edges: the integral of one power stream over a span's own bounds.

A *channel* is one stream of readings of one kind from one source: tegrastats' (or the host's)
rails in the samples, a ``PowerReading`` stream's rails (instantaneous mW), or its energy counters
(cumulative mJ). A span (the run, a phase) has edges in stream time: a phase's are its markers'
times, never the samples next to them. Each channel integrates every step between two of its
readings over the part of the step inside the span:

* readings (mW): power is taken as linear between readings, so the part of a step inside the span is
  the trapezoid of the power interpolated at the part's ends (the whole step: the plain trapezoid);
* counters (mJ): the energy is the counter's difference, interpolated linearly at the edges.

A step across a break (``broken``), longer than the channel's ``max_step_s`` (a log's samples: at
least ``timeline.gap_step_for``, 3 intervals), or where a counter went
backwards (a reset, a wrap) is not integrated: inside a span it is counted as a gap; across an edge
it moves the span's bound to the first (or last) reading observed inside it. A gap's seconds are
kept (``gap_s``): they are no observed time. ``Coverage`` keeps,
for one channel and one span, the bounds integrated over and the joules: a span's bounds are its
energy channel's, so ``mean = energy ÷ (end - start)`` holds exactly.

A reading is also judged before its power is believed (``judge``): a rail read negative or past
``MAX_RAIL_MW`` is refused (left out of the reading, counted); a reading whose input rail was
refused, or that has none where the samples have one (the sampler could not read VDD_IN: its sum
of the other rails is not the board's input), has no total; and the samples' input rail checks the
power streams' at each sample (``Coverage.compared``/``disagreed``). A power stream's total is
judged stretch by stretch (between two samples, so the same in every span that holds the stretch):
where it disagreed with the sample at either end, or read a refused total inside, that stretch's
total is the samples' (``Coverage.verdict``); refused in every stretch of a span, the span takes
its total from the next stream. So a run's energy is the sum of the phases that tile it. The
samples' own steps with an end that read no input rail (refused, or a sum of the other rails in
its place) are gaps where the stream reads its input elsewhere (``Coverage.as_read``); only a log
that never reads one keeps the sum (inferred). What a span's total rests on is said in
``analysis.energy_said``.

Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from jtop_roof.model.codec import MAX_NAMED
from jtop_roof.model.records import INPUT_RAILS, power_plan
from jtop_roof.model.timeline import gap_step_for, max_step_for

#: A channel's kinds: instantaneous power in mW, or a cumulative energy counter in mJ.
POWER, COUNTER = "power", "counter"
#: The most one rail may read (mW): 2 kW. The largest device in the project's data is an H200 whose
#: board power is capped at 700 W (research/h200_probe/smi.txt, "Max Power Limit: 700.00 W"); the
#: largest Jetson module, AGX Thor, is rated 40-130 W (research/jetson_specs.md). More than 2 kW on
#: one rail is a unit or scale error (µW read as mW, 1000x), not power.
MAX_RAIL_MW = 2_000_000.0
#: A power stream's input rail disagrees with the samples' when it is further than this fraction
#: of the samples' value from it.
INPUT_AGREEMENT = 0.2
#: How far from a sample a power stream's readings are compared with it: two of its periods, at
#: least 0.1 s (the sample's line is stamped when it arrives, a little after tegrastats read the
#: same chip).
COMPARE_PERIODS, COMPARE_MIN_S = 2.0, 0.1
#: Readings kept per power stream for that comparison.
RECENT_READINGS = 256


class Point(NamedTuple):
    """One reading of a channel: its values (mW or mJ) by rail, and their total (``total_power``'s
    rule: the input rail, else the sum of the module rails; None when nothing measures the board)
    and what it came from (``source``: the rail, or ``sum(...)``). A named tuple: one is made for
    every reading, and a frozen dataclass's ``__init__`` costs a microsecond more."""

    t: float
    wall: float | None
    values: Mapping[str, float]
    total: float | None
    source: str | None = None

    def wall_at(self, t: float) -> float | None:
        """The wall time of stream time ``t`` near this reading (both clocks run alike between
        readings)."""
        return None if self.wall is None else self.wall + (t - self.t)


def finite(values: Mapping[str, float]) -> dict[str, float]:
    """The values without the non-finite ones (a NaN would poison every sum after it)."""
    if math.isfinite(sum(values.values())):
        return dict(values)
    return {name: value for name, value in values.items() if math.isfinite(value)}


def point(t: float, wall: float | None, values: Mapping[str, float]) -> Point:
    """A reading with its total (``total_power``'s rule, over its finite values)."""
    kept = finite(values)
    plan = power_plan(tuple(kept)) if kept else None
    if plan is None:
        return Point(t, wall, kept, None)
    readings = list(kept.values())
    return Point(t, wall, kept, math.fsum(readings[place] for place in plan.places), plan.source)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A stream's total over a span as judged (``Coverage.verdict``): ``total_j`` (None: none),
    ``why`` it is refused for the whole span (None: it is not), and where it is refused in part,
    the stretches kept, those whose total is the samples' (``replaced``) and those with nothing to
    fall back to (``unmeasured``, ``unmeasured_s`` seconds: neither integrated nor observed), with
    ``reasons``."""

    total_j: float | None
    why: str | None
    kept: int = 0
    replaced: int = 0
    unmeasured: int = 0
    unmeasured_s: float = 0.0
    reasons: str = ""


@dataclass(slots=True)
class Coverage:
    """What one channel measured of one span: the bounds it integrated over (None before its first
    reading there), the joules in total (None: no total) and by rail, and the gaps inside."""

    start: float | None = None
    end: float | None = None
    start_wall: float | None = None
    total_j: float | None = None
    rails_j: dict[str, float] = field(default_factory=dict)
    gaps: int = 0
    gap_s: float = 0.0  # seconds of the gaps inside: not observed
    end_near: Point | None = None  # the reading next to ``end`` (its wall time is worked out when asked)
    #: What the totals of the readings in the span came from (a rail, ``sum(...)``), first first.
    sources: list[str] = field(default_factory=list)
    #: Readings refused by rail (negative, past ``MAX_RAIL_MW``): those rails are not taken from here.
    refused: dict[str, int] = field(default_factory=dict)
    #: Readings whose total was refused, and why the first was.
    total_refused: int = 0
    refused_why: str | None = None
    #: Samples this stream's input was compared with, those it disagreed with, and the furthest
    #: ratio (stream ÷ samples) among those.
    compared: int = 0
    disagreed: int = 0
    worst_ratio: float | None = None
    #: Peak total (None: none, or refused) and peak by rail, of this stream in the span.
    peak_mw: float | None = None
    rail_peak_mw: dict[str, float] = field(default_factory=dict)
    #: A power stream checked against the samples (``judged``): its total is judged stretch by
    #: stretch (between two samples; see ``Verdict``). ``open``: the stretches not yet judged, each
    #: [joules, seconds, peak mW] of this stream in the span (``total_j`` holds every stretch's
    #: joules but those judged refused); ``kept``: those judged good; ``replaced``: those refused
    #: whose total is the samples' (``fallback_j``); ``unmeasured``: those with no samples' total.
    judged: bool = False
    open: dict[int, list[float]] = field(default_factory=dict)
    kept: int = 0
    replaced: int = 0
    fallback_j: float = 0.0
    unmeasured: int = 0
    unmeasured_s: float = 0.0
    #: The samples' own coverage: their total in each stretch not yet judged by every stream.
    stretch_j: dict[int, float] | None = None
    #: The samples' steps with an end that read no input rail (refused, or a sum of rails stood
    #: in): their count, seconds, joules (total, by rail), the samples without one, and the peak
    #: of the sums. Where the stream reads its input elsewhere they are gaps (``as_read``).
    unread: int = 0
    unread_s: float = 0.0
    unread_j: float = 0.0
    unread_rails_j: dict[str, float] = field(default_factory=dict)
    no_input: int = 0
    sum_peak_mw: float | None = None
    #: Why the view ``as_read`` left stretches out as gaps (None: it left none out).
    unread_note: str | None = None

    @property
    def source(self) -> str | None:
        """What the span's total came from: one rail or sum, or each of them ("VDD_IN or sum(...)")."""
        return " or ".join(self.sources) or None

    @property
    def summed(self) -> bool:
        """Whether some of the span's total is a sum of rails (no rail measured the input there)."""
        return any(source.startswith("sum(") for source in self.sources)

    @property
    def end_wall(self) -> float | None:
        return None if self.end is None or self.end_near is None else self.end_near.wall_at(self.end)

    def reach(self, t: float, near: Point, values: Point) -> None:
        """Extend the bounds to ``t`` (the first call opens them there); ``values`` names the rails
        (and the total) measured, each from 0 J until a step adds to it."""
        if self.start is None:
            self.start, self.start_wall = t, near.wall_at(t)
        self.end, self.end_near = t, near
        if values.total is not None:
            if self.total_j is None:
                self.total_j = 0.0
            source = values.source
            if source is not None and source not in self.sources and len(self.sources) < 4:
                self.sources.append(source)
        rails_j = self.rails_j
        if len(rails_j) != len(values.values):
            for name in values.values:
                if name not in rails_j and len(rails_j) < MAX_NAMED:  # hostile streams stay bounded
                    rails_j[name] = 0.0


    def peaks(self, reading: Point, stretch: int = 0, *, read: bool = True) -> None:
        """Take the reading's total and rails into the peaks (a judged stream's total: into its
        ``stretch``'s, kept where that is judged good; a sample's sum of rails, ``read`` False:
        apart, a peak only where the stream never reads its input)."""
        total = reading.total
        if total is not None and not read:
            if self.sum_peak_mw is None or total > self.sum_peak_mw:
                self.sum_peak_mw = total
        elif total is not None and self.judged:
            bucket = self.bucket(stretch)
            bucket[2] = max(bucket[2], total)
        elif total is not None and (self.peak_mw is None or total > self.peak_mw):
            self.peak_mw = total
        peaks = self.rail_peak_mw
        for name, mw in reading.values.items():
            peak = peaks.get(name)
            if peak is None:
                if len(peaks) < MAX_NAMED:  # a hostile stream naming new rails every line stays bounded
                    peaks[name] = mw
            elif mw > peak:
                peaks[name] = mw

    def refuse(self, rails: list[str], why: str | None) -> None:
        """Count a reading's refused rails and, with ``why``, its refused total."""
        for name in rails:
            if name in self.refused or len(self.refused) < MAX_NAMED:
                self.refused[name] = self.refused.get(name, 0) + 1
        if why is not None:
            self.total_refused += 1
            if self.refused_why is None:
                self.refused_why = why

    def compare(self, ratio: float | None) -> None:
        """One sample compared: ``ratio`` (stream ÷ samples) where they disagreed, else None."""
        self.compared += 1
        if ratio is not None:
            self.disagreed += 1
            if _further(ratio, self.worst_ratio):
                self.worst_ratio = ratio

    def bucket(self, stretch: int) -> list[float]:
        bucket = self.open.get(stretch)
        if bucket is None:
            bucket = self.open[stretch] = [0.0, 0.0, -math.inf]
        return bucket

    def settle(self, stretch: int, bad: bool, fallback_j: float | None) -> None:
        """Judge an open stretch: good, its joules and peak are the stream's; ``bad``, its total is
        the samples' there (``fallback_j``; None: none, its seconds are not measured)."""
        joules, seconds, peak = self.open.pop(stretch)
        if not bad:
            self.kept += 1
            if peak > -math.inf and (self.peak_mw is None or peak > self.peak_mw):
                self.peak_mw = peak
            return
        if self.total_j is not None:
            self.total_j -= joules
        if fallback_j is not None:
            self.replaced += 1
            self.fallback_j += fallback_j
        else:
            self.unmeasured += 1
            self.unmeasured_s += seconds

    def as_read(self, channel: Channel) -> Coverage:
        """The samples' coverage as a span sees it: where the stream reads an input rail somewhere
        (``channel.input_rail``), a step with an end that read none (its input refused, or a sum of
        rails in its place: on an Orin the rails do not add up to the input) is a gap, neither
        integrated nor observed, and said (``unread_note``); elsewhere a sum stands (inferred)."""
        if channel.input_rail is None or not self.unread:
            peak = self.peak_mw if self.sum_peak_mw is None or (
                self.peak_mw is not None and self.peak_mw >= self.sum_peak_mw) else self.sum_peak_mw
            return self if peak == self.peak_mw else replace(self, peak_mw=peak)
        rails_j = {name: joules - self.unread_rails_j.get(name, 0.0) for name, joules in self.rails_j.items()}
        total_j = None if self.total_j is None else self.total_j - self.unread_j
        if self.start is not None and self.end is not None \
                and self.end - self.start - self.gap_s - self.unread_s <= 1e-9:
            total_j = None  # no stretch read the input: nothing measured it here
        said = [f"{self.refused_why} at {self.total_refused}"] if self.total_refused else []
        if self.no_input:
            said.append(f"not read at {self.no_input}")
        count = self.total_refused + self.no_input
        steps = f"{self.unread} stretch{'es' if self.unread > 1 else ''}"
        note = (f"{count} sample{'s' if count != 1 else ''} without {channel.input_rail} "
                f"({', '.join(said)}): {steps} between samples ({self.unread_s:.3g} s) are gaps, not bridged")
        return replace(self, total_j=total_j, rails_j=rails_j, gaps=self.gaps + self.unread,
                       gap_s=self.gap_s + self.unread_s, total_refused=0, refused_why=None,
                       sources=[source for source in self.sources if not source.startswith("sum(")],
                       unread_note=note)

    def reasons(self, channel: Channel) -> str:
        """Why some of this stream's total was refused here: readings refused, and the samples'
        input disagreeing (the count, wherever any disagreement was seen)."""
        said = []
        if self.total_refused:
            plural = "s" if self.total_refused > 1 else ""
            said.append(f"{self.refused_why} at {self.total_refused} reading{plural}")
        if self.disagreed:
            said.append(f"{channel.input_rail or 'its input'} disagrees with the samples' by more than "
                        f"{INPUT_AGREEMENT:.0%} at {self.disagreed} of {self.compared} samples "
                        f"(up to {self.worst_ratio or 0:.3g}x)")
        return "; ".join(said)

    def refusal(self) -> str | None:
        """Why an unjudged stream's (the samples') total is not the span's: a reading refused."""
        if self.total_refused:
            plural = "s" if self.total_refused > 1 else ""
            return f"{self.refused_why} at {self.total_refused} reading{plural}"
        return None

    def verdict(self, channel: Channel, samples: Coverage | None) -> Verdict:
        """This stream's total over the span, judged stretch by stretch: a stretch where the
        stream disagreed with a sample at either end, or read a refused total, takes the samples'
        total there (the stretches still open are judged as they stand). Refused in every stretch
        it read: the stream's total is refused for the span (``why``), and the next stream's taken."""
        if not self.judged:
            return Verdict(self.total_j, self.refusal())
        kept, replaced = self.kept, self.replaced
        unmeasured, unmeasured_s = self.unmeasured, self.unmeasured_s
        good, fallback = self.total_j, self.fallback_j
        stretch_j = {} if samples is None or samples.stretch_j is None else samples.stretch_j
        for stretch, (joules, seconds, _) in self.open.items():
            if stretch not in channel.bad:
                kept += 1
                continue
            good = None if good is None else good - joules
            if (taken := stretch_j.get(stretch)) is not None:
                replaced += 1
                fallback += taken
            else:
                unmeasured += 1
                unmeasured_s += seconds
        refused = replaced + unmeasured
        if refused and not kept:
            return Verdict(None, self.reasons(channel) or "refused")
        if not refused:  # a disagreement seen is said even where no stretch of it here was refused
            return Verdict(good, None, kept=kept, reasons=self.reasons(channel) if self.disagreed else "")
        total = (good or 0.0) + fallback if good is not None or replaced else None
        return Verdict(total, None, kept, replaced, unmeasured, unmeasured_s, self.reasons(channel))


def judge(values: dict[str, float], samples_input: str | None
          ) -> tuple[dict[str, float], list[str], str | None]:
    """(the values kept, the rails refused, why the reading's total is refused or None): a rail read
    negative or past ``MAX_RAIL_MW`` is refused; the total is refused where its input rail was,
    or where the reading has no input rail while the samples have one (``samples_input``)."""
    refused = [name for name, mw in values.items() if not 0.0 <= mw <= MAX_RAIL_MW]
    why = None
    if refused:
        for name in refused:
            if name in INPUT_RAILS:
                why = f"{name} read {'negative' if values[name] < 0 else 'past 2 kW'}"
                break
        values = {name: mw for name, mw in values.items() if name not in refused}
    if why is None and samples_input is not None and not has_input(values):
        why = f"{samples_input} not read by it"
    return values, refused, why


def _further(ratio: float, worst: float | None) -> bool:
    """Whether ``ratio`` is further from 1 (either way) than ``worst``."""
    if worst is None:
        return True
    return abs(math.log(max(ratio, 1e-9))) > abs(math.log(max(worst, 1e-9)))


def read_input(reading: Point) -> bool:
    """Whether a reading's total is its input rail's (not refused, not a sum, not none)."""
    return reading.total is not None and reading.source in INPUT_RAILS


def has_input(values: Mapping[str, float]) -> bool:
    """Whether the readings' total is an input rail's (not a sum, not none)."""
    plan = power_plan(tuple(values)) if values else None
    return plan is not None and not plan.summed


class Channel:
    """One stream of readings (see the module doc): its last reading, and whether a break came
    since. ``name`` is what measured it (``tegrastats``, ``INA3221 hwmon``, ``NVML``)."""

    def __init__(self, name: str, kind: str, period_s: float, *, of_samples: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.period_s = period_s
        self.of_samples = of_samples  # the samples' own rails (tegrastats, the host's NVML)
        # a log's samples: the gap rule (3 intervals); other streams: max_step_for
        self.max_step_s = gap_step_for(period_s) if of_samples else max_step_for(period_s)
        self.last: Point | None = None
        self.broken = False
        #: Recent readings, for comparing with the samples (a power stream's, not the samples').
        self.recent: deque[Point] = deque(maxlen=RECENT_READINGS)
        #: The stream's input rail, and its comparisons with the samples' over the whole stream.
        self.input_rail: str | None = None
        self.compared = self.disagreed = 0
        self.worst_ratio: float | None = None
        #: The stretches (between samples ``i`` and ``i + 1``: stretch ``i``; -1 before the first)
        #: where this stream's total is refused: it disagreed with a sample at either end, or read
        #: a refused total there. Kept until every span has judged them.
        self.bad: set[int] = set()
        self.stretch = -1  # the stretch its last reading lies in

    def compare(self, t: float, samples_mw: float) -> tuple[bool, float | None]:
        """The samples' input ``samples_mw`` at ``t`` against this stream's readings near ``t``:
        (whether any was near, None where they agree, i.e. the sample is within ``INPUT_AGREEMENT``
        of their range, else the ratio stream ÷ samples at the range's near end)."""
        near = max(COMPARE_MIN_S, COMPARE_PERIODS * self.period_s)
        totals = [reading.total for reading in self.recent
                  if reading.total is not None and abs(reading.t - t) <= near]
        if not totals:
            return False, None
        lo, hi = min(totals), max(totals)
        if hi < samples_mw * (1 - INPUT_AGREEMENT):
            ratio = hi / samples_mw
        elif lo > samples_mw * (1 + INPUT_AGREEMENT):
            ratio = lo / samples_mw
        else:
            ratio = None
        self.compared += 1
        if ratio is not None:
            self.disagreed += 1
            if _further(ratio, self.worst_ratio):
                self.worst_ratio = ratio
        return True, ratio

    @property
    def rank(self) -> tuple[int, float]:
        """Lower is finer: an energy counter first, then readings by their period."""
        return (0 if self.kind == COUNTER else 1, self.period_s)

    def label(self, total_source: str | None, rails: Mapping[str, float]) -> str:
        """What measured a span's energy: "NVML energy counter", "INA3221 hwmon, 50 Hz",
        "tegrastats VDD_IN, 1000 ms" (the rail, or the sum, the total came from)."""
        if self.kind == COUNTER:  # "NVML, power averaged over about 1 s": its power is, not its counter
            return f"{self.name.split(',')[0]} energy counter"
        if self.of_samples:  # named by the rail and the interval
            what = total_source or "+".join(sorted(rails)[:3]) + ("+…" if len(rails) > 3 else "")
            return f"{self.name} {what}, {self.period_s * 1000:.0f} ms"
        return f"{self.name}, {1 / self.period_s:.3g} Hz"

    def bad_step(self, before: Point, after: Point) -> bool:
        """Not integrated: across a break, too long, or a counter that went backwards."""
        step = after.t - before.t
        if self.broken or step > self.max_step_s or (step == self.max_step_s and self.of_samples):
            return True
        if self.kind == COUNTER:
            return any(value < before.values.get(name, value) for name, value in after.values.items())
        return False


class Step:
    """One step of a channel, between two of its readings, shared among the spans it overlaps: its
    energy over the whole step is worked out once."""

    __slots__ = ("kind", "before", "after", "bad", "stretch", "unread", "fallback", "_whole")

    def __init__(self, channel: Channel, before: Point, after: Point, stretch: int = -1) -> None:
        self.kind = channel.kind
        self.before, self.after = before, after
        self.bad = channel.bad_step(before, after)
        #: The samples': an end read no input rail (see ``Coverage.as_read``); its total is a
        #: stretch's fallback only while the stream has read no input rail.
        self.unread = channel.of_samples and not (read_input(before) and read_input(after))
        self.fallback = not self.unread or channel.input_rail is None
        self.stretch = stretch  # the stretch between samples its first reading lies in
        self._whole: tuple[float | None, dict[str, float]] | None = None

    def joules(self, lo: float, hi: float) -> tuple[float | None, dict[str, float]]:
        """Joules in total (None without a total at both ends) and by rail (rails read at both
        ends) over ``[lo, hi]`` inside the step."""
        a, b = self.before.t, self.after.t
        if lo == a and hi == b:
            if self._whole is None:
                self._whole = self._joules(0.0, 1.0, b - a)
            return self._whole
        return self._joules((lo - a) / (b - a), (hi - a) / (b - a), hi - lo)

    def _joules(self, u_lo: float, u_hi: float, seconds: float) -> tuple[float | None, dict[str, float]]:
        """Over the fraction ``u_lo``..``u_hi`` of the step (``seconds`` long): a counter's
        difference, or the trapezoid of the power interpolated at both ends."""
        before, after = self.before, self.after
        earlier, x0, y0 = before.values, before.total, after.total
        total = None
        if self.kind == COUNTER:  # (y - x) * share mJ
            scale, mean = (u_hi - u_lo) * 1e-3, 1.0
            if x0 is not None and y0 is not None:
                total = (0.0 * x0 + (y0 - x0) * mean) * scale
            return total, {name: (0.0 * earlier[name] + (y - earlier[name]) * mean) * scale
                           for name, y in after.values.items() if name in earlier}
        # (x + (y - x) * mean) * seconds mJ: the power interpolated at the middle
        scale, mean = seconds * 1e-3, (u_lo + u_hi) * 0.5
        if x0 is not None and y0 is not None:
            total = (x0 + (y0 - x0) * mean) * scale
        return total, {name: (x + (y - x) * mean) * scale
                       for name, y in after.values.items() if (x := earlier.get(name)) is not None}

    def add_to(self, coverage: Coverage, start: float, end: float) -> None:
        """Add the part of the step inside ``[start, end]`` to ``coverage``: the usual step, whole
        inside a span already observed, the short way (what ``add_part`` does with it)."""
        before, after = self.before, self.after
        if start <= before.t and after.t <= end and coverage.start is not None and not self.bad:
            coverage.reach(after.t, after, after)
            self._add(coverage, self._whole or self.joules(before.t, after.t), after.t - before.t)
        else:
            self.add_part(coverage, start, end)

    def add_part(self, coverage: Coverage, start: float, end: float) -> None:
        """``add_to`` for any step: a bad one, one across an edge, a span's first."""
        before, after = self.before, self.after
        lo = start if start > before.t else before.t  # max() and min(), without their calls
        hi = end if end < after.t else after.t
        if hi < lo:
            return
        if self.bad:
            if before.t >= start and after.t <= end:  # inside the span: a gap of it
                coverage.gaps += 1
                coverage.gap_s += after.t - before.t
                coverage.reach(before.t, before, before)
                coverage.reach(after.t, after, after)
            elif after.t <= end:  # it leads into the span: the span is observed from its next reading
                coverage.reach(after.t, after, after)
            return
        if coverage.start is None:
            coverage.reach(lo, before if lo == before.t else after, after)
        near = after if hi == after.t else before
        coverage.reach(hi, near, after if hi > lo else near)  # an empty part measures only its end
        self._add(coverage, self.joules(lo, hi), hi - lo)

    def _add(self, coverage: Coverage, joules: tuple[float | None, dict[str, float]], seconds: float) -> None:
        total, rails = joules
        if seconds <= 0:  # an empty part (a span's edge on a reading): nothing measured
            return
        if coverage.judged:  # also into its stretch, taken out again where that is refused
            bucket = coverage.open.get(self.stretch) or coverage.bucket(self.stretch)
            bucket[1] += seconds
            if total is not None:
                bucket[0] += total
        if total is not None and coverage.total_j is not None:
            coverage.total_j += total
            stretch_j = coverage.stretch_j
            if stretch_j is not None and self.fallback:
                stretch_j[self.stretch] = stretch_j.get(self.stretch, 0.0) + total
            if self.unread:
                coverage.unread_j += total
        rails_j = coverage.rails_j
        unread = coverage.unread_rails_j if self.unread else None
        if unread is not None:
            coverage.unread += 1
            coverage.unread_s += seconds
        for name, rail_j in rails.items():
            kept = rails_j.get(name)
            if kept is not None:
                rails_j[name] = kept + rail_j
                if unread is not None:
                    unread[name] = unread.get(name, 0.0) + rail_j

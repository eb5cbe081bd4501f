"""A replayed file's two ledgers: the whole file's, shown, and what has played since the last seek.

The ledger shown is built once from the whole file (``ReplayLedger`` takes it, or the ``Future``
of its read elsewhere), so seeks move only the display history and never wipe or double a joule.
A marker made while replaying has it read again from the file with the session's markers among
the file's, in a thread of its own (``analysis.rebuild``: the one shown stays until it is done).

Beside it, ``played`` takes the records as they play, from the last seek on, with the session's
markers and work (made here, or trtexec's beside the file) put back among them in stream time as
``pipeline.build_ledger`` places them: so both ledgers share every edge, and an open phase the
file never ends is shown as far as the play head (``at_play_head``), not to the file's end.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import replace

from jtop_roof.analysis.ledger import RESUME_ORIGIN, EnergyLedger, SpanStats
from jtop_roof.analysis.rebuild import LedgerBuilder, LedgerRebuild
from jtop_roof.model.records import Marker, Record, Sample, Work, auto_phase_name

#: Why a phase the replay was sought into shows no energy (``at_play_head``).
SOUGHT_INTO_NOTE = ("the replay was sought into this phase: its energy from its start is not known "
                    "until it is played from there")


class ReplayLedger:
    """The whole file's ledger (its first read, its reads again with the session's markers) and
    the played one (see the module doc). Runs in the pipeline's thread; only the reads are not."""

    def __init__(self, build: LedgerBuilder, ledger: EnergyLedger | Future[EnergyLedger] | None, *,
                 made: Sequence[Marker | Work], played: EnergyLedger,
                 unplayed: Sequence[Marker | Work] = ()) -> None:
        """``ledger``: the whole file's, read already for no session markers, or being read (a
        ``Future``: taken once it is there, waited for at ``finish``), or None: read here with
        ``made`` (the session's markers so far). ``played``: empty, for what plays from now;
        ``unplayed``: session markers it takes as the stream passes them."""
        self._rebuild = LedgerRebuild(build)
        self._pending: Future[EnergyLedger] | None = None
        self._built: EnergyLedger | None = None  # read here, not yet taken by the pipeline
        self.holds = 0  # how many of the session's markers the file's ledger shown holds
        if isinstance(ledger, Future):
            self._pending = ledger
        elif ledger is None:
            self._built, self.holds = build(made), len(made)
        else:
            self._built = ledger
        self.played = played
        self._unplayed = _by_time(unplayed)
        self._sought = False  # a seek: the next record is the first played again (``before``)
        self.rebuild(made)

    # ------------------------------------------------------------------- the whole file's

    def take_ready(self) -> EnergyLedger | None:
        """The newest whole-file ledger whose read has finished and not yet taken: the first
        read, then a read again with the session's markers (it holds all the first one does);
        None when there is nothing new (a read that failed leaves the one shown)."""
        taken, self._built = self._built, None
        if self._pending is not None and self._pending.done():
            taken = self._take_pending() or taken
        rebuilt = self._rebuild.take()
        if rebuilt is not None:
            self.holds, taken = rebuilt
        return taken

    def finish(self) -> EnergyLedger | None:
        """``take_ready`` once every read under way is done (the stream ended)."""
        taken = self._take_pending() if self._pending is not None else None
        self._rebuild.wait()
        return self.take_ready() or taken

    def _take_pending(self) -> EnergyLedger | None:
        pending, self._pending = self._pending, None
        if pending is None:
            return None
        try:
            return pending.result()
        except Exception:  # noqa: BLE001 - e.g. the file vanished: the replay still plays
            return None

    @property
    def still_reading(self) -> bool:
        """True while a read of the whole file for its ledger (the first, or again) is going."""
        return (self._pending is not None and not self._pending.done()) or self._rebuild.pending

    def rebuild(self, made: Sequence[Marker | Work]) -> None:
        """Read the file's ledger again with the session's markers ``made``, off this thread,
        where the one shown does not hold them all."""
        if self.holds < len(made):
            self._rebuild.request(made)

    def next_auto_name(self, ledger: EnergyLedger, made: Sequence[Marker | Work]) -> str:
        """``ledger``'s next phase name, counting the phase starts ``made`` here that it does not
        hold yet (a read again still going)."""
        waiting = sum(1 for marker in made[self.holds:] if isinstance(marker, Marker)
                      and marker.kind == "phase_start" and marker.origin != RESUME_ORIGIN)
        if not waiting:
            return ledger.next_auto_name
        return auto_phase_name(len(ledger.phases()) + 1 + waiting)

    # ---------------------------------------------------------------------------- played

    def seek(self, made: Sequence[Marker | Work], played: EnergyLedger) -> None:
        """The replay jumped: ``played`` (empty) takes what plays from here, and the session's
        markers and work ``made`` again as the stream passes them."""
        self.played = played
        self._unplayed = _by_time(made)
        self._sought = True

    def add_extras(self, extras: Sequence[Marker | Work]) -> None:
        """Markers and work beside the stream (trtexec's), taken as the stream passes them."""
        self._unplayed = _by_time([*self._unplayed, *extras])

    def before(self, record: Record) -> None:
        """``record`` is about to play: the session's markers stamped before it go first, but
        after a seek, none stamped before what plays again (``played`` does not hold the time
        they open or close: a phase opened there is not its own)."""
        unplayed = self._unplayed
        if self._sought and record.t_mono is not None:
            self._sought = False
            while unplayed and (unplayed[0].t_mono or 0.0) < record.t_mono:
                unplayed.pop(0)
        while unplayed and record.t_mono is not None and comes_before(unplayed[0], record):
            apply_extra(self.played, unplayed.pop(0))

    def after_sample(self, t_mono: float) -> None:
        """A sample at ``t_mono`` played: a marker made at its time comes after it."""
        unplayed = self._unplayed
        while unplayed and (unplayed[0].t_mono or 0.0) <= t_mono:
            apply_extra(self.played, unplayed.pop(0))

    def at_play_head(self, span: SpanStats, head: float | None) -> SpanStats:
        """An open phase of the file's ledger (it runs to the file's end) as far as the play
        ``head``: what played of it since its start; where the last seek landed after its start,
        its edges to the head, its energy, clocks and work None and ``energy_note`` saying why,
        its gaps those of what played. Anything else as it is."""
        if not span.is_open or head is None:
            return span
        now = self.played.current
        if now is not None and now.start_mono == span.start_mono:
            return replace(now, name=span.name)
        played = self.played.whole
        last = head if span.last_mono is None else min(span.last_mono, head)
        return replace(
            span, last_mono=last, last_wall=played.last_wall if played.last_mono == last else None,
            samples=0, gaps=played.gaps, gap_s=played.gap_s, energy_j=None, rails_j={}, peak_mw=None,
            rail_peak_mw={}, mean_gpu_mhz=None, mean_emc_mhz=None, iterations=None, flops=None,
            bytes=None, precision=None, energy_source=None, power_period_s=None,
            energy_total_source=None, energy_note=SOUGHT_INTO_NOTE, processes=())


class CountedOnce:
    """What a ledger that takes the stream forward only (live, follow, the looping demo, ``serve``:
    no whole file) counts of a stream's markers and work: each once, though a replay plays them
    again after a seek back."""

    def __init__(self) -> None:
        self.seeked = False  # a replay jumped: the stream may play records the ledger took
        self._markers: set[tuple[object, ...]] = set()  # stream markers the ledger took

    def work(self, work: Work, last: float | None) -> bool:
        """A work report from the stream counts once (not again after a replay's seek back);
        ``last``: the newest time the ledger took."""
        return not self.seeked or last is None or work.t_mono is None or work.t_mono >= last

    def marker(self, marker: Marker, last: float | None) -> bool:
        """A marker from the stream counts once: a replay plays it again after a seek back. (Without
        a seek, one stamped before a reading already taken is the ledger's to place.)"""
        if self.seeked and last is not None and marker.t_mono is not None and marker.t_mono < last:
            return False
        key = (marker.kind, marker.name, marker.t_mono, marker.origin)
        if key in self._markers:
            return False
        self._markers.add(key)
        return True


def _by_time(extras: Sequence[Marker | Work]) -> list[Marker | Work]:
    return sorted((extra for extra in extras if extra.t_mono is not None), key=lambda e: e.t_mono or 0.0)


def comes_before(extra: Marker | Work, record: Record) -> bool:
    """A session's marker or work stamped before ``record`` (one made at a sample's time came
    after it: it was made while the sample was shown)."""
    at, t_mono = extra.t_mono or 0.0, record.t_mono or 0.0
    return at < t_mono or (at == t_mono and not isinstance(record, Sample))


def apply_extra(ledger: EnergyLedger, extra: Marker | Work) -> None:
    """A marker's edge, or a work report, into ``ledger``."""
    if isinstance(extra, Work):
        ledger.add_work(extra.iterations, extra.flops, extra.bytes, extra.precision)
    elif extra.kind == "phase_start":
        ledger.start_phase(extra.name, extra.t_mono, origin=extra.origin)
    elif extra.kind == "phase_end":
        ledger.end_phase(extra.t_mono)

"""What each headline number of a stream rests on: one small typed list, built in one place from
the pipeline's own queries, that the TUI's header, ``/metrics`` and the report all read.

An item says *what* it is (``device``, ``power_mode``, ...), its value, where that value came from
(``source``: ``measured``, ``given``, ``assumed``, ``inferred``, or None where nothing says) and a
short note why. A new sourced number is one more line in ``sourced_items``; the consumers show
whatever the list holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.model.info import ASSUMED, GIVEN, INFERRED, MEASURED, TimeBasis

#: Sources a reader would not guess: the consumers say these beside the value (``measured`` and
#: ``given`` go without saying in a one-line header; ``/metrics`` and the report say them all).
SAID = (INFERRED, ASSUMED)


#: How far a figure can be trusted, best first: one that rests on several takes the worst of them.
TRUST = (MEASURED, GIVEN, INFERRED, ASSUMED)


@dataclass(frozen=True, slots=True)
class Sourced:
    """One number's (or verdict's) value and what it rests on."""

    what: str
    value: str | None
    source: str | None
    note: str = ""


def sourced_items(pipeline: Pipeline) -> tuple[Sourced, ...]:
    """The stream's sourced items, in the order the header shows them."""
    board = pipeline.board
    whole = pipeline.ledger.whole
    return (*_timing_items(pipeline.info.timing),
        Sourced("device", None if board.device is None else board.device.id, board.device_source,
                "; ".join(note for note in (board.problem, board.device_note) if note)),
        Sourced("power_mode", board.mode_name, board.power_mode_source,
                "; ".join(note for note in (board.mode_note, board.power_mode_note) if note)),
        # How far throttles can be told: judged against the mode's caps, so it rests on the mode.
        # (a device without power modes, e.g. an H200, is judged by its own throttle reasons: measured)
        Sourced("throttle_detection", board.throttle_detection,
                board.power_mode_source or (MEASURED if board.throttle_detection == "full" else None),
                board.throttle_detection_note),
        Sourced("energy", whole.energy_source,
                *energy_rests_on(whole.energy_total_source,
                                 whole.energy_note or _no_power(whole.energy_source), pipeline.info.timing)),
    )


def _timing_items(timing: TimeBasis | None) -> tuple[Sourced, ...]:
    """The interval and the stamps' zone of a file (a live stream is timed by this machine's clock
    as its lines arrive: nothing to say)."""
    if timing is None:
        return ()
    interval = Sourced("interval", f"{timing.interval_s * 1000:.4g} ms", timing.interval_source,
                       timing.interval_note or "")
    if timing.stamp_format is None:
        return (interval,)
    return (interval, Sourced("stamps", f"{timing.stamp_format}, zone {timing.zone}", timing.zone_source,
                              timing.stamps_note or ""))


def energy_rests_on(source: str | None, note: str, timing: TimeBasis | None) -> tuple[str | None, str]:
    """(source, note) of a span's energy: what measured its power (the ledger's
    ``energy_total_source``), unless the time between a file's samples was only assumed or
    inferred (a log without stamps): energy is power times time, so it rests on that as well."""
    if source is None or timing is None or timing.interval_source not in (ASSUMED, INFERRED):
        return source, note
    weaker = timing.interval_source if source not in TRUST else max(source, timing.interval_source,
                                                                    key=TRUST.index)
    said = (f"the time between the samples is {timing.interval_source} "
            f"({timing.interval_s * 1000:.4g} ms): the energy scales with it")
    return weaker, "; ".join(part for part in (note, said) if part)


def _no_power(label: str | None) -> str:
    return "" if label is not None else "no power reading in the stream"

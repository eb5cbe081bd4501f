"""What a span's energy rests on, said: its ``energy_total_source`` and ``energy_note``, and its
peaks over the streams it believes (``analysis.energy``'s coverages of it, judged).

Nothing here imports Textual.
"""

from __future__ import annotations

from jtop_roof.analysis.energy import COUNTER, Channel, Coverage, Verdict
from jtop_roof.model.info import INFERRED, MEASURED
from jtop_roof.model.records import INPUT_RAILS


def span_total_source(totalled: tuple[Channel, Coverage] | None,
                  judged: list[tuple[Channel, Coverage, str | None]], verdict: Verdict,
                  samples: Coverage | None, samples_channel: Channel) -> tuple[str | None, str | None]:
    """(``energy_total_source``, ``energy_note``) of a span whose total came from a stream's coverage
    of it (None: no total), given every stream's coverage of it and why its total was refused (None:
    it was not). The total's source is what the readings in the span read, not the stream's last:
    an input rail (a fallback to tegrastats' VDD_IN included) is measured, a sum of rails inferred.
    Stretches of the samples left out as gaps (``Coverage.as_read``) are said where the total (or
    nothing) is theirs."""
    notes = [f"{refused.name}{_possessive(refused.name)} total refused: {why}"
             for refused, _, why in judged if why is not None]
    unread = samples.unread_note if samples is not None else None
    gapped = [f"{samples_channel.name}: {unread}"] if unread is not None and (
        totalled is None or totalled[0] is samples_channel) else []
    counts: dict[str, int] = {}
    for _, cov, _ in judged:
        for name, count in cov.refused.items():
            counts[name] = counts.get(name, 0) + count
    said = [f"{count} {name} reading{'s' if count > 1 else ''} refused (negative or past 2 kW)"
            for name, count in sorted(counts.items())]
    if totalled is None:
        if notes or gapped:
            notes.append("nothing else measured the board's input")
        elif any(cov.start is not None for _, cov, _ in judged):
            notes.append("no rail measures the board's input (device rails only)")
        else:
            notes.append("no power readings")
        return None, "; ".join([*gapped, *notes, *said])
    channel, cov = totalled
    source = cov.source
    if notes:
        notes.append(f"total from {channel.name}{_possessive(channel.name)} {source}")
    elif verdict.reasons:  # refused in part: those stretches' total is the samples'
        refused = verdict.replaced + verdict.unmeasured
        what = samples_channel.name + _possessive(samples_channel.name)
        part = (f"{channel.name}{_possessive(channel.name)} total refused in {refused} of "
                f"{refused + verdict.kept} stretches between samples: {verdict.reasons}")
        if not refused:
            part = f"{channel.name}: {verdict.reasons}; no stretch of it here refused"
        if verdict.replaced:
            part += f"; total there from {what} {samples.source if samples is not None else None}"
        if verdict.unmeasured:
            part += f"; {verdict.unmeasured_s:.1f} s with no sample to fall back to: not observed"
        notes.append(part)
    kind = MEASURED
    if channel.kind != COUNTER and (source is None or cov.summed):
        kind = INFERRED
        if len(cov.sources) > 1:
            notes.append(f"in part a sum of rails ({source}): where no input rail was read")
        else:
            notes.append(f"a sum of rails ({source}): no rail measures the board's input")
    return kind, "; ".join([*gapped, *notes, *said]) or None


def _possessive(name: str) -> str:
    return "'" if name.endswith("s") else "'s"


def span_peaks(judged: list[tuple[Channel, Coverage, str | None]]) -> tuple[float | None, dict[str, float]]:
    """The span's peak total and peak by rail, over the streams whose total (or rail) it believes."""
    peak: float | None = None
    rails: dict[str, float] = {}
    for channel, cov, why in judged:
        if why is None and cov.peak_mw is not None and (peak is None or cov.peak_mw > peak):
            peak = cov.peak_mw
        distrusted = why is not None or cov.replaced or cov.unmeasured or any(
            stretch in channel.bad for stretch in cov.open)
        for name, mw in cov.rail_peak_mw.items():
            if distrusted and name in INPUT_RAILS:
                continue
            if name not in rails or mw > rails[name]:
                rails[name] = mw
    return peak, rails

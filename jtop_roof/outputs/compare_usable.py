"""Whether a compared item's energy per iteration may be compared and ranked, and why not; and
what its figures rest on (the report's own ``*_source`` words, shown as rows of compare's table).

A run whose log covers less than 99% of trtexec's timed window, whose timed window was not placed
on the log or timed 0 queries, that reported no iterations or whose energy nothing measured has no
energy per iteration to compare: ``compare`` shows it as unusable with the reason, and never picks
it as the cheapest. The reasons are the report's own words where it gives them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: Below this coverage of trtexec's timed window a report's energy per inference is not used (a
#: report JSON saved by hand, or by an older version, may still hold one).
from jtop_roof.formats.trtexec_span import MIN_COVERAGE

#: The phase a trtexec run's timed window becomes (``trtexec.TIMED``).
TIMED_PHASE = "timed"
#: Rows of compare's md table that say what each item rests on: (title, ``rests_on`` key).
SOURCE_ROWS = (("interval", "interval"), ("board · mode from", "board_from"),
               ("throttle detection", "throttle_detection"), ("energy total", "energy_total_source"))


def rests_on(report: Mapping[str, Any], span: Mapping[str, Any]) -> dict[str, Any]:
    """What an item's figures rest on, as its report says (JSON keys ``interval_s``,
    ``interval_source``, ``device_source``, ``power_mode_source``, ``throttle_detection``,
    ``energy_total_source``; null where the report does not say, e.g. one saved by an older
    version), and the md cells of ``SOURCE_ROWS`` (``interval``, ``board_from``)."""
    source = as_map(report.get("source"))
    interval = as_number(source.get("interval_s"))
    out = {"interval_s": interval, "interval_source": _word(source.get("interval_source")),
           "device_source": _word(report.get("device_source")),
           "power_mode_source": _word(report.get("power_mode_source")),
           "throttle_detection": _word(report.get("throttle_detection")),
           "energy_total_source": _word(span.get("energy_total_source"))}
    shown = "—" if interval is None else f"{interval * 1000:.0f} ms"
    return {**out, "interval": f"{shown} ({out['interval_source'] or 'not said'})",
            "board_from": f"{out['device_source'] or '—'} · {out['power_mode_source'] or '—'}"}


def _word(value: Any) -> str | None:
    """A short word from a report (a file the user gave: anything else is not said)."""
    return value if isinstance(value, str) and value.isprintable() and len(value) <= 32 else None


def usability(report: Mapping[str, Any], span: Mapping[str, Any],
               workload: Mapping[str, Any]) -> dict[str, Any]:
    """``usable``: whether the item has an energy per iteration to compare and rank; else
    ``unusable_reason``, one line saying why (the report's own words where it gives them)."""
    reason = _unusable(report, span, workload)
    return {"usable": reason is None, "unusable_reason": reason}


def _unusable(report: Mapping[str, Any], span: Mapping[str, Any], workload: Mapping[str, Any]) -> str | None:
    source, trtexec = as_map(report.get("source")), report.get("trtexec")
    if as_text(source.get("trtexec_unread")):
        return f"trtexec's output could not be used: {source['trtexec_unread']}"
    if isinstance(trtexec, dict):
        if span.get("name") != TIMED_PHASE and span is report.get("whole"):
            return "trtexec's run has no timed phase on the log (its window was not placed)"
        if as_text(trtexec.get("unmeasured")):
            return str(trtexec["unmeasured"])
        coverage = as_number(trtexec.get("coverage"))
        if span.get("name") == TIMED_PHASE and coverage is not None and coverage < MIN_COVERAGE:
            return as_text(trtexec.get("coverage_note")) or \
                f"the log covers {coverage:.1%} of trtexec's timed window (below {MIN_COVERAGE:.0%})"
    if not workload:
        return ("no iterations reported in this span (a recording with `mark --work`, or a report JSON "
                "made with `--trtexec`)")
    if as_number(workload.get("j_per_iter")) is None:
        return (as_text(workload.get("j_per_iter_note"))
                or "no energy per iteration (no input energy measured)")
    return None


def usable(item: Mapping[str, Any]) -> bool:
    """Whether an item's energy per iteration may be compared and ranked (``usable`` is true and
    it has one): a run whose log covers too little of its timed window, whose timed window was not
    placed or measured nothing is never the cheapest."""
    return item.get("usable", True) is True and item["j_per_iter"] is not None


def as_map(value: Any) -> Mapping[str, Any]:
    """A report's object, or an empty one (a report JSON is a file the user gave)."""
    return value if isinstance(value, dict) else {}


def as_number(value: Any) -> float | None:
    """A report's finite number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def as_text(value: Any) -> str | None:
    """A report's text, else None."""
    return value if isinstance(value, str) else None

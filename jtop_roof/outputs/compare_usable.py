"""Whether a compared item's energy per iteration may be compared and ranked, and why not.

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




def usability(report: Mapping[str, Any], span: Mapping[str, Any],
               workload: Mapping[str, Any]) -> dict[str, Any]:
    """``usable``: whether the item has an energy per iteration to compare and rank; else
    ``unusable_reason``, one line saying why (the report's own words where it gives them)."""
    reason = _unusable(report, span, workload)
    return {"usable": reason is None, "unusable_reason": reason}


def _unusable(report: Mapping[str, Any], span: Mapping[str, Any], workload: Mapping[str, Any]) -> str | None:
    source, trtexec = _map(report.get("source")), report.get("trtexec")
    if _text(source.get("trtexec_unread")):
        return f"trtexec's output could not be used: {source['trtexec_unread']}"
    if isinstance(trtexec, dict):
        if span.get("name") != TIMED_PHASE and span is report.get("whole"):
            return "trtexec's run has no timed phase on the log (its window was not placed)"
        if _text(trtexec.get("unmeasured")):
            return str(trtexec["unmeasured"])
        coverage = _num(trtexec.get("coverage"))
        if span.get("name") == TIMED_PHASE and coverage is not None and coverage < MIN_COVERAGE:
            return _text(trtexec.get("coverage_note")) or \
                f"the log covers {coverage:.1%} of trtexec's timed window (below {MIN_COVERAGE:.0%})"
    if not workload:
        return ("no iterations reported in this span (a recording with `mark --work`, or a report JSON "
                "made with `--trtexec`)")
    if _num(workload.get("j_per_iter")) is None:
        return _text(workload.get("j_per_iter_note")) or "no energy per iteration (no input energy measured)"
    return None


def usable(item: Mapping[str, Any]) -> bool:
    """Whether an item's energy per iteration may be compared and ranked (``usable`` is true and
    it has one): a run whose log covers too little of its timed window, whose timed window was not
    placed or measured nothing is never the cheapest."""
    return item.get("usable", True) is True and item["j_per_iter"] is not None




def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None

"""What a saved report says about one run, for predicting the board's other power modes.

``run_facts`` reads a report (``report --format json``) into ``RunFacts``: the span that carries the
workload (trtexec's ``timed`` phase when there is one), its throughput, power per rail, clocks, loads
and trtexec's per-query GPU and enqueue times. Nothing is recomputed: every figure is the report's.
A mapping that is no report, or a report with no workload anywhere, raises ``PredictInputError``
(one line); a workload without a throughput is kept, and the prediction then says why it can't.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from jtop_roof.model.bounds import MAX_MONO_S, MAX_NAME_CHARS
from jtop_roof.model.errors import UserError

#: The phase whose figures a trtexec run's report counts (its build and warm-up do not).
TIMED = "timed"


class PredictInputError(UserError):
    """A file that is no report, or a report with no workload; the message is one line."""


@dataclass(frozen=True, slots=True)
class RunFacts:
    """One run's figures as its report gives them; None where the report has none."""

    device: str | None
    power_mode: str | None
    span: str
    iterations: float | None
    throughput_per_s: float | None
    #: The report's energy per iteration of the span (measured), the truth a prediction is checked on.
    j_per_iter: float | None
    #: Mean total input power (W) and mean power per rail (W) over the span.
    power_w: float | None
    rails_w: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    gpu_mhz: float | None = None
    emc_mhz: float | None = None
    sms: int | None = None
    bandwidth_bytes_per_s: float | None = None
    gpu_load_pct: float | None = None
    emc_load_pct: float | None = None
    #: DRAM bytes per second the workload itself reported (its roofline point), where it did.
    achieved_bytes_per_s: float | None = None
    #: trtexec's mean GPU compute time and host enqueue time of one query (s).
    gpu_compute_s: float | None = None
    enqueue_s: float | None = None
    throttled_s: float | None = None
    #: What ran, where the report says (trtexec's model and precision): runs of different
    #: workloads are never checked against each other.
    workload: str | None = None


#: The widest a figure of a real report can be (a broken or hand-edited one is refused past them).
MAX_MHZ = 100_000.0
MAX_SMS = 10_000.0
MAX_WATTS = 1e6
MAX_JOULES = 1e9
MAX_SECONDS = 1e4  # one query's GPU or enqueue time
MAX_COUNT = 1e18  # iterations, iterations/s, bytes/s


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _span(report: Mapping[str, Any], phase: str | None) -> Mapping[str, Any] | None:
    """The span with the workload: the phase named ``phase`` when given, else the ``timed`` phase,
    else the phase or whole run with a throughput (most iterations first), else any with a workload."""
    phases = [p for p in report.get("phases") or [] if isinstance(p, Mapping)]
    spans = [*phases, _map(report.get("whole"))]
    if phase is not None:
        spans = [s for s in phases if s.get("name") == phase][:1]
    worked = [s for s in spans if isinstance(s.get("workload"), Mapping)]
    timed = [s for s in worked if s.get("name") == TIMED]
    if timed:
        return timed[0]
    paced = [s for s in worked if _num(s["workload"].get("throughput_per_s"))]
    if paced:
        return max(paced, key=lambda s: _num(s["workload"].get("iterations")) or 0.0)
    return worked[0] if worked else None


def run_facts(report: Any, where: str, phase: str | None = None) -> RunFacts:
    """The run's figures (of ``phase`` where given); ``where`` names the file in the one-line error."""
    if not isinstance(report, Mapping) or not isinstance(report.get("whole"), Mapping) \
            or not isinstance(report.get("phases"), list):
        raise PredictInputError(f"{where}: not a report JSON (save one with `report --format json`)")
    span = _span(report, phase)
    if span is None:
        raise PredictInputError(f"{where}: the report has no workload (make it with --trtexec, a hook "
                                "or --workload): nothing to predict from")
    work, power, ceilings = _map(span.get("workload")), _map(span.get("power_w")), _map(span.get("ceilings"))
    loads, roofline = _map(span.get("loads")), _map(span.get("roofline"))
    trtexec = _map(report.get("trtexec"))
    timed = trtexec if span.get("name") == TIMED else {}  # its per-query times are the timed phase's

    def figure(holder: Mapping[str, Any], key: str, high: float, *, low: float = 0.0) -> float | None:
        """A figure the report gives, None where it gives none; one outside [low, high] (a negative
        time, a clock of 1e300 MHz, text) is a broken report, refused rather than predicted from."""
        value = holder.get(key)
        if value is None:
            return None
        number = _num(value)
        if number is None or not low <= number <= high:
            raise PredictInputError(f"{where}: {key} is {str(value)[:40]!r}, "
                                    f"not a number in [{low:g}, {high:g}]")
        return number

    rails = {str(name)[:MAX_NAME_CHARS]: w for name, r in _map(power.get("rails")).items()
             if (w := figure(_map(r), "mean", MAX_WATTS)) is not None}
    sms = figure(ceilings, "sms", MAX_SMS, low=1.0)
    return RunFacts(
        device=_text(report.get("device")),
        power_mode=_text(report.get("power_mode")),
        span=_text(span.get("name")) or "whole run",
        iterations=figure(work, "iterations", MAX_COUNT),
        throughput_per_s=figure(work, "throughput_per_s", MAX_COUNT),
        j_per_iter=figure(work, "j_per_iter", MAX_JOULES),
        power_w=figure(power, "mean", MAX_WATTS),
        rails_w=MappingProxyType(rails),
        gpu_mhz=figure(ceilings, "gpu_mhz", MAX_MHZ),
        emc_mhz=figure(ceilings, "emc_mhz", MAX_MHZ),
        sms=None if sms is None else int(sms),
        bandwidth_bytes_per_s=figure(ceilings, "bandwidth_bytes_per_s", MAX_COUNT),
        gpu_load_pct=figure(loads, "gpu_pct", 100.0),
        emc_load_pct=figure(loads, "emc_pct", 100.0),
        achieved_bytes_per_s=figure(roofline, "achieved_bytes_per_s", MAX_COUNT),
        gpu_compute_s=figure(timed, "gpu_compute_mean_s", MAX_SECONDS),
        enqueue_s=figure(timed, "enqueue_mean_s", MAX_SECONDS),
        throttled_s=figure(span, "throttled_s", MAX_MONO_S),
        workload=(None if not trtexec.get("model") else f"{trtexec.get('model')} {trtexec.get('precision')}"),
    )

"""``jroof-tui compare A B [C ...]``: runs side by side, with deltas, verdicts and the cheapest mode.

An item is a recording or a plain tegrastats log (its whole run), ``FILE#PHASE`` (that phase), or a
JSON file saved by ``jroof-tui report --format json`` (so a log reported with ``--trtexec`` can be
compared). Recordings and logs go through ``report.build_report`` (the one pipeline): nothing here
integrates energy or finds phases itself. An item's figures are those of the phase named after
``#`` when one is given, else of its ``timed`` phase (a trtexec run's timed window) when it has one,
else of its whole run. Clocks are the span's mean GPU and EMC clocks (``ceilings.gpu_mhz`` and
``emc_mhz`` of the report: null where the device is unknown).

JSON (``--format json``), stable keys:

* ``items``: one object per item, in the order given: ``label``, ``file``, ``span`` (the span's
  name), ``device``, ``power_mode``, ``duration_s``, ``samples``, ``gaps``, ``energy_j`` (total input
  energy, null where nothing measures it), ``power_w`` (mean), ``power_peak_w``, ``gpu_mhz``,
  ``emc_mhz``, ``throttled_s``, ``throttle_events``, ``thermal_events``, ``iterations``,
  ``throughput_per_s``, ``j_per_iter``, ``j_per_iter_above_idle``, ``roofline`` (the verdict, or
  null), ``note`` (why another span than asked was used, or null), ``foreign_processes`` (``name
  (cpu %)`` of each process not the benchmark's at or above 5 % of a core in the span: flagged, as
  its figures may be another program's too), ``usable`` (whether its energy per iteration may be
  compared and ranked) and ``unusable_reason`` (why not, one line: the log covers too little of
  trtexec's timed window, the window was not placed or timed 0 queries, no iterations, no energy;
  null when usable; its ``j_per_iter`` is then null). Unknown values are null.
* ``verdicts``: strings, one plain sentence each (the first item is the baseline). What bounds the
  work is only ever the items' ``roofline`` verdicts, as their rows show them: a summary line names
  the verdict they share, or each one, or says it is unknown.
* ``cheapest``: ``{label, power_mode, j_per_iter, throughput_per_s}`` of the lowest ``j_per_iter``
  among the usable items whose ``throughput_per_s`` is at least ``min_throughput_per_s`` (all usable
  items when it is null), or null when none qualifies; its verdict line names the unusable items
  left out and why.
* ``min_throughput_per_s``: what ``--min-throughput`` asked (or null).

Nothing here imports Textual.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Any

from jtop_roof.analysis.verdict import BOUND_VERDICTS, IMPOSSIBLE
from jtop_roof.formats.logfile import ReadStats, RecordingError, open_regular, read_header
from jtop_roof.formats.nosamples import require_samples
from jtop_roof.model.codec import encodable_tree
from jtop_roof.model.errors import UserError
from jtop_roof.model.metrics import FOREIGN_PROCESS_PCT
from jtop_roof.outputs.compare_bound import with_clock_basis
from jtop_roof.outputs.compare_usable import (
    SOURCE_ROWS,
    TIMED_PHASE,
    as_map,
    as_number,
    as_text,
    rests_on,
    usability,
    usable,
)
from jtop_roof.outputs.report import report_file
from jtop_roof.outputs.text import md_cell, number_text, percent_text
from jtop_roof.runtime.config import Config

FORMATS = ("md", "json")
#: A report JSON larger than this is not one (a report holds one object per phase and event).
MAX_REPORT_BYTES = 64 << 20
#: Digits of the longest integer a report holds (counts of samples and gaps): a longer one is no
#: report's, and would overflow every float it meets.
MAX_REPORT_INT_DIGITS = 18
#: Below this relative difference two figures are "the same" in a verdict.
SAME = 0.02
#: Throughput spread (max ÷ min − 1) under which runs with different clocks are "paced".
PACED_SPREAD = 0.10
#: Clock spread above which runs count as different clocks for the pacing judgement.
CLOCK_SPREAD = 0.15


class CompareError(UserError):
    """An item that cannot be compared (one line: the file and why); exit code 2."""


# ------------------------------------------------------------------------------------ reading


def file_report(
    path: str, *, tz: tzinfo, interval_s: float | None, config: Config | None = None,
    warn: Callable[[str], None] | None = None, tz_given: bool = False,
) -> dict[str, Any]:
    """The report of a recording or a plain tegrastats log, exactly as ``jroof-tui report`` builds
    it (same pipeline; ``session.pipeline_options`` of ``config``, fresh detectors for each file).
    Raises CompareError (one line) for what cannot be read."""
    stats = ReadStats()
    try:
        report = report_file(path, tz=tz, interval_s=interval_s, config=config or Config(), stats=stats,
                             tz_given=tz_given)
    except OSError as exc:
        raise CompareError(f"cannot read {path}: {exc.strerror or exc}") from None
    except RecordingError as exc:
        raise CompareError(f"cannot read {path}: {exc}") from None
    if warn is not None and stats.truncated_tail:
        warn(f"{path}: the last line is cut short (line {stats.last_line}); the rest is used")
    return report


def is_report_json(path: str) -> bool:
    """True when the file's first non-blank character opens a JSON object that is not one of our
    recordings (whose first line is a header object). A plain tegrastats log starts with a stamp."""
    with open_regular(path) as f:
        head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return False
    return read_header(path) is None


def load_report_json(path: str) -> dict[str, Any]:
    """A report saved by ``report --format json``; CompareError when it is not one."""
    try:
        with open_regular(path) as f:
            data = f.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise CompareError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_REPORT_BYTES:
        raise CompareError(f"cannot read {path}: larger than {MAX_REPORT_BYTES >> 20} MiB: not a report")
    try:
        report = json.loads(data.decode("utf-8", "replace"), parse_int=_report_int,
                            parse_float=_report_float, parse_constant=_not_a_number)
    except (ValueError, RecursionError) as exc:
        raise CompareError(f"cannot read {path}: not a report JSON ({str(exc)[:80]})") from None
    check_report(report, path)
    return dict(encodable_tree(report))


def _report_int(digits: str) -> int:
    """An integer a report may hold; ValueError for one of more digits (never a float overflow)."""
    if len(digits.lstrip("-")) > MAX_REPORT_INT_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits")
    return int(digits)


def _report_float(text: str) -> float:
    """A finite number; ValueError for one past a float's range (``1e999``)."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"a number out of range ({text[:20]})")
    return number


def _not_a_number(name: str) -> float:
    """NaN and Infinity are no JSON: ``report`` never writes them."""
    raise ValueError(f"{name} is not JSON")


def check_report(report: Any, where: str) -> None:
    """A report dict has ``whole`` (a span object) and ``phases`` (a list of them)."""
    if not isinstance(report, dict) or not isinstance(report.get("whole"), dict) \
            or not isinstance(report.get("phases"), list):
        raise CompareError(f"cannot read {where}: not a report JSON (no 'whole' and 'phases')")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``FILE#PHASE`` -> (FILE, PHASE); a file whose name holds ``#`` is taken whole."""
    if os.path.exists(spec) or "#" not in spec:
        return spec, None
    path, _, phase = spec.rpartition("#")
    return path, phase


def load_item(spec: str, **options: Any) -> dict[str, Any]:
    """One item (see the module docstring) as its JSON object (``load_item_report``'s options)."""
    return load_item_report(spec, **options)[0]


def load_item_report(
    spec: str, *, tz: tzinfo, interval_s: float | None = None, config: Config | None = None,
    warn: Callable[[str], None] | None = None, label: str | None = None, file: str | None = None,
    tz_given: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One item and the report it was taken from (``compare --predict`` reads both); ``file``: what its
    ``file`` says where that is not the path read (``-``: standard input, read from where it was
    spooled); ``tz_given``: ``tz`` is the user's ``--tz`` (its stamps' zone is then given, not assumed)."""
    path, phase = split_spec(spec)
    if not os.path.isfile(path):
        raise CompareError(f"cannot read {path}: " + ("not a regular file" if os.path.exists(path)
                                                      else "No such file or directory"))
    try:
        as_json = is_report_json(path)
    except OSError as exc:
        raise CompareError(f"cannot read {path}: {exc.strerror or exc}") from None
    if as_json:
        report = load_report_json(path)
    else:
        try:
            require_samples(path, path if file is None else file)
        except OSError as exc:
            raise CompareError(f"cannot read {path}: {exc.strerror or exc}") from None
        report = file_report(path, tz=tz, interval_s=interval_s, config=config, warn=warn, tz_given=tz_given)
    name = label if label is not None else Path(path).stem + ("" if phase is None else f"#{phase}")
    return item_from_report(report, name, phase, file=path if file is None else file), report


def item_from_report(report: Mapping[str, Any], label: str, phase: str | None = None, *,
                     file: str | None = None) -> dict[str, Any]:
    """The figures of one report: its ``phase`` when given (CompareError when it has none of that
    name), else its ``timed`` phase, else its whole run."""
    check_report(report, label)
    phases = [p for p in report["phases"] if isinstance(p, dict)]
    note = None
    if phase is not None:
        chosen = [p for p in phases if p.get("name") == phase]
        if not chosen:
            names = ", ".join(repr(str(p.get("name"))) for p in phases[:10]) or "none"
            raise CompareError(f"{label}: no phase named {phase!r} (phases: {names})")
    else:
        chosen = [p for p in phases if p.get("name") == TIMED_PHASE]
    if len(chosen) > 1:
        note = f"{len(chosen)} phases named {chosen[0].get('name')!r}: the first is used"
    span: Mapping[str, Any] = chosen[0] if chosen else report["whole"]
    energy = as_map(span.get("energy_j"))
    power = as_map(span.get("power_w"))
    ceilings = as_map(span.get("ceilings"))
    workload = as_map(span.get("workload"))
    roofline = as_map(span.get("roofline"))
    events = _span_events(report.get("events"), as_number(span.get("start_s")), as_number(span.get("end_s")))
    source = as_map(report.get("source"))
    item: dict[str, Any] = {
        "label": label,
        "file": file if file is not None else as_text(source.get("file")),
        "span": as_text(span.get("name")),
        "device": as_text(report.get("device")),
        "power_mode": as_text(report.get("power_mode")),
        "duration_s": as_number(span.get("duration_s")),
        "samples": _int(span.get("samples")),
        "gaps": _int(span.get("gaps")),
        "energy_j": as_number(energy.get("total")),
        "power_w": as_number(power.get("mean")),
        "power_peak_w": as_number(power.get("peak")),
        "gpu_mhz": as_number(ceilings.get("gpu_mhz")),
        "emc_mhz": as_number(ceilings.get("emc_mhz")),
        "throttled_s": as_number(span.get("throttled_s")),
        "throttle_events": sum(1 for e in events if e.get("kind") == "throttle"),
        "thermal_events": sum(1 for e in events if e.get("kind") == "throttle"
                              and "thermal" in str(e.get("reason", ""))),
        "iterations": as_number(workload.get("iterations")),
        "throughput_per_s": as_number(workload.get("throughput_per_s")),
        "j_per_iter": as_number(workload.get("j_per_iter")),
        "j_per_iter_above_idle": as_number(workload.get("j_per_iter_above_idle")),
        "roofline": as_text(roofline.get("verdict")),
        "roofline_basis": as_text(roofline.get("verdict_basis")),
        "note": note,
        "foreign_processes": _foreign(span.get("processes")),
        **usability(report, span, workload),
        **rests_on(report, span),
    }
    if not item["usable"]:  # a figure that must not be compared is not shown as one
        item["j_per_iter"] = item["j_per_iter_above_idle"] = None
    return item


def _foreign(processes: Any) -> list[str]:
    """``name (cpu %)`` of each process in the span not the benchmark's, at or above the threshold:
    its figures may be another program's too."""
    found = []
    for process in processes if isinstance(processes, list) else []:
        entry = as_map(process)
        cpu = as_number(entry.get("cpu_percent_mean"))
        if cpu is not None and cpu >= FOREIGN_PROCESS_PCT and entry.get("benchmark") is not True:
            found.append(f"{as_text(entry.get('name')) or '?'} ({percent_text(cpu / 100)})")
    return found


def _span_events(events: Any, start: float | None, end: float | None) -> list[Mapping[str, Any]]:
    """The report's detector events that overlap the span (all of them without span times)."""
    if not isinstance(events, list):
        return []
    out: list[Mapping[str, Any]] = []
    for event in events:
        if not isinstance(event, dict):
            continue
        e_start, e_end = as_number(event.get("start_s")), as_number(event.get("end_s"))
        if start is None or end is None or e_start is None or e_end is None \
                or (e_start <= end and e_end >= start):
            out.append(event)
    return out


def _int(value: Any) -> int | None:
    number = as_number(value)
    return None if number is None else int(number)


# ------------------------------------------------------------------------------------ comparing


def compare(items: Sequence[dict[str, Any]], min_throughput: float | None = None) -> dict[str, Any]:
    """The comparison (see the module docstring) of items made by ``item_from_report``."""
    items = with_clock_basis(_unique_labels(items))
    verdicts: list[str] = []
    if items:
        base = items[0]
        if base["throttle_events"]:
            verdicts.append(f"{base['label']}: {_events_phrase(base)}")
        for item in items[1:]:
            verdicts.append(_verdict(base, item))
    cheapest, line = _cheapest(items, min_throughput)
    if line:
        verdicts.append(line)
    pacing = _pacing(items)
    if pacing:
        verdicts.append(pacing)
    return {"items": items, "verdicts": verdicts, "cheapest": cheapest,
            "min_throughput_per_s": min_throughput}


def _unique_labels(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, int] = {}
    out = []
    for item in items:
        label = item["label"]
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            item = {**item, "label": f"{label} ({seen[label]})"}
        out.append(item)
    return out


def _events_phrase(item: Mapping[str, Any]) -> str:
    n, thermal = item["throttle_events"], item["thermal_events"]
    if thermal == n:
        text = f"{n} thermal throttle event{'s' if n != 1 else ''}"
    else:
        text = f"{n} throttle event{'s' if n != 1 else ''}" + (f" ({thermal} thermal)" if thermal else "")
    if item["throttled_s"]:
        text += f", {_fmt(item['throttled_s'], 1)} s throttled"
    return text


def _rel(a: float | None, b: float | None) -> float | None:
    """(b − a) ÷ a where it means something: a clock, a rate, a power or an energy above 0 against
    one not below 0 (a negative mean, or 0 as the base, has no "% higher"), and the quotient is
    finite (1e300 against 1e-300 is no percentage); else None."""
    if a is None or b is None or not a > 0 or not b >= 0:
        return None
    rel = (b - a) / a
    return rel if math.isfinite(rel) else None


def _delta_phrase(what: str, a: float | None, b: float | None, unit: str, digits: int = 0,
                  more: str = "higher", less: str = "lower") -> str | None:
    if a is None or b is None:
        return None
    numbers = f"({_fmt(b, digits)} vs {_fmt(a, digits)}{unit})"
    rel = _rel(a, b)
    if rel is None:  # the figures alone, where a relative change means nothing
        return None if a == b == 0 else f"{what} {numbers[1:-1]}"
    if abs(rel) < SAME:
        return f"same {what} ({_fmt(b, digits)}{unit})"
    direction = more if rel > 0 else less
    if more == "higher":
        return f"{what} {percent_text(abs(rel))} {direction} {numbers}"
    return f"{percent_text(abs(rel))} {direction} {what} {numbers}"


def _fmt(value: float, digits: int) -> str:
    return number_text(value, digits)


def iteration_word(items: Sequence[Mapping[str, Any]]) -> str:
    """``inference`` for trtexec timed windows (a query is one inference), else ``iteration``."""
    return "inference" if items and all(i.get("span") == TIMED_PHASE for i in items) else "iteration"


def _verdict(base: Mapping[str, Any], item: Mapping[str, Any]) -> str:
    word = iteration_word([base, item])
    parts = [
        _delta_phrase("GPU clock", base["gpu_mhz"], item["gpu_mhz"], " MHz"),
        _delta_phrase("EMC clock", base["emc_mhz"], item["emc_mhz"], " MHz"),
        _delta_phrase("throughput", base["throughput_per_s"], item["throughput_per_s"], "/s", 1),
        _delta_phrase("mean power", base["power_w"], item["power_w"], " W", 2),
    ]
    a_j, b_j = base["j_per_iter"], item["j_per_iter"]
    rel = _rel(a_j, b_j)
    if a_j is not None and b_j is not None:
        numbers = f"({energy_text(b_j)} vs {energy_text(a_j)})"
        if rel is None:
            parts.append(f"energy per {word} {numbers[1:-1]}")
        elif abs(rel) < SAME:
            parts.append(f"same energy per {word} ({energy_text(b_j)})")
        else:
            more = "more" if rel > 0 else "less"
            parts.append(f"{percent_text(abs(rel))} {more} energy per {word} {numbers}")
    else:
        parts.append(_delta_phrase("energy", base["energy_j"], item["energy_j"], " J", 1, "more", "less"))
    for each in (base, item):
        if each.get("usable") is False and each.get("iterations") is not None:
            parts.append(f"{each['label']} has no usable energy per {word} ({_why(each, word)})")
    if item["throttle_events"]:
        parts.append(_events_phrase(item))
    said = [p for p in parts if p]
    if not said:
        return f"{item['label']} vs {base['label']}: nothing to compare (no clocks, power or work in common)"
    return f"{item['label']} vs {base['label']}: " + "; ".join(said)


def energy_text(joules: float) -> str:
    """Energy per iteration for reading: mJ below 1 J."""
    if abs(joules) < 1:
        return f"{joules * 1e3:.2f} mJ"
    return f"{joules:.3g} J"  # 3 significant digits: 1e+300 J at most, never its digits


def _why(item: Mapping[str, Any], word: str) -> str:
    """Why an item has no energy per iteration, by reference: its reason is said once, on its own
    ``unusable`` line (the item's ``unusable_reason``); else, having none, in a word here."""
    return f"see {item['label']}: unusable" if item.get("unusable_reason") else f"no energy per {word}"


def _who(item: Mapping[str, Any]) -> str:
    mode = item.get("power_mode")
    return f"{item['label']} ({mode})" if mode else str(item["label"])


def _cheapest(items: Sequence[Mapping[str, Any]],
              min_throughput: float | None) -> tuple[dict[str, Any] | None, str | None]:
    priced = [i for i in items if usable(i)]
    word = iteration_word(items)
    need = "" if min_throughput is None else f" at {min_throughput:g}/s or more"
    unpriced = [i for i in items if not usable(i)]
    left_out = "; left out as unusable: " + "; ".join(
        f"{_who(i)} ({_why(i, word)})" for i in unpriced) if unpriced else ""
    if not priced:
        if len(items) < 2 and min_throughput is None:
            return None, None
        return None, f"No item has an energy per {word} to compare: " + "; ".join(
            f"{_who(i)} ({_why(i, word)})" for i in unpriced)
    if min_throughput is None:
        fit = priced
    else:
        fit = [i for i in priced
               if i["throughput_per_s"] is not None and i["throughput_per_s"] >= min_throughput]
    slow = [i for i in priced if i not in fit]
    if not fit:
        said = ", ".join(f"{_who(i)} {_fmt(i['throughput_per_s'], 1)}/s" if i["throughput_per_s"] is not None
                         else f"{_who(i)} no throughput" for i in slow)
        return None, f"No item reaches{need}: {said}{left_out}"
    best = min(fit, key=lambda i: i["j_per_iter"])
    others = []
    for item in sorted(fit, key=lambda i: i["j_per_iter"]):
        if item is best:
            continue
        rel = _rel(best["j_per_iter"], item["j_per_iter"])
        tp = "" if item["throughput_per_s"] is None else f" at {_fmt(item['throughput_per_s'], 1)}/s"
        more = "" if rel is None else f" ({percent_text(rel, signed=True)})"
        others.append(f"{_who(item)} {energy_text(item['j_per_iter'])}{tp}{more}")
    for item in slow:
        tp = item["throughput_per_s"]
        others.append(f"{_who(item)} too slow ({_fmt(tp, 1)}/s)" if tp is not None
                      else f"{_who(item)} has no throughput")
    tp = "" if best["throughput_per_s"] is None else f" at {_fmt(best['throughput_per_s'], 1)}/s"
    line = (f"Lowest energy per {word}{need}: {_who(best)}, {energy_text(best['j_per_iter'])}{tp}"
            + ("; " + "; ".join(others) if others else "") + left_out)
    cheapest = {"label": best["label"], "power_mode": best["power_mode"], "j_per_iter": best["j_per_iter"],
                "throughput_per_s": best["throughput_per_s"]}
    return cheapest, line


def _roofline_words(items: Sequence[Mapping[str, Any]]) -> tuple[str | None, str]:
    """What the items' ``roofline`` rows say, for a summary line that must not say otherwise: (the
    verdict every row shares when it is a known one, else None; the rows' verdicts in words)."""
    verdicts = [item["roofline"] or "unknown" for item in items]
    if len(set(verdicts)) > 1:
        return None, "roofline: " + ", ".join(f"{_who(i)} {v}" for i, v in zip(items, verdicts, strict=True))
    if verdicts[0] in BOUND_VERDICTS:
        return verdicts[0], f"roofline: {verdicts[0]} in every item"
    if verdicts[0] == IMPOSSIBLE:
        return None, f"roofline: {IMPOSSIBLE} in every item (above the roof: wrong work figures or ceilings)"
    return None, "roofline verdict unknown (no FLOPs or bytes reported, or no device)"


def _pacing(items: Sequence[Mapping[str, Any]]) -> str | None:
    """Paced or not: does throughput follow the clocks? Then where the fastest run ranks. What
    bounds the work is the rows' roofline verdict (``_roofline_words``), never guessed here."""
    timed = [i for i in items if (i["throughput_per_s"] or 0) > 0 and usable(i)]
    if len({i["power_mode"] for i in timed}) < 2:
        return None  # one mode (or none known): these are different work, not the same work per mode
    word = iteration_word(timed)
    slow = min(timed, key=lambda i: i["throughput_per_s"])
    fast = max(timed, key=lambda i: i["throughput_per_s"])
    spread = fast["throughput_per_s"] / slow["throughput_per_s"] - 1
    clocks = [i["gpu_mhz"] for i in timed if i["gpu_mhz"]]
    clock_spread = max(clocks) / min(clocks) - 1 if len(clocks) == len(timed) else None
    ranked = sorted(timed, key=lambda i: i["j_per_iter"])
    cheapest, dearest = ranked[0], ranked[-1]
    if fast is cheapest:
        rank = f"the fastest, {_who(fast)}, is also the cheapest per {word}"
    elif fast is dearest:
        rank = f"the fastest, {_who(fast)}, is the dearest per {word}"
    else:
        rank = f"the fastest, {_who(fast)}, is neither the cheapest nor the dearest per {word}"
    rel = _rel(cheapest["j_per_iter"], fast["j_per_iter"])
    costs = (f"{energy_text(fast['j_per_iter'])} against {energy_text(cheapest['j_per_iter'])} for "
             f"{_who(cheapest)}" + (f", {percent_text(rel, signed=True)}" if fast is not cheapest
                                    and rel is not None else ""))
    if fast is cheapest:
        second = ranked[1]
        costs = (f"{energy_text(fast['j_per_iter'])} against {energy_text(second['j_per_iter'])} for "
                 f"{_who(second)}")
    bound, roofline = _roofline_words(timed)
    if spread < PACED_SPREAD and (clock_spread is None or clock_spread > CLOCK_SPREAD):
        clock_words = "" if clock_spread is None else (
            f" while the GPU clock goes from {number_text(min(clocks), 0, grouped=False)} to "
            f"{number_text(max(clocks), 0, grouped=False)} MHz")
        return (f"Paced: throughput stays within {percent_text(spread)} "
                f"({_fmt(slow['throughput_per_s'], 1)}–{_fmt(fast['throughput_per_s'], 1)}/s){clock_words}, "
                f"so the work waits on its input (a sensor, a frame rate) and a faster mode only burns more: "
                f"{rank} ({costs}); {roofline}")
    if spread < PACED_SPREAD:
        return (f"Same throughput within {percent_text(spread)} at about the same clocks: {rank} ({costs}); "
                f"{roofline}")
    ratio = fast["throughput_per_s"] / slow["throughput_per_s"]
    follows = (f"throughput follows the mode, {_who(slow)} {_fmt(slow['throughput_per_s'], 1)}/s to "
               f"{_who(fast)} {_fmt(fast['throughput_per_s'], 1)}/s (×{_fmt(ratio, 2)}); {rank} ({costs})")
    if bound is not None:
        return f"{bound.capitalize()}: {follows}"
    return f"{follows[0].upper()}{follows[1:]}; {roofline}"


# ------------------------------------------------------------------------------------ rendering


def to_json(result: Mapping[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


_ROWS: tuple[tuple[str, str, int], ...] = (
    ("duration s", "duration_s", 1),
    ("samples", "samples", 0),
    ("gaps", "gaps", 0),
    ("energy J", "energy_j", 1),
    ("mean W", "power_w", 2),
    ("peak W", "power_peak_w", 2),
    ("GPU MHz (mean)", "gpu_mhz", 0),
    ("EMC MHz (mean)", "emc_mhz", 0),
    ("throttled s", "throttled_s", 1),
    ("throttle events", "throttle_events", 0),
    ("iterations", "iterations", 0),
    ("throughput /s", "throughput_per_s", 1),
    ("mJ per iteration", "j_per_iter", -3),
    ("mJ per iteration above idle", "j_per_iter_above_idle", -3),
)


def to_markdown(result: Mapping[str, Any]) -> str:
    items = result["items"]
    if not items:
        return "No items.\n"
    word = iteration_word(items)
    head = ["", *(md_cell(i["label"]) for i in items[:1])]
    for item in items[1:]:
        head += [md_cell(item["label"]), "Δ"]
    out = ["# jroof compare", "", "| " + " | ".join(head) + " |",
           "|---|" + "---:|" * (len(head) - 1)]

    def row(title: str, cells: list[str]) -> None:
        out.append("| " + " | ".join([title, *cells]) + " |")

    texts = (("device", "device"), ("power mode", "power_mode"), ("span", "span"), *SOURCE_ROWS)
    for title, key in texts:
        cells = []
        for n, item in enumerate(items):
            cells.append(md_cell(item[key] or "—"))
            if n:
                cells.append("")
        row(title, cells)
    for title, key, digits in _ROWS:
        scale = 1e3 if digits < 0 else 1.0
        shown = abs(digits) if digits >= 0 else 2
        cells = []
        base = items[0][key]
        for n, item in enumerate(items):
            value = item[key]
            cells.append("—" if value is None else _fmt(value * scale, shown))
            if n:
                rel = _rel(base, value)
                cells.append("" if rel is None else percent_text(rel, signed=True))
        row(title.replace("iteration", word), cells)
    row("roofline", [c for n, i in enumerate(items)
                     for c in ([md_cell(i["roofline"] or "—")] + ([""] if n else []))])
    row(f"energy per {word} usable", [c for n, i in enumerate(items)
                                      for c in (["yes" if usable(i) else "no"] + ([""] if n else []))])
    out += ["", "Δ: against the first item. Clocks: the span's mean (the report's ceilings).", ""]
    notes = [f"{i['label']}: {i['note']}" for i in items if i["note"]]
    notes += [f"{i['label']}: unusable: {i['unusable_reason']}" for i in items if i.get("unusable_reason")]
    notes += [f"{i['label']}: other processes above {FOREIGN_PROCESS_PCT:g}% of a core ran in its span: "
              + ", ".join(i["foreign_processes"]) for i in items if i.get("foreign_processes")]
    notes += [f"{i['label']}: {i['roofline']}: {b}" for i in items if (b := i.get("roofline_basis"))]
    out += [f"- {md_cell(line)}" for line in [*result["verdicts"], *notes]]
    return "\n".join(out) + "\n"

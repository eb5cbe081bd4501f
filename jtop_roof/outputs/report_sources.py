"""What a report's figures rest on, said in each of its formats.

The list is the pipeline's own (``analysis.assumptions.sourced_items``: the interval and the
stamps' zone, the board, the mode, how far throttles can be told, the energy), the same the TUI's
header and ``/metrics`` show, plus what only a report has: trtexec's coverage of its timed window.
JSON gets it as ``assumptions`` (``what``, ``value``, ``source``, ``note``), md as one block, csv as
columns repeated on each row (a spreadsheet keeps them with the figures).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jtop_roof.analysis.assumptions import Sourced
from jtop_roof.outputs.text import md_cell

#: What each source word means, said once above the md block (docs/report.md: "What each number rests on").
WORDS = ("measured: read off the board, its log or a counter; given: a flag or file you gave; "
         "assumed: a default, not known; inferred: worked out from other data")
#: Report-wide sources a csv row carries beside each span's figures.
CSV_COLUMNS = ("interval_s", "interval_source", "device", "device_source", "power_mode", "power_mode_source",
               "throttle_detection")


def assumptions_json(items: Iterable[Sourced], trtexec: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ``assumptions`` list of the JSON report: each item's ``what``, ``value``, ``source``
    (None where nothing says) and ``note`` (None where there is nothing to say)."""
    out = [{"what": item.what, "value": item.value, "source": item.source, "note": item.note or None}
           for item in items]
    if trtexec is not None:
        coverage = trtexec.get("coverage")
        out.append({"what": "trtexec_coverage",
                    "value": None if coverage is None else f"{coverage:.1%}",
                    "source": trtexec.get("coverage_source"), "note": trtexec.get("coverage_note")})
    return out


def markdown_block(report: dict[str, Any]) -> list[str]:
    """The md report's block: one line per item (text from logs shown literally), the
    spans whose energy says something the whole run's does not, and a clock set back."""
    items = report.get("assumptions") or []
    if not items:
        return []
    out = [f"What these figures rest on ({WORDS}):", ""]
    for item in items:
        value = "unknown" if item["value"] is None else md_cell(str(item["value"]))
        said = ": ".join(part for part in (item["source"], item["note"] and md_cell(item["note"])) if part)
        out.append(f"- {item['what'].replace('_', ' ')}: {value}" + (f" ({said})" if said else ""))
    whole_note = report["whole"].get("energy_note")
    for span in report["phases"]:
        if span.get("energy_note") and span["energy_note"] != whole_note:
            out.append(f"- energy of {md_cell(span['name'])}: {md_cell(span['energy_note'])}")
    backwards = report["source"].get("clock_backwards")
    if backwards:
        out.append(f"- clock: {md_cell(report['source'].get('clock_backwards_note') or str(backwards))}")
    return [*out, ""]


def csv_values(report: dict[str, Any]) -> list[Any]:
    """The values of ``CSV_COLUMNS`` (empty where unknown)."""
    source = report["source"]
    values = [source.get("interval_s"), source.get("interval_source"), report.get("device"),
              report.get("device_source"), report.get("power_mode"), report.get("power_mode_source"),
              report.get("throttle_detection")]
    return ["" if value is None else value for value in values]

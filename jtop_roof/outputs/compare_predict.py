"""``compare --predict``: predicted rows for the board's modes no item ran, and where items ran
several modes, the model's own leave-one-mode-out error (``outputs.predict.lomo``).

Adds two keys to compare's JSON: ``predicted`` (``predict``'s prediction objects, each with
``from``: the label of the item it was predicted from, the first item whose run can be predicted
from) and ``lomo`` (the leave-one-mode-out rows, empty with fewer than two modes run). The
Markdown gets a table of each. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jtop_roof.analysis.prediction import predict
from jtop_roof.analysis.prediction_input import PredictInputError, RunFacts, run_facts
from jtop_roof.outputs.predict import lomo, lomo_markdown, prediction_json
from jtop_roof.outputs.text import md_cell
from jtop_roof.roofline.devices import Device


def item_facts(item: Mapping[str, Any], report: Mapping[str, Any]) -> RunFacts | None:
    """The run of one compare item (its span), or None where its report has no workload."""
    try:
        return run_facts(report, str(item["label"]), None if item.get("span") in (None, "whole run")
                         else str(item["span"]))
    except PredictInputError:
        return None


def add_predictions(result: dict[str, Any], runs: Sequence[tuple[str, RunFacts | None]],
                    devices: Mapping[str, Device]) -> dict[str, Any]:
    """compare's result with ``predicted`` and ``lomo`` added (see the module docstring)."""
    known = [(label, facts) for label, facts in runs if facts is not None]
    ran = {facts.power_mode.upper() for _, facts in known if facts.power_mode}
    predicted: list[dict[str, Any]] = []
    for label, facts in known:
        device = devices.get(facts.device or "")
        if device is None:
            continue
        missing = [m.name for m in device.power_modes if m.name.upper() not in ran]
        got = predict(facts, devices, missing) if missing else None
        if got is None or any(p.reason for p in got.predictions):
            continue
        predicted = [{"from": label, **prediction_json(p)} for p in got.predictions]
        break
    return {**result, "predicted": predicted, "lomo": lomo(known, devices)}


def _cell(value: float | None, scale: float, digits: int) -> str:
    return "—" if value is None else f"{value * scale:.{digits}f}"


def predict_markdown(result: Mapping[str, Any]) -> str:
    """The predicted rows and the leave-one-mode-out table, after compare's own Markdown."""
    out: list[str] = []
    rows = result.get("predicted") or []
    if rows:
        out += ["", f"## Predicted for the modes not run (from {md_cell(rows[0]['from'])}; inferred)", "",
                "| mode | iterations/s | range | mJ/iteration | range |", "|---|---:|---:|---:|---:|"]
        for p in rows:
            rate, joules = p["iters_per_s_range"], p["j_per_iter_range"]
            out.append(f"| {md_cell(p['power_mode'])} | {_cell(p['iters_per_s'], 1, 1)} | "
                       + ("—" if rate is None else f"{rate[0]:.1f}–{rate[1]:.1f}")
                       + f" | {_cell(p['j_per_iter'], 1e3, 2)} | "
                       + ("—" if joules is None else f"{joules[0] * 1e3:.2f}–{joules[1] * 1e3:.2f}") + " |")
        out += [f"- {md_cell(p['power_mode'])}: {md_cell(p['j_per_iter_note'])}" for p in rows
                if p["j_per_iter_note"]]
    out += lomo_markdown(result.get("lomo") or [])
    return "\n".join(out) + "\n" if out else ""

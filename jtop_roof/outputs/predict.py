"""``jroof-tui predict`` and ``compare --predict``: the model's predictions (``analysis.prediction``)
as JSON or Markdown, and the leave-one-mode-out check of several runs of one workload.

JSON of ``predict`` (stable keys): ``device``, ``from_mode``, ``span`` (the report's span used),
``split`` (the run's time per iteration in parts: ``iteration_s``, ``gpu_s``, ``gpu_source``,
``memory_share`` and ``memory_share_range`` (of the GPU time), ``memory_source``, ``host_s``,
``enqueue_s``; null where nothing was predicted), ``note`` (why no mode could be predicted at
all, else null) and ``predictions``: one object per mode with
``power_mode``, ``iters_per_s``, ``iters_per_s_range`` ([lo, hi]), ``j_per_iter``,
``j_per_iter_range``, ``power_w``, ``power_w_range``, ``basis`` (one line: what was scaled and
what was assumed), ``*_source`` (``inferred``: a model's figure, never measured), ``reason`` (why
nothing could be predicted, else null) and ``j_per_iter_note`` (why the energy alone is null).

The leave-one-mode-out rows (``lomo``): for each ordered pair of runs in different modes (of the
same trtexec model and precision, where the reports name them), the
second run's mode predicted from the first run, beside what the second run measured: ``from``,
``to``, ``iters_per_s`` (predicted, measured, error), ``j_per_iter`` (the same), and whether the
measured value lies in the predicted range (``in_range``). Nothing here imports Textual.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from jtop_roof.analysis.prediction import Prediction, Predictions, predict, relative_error
from jtop_roof.analysis.prediction_input import PredictInputError, RunFacts
from jtop_roof.model.info import INFERRED
from jtop_roof.outputs.text import md_cell
from jtop_roof.roofline.devices import Device


def _range(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [value[0], value[1]]


def prediction_json(p: Prediction) -> dict[str, Any]:
    """One mode's prediction as the JSON keys the module docstring lists."""
    said = p.reason is None
    return {
        "power_mode": p.power_mode,
        "j_per_iter": p.j_per_iter, "j_per_iter_range": _range(p.j_per_iter_range),
        "iters_per_s": p.iters_per_s, "iters_per_s_range": _range(p.iters_per_s_range),
        "power_w": p.power_w, "power_w_range": _range(p.power_w_range),
        "basis": p.basis,
        "j_per_iter_source": INFERRED if p.j_per_iter is not None else None,
        "iters_per_s_source": INFERRED if said else None,
        "reason": p.reason,
        "j_per_iter_note": p.j_per_iter_note,
    }


def predictions_json(result: Predictions, facts: RunFacts) -> dict[str, Any]:
    return {"device": result.device, "from_mode": result.from_mode, "span": facts.span,
            "split": None if result.split is None else result.split.as_json(),
            "predictions": [prediction_json(p) for p in result.predictions], "note": result.note}


def to_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _mj(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e3:.2f}"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _span(values: list[float] | tuple[float, float] | None, show: Any) -> str:
    return "—" if values is None else f"{show(values[0])}–{show(values[1])}"


def to_markdown(data: Mapping[str, Any]) -> str:
    mode = "an unknown mode" if data["from_mode"] is None else md_cell(str(data["from_mode"]))
    out = [f"# jroof predict: {md_cell(str(data['device']))} from {mode}", "",
           "| mode | iterations/s | range | mJ/iteration | range | W |", "|---|---:|---:|---:|---:|---:|"]
    notes = []
    for p in data["predictions"]:
        out.append(f"| {md_cell(p['power_mode'])} | {_rate(p['iters_per_s'])} | "
                   f"{_span(p['iters_per_s_range'], _rate)} | {_mj(p['j_per_iter'])} | "
                   f"{_span(p['j_per_iter_range'], _mj)} | "
                   f"{'—' if p['power_w'] is None else format(p['power_w'], '.2f')} |")
        why = p["reason"] or p["j_per_iter_note"]
        if why:
            notes.append(f"- {md_cell(p['power_mode'])}: can't predict"
                         f"{'' if p['reason'] else ' J/iteration'}: {md_cell(why)}")
        elif p["basis"]:
            notes.append(f"- {md_cell(p['power_mode'])}: {md_cell(p['basis'])}")
    if data.get("note"):
        notes.append(f"- {md_cell(data['note'])}")
    out += ["", "Predicted (inferred), never measured: the ranges span every corner of what the "
            "model does not know.", *notes]
    return "\n".join(out) + "\n"


def lomo(runs: Sequence[tuple[str, RunFacts]], devices: Mapping[str, Device]) -> list[dict[str, Any]]:
    """Leave one mode out: each run's mode predicted from each other run of the same workload (as
    far as the reports tell) in another mode."""
    rows = []
    for name_a, a in runs:
        for name_b, b in runs:
            if (a is b or a.power_mode is None or b.power_mode is None or a.power_mode == b.power_mode
                    or a.workload != b.workload):
                continue
            try:
                got = predict(a, devices, [b.power_mode]).predictions[0]
            except PredictInputError:  # the other run's mode is not on this run's device
                continue
            rows.append({
                "from": name_a, "to": name_b, "from_mode": a.power_mode, "to_mode": b.power_mode,
                "iters_per_s": _pair(got.iters_per_s, b.throughput_per_s, got.iters_per_s_range),
                "j_per_iter": _pair(got.j_per_iter, b.j_per_iter, got.j_per_iter_range),
                "reason": got.reason or got.j_per_iter_note,
            })
    return rows


def _pair(predicted: float | None, measured: float | None,
          bounds: tuple[float, float] | None) -> dict[str, Any]:
    inside = None if measured is None or bounds is None else bounds[0] <= measured <= bounds[1]
    return {"predicted": predicted, "measured": measured, "error": relative_error(predicted, measured),
            "range": _range(bounds), "in_range": inside}


def lomo_markdown(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The leave-one-mode-out table (empty without rows)."""
    if not rows:
        return []
    out = ["", "## Leave one mode out (each run's mode predicted from each other run)", "",
           "| from | to | iterations/s predicted | measured | error | in range | mJ/iteration predicted "
           "| measured | error | in range |", "|---|---|---:|---:|---:|---|---:|---:|---:|---|"]
    for r in rows:
        cells = [md_cell(r["from_mode"]), md_cell(r["to_mode"])]
        for key, show in (("iters_per_s", _rate), ("j_per_iter", _mj)):
            pair = r[key]
            err = pair["error"]
            cells += [show(pair["predicted"]), show(pair["measured"]),
                      "—" if err is None else f"{err:+.1%}",
                      "—" if pair["in_range"] is None else ("yes" if pair["in_range"] else "no")]
        out.append("| " + " | ".join(cells) + " |")
    return out

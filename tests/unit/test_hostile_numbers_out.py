"""Numbers from hostile or broken inputs are printed bounded and only where they mean something:
compare writes no 300-digit figure, no ``inf%``, and no "% higher" against a negative or zero base;
work done faster than every roof allows is ``impossible``, said with why, never a percentage of
the roof in the trillions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from jtop_roof.analysis.ledger import SpanStats
from jtop_roof.analysis.verdict import place
from jtop_roof.model.info import SourceInfo
from jtop_roof.outputs import compare as cmp
from jtop_roof.roofline.board import resolve_board
from jtop_roof.roofline.devices import load_devices

#: A run of digits longer than any figure a reader can take in (a 1e15 number has 16).
LONG_DIGITS = re.compile(r"\d[\d,]{20,}")


def item(label: str, *, power_w: float, throughput: float, gpu_mhz: float,
         j_per_iter: float) -> dict[str, Any]:
    """The fields ``compare`` reads, from a report JSON as a user may hand one over."""
    span = {"name": "timed", "duration_s": 10.0, "samples": 100, "gaps": 0,
            "energy_j": {"total": power_w * 10.0}, "power_w": {"mean": power_w},
            "ceilings": {"gpu_mhz": gpu_mhz, "emc_mhz": 3199.0}, "throttled_s": 0.0,
            "workload": {"iterations": throughput * 10.0, "throughput_per_s": throughput,
                         "j_per_iter": j_per_iter}, "roofline": {"verdict": "compute-bound"}}
    report = {"device": "orin-nano-8gb-super", "power_mode": label, "events": [], "whole": span,
              "phases": [span]}
    return cmp.item_from_report(report, label)


def printed(result: dict[str, Any]) -> str:
    return "\n".join(result["verdicts"]) + "\n" + cmp.to_markdown(result)


@pytest.mark.parametrize(("base", "other"), [
    ({"power_w": 5.0, "throughput": 1e-300, "gpu_mhz": 600.0, "j_per_iter": 0.02},
     {"power_w": 5.0, "throughput": 1e300, "gpu_mhz": 600.0, "j_per_iter": 0.02}),
    ({"power_w": 1e-320, "throughput": 10.0, "gpu_mhz": 1e-310, "j_per_iter": 1e-320},
     {"power_w": 1e300, "throughput": 10.0, "gpu_mhz": 1e300, "j_per_iter": 1e300}),
], ids=["huge-ratio", "overflowing-ratio"])
def test_compare_bounds_every_number_and_percentage(base, other):
    text = printed(cmp.compare([item("a", **base), item("b", **other)]))
    assert LONG_DIGITS.search(text) is None, text
    assert "inf" not in text.lower().replace("inference", ""), text


def test_a_relative_change_is_said_only_against_a_positive_base():
    """A negative mean power (a broken sensor) has no "100% higher": the figures alone are said."""
    result = cmp.compare([item("a", power_w=-5.0, throughput=10.0, gpu_mhz=600.0, j_per_iter=0.5),
                          item("b", power_w=0.0, throughput=10.0, gpu_mhz=600.0, j_per_iter=0.5)])
    (line,) = [v for v in result["verdicts"] if v.startswith("b vs a")]
    assert "mean power 0.00 vs -5.00 W" in line and "higher" not in line and "lower" not in line
    row = next(r for r in cmp.to_markdown(result).splitlines() if r.startswith("| mean W"))
    assert "%" not in row


def span(flops: float, bytes_: float) -> SpanStats:
    return SpanStats("gemm", 1.0, 2.0, None, None, 1.0, 16, 0, None, {}, None, {}, False,
                     mean_gpu_mhz=1700.0, mean_emc_mhz=3201.0, iterations=3, flops=flops, bytes=bytes_,
                     precision="bf16")


H200 = resolve_board(SourceInfo("replay"), load_devices(), device_id="h200")


@pytest.mark.parametrize(("flops", "bytes_"), [(1e20, 1e15), (1e12, 1e17), (6.5e23, 1e10)],
                         ids=["compute", "memory", "far-above"])
def test_work_above_every_roof_is_impossible_not_a_percentage(flops, bytes_):
    placement = place(span(flops, bytes_), H200)
    assert placement.verdict == "impossible"
    assert placement.efficiency_current is None and placement.efficiency_max is None
    assert placement.note is not None and placement.note.startswith("above the roof")


def test_work_under_the_roof_keeps_its_verdict_and_efficiency():
    placement = place(span(1e14, 1e11), H200)  # 100 TFLOP/s at intensity 1000: under an H200's roof
    assert placement.verdict == "compute-bound"
    assert placement.efficiency_current is not None and 0 < placement.efficiency_current <= 1

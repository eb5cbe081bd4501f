"""What bounds each compared item: its report's roofline verdict, unless a pair of the items shows
it slowing with the GPU clock while the memory clock holds (``analysis.clock_pairs``); then it is
not memory-bound. Each item's ``roofline_basis`` (JSON) says what its ``roofline`` rests on, one
line: its report's ``verdict_basis``, or the pair's clocks. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jtop_roof.analysis.clock_pairs import RunClocks, gpu_clock_bound
from jtop_roof.outputs.compare_usable import usable


def _run(item: Mapping[str, Any]) -> RunClocks:
    mode = item.get("power_mode")
    who = f"{item['label']} ({mode})" if mode else str(item["label"])
    return RunClocks(who, item.get("device"), item.get("throughput_per_s") if usable(item) else None,
                     item.get("gpu_mhz"), item.get("emc_mhz"))


def with_clock_basis(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items, those a pair shows clock-bound by the GPU no longer called memory-bound."""
    bound = gpu_clock_bound([_run(item) for item in items])
    out = []
    for index, item in enumerate(items):
        if index in bound and item.get("roofline") == "memory-bound":
            item = {**item, "roofline": "compute-bound", "roofline_basis": bound[index]}
        out.append(item)
    return out

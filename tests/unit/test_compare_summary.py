"""``compare``'s summary lines say what bounds the work only as its rows' roofline verdicts do:
on the shared benchlab tegrastats + trtexec pairs (with and without a workload spec), on plain
logs with no work, and on items whose rows disagree."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from paths import REPO

from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.outputs import compare as cmp
from jtop_roof.outputs.report import report_file
from jtop_roof.roofline.workload import load_workload
from jtop_roof.runtime.config import Config

ROOT = REPO
SHARED = ROOT.parent / "shared"
WORKLOAD = ROOT / "examples" / "resnet50_int8.yaml"
MODES = {"maxn": "MAXN_SUPER", "15w": "15W", "7w": "7W"}
UTC = timezone.utc
BOUND = re.compile(r"\b(compute|memory|clock)-bound", re.IGNORECASE)


def benchlab(mode: str) -> tuple[Path, Path]:
    name = f"orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_{mode}_run3.log"
    return SHARED / "tegrastats" / "logs" / name, SHARED / "trtexec" / name


needs_shared = pytest.mark.skipif(not all(p.is_file() for m in MODES for p in benchlab(m)),
                                  reason="../shared benchlab runs not beside the repo")


def summary_agrees_with_rows(result: Mapping[str, Any]) -> None:
    """Every "X-bound" a summary line says is a verdict of a row it compares."""
    rows = {item["roofline"] for item in result["items"]}
    for line in result["verdicts"]:
        said = {m.group(0).lower() for m in BOUND.finditer(line)}
        assert said <= rows, (line, rows)


def item(label: str, mode: str, throughput: float, j_per_iter: float, gpu_mhz: float,
         roofline: str | None) -> dict[str, Any]:
    """The fields ``compare`` reads, as ``item_from_report`` gives them (a timed phase)."""
    watts = j_per_iter * throughput
    span = {"name": "timed", "duration_s": 10.0, "samples": 100, "gaps": 0,
            "energy_j": {"total": watts * 10.0}, "power_w": {"mean": watts},
            "ceilings": {"gpu_mhz": gpu_mhz, "emc_mhz": 3199.0}, "throttled_s": 0.0,
            "workload": {"iterations": throughput * 10.0, "throughput_per_s": throughput,
                         "j_per_iter": j_per_iter},
            "roofline": None if roofline is None else {"verdict": roofline}}
    report = {"device": "orin-nano-8gb-super", "power_mode": mode, "events": [], "whole": span,
              "phases": [span]}
    return cmp.item_from_report(report, label)


def three_modes(verdicts: Sequence[str | None], throughputs: Sequence[float] = (850.0, 550.0, 270.0)
                ) -> dict[str, Any]:
    labels = [("maxn", "MAXN_SUPER", 1003.0), ("15w", "15W", 611.0), ("7w", "7W", 407.0)]
    rows = zip(labels, throughputs, verdicts, strict=True)
    items = [item(label, mode, tp, 0.02 + 0.002 * n, mhz, verdict)
             for n, ((label, mode, mhz), tp, verdict) in enumerate(rows)]
    return cmp.compare(items)


@pytest.mark.parametrize("verdict", ["memory-bound", "compute-bound", "clock-bound"])
def test_throughput_following_the_mode_is_named_by_the_rows_shared_verdict(verdict):
    result = three_modes([verdict] * 3)
    (line,) = [v for v in result["verdicts"] if "throughput follows the mode" in v]
    # rows at one EMC clock whose throughput falls with the GPU clock are not memory-bound
    # (``compare_bound``): they are named compute-bound, rows and summary alike
    shown = "compute-bound" if verdict == "memory-bound" else verdict
    assert line.startswith(f"{shown.capitalize()}: throughput follows the mode, 7w (7W) 270.0/s")
    summary_agrees_with_rows(result)


def test_rows_that_disagree_or_say_unknown_are_named_not_summed_up():
    mixed = three_modes(["clock-bound", "compute-bound", "unknown"])
    (line,) = [v for v in mixed["verdicts"] if "follows the mode" in v]
    assert line.startswith("Throughput follows the mode")
    assert line.endswith("roofline: maxn (MAXN_SUPER) clock-bound, 15w (15W) compute-bound, 7w (7W) unknown")
    summary_agrees_with_rows(mixed)
    unknown = three_modes(["unknown", None, "unknown"])
    (line,) = [v for v in unknown["verdicts"] if "follows the mode" in v]
    assert line.endswith("roofline verdict unknown (no FLOPs or bytes reported, or no device)")
    summary_agrees_with_rows(unknown)


def test_a_paced_run_never_says_it_is_not_what_its_rows_say():
    result = three_modes(["compute-bound"] * 3, throughputs=(30.0, 30.2, 29.9))
    (line,) = [v for v in result["verdicts"] if v.startswith("Paced")]
    assert line.startswith("Paced: throughput stays within 1% (29.9–30.2/s) while the GPU clock goes "
                           "from 407 to 1003 MHz") and line.endswith("roofline: compute-bound in every item")
    summary_agrees_with_rows(result)


@pytest.fixture(scope="module")
def benchlab_reports(tmp_path_factory) -> dict[tuple[str, bool], Path]:
    """Each shared benchlab log reported with its trtexec log (as `report --trtexec`), with and
    without the ResNet-50 INT8 workload spec, saved as report JSON."""
    if not all(p.is_file() for m in MODES for p in benchlab(m)):
        pytest.skip("../shared benchlab runs not beside the repo")
    tmp = tmp_path_factory.mktemp("benchlab")
    out = {}
    for mode, power_mode in MODES.items():
        log, trt = benchlab(mode)
        for with_workload in (False, True):
            report = report_file(str(log), tz=UTC, interval_s=None,
                                 config=Config(device="orin-nano-8gb-super", power_mode=power_mode),
                                 trtexec=read_trtexec(trt, UTC),
                                 workload=load_workload(WORKLOAD) if with_workload else None)
            path = tmp / f"{mode}{'_w' if with_workload else ''}.json"
            path.write_text(cmp.to_json(report))
            out[mode, with_workload] = path
    return out


@needs_shared
@pytest.mark.parametrize("with_workload", [False, True])
def test_the_benchlab_pairs_summary_follows_their_rows(benchlab_reports, with_workload):
    items = [cmp.load_item(str(benchlab_reports[mode, with_workload]), tz=UTC, label=MODES[mode])
             for mode in MODES]
    result = cmp.compare(items)
    assert all(i["span"] == "timed" and i["throughput_per_s"] for i in items)
    rows = [i["roofline"] for i in items]
    assert all(rows) and (set(rows) == {"unknown"}) == (not with_workload)
    (line,) = [v for v in result["verdicts"] if "hroughput follows the mode" in v]
    summary_agrees_with_rows(result)
    if len(set(rows)) == 1 and rows[0] != "unknown":
        assert line.startswith(f"{rows[0].capitalize()}: throughput follows the mode")
    else:
        assert line.startswith("Throughput follows the mode")
    text = cmp.to_markdown(result)
    assert "| roofline | " + " | ".join(f"{r} | " if n else f"{r}" for n, r in enumerate(rows)) in text


@needs_shared
def test_a_compare_of_plain_logs_without_work_claims_no_bound():
    items = [cmp.load_item(str(benchlab(mode)[0]), tz=UTC, config=Config(device="orin-nano-8gb-super",
                                                                           power_mode=MODES[mode]))
             for mode in MODES]
    result = cmp.compare(items)
    assert [i["roofline"] for i in items] == [None] * 3 and [i["span"] for i in items] == ["whole run"] * 3
    assert not any(BOUND.search(line) or "follows the mode" in line for line in result["verdicts"])
    assert any(line.startswith("No item has an energy per iteration") for line in result["verdicts"])

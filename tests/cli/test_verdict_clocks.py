"""The roofline verdict weighs the clocks and loads, not the intensity alone: a phase whose GPU is
busy while its EMC carries little, or a run that slows with the GPU clock while the memory clock
holds, is not memory-bound; and each verdict says what it rests on (``verdict_basis``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import REPO

from jtop_roof.analysis.clock_pairs import RunClocks, gpu_clock_bound
from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.analysis.verdict import place
from jtop_roof.model.info import SourceInfo
from jtop_roof.outputs.compare import compare, item_from_report, to_markdown
from jtop_roof.roofline.board import resolve_board
from jtop_roof.roofline.devices import load_devices

ROOT = REPO
SHARED = ROOT.parent / "shared"
RUN = "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_{}_run3.log"
MODES = {"maxn": "MAXN_SUPER", "15w": "15W", "7w": "7W"}
HAVE_SHARED = all((SHARED / "tegrastats/logs" / RUN.format(m)).is_file() for m in MODES)
needs_shared = pytest.mark.skipif(not HAVE_SHARED, reason="shared/ reference logs not beside the repo")

ORIN = resolve_board(SourceInfo("replay"), load_devices(), device_id="orin-nano-8gb-super",
                     power_mode="MAXN_SUPER")


def int8_span(gpu_load: float | None, emc_load: float | None):
    """A phase of INT8 work at 162 OP/byte (under the 321 ridge at 1003/3199 MHz), its samples
    carrying the given loads."""
    ledger = EnergyLedger(0.5)
    ledger.start_phase("timed", 0.0)
    for i in range(7):
        ledger.add_sample(0.5 * i, None, 7000.0, {"VDD_IN": 7000.0}, gpu_mhz=1003.0, emc_mhz=3199.0,
                          gpu_load=gpu_load, emc_load=emc_load)
        if i == 1:
            ledger.add_work(100, 100 * 8.2e9, 100 * 8.2e9 / 162, "int8")
    return ledger.phases()[0]


def test_a_busy_gpu_beside_an_idle_emc_is_not_memory_bound() -> None:
    placed = place(int8_span(97.0, 27.0), ORIN)
    assert placed.verdict == "compute-bound"
    assert placed.verdict_basis is not None and placed.verdict_basis.startswith("loads: the GPU 97% busy")
    assert "27%" in placed.verdict_basis and "below the ridge" in placed.verdict_basis


def test_a_busy_emc_keeps_the_intensitys_verdict() -> None:
    placed = place(int8_span(97.0, 85.0), ORIN)
    assert placed.verdict == "memory-bound"
    assert placed.verdict_basis is not None and placed.verdict_basis.startswith("intensity 162 OP/byte below")


def test_without_loads_the_intensity_decides_and_says_so() -> None:
    placed = place(int8_span(None, None), ORIN)
    assert placed.verdict == "memory-bound" and "1003 MHz" in (placed.verdict_basis or "")


def test_energy_per_operation_is_the_phases_energy_over_its_operations() -> None:
    span = int8_span(97.0, 27.0)
    placed = place(span, ORIN)
    assert span.energy_j is not None and span.flops
    assert placed.j_per_op == pytest.approx(span.energy_j / span.flops)


def _run(who: str, tp: float, gpu: float, emc: float, device: str = "orin") -> RunClocks:
    return RunClocks(who, device, tp, gpu, emc)


def test_a_pair_that_slows_with_the_gpu_clock_at_the_same_emc_clock() -> None:
    found = gpu_clock_bound([_run("a", 860.0, 1003.0, 3199.0), _run("b", 550.0, 611.0, 3199.0)])
    assert set(found) == {0, 1} and "39% lower GPU clock" in found[1] and "EMC clock holds" in found[1]


@pytest.mark.parametrize("runs", [
    [_run("a", 860.0, 1003.0, 3199.0), _run("b", 850.0, 611.0, 3199.0)],  # throughput holds: paced
    [_run("a", 860.0, 1003.0, 3199.0), _run("b", 400.0, 611.0, 2133.0)],  # the EMC clock moved too
    [_run("a", 860.0, 1003.0, 3199.0), _run("b", 550.0, 611.0, 3199.0, device="other")],
    [_run("a", 860.0, 1003.0, 3199.0), _run("b", 855.0, 990.0, 3199.0)],  # the same GPU clock
])
def test_no_pair_shows_it_where_the_clocks_or_the_board_say_nothing(runs) -> None:
    assert gpu_clock_bound(runs) == {}


def shared_report(mode: str) -> dict:
    log = SHARED / "tegrastats/logs" / RUN.format(mode)
    trt = SHARED / "trtexec" / RUN.format(mode)
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(log), "--trtexec", str(trt),
                          "--workload", str(ROOT / "examples/resnet50_int8.yaml"), "--tz", "UTC",
                          "--device", "orin-nano-8gb-super", "--power-mode", MODES[mode], "--format", "json"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def shared_reports() -> dict[str, dict]:
    return {mode: shared_report(mode) for mode in MODES}


def _timed(report: dict) -> dict:
    return next(p for p in report["phases"] if p["name"] == "timed")["roofline"]


@needs_shared
def test_maxn_and_15w_resnet50_are_not_called_memory_bound(shared_reports) -> None:
    """Their intensity (162 OP/byte from the spec's byte estimate) is under the ridge, but the GPU
    is 97-98% busy while the EMC carries under a third of its bandwidth."""
    for mode in ("maxn", "15w"):
        roof = _timed(shared_reports[mode])
        assert roof["verdict"] == "compute-bound", mode
        assert roof["verdict_basis"].startswith("loads: the GPU 9"), roof["verdict_basis"]
        assert "workload spec's estimate" in roof["verdict_basis"]


@needs_shared
def test_compare_calls_a_pair_that_follows_the_gpu_clock_not_memory_bound(shared_reports) -> None:
    """Reports whose verdict rests on the intensity alone (saved before the loads were weighed, or
    from a log without them) still say memory-bound: compare's pair of MAXN and 15W, one EMC clock
    and throughput falling with the GPU clock, overrules that; 7W (another EMC clock) is left."""
    items = []
    for mode, report in shared_reports.items():
        old = json.loads(json.dumps(report))
        roof = _timed(old)
        roof["verdict"], roof["verdict_basis"] = "memory-bound", None
        items.append(item_from_report(old, mode))
    result = compare(items)
    rows = {item["label"]: item for item in result["items"]}
    for mode in ("maxn", "15w"):
        assert rows[mode]["roofline"] == "compute-bound", mode
        assert rows[mode]["roofline_basis"].startswith("clocks: 15w (15W) is 3"), rows[mode]["roofline_basis"]
    assert rows["7w"]["roofline"] == "memory-bound" and rows["7w"]["roofline_basis"] is None
    # and the reports as made now give compare their own basis
    fresh = compare([item_from_report(r, m) for m, r in shared_reports.items()])
    assert all(item["roofline"] != "memory-bound" for item in fresh["items"][:2])
    assert fresh["items"][0]["roofline_basis"].startswith("loads:")
    # the Markdown says it too, under the table, for each item that has one
    text = to_markdown(result)
    assert f"- maxn: compute-bound: {rows['maxn']['roofline_basis']}" in text
    assert "- 7w: memory-bound:" not in text


@needs_shared
def test_the_markdown_report_says_what_the_verdict_rests_on() -> None:
    log = SHARED / "tegrastats/logs" / RUN.format("15w")
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(log), "--trtexec",
                          str(SHARED / "trtexec" / RUN.format("15w")), "--workload",
                          str(ROOT / "examples/resnet50_int8.yaml"), "--tz", "UTC"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    said = "- timed: compute-bound, loads: the GPU 98% busy while the EMC carries 18% of its bandwidth"
    assert said in out.stdout

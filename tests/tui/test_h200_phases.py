"""The proof on a real NVIDIA H200, kept as fixtures and replayed: a workload that marked
its phases and reported its work through the hook under `jroof-tui run --headless --source host
--interval 100`, the `jroof-tui probe` result of the same machine, and Nsight Compute's export of one
of the GEMMs (`benchmarks/h200_workload.py`, `benchmarks/h200_gemm_once.py`; commands in docs/validation.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import REPO

ROOT = REPO
DATA = ROOT / "tests" / "data"
RUN = DATA / "h200_phases.jsonl"
N = 8192
#: NVIDIA's H200 SXM datasheet: 4.8 TB/s HBM3e; 67 TFLOP/s FP32 and 989 TFLOP/s dense BF16 (the
#: latter assumes about 1830 MHz: 132 SMs x 4096 FLOP per clock; at 1980 MHz it is 1070).
DATASHEET_BANDWIDTH = 4.8e12
DATASHEET_FP32_AT_1980 = 67e12


@pytest.fixture(scope="module")
def report() -> dict:
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(RUN), "--format", "json",
                          "--ncu", str(DATA / "h200_ncu_gemm_bf16.csv"),
                          "--probe", str(DATA / "h200_probe.json")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def phase(report: dict, name: str) -> dict:
    return next(p for p in report["phases"] if p["name"] == name)


def test_the_phases_the_workload_marked(report):
    assert report["device"] == "h200" and report["power_mode"] is None
    assert [p["name"] for p in report["phases"]] == ["idle", "copy", "gemm-bf16", "idle-after"]
    assert all(p["gaps"] == 0 for p in report["phases"])


def test_the_power_cap_throttles_the_gemm_with_its_reason(report):
    (event,) = report["events"]
    assert (event["kind"], event["unit"]) == ("throttle", "gpu")
    assert event["reason"].startswith("NVML: SW power cap")
    gemm = phase(report, "gemm-bf16")
    assert gemm["throttled_s"] > 0.95 * gemm["duration_s"]
    assert phase(report, "copy")["throttled_s"] == 0.0
    assert gemm["power_w"]["rails"]["NVML_GPU"]["peak"] < 701  # at the 700 W cap, never over


def test_copy_is_memory_bound_and_the_gemm_compute_bound_but_clock_held(report):
    copy, gemm = phase(report, "copy"), phase(report, "gemm-bf16")
    assert copy["roofline"]["verdict"] == "memory-bound"
    moved = copy["roofline"]["achieved_bytes_per_s"]
    assert 0.8 * DATASHEET_BANDWIDTH < moved < DATASHEET_BANDWIDTH  # about 4.1 TB/s read + written
    # bytes/s against the bandwidth roof at the phase's mean memory clock: a 6016-bit bus (ncu's own
    # device__attribute_fb_bus_width on this card), two transfers per clock
    roof_bw = copy["ceilings"]["bandwidth_bytes_per_s"]
    assert roof_bw == pytest.approx(6016 / 8 * 2 * copy["ceilings"]["emc_mhz"] * 1e6)
    assert copy["roofline"]["efficiency_current"] == pytest.approx(moved / roof_bw, rel=1e-6)
    roof = gemm["roofline"]
    assert roof["verdict"] == "clock-bound"  # compute-bound, and a GPU throttle overlaps it
    assert roof["intensity_flop_per_byte"] == pytest.approx(2 * N**3 / (3 * N * N * 2))
    flops = gemm["workload"]["iterations"] * 2 * N**3
    assert roof["achieved_flops_per_s"] == pytest.approx(flops / gemm["duration_s"])
    # Against the roof at the phase's mean (capped) clock and at 1980 MHz: the gap is the cap's.
    mean_mhz = gemm["ceilings"]["gpu_mhz"]
    assert 1300 < mean_mhz < 1600
    assert roof["efficiency_max"] == pytest.approx(roof["efficiency_current"] * mean_mhz / 1980, rel=1e-6)


def test_energy_per_gemm_is_the_gpu_rails_own(report):
    gemm = phase(report, "gemm-bf16")
    work = gemm["workload"]
    assert work["energy_measures"].startswith("NVML_GPU")
    assert work["j_per_iter"] == pytest.approx(gemm["energy_j"]["rails"]["NVML_GPU"] / work["iterations"])
    assert 0 < work["j_per_iter_above_idle"] < work["j_per_iter"]


def test_nsight_computes_point_for_one_gemm(report):
    (kernel,) = report["ncu"]
    assert kernel["flops"] == pytest.approx(2 * N**3, rel=0.03)  # tensor ops counted by ncu itself
    assert kernel["intensity_flop_per_byte"] == pytest.approx(kernel["flops"] / kernel["dram_bytes"])
    assert kernel["verdict"] == "compute-bound" and 0.8 < kernel["efficiency_current"] <= 1.0
    assert 1300 < kernel["sm_mhz"] < 1980  # ncu with --clock-control none: the clock it ran at


def test_the_probe_beside_the_datasheet(report):
    probe = report["probe"]
    assert probe["label"].startswith("measured (torch on NVIDIA H200")
    measured, sheet = probe["measured"], probe["datasheet"]
    assert sheet["bandwidth_bytes_per_s"] == pytest.approx(DATASHEET_BANDWIDTH, rel=0.01)
    assert sheet["peak_flops_per_s"]["fp32"] == pytest.approx(DATASHEET_FP32_AT_1980, rel=0.01)
    for name in ("copy", "triad"):
        assert 0.8 * DATASHEET_BANDWIDTH < measured["bandwidth_bytes_per_s"][name] < DATASHEET_BANDWIDTH
    # bf16 ran at the power cap's clock: it reached most of the roof at that clock, not at 1980 MHz
    bf16_mhz = measured["gpu_mhz"]["bf16_tensor"]
    at_clock = sheet["peak_flops_per_s"]["bf16_tensor"] * bf16_mhz / 1980
    assert 0.7 < measured["peak_flops_per_s"]["bf16_tensor"] / at_clock <= 1.0
    assert measured["peak_flops_per_s"]["bf16_tensor"] > phase(report, "gemm-bf16")["roofline"][
        "achieved_flops_per_s"] * 0.95  # the workload reached what the probe says is reachable


def test_the_markdown_report_shows_the_kernels_and_the_measured_roof(report):
    from jtop_roof.model.metrics import fmt_si_unit
    from jtop_roof.outputs.report import to_markdown

    text = to_markdown(report)
    (kernel,) = report["ncu"]
    row = next(line for line in text.splitlines() if line.startswith(f"| {kernel['name']} |"))
    assert fmt_si_unit(kernel["achieved_flops_per_s"], "FLOP/s") in row and "compute-bound" in row
    assert f"{kernel['efficiency_current']:.0%}" in row
    triad = report["probe"]["measured"]["bandwidth_bytes_per_s"]["triad"]
    sheet = report["probe"]["datasheet"]["bandwidth_bytes_per_s"]
    assert f"- bandwidth triad: {fmt_si_unit(triad, 'B/s')} ({triad / sheet:.0%} of the datasheet roof's" \
        in text


async def test_the_monitor_draws_the_measured_roof_beside_the_datasheets(tmp_path):
    from tui_support import make_config, wait_until

    from jtop_roof.sources.replay import ReplaySource
    from jtop_roof.tui.app import JroofApp

    source = ReplaySource(RUN, tz="UTC", hold_at_end=True, speed=64)
    source.pause()
    config = make_config(probe=str(DATA / "h200_probe.json"))
    app = JroofApp(source, config, user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        source.seek(38.0, relative=False)
        await wait_until(pilot, lambda: app.controls.position_s >= 37.9 and len(app.history) > 100,
                         "the GEMM")
        pane = app.query_one("#roofline")

        def at_the_gemms_precision() -> bool:  # the phases come with the whole file's ledger
            app.redraw_now()
            return "BF16 tensor" in str(pane.border_title)

        await wait_until(pilot, at_the_gemms_precision, "the roof at the GEMM's precision", rounds=500)
        text = pane.readout.plain
        assert "measured 666 TFLOP/s  4.36 TB/s" in text  # the probe's bf16 and its best bandwidth
        assert "NVIDIA H200 SXM 141GB" in text and "mode ?" not in text
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "--replay", str(RUN), "--probe", str(bad)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and out.stderr.count("\n") == 1

"""``predict`` and ``compare --predict``: the other power modes from one run, with honest ranges.

The real data: the benchlab ResNet-50 INT8 runs of one Orin Nano 8GB Super at MAXN_SUPER, 15W and
7W in ../shared (skipped when absent), each reported with ``--trtexec`` as a user would. The model's
constants are not fitted to them (docs/validation.md says what was assumed); the bound held here is
what the leave-one-mode-out check gives: at most 2.9 % off in throughput and 7.5 % in energy per
inference, every measured figure inside its predicted range.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from paths import REPO

from jtop_roof.analysis.prediction import predict
from jtop_roof.analysis.prediction_input import PredictInputError, RunFacts, run_facts
from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.roofline.devices import load_devices

ROOT = REPO
SHARED = ROOT.parent / "shared"
MODES = {"maxn": "MAXN_SUPER", "15w": "15W", "7w": "7W"}
DEVICE = "orin-nano-8gb-super"


def benchlab(mode: str) -> tuple[Path, Path]:
    name = f"orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_{mode}_run3.log"
    return SHARED / "tegrastats" / "logs" / name, SHARED / "trtexec" / name


needs_shared = pytest.mark.skipif(not all(p.is_file() for m in MODES for p in benchlab(m)),
                                  reason="../shared benchlab runs not beside the repo")


def jroof(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jtop_roof", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("predict")
    out = {}
    for mode in MODES:
        log, trt = benchlab(mode)
        saved = tmp / f"r50_{mode}.json"
        # the 7W caps are the same on the Orin Nano 8GB and its Super: the board is given
        done = jroof("report", str(log), "--trtexec", str(trt), "--device", DEVICE, "--format", "json",
                     "--out", str(saved))
        assert done.returncode == 0, done.stderr
        out[mode] = saved
    return out


# A MAXN_SUPER-like run, as its report would give it (figures of the shared run, rounded).
RUN = RunFacts(device=DEVICE, power_mode="MAXN_SUPER", span="timed", iterations=2547.0,
               throughput_per_s=847.8, j_per_iter=0.0166, power_w=14.07,
               rails_w={"VDD_IN": 14.07, "VDD_CPU_GPU_CV": 6.86, "VDD_SOC": 3.61}, gpu_mhz=1003.0,
               emc_mhz=3199.0, sms=8, gpu_load_pct=97.0, emc_load_pct=27.0, gpu_compute_s=1.176e-3,
               enqueue_s=0.357e-3, throttled_s=0.0)


@needs_shared
def test_leave_one_mode_out_error_on_the_shared_triple(reports):
    done = jroof("compare", *(str(reports[m]) for m in MODES), "--predict", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["lomo"]
    assert len(rows) == 6  # every ordered pair of the three modes
    assert {(r["from_mode"], r["to_mode"]) for r in rows} == {
        (a, b) for a in MODES.values() for b in MODES.values() if a != b}
    for row in rows:
        rate, joules = row["iters_per_s"], row["j_per_iter"]
        assert abs(rate["error"]) <= 0.03, row
        assert abs(joules["error"]) <= 0.08, row
        assert rate["in_range"] and joules["in_range"], row


@needs_shared
def test_compare_predict_adds_the_mode_not_run(reports):
    done = jroof("compare", *(str(reports[m]) for m in MODES), "--predict")
    assert done.returncode == 0, done.stderr
    assert "## Predicted for the modes not run" in done.stdout and "| 25W |" in done.stdout
    assert "## Leave one mode out" in done.stdout


@needs_shared
def test_predict_json_shape_and_every_mode_named_is_answered(reports):
    done = jroof("predict", str(reports["maxn"]), "--mode", "7w", "--mode", "25W", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"device", "from_mode", "predictions"} <= set(data)
    assert (data["device"], data["from_mode"]) == (DEVICE, "MAXN_SUPER")
    assert [p["power_mode"] for p in data["predictions"]] == ["7W", "25W"]
    seven, twentyfive = data["predictions"]
    for key in ("power_mode", "j_per_iter", "iters_per_s", "j_per_iter_range", "iters_per_s_range", "basis"):
        assert key in seven
    lo, hi = seven["iters_per_s_range"]
    assert lo <= seven["iters_per_s"] <= hi and seven["iters_per_s_source"] == "inferred"
    # 25W has no idle power in the database: its throughput is predicted, its energy is not
    assert twentyfive["iters_per_s"] is not None and twentyfive["j_per_iter"] is None
    assert "25W" in twentyfive["j_per_iter_note"]


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    not_json = tmp_path / "log.txt"
    not_json.write_text("07-26-2026 16:24:45 RAM 2576/7620MB\n")
    no_report = tmp_path / "other.json"
    no_report.write_text('{"a": 1}')
    idle = tmp_path / "idle.json"
    idle.write_text(json.dumps({"whole": {"name": "whole run", "workload": None}, "phases": []}))
    for path in (not_json, no_report, idle, tmp_path / "missing.json"):
        done = jroof("predict", str(path))
        assert done.returncode == 2, (path, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize(("where", "key", "value"), [
    ("workload", "throughput_per_s", -5.0),
    ("workload", "iterations", "many"),
    ("ceilings", "gpu_mhz", 1e300),
    ("loads", "gpu_pct", -50),
    ("power_w", "mean", True),
])
def test_a_broken_figure_in_the_report_is_refused_not_predicted_from(tmp_path, where, key, value):
    """A hand-edited or damaged report: one line naming the figure, exit 2, never a prediction."""
    span = {"name": "timed", "workload": {"iterations": 100.0, "throughput_per_s": 50.0},
            "power_w": {"mean": 10.0}, "ceilings": {"gpu_mhz": 1000.0, "emc_mhz": 3199.0},
            "loads": {"gpu_pct": 90.0}}
    span[where] = {**span[where], key: value}
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"device": DEVICE, "power_mode": "MAXN_SUPER",
                                  "whole": {"name": "whole run"}, "phases": [span]}))
    done = jroof("predict", str(broken))
    assert done.returncode == 2 and key in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@needs_shared
def test_a_mode_the_board_lacks_is_refused(reports):
    done = jroof("predict", str(reports["maxn"]), "--mode", "40W")
    assert done.returncode == 2 and "40W" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_unknown_mode_is_an_input_error():
    with pytest.raises(PredictInputError, match="40W"):
        predict(RUN, load_devices(), ["40W"])


@pytest.mark.parametrize(("change", "said"), [
    ({"throttled_s": 2.0}, "throttled"),
    ({"device": "no-such-board"}, "not in the device database"),
    ({"device": None}, "names no device"),
    ({"power_mode": None}, "names no power mode"),
    ({"throughput_per_s": None}, "no throughput"),
    ({"gpu_mhz": None}, "clocks"),
    ({"gpu_compute_s": None, "gpu_load_pct": None}, "no GPU time"),
])
def test_cant_predict_says_why_instead_of_guessing(change, said):
    got = predict(replace(RUN, **change), load_devices(), ["7W"]).predictions
    assert len(got) == 1 and got[0].power_mode == "7W"
    assert got[0].iters_per_s is None and got[0].j_per_iter is None and got[0].iters_per_s_range is None
    assert got[0].reason is not None and said in got[0].reason


@pytest.mark.parametrize(("change", "said"), [
    ({"device": "h200", "power_mode": None}, "h200 has no other power mode"),
    ({"device": "no-such-board"}, "not in the device database"),
])
def test_a_run_with_no_mode_to_predict_says_so(change, said):
    got = predict(replace(RUN, **change), load_devices())
    assert got.predictions == () and got.note is not None and got.note.startswith("nothing to predict")
    assert said in got.note


def test_the_range_widens_where_the_mode_gates_sms():
    """7W gates half the SMs (per-SM scaling unknown): 15W keeps them all, at the same kind of clock drop."""
    got = {p.power_mode: p for p in predict(RUN, load_devices(), ["15W", "7W"]).predictions}
    def width(p):
        lo, hi = p.iters_per_s_range
        return hi / lo
    assert width(got["7W"]) > 1.5 > width(got["15W"])
    assert "SMs 8 -> 4" in got["7W"].basis and "SMs 8 -> " not in got["15W"].basis


def test_the_range_widens_where_the_run_is_near_launch_bound():
    """The same run with an enqueue time near its GPU time may turn launch-bound at a slower CPU."""
    devices = load_devices()
    calm = predict(RUN, devices, ["15W"]).predictions[0]
    near = predict(replace(RUN, enqueue_s=1.0e-3), devices, ["15W"]).predictions[0]
    assert near.iters_per_s_range[0] < calm.iters_per_s_range[0]
    assert "serialised" in near.basis and "serialised" not in calm.basis


def test_an_unknown_memory_share_is_assumed_wide():
    """Without the EMC load nor the workload's bytes, the memory share spans 0-100 % (assumed)."""
    got = predict(replace(RUN, emc_load_pct=None), load_devices(), ["7W"])
    assert got.split is not None and got.split.memory_source == "assumed"
    assert got.split.memory_share == (0.0, 0.5, 1.0)


def test_leave_one_mode_out_pairs_only_runs_of_one_workload():
    """Another model's run in another mode is no truth for this one's prediction."""
    from jtop_roof.outputs.predict import lomo

    r50 = replace(RUN, workload="resnet50.onnx fp32+int8")
    other = replace(RUN, power_mode="15W", throughput_per_s=550.0, workload="resnet18.onnx fp16")
    same = replace(other, workload=r50.workload)
    assert lomo([("a", r50), ("b", other)], load_devices()) == []
    assert [(r["from_mode"], r["to_mode"]) for r in lomo([("a", r50), ("b", same)], load_devices())] == [
        ("MAXN_SUPER", "15W"), ("15W", "MAXN_SUPER")]


def test_the_report_input_takes_the_timed_phase():
    report = {"device": DEVICE, "power_mode": "7W", "whole": {"name": "whole run", "workload": {}},
              "phases": [{"name": "build", "workload": None},
                         {"name": "timed", "workload": {"throughput_per_s": 268.8, "iterations": 1000},
                          "loads": {"gpu_pct": 98.0, "emc_pct": 13.1}}],
              "trtexec": {"gpu_compute_mean_s": 3.7e-3, "enqueue_mean_s": 0.64e-3}}
    facts = run_facts(report, "r.json")
    assert (facts.span, facts.throughput_per_s, facts.emc_load_pct) == ("timed", 268.8, 13.1)
    assert (facts.gpu_compute_s, facts.enqueue_s) == (3.7e-3, 0.64e-3)


@needs_shared
def test_trtexec_enqueue_time_and_span_loads_are_in_the_report(reports):
    _, trt = benchlab("maxn")
    assert read_trtexec(trt).enqueue_mean_s == pytest.approx(0.357246e-3)
    report = json.loads(reports["maxn"].read_text())
    assert report["trtexec"]["gpu_compute_mean_s"] == pytest.approx(1.17648e-3)
    timed = next(p for p in report["phases"] if p["name"] == "timed")
    assert 90 <= timed["loads"]["gpu_pct"] <= 100 and 0 < timed["loads"]["emc_pct"] < 50


def test_the_orin_nano_super_modes_carry_sourced_idle_power():
    modes = {m.name: m for m in load_devices()[DEVICE].power_modes}
    for name in ("MAXN_SUPER", "15W", "7W"):
        calibration = modes[name].calibration
        assert calibration is not None
        idle = calibration.idle_w["VDD_IN"]
        assert idle.value is not None and idle.source == "measured" and "benchlab" in (idle.note or "")
    unknown = modes["25W"].calibration
    assert unknown is not None and unknown.idle_w["VDD_IN"].value is None and unknown.idle_w["VDD_IN"].note

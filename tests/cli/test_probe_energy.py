"""The energy terms ``jroof-tui probe`` measures (π0, idle per rail, ε per FLOP and per byte), and how a
probe file carrying them reaches the energy roofline: known energy in gives known ε out; what cannot be
measured is null with a note, never a default."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from paths import REPO
from test_probe import ORIN_HEADER, FakeSource

from jtop_roof.model.records import Gpu, Rail, Sample
from jtop_roof.probe import run as probe_run
from jtop_roof.probe import save_probe, summary_lines
from jtop_roof.probe.backends import Backend, Kernel
from jtop_roof.probe.energy import MIN_SAMPLES, Span, entry_terms, idle_terms, nvml_counter
from jtop_roof.roofline.devices import find_mode, load_devices
from jtop_roof.roofline.energy import BY_PROBE, PROBED_MODE, energy_roof
from jtop_roof.roofline.measured import load_probe, probe_calibration

ROOT = REPO
DATA = ROOT / "tests" / "data"
H100_ENERGY_PROBE = DATA / "h100_probe_energy.json"


def _samples(watts: float, count: int, rail: str = "NVML_GPU", mhz: int = 1980) -> list[Sample]:
    out = []
    for _ in range(count):
        sample = Sample(t_wall=0.0, t_mono=0.0)
        sample.rails = {rail: Rail(watts * 1000.0)}
        sample.gpu = Gpu(99.0, (mhz, mhz))
        out.append(sample)
    return out


class _Counter:
    name = "NVML_GPU"

    def __init__(self, read: Any = None) -> None:
        self.read = read
        self.closed = False

    def read_mj(self) -> float | None:
        return None if self.read is None else self.read()

    def close(self) -> None:
        self.closed = True


# ------------------------------------------------------------------------------ the arithmetic


def test_sampled_power_gives_pi0_and_eps():
    idle = idle_terms(Span(2.0, _samples(100.0, 20)), None, "gpu")
    assert idle["pi0_w"]["value"] == pytest.approx(100.0) and idle["pi0_w"]["source"] == "measured"
    assert idle["idle_w"]["NVML_GPU"]["value"] == pytest.approx(100.0)
    assert idle["energy_from"] == "samples" and idle["rail"] == "NVML_GPU"
    # 300 W for 2 s is 600 J; 200 J of it is idle: 400 J over 4e14 FLOPs is 1 pJ per FLOP
    out = entry_terms("compute", Span(2.0, _samples(300.0, 20)), 4e14, idle, None, "gpu",
                      {"gpu_mhz": {"mean": 1980.0, "min": 1980.0, "max": 1980.0}})
    assert out["energy"]["joules"] == pytest.approx(600.0)
    eps = out["eps_flop_j"]
    assert eps["value"] == pytest.approx(1e-12) and eps["source"] == "measured"
    assert "20 samples" in eps["note"] and "GPU 1980 MHz" in eps["note"] and "NVML_GPU" in eps["note"]
    bandwidth = entry_terms("bandwidth", Span(2.0, _samples(300.0, 20)), 8e12, idle, None, "gpu", {})
    assert bandwidth["eps_byte_j"]["value"] == pytest.approx(400.0 / 8e12)
    assert "eps_flop_j" not in bandwidth


def test_the_counter_wins_over_the_samples():
    # the samples say 999 W; NVML's counter says 100 W idle and 500 J over the 2 s run
    counter = _Counter()
    idle = idle_terms(Span(1.0, _samples(999.0, 10), (1000.0, 101000.0)), counter, "gpu")
    assert idle["pi0_w"]["value"] == pytest.approx(100.0) and idle["energy_from"] == "counter"
    run = Span(2.0, _samples(999.0, 10), (0.0, 500000.0))
    out = entry_terms("compute", run, 3e14, idle, counter, "gpu", {})
    assert out["energy"]["energy_from"] == "counter" and out["energy"]["joules"] == pytest.approx(500.0)
    assert out["eps_flop_j"]["value"] == pytest.approx((500.0 - 200.0) / 3e14)
    assert "energy counter" in out["eps_flop_j"]["note"]


def test_too_few_samples_is_null_with_why():
    idle = idle_terms(Span(2.0, _samples(100.0, 20)), None, "gpu")
    out = entry_terms("compute", Span(0.2, _samples(300.0, MIN_SAMPLES - 1)), 1e12, idle, None, "gpu", {})
    eps = out["eps_flop_j"]
    assert eps["value"] is None and eps["source"] is None
    assert f"{MIN_SAMPLES - 1} power sample(s)" in eps["note"] and f"at least {MIN_SAMPLES}" in eps["note"]


def test_no_power_source_is_null_not_a_default():
    bare = [Sample(t_wall=0.0, t_mono=0.0) for _ in range(20)]
    idle = idle_terms(Span(2.0, bare), None, "gpu")
    assert idle["pi0_w"]["value"] is None and "no power reading" in idle["pi0_w"]["note"]
    assert idle["idle_w"] == {}
    out = entry_terms("bandwidth", Span(2.0, bare), 1e12, idle, None, "gpu", {})
    assert out["eps_byte_j"]["value"] is None and "no power reading" in out["eps_byte_j"]["note"]


def test_a_gpu_rail_does_not_measure_the_cpu():
    idle = idle_terms(Span(2.0, _samples(100.0, 20)), None, "cpu")
    assert idle["pi0_w"]["value"] is None and "not the CPU" in idle["pi0_w"]["note"]


def test_idle_on_another_rail_than_the_runs_is_null():
    idle = idle_terms(Span(2.0, _samples(10.0, 20, rail="VDD_IN")), None, "gpu")
    out = entry_terms("compute", Span(2.0, _samples(300.0, 20)), 1e12, idle, None, "gpu", {})
    assert out["eps_flop_j"]["value"] is None and "idle read VDD_IN" in out["eps_flop_j"]["note"]


def test_nvml_counter_absent_without_pynvml():
    def missing(name: str) -> Any:
        raise ImportError(name)

    assert nvml_counter(missing) is None


# ------------------------------------------------------------------ through the probe, end to end

#: The fake GPU's figures: 100 W with nothing to do, 2 pJ per FLOP and 40 pJ per byte of work done.
IDLE_W, EPS_FLOP, EPS_BYTE = 100.0, 2e-12, 40e-12


class _FakeGpu(Backend):
    """A GPU whose every kernel call costs a known energy, counted by ``_Counter`` below."""

    name, device_kind, device_name, library = "fake", "gpu", "Fake GPU", "fake 1.0"

    def __init__(self) -> None:
        super().__init__()
        self.joules = 0.0

    def _kernel(self, work: float, eps: float, size: int) -> Kernel:
        def call() -> None:
            self.joules += work * eps

        return Kernel(call, work, size)

    def default_bandwidth_bytes(self, quick: bool) -> int:
        return 1 << 20

    def default_matmul_n(self, quick: bool) -> int:
        return 64

    def bandwidth(self, kind: str, array_bytes: int) -> Kernel:
        return self._kernel((2.0 if kind == "copy" else 3.0) * array_bytes, EPS_BYTE * 1e6, array_bytes)

    def matmul(self, precision: str, n: int) -> Kernel:
        return self._kernel(2.0 * n ** 3, EPS_FLOP * 1e6, n)

    def precisions(self) -> tuple[str, ...]:
        return ("bf16_tensor", "fp16_tensor")


def _fake_probe(monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> dict[str, Any]:
    """A probe of the fake GPU, its work scaled up a million times so that the energy above idle is far
    above a float's rounding of ``IDLE_W`` x the monotonic clock; ε is then scaled back."""
    gpu = _FakeGpu()
    monkeypatch.setattr(probe_run, "pick_backend", lambda _name: gpu)
    counter = _Counter(lambda: 1000.0 * (IDLE_W * time.monotonic() + gpu.joules))
    header = {"source": "host", "gpu": "NVIDIA H200", "model": "NVIDIA H200"}
    sizes = {"device_warmup_s": 0.0, "warmup_s": 0.0, "run_s": 0.05, "repeats": 2, "idle_s": 0.2}
    result = probe_run.run_probe(True, backend="torch", sizes=sizes, counter_factory=lambda: counter,
                                 source_factory=lambda: FakeSource(kind="host", header=header,
                                                                   rails={"NVML_GPU": 120000.0}),
                                 **kwargs)
    assert counter.closed
    return result


def test_the_probe_measures_known_energy(monkeypatch):
    out = _fake_probe(monkeypatch)
    idle = out["idle"]
    assert idle["energy_from"] == "counter" and idle["pi0_w"]["value"] == pytest.approx(IDLE_W, rel=2e-3)
    assert idle["idle_w"]["NVML_GPU"]["value"] == pytest.approx(120.0)  # the sampled rail, as sampled
    bf16 = out["compute"]["bf16_tensor"]
    assert bf16["energy"]["energy_from"] == "counter"
    assert bf16["eps_flop_j"]["value"] == pytest.approx(EPS_FLOP * 1e6, rel=1e-3)
    for kind in ("copy", "triad"):
        assert out["bandwidth"][kind]["eps_byte_j"]["value"] == pytest.approx(EPS_BYTE * 1e6, rel=1e-3)
    assert any(line.startswith("  idle (π0) 100.0 W") for line in summary_lines(out))
    json.dumps(out, allow_nan=False)


def test_a_numpy_probe_still_writes_the_idle_block():
    from test_probe import SAMPLED, _run

    out = _run(FakeSource(header=ORIN_HEADER), sizes={**SAMPLED, "idle_s": 0.1})
    assert out["idle"]["rail"] == "VDD_IN" and out["idle"]["pi0_w"]["value"] == pytest.approx(12.0)
    # a constant 12 W is never above idle: ε is null and says so
    note = out["compute"]["fp32"]["eps_flop_j"]["note"]
    assert out["compute"]["fp32"]["eps_flop_j"]["value"] is None and "not above" in note


# ------------------------------------------------------------------ the file, the energy roofline


@pytest.fixture
def probe_file(monkeypatch, tmp_path) -> Path:
    return save_probe(_fake_probe(monkeypatch), tmp_path / "h200.json")


def test_a_probe_file_gives_a_dgpu_its_energy_line(probe_file):
    probe = load_probe(probe_file)
    calibration = probe_calibration(probe)
    assert calibration is not None and calibration.pi0_w.value == pytest.approx(IDLE_W, rel=2e-3)
    assert calibration.eps_flop_j["bf16_tensor"].value == pytest.approx(EPS_FLOP * 1e6, rel=1e-3)
    device = load_devices()["h200"]
    assert energy_roof(device, None, "bf16_tensor").lines == ()  # the database has no modes for it
    roof = energy_roof(device, None, "bf16_tensor", probe)
    (line,) = roof.lines
    assert line.power_mode == PROBED_MODE and roof.current_mode == PROBED_MODE
    assert line.eps_op_j == pytest.approx(EPS_FLOP * 1e6, rel=1e-3) and BY_PROBE in line.basis
    assert line.pi0_w == pytest.approx(IDLE_W, rel=2e-3)


def test_a_probe_of_a_jetson_mode_replaces_that_modes_calibration(monkeypatch, tmp_path):
    out = _fake_probe(monkeypatch, device="orin-nano-8gb-super", power_mode="7W")
    probe = load_probe(save_probe(out, tmp_path / "orin.json"))
    device = load_devices()["orin-nano-8gb-super"]
    roof = energy_roof(device, find_mode(device, "7W"), "fp16_tensor", probe)  # it has no bf16 rate
    by_mode = {mode.power_mode: mode for mode in roof.modes}
    line = by_mode["7W"].line
    assert line is not None and BY_PROBE in line.basis
    assert line.eps_byte_j == pytest.approx(EPS_BYTE * 1e6, rel=1e-3)
    assert [mode.power_mode for mode in roof.modes] == [mode.name for mode in device.power_modes]


def test_another_devices_probe_and_an_old_file_draw_nothing(probe_file):
    probe = load_probe(probe_file)
    orin = load_devices()["orin-nano-8gb-super"]
    before = energy_roof(orin, None, "bf16_tensor")
    assert energy_roof(orin, None, "bf16_tensor", probe) == before  # measured on an H200
    old = load_probe(DATA / "h200_probe.json")  # written before the probe measured energy
    assert old.pi0_w is None and probe_calibration(old) is None
    assert all(c.eps_j is None for c in old.compute.values())
    assert energy_roof(load_devices()["h200"], None, "bf16_tensor", old).lines == ()


def test_report_draws_the_probed_modes_line(probe_file):
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(DATA / "h200_phases.jsonl"),
                          "--format", "json", "--probe", str(probe_file)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    gemm = next(p for p in json.loads(out.stdout)["phases"] if p["name"] == "gemm-bf16")["roofline"]
    (row,) = gemm["energy_ceilings"]
    assert row["power_mode"] == PROBED_MODE and row["j_per_op_source"] == "inferred"
    line = energy_roof(load_devices()["h200"], None, gemm["precision"], load_probe(probe_file)).lines[0]
    assert row["j_per_op"] == pytest.approx(line.j_per_op(gemm["intensity_flop_per_byte"]))
    assert BY_PROBE in row["j_per_op_note"] and gemm["energy_cheapest_mode"] == PROBED_MODE


# ------------------------------------------------------------------ a real H100


def test_a_real_h100_probe_gives_physically_sane_energy_terms_and_a_line():
    """Brought back from a lent H100 SXM (``probe --device h100-sxm``, docs/validation.md)."""
    probe = load_probe(H100_ENERGY_PROBE)
    assert probe.device == "h100-sxm" and probe.pi0_w is not None and probe.pi0_w.value is not None
    # An idle H100 SXM draws about 60-150 W (its NVML power at rest).
    assert 50 < probe.pi0_w.value < 200 and probe.pi0_w.source == "measured"
    bf16 = probe.compute["bf16_tensor"].eps_j
    # Dense bf16 on Hopper's tensor cores: ~570 W above idle at ~690 TFLOP/s is ~0.8 pJ/FLOP; a
    # tensor-core FLOP costs well under a CUDA-core FP32 FLOP (~10 pJ here) and more than 0.1 pJ.
    assert bf16 is not None and bf16.value is not None and 0.1e-12 < bf16.value < 10e-12
    fp32 = probe.compute["fp32"].eps_j
    assert fp32 is not None and fp32.value is not None and fp32.value > 5 * bf16.value
    copy = probe.bandwidth["copy"].eps_j
    # A byte through HBM3 and the chip (read or written): HBM's own ~4 pJ/bit (~30 pJ/B) bounds it
    # from below within a factor of ~10, and 100 pJ/B would be more than the whole card's power
    # above idle (~580 W) at its measured 3 TB/s.
    assert copy is not None and copy.value is not None and 1e-12 < copy.value < 100e-12
    roof = energy_roof(load_devices()["h100-sxm"], None, "bf16_tensor", probe)
    (line,) = roof.lines
    assert line.power_mode == PROBED_MODE and BY_PROBE in line.basis
    assert (line.eps_op_j, line.pi0_w) == (bf16.value, probe.pi0_w.value)


H100_HELD_OUT = DATA / "h100_energy_roof.jsonl"
H100_HELD_OUT_PROBE = DATA / "h100_energy_roof_probe.json"


def test_two_products_the_probe_never_ran_sit_on_its_energy_terms_on_a_real_h100():
    """Brought back from a lent H100 SXM in one call (docs/validation.md): the probe, then two bf16
    products it never ran (63 and 683 FLOP/byte) recorded under ``run --headless``. A dGPU's J/op
    is its board energy (NVML_GPU) ÷ its FLOPs, as its J/iteration is; the probe's line, at the
    roof's rate, lies below each; the same terms charged at the product's own rate come within
    25 % under it (ε per FLOP was probed power-capped at 1366 MHz; these ran near 1980 MHz)."""
    out = subprocess.run([sys.executable, "-m", "jtop_roof", "report", str(H100_HELD_OUT), "--format", "json",
                          "--probe", str(H100_HELD_OUT_PROBE)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    phases = {p["name"]: p for p in json.loads(out.stdout)["phases"]}
    probe = load_probe(H100_HELD_OUT_PROBE)
    line = energy_roof(load_devices()["h100-sxm"], None, "bf16_tensor", probe).lines[0]
    for name in ("skinny-bf16", "gemm-bf16-2048"):
        phase = phases[name]
        roof, work = phase["roofline"], phase["workload"]
        flops = roof["achieved_flops_per_s"] * phase["duration_s"]
        assert work["energy_measures"].startswith("NVML_GPU") and phase["energy_j"]["total"] is None
        assert roof["j_per_op"] == pytest.approx(phase["energy_j"]["rails"]["NVML_GPU"] / flops)
        assert roof["j_per_op"] == pytest.approx(work["j_per_iter"] * work["iterations"] / flops)
        intensity, achieved = roof["intensity_flop_per_byte"], roof["achieved_flops_per_s"]
        (ceiling,) = roof["energy_ceilings"]
        assert ceiling["j_per_op"] == pytest.approx(line.j_per_op(intensity))
        assert ceiling["j_per_op"] < roof["j_per_op"]
        at_its_rate = line.eps_op_j + line.eps_byte_j / intensity + line.pi0_w / achieved
        assert at_its_rate < roof["j_per_op"] < 1.25 * at_its_rate

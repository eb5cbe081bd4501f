"""``jroof-tui probe``: structure and arithmetic on tiny sizes (numpy, a fake source with clocks),
the file round trip and its one-line errors. Never speed: figures belong in benchmarks/probe.py."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
import types
from typing import Any

import numpy as np
import pytest
from paths import REPO

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.records import Clocked, CpuCore, Gpu, Rail, Sample
from jtop_roof.probe import ProbeSizes, default_probe_path, run_probe, save_probe, summary_lines
from jtop_roof.probe import run as probe_run
from jtop_roof.probe.backends import Kernel, pick_backend
from jtop_roof.probe.sampler import SourceSampler
from jtop_roof.roofline.measured import Probe, ProbeError, load_probe, parse_probe
from jtop_roof.sources.base import Source

TINY = {"bandwidth_bytes": 64 * 1024, "matmul_n": 32, "device_warmup_s": 0.0, "warmup_s": 0.0,
        "run_s": 0.02, "repeats": 2}
#: Runs long enough that a loaded machine still lets the 2 ms sampler in during each one: for tests that
#: read the clocks and power seen during the runs (TINY's 20 ms runs could see none under load).
SAMPLED = {**TINY, "run_s": 0.1}
ORIN_HEADER = {"source": "tegrastats",
               "model": "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
               "device": "orin-nano-8gb-super", "power_mode": "MAXN_SUPER"}


class FakeSource(Source):
    """Samples every 2 ms with fixed clocks and power, until stopped."""

    def __init__(self, kind: str = "tegrastats", header: dict[str, Any] | None = None,
                 gpu_mhz: int | None = 1020, emc_mhz: int | None = 3199, cpu_mhz: int | None = 1728,
                 rails: dict[str, float] | None = None, samples: bool = True) -> None:
        self.kind = kind
        self.header = dict(header or {"source": kind})
        self.gpu_mhz, self.emc_mhz, self.cpu_mhz = gpu_mhz, emc_mhz, cpu_mhz
        self.rails = {"VDD_IN": 12000.0} if rails is None else rails
        self.samples = samples
        self.interval_ms = 2
        self._stop = threading.Event()
        self.stopped = False

    def describe(self) -> SourceInfo:
        return SourceInfo.from_mapping(self.header)

    def records(self):
        while not self._stop.is_set():
            if self.samples:
                sample = Sample(t_wall=time.time(), t_mono=time.monotonic())
                if self.gpu_mhz is not None:
                    sample.gpu = Gpu(99.0, (self.gpu_mhz, self.gpu_mhz))
                if self.emc_mhz is not None:
                    sample.emc = Clocked(40.0, self.emc_mhz)
                sample.cpus = [CpuCore(100.0, self.cpu_mhz), None, CpuCore(100.0, self.cpu_mhz)]
                sample.rails = {name: Rail(mw) for name, mw in self.rails.items()}
                yield sample
            self._stop.wait(0.002)

    def stop(self) -> None:
        self.stopped = True
        self._stop.set()


def _run(source: FakeSource | None = None, **kwargs: Any) -> dict[str, Any]:
    made = source or FakeSource(header=ORIN_HEADER)
    kwargs.setdefault("backend", "numpy")
    kwargs.setdefault("sizes", TINY)
    return run_probe(True, source_factory=lambda: made, **kwargs)


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return _run(sizes=SAMPLED)


# -------------------------------------------------------------------------------------- structure


def test_import_is_light():
    code = ("import sys, jtop_roof.probe\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('textual', 'textual_plotext', 'plotext', 'torch', 'cupy'))\n"
            "print(','.join(bad))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_progress_announces_only_what_is_measured():
    said: list[str] = []
    out = _run(progress=said.append)
    measured = [line.split(":")[1].split(",")[0].strip() for line in said
                if line.startswith(("bandwidth:", "compute:"))]
    assert measured == [*out["bandwidth"], *out["compute"]]  # not the precisions numpy skips
    assert set(out["skipped"]).isdisjoint(measured)


def test_result_structure(result):
    assert result["format"] == "jroof-probe" and result["schema"] == 1
    assert result["backend"] == "numpy" and result["device_kind"] == "cpu"
    assert result["quick"] is True
    assert result["device"] == "orin-nano-8gb-super" and result["power_mode"] == "MAXN_SUPER"
    assert set(result["bandwidth"]) == {"copy", "triad"}
    assert set(result["compute"]) == {"fp32", "fp64"}
    # what numpy cannot measure is said, not silently missing
    assert set(result["skipped"]) == {"bf16_tensor", "fp16_tensor", "int8_tensor"}
    assert "CPU" in result["note"] and "not the GPU's" in result["note"]
    assert result["source"]["kind"] == "tegrastats" and result["source"]["samples"] > 0
    assert result["duration_s"] > 0
    assert "T" in result["measured_at"]
    json.dumps(result, allow_nan=False)  # plain JSON


def test_bandwidth_arithmetic(result):
    for kind, factor in (("copy", 2), ("triad", 3)):
        entry = result["bandwidth"][kind]
        assert entry["size"] == 64 * 1024
        assert entry["bytes_per_call"] == factor * entry["size"]  # bytes read + written
        assert entry["repeats"] == 2
        moved = entry["bytes_per_call"] * entry["calls_per_run"]
        assert entry["bytes_per_s"] == pytest.approx(moved / entry["seconds"])
        spread = entry["spread"]
        assert spread["min"] <= spread["median"] <= spread["max"] == entry["bytes_per_s"]  # best of N


def test_compute_arithmetic(result):
    for precision in ("fp32", "fp64"):
        entry = result["compute"][precision]
        assert entry["size"] == 32
        assert entry["flops_per_call"] == 2 * 32 ** 3
        flops = entry["flops_per_call"] * entry["calls_per_run"]
        assert entry["flops_per_s"] == pytest.approx(flops / entry["seconds"])


def test_clocks_power_and_per_mhz(result):
    copy = result["bandwidth"]["copy"]
    assert copy["samples"] > 0
    assert copy["clocks"]["gpu_mhz"] == {"mean": 1020.0, "min": 1020.0, "max": 1020.0}
    assert copy["clocks"]["emc_mhz"] == {"mean": 3199.0, "min": 3199.0, "max": 3199.0}
    assert copy["clocks"]["cpu_mhz"]["mean"] == 1728.0  # offline cores are left out
    assert copy["power_w"] == {"mean": 12.0, "max": 12.0, "rail": "VDD_IN"}
    # a Jetson's CPU shares the EMC: its bandwidth per EMC MHz is the roof's
    assert copy["bytes_per_s_per_emc_mhz"] == pytest.approx(copy["bytes_per_s"] / 3199)
    assert copy["per_mhz_clock"]["key"] == "emc_mhz"
    fp32 = result["compute"]["fp32"]
    # numpy runs on the CPU: never per GPU MHz
    assert fp32["flops_per_s_per_gpu_mhz"] is None
    assert fp32["flops_per_s_per_cpu_mhz"] == pytest.approx(fp32["flops_per_s"] / 1728)


def test_host_memory_clock_is_not_the_cpus():
    # On a dGPU host, NVML's memory clock belongs to the GPU: no CPU bandwidth per it.
    out = _run(FakeSource(kind="host", header={"source": "host", "model": "Some CPU"},
                          rails={"NVML_GPU": 80000.0}), sizes=SAMPLED)
    copy = out["bandwidth"]["copy"]
    assert copy["clocks"]["emc_mhz"]["mean"] == 3199.0  # recorded all the same
    assert copy["bytes_per_s_per_emc_mhz"] is None and copy["per_mhz_clock"] is None
    assert copy["power_w"]["rail"] == "NVML_GPU" and copy["power_w"]["mean"] == 80.0
    assert out["device"] is None and "not in the device database" in out["device_note"]


def test_no_samples_leaves_clocks_null():
    source = FakeSource(samples=False, header=ORIN_HEADER)
    out = _run(source)
    entry = out["bandwidth"]["triad"]
    assert entry["samples"] == 0 and entry["power_w"] is None
    assert all(value is None for value in entry["clocks"].values())
    assert entry["bytes_per_s_per_emc_mhz"] is None
    assert "gave no samples" in out["note"]
    assert source.stopped


def test_device_and_mode_flags_win():
    out = _run(FakeSource(header={"source": "tegrastats"}), device="orin-nano-8gb", power_mode="7W")
    assert out["device"] == "orin-nano-8gb" and out["power_mode"] == "7W"


def test_unknown_device_is_one_line_and_source_stopped():
    source = FakeSource()
    with pytest.raises(ProbeError, match="unknown device") as info:
        _run(source, device="no-such-board")
    assert "\n" not in str(info.value)
    assert source.stopped


def test_sizes_are_checked():
    with pytest.raises(ProbeError, match="unknown probe size"):
        ProbeSizes().merged({"bogus": 1})
    with pytest.raises(ProbeError, match="repeats"):
        ProbeSizes().merged({"repeats": 0})
    assert ProbeSizes().merged(ProbeSizes(repeats=7)).repeats == 7
    assert ProbeSizes.defaults(True, "gpu").device_warmup_s >= 1.0  # a cold GPU needs about a second


def test_backends():
    with pytest.raises(ProbeError, match="unknown backend"):
        pick_backend("opencl")
    assert pick_backend("numpy").device_kind == "cpu"
    for name in ("torch", "cupy"):
        try:
            __import__(name)
        except ImportError:
            with pytest.raises(ProbeError, match=f"--backend {name}"):
                pick_backend(name)


def test_best_run_clock_is_used_for_per_mhz():
    # Runs at different clocks (a power-capped GEMM): per MHz takes the clock of the best run.
    sampler = SourceSampler(FakeSource())

    def at(t: float, mhz: int) -> tuple[float, Sample]:
        return t, Sample(gpu=Gpu(99.0, (mhz,)))

    sampler._samples.extend([at(0.5, 1900), at(1.5, 1500), at(2.5, 1200)])
    kernel = Kernel(lambda: None, work=1e12, size=8192)
    runs = [(0.0, 1.0), (1.0, 1.8), (2.0, 3.0)]  # the second run is the fastest
    entry = probe_run._entry("compute", kernel, 1, runs, sampler, "gpu_mhz")
    assert entry["flops_per_s"] == pytest.approx(1e12 / 0.8)
    assert entry["clocks"]["gpu_mhz"] == {"mean": pytest.approx(1533.33, abs=0.01), "min": 1200.0,
                                          "max": 1900.0}
    assert entry["per_mhz_clock"] == {"key": "gpu_mhz", "mhz": 1500.0, "over": "best run"}
    assert entry["flops_per_s_per_gpu_mhz"] == pytest.approx(1e12 / 0.8 / 1500)


# ----------------------------------------------------------------------------- a fake torch (CUDA)


class _FakeTensor:
    def __init__(self, array: np.ndarray) -> None:
        self.a = array

    def t(self) -> _FakeTensor:
        return _FakeTensor(self.a.T)

    def copy_(self, other: _FakeTensor) -> _FakeTensor:
        np.copyto(self.a, other.a)
        return self


def _fake_torch(calls: list[str]) -> types.ModuleType:
    torch: Any = types.ModuleType("torch")
    torch.__version__ = "9.9.9"
    torch.float32, torch.float16, torch.int8, torch.int32 = np.float32, np.float16, np.int8, np.int32
    torch.bfloat16 = "bfloat16"  # numpy has none: stands in as float32
    real = {np.float32: np.float32, np.float16: np.float16, np.int8: np.int8, np.int32: np.int32,
            "bfloat16": np.float32}
    settings = types.SimpleNamespace(allow_tf32=True)
    tf32_seen: list[bool] = []
    torch.backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=settings))
    torch.version = types.SimpleNamespace(cuda="12.9")
    torch.device = lambda kind, index: f"{kind}:{index}"
    torch.Generator = lambda device: types.SimpleNamespace(manual_seed=lambda seed: None)
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True, current_device=lambda: 0, get_device_name=lambda dev: "Fake GPU",
        synchronize=lambda dev: calls.append("sync"), mem_get_info=lambda dev: (10 << 30, 16 << 30),
        empty_cache=lambda: calls.append("empty_cache"), is_bf16_supported=lambda: True)
    torch.zeros = lambda n, dtype, device: _FakeTensor(np.zeros(n, dtype=real[dtype]))
    torch.full = lambda shape, v, dtype, device: _FakeTensor(np.full(shape, v, dtype=real[dtype]))
    torch.empty = lambda shape, dtype, device: _FakeTensor(np.empty(shape, dtype=real[dtype]))
    torch.randn = lambda shape, dtype, device, generator: _FakeTensor(np.ones(shape, dtype=real[dtype]))
    torch.randint = lambda lo, hi, shape, dtype, device, generator: _FakeTensor(
        np.ones(shape, dtype=real[dtype]))

    def add(b, c, alpha, out):
        calls.append("add")
        np.add(b.a, alpha * c.a, out=out.a)

    def matmul(x, y, out):
        tf32_seen.append(settings.allow_tf32)
        np.matmul(x.a, y.a, out=out.a)

    def int_mm(x, y, out=None):
        calls.append("int_mm")
        np.matmul(x.a.astype(np.int32), y.a.astype(np.int32), out=out.a)

    torch.add, torch.matmul, torch._int_mm = add, matmul, int_mm
    torch.tf32_seen = tf32_seen
    return torch


def test_torch_backend_path(monkeypatch):
    calls: list[str] = []
    fake = _fake_torch(calls)
    monkeypatch.setitem(sys.modules, "torch", fake)
    header = {"source": "host", "gpu": "NVIDIA H200", "model": "NVIDIA H200"}
    out = _run(FakeSource(kind="host", header=header, rails={"NVML_GPU": 690000.0}), backend="auto",
               sizes=SAMPLED)
    assert out["backend"] == "torch" and out["device_kind"] == "gpu" and out["device_name"] == "Fake GPU"
    assert out["device"] == "h200" and out["power_mode"] is None
    assert set(out["compute"]) == {"fp32", "bf16_tensor", "fp16_tensor", "int8_tensor"}
    assert out["skipped"] == {}
    assert "sync" in calls and "add" in calls and "int_mm" in calls and "empty_cache" in calls
    # FP32 is measured as FP32, not TF32, and the process's setting is restored
    assert fake.tf32_seen.count(False) > 0 and fake.backends.cuda.matmul.allow_tf32 is True
    copy, fp32 = out["bandwidth"]["copy"], out["compute"]["fp32"]
    assert copy["bytes_per_s_per_emc_mhz"] == pytest.approx(copy["bytes_per_s"] / 3199)  # a GPU's own memory
    assert fp32["flops_per_s_per_gpu_mhz"] == pytest.approx(fp32["flops_per_s"] / 1020)
    assert "flops_per_s_per_cpu_mhz" not in fp32
    assert fp32["power_w"]["mean"] == 690.0


# ------------------------------------------------------------------------------------------- files


def test_default_path(monkeypatch, tmp_path):
    assert default_probe_path("h200", None, environ={"XDG_DATA_HOME": str(tmp_path)}) == (
        tmp_path / "jroof" / "probe" / "h200" / "default.json")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_probe_path(None, "MAXN SUPER/x", environ={}) == (
        tmp_path / ".local" / "share" / "jroof" / "probe" / "unknown" / "MAXN_SUPER_x.json")
    # a relative XDG_DATA_HOME is invalid per the spec: ignored
    assert default_probe_path("a", "b", environ={"XDG_DATA_HOME": "rel"}).is_absolute()
    assert ".." not in default_probe_path("../../etc", "..", environ={}).parts


def test_round_trip(result, tmp_path):
    path = save_probe(result, tmp_path / "deep" / "dir" / "p.json")
    probe = load_probe(path)
    assert isinstance(probe, Probe) and probe.label == "measured"
    assert probe.path == str(path)
    assert probe.device == "orin-nano-8gb-super" and probe.power_mode == "MAXN_SUPER"
    assert probe.backend == "numpy" and probe.device_kind == "cpu" and probe.quick is True
    copy, triad = result["bandwidth"]["copy"], result["bandwidth"]["triad"]
    assert probe.bandwidth_bytes_per_s == max(copy["bytes_per_s"], triad["bytes_per_s"])
    assert probe.compute["fp32"].value == result["compute"]["fp32"]["flops_per_s"]
    assert "bf16_tensor" not in probe.compute
    best = probe.best_bandwidth
    assert best is not None and best.clock == "emc" and best.emc_mhz is not None and best.emc_mhz.mean == 3199
    # the roof follows the clocks: at half the EMC clock, half the bandwidth
    assert best.at(1599.5, "emc") == pytest.approx(probe.bandwidth_bytes_per_s / 2)
    assert probe.compute["fp32"].at(1000, "gpu") is None  # numpy's figure is per CPU MHz, not per GPU MHz
    assert probe.compute["fp32"].clock == "cpu" and probe.compute["fp32"].at(864) == pytest.approx(
        probe.compute["fp32"].value / 2)
    assert probe.summary().startswith("measured (numpy on ")
    with pytest.raises(AttributeError):
        probe.device = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        probe.compute["x"] = probe.compute["fp32"]  # type: ignore[index]


def test_summary_lines(result):
    lines = list(summary_lines(result))
    assert lines[0].startswith("numpy on ")
    assert any("bandwidth copy" in line and "B/s" in line for line in lines)
    assert any("skipped bf16_tensor" in line for line in lines)


def _minimal() -> dict[str, Any]:
    entry = {"bytes_per_s": 4.26e12, "size": 1 << 30, "seconds": 1.0, "repeats": 5,
             "clocks": {"gpu_mhz": None, "emc_mhz": {"mean": 3201, "min": 3201, "max": 3201}},
             "power_w": {"mean": 500.0, "max": 600.0}, "bytes_per_s_per_emc_mhz": 4.26e12 / 3201}
    gemm = {"flops_per_s": 6.6e14, "size": 8192, "seconds": 1.0, "repeats": 5,
            "clocks": {"gpu_mhz": {"mean": 1490, "min": 1170, "max": 1905}},
            "flops_per_s_per_gpu_mhz": 6.6e14 / 1490}
    return {"format": "jroof-probe", "schema": 1, "device": "h200", "power_mode": None, "backend": "torch",
            "device_kind": "gpu", "quick": False, "measured_at": "2026-12-01T00:00:00+00:00",
            "bandwidth": {"copy": entry}, "compute": {"bf16_tensor": gemm}}


def test_parse_minimal_h200_like():
    probe = parse_probe(_minimal())
    assert probe.bandwidth["copy"].at(3201, "emc") == pytest.approx(4.26e12)
    assert probe.compute["bf16_tensor"].at(1980, "gpu") == pytest.approx(6.6e14 / 1490 * 1980)
    assert probe.compute["bf16_tensor"].gpu_mhz.max == 1905


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("format"), "not a jroof probe"),
    (lambda d: d.update(schema=2), "newer jroof"),
    (lambda d: d.update(schema="1"), "schema"),
    (lambda d: d.update(device_kind="tpu"), "device_kind"),
    (lambda d: d.update(quick="yes"), "quick"),
    (lambda d: d["bandwidth"]["copy"].update(bytes_per_s=-1), "bandwidth.copy.bytes_per_s"),
    (lambda d: d["bandwidth"]["copy"].update(bytes_per_s=True), "bandwidth.copy.bytes_per_s"),
    (lambda d: d["bandwidth"]["copy"].update(bytes_per_s=1e30), "bandwidth.copy.bytes_per_s"),
    (lambda d: d["compute"]["bf16_tensor"].update(flops_per_s="fast"), "compute.bf16_tensor.flops_per_s"),
    (lambda d: d["compute"]["bf16_tensor"].update(size=None), "compute.bf16_tensor.size"),
    (lambda d: d["compute"]["bf16_tensor"]["clocks"].update(gpu_mhz={"mean": 5, "min": 6, "max": 7}),
     "gpu_mhz"),
    (lambda d: d["compute"].update({"BAD NAME": {}}), "entry names"),
    (lambda d: d.update(compute=[1]), "compute"),
    (lambda d: d.update(bandwidth={}, compute={}), "no measured ceiling"),
    (lambda d: d["bandwidth"].update(copy=3), "bandwidth.copy"),
])
def test_bad_content_is_one_line(mutate, message):
    data = _minimal()
    mutate(data)
    with pytest.raises(ProbeError, match=message) as info:
        parse_probe(data, "p.json")
    assert "\n" not in str(info.value) and str(info.value).startswith("p.json")


def test_bad_files_are_one_line(tmp_path):
    cases = {
        "missing.json": None,
        "nan.json": json.dumps(_minimal()).replace("4260000000000.0", "NaN"),
        "text.json": "not json at all\n",
        "list.json": "[]",
        "binary.json": b"\xff\xfe\x00garbage",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content)
        with pytest.raises(ProbeError) as info:
            load_probe(path)
        assert "\n" not in str(info.value), name
    big = tmp_path / "big.json"
    big.write_text(" " * (2 << 20))
    with pytest.raises(ProbeError, match="larger than"):
        load_probe(big)
    with pytest.raises(ProbeError, match="cannot read"):
        load_probe(tmp_path)  # a directory


def test_written_file_has_no_nan(result, tmp_path):
    path = save_probe(result, tmp_path / "p.json")
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert not any(p.name.startswith(".p.json") for p in tmp_path.iterdir())  # no temporary left
    assert math.isfinite(json.loads(text)["bandwidth"]["copy"]["bytes_per_s"])


def test_probe_source_factory(monkeypatch):
    from jtop_roof.runtime.config import Config
    from jtop_roof.runtime.session import probe_source_factory
    from jtop_roof.sources.host import HostSource

    monkeypatch.setenv("PATH", "/nonexistent")
    source = probe_source_factory(Config(source="demo"))()
    assert isinstance(source, HostSource) and source.interval_ms == 100
    with pytest.raises(ProbeError, match="not found on PATH"):
        probe_source_factory(Config(source="tegrastats"))

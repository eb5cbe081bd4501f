"""The host source: real psutil on this machine, and a fake NVML module carrying H200 figures from
research/h200_probe (nvml_timeseries.csv row t=10.014 s of a power-capped bf16 GEMM; smi.txt)."""

from __future__ import annotations

import itertools
import threading
from types import SimpleNamespace

import psutil
import pytest

from jtop_roof.model.records import Clocked, Engine, Gpu, Rail
from jtop_roof.sources.host import HostSource, decode_clock_event_reasons


def no_wait(_seconds: float) -> None:
    return None


class FakeNvmlError(Exception):
    pass


class FakeNvml:
    """The pynvml functions HostSource calls, answering like the H200 probe."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, gpus=1, fail_init=False, unsupported=()):
        self.gpus = gpus
        self.fail_init = fail_init
        self.unsupported = set(unsupported)
        self.shutdowns = 0

    def _check(self, name):
        if name in self.unsupported:
            raise FakeNvmlError("Not Supported")

    def nvmlInit(self):
        if self.fail_init:
            raise FakeNvmlError("Driver Not Loaded")

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlDeviceGetCount(self):
        return self.gpus

    def nvmlDeviceGetHandleByIndex(self, index):
        return ("handle", index)

    def nvmlDeviceGetName(self, handle):
        return "NVIDIA H200"

    def nvmlSystemGetDriverVersion(self):
        return "580.159.04"

    def nvmlDeviceGetUtilizationRates(self, handle):
        # GPU 0 busy (util 100 in the probe); memory utilisation was not probed: 40 is made up.
        return SimpleNamespace(gpu=100, memory=40) if handle[1] == 0 else SimpleNamespace(gpu=0, memory=0)

    def nvmlDeviceGetClockInfo(self, handle, clock):
        if clock == self.NVML_CLOCK_SM:
            return 1485 if handle[1] == 0 else 345
        return 3201

    def nvmlDeviceGetMaxClockInfo(self, handle, clock):
        return 1980 if clock == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetPowerUsage(self, handle):
        self._check("power")
        return 690695 if handle[1] == 0 else 80435

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        return 700000

    def nvmlDeviceGetTemperature(self, handle, sensor):
        return 66 if handle[1] == 0 else 43

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        self._check("events")
        return 0x4 if handle[1] == 0 else 0x1

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle):
        return 0x4 | 0x40 if handle[1] == 0 else 0x1


class OldBindingNvml(FakeNvml):
    """A binding from before the clock-event rename: only the throttle-reason call exists."""

    nvmlDeviceGetCurrentClocksEventReasons = None


def first_sample(source: HostSource):
    records = source.records()
    sample = next(records)
    records.close()
    return sample


def host(**kwargs) -> HostSource:
    kwargs.setdefault("sleep", no_wait)
    return HostSource(1000, **kwargs)


def test_real_host_sample_is_consistent():
    sample = first_sample(host(nvml=False))
    assert sample.is_sample
    assert len(sample.cpus) == psutil.cpu_count()
    for core in sample.cpus:
        assert 0.0 <= core.load_pct <= 100.0
        assert core.mhz is None or core.mhz > 0
    assert 0 < sample.ram.used_mb <= sample.ram.total_mb
    assert 0 <= sample.swap.used_mb <= sample.swap.total_mb or sample.swap.total_mb == 0
    for name in sample.temps_c:
        assert name == name.lower() and " " not in name
    assert sample.gpu is None and sample.emc is None and sample.rails == {}
    assert sample.throttle_reasons is None


def test_real_host_with_whatever_nvml_this_machine_has_never_fails():
    source = host()  # imports nvidia-ml-py if present; NVML may or may not start here
    sample = first_sample(source)
    info = source.describe().header
    if info["gpu"] is None:
        assert sample.gpu is None
        assert any(hint.startswith("No GPU readings") for hint in info["hints"])
    else:
        assert sample.gpu is not None and "NVML_GPU" in sample.rails
    assert info["host"] and info["cpu_model"]


def test_host_clock_stamps_samples():
    clock = itertools.count(500.0, 1.0).__next__
    mono = itertools.count(7.0, 0.5).__next__
    records = host(nvml=False, clock=clock, mono=mono).records()
    stamps = [(s.t_wall, s.t_mono) for s in itertools.islice(records, 3)]
    records.close()
    assert stamps == [(500.0, 7.0), (501.0, 7.5), (502.0, 8.0)]


class FakePsutil:
    """Enough of psutil to check the priming call, missing cpufreq and sensor naming."""

    def __init__(self):
        self.loads = iter([[0.0, 0.0], [50.0, 25.0], [60.0, 35.0]])

    def cpu_percent(self, percpu=False):
        return next(self.loads)

    def cpu_freq(self, percpu=False):
        return [] if percpu else None  # what psutil gives where cpufreq is absent

    def virtual_memory(self):
        return SimpleNamespace(total=8 * 1024**3, available=6 * 1024**3)

    def swap_memory(self):
        return SimpleNamespace(total=0, used=0)

    def sensors_temperatures(self):
        entry = SimpleNamespace
        return {
            "coretemp": [entry(label="Package id 0", current=45.0, high=80.0, critical=100.0)],
            "nvme": [entry(label="", current=30.0, high=None, critical=None)] * 2,
            "gpu": [entry(label="", current=50.0, high=None, critical=None)],
        }


def test_priming_call_is_dropped_and_missing_cpufreq_is_none():
    sample = first_sample(host(nvml=False, psutil=FakePsutil()))
    assert [c.load_pct for c in sample.cpus] == [50.0, 25.0]
    assert [c.mhz for c in sample.cpus] == [None, None]
    assert sample.ram.used_mb == 2048 and sample.ram.total_mb == 8192
    assert sample.swap.total_mb == 0


def test_sensor_names_are_lower_case_and_unique_next_to_the_nvml_gpu():
    sample = first_sample(host(nvml=FakeNvml(), psutil=FakePsutil()))
    assert sample.temps_c == {
        "gpu": 66.0,  # NVML
        "coretemp_package_id_0": 45.0,
        "nvme": 30.0,
        "nvme_2": 30.0,
        "gpu_2": 50.0,  # psutil's chip called "gpu"
    }


def test_nvml_gpu_fields_from_the_h200_figures():
    fake = FakeNvml()
    source = host(nvml=fake, psutil=FakePsutil())
    records = source.records()
    sample = next(records)
    assert sample.gpu == Gpu(100.0, (1485,))
    assert sample.emc == Clocked(40.0, 3201)
    assert sample.rails == {"NVML_GPU": Rail(690695.0)}
    assert sample.power_total is None  # a GPU's power is not the machine's input power
    assert sample.temps_c["gpu"] == 66.0
    assert sample.throttle_reasons == ["SwPowerCap"]
    records.close()
    assert fake.shutdowns == 1


def test_second_gpu_gets_its_own_names():
    sample = first_sample(host(nvml=FakeNvml(gpus=2), psutil=FakePsutil()))
    assert sample.gpu == Gpu(100.0, (1485,))
    assert sample.engines["GPU1"] == Engine(0.0, 345)
    assert sample.rails["NVML_GPU1"] == Rail(80435.0)
    assert sample.temps_c["gpu1"] == 43.0
    assert sample.throttle_reasons == ["SwPowerCap", "GPU1:GpuIdle"]


@pytest.mark.parametrize("fake", [OldBindingNvml(), FakeNvml(unsupported={"events"})], ids=["old", "failing"])
def test_throttle_reasons_fall_back_to_the_deprecated_call(fake):
    sample = first_sample(host(nvml=fake, psutil=FakePsutil()))
    assert sample.throttle_reasons == ["SwPowerCap", "HwThermalSlowdown"]


def test_unsupported_power_reading_is_absent_not_zero():
    sample = first_sample(host(nvml=FakeNvml(unsupported={"power"}), psutil=FakePsutil()))
    assert sample.rails == {}
    assert sample.gpu == Gpu(100.0, (1485,))


def test_nvml_that_fails_to_start_leaves_gpu_fields_none():
    source = host(nvml=FakeNvml(fail_init=True), psutil=FakePsutil())
    sample = first_sample(source)
    assert sample.gpu is None and sample.emc is None and sample.rails == {}
    assert sample.throttle_reasons is None
    assert sample.temps_c["gpu"] == 50.0  # psutil's own "gpu" chip; NVML's 66 is absent
    info = source.describe().header
    assert info["gpu"] is None and info["max_clocks"]["gpu_mhz"] is None and info["driver_version"] is None
    assert any("Driver Not Loaded" in hint for hint in info["hints"])


def test_describe_with_nvml():
    info = host(nvml=FakeNvml(), psutil=FakePsutil()).describe().header
    assert info["source"] == "host"
    assert info["gpu"] == "NVIDIA H200" and info["model"] == "NVIDIA H200"
    assert info["max_clocks"] == {"gpu_mhz": 1980, "emc_mhz": 3201, "cpu_mhz": None}
    assert info["power_limit_w"] == 700.0
    assert info["driver_version"] == "580.159.04"
    assert info["thermal_trips"] == {
        "coretemp_package_id_0": [{"type": "high", "temp_c": 80.0}, {"type": "critical", "temp_c": 100.0}]
    }


@pytest.mark.parametrize(
    ("mask", "names"),
    [
        (0x0, []),
        (0x1, ["GpuIdle"]),
        (0x4, ["SwPowerCap"]),  # the H200 under load
        (0x600, ["BoardLimit", "Reliability"]),
        (0x1FF, ["GpuIdle", "ApplicationsClocksSetting", "SwPowerCap", "HwSlowdown", "SyncBoost",
                 "SwThermalSlowdown", "HwThermalSlowdown", "HwPowerBrakeSlowdown", "DisplayClockSetting"]),
        (0x804, ["SwPowerCap", "0x800"]),  # a bit NVML may add later stays visible
    ],
)
def test_decode_clock_event_reasons(mask, names):
    assert decode_clock_event_reasons(mask) == names


def test_stop_interrupts_the_wait_between_samples():
    source = HostSource(600_000, nvml=False)  # ten minutes between samples
    done = threading.Event()

    def work():
        for _ in source.records():
            pass
        done.set()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    source.stop()
    assert done.wait(20), "records() kept waiting after stop()"

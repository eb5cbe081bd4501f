"""A real recording made by `jroof-tui record --source host` on an NVIDIA H200 (NVML), with phase
markers sent by `jroof-tui mark` around a bf16 GEMM (which ran into the 700 W power cap) and a
device-to-device copy. It checks the host source's real NVML output and the whole
record -> replay -> history/energy path on data nobody typed by hand.

Made on the lent H200 machine with tools like: record --interval 500 --duration 60 in the
background; mark "gemm bf16 8192"; 15 s of 8192^3 bf16 products; mark --end;
mark "d2d copy 8 GB"; 8 s of 4 GiB copies; mark --end; SIGTERM (652 TFLOP/s and 4.30 TB/s in that run).
"""


import numpy as np
import pytest
from paths import TESTS

from jtop_roof.analysis.pipeline import Pipeline
from jtop_roof.formats.logfile import iter_records, read_header
from jtop_roof.model.records import Event, Marker, Sample
from jtop_roof.model.timeline import parse_tz

RECORDING = TESTS / "data" / "h200_host_recording.jsonl"


def load():
    with RECORDING.open(encoding="utf-8") as lines:
        return list(iter_records(lines, tz=parse_tz("UTC"), interval_s=None))


def phases(records):
    """(name, samples inside) per phase, split at the recorded markers."""
    out, current = [], None
    for record in records:
        if isinstance(record, Marker):
            if record.kind == "phase_start":
                current = (record.name, [])
                out.append(current)
            else:
                current = None
        elif isinstance(record, Sample) and current is not None:
            current[1].append(record)
    return dict(out)


def test_header_carries_what_replay_needs():
    header = read_header(RECORDING)
    assert header["source"] == "host" and header["interval_ms"] == 500
    assert header["max_clocks"]["gpu_mhz"] == 1980 and header["max_clocks"]["emc_mhz"] == 3201
    assert header["power_limit_w"] == 700.0 and header["model"] == "NVIDIA H200"


def test_markers_from_the_script_split_the_run():
    records = load()
    marks = [(r.kind, r.name, r.origin) for r in records if isinstance(r, Marker)]
    assert marks == [
        ("phase_start", "gemm bf16 8192", "script"),
        ("phase_end", None, "script"),
        ("phase_start", "d2d copy 8 GB", "script"),
        ("phase_end", None, "script"),
    ]
    assert isinstance(records[-1], Event) and records[-1].detail == "stopped by SIGTERM"
    monos = [r.t_mono for r in records]
    assert monos == sorted(monos)  # markers are stamped on the samples' clock


def test_gemm_hit_the_power_cap_and_nvml_says_why():
    gemm = phases(load())["gemm bf16 8192"]
    busy = [s for s in gemm if s.gpu.load_pct >= 99]
    assert len(busy) >= 20
    # the clock sits well under the 1980 MHz maximum while NVML reports the software power cap
    assert all(s.gpu.mhz < 1980 and "SwPowerCap" in s.throttle_reasons for s in busy)
    watts = np.array([s.rails["NVML_GPU"].now_mw for s in busy]) / 1000
    assert 680 < np.median(watts) <= 700
    # the GPU's own power is not this machine's input power: no total is made up from it
    assert all(s.power_total is None for s in gemm)


def test_copy_ran_at_full_clock_without_a_cap():
    copy = phases(load())["d2d copy 8 GB"]
    busy = [s for s in copy if s.gpu.load_pct >= 99]
    assert len(busy) >= 10
    assert all(s.gpu.mhz == 1980 and s.throttle_reasons == [] for s in busy)
    assert all(s.emc.load_pct == 100 and s.emc.mhz == 3201 for s in busy)


def test_phase_energy_matches_an_independent_trapezoid():
    """The pipeline's per-rail phase energy against numpy's trapezoid over the same instantaneous
    samples, between the phase's own markers (linear interpolation at the edges)."""
    records = load()
    pipeline = Pipeline(history_s=3600, interval_s=0.5)
    edges: list[float] = []
    samples: list[Sample] = []
    for record in records:
        pipeline.ingest(record)
        if isinstance(record, Marker) and len(edges) < 2 and record.t_mono is not None:
            if edges or record.kind == "phase_start":
                edges.append(record.t_mono)
        elif isinstance(record, Sample) and record.t_mono is not None and "NVML_GPU" in record.rails:
            samples.append(record)
    first = pipeline.ledger.phases()[0]
    start, end = edges
    t_all = np.array([s.t_mono for s in samples])
    w_all = np.array([s.rails["NVML_GPU"].now_mw for s in samples]) / 1000
    inside = (t_all > start) & (t_all < end)
    t = np.concatenate(([start], t_all[inside], [end]))
    watts = np.interp(t, t_all, w_all)
    expected_j = float(np.sum((watts[1:] + watts[:-1]) / 2 * np.diff(t)))
    assert first.samples == int(inside.sum()) and first.duration_s == pytest.approx(end - start)
    assert first.rails_j["NVML_GPU"] == pytest.approx(expected_j, rel=1e-9)
    assert 7_000 < expected_j < 12_000  # ~16 s at up to 700 W, idle edges included

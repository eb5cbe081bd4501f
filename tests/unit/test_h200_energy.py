"""The energy proof on a real NVIDIA H200 (benchmarks/h200_energy_workload.py under
`run --headless --source host --interval 500 --power-hz 100 --device h200`): the workload read
NVML's total-energy counter itself at each of its phase edges (tests/data/h200_energy_counters.json);
`report` of the recording (tests/data/h200_energy.jsonl) must give every phase's GPU energy within
1% of the counter's difference, over the phase's own edges."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from paths import TESTS

from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config

DATA = TESTS / "data"
RECORDING = DATA / "h200_energy.jsonl"
COUNTERS = json.loads((DATA / "h200_energy_counters.json").read_text())


@pytest.fixture(scope="module")
def phases() -> dict[str, dict]:
    report = report_file(str(RECORDING), tz=timezone.utc, interval_s=None, config=Config())
    return {phase["name"]: phase for phase in report["phases"]}


@pytest.mark.parametrize("reference", COUNTERS["phases"], ids=lambda phase: phase["name"])
def test_every_phase_is_within_1_percent_of_the_counter(phases, reference):
    phase = phases[reference["name"]]
    assert phase["energy_j"]["rails"]["NVML_GPU"] == pytest.approx(reference["energy_j"], rel=0.01)
    assert phase["energy_source"].startswith("NVML energy counter")


@pytest.mark.parametrize("reference", COUNTERS["phases"], ids=lambda phase: phase["name"])
def test_phases_start_and_end_at_the_workloads_own_edges(phases, reference):
    """The markers reached the monitor within milliseconds of the workload's counter reads; the
    span's start and end are its markers' times, not the next sample's (samples were 500 ms apart)."""
    phase = phases[reference["name"]]
    start = datetime.fromisoformat(phase["start"]).timestamp()
    assert start == pytest.approx(reference["start_wall"], abs=0.05)
    assert phase["duration_s"] == pytest.approx(reference["end_wall"] - reference["start_wall"], abs=0.05)

"""The read API for notebooks: the same numbers as report and export, as columns."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from factories import BENCH, COUNT, write_synthetic
from paths import TESTS

from jtop_roof.api import read
from jtop_roof.model.errors import UserError


def test_read_gives_the_samples_as_columns_and_the_report(tmp_path):
    path = tmp_path / "bench.jsonl"
    samples = write_synthetic(path)
    run = read(str(path), tz="UTC")
    assert len(run.samples["t_s"]) == COUNT == run.report["whole"]["samples"]
    assert run.samples["gpu_mhz"].dtype.kind == "f"
    assert list(run.samples["gpu_mhz"]) == [s.gpu.mhz for s in samples]
    assert math.isnan(run.samples["engine_NVENC0_mhz"][0])  # off until sample 20: not reported, NaN
    assert run.samples["engine_NVENC0_mhz"][25] == 115
    assert [p["name"] for p in run.phases] == ['bench, "1"']
    in_phase = [name for name in run.text["phase"] if name is not None]
    assert len(in_phase) == len(BENCH)  # the samples inside the phase, by its name
    assert any(e["kind"] == "throttle" for e in run.events)


def test_frame_needs_pandas_and_says_so(tmp_path):
    path = tmp_path / "bench.jsonl"
    write_synthetic(path)
    run = read(str(path), tz="UTC")
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match="pandas"):
            run.frame()
    else:
        frame = run.frame()
        assert len(frame) == COUNT and "gpu_mhz" in frame.columns


def test_bad_input_is_one_user_error(tmp_path):
    with pytest.raises(UserError):
        read(str(tmp_path / "missing.jsonl"))
    with pytest.raises(UserError):
        read(str(Path(__file__)), tz="Mars/Olympus")


def test_a_zone_given_to_read_is_said_given(tmp_path):
    """Stamps that write no zone are read in the zone given to ``read``: ``given``, not assumed."""
    lines = [line for line in (TESTS / "data" / "fake_tegrastats_orinnano_super.txt")
             .read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    log = tmp_path / "stamped.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read(str(log), tz="Europe/Paris").report["source"]["stamps"]["zone_source"] == "given"
    assert read(str(log)).report["source"]["stamps"]["zone_source"] == "assumed"

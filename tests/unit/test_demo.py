"""The packaged demo recording and the demo source (jtop_roof.sources.demo)."""

from __future__ import annotations

import hashlib
import itertools
from importlib import resources

import pytest

from jtop_roof.model.records import Event, Sample
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.session import build_header
from jtop_roof.sources.demo import DEMO_LICENSE, DemoSource, demo_log_resource

# git blob id of vlm-benchmarks/assets/results/tegrastats/trt_20260419_013102.raw in
# hokwangchoi/jetson-orin-nano-benchmarks (shared/tegrastats/logs/SOURCES.md)
UPSTREAM_BLOB = "81c26435467bc0f2c3dec6bcbf5ee5a9f5a68fb7"
DEMO_LINES = 661


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_packaged_log_is_a_byte_exact_copy_of_the_upstream_file():
    data = demo_log_resource().read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert blob == UPSTREAM_BLOB


def test_licence_ships_beside_the_log():
    text = (resources.files("jtop_roof.sources") / "data" / DEMO_LICENSE).read_text(encoding="utf-8")
    assert "MIT License" in text and "Copyright (c) hokwangchoi" in text
    assert "hokwangchoi/jetson-orin-nano-benchmarks" in text
    assert "Permission is hereby granted, free of charge" in text


def test_demo_plays_real_orin_nano_super_samples_at_the_recorded_pace():
    fake = FakeTime()
    demo = DemoSource(clock=fake.clock, sleep=fake.sleep)
    first, second = itertools.islice(demo.records(), 2)
    assert isinstance(first, Sample) and first.is_sample
    assert first.gpu.gpc_mhz == (1018,) and first.emc.mhz == 3199
    assert first.ram.total_mb == 7607
    assert first.power_total.source == "VDD_IN"
    # `tegrastats --interval 100` wrote 9 lines a second: lines sharing a stamp are 1/9 s apart
    assert second.t_mono - first.t_mono == pytest.approx(0.111)
    assert fake.now == pytest.approx(0.111)
    demo.stop()


def test_demo_loops_as_one_continuous_stream():
    fake = FakeTime()
    demo = DemoSource(speed=64, clock=fake.clock, sleep=fake.sleep)
    got = list(itertools.islice(demo.records(), DEMO_LINES + 2))
    assert all(isinstance(r, Sample) for r in got[:DEMO_LINES])
    loop = got[DEMO_LINES]
    assert isinstance(loop, Event) and loop.kind == "note" and "loop" in loop.detail
    again = got[DEMO_LINES + 1]
    assert again.raw == got[0].raw
    # time goes on: the first line plays again one interval after the last, not back at the start
    assert again.t_mono > got[DEMO_LINES - 1].t_mono
    assert again.t_wall > got[DEMO_LINES - 1].t_wall
    demo.stop()


def test_demo_describes_itself_as_a_real_recording():
    demo = DemoSource()
    info = demo.describe().header
    demo.stop()
    assert info["source"] == "demo"
    assert "Orin Nano 8GB Super" in info["model"] and info["jetpack"] == "6.2"
    assert info["max_clocks"]["gpu_mhz"] == 1020 and info["max_clocks"]["emc_mhz"] == 3199
    assert info["interval_ms"] == 111
    assert "hokwangchoi/jetson-orin-nano-benchmarks" in info["demo"]["origin"]
    assert any("Demo" in hint for hint in info["hints"])


def test_a_recording_of_the_demo_says_its_real_interval():
    """The header's interval_ms is the stream's (about 9 lines a second), not the config's 1000."""
    demo = DemoSource()
    header = build_header(demo, Config(interval_ms=1000))
    demo.stop()
    assert header["interval_ms"] == 111

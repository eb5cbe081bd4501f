"""``schema.sample_of`` builds a Sample by position, for speed: each of the line's fields lands in
the Sample field of its meaning, and an engine printed ``off`` is the Engine that says so."""

from __future__ import annotations

import dataclasses

from jtop_roof.model.records import (
    Clocked,
    CpuCore,
    Engine,
    Fan,
    Gpu,
    IoRates,
    Iram,
    Memory,
    Rail,
    Sample,
)
from jtop_roof.model.schema import SampleLine, sample_of


def _line() -> SampleLine:
    """A line whose every field holds a value of its own (none at its default)."""
    return SampleLine(
        t=1.5e9, mono=12.5, raw="RAM 1/2MB", non_sample=True,
        ram_mb=Memory(1.0, 2.0), swap_mb=Memory(3.0, 4.0), iram_kb=Iram(5.0, 6.0),
        cpu=[CpuCore(7.0, 8), None], gpu=Gpu(9.0, (10, 11)), emc=Clocked(12.0, 13),
        engines={"NVENC": "off", "VIC": Engine(14.0, 15)}, temps_c={"cpu": 16.0},
        temps_max_c={"cpu": 17.0}, rails_mw={"VDD_IN": Rail(18.0, 19.0)},
        throttle_reasons=["hw_slowdown"], oc_event_cnt={"oc1": 20}, fans={"pwmfan": Fan(21.0, 22)},
        io_mb_s=IoRates(23.0, 24.0, 25.0, 26.0), unknown=["junk"],
    )


def test_every_field_of_the_line_lands_in_the_sample_field_of_its_meaning() -> None:
    line = _line()
    want = Sample(
        t_wall=line.t, t_mono=line.mono, raw=line.raw, is_sample=False, ram=line.ram_mb,
        swap=line.swap_mb, iram=line.iram_kb, cpus=line.cpu, gpu=line.gpu, emc=line.emc,
        engines={"NVENC": Engine(off=True), "VIC": Engine(14.0, 15)}, temps_c=line.temps_c,
        temps_max_c=line.temps_max_c, rails=line.rails_mw, throttle_reasons=line.throttle_reasons,
        oc_events=line.oc_event_cnt, stamp=None, unknown=line.unknown or [], fans=line.fans, io=line.io_mb_s,
    )
    got = sample_of(line)
    for field in dataclasses.fields(Sample):
        assert getattr(got, field.name) == getattr(want, field.name), field.name


def test_a_line_without_engines_off_or_unknown_text_keeps_its_own_maps() -> None:
    line = SampleLine(t=1.0, mono=2.0, engines={"VIC": Engine(1.0, 2)})
    got = sample_of(line)
    assert got.engines == {"VIC": Engine(1.0, 2)} and got.unknown == [] and got.is_sample
    assert got.stamp is None and got.cpus is None


def test_each_sample_has_lists_of_its_own() -> None:
    """A source may fill a Sample's lists in place: two samples never share one."""
    first, second = sample_of(SampleLine(t=1.0, mono=2.0)), sample_of(SampleLine(t=1.0, mono=3.0))
    first.unknown.append("x")
    assert second.unknown == []
